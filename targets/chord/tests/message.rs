//! Message mode: replicas exchange datagrams through weft-sim's network. Same replica logic as
//! atomic mode; these tests check that the message protocol rediscovers the literal bugs, that
//! corrected passes, that a broken failure-detector assumption is labelled OutsideModel (never
//! a violation), and that runs are deterministic.

use weft_core::{Decisions, NullObserver, Outcome, Ratio, Recorder, Scenario, SimDuration, Target};
use weft_target_chord::{spec, Chord};

/// A shorter run than the default scenario, to keep the debug test suite fast.
fn short(mut s: Scenario) -> Scenario {
    s.fault_phase = SimDuration::from_millis(400);
    s.heal_phase = SimDuration::from_millis(2500);
    s
}

fn outcomes(
    variant: &str,
    opts: &[(&str, &str)],
    seeds: std::ops::Range<u64>,
    tweak: impl Fn(Scenario) -> Scenario,
) -> Vec<(u64, Outcome)> {
    let mut all = vec![("mode", "messages")];
    all.extend_from_slice(opts);
    let runner = Chord.prepare(&spec(variant, &all, None)).unwrap();
    let scenario = tweak(short(runner.default_scenario()));
    seeds
        .map(|seed| {
            (seed, runner.run(&scenario, &mut Decisions::random(seed), &mut NullObserver).outcome)
        })
        .collect()
}

#[test]
fn literal_loses_the_ring_or_strands_a_node_with_messages() {
    let found = outcomes("literal", &[("ids", "4")], 0..60, |s| s)
        .into_iter()
        .find(|(_, o)| o.is_failure())
        .expect("a violation within 60 seeds");
    let p = found.1.property().unwrap().to_string();
    assert!(["AtLeastOneRing", "ConnectedAppendages"].contains(&p.as_str()), "{:?}", found);
}

#[test]
fn corrected_passes_with_messages() {
    for (seed, o) in outcomes("corrected", &[("ids", "4-6")], 0..40, |s| s) {
        assert_eq!(o, Outcome::Pass, "seed {seed}");
    }
}

#[test]
fn message_loss_is_outside_the_model_not_a_violation() {
    // Dropping replies makes a live peer look dead: the perfect-detector assumption fails.
    let lossy = |mut s: Scenario| {
        s.rates.drop = Ratio::new(1, 5);
        s.budget.drops = 50;
        s
    };
    let all = outcomes("corrected", &[("ids", "5")], 0..20, lossy);
    assert!(
        all.iter().all(|(_, o)| matches!(o, Outcome::Pass | Outcome::OutsideModel { .. })),
        "{all:?}"
    );
    assert!(all.iter().any(|(_, o)| matches!(o, Outcome::OutsideModel { .. })));
}

#[test]
fn message_runs_are_deterministic() {
    let runner = Chord.prepare(&spec("original", &[("mode", "messages")], None)).unwrap();
    let scenario = short(runner.default_scenario());
    for seed in 0..5 {
        let a = runner.run(&scenario, &mut Decisions::random(seed), &mut NullObserver);
        let mut rec = Recorder::default();
        let b = runner.run(&scenario, &mut Decisions::random(seed), &mut rec);
        assert_eq!(a, b);
        assert_eq!(rec.events.len() as u64, b.events);
    }
}

/// Zero is every decision's simplest value, and for a maintenance timer it means "idle until
/// the heal phase": the all-zero run has no background traffic in the fault phase (only the
/// four joins, answered by n0), and still reaches the ideal ring once the timers fire in the
/// heal phase. This is what lets the shrinker remove maintenance rounds a story does not need.
#[test]
fn the_all_zero_run_is_quiet_until_the_heal_phase_and_still_heals() {
    let runner = Chord.prepare(&spec("original", &[("mode", "messages")], None)).unwrap();
    let scenario = runner.default_scenario();
    let mut rec = Recorder::default();
    let report = runner.run(&scenario, &mut Decisions::replay(Vec::new()), &mut rec);
    assert_eq!(report.outcome, Outcome::Pass);
    let heal = weft_core::SimTime::ZERO + scenario.fault_phase;
    let early: Vec<&str> = rec
        .events
        .iter()
        .filter(|e| e.time < heal && e.kind == weft_core::EventKind::Timer)
        .map(|e| e.summary.as_str())
        .collect();
    assert_eq!(early, vec!["timer 5"; 4], "only the joins fire before the heal phase");
    assert!(rec.events.iter().any(|e| e.time > heal && e.summary == "timer 1"), "stabilize runs");
}

/// The features a run reports, as a set (the same states reached, in any order).
#[derive(Default)]
struct Features(std::collections::BTreeSet<u64>);

impl weft_core::Observer for Features {
    fn feature(&mut self, feature: u64) {
        self.0.insert(feature);
    }
}

/// Settling (`settle=true`, the default) ends a passing run once nothing left can change a
/// replica's ring state. If that claim were wrong somewhere, some run would end differently,
/// or would miss a state it reaches when run to the heal phase's end. Every variant, with
/// crashes, late notifies, restarts and identity reuse: the same outcome and the same states
/// with and without it, and most passing runs do end early.
#[test]
fn settled_runs_judge_every_run_alike() {
    let restarts = |mut s: Scenario| {
        s.restart = true;
        s.rates.delay = Ratio::new(1, 4);
        s
    };
    // (variant, options, scenario, the least share of passing runs that must end early: a
    // corrected joiner whose lookup a busy member ignores waits out a long timeout, so most
    // corrected runs still have a joiner at the heal phase's end).
    type Case =
        (&'static str, &'static [(&'static str, &'static str)], fn(Scenario) -> Scenario, u32);
    // The heal phase starts with many late messages still in flight, sent from states that
    // are gone by the time they arrive.
    let late = |mut s: Scenario| {
        s.fault_phase = SimDuration::from_millis(120);
        s.rates.delay = Ratio::new(1, 2);
        s.rates.crash = Ratio::new(1, 20);
        s
    };
    let cases: [Case; 6] = [
        ("literal", &[("ids", "4")], |s| s, 2),
        ("original", &[("ids", "5"), ("failures", "3")], |s| s, 2),
        ("original", &[("ids", "5"), ("reuse", "true")], restarts, 2),
        ("corrected", &[("ids", "4-6")], |s| s, 10),
        ("original", &[("ids", "5"), ("failures", "3")], late, 2),
        ("corrected", &[("ids", "4")], late, 10),
    ];
    for (variant, opts, tweak, share) in cases {
        let run = |settle: &str, seed: u64| {
            let mut all = vec![("mode", "messages"), ("settle", settle)];
            all.extend_from_slice(opts);
            let runner = Chord.prepare(&spec(variant, &all, None)).unwrap();
            let scenario = tweak(runner.default_scenario());
            let mut features = Features::default();
            let report = runner.run(&scenario, &mut Decisions::random(seed), &mut features);
            (report, features.0)
        };
        let (mut passed, mut early) = (0, 0);
        for seed in 0..150 {
            let (settled, settled_features) = run("true", seed);
            let (full, full_features) = run("false", seed);
            let case = format!("{variant} {opts:?} seed {seed}");
            assert_eq!(settled.outcome, full.outcome, "{case}");
            assert_eq!(settled_features, full_features, "{case}: states reached");
            if full.outcome == Outcome::Pass {
                passed += 1;
                early += (settled.events < full.events) as u32;
            }
        }
        assert!(passed >= 30, "{variant} {opts:?}: {passed} of 150 runs passed");
        assert!(
            early * share >= passed,
            "{variant} {opts:?}: {early} of {passed} passing runs settled"
        );
    }
}
