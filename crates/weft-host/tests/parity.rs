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
fn nonblock() {
    parity("nonblock");
}

#[test]
fn poll_select_epoll() {
    parity("poll");
}
