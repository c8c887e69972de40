//! The executor, virtual time, sockets, disk and bad input, each through a small world run by
//! the kernel.

use std::sync::{Arc, Mutex};
use weft_async::io::{AsyncReadExt, AsyncWriteExt};
use weft_async::net::{node_addr, TcpListener, TcpStream, UdpSocket};
use weft_async::time::{self, Duration, Instant};
use weft_async::{entry, spawn, world, yield_now, AsyncNode};
use weft_core::{Decisions, NullObserver, Outcome, RunReport, Scenario};
use weft_sim::SimSpec;

type Log = Arc<Mutex<Vec<String>>>;

fn log() -> Log {
    Arc::new(Mutex::new(Vec::new()))
}

fn push(l: &Log, s: impl Into<String>) {
    l.lock().unwrap().push(s.into());
}

fn take(l: &Log) -> Vec<String> {
    std::mem::take(&mut *l.lock().unwrap())
}

fn run(spec: &SimSpec<AsyncNode>, sc: &Scenario, seed: u64) -> RunReport {
    spec.run(sc, &mut Decisions::random(seed), &mut NullObserver)
}

fn calm() -> Scenario {
    Scenario::calm()
}

/// Three tasks that yield between steps: all-zero decisions run them first-woken-first, and
/// random decisions explore other interleavings, each replayable from its seed.
#[test]
fn task_order_is_a_decision() {
    let l = log();
    let l2 = l.clone();
    let spec = world(
        1,
        entry(move |_| {
            let l = l2.clone();
            async move {
                let hs: Vec<_> = (0..3)
                    .map(|t| {
                        let l = l.clone();
                        spawn(async move {
                            for step in 0..2 {
                                push(&l, format!("{t}{step}"));
                                yield_now().await;
                            }
                            t * 10
                        })
                    })
                    .collect();
                let mut sum = 0;
                for h in hs {
                    sum += h.await.unwrap();
                }
                push(&l, format!("sum {sum}"));
            }
        }),
    );
    let fifo = spec.run(&calm(), &mut Decisions::replay(Vec::new()), &mut NullObserver);
    assert_eq!(fifo.outcome, Outcome::Pass);
    assert_eq!(take(&l), ["00", "10", "20", "01", "11", "21", "sum 30"]);
    let mut orders = std::collections::BTreeSet::new();
    for seed in 0..40 {
        run(&spec, &calm(), seed);
        let first = take(&l);
        run(&spec, &calm(), seed);
        assert_eq!(take(&l), first, "seed {seed} replays its interleaving");
        orders.insert(first);
    }
    assert!(orders.len() > 5, "only {} interleavings in 40 seeds", orders.len());
}

#[test]
fn virtual_time_sleep_interval_timeout() {
    let l = log();
    let l2 = l.clone();
    let spec = world(
        1,
        entry(move |_| {
            let l = l2.clone();
            async move {
                let t0 = Instant::now();
                time::sleep(Duration::from_millis(150)).await;
                push(&l, format!("slept {:?}", t0.elapsed()));
                let mut tick = time::interval(Duration::from_millis(40));
                for _ in 0..3 {
                    let at = tick.tick().await;
                    push(&l, format!("tick {:?}", at.duration_since(t0)));
                }
                let slow =
                    time::timeout(Duration::from_millis(10), time::sleep(Duration::from_secs(1)));
                push(&l, format!("timeout {:?} at {:?}", slow.await.is_err(), t0.elapsed()));
                let quick = time::timeout(Duration::from_millis(10), async { 7 }).await;
                push(&l, format!("quick {quick:?}"));
            }
        }),
    );
    assert_eq!(run(&spec, &calm(), 1).outcome, Outcome::Pass);
    assert_eq!(
        take(&l),
        [
            "slept 150ms",
            "tick 150ms",
            "tick 190ms",
            "tick 230ms",
            "timeout true at 240ms",
            "quick Ok(7)"
        ]
    );
}

/// `futures::select!` and `join!` work on the executor (they only need wakers).
#[test]
fn select_and_join_from_futures() {
    use futures_util::{future::FutureExt, join, select};
    let l = log();
    let l2 = l.clone();
    let spec = world(
        1,
        entry(move |_| {
            let l = l2.clone();
            async move {
                let (a, b) = join!(
                    async {
                        time::sleep(Duration::from_millis(5)).await;
                        1
                    },
                    async { 2 }
                );
                let winner = select! {
                    _ = time::sleep(Duration::from_millis(30)).fuse() => "slow",
                    _ = time::sleep(Duration::from_millis(20)).fuse() => "fast",
                };
                push(&l, format!("{a}{b} {winner} {:?}", Instant::now().as_sim().0 / 1_000_000));
            }
        }),
    );
    assert_eq!(run(&spec, &calm(), 3).outcome, Outcome::Pass);
    assert_eq!(take(&l), ["12 fast 25"]);
}

fn echo_world(l: Log) -> SimSpec<AsyncNode> {
    world(
        2,
        entry(move |id| {
            let l = l.clone();
            async move {
                if id == 0 {
                    let listener = TcpListener::bind("0.0.0.0:7000").await.unwrap();
                    let (mut s, _) = listener.accept().await.unwrap();
                    let mut buf = vec![0u8; 64];
                    loop {
                        match s.read(&mut buf).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => s.write_all(&buf[..n]).await.unwrap(),
                        }
                    }
                } else {
                    let mut s = TcpStream::connect(node_addr(0, 7000)).await.unwrap();
                    let mut got = Vec::new();
                    for i in 0..20u32 {
                        s.write_all(&i.to_be_bytes()).await.unwrap();
                    }
                    let mut buf = [0u8; 4];
                    for _ in 0..20 {
                        match s.read_exact(&mut buf).await {
                            Ok(_) => got.push(u32::from_be_bytes(buf)),
                            Err(e) => {
                                push(&l, format!("error {:?}", e.kind()));
                                return;
                            }
                        }
                    }
                    push(&l, format!("{got:?}"));
                }
            }
        }),
    )
}

/// A stream delivers every byte once and in order through drops, duplicates and delays.
#[test]
fn streams_survive_message_faults() {
    let l = log();
    let spec = echo_world(l.clone());
    let mut sc = Scenario::default();
    sc.budget.crashes = 0;
    sc.budget.partitions = 0;
    sc.budget.pauses = 0;
    sc.rates.drop = weft_core::Ratio::new(1, 5);
    sc.rates.duplicate = weft_core::Ratio::new(1, 5);
    sc.rates.delay = weft_core::Ratio::new(1, 5);
    sc.budget.drops = 30;
    let want = format!("{:?}", (0..20).collect::<Vec<u32>>());
    for seed in 0..30 {
        let r = run(&spec, &sc, seed);
        assert_eq!(r.outcome, Outcome::Pass, "seed {seed}");
        assert_eq!(take(&l), std::slice::from_ref(&want), "seed {seed}");
    }
}

/// A crashed server's restarted incarnation resets the old stream: the client sees an error,
/// not a hang and not a silent success.
#[test]
fn a_restarted_peer_resets_the_stream() {
    let l = log();
    let l2 = l.clone();
    let mut spec = world(
        2,
        entry(move |id| {
            let l = l2.clone();
            async move {
                if id == 0 {
                    let listener = TcpListener::bind("0.0.0.0:7000").await.unwrap();
                    let (_s, _) = listener.accept().await.unwrap();
                    std::future::pending::<()>().await;
                } else {
                    let mut s = TcpStream::connect("node0:7000").await.unwrap();
                    // Wait past the crash and restart, then write.
                    time::sleep(Duration::from_millis(300)).await;
                    s.write_all(b"hello").await.unwrap();
                    let mut buf = [0u8; 8];
                    let r = s.read(&mut buf).await;
                    push(&l, format!("{:?}", r.map_err(|e| e.kind())));
                }
            }
        }),
    );
    // Only the server crashes, once the stream is open.
    spec.crash_gate = Some(|v, n| n == 0 && v.now > weft_core::SimTime(50_000_000));
    let mut sc = calm();
    sc.restart = true;
    sc.budget.crashes = 1;
    sc.rates.crash = weft_core::Ratio::new(1, 1);
    sc.outage_max = weft_core::SimDuration::from_millis(100);
    for seed in 0..10 {
        run(&spec, &sc, seed);
        assert_eq!(take(&l), ["Err(ConnectionReset)"], "seed {seed}");
    }
}

#[test]
fn udp_datagrams_and_refused_connect() {
    let l = log();
    let l2 = l.clone();
    let spec = world(
        2,
        entry(move |id| {
            let l = l2.clone();
            async move {
                let sock = UdpSocket::bind(node_addr(id, 9000)).await.unwrap();
                if id == 0 {
                    let mut buf = [0u8; 16];
                    let (n, from) = sock.recv_from(&mut buf).await.unwrap();
                    sock.send_to(&buf[..n], from).await.unwrap();
                } else {
                    sock.send_to(b"ping", "10.0.0.1:9000").await.unwrap();
                    let mut buf = [0u8; 16];
                    let (n, from) = sock.recv_from(&mut buf).await.unwrap();
                    push(&l, format!("{} from {from}", String::from_utf8_lossy(&buf[..n])));
                    let e = TcpStream::connect("10.0.0.1:1").await.unwrap_err();
                    push(&l, format!("{:?}", e.kind()));
                    let e = TcpStream::connect("10.9.9.9:1").await.unwrap_err();
                    push(&l, format!("{:?}", e.kind()));
                }
            }
        }),
    );
    assert_eq!(run(&spec, &calm(), 5).outcome, Outcome::Pass);
    assert_eq!(take(&l), ["ping from 10.0.0.1:9000", "ConnectionRefused", "HostUnreachable"]);
}

/// A crash drops the node's tasks; the restart reruns the entry function, which reads what
/// the disk kept (fsynced data survives under every contract).
#[test]
fn restart_reruns_the_entry_with_the_disk() {
    let l = log();
    let l2 = l.clone();
    let spec = world(
        1,
        entry(move |_| {
            let l = l2.clone();
            async move {
                let boots = match weft_async::fs::read("boots").await {
                    Ok(b) => u64::from_be_bytes(b.try_into().unwrap()),
                    Err(_) => 0,
                } + 1;
                weft_async::fs::write("boots", boots.to_be_bytes()).await.unwrap();
                weft_async::fs::sync_all("boots").await.unwrap();
                weft_async::fs::sync_dir("").await.unwrap();
                push(&l, format!("boot {boots}"));
                loop {
                    time::sleep(Duration::from_millis(10)).await;
                }
            }
        }),
    );
    let mut sc = calm();
    sc.restart = true;
    sc.budget.crashes = 1;
    sc.rates.crash = weft_core::Ratio::new(1, 10);
    sc.disk.contract = weft_core::Contract::Posix;
    let mut restarted = 0;
    for seed in 0..5 {
        assert_eq!(run(&spec, &sc, seed).outcome, Outcome::Pass);
        let got = take(&l);
        if got.len() == 2 {
            assert_eq!(got, ["boot 1", "boot 2"], "seed {seed}");
            restarted += 1;
        }
    }
    assert!(restarted > 0);
}

fn outcome_of(f: fn() -> std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>) -> Outcome {
    let spec = world(1, Arc::new(move |_| f()));
    run(&spec, &calm(), 0).outcome
}

fn crashed_with(o: Outcome, text: &str) {
    match o {
        Outcome::TargetCrashed { detail } => assert!(detail.contains(text), "{detail}"),
        o => panic!("expected a target crash mentioning {text:?}, got {o:?}"),
    }
}

#[test]
fn a_panicking_task_is_the_targets_crash() {
    let o = outcome_of(|| {
        Box::pin(async {
            spawn(async { panic!("boom in a task") });
            time::sleep(Duration::from_millis(1)).await;
        })
    });
    crashed_with(o, "boom in a task");
}

#[test]
fn a_yield_loop_is_reported_as_a_livelock() {
    let o = outcome_of(|| {
        Box::pin(async {
            loop {
                yield_now().await;
            }
        })
    });
    crashed_with(o, "livelock");
}

#[test]
fn a_thread_blocking_poll_is_reported() {
    let o = outcome_of(|| {
        Box::pin(async {
            std::thread::sleep(std::time::Duration::from_millis(2100));
        })
    });
    crashed_with(o, "blocked its thread");
}

#[test]
fn runtime_calls_outside_a_node_are_a_clear_panic() {
    let e = std::panic::catch_unwind(Instant::now).unwrap_err();
    let msg = e.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("outside a weft-async node"), "{msg}");
}

/// A partition longer than the retransmission budget fails the stream with `TimedOut`; a
/// shorter one is ridden out. Either way the client hears back: no hang.
#[test]
fn a_long_partition_times_the_stream_out() {
    let l = log();
    let l2 = l.clone();
    let spec = world(
        2,
        entry(move |id| {
            let l = l2.clone();
            async move {
                if id == 0 {
                    let listener = TcpListener::bind("0.0.0.0:7000").await.unwrap();
                    let (mut s, _) = listener.accept().await.unwrap();
                    let mut buf = [0u8; 4];
                    while let Ok(n @ 1..) = s.read(&mut buf).await {
                        let _ = s.write_all(&buf[..n]).await;
                    }
                } else {
                    let mut s = match TcpStream::connect("node0:7000").await {
                        Ok(s) => s,
                        Err(e) => return push(&l, format!("connect {:?}", e.kind())),
                    };
                    time::sleep(Duration::from_millis(100)).await;
                    s.write_all(b"ping").await.unwrap();
                    let mut buf = [0u8; 4];
                    let r = s.read_exact(&mut buf).await.map(|_| buf.to_vec());
                    push(&l, format!("{:?}", r.map_err(|e| e.kind())));
                }
            }
        }),
    );
    let mut sc = calm();
    sc.budget.partitions = 1;
    sc.rates.partition = weft_core::Ratio::new(1, 1);
    sc.outage_max = weft_core::SimDuration::from_secs(1);
    let (mut timed_out, mut echoed) = (0, 0);
    for seed in 0..20 {
        run(&spec, &sc, seed);
        match take(&l).as_slice() {
            [r] if r == "Err(TimedOut)" || r == "connect TimedOut" => timed_out += 1,
            [r] if r == "Ok([112, 105, 110, 103])" => echoed += 1,
            other => panic!("seed {seed}: {other:?}"),
        }
    }
    assert!(timed_out > 0 && echoed > 0, "timed out {timed_out}, echoed {echoed}");
}

/// `sync::watch`: waiters see every change they wait for, wake in the order they waited
/// (under all-zero decisions), and learn when the sender is gone.
#[test]
fn watch_wakes_waiters_in_order_and_closes() {
    use weft_async::sync::watch;
    let l = log();
    let l2 = l.clone();
    let spec = world(
        1,
        entry(move |_| {
            let l = l2.clone();
            async move {
                let (tx, rx) = watch::channel(0u64);
                let waiters: Vec<_> = (0..3)
                    .map(|i| {
                        let mut rx = rx.clone();
                        let l = l.clone();
                        spawn(async move {
                            let v = *rx.wait_for(|&v| v >= 2).await.unwrap();
                            push(&l, format!("w{i} saw {v}"));
                            let closed = rx.changed().await.is_err();
                            push(&l, format!("w{i} closed {closed}"));
                        })
                    })
                    .collect();
                yield_now().await;
                tx.send_replace(1);
                yield_now().await;
                tx.send_modify(|v| *v += 1);
                yield_now().await;
                drop(tx);
                for w in waiters {
                    w.await.unwrap();
                }
            }
        }),
    );
    let r = spec.run(&calm(), &mut Decisions::replay(Vec::new()), &mut NullObserver);
    assert_eq!(r.outcome, Outcome::Pass);
    assert_eq!(
        take(&l),
        ["w0 saw 2", "w1 saw 2", "w2 saw 2", "w0 closed true", "w1 closed true", "w2 closed true"]
    );
}
