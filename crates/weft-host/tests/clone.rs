//! Threads and processes made without `pthread_create` or `fork` (`tests/c/clone.c`): a glibc
//! `clone()` thread and a `clone()` fork are simulated, and what the program observes is the
//! same natively and under the shim, deterministically; so are fork-like raw calls (no
//! `CLONE_VM`), through `syscall(2)` or a `syscall` instruction of the program's own; raw
//! threads and forks sharing state run natively but are reported as unsupported under the
//! shim, naming the call, and never run unseen.

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

/// Fork-like raw calls (no `CLONE_VM`) through `syscall(2)`, the program's own `syscall`
/// instruction (trapped by the seccomp filter, simulated by its SIGSYS handler), and glibc's
/// forks no `fork` hook sees (`_Fork`, `daemon`) make simulated children: each child sees a
/// pid of its own and its parent waits for its status, as natively. Without the trap the
/// child would run unseen, on its parent's slot and virtual pid, and `own pid` would say 0.
#[test]
fn raw_fork_like_clones_are_simulated_children() {
    for mode in
        ["sys-clone3-fork", "sys-fork-nr", "asm-clone3", "asm-fork", "asm-vfork", "libc-fork"]
    {
        let out = parity(mode);
        // (A vfork child may only exit: its status is what shows it was seen.)
        let seen = if mode == "asm-vfork" { "exited 13" } else { "child: own pid: 1" };
        assert!(text(&out).contains(seen), "{mode}: {:?}", out.lines);
    }
}

#[test]
fn raw_clone3_and_clone_are_reported_by_name() {
    reported("sys-clone3", "SYS_clone3", "thread ran: 1");
    reported("asm-clone", "raw system call clone ", "exited 9");
    reported("asm-fork-files", "CLONE_FILES", "exited 14");
}

/// Threads glibc makes with its internal `pthread_create` (C11 threads, POSIX AIO) would run
/// unseen: the calls that make them are refused by name before any thread exists.
#[test]
fn threads_glibc_makes_internally_are_reported_by_name() {
    reported("c11-thread", "thrd_create()", "c11 thread ran: 7");
    reported("aio", "aio_write()", "aio wrote: 4");
}

/// libc's own `fork` reached without the `fork` symbol (as glibc's internal callers do; here
/// through `dlvsym`) is caught by the shim's `atfork` handlers: the child leaves before
/// running the program's code and the run ends as unsupported, naming the call.
#[test]
fn a_fork_no_hook_sees_is_reported_by_name() {
    reported("libc-vsym-fork", "made inside glibc", "exited 16");
}

/// `dlsym` on libc's own handle (Python's `ctypes.CDLL("libc.so.6")`) answers the shim's hook
/// where the shim has one: the fork found that way is a simulated child, as natively.
#[test]
fn a_function_found_on_libcs_handle_is_the_shims_hook() {
    let out = parity("libc-handle-fork");
    assert!(text(&out).contains("child: own pid: 1"), "{:?}", out.lines);
}
