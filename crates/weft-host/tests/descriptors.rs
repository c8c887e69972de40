//! Parity of descriptors (issue 11, part 2): each scenario of `tests/c/descriptors.c` runs
//! natively and under the shim, and what the program observes must be the same line for line:
//! copies made by `dup`, `dup2`, `dup3` and `fcntl(F_DUPFD*)` of UDP sockets, streams and epoll
//! instances share one object that closes with its last copy; TCP and UDP have separate port
//! spaces; `SO_REUSEADDR` and `SO_REUSEPORT` share ports as Linux does; sockets bound to one
//! port on different addresses coexist, and traffic reaches the one bound to the address named.

mod common;
use std::process::Command;
use weft_core::{Decisions, NullObserver, Outcome, Scenario};

fn parity(scenario: &str) {
    let bin = common::compile("descriptors", &[]);
    let native = Command::new(&bin).arg(scenario).output().expect("run natively");
    assert!(native.status.success(), "native run of {scenario} failed");
    let native = String::from_utf8(native.stdout).unwrap();
    assert!(!native.contains(" 0\n"), "a native expectation failed:\n{native}");

    let cfg = common::config("descriptors", &[scenario], 1);
    let mut d = Decisions::random(7);
    let out = weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap();
    assert_eq!(out.report.outcome, Outcome::Pass, "under the shim: {:?}", out.lines);
    let shim: String = out.lines.iter().map(|l| format!("{}\n", l.text)).collect();
    assert_eq!(shim, native, "scenario {scenario}: shim (left) vs native (right)");
}

#[test]
fn udp_socket_copies_share_one_socket() {
    parity("udp");
}

#[test]
fn dup2_and_dup3_replace_and_copy() {
    parity("dup2");
}

#[test]
fn epoll_copies_share_one_interest_list() {
    parity("epoll");
}

#[test]
fn stream_copies_close_with_the_last() {
    parity("stream");
}

#[test]
fn tcp_and_udp_ports_and_reuse_options() {
    parity("ports");
}

#[test]
fn one_port_on_two_addresses_and_traffic_to_the_named_one() {
    parity("addresses");
}
