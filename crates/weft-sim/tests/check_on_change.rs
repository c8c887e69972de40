//! `Node::CHECK_ON_CHANGE`: properties run only after events that may change what they read
//! (an observation, a signalled change, start/crash/restart, the heal phase), and a change a
//! node does not signal is, as documented, not seen.

use std::sync::atomic::{AtomicU64, Ordering};
use weft_core::{Decisions, Modality, NullObserver, Outcome, Scenario, SimDuration};
use weft_sim::{Ctx, Node, NodeId, Property, SimSpec, TimerId, View};

/// Counts timer ticks; observes (or signals) only every tenth.
struct Ticker {
    ticks: u64,
    signal: bool,
}

impl Node for Ticker {
    type Msg = ();
    type Req = ();
    type Obs = u64;
    const CHECK_ON_CHANGE: bool = true;
    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        ctx.set_timer(SimDuration::from_millis(1), 0);
    }
    fn on_message(&mut self, _: NodeId, _: (), _: &mut Ctx<'_, Self>) {}
    fn on_timer(&mut self, _: TimerId, _: u64, ctx: &mut Ctx<'_, Self>) {
        self.ticks += 1;
        if self.ticks.is_multiple_of(10) {
            ctx.observe(self.ticks);
        } else if self.signal && self.ticks == 25 {
            ctx.changed();
        }
        ctx.set_timer(SimDuration::from_millis(1), 0);
    }
    fn describe(&self) -> String {
        format!("ticks={}", self.ticks)
    }
}

static EVALUATIONS: AtomicU64 = AtomicU64::new(0);

fn counted(_: &View<'_, Ticker>) -> Result<(), String> {
    EVALUATIONS.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

/// Fails at exactly 25 ticks: seen only if the node signals that change.
fn not_25(v: &View<'_, Ticker>) -> Result<(), String> {
    match v.node(0) {
        Some(t) if t.ticks == 25 => Err("25 ticks".into()),
        _ => Ok(()),
    }
}

fn run(signal: bool, check: weft_sim::Check<Ticker>) -> Outcome {
    let spec = SimSpec {
        nodes: 1,
        make: Box::new(move |_| Ticker { ticks: 0, signal }),
        workload: Box::new(|_, _| Vec::new()),
        properties: vec![Property { name: "P", modality: Modality::Always, check }],
        assumptions: Vec::new(),
        crash_gate: None,
        focus: None,
    };
    let sc = Scenario {
        fault_phase: SimDuration::from_millis(100),
        heal_phase: SimDuration::from_millis(100),
        ..Scenario::calm()
    };
    spec.run(&sc, &mut Decisions::random(1), &mut NullObserver).outcome
}

#[test]
fn properties_run_after_observations_and_signals_only() {
    EVALUATIONS.store(0, Ordering::Relaxed);
    assert_eq!(run(false, counted), Outcome::Pass);
    let n = EVALUATIONS.load(Ordering::Relaxed);
    // 200 ticks: 20 observations, plus the start and the heal phase; not one per tick.
    assert!((20..=24).contains(&n), "{n} evaluations");
    assert!(matches!(run(true, not_25), Outcome::SafetyViolation { .. }));
    assert_eq!(run(false, not_25), Outcome::Pass, "an unsignalled change is not seen");
}
