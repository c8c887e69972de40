//! Decisions addressed by site: a world's decisions carry their sites (link, fault opportunity,
//! node), a replay by site reproduces the run, and removing one fault leaves the others as
//! they were; with fault gaps, a fault costs a decision or two instead of one per opportunity.

use weft_core::{Decisions, EventKind, Ratio, Recorder, Scenario, SimDuration, Site, SiteKind};
use weft_sim::{Ctx, Node, NodeId, SimSpec, TimerId};

/// Each node pings the next one on a timer whose period is the node's own choice.
struct Pinger {
    id: NodeId,
}

#[derive(Clone, Debug, Hash)]
struct Ping;

impl Node for Pinger {
    type Msg = Ping;
    type Req = ();
    type Obs = ();
    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        let ms = 1 + ctx.choose_at(1, 10);
        ctx.set_timer(SimDuration::from_millis(ms), 0);
    }
    fn on_message(&mut self, _from: NodeId, _msg: Ping, _ctx: &mut Ctx<'_, Self>) {}
    fn on_timer(&mut self, _t: TimerId, _tag: u64, ctx: &mut Ctx<'_, Self>) {
        ctx.send((self.id + 1) % ctx.nodes() as NodeId, Ping);
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

fn scenario() -> Scenario {
    let mut s = Scenario::calm();
    s.fault_phase = SimDuration::from_millis(300);
    s.heal_phase = SimDuration::from_millis(100);
    s.rates.pause = Ratio::new(1, 40);
    s.rates.delay = Ratio::new(1, 10);
    s.budget.pauses = 3;
    s.outage_max = SimDuration::from_millis(50);
    s
}

/// The (victim, summary with the duration) of every pause in a recorded run.
fn pauses(d: &mut Decisions) -> Vec<(Option<u32>, String)> {
    let mut rec = Recorder::default();
    spec().run(&scenario(), d, &mut rec);
    rec.events
        .iter()
        .filter(|e| e.kind == EventKind::Pause)
        .map(|e| (e.node, e.summary.clone()))
        .collect()
}

#[test]
fn every_decision_of_a_world_is_addressed_and_replays_by_site() {
    let mut d = Decisions::random(5);
    let a = spec().run(&scenario(), &mut d, &mut Recorder::default());
    let kinds: std::collections::BTreeSet<_> = d.sites().iter().map(|s| s.kind()).collect();
    for k in [SiteKind::Latency, SiteKind::MessageFault, SiteKind::FaultKind, SiteKind::Node] {
        assert!(kinds.contains(&Some(k)), "no {k:?} site in {kinds:?}");
    }
    assert!(!kinds.contains(&Some(SiteKind::Anon)), "an unaddressed decision: {kinds:?}");
    let mut r = Decisions::replay_sited(d.log().to_vec(), Vec::new(), d.sites());
    let b = spec().run(&scenario(), &mut r, &mut Recorder::default());
    assert_eq!(a, b);
    assert_eq!(r.log(), d.log());
}

#[test]
fn removing_one_fault_leaves_the_other_faults_details_in_place() {
    // A seed whose run pauses at least twice.
    let (d, before) = (1..200)
        .map(|seed| {
            let mut d = Decisions::random(seed);
            let p = pauses(&mut d);
            (d, p)
        })
        .find(|(_, p)| p.len() >= 2)
        .expect("some seed pauses twice");
    // Zero the first fault's kind: its victim and duration are no longer drawn.
    let first =
        d.sites().iter().zip(d.log()).position(|(&s, &v)| s == Site::fault_kind() && v != 0);
    let mut values = d.log().to_vec();
    values[first.expect("a fault decision")] = 0;
    let mut by_site = Decisions::replay_sited(values.clone(), Vec::new(), d.sites());
    let after = pauses(&mut by_site);
    assert_eq!(after.len(), before.len() - 1, "{before:?} -> {after:?}");
    // The later pauses keep their victims and durations (drawn at their own sites), even
    // though the run around them changed.
    assert_eq!(after[..], before[1..], "the later pauses moved");
}

/// `Scenario::fault_gaps`: fault opportunities (and each link's message faults) drawn as
/// gaps. Over 300 random runs the fault count matches a draw per opportunity (the same rate);
/// every gap run replays exactly; a kind is drawn only for a fault, a gap only per fault
/// (plus one "never" per stream at most).
#[test]
fn gap_runs_have_the_same_fault_rate_replay_exactly_and_draw_per_fault() {
    let gapped = |gaps: bool| {
        let mut s = scenario();
        s.rates.drop = Ratio::new(1, 50);
        s.budget.drops = 20;
        s.budget.pauses = 20;
        s.fault_gaps = gaps;
        s
    };
    let (mut per_event, mut with_gaps) = (0, 0);
    for seed in 0..300 {
        per_event += spec()
            .run(&gapped(false), &mut Decisions::random(seed), &mut Recorder::default())
            .faults;
        let mut d = Decisions::random(seed);
        let r = spec().run(&gapped(true), &mut d, &mut Recorder::default());
        with_gaps += r.faults;
        let mut again = Decisions::replay(d.log().to_vec());
        assert_eq!(
            spec().run(&gapped(true), &mut again, &mut Recorder::default()),
            r,
            "seed {seed}"
        );
        let count = |k| d.sites().iter().filter(|s| s.kind() == Some(k)).count() as u64;
        assert!(count(SiteKind::FaultKind) <= r.faults, "seed {seed}: a kind only for a fault");
        // A gap per fault drawn (node faults; drops and delays on the links), plus at most
        // one "never" per stream: one for node faults and one per link (3 here).
        let drawn = count(SiteKind::FaultKind) + count(SiteKind::MessageFault);
        assert!(count(SiteKind::FaultGap) <= drawn + 4, "seed {seed}: gaps per fault");
    }
    let ratio = with_gaps as f64 / per_event as f64;
    assert!((0.85..1.15).contains(&ratio), "faults: {with_gaps} with gaps, {per_event} per event");
}
