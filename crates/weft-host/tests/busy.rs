//! Busy waits under the shim: loops of calls that never block (clock reads, `sched_yield`,
//! `poll` with timeout 0, a failing `trylock`) see virtual time pass through the modelled call
//! latency and end, deterministically; a loop with no call at all is reported as a deadlock
//! that names the function it spins in (found by sampling CPU time, not the 20 s stall bound).

mod common;
use weft_core::{Decisions, NullObserver, Outcome, Scenario, SimDuration};

fn run(name: &str, seed: u64, scenario: &Scenario) -> weft_host::RunOutput {
    let cfg = common::config(name, &[], 1);
    let mut d = Decisions::random(seed);
    weft_host::run_once(&cfg, scenario, &mut d, &mut NullObserver).unwrap()
}

fn time_of(out: &weft_host::RunOutput, text: &str) -> SimDuration {
    let line = out.lines.iter().find(|l| l.text == text).unwrap_or_else(|| panic!("{text}"));
    line.time.since(weft_core::SimTime::ZERO)
}

#[test]
fn busy_waits_end_and_are_deterministic() {
    let calm = Scenario::calm();
    let a = run("busywait", 3, &calm);
    assert_eq!(a.report.outcome, Outcome::Pass, "{}", a.render());
    // Each loop waits for a span of virtual time (or for a thread that sleeps for one).
    let clock = time_of(&a, "clock spin done");
    let yield_done = time_of(&a, "yield spin done");
    let poll_done = time_of(&a, "poll spin done");
    assert!(clock >= SimDuration::from_millis(5), "{clock:?}");
    assert!(yield_done >= clock + SimDuration::from_millis(2), "{yield_done:?}");
    assert!(poll_done >= yield_done + SimDuration::from_millis(3), "{poll_done:?}");
    assert!(a.render().contains("trylock spin done after retries"), "{}", a.render());
    let b = run("busywait", 3, &calm);
    assert_eq!(a.render(), b.render(), "same seed, same output and times");
    assert_eq!(a.report.trace_hash, b.report.trace_hash);
}

#[test]
fn the_call_latency_is_the_scenario_s() {
    // A costlier call reaches the clock loop's target in fewer calls, not at another time:
    // the loop ends as soon as 5 ms have passed, whatever the cost per call.
    let slow = Scenario { call_latency: SimDuration::from_micros(50), ..Scenario::calm() };
    let a = run("busywait", 3, &slow);
    assert_eq!(a.report.outcome, Outcome::Pass, "{}", a.render());
    let b = run("busywait", 3, &Scenario::calm());
    assert_ne!(a.report.trace_hash, b.report.trace_hash, "the latency is part of the run");
}

#[test]
fn a_loop_without_calls_is_a_deadlock_naming_where_it_spins() {
    let out = run("spinforever", 1, &Scenario::calm());
    let Outcome::Deadlock { detail } = &out.report.outcome else {
        panic!("expected a deadlock: {:?}", out.report.outcome)
    };
    assert!(detail.contains("spins without an intercepted call"), "{detail}");
    assert!(detail.contains("spin_here"), "names the function: {detail}");
}

/// A thread that computes for about 3.5 s of CPU without one intercepted call is slow, not
/// spinning: it finishes and the run passes (the old bar, an eighth of a CPU over 2 s, named it
/// as spinning after 3 s; a spinner is now one that burns seconds of CPU).
#[test]
fn a_long_computation_without_calls_is_not_taken_for_a_spin() {
    let out = run("compute", 1, &Scenario::calm());
    assert_eq!(common::passing_lines(&out), ["computed 131"]);
}
