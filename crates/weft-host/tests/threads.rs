//! Threads under the shim: one simulated thread runs at a time, switches happen at
//! intercepted calls (locks, sleeps) as the decision source picks, and a seed fixes the
//! interleaving.

mod common;
use weft_core::{Decisions, NullObserver, Outcome, Scenario};

fn run(seed: u64) -> weft_host::RunOutput {
    let cfg = common::config("threads", &[], 1);
    let mut d = Decisions::random(seed);
    weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap()
}

#[test]
fn threads_run_one_at_a_time_and_the_seed_fixes_the_interleaving() {
    let a = run(1);
    assert_eq!(a.report.outcome, Outcome::Pass, "{}", a.render());
    let text = a.render();
    assert!(text.contains("final 6"), "{text}");
    // Every counter value appears exactly once: the mutex is respected.
    for v in 1..=6 {
        assert_eq!(text.matches(&format!("counter {v}\n")).count(), 1, "{text}");
    }
    assert!(text.contains("consumed item 3\n"), "{text}");
    assert!(text.contains("timedwait ETIMEDOUT"), "{text}");
    assert!(text.contains("got token 2\n"), "{text}");
    assert!(text.contains("sem_timedwait -1 ETIMEDOUT"), "{text}");
    let (release, reader) =
        (text.find("writer releases").unwrap(), text.find("reader in").unwrap());
    assert!(release < reader, "the reader waits for the writer: {text}");
    assert!(text.contains("timedlock ETIMEDOUT"), "{text}");
    assert_eq!(run(1).render(), text, "same seed, same interleaving");
    let orders: std::collections::BTreeSet<String> = (0..8)
        .map(|seed| run(seed).lines.iter().map(|l| l.text.chars().nth(7).unwrap_or('?')).collect())
        .collect();
    assert!(orders.len() > 1, "seeds should change which thread runs first: {orders:?}");
}

/// Barriers wait in the host: four threads meet three times, natively and under the shim
/// alike, and a seed fixes the run.
#[test]
fn barriers_release_every_thread_once_per_round() {
    let bin = common::compile("barrier", &["-pthread"]);
    let native = std::process::Command::new(&bin).output().expect("run natively");
    assert!(native.status.success(), "{native:?}");
    let cfg = weft_host::HostConfig::new(bin, vec![], 1);
    let go = |seed| {
        let mut d = Decisions::random(seed);
        weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap()
    };
    let out = go(5);
    assert_eq!(out.report.outcome, Outcome::Pass, "{}", out.render());
    let text: String = out.lines.iter().map(|l| format!("{}\n", l.text)).collect();
    assert_eq!(text, String::from_utf8(native.stdout).unwrap(), "shim (left) vs native");
    assert_eq!(go(5).report.trace_hash, out.report.trace_hash, "same seed, same run");
}

/// A thread's key destructors and `pthread_exit` cleanup handlers are the program's code and
/// run inside the simulation: their sleeps take virtual time and the lock a destructor holds
/// is one the host sees (before, the thread had left the simulation when they ran, so main
/// found the lock held by an invisible thread, or the sleep took no virtual time).
#[test]
fn a_threads_exit_destructors_and_cleanup_handlers_run_in_the_simulation() {
    let bin = common::compile("threadexit", &["-pthread"]);
    let cfg = weft_host::HostConfig::new(bin, vec![], 1);
    for seed in 1..=3 {
        let mut d = Decisions::random(seed);
        let out = weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap();
        let text = out.render();
        assert_eq!(out.report.outcome, Outcome::Pass, "{text}");
        assert!(text.contains("destructor done by 10 ms"), "{text}");
        assert!(text.contains("cleanup done by 5 ms"), "{text}");
    }
}

/// A joinable thread that reuses an ended detached thread's stack (so its `pthread_t`) while
/// another process holds the detached thread's old slot is joined as itself: the join once
/// found the stale entry first and waited in the kernel with the baton (mariadbd under Galera).
#[test]
fn a_join_waits_for_the_thread_that_reused_an_ended_detached_threads_id() {
    let cfg = common::config("joinreuse", &[], 1);
    let mut d = Decisions::random(1);
    let out = weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap();
    assert_eq!(out.report.outcome, Outcome::Pass, "{}", out.render());
    assert_eq!(
        common::passing_lines(&out),
        ["same pthread_t 1, join 0, returned 42", "child 0"],
        "{}",
        out.render()
    );
}
