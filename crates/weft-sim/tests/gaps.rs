//! `Scenario::fault_gaps`: fault opportunities drawn as gaps. A random run is distributed as
//! with a draw per opportunity (same fault rate), replays exactly, and costs a decision per
//! fault instead of one per opportunity.

use weft_core::{Decisions, NullObserver, Ratio, RunReport, Scenario, SimDuration, SiteKind};
use weft_sim::{Ctx, Node, NodeId, SimSpec, TimerId};

/// Each node pings the next one every 2 ms.
struct Pinger {
    id: NodeId,
}

impl Node for Pinger {
    type Msg = ();
    type Req = ();
    type Obs = ();
    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        ctx.set_timer(SimDuration::from_millis(2), 0);
    }
    fn on_message(&mut self, _from: NodeId, _msg: (), _ctx: &mut Ctx<'_, Self>) {}
    fn on_timer(&mut self, _t: TimerId, _tag: u64, ctx: &mut Ctx<'_, Self>) {
        ctx.send((self.id + 1) % ctx.nodes() as NodeId, ());
        self.on_start(ctx);
    }
    fn describe(&self) -> String {
        String::new()
    }
}

fn spec() -> SimSpec<Pinger> {
    SimSpec {
        nodes: 3,
        make: Box::new(|id| Pinger { id }),
        workload: Box::new(|_, _| Vec::new()),
        properties: Vec::new(),
        assumptions: Vec::new(),
        crash_gate: None,
        focus: None,
    }
}

fn scenario(gaps: bool) -> Scenario {
    let mut s = Scenario::calm();
    s.fault_phase = SimDuration::from_millis(200);
    s.heal_phase = SimDuration::from_millis(20);
    s.rates.pause = Ratio::new(1, 200);
    s.rates.drop = Ratio::new(1, 50);
    s.budget.pauses = 20;
    s.budget.drops = 20;
    s.outage_max = SimDuration::from_millis(5);
    s.fault_gaps = gaps;
    s
}

fn run(gaps: bool, seed: u64) -> (RunReport, Decisions) {
    let mut d = Decisions::random(seed);
    let r = spec().run(&scenario(gaps), &mut d, &mut NullObserver);
    (r, d)
}

#[test]
fn gap_runs_have_the_same_fault_rate_replay_exactly_and_draw_per_fault() {
    let (mut per_event, mut gapped) = (0, 0);
    for seed in 0..300 {
        per_event += run(false, seed).0.faults;
        let (r, d) = run(true, seed);
        gapped += r.faults;
        let again = spec().run(
            &scenario(true),
            &mut Decisions::replay(d.log().to_vec()),
            &mut NullObserver,
        );
        assert_eq!(again, r, "seed {seed}: a gap run replays");
        let gaps = d.sites().iter().filter(|s| s.kind() == Some(SiteKind::FaultGap)).count();
        let opportunities =
            d.sites().iter().filter(|s| s.kind() == Some(SiteKind::FaultKind)).count();
        assert!(opportunities as u64 <= r.faults, "seed {seed}: a kind is drawn only for a fault");
        assert!(gaps as u64 <= r.faults + 4, "seed {seed}: {gaps} gaps for {} faults", r.faults);
    }
    // The same rate: 300 runs of ~400 opportunities at 1/200 plus ~300 messages at 1/50.
    let ratio = gapped as f64 / per_event as f64;
    assert!((0.85..1.15).contains(&ratio), "faults: {gapped} with gaps, {per_event} per event");
}
