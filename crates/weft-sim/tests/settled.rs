//! `Node::settled`: a passing run ends once the target says nothing left can change a
//! property — but only in the heal phase, only once every counted `eventually` property has
//! been met, and only while nothing but timers and messages is queued.

use weft_core::{Decisions, Modality, NullObserver, RunReport, Scenario, SimDuration, SimTime};
use weft_sim::{Ctx, Node, NodeId, Property, SimSpec, TimerId, View};

/// Pings the next node every millisecond and counts what it receives. Its claim: the world is
/// settled once every node has received `settle_after` pings (0: never settled).
struct Counter {
    id: NodeId,
    got: u64,
    settle_after: u64,
}

impl Node for Counter {
    type Msg = ();
    type Req = ();
    type Obs = ();
    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        ctx.set_timer(SimDuration::from_millis(1), 0);
    }
    fn on_message(&mut self, _from: NodeId, _msg: (), _ctx: &mut Ctx<'_, Self>) {
        self.got += 1;
    }
    fn on_timer(&mut self, _t: TimerId, _tag: u64, ctx: &mut Ctx<'_, Self>) {
        ctx.send((self.id + 1) % ctx.nodes() as NodeId, ());
        self.on_start(ctx);
    }
    fn on_request(&mut self, _req: (), _ctx: &mut Ctx<'_, Self>) {}
    fn describe(&self) -> String {
        format!("got {}", self.got)
    }
    fn settled(view: &View<'_, Self>) -> bool {
        view.nodes().all(|(_, n)| n.is_some_and(|n| n.settle_after > 0 && n.got >= n.settle_after))
    }
}

/// Node 0 has received at least 400 pings (well into the heal phase).
fn busy_enough(view: &View<'_, Counter>) -> Result<(), String> {
    match view.node(0) {
        Some(n) if n.got >= 400 => Ok(()),
        _ => Err("fewer than 400 pings".into()),
    }
}

fn spec(settle_after: u64, eventually: bool, request_at: Option<SimTime>) -> SimSpec<Counter> {
    let properties = if eventually {
        vec![Property { name: "BusyEnough", modality: Modality::Eventually, check: busy_enough }]
    } else {
        Vec::new()
    };
    SimSpec {
        nodes: 3,
        make: Box::new(move |id| Counter { id, got: 0, settle_after }),
        workload: Box::new(move |_, _| request_at.map(|t| (t, 0, ())).into_iter().collect()),
        properties,
        assumptions: Vec::new(),
        crash_gate: None,
        focus: None,
    }
}

fn scenario() -> Scenario {
    let mut s = Scenario::calm();
    s.fault_phase = SimDuration::from_millis(200);
    s.heal_phase = SimDuration::from_millis(800);
    s
}

fn run(spec: SimSpec<Counter>) -> RunReport {
    spec.run(&scenario(), &mut Decisions::random(3), &mut NullObserver)
}

fn ms(n: u64) -> SimTime {
    SimTime::ZERO + SimDuration::from_millis(n)
}

#[test]
fn a_settled_run_ends_early_but_never_before_the_heal_phase() {
    let full = run(spec(0, false, None));
    // Settled from the 10th ping on, but the heal phase starts at 200 ms.
    let settled = run(spec(10, false, None));
    assert_eq!(full.outcome, settled.outcome);
    assert!(settled.events < full.events / 3, "{} of {} events", settled.events, full.events);
    assert!(settled.end_time >= ms(200) && settled.end_time < ms(220), "{:?}", settled.end_time);
}

#[test]
fn an_unmet_eventually_property_keeps_a_settled_run_going() {
    let settled = run(spec(10, true, None));
    assert_eq!(settled.outcome, weft_core::Outcome::Pass);
    // 400 pings at about one per millisecond: the run went on until BusyEnough was met.
    assert!(settled.end_time >= ms(390), "ended at {:?}", settled.end_time);
    assert!(settled.end_time < ms(1000), "ran the heal phase out: {:?}", settled.end_time);
}

#[test]
fn a_request_still_to_come_keeps_a_settled_run_going() {
    let settled = run(spec(10, false, Some(ms(600))));
    assert!(settled.end_time >= ms(600), "ended at {:?}", settled.end_time);
    assert!(settled.end_time < ms(1000), "ran the heal phase out: {:?}", settled.end_time);
}
