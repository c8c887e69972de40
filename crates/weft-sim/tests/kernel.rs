//! Kernel behaviour through the public API: determinism, faults within budget, phases,
//! property modalities, crash/restart and target panics.

use weft_core::{
    Decisions, Modality, NullObserver, Outcome, Ratio, Recorder, Scenario, SimDuration, SimTime,
};
use weft_sim::{Ctx, Node, NodeId, Property, SimSpec, TimerId, View};

/// Each node pings the next one on a timer and counts what it receives.
#[derive(Default)]
struct Pinger {
    id: NodeId,
    received: u64,
    restarted: bool,
    panic_on: Option<u64>,
}

#[derive(Clone, Debug, Hash)]
struct Ping(u64);

impl Node for Pinger {
    type Msg = Ping;
    type Req = u64;
    type Obs = u64;
    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        ctx.set_timer(SimDuration::from_millis(5), 0);
    }
    fn on_message(&mut self, _from: NodeId, msg: Ping, ctx: &mut Ctx<'_, Self>) {
        self.received += 1;
        if Some(msg.0) == self.panic_on {
            panic!("boom at {}", msg.0);
        }
        ctx.observe(msg.0);
    }
    fn on_timer(&mut self, _t: TimerId, _tag: u64, ctx: &mut Ctx<'_, Self>) {
        let next = (self.id + 1) % ctx.nodes() as NodeId;
        ctx.send(next, Ping(ctx.now().as_nanos()));
        ctx.set_timer(SimDuration::from_millis(5), 0);
    }
    fn on_recover(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.restarted = true;
        self.on_start(ctx);
    }
    fn describe(&self) -> String {
        format!("received={}", self.received)
    }
}

fn spec(nodes: usize, properties: Vec<Property<Pinger>>) -> SimSpec<Pinger> {
    SimSpec {
        nodes,
        make: Box::new(|id| Pinger { id, ..Pinger::default() }),
        workload: Box::new(|_, _| Vec::new()),
        properties,
        assumptions: Vec::new(),
        crash_gate: None,
        focus: None,
    }
}

fn short() -> Scenario {
    Scenario {
        fault_phase: SimDuration::from_millis(300),
        heal_phase: SimDuration::from_millis(300),
        ..Scenario::default()
    }
}

#[test]
fn same_seed_same_trace_and_different_seed_different_trace() {
    let s = spec(4, Vec::new());
    let sc = short();
    let a = s.run(&sc, &mut Decisions::random(7), &mut NullObserver);
    let b = s.run(&sc, &mut Decisions::random(7), &mut NullObserver);
    let c = s.run(&sc, &mut Decisions::random(8), &mut NullObserver);
    assert_eq!(a, b);
    assert_ne!(a.trace_hash, c.trace_hash);
    assert!(a.events > 100, "{a:?}");
}

#[test]
fn recording_does_not_change_the_run() {
    let s = spec(3, Vec::new());
    let sc = short();
    let quiet = s.run(&sc, &mut Decisions::random(3), &mut NullObserver);
    let mut rec = Recorder::default();
    let loud = s.run(&sc, &mut Decisions::random(3), &mut rec);
    assert_eq!(quiet, loud);
    assert_eq!(rec.events.len() as u64, loud.events);
    assert_eq!(rec.events.last().unwrap().hash, loud.trace_hash);
    // Timeline order is time order.
    assert!(rec.events.windows(2).all(|w| w[0].time <= w[1].time));
}

#[test]
fn replaying_the_log_reproduces_the_run() {
    let s = spec(5, Vec::new());
    let sc = short();
    let mut d = Decisions::random(11);
    let first = s.run(&sc, &mut d, &mut NullObserver);
    let again = s.run(&sc, &mut Decisions::replay(d.into_log()), &mut NullObserver);
    assert_eq!(first, again);
}

#[test]
fn all_zero_decisions_mean_no_faults() {
    let s = spec(4, Vec::new());
    let r = s.run(&Scenario::default(), &mut Decisions::replay(Vec::new()), &mut NullObserver);
    assert_eq!(r.faults, 0);
    assert_eq!(r.outcome, Outcome::Pass);
}

#[test]
fn faults_stay_within_budget_and_stop_at_the_heal_phase() {
    let mut sc = short();
    sc.rates.crash = Ratio::new(1, 5);
    sc.rates.partition = Ratio::new(1, 5);
    sc.rates.drop = Ratio::new(1, 3);
    sc.budget.crashes = 2;
    sc.budget.partitions = 1;
    sc.budget.drops = 4;
    let s = spec(4, Vec::new());
    for seed in 0..20 {
        let mut rec = Recorder::default();
        s.run(&sc, &mut Decisions::random(seed), &mut rec);
        let count = |k: weft_core::EventKind| rec.events.iter().filter(|e| e.kind == k).count();
        assert!(count(weft_core::EventKind::Crash) <= 2);
        assert!(count(weft_core::EventKind::Partition) <= 1);
        let injected_drops = rec
            .events
            .iter()
            .filter(|e| e.kind == weft_core::EventKind::Drop && e.summary.ends_with("(dropped)"))
            .count();
        assert!(injected_drops <= 4, "{injected_drops}");
        let heal = SimTime::ZERO + sc.fault_phase;
        assert!(rec.events.iter().all(|e| !e.kind.is_fault()
            || e.time <= heal
            || e.kind == weft_core::EventKind::Drop && !e.summary.ends_with("(dropped)")));
    }
}

#[test]
fn crashed_nodes_restart_with_fresh_state_and_recover() {
    let mut sc = short();
    sc.rates.crash = Ratio::new(1, 10);
    sc.budget.crashes = 1;
    let s = spec(3, Vec::new());
    let mut saw_restart = false;
    for seed in 0..10 {
        let mut rec = Recorder::default();
        s.run(&sc, &mut Decisions::random(seed), &mut rec);
        let crash = rec.events.iter().position(|e| e.kind == weft_core::EventKind::Crash);
        if let Some(c) = crash {
            let node = rec.events[c].node;
            let restart = rec.events[c..]
                .iter()
                .find(|e| e.kind == weft_core::EventKind::Restart && e.node == node)
                .expect("scenario restarts crashed nodes");
            assert_eq!(restart.state.as_deref(), Some("received=0"));
            saw_restart = true;
        }
    }
    assert!(saw_restart);
}

fn never_three(v: &View<'_, Pinger>) -> Result<(), String> {
    match v.nodes().find(|(_, n)| n.is_some_and(|n| n.received >= 3)) {
        Some((id, _)) => Err(format!("n{id} received 3")),
        None => Ok(()),
    }
}

fn impossible(_: &View<'_, Pinger>) -> Result<(), String> {
    Err("never".into())
}

#[test]
fn always_properties_end_the_run_at_the_first_bad_state() {
    let s = spec(
        2,
        vec![Property { name: "NeverThree", modality: Modality::Always, check: never_three }],
    );
    let r = s.run(&Scenario::calm(), &mut Decisions::random(1), &mut NullObserver);
    match r.outcome {
        Outcome::SafetyViolation { property, .. } => assert_eq!(property, "NeverThree"),
        other => panic!("{other:?}"),
    }
    assert!(r.end_time < SimTime(100_000_000));
}

#[test]
fn focus_ignores_other_properties() {
    let mut s = spec(
        2,
        vec![
            Property { name: "NeverThree", modality: Modality::Always, check: never_three },
            Property { name: "Other", modality: Modality::Always, check: |_| Ok(()) },
        ],
    );
    s.focus = Some("Other".into());
    let r = s.run(&short(), &mut Decisions::random(1), &mut NullObserver);
    assert_eq!(r.outcome, Outcome::Pass);
}

#[test]
fn eventually_properties_fail_after_their_bound_and_sometimes_are_reported() {
    let s = spec(
        2,
        vec![
            Property { name: "Never", modality: Modality::Eventually, check: impossible },
            Property {
                name: "Three",
                modality: Modality::Sometimes,
                check: |v| never_three(v).err().map(|_| ()).ok_or_else(|| "not yet".to_string()),
            },
        ],
    );
    let r = s.run(&short(), &mut Decisions::random(1), &mut NullObserver);
    assert!(
        matches!(r.outcome, Outcome::LivenessViolation { ref property, .. } if property == "Never")
    );
    assert_eq!(r.sometimes, vec!["Three".to_string()]);
}

#[test]
fn assumptions_label_the_run_outside_the_model() {
    let mut s = spec(2, Vec::new());
    s.assumptions =
        vec![Property { name: "NoThree", modality: Modality::Always, check: never_three }];
    let r = s.run(&Scenario::calm(), &mut Decisions::random(1), &mut NullObserver);
    assert!(matches!(r.outcome, Outcome::OutsideModel { .. }), "{:?}", r.outcome);
    assert!(!r.outcome.is_failure());
}

#[test]
fn a_panicking_node_is_an_outcome_not_a_crash() {
    let s = SimSpec {
        make: Box::new(|id| Pinger { id, panic_on: Some(5_000_000), ..Pinger::default() }),
        ..spec(2, Vec::new())
    };
    let r = s.run(&Scenario::calm(), &mut Decisions::replay(Vec::new()), &mut NullObserver);
    match r.outcome {
        Outcome::TargetCrashed { detail } => {
            assert!(detail.contains("boom at 5000000"), "{detail}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_event_budget_is_an_outcome() {
    let sc = Scenario { max_events: 50, ..short() };
    let r = spec(3, Vec::new()).run(&sc, &mut Decisions::random(1), &mut NullObserver);
    assert!(matches!(r.outcome, Outcome::BudgetExhausted { .. }));
    assert!((50..60).contains(&r.events), "{}", r.events);
}

/// Observes each link that comes back.
struct LinkWatcher;
impl Node for LinkWatcher {
    type Msg = ();
    type Req = ();
    type Obs = String;
    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        ctx.set_timer(SimDuration::from_millis(1), 0);
    }
    fn on_message(&mut self, _: NodeId, _: (), _: &mut Ctx<'_, Self>) {}
    fn on_timer(&mut self, _: TimerId, _: u64, ctx: &mut Ctx<'_, Self>) {
        ctx.set_timer(SimDuration::from_millis(1), 0);
    }
    fn on_link_up(&mut self, peer: NodeId, ctx: &mut Ctx<'_, Self>) {
        ctx.observe(format!("n{} sees n{peer}", ctx.id()));
    }
    fn describe(&self) -> String {
        String::new()
    }
}

#[test]
fn both_ends_hear_when_a_partition_heals() {
    let mut sc = Scenario { rates: Scenario::calm().rates, ..short() };
    sc.rates.partition = Ratio::ONE;
    sc.budget.partitions = 1;
    let spec = SimSpec {
        nodes: 3,
        make: Box::new(|_| LinkWatcher),
        workload: Box::new(|_, _| Vec::new()),
        properties: Vec::new(),
        assumptions: Vec::new(),
        crash_gate: None,
        focus: None,
    };
    for seed in 0..10 {
        let mut rec = Recorder::default();
        spec.run(&sc, &mut Decisions::random(seed), &mut rec);
        let cut = rec.events.iter().find(|e| e.kind == weft_core::EventKind::Partition).unwrap();
        let ups: Vec<&str> = rec
            .events
            .iter()
            .filter(|e| e.kind == weft_core::EventKind::Observe)
            .map(|e| e.summary.as_str())
            .collect();
        // An isolation of one node reconnects it with both others; a one-way cut, one pair.
        let expect = if cut.peer.is_some() { 2 } else { 4 };
        assert_eq!(ups.len(), expect, "seed {seed}: {} then {ups:?}", cut.summary);
        let heal = rec.events.iter().position(|e| e.kind == weft_core::EventKind::Heal).unwrap();
        let first_up = rec.events.iter().position(|e| e.kind == weft_core::EventKind::Observe);
        assert!(first_up.unwrap() > heal);
    }
}
