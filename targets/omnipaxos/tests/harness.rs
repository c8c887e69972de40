//! The harness itself: every version elects a leader and decides client appends when nothing
//! goes wrong, runs replay bit for bit, and a campaign still finds the 0.2.0 bug within a fixed
//! budget while 0.2.3 passes the same budget (canary).

use weft_core::{
    derive_seed, Decisions, NullObserver, Outcome, Recorder, RunSpec, Runner, Scenario, Target,
};
use weft_target_omnipaxos::OmniPaxos;

fn runner(variant: &str, property: Option<&str>, options: &[(&str, &str)]) -> Box<dyn Runner> {
    let spec = RunSpec {
        target: "omnipaxos".into(),
        variant: variant.into(),
        options: options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        property: property.map(str::to_string),
    };
    OmniPaxos.prepare(&spec).expect("valid spec")
}

#[test]
fn every_version_decides_appends_without_faults() {
    for v in ["0.2.0", "0.2.1", "0.2.2", "0.2.3"] {
        let r = runner(v, None, &[("flaps", "0")]);
        let mut rec = Recorder::default();
        let report = r.run(&Scenario::calm(), &mut Decisions::random(1), &mut rec);
        assert_eq!(report.outcome, Outcome::Pass, "{v}");
        // All 20 client values and the probes are decided, at all three servers.
        let decided = rec.events.iter().filter(|e| e.summary.starts_with("Decided")).count();
        assert!(decided >= 3 * 20, "{v}: only {decided} decisions observed");
    }
}

#[test]
fn replay_reproduces_the_trace_hash() {
    for v in ["0.2.0", "0.2.3"] {
        let r = runner(v, None, &[]);
        let sc = r.default_scenario();
        let mut first = Decisions::random(99);
        let a = r.run(&sc, &mut first, &mut NullObserver);
        let b = r.run(&sc, &mut Decisions::replay(first.into_log()), &mut NullObserver);
        assert_eq!(a, b, "{v}");
        assert!(a.events > 100, "{v}: a run this short exercises nothing");
    }
}

#[test]
fn bad_options_are_rejected_by_name() {
    for (k, v) in [("loss", "often"), ("flap-max", "0ms"), ("appends", "-1")] {
        let spec = RunSpec {
            target: "omnipaxos".into(),
            variant: "0.2.0".into(),
            options: [(k.to_string(), v.to_string())].into(),
            property: None,
        };
        let err = OmniPaxos.prepare(&spec).err().expect("rejected");
        assert!(err.to_string().contains(k), "{err}");
    }
}

/// Runs `budget` seeded runs and returns the index of the first Agreement violation.
fn first_violation(variant: &str, seed: u64, budget: u64) -> Option<u64> {
    let r = runner(variant, Some("Agreement"), &[]);
    let sc = r.default_scenario();
    (0..budget).find(|&i| {
        let o = r.run(&sc, &mut Decisions::random(derive_seed(seed, i)), &mut NullObserver).outcome;
        o.property() == Some("Agreement")
    })
}

#[test]
fn canary_campaign_finds_0_2_0_and_0_2_3_passes_the_same_budget() {
    let found = first_violation("0.2.0", 2026, 40);
    assert!(found.is_some(), "0.2.0 no longer violates Agreement within 40 runs");
    assert_eq!(first_violation("0.2.3", 2026, 200), None, "0.2.3 violated Agreement");
}

/// Canary: a silent change of semantics (kernel, harness, decision layout) changes this run.
/// If the change is deliberate, update the numbers and say why in the commit.
#[test]
fn golden_run_is_pinned() {
    let r = runner("0.2.3", None, &[]);
    let report = r.run(&r.default_scenario(), &mut Decisions::random(1), &mut NullObserver);
    assert_eq!(
        (report.outcome.kind(), report.events, report.trace_hash),
        ("pass", 3715, 11037352513576168388),
        "golden run of omnipaxos 0.2.3, seed 1"
    );
}
