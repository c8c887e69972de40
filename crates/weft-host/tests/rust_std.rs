//! Rust std programs run under the shim as C programs do (std reaches the kernel through libc).

use std::path::{Path, PathBuf};
use std::process::Command;
use weft_core::{Decisions, NullObserver, Outcome, Scenario};

/// Builds `tests/rust/NAME.rs` with rustc.
fn rustc(name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/rust/{name}.rs"));
    let bin = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("rust-{name}"));
    let ok = Command::new("rustc")
        .args(["--edition", "2021", "-o"])
        .arg(&bin)
        .arg(&src)
        .status()
        .expect("rustc is needed for this test");
    assert!(ok.success());
    bin
}

#[test]
fn a_rust_std_program_is_deterministic_under_the_shim() {
    let bin = rustc("udp");
    let cfg = weft_host::HostConfig::new(&bin, vec!["{addr}".into(), "{others}".into()], 2);
    let run = |seed| {
        let mut d = Decisions::random(seed);
        let out = weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap();
        assert_eq!(out.report.outcome, Outcome::Pass, "{:?}", out.lines);
        out.render()
    };
    let a = run(11);
    assert_eq!(a, run(11));
    assert!(a.contains("epoch 1767225600"), "{a}");
    assert_eq!(a.matches("got 2 bytes").count(), 2, "{a}");
    assert_eq!(a.matches("thread 42 done").count(), 2, "{a}");
    assert!((12..20).any(|s| run(s) != a), "other seeds should change something");
}

#[test]
fn rust_std_threads_mutexes_condvars_and_channels_are_simulated() {
    let bin = rustc("threads");
    let cfg = weft_host::HostConfig::new(&bin, vec![], 1);
    let run = |seed| {
        let mut d = Decisions::random(seed);
        let out = weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap();
        assert_eq!(out.report.outcome, Outcome::Pass, "{:?}", out.lines);
        out.render()
    };
    let a = run(1);
    assert!(a.contains("all 3 workers done"), "{a}");
    assert!(a.contains("wait_timeout timed out true"), "{a}");
    let pushes = a.lines().find(|l| l.contains("pushes [")).expect("a pushes line");
    assert_eq!(pushes.matches(", ").count(), 8, "nine pushes, none lost: {a}");
    assert_eq!(run(1), a, "same seed, same interleaving");
    assert!((2..10).any(|s| run(s) != a), "seeds should change the interleaving");
}
