//! The target interface: configuration, determinism, observer contract, and the exhaustive
//! search over the corrected protocol (the canary state counts are pinned: a change in them
//! is a change of semantics and must be explained).

use weft_core::{Decisions, Flow, NullObserver, Observer, Outcome, Recorder, Target};
use weft_target_chord::exhaustive;
use weft_target_chord::props::{self, Property};
use weft_target_chord::{spec, Chord, Config};

#[test]
fn info_names_variants_options_and_properties() {
    let info = Chord.info();
    assert_eq!(info.name, "chord");
    let variants: Vec<&str> = info.variants.iter().map(|v| v.name).collect();
    assert_eq!(variants, ["original", "literal", "corrected"]);
    for o in ["mode", "r", "ids", "steps", "failures", "reuse", "fused", "initial", "gate", "swarm"]
    {
        assert!(info.options.iter().any(|x| x.name == o), "option {o}");
    }
    for p in [
        "AtLeastOneRing",
        "AtMostOneRing",
        "OrderedRing",
        "ConnectedAppendages",
        "OrderedAppendages",
        "OrderedMerges",
        "ValidSuccessorList",
        "OneLiveSuccessor",
        "SufficientPrincipals",
        "OrderedSuccessorLists",
        "NoDuplicates",
        "EventuallyIdeal",
    ] {
        assert!(info.properties.iter().any(|x| x.name == p), "property {p}");
    }
}

#[test]
fn bad_specs_are_rejected() {
    for (variant, opts) in [
        ("nope", vec![]),
        ("original", vec![("ids", "9")]),
        ("original", vec![("ids", "2")]),
        ("original", vec![("r", "0")]),
        ("original", vec![("ids", "6-4")]),
        ("corrected", vec![("fused", "true")]),
        ("original", vec![("gate", "sometimes")]),
        ("original", vec![("colour", "blue")]),
    ] {
        assert!(Chord.prepare(&spec(variant, &opts, None)).is_err(), "{variant} {opts:?}");
    }
    assert!(Chord.prepare(&spec("original", &[], Some("NoSuchProperty"))).is_err());
    let c = Config::from_spec(&spec("corrected", &[("ids", "4-6")], None)).unwrap();
    assert_eq!((c.ids_min, c.ids_max, c.initial), (4, 6, 3));
}

fn run(
    variant: &str,
    opts: &[(&str, &str)],
    seed: u64,
    obs: &mut dyn Observer,
) -> weft_core::RunReport {
    let runner = Chord.prepare(&spec(variant, opts, None)).unwrap();
    runner.run(&runner.default_scenario(), &mut Decisions::random(seed), obs)
}

#[test]
fn runs_are_deterministic_and_observers_do_not_change_them() {
    for variant in ["literal", "original", "corrected"] {
        for seed in 0..50 {
            let a = run(variant, &[("ids", "4-6")], seed, &mut NullObserver);
            let mut rec = Recorder::default();
            let b = run(variant, &[("ids", "4-6")], seed, &mut rec);
            assert_eq!(a, b, "{variant} seed {seed}");
            assert_eq!(rec.events.len() as u64, b.events);
            if let Some(last) = rec.events.last() {
                assert_eq!(last.hash, b.trace_hash);
            }
            // Replaying the logged decisions reproduces the run.
            let runner = Chord.prepare(&spec(variant, &[("ids", "4-6")], None)).unwrap();
            let mut d = Decisions::random(seed);
            let first = runner.run(&runner.default_scenario(), &mut d, &mut NullObserver);
            let mut replay = Decisions::replay(d.into_log());
            let again = runner.run(&runner.default_scenario(), &mut replay, &mut NullObserver);
            assert_eq!(first, again);
        }
    }
}

#[test]
fn all_zero_decisions_mean_no_churn() {
    // Decision 0 is always a maintenance step: node 0 alone stays alone and healthy.
    let runner = Chord.prepare(&spec("original", &[], None)).unwrap();
    let mut rec = Recorder::default();
    let report = runner.run(&runner.default_scenario(), &mut Decisions::replay(vec![]), &mut rec);
    assert_eq!(report.outcome, Outcome::Pass);
    assert!(rec
        .events
        .iter()
        .all(|e| !e.summary.starts_with("Join") && !e.summary.starts_with("Fail")));
}

struct StopAt(u32, u32);
impl Observer for StopAt {
    fn checkpoint(&mut self, _state: u64) -> Flow {
        self.1 += 1;
        if self.1 >= self.0 {
            Flow::Stop
        } else {
            Flow::Continue
        }
    }
}

#[test]
fn checkpoint_stop_ends_the_run_with_pass() {
    let mut stop = StopAt(3, 0);
    let report = run("literal", &[("ids", "4")], 13, &mut stop);
    assert_eq!(report.outcome, Outcome::Pass);
    assert_eq!(report.events, 2);
}

#[test]
fn corrected_exhaustive_4_and_5_ids_no_violation() {
    // Canary state counts: pinned, so a change of semantics is noticed.
    for (ids, states) in [(4u8, 358u64), (5, 19_919)] {
        let ids_text = ids.to_string();
        let c = Config::from_spec(&spec("corrected", &[("ids", &ids_text)], None)).unwrap();
        let initials = exhaustive::initial_states(&c.rules, c.initial);
        let claimed = props::ALL
            .iter()
            .filter(|p| !p.transient_by_nature() && **p != Property::EventuallyIdeal)
            .fold(0, |m, p| m | p.bit());
        let report = exhaustive::search(&c.rules, &initials, claimed, true, 1_000_000);
        println!(
            "corrected ids={ids}: {} states, {} transitions",
            report.states, report.transitions
        );
        assert!(report.complete);
        assert_eq!(report.states, states, "ids={ids}");
        assert!(report.shortest.is_empty(), "{:?}", report.shortest);
        assert!(report.not_healing.is_none());
    }
}

#[test]
fn corrected_ablation_without_principal_gate_breaks_the_invariant() {
    let c = Config::from_spec(&spec("corrected", &[("ids", "5"), ("gate", "successor")], None))
        .unwrap();
    let initials = exhaustive::initial_states(&c.rules, c.initial);
    let report = exhaustive::search(
        &c.rules,
        &initials,
        Property::SufficientPrincipals.bit(),
        false,
        1_000_000,
    );
    assert_eq!(report.shortest_for(Property::SufficientPrincipals).map(|p| p.len()), Some(1));
}

#[test]
fn original_exhaustive_shortest_ordered_merges_is_5_steps() {
    // §3.8: OrderedMerges in 5 events with no failure. A bounded search suffices.
    let c = Config::from_spec(&spec("original", &[("ids", "4")], None)).unwrap();
    let report = exhaustive::search(
        &c.rules,
        &exhaustive::initial_states(&c.rules, 1),
        Property::OrderedMerges.bit(),
        false,
        200_000,
    );
    assert_eq!(report.shortest_for(Property::OrderedMerges).map(|p| p.len()), Some(5));
}
