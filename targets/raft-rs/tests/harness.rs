//! The harness itself: both versions elect a leader, grow the membership 3 -> 4 -> 5 and apply
//! client proposals when nothing goes wrong, runs replay bit for bit, bad options are refused by
//! name, and a random campaign still finds the 0.4.1 bug within a fixed budget while 0.4.2
//! passes the same budget (canary).

use weft_core::{
    derive_seed, Decisions, EventKind, NullObserver, Outcome, Recorder, RunSpec, Runner, Scenario,
    Target,
};
use weft_target_raft_rs::RaftRs;

fn runner(variant: &str, options: &[(&str, &str)]) -> Box<dyn Runner> {
    let spec = RunSpec {
        target: "raft-rs".into(),
        variant: variant.into(),
        options: options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        property: None,
    };
    RaftRs.prepare(&spec).expect("valid spec")
}

#[test]
fn every_version_grows_and_applies_proposals_without_faults() {
    for v in ["0.4.1", "0.4.2"] {
        let r = runner(v, &[("transfers", "0")]);
        let mut rec = Recorder::default();
        let report = r.run(&Scenario::calm(), &mut Decisions::random(7), &mut rec);
        assert_eq!(report.outcome, Outcome::Pass, "{v}");
        assert!(report.sometimes.iter().any(|p| p == "Grew"), "{v}: membership never reached 5");
        // Every node, the two that joined included, applies the same client values: most of
        // the 20 (raft drops a proposal made while no leader is known, e.g. before the first
        // election) and the heal-phase probes.
        let applied = |node: u32| -> Vec<String> {
            rec.events
                .iter()
                .filter(|e| e.kind == EventKind::Observe && e.node == Some(node))
                .filter(|e| e.summary.contains("kind: Value("))
                .map(|e| e.summary.clone())
                .collect()
        };
        let n0 = applied(0);
        let clients = n0.iter().filter(|s| !s.contains("Value(100")).count();
        assert!(clients >= 15, "{v}: n0 applied only {clients} of 20 client values");
        assert!(n0.len() > clients, "{v}: no heal-phase probe applied");
        for node in 1..5 {
            assert_eq!(applied(node), n0, "{v}: n{node} applied other values than n0");
        }
    }
}

#[test]
fn leader_transfers_move_leadership() {
    let r = runner("0.4.2", &[("transfers", "16")]);
    let mut rec = Recorder::default();
    let report = r.run(&Scenario::calm(), &mut Decisions::random(3), &mut rec);
    assert_eq!(report.outcome, Outcome::Pass);
    let leaders: Vec<u32> = rec
        .events
        .iter()
        .filter(|e| e.kind == EventKind::Observe && e.summary.starts_with("Leader"))
        .filter_map(|e| e.node)
        .collect();
    let timeout_now = rec.events.iter().filter(|e| e.summary.contains("MsgTimeoutNow")).count();
    assert!(timeout_now > 0, "no transfer reached MsgTimeoutNow");
    assert!(leaders.len() >= 3, "only {} leaders elected: {leaders:?}", leaders.len());
}

#[test]
fn replay_reproduces_the_trace_hash() {
    for v in ["0.4.1", "0.4.2"] {
        let r = runner(v, &[]);
        let sc = r.default_scenario();
        let mut first = Decisions::random(99);
        let a = r.run(&sc, &mut first, &mut NullObserver);
        let b = r.run(&sc, &mut Decisions::replay(first.into_log()), &mut NullObserver);
        assert_eq!(a, b, "{v}");
        assert!(a.events > 1000, "{v}: a run this short exercises nothing");
    }
}

#[test]
fn bad_options_are_rejected_by_name() {
    for (k, v) in [("initial", "0"), ("nodes", "2"), ("nodes", "10"), ("apply-lag", "-1")] {
        let spec = RunSpec {
            target: "raft-rs".into(),
            variant: "0.4.1".into(),
            options: [(k.to_string(), v.to_string())].into(),
            property: None,
        };
        let err = RaftRs.prepare(&spec).err().expect("rejected");
        assert!(err.to_string().contains(k), "{err}");
    }
}

/// The index of the first run, of `budget` random runs from `seed`, that violates a safety
/// property.
fn first_violation(variant: &str, seed: u64, budget: u64) -> Option<(u64, Outcome)> {
    let r = runner(variant, &[]);
    let sc = r.default_scenario();
    (0..budget).find_map(|i| {
        let o = r.run(&sc, &mut Decisions::random(derive_seed(seed, i)), &mut NullObserver).outcome;
        matches!(o, Outcome::SafetyViolation { .. }).then_some((i, o))
    })
}

/// Canary: with the target's defaults, plain random runs find the 0.4.1 bug (two leaders in a
/// term, or the divergent commits they cause) within this budget, and 0.4.2 passes the same
/// budget. If a change to the harness or kernel loses the bug, this fails.
#[test]
fn canary_random_runs_find_0_4_1_and_0_4_2_passes_the_same_budget() {
    const BUDGET: u64 = 4000;
    let found = first_violation("0.4.1", 1, BUDGET);
    let Some((_, outcome)) = &found else {
        panic!("0.4.1 violated no safety property within {BUDGET} runs");
    };
    let property = outcome.property().unwrap_or_default();
    assert!(["OneLeaderPerTerm", "CommittedKept"].contains(&property), "{outcome}");
    assert_eq!(first_violation("0.4.2", 1, BUDGET), None, "0.4.2 violated a property");
}

/// The simplest run is the quietest: with every decision 0, no client request is made (a
/// request's time 0 means "never"), every node's clock stands still through the fault phase
/// (a clock decision of 0), so nothing happens before the heal phase but the bootstrap
/// voters applying their bootstrap configuration; there the clocks
/// run at one tick per period, the first leader is elected, the membership stays at the three
/// bootstrap voters and the heal-phase probes are applied, so `Recovery` holds. Lowering a
/// clock decision never makes a clock fire more often (`clock_of` is monotone).
#[test]
fn the_all_zero_run_is_quiet_until_the_heal_phase_and_still_recovers() {
    use weft_target_raft_rs::node::{clock_of, CLOCK_CHOICES};
    let r = runner("0.4.1", &[]);
    let sc = r.default_scenario();
    let mut rec = Recorder::default();
    let report = r.run(&sc, &mut Decisions::replay(Vec::new()), &mut rec);
    assert_eq!(report.outcome, Outcome::Pass, "{}", report.outcome);
    let heal = weft_core::SimTime::ZERO + sc.fault_phase;
    let before: Vec<_> = rec
        .events
        .iter()
        .filter(|e| e.time < heal && !matches!(e.kind, EventKind::Start))
        // The bootstrap voters apply their bootstrap configuration (entries 1-3) at once.
        .filter(|e| !(e.kind == EventKind::Timer && e.summary == "timer 2"))
        .filter(|e| !(e.kind == EventKind::Observe && e.summary.contains("term: 1, kind: AddNode")))
        .map(|e| format!("{:?} {:?} {}", e.node, e.kind, e.summary))
        .collect();
    assert!(before.is_empty(), "the fault phase was not quiet: {before:?}");
    let probes = rec.events.iter().filter(|e| e.summary.contains("kind: Value(100")).count();
    assert!(probes > 0, "no heal-phase probe applied");
    let period = |v: u64| clock_of(v).map_or(u64::MAX, |n| n);
    for v in 1..CLOCK_CHOICES {
        assert!(period(v) <= period(v - 1), "value {v} ticks more often than {}", v - 1);
    }
    assert_eq!(clock_of(CLOCK_CHOICES - 1), Some(1), "the common value is one tick per period");
}
