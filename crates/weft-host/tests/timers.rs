//! Timers in virtual time: each scenario of `tests/c/timers.c` (alarm, setitimer, POSIX timers,
//! timerfds in read/poll/epoll) runs natively and under the shim and must observe the same;
//! under the shim expiries happen exactly at the virtual times asked, and runs repeat.

mod common;
use std::process::Command;
use weft_core::{Decisions, NullObserver, Outcome, Scenario};
use weft_host::RunOutput;

fn shim(scenario: &str, seed: u64) -> RunOutput {
    let cfg = common::config("timers", &[scenario], 1);
    let mut d = Decisions::random(seed);
    weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap()
}

fn text(out: &RunOutput) -> String {
    out.lines.iter().map(|l| format!("{}\n", l.text)).collect()
}

fn parity(scenario: &str) {
    let bin = common::compile("timers", &[]);
    let native = Command::new(&bin).arg(scenario).output().expect("run natively");
    assert!(native.status.success(), "native run of {scenario} failed");
    let want = String::from_utf8(native.stdout).unwrap();
    let out = shim(scenario, 7);
    assert_eq!(out.report.outcome, Outcome::Pass, "under the shim: {:?}", out.lines);
    assert_eq!(text(&out), want, "scenario {scenario}: shim (left) vs native (right)");
}

#[test]
fn alarm_interrupts_pause() {
    parity("alarm");
}

#[test]
fn setitimer_is_periodic() {
    parity("itimer");
}

#[test]
fn posix_timer_sends_its_signal_with_its_value() {
    parity("posix");
}

#[test]
fn timerfd_in_read_poll_and_epoll() {
    parity("timerfd");
}

#[test]
fn expiries_happen_exactly_when_asked() {
    let out = shim("exact", 1);
    assert_eq!(out.report.outcome, Outcome::Pass, "{:?}", out.lines);
    assert_eq!(
        text(&out),
        "tick 0 at +250000000ns\ntick 1 at +350000000ns\ntick 2 at +450000000ns\n\
         timerfd abstime +1s fired at +1000000000ns count=1\n"
    );
}

/// Timers on CPU-time clocks (threads' own, from `pthread_getcpuclockid`) run in virtual time,
/// as the clocks read it, and `SIGEV_THREAD_ID` delivers each to the thread it names: haproxy's
/// watchdog, which made haproxy exit 4.
#[test]
fn cpu_clock_timers_fire_on_the_thread_they_name() {
    let out = shim("watchdog", 1);
    assert_eq!(out.report.outcome, Outcome::Pass, "{:?}", out.lines);
    let t = text(&out);
    for k in 0..2 {
        assert!(t.contains(&format!("thread {k} timer_create 0\n")), "{t}");
        assert!(t.contains(&format!("thread {k} cpu clock reads 0\n")), "{t}");
        assert!(t.contains(&format!("thread {k}'s timer ran on it 1\n")), "{t}");
    }
}

#[test]
fn same_seed_same_trace() {
    for scenario in ["exact", "timerfd", "posix"] {
        let a = shim(scenario, 5);
        let b = shim(scenario, 5);
        assert_eq!(a.report.trace_hash, b.report.trace_hash, "{scenario}");
        assert_eq!(a.render(), b.render(), "{scenario}");
    }
}

/// The clock's discipline (`adjtimex` and its kin, which glibc makes with internal
/// `clock_adjtime` calls) reads the virtual clock, synchronised (it answered the real clock and
/// the machine's NTP state), and a node's attempt to steer or set the clock is refused by name.
#[test]
fn clock_discipline_reads_are_virtual_and_clock_writes_are_refused_by_name() {
    let run = |args: &[&str]| {
        let cfg = common::config("clockset", args, 1);
        let mut d = Decisions::random(1);
        weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap()
    };
    let read = "0, time 1767225600, offset 0, freq 0, maxerror 0, status 0";
    let want = [
        format!("adjtimex: {read}"),
        format!("ntp_adjtime: {read}"),
        format!("clock_adjtime: {read}"),
        format!("raw adjtimex: {read}"),
        "ntp_gettime: 0, time 1767225600, maxerror 0".to_string(),
        "raw settimeofday(NULL, NULL): 0".to_string(),
    ];
    assert_eq!(common::passing_lines(&run(&[])), want);
    for (arg, call) in [
        ("freq", "adjtimex()/clock_adjtime(): adjusting the clock"),
        ("settime", "settimeofday()/clock_settime(CLOCK_REALTIME): setting the clock"),
        ("clock", "settimeofday()/clock_settime(CLOCK_REALTIME): setting the clock"),
    ] {
        let out = run(&[arg]);
        match &out.report.outcome {
            Outcome::Unsupported { detail } => assert!(detail.contains(call), "{arg}: {detail}"),
            other => panic!("{arg}: expected unsupported, got {other:?}: {}", out.render()),
        }
    }
}

/// `ftime`, `thrd_sleep`, `ualarm` and `getloadavg` are virtual: glibc makes them with internal
/// calls no hook saw, so `ftime` read the real clock, `thrd_sleep` was caught by the seccomp
/// trap (exit 4), `ualarm`'s SIGALRM never came, and the machine's real load showed through.
#[test]
fn glibc_time_calls_made_internally_are_virtual() {
    let cfg = common::config("timecompat", &[], 1);
    let mut d = Decisions::random(1);
    let out = weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap();
    assert_eq!(
        common::passing_lines(&out),
        [
            "ftime agrees with gettimeofday: 1",
            "thrd_sleep 0",
            "after it: 1500 ms",
            "ualarm answers 0",
            "armed again, 200000 us were left",
            "alarms 1 at 1800 ms",
            "getloadavg 3: 0.00 0.00 0.00",
        ]
    );
}
