//! A real async library we did not write, on weft-async's executor: tokio's `sync` module
//! (tokio 1.x with `default-features = false, features = ["sync"]`: no tokio runtime, no
//! reactor, no timer). Its primitives need only wakers, so the harness needed nothing but that
//! dependency line. Properties are checked over many explored task orders, and a control
//! without the primitive shows the orders explored are the ones that matter: the race it
//! prevents is found.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use weft_async::{entry, spawn, world, yield_now};
use weft_core::{Decisions, NullObserver, Outcome, Scenario};

type Log = Arc<Mutex<Vec<u64>>>;

/// Runs a one-node world whose entry is `body(log)` for `seeds` seeds; returns each run's log.
fn runs<F, Fut>(seeds: u64, body: F) -> Vec<Vec<u64>>
where
    F: Fn(Log) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + 'static,
{
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let l = log.clone();
    let body = Arc::new(body);
    let spec = world(1, entry(move |_| body(l.clone())));
    (0..seeds)
        .map(|seed| {
            let r = spec.run(&Scenario::calm(), &mut Decisions::random(seed), &mut NullObserver);
            assert_eq!(r.outcome, Outcome::Pass, "seed {seed}");
            std::mem::take(&mut *log.lock().unwrap())
        })
        .collect()
}

async fn yields(n: u64) {
    for _ in 0..n {
        yield_now().await;
    }
}

/// Read-yield-write increments: `guarded` ones hold a `tokio::sync::Mutex`.
async fn increments(log: Log, guarded: bool) {
    let lock = Rc::new(tokio::sync::Mutex::new(()));
    let value = Rc::new(Cell::new(0u64));
    let tasks: Vec<_> = (0..4)
        .map(|_| {
            let (lock, value) = (lock.clone(), value.clone());
            spawn(async move {
                for _ in 0..3 {
                    let _g = if guarded { Some(lock.lock().await) } else { None };
                    let v = value.get();
                    yields(2).await;
                    value.set(v + 1);
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    log.lock().unwrap().push(value.get());
}

#[test]
fn tokio_mutex_prevents_the_lost_update_the_schedule_finds_without_it() {
    let guarded = runs(60, |l| increments(l, true));
    assert!(guarded.iter().all(|r| r == &[12]), "{guarded:?}");
    let bare = runs(60, |l| increments(l, false));
    assert!(bare.iter().any(|r| r[0] < 12), "no explored order lost an update");
}

#[test]
fn tokio_semaphore_admits_at_most_its_permits() {
    let results = runs(60, |log| async move {
        let sem = Rc::new(tokio::sync::Semaphore::new(2));
        let inside = Rc::new(Cell::new(0u64));
        let most = Rc::new(Cell::new(0u64));
        let tasks: Vec<_> = (0..5)
            .map(|i| {
                let (sem, inside, most) = (sem.clone(), inside.clone(), most.clone());
                spawn(async move {
                    yields(i % 3).await;
                    let _permit = sem.acquire().await.unwrap();
                    inside.set(inside.get() + 1);
                    most.set(most.get().max(inside.get()));
                    yields(2).await;
                    inside.set(inside.get() - 1);
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        log.lock().unwrap().push(most.get());
    });
    assert!(results.iter().all(|r| r[0] <= 2), "{results:?}");
    assert!(results.iter().any(|r| r[0] == 2), "the bound was never reached: vacuous");
}

#[test]
fn tokio_bounded_mpsc_keeps_each_producers_order_and_loses_nothing() {
    let results = runs(60, |log| async move {
        let (tx, mut rx) = tokio::sync::mpsc::channel::<u64>(2);
        for p in 0..3u64 {
            let tx = tx.clone();
            spawn(async move {
                for i in 0..5 {
                    tx.send(p * 100 + i).await.unwrap();
                    yields(p).await;
                }
            });
        }
        drop(tx);
        let got = RefCell::new(Vec::new());
        while let Some(v) = rx.recv().await {
            got.borrow_mut().push(v);
        }
        log.lock().unwrap().extend(got.into_inner());
    });
    let mut orders = std::collections::BTreeSet::new();
    for r in &results {
        assert_eq!(r.len(), 15, "{r:?}");
        for p in 0..3 {
            let mine: Vec<u64> = r.iter().copied().filter(|v| v / 100 == p).collect();
            assert_eq!(mine, (0..5).map(|i| p * 100 + i).collect::<Vec<_>>());
        }
        orders.insert(r.clone());
    }
    assert!(orders.len() > 3, "the schedule explored only {} orders", orders.len());
}
