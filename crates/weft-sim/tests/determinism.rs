//! A node that leaks process-global state into its behaviour changes the trace hash of one
//! seed, and `check_seed` (what `weft check-determinism` runs) catches it and names the first
//! event at which the two runs differ.

use std::sync::atomic::{AtomicU64, Ordering};
use weft_core::{Decisions, Observer, RunReport, Runner, Scenario, SimDuration, SimTime};
use weft_sim::{Ctx, Node, NodeId, SimSpec, TimerId};

static LEAK: AtomicU64 = AtomicU64::new(0);

struct Leaky;
impl Node for Leaky {
    type Msg = u64;
    type Req = ();
    type Obs = ();
    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        ctx.set_timer(SimDuration::from_millis(1), 0);
    }
    fn on_message(&mut self, _: NodeId, _: u64, _: &mut Ctx<'_, Self>) {}
    fn on_timer(&mut self, _: TimerId, _: u64, ctx: &mut Ctx<'_, Self>) {
        // Deterministic for 20 ms, then a counter shared by every run in the process.
        let payload =
            if ctx.now() > SimTime(20_000_000) { LEAK.fetch_add(1, Ordering::Relaxed) } else { 0 };
        ctx.send(1 - ctx.id(), payload);
        ctx.set_timer(SimDuration::from_millis(1), 0);
    }
    fn describe(&self) -> String {
        String::new()
    }
}

struct LeakyRunner(SimSpec<Leaky>);
impl Runner for LeakyRunner {
    fn default_scenario(&self) -> Scenario {
        Scenario {
            fault_phase: SimDuration::from_millis(50),
            heal_phase: SimDuration::from_millis(50),
            ..Scenario::calm()
        }
    }
    fn run(&self, s: &Scenario, d: &mut Decisions, o: &mut dyn Observer) -> RunReport {
        self.0.run(s, d, o)
    }
}

#[test]
fn a_deliberately_nondeterministic_node_is_caught_at_its_first_differing_event() {
    let runner = LeakyRunner(SimSpec {
        nodes: 2,
        make: Box::new(|_| Leaky),
        workload: Box::new(|_, _| Vec::new()),
        properties: Vec::new(),
        assumptions: Vec::new(),
        crash_gate: None,
        focus: None,
    });
    let scenario = runner.default_scenario();
    // The leak changes the trace hash itself, not only the recorded text.
    let a = runner.run(&scenario, &mut Decisions::random(42), &mut weft_core::NullObserver);
    let b = runner.run(&scenario, &mut Decisions::random(42), &mut weft_core::NullObserver);
    assert_ne!(a.trace_hash, b.trace_hash);
    let d = weft_explore::check_seed(&runner, &scenario, 42).expect("nondeterminism is caught");
    let first = d.first.clone().expect("both runs reach the differing event");
    let second = d.second.clone().expect("both runs reach the differing event");
    assert!(first.time > SimTime(20_000_000), "differs only after the leak starts: {first:?}");
    assert_eq!(first.kind, weft_core::EventKind::Send);
    assert_ne!(first.summary, second.summary);
    assert!(d.to_string().contains(&format!("first at event {}", d.index)));
    // How each run ended is said too (two runs can share a trace and still end apart).
    let ended = format!("first run ended: {} after {} events", a.outcome, a.events);
    assert!(d.to_string().contains(&ended), "{d}");
}
