//! The time-stamp counter (`tests/c/tsc.c`): `rdtsc` and `rdtscp` read virtual time (a 1 GHz
//! counter on `CLOCK_MONOTONIC`'s reading), so every run reads the same values; the vDSO's own
//! counter read still gives it the real time; a program's `SIGSEGV` handler still catches its
//! faults and a raised `SIGSEGV`, a fault with the default disposition still ends the process
//! by that signal, and an exec'd image (whose loader reads the counter first) starts.

mod common;
use weft_core::{Decisions, NullObserver, Outcome, Scenario};

fn run(args: &[&str]) -> weft_host::RunOutput {
    let cfg = common::config("tsc", args, 1);
    let mut d = Decisions::random(3);
    weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap()
}

#[test]
fn the_counter_reads_virtual_time_and_faults_still_reach_the_program() {
    let out = run(&[]);
    assert_eq!(
        common::passing_lines(&out),
        [
            "counter 1000000000000 then 1000001000000 after 1 ms, aux 0",
            "the vDSO's clock_gettime 0, after 2026 1",
            "own handler reported back 1",
            "null read caught by own handler: signal 11",
            "raised SIGSEGV reached own handler 1",
            "counter after the handlers moves on 1",
        ]
    );
    assert_eq!(run(&[]).report.trace_hash, out.report.trace_hash, "two runs alike");
}

/// `cpuid` says the processor has no `RDRAND` or `RDSEED` (their draws are the processor's own,
/// unseen: libstdc++'s `random_device` used them), in every thread, and is otherwise the
/// processor's answer. Where the kernel or processor cannot make `cpuid` fault (no
/// `cpuid_fault` flag), the answer stays the processor's.
#[test]
fn cpuid_hides_the_processors_random_instructions() {
    let bin = common::compile("cpuid", &["-pthread"]);
    let native = std::process::Command::new(&bin).output().expect("runs natively");
    let native = String::from_utf8(native.stdout).unwrap();
    let cfg = weft_host::HostConfig::new(bin, vec![], 1);
    let mut d = Decisions::random(1);
    let out = weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap();
    let lines = common::passing_lines(&out);
    assert_eq!(
        lines[0],
        native.lines().next().unwrap(),
        "the vendor and leaves are the processor's"
    );
    let faults = std::fs::read_to_string("/proc/cpuinfo").unwrap().contains(" cpuid_fault");
    if faults {
        assert_eq!(lines[1..], ["main: rdrand 0 rdseed 0", "thread: rdrand 0 rdseed 0"]);
    } else {
        assert_eq!(lines[1..].join("\n"), native.lines().skip(1).collect::<Vec<_>>().join("\n"));
    }
}

#[test]
fn a_fault_with_the_default_disposition_still_kills() {
    let out = run(&["die"]);
    match &out.report.outcome {
        Outcome::TargetCrashed { detail } => {
            assert!(detail.contains("killed by signal 11"), "{detail}")
        }
        other => panic!("expected a crash, got {other}"),
    }
}

#[test]
fn an_execd_image_starts_and_reads_the_counter() {
    let out = run(&["exec"]);
    assert_eq!(common::passing_lines(&out), ["exec'd image reads the counter: 1"]);
}

/// With every signal blocked (dash does so around a fork), the counter and the vDSO's clock
/// still read (before, the trap's blocked SIGSEGV killed the process), and a real fault still
/// kills, the program's handler not run, as Linux forces a blocked fault signal.
#[test]
fn the_counter_reads_with_every_signal_blocked_and_a_blocked_fault_still_kills() {
    let out = run(&["blocked"]);
    assert_eq!(common::passing_lines(&out), ["blocked: counter moves 1, vDSO clock 0"]);
    let out = run(&["blocked-fault"]);
    match &out.report.outcome {
        Outcome::TargetCrashed { detail } => {
            assert!(detail.contains("killed by signal 11"), "{detail}")
        }
        other => panic!("expected a crash, got {other}: {}", out.render()),
    }
}
