//! Threads and processes made without `pthread_create` or `fork` (`tests/c/clone.c`): a glibc
//! `clone()` thread and a `clone()` fork are simulated, and what the program observes is the
//! same natively and under the shim, deterministically; raw `clone3`/`clone` system calls
//! (through `syscall(2)` or a `syscall` instruction of the program's own) run natively but
//! are reported as unsupported under the shim, naming the call, and never run unseen.

mod common;
use std::process::Command;
use weft_core::{Decisions, NullObserver, Outcome, Scenario};

fn shim_run(mode: &str, seed: u64) -> weft_host::RunOutput {
    let cfg = common::config("clone", &[mode], 1);
    let mut d = Decisions::random(seed);
    weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap()
}

fn native(mode: &str) -> String {
    let out = Command::new(common::compile("clone", &[])).arg(mode).output().expect("run natively");
    assert!(out.status.success(), "native run of {mode} failed: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn text(out: &weft_host::RunOutput) -> String {
    out.lines.iter().map(|l| format!("{}\n", l.text)).collect()
}

/// Same lines natively and under the shim; same seed, same output and trace hash.
fn parity(mode: &str) -> weft_host::RunOutput {
    let out = shim_run(mode, 3);
    assert_eq!(out.report.outcome, Outcome::Pass, "{mode} under the shim: {:?}", out.lines);
    assert_eq!(text(&out), native(mode), "mode {mode}: shim (left) vs native (right)");
    let again = shim_run(mode, 3);
    assert_eq!(again.render(), out.render(), "mode {mode}: same seed, different output");
    assert_eq!(again.report.trace_hash, out.report.trace_hash, "mode {mode}: trace hash");
    out
}

/// The mode runs natively; under the shim it ends as unsupported, naming `call`, before the
/// created thread or child could do anything.
fn reported(mode: &str, call: &str, ran: &str) {
    assert!(native(mode).contains(ran), "mode {mode} natively");
    let out = shim_run(mode, 3);
    match &out.report.outcome {
        Outcome::Unsupported { detail } => assert!(detail.contains(call), "{mode}: {detail}"),
        o => panic!("{mode}: expected unsupported, got {o:?}; {:?}", out.lines),
    }
    assert!(!text(&out).contains(ran), "{mode}: the unseen thread or child ran");
}

#[test]
fn a_glibc_clone_thread_is_a_simulated_thread() {
    let out = parity("thread");
    // The child's nanosleep(10 ms) ran in virtual time, on a thread the host scheduled.
    let child = out.lines.iter().find(|l| l.text.starts_with("child: arg 42")).expect("child");
    assert!(format!("{child}").contains("0.010"), "not virtual time: {child}");
}

#[test]
fn a_glibc_clone_fork_and_a_raw_clone_fork_are_simulated_children() {
    parity("fork");
    parity("sys-fork");
}

#[test]
fn raw_clone3_and_clone_are_reported_by_name() {
    reported("sys-clone3", "SYS_clone3", "thread ran: 1");
    reported("asm-clone3", "raw system call clone3", "exited 3");
    reported("asm-clone", "raw system call clone ", "exited 9");
}
