//! Parity: each intercepted-call scenario of `tests/c/parity.c` runs natively and under the
//! shim, and what the program observes must be the same line for line. The program prints
//! only facts that hold in both worlds (no absolute times, no random values), so any
//! difference is a hook that does not mirror the real call.

mod common;
use std::process::Command;
use weft_core::{Decisions, NullObserver, Outcome, Scenario};

fn parity(scenario: &str) {
    let bin = common::compile("parity", &[]);
    let native = Command::new(&bin).arg(scenario).output().expect("run natively");
    assert!(native.status.success(), "native run of {scenario} failed");
    let native = String::from_utf8(native.stdout).unwrap();

    let cfg = common::config("parity", &[scenario], 1);
    let mut d = Decisions::random(7);
    let out = weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap();
    assert_eq!(out.report.outcome, Outcome::Pass, "under the shim: {:?}", out.lines);
    let shim: String = out.lines.iter().map(|l| format!("{}\n", l.text)).collect();
    assert_eq!(shim, native, "scenario {scenario}: shim (left) vs native (right)");
}

#[test]
fn time() {
    parity("time");
}

#[test]
fn sleep() {
    parity("sleep");
}

#[test]
fn random() {
    parity("random");
}

#[test]
fn udp() {
    parity("udp");
}

#[test]
fn ipv6_beside_ipv4() {
    parity("ipv6");
}

/// libuv's `syscall(SYS_close)`, `SYS_dup3` and datagram batches, a datagram's `IP_PKTINFO`
/// (dnsmasq drops queries without one), poll's `POLLRDNORM`/`POLLWRNORM` (varnish's connect).
#[test]
fn calls_made_through_syscall_and_packet_information() {
    parity("rawcalls");
}

/// Waits on a named clock (libstdc++'s `wait_until`), timed read-write locks, `pthread_once`
/// with the initialiser on another thread.
#[test]
fn clock_waits_timed_rwlocks_and_once() {
    parity("clockwaits");
}

#[test]
fn nonblock() {
    parity("nonblock");
}

#[test]
fn real_descriptors_made_ready_by_another_thread() {
    parity("wakeup");
}

#[test]
fn tcp_streams() {
    parity("tcp");
}

/// `sendfile` from a file to a stream and to a pipe, with and without an offset, and from a
/// stream: the kernel would have written into the placeholder socket (lighttpd's bodies).
#[test]
fn sendfile_to_simulated_descriptors() {
    parity("sendfile");
}

#[test]
fn process_identity() {
    parity("pid");
}

#[test]
fn poll_select_epoll() {
    parity("poll");
}

/// Files run natively (until the storage model lands) but every operation is recorded in the
/// trace: the program sees what it sees natively, and the trace names each call.
#[test]
fn files_are_passed_through_and_recorded() {
    let bin = common::compile("files", &[]);
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("files-parity");
    std::fs::create_dir_all(&dir).unwrap();
    let dir = dir.display().to_string();
    let native = Command::new(&bin).arg(&dir).output().expect("run natively");
    let native = String::from_utf8(native.stdout).unwrap();

    let cfg = common::config("files", &[&dir], 1);
    let mut rec = weft_core::Recorder::default();
    let mut d = Decisions::random(3);
    let out = weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut rec).unwrap();
    assert_eq!(out.report.outcome, Outcome::Pass);
    let shim: String = out.lines.iter().map(|l| format!("{}\n", l.text)).collect();
    assert_eq!(shim, native);
    let notes: Vec<&str> = rec
        .events
        .iter()
        .filter(|e| e.summary.starts_with("file "))
        .map(|e| e.summary.as_str())
        .collect();
    let expect = [
        "file open",
        "file write fd=3 len=5 -> 5",
        "file pwrite fd=3 at=0 len=1 -> 1",
        "file fsync fd=3 -> 0",
        "file ftruncate fd=3 len=4 -> 0",
        "file close fd=3",
        "file rename",
        "file open",
        "file read fd=3 len=32 -> 4",
        "file close fd=3",
        "file unlink",
        "file open",
    ];
    assert_eq!(notes.len(), expect.len(), "{notes:#?}");
    for (n, e) in notes.iter().zip(expect) {
        assert!(n.starts_with(e), "{n} should start with {e}");
    }
    assert!(notes.last().unwrap().ends_with("-> error 2"), "{notes:?}");
}
