//! The in-process world: nodes that implement [`Node`], an event queue in simulated time, the
//! network and fault models, and the property checks — one deterministic run per call of
//! [`SimSpec::run`].

use crate::disk::{Disk, DiskFaultCounts};
use crate::faults::{self, Fault, FaultCounts};
use crate::net::{Fate, Network};
use crate::storage::{CrashPoint, DiskIo};
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fmt::Debug;
use std::hash::Hash;
use std::panic::{catch_unwind, AssertUnwindSafe};
use weft_core::{
    stable_hash, Decisions, Event, EventKind, Modality, Observer, Outcome, RunReport, Scenario,
    SimDuration, SimTime, Site, TraceHasher,
};

pub type NodeId = u32;

/// Identifies a timer set by a node (unique within a run).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimerId(pub u64);

/// A sans-IO node: it reacts to events and pushes effects through its [`Ctx`]. It never does
/// IO, reads a clock or draws randomness except through `Ctx`.
pub trait Node: Sized + 'static {
    /// Messages between nodes.
    type Msg: Clone + Hash + Debug;
    /// Workload inputs: client requests and admin operations (membership change, leader
    /// transfer…), scheduled by the spec's workload.
    type Req: Clone + Hash + Debug;
    /// What a node reports to the outside world (client replies, commits, applied entries);
    /// recorded in the run's history for properties and linearizability checks.
    type Obs: Clone + Debug;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>);
    fn on_message(&mut self, from: NodeId, msg: Self::Msg, ctx: &mut Ctx<'_, Self>);
    /// A timer set with [`Ctx::set_timer`] fired; `tag` is what was passed there. Internal steps
    /// that may lag (an "apply" behind "commit") are timers too: their firing order against
    /// other events is a decision.
    fn on_timer(&mut self, timer: TimerId, tag: u64, ctx: &mut Ctx<'_, Self>);
    fn on_request(&mut self, _req: Self::Req, _ctx: &mut Ctx<'_, Self>) {}
    /// The link with `peer` is usable in both directions again after a partition (like a
    /// reconnected session; libraries such as omnipaxos need to hear of it). Called on both
    /// ends, only while the node is up.
    fn on_link_up(&mut self, _peer: NodeId, _ctx: &mut Ctx<'_, Self>) {}
    /// Called on a node rebuilt by the factory after a crash (its volatile state is gone).
    fn on_recover(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.on_start(ctx)
    }
    /// One line for traces and diagrams.
    fn describe(&self) -> String;
    /// A cheap abstract-state hash for coverage-guided search (0: none).
    fn feature(&self) -> u64 {
        0
    }
    /// An abstract state of the whole world (Chord's ring shape), reported as a coverage
    /// feature after every event (0: none). A node's own state misses what only the
    /// combination of nodes shows: two rings are two nodes' successor pointers together.
    fn world_feature(_view: &View<'_, Self>) -> u64 {
        0
    }
    /// When true, properties are evaluated only after an event that may have changed what
    /// they read: an observation ([`Ctx::observe`]), a state change a node signals with
    /// [`Ctx::changed`], a node's start, crash or restart, or the heal phase. Properties that
    /// read node state must then have the node call `ctx.changed()` when that state changes;
    /// properties over messages in flight should leave it false. Default false: after every
    /// event. (A linearizability check over the history after every event made a 2,000-run
    /// campaign ten times slower.)
    const CHECK_ON_CHANGE: bool = false;
}

enum Effect<N: Node> {
    Send { to: NodeId, msg: N::Msg },
    Timer { id: TimerId, after: SimDuration, tag: u64 },
    Cancel(TimerId),
    Observe(N::Obs),
}

/// A node's handle to the world during one handler call.
pub struct Ctx<'a, N: Node> {
    id: NodeId,
    now: SimTime,
    nodes: usize,
    next_timer: &'a mut u64,
    outbox: &'a mut Vec<Effect<N>>,
    decisions: &'a mut Decisions,
    disk: &'a mut Disk,
    scenario: &'a Scenario,
    counts: &'a mut FaultCounts,
    disk_counts: &'a mut DiskFaultCounts,
    faulty: bool,
    changed: &'a mut bool,
}

impl<N: Node> Ctx<'_, N> {
    /// This node's state changed in a way properties read (see [`Node::CHECK_ON_CHANGE`]).
    pub fn changed(&mut self) {
        *self.changed = true;
    }
    pub fn id(&self) -> NodeId {
        self.id
    }
    pub fn now(&self) -> SimTime {
        self.now
    }
    /// Number of nodes in the world (ids are `0..nodes`).
    pub fn nodes(&self) -> usize {
        self.nodes
    }
    pub fn send(&mut self, to: NodeId, msg: N::Msg) {
        assert!((to as usize) < self.nodes, "send to unknown node {to}");
        self.outbox.push(Effect::Send { to, msg });
    }
    pub fn set_timer(&mut self, after: SimDuration, tag: u64) -> TimerId {
        let id = TimerId(*self.next_timer);
        *self.next_timer += 1;
        self.outbox.push(Effect::Timer { id, after, tag });
        id
    }
    pub fn cancel_timer(&mut self, id: TimerId) {
        self.outbox.push(Effect::Cancel(id));
    }
    pub fn observe(&mut self, obs: N::Obs) {
        self.outbox.push(Effect::Observe(obs));
    }
    /// A node-level nondeterministic choice (e.g. a randomised election timeout), drawn from the
    /// run's decision source so it replays and shrinks. 0 should be the simplest value.
    pub fn choose(&mut self, n: u64) -> u64 {
        self.decisions.choose(n)
    }
    /// Like [`Ctx::choose`], addressed to this node's decision stream `stream` (e.g. one per
    /// timer), so a shrinker that edits one stream leaves the node's other streams alone.
    /// Stream 0 is the node's default stream, which [`Ctx::choose`] draws from.
    pub fn choose_at(&mut self, stream: u32, n: u64) -> u64 {
        self.decisions.at(weft_core::Site::node(self.id, stream)).choose(n)
    }
    /// Whether faults may still be injected ([`Phase::Fault`]) or have stopped.
    pub fn phase(&self) -> Phase {
        if self.faulty {
            Phase::Fault
        } else {
            Phase::Heal
        }
    }
    /// A node-level random choice the protocol's *liveness* relies on (a randomised election
    /// timeout, a backoff). In the fault phase it is a decision like [`Ctx::choose`], so the
    /// search may pick any value, adversarial ones included. In the heal phase it is a
    /// pseudo-random value derived from the node, the time and `salt`, which the search does not
    /// control: an adversary that picks every timeout can keep any randomised protocol from
    /// electing a leader forever, which `eventually` properties would report as a liveness
    /// violation that is not a bug. Deterministic: the same run draws the same values.
    pub fn fair_choose(&mut self, n: u64, salt: u64) -> u64 {
        if self.faulty {
            return self.decisions.choose(n);
        }
        assert!(n > 0, "fair_choose(0): no alternatives");
        let mut h = weft_core::StableHasher::with_seed(0x6661_6972);
        h.add(self.id as u64);
        h.add(self.now.0);
        h.add(salt);
        std::hash::Hasher::finish(&h) % n
    }
    /// This node's disk. It survives crashes in the state the scenario's persistence contract
    /// allows; every mutating call is a possible crash point.
    pub fn disk(&mut self) -> DiskIo<'_> {
        DiskIo {
            disk: self.disk,
            scenario: self.scenario,
            counts: self.counts,
            disk_counts: self.disk_counts,
            faulty: self.faulty,
            decisions: self.decisions,
        }
    }
}

/// One entry of the run's history.
#[derive(Clone, Debug)]
pub struct Observation<O> {
    pub time: SimTime,
    pub node: NodeId,
    pub obs: O,
}

/// Whether faults may still be injected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Fault,
    Heal,
}

/// What properties, assumptions and gates see: ground truth of the world at one instant.
pub struct View<'a, N: Node> {
    pub now: SimTime,
    pub phase: Phase,
    slots: &'a [Slot<N>],
    queue: &'a BinaryHeap<Queued<N>>,
    history: &'a [Observation<N::Obs>],
}

impl<'a, N: Node> View<'a, N> {
    pub fn len(&self) -> usize {
        self.slots.len()
    }
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
    /// The node's state, or None while it is crashed.
    pub fn node(&self, id: NodeId) -> Option<&'a N> {
        self.slots[id as usize].node.as_ref()
    }
    pub fn is_up(&self, id: NodeId) -> bool {
        self.slots[id as usize].node.is_some()
    }
    pub fn nodes(&self) -> impl Iterator<Item = (NodeId, Option<&'a N>)> + 'a {
        self.slots.iter().enumerate().map(|(i, s)| (i as NodeId, s.node.as_ref()))
    }
    /// Messages sent and not yet delivered or lost: `(from, to, msg)`, in no particular (but
    /// deterministic) order.
    pub fn in_flight(&self) -> impl Iterator<Item = (NodeId, NodeId, &'a N::Msg)> + 'a {
        self.queue.iter().filter_map(|q| match &q.ev {
            Ev::Deliver { from, to, msg, .. } => Some((*from, *to, msg)),
            _ => None,
        })
    }
    pub fn history(&self) -> &'a [Observation<N::Obs>] {
        self.history
    }
}

/// A named check over the world. `Err(detail)` means it does not hold.
pub struct Property<N: Node> {
    pub name: &'static str,
    pub modality: Modality,
    pub check: Check<N>,
}

/// Builds the workload (client requests, admin operations) of one run, drawing its shape from
/// decisions so the shrinker can simplify it.
pub type Workload<N> = Box<
    dyn Fn(&mut Decisions, &Scenario) -> Vec<(SimTime, NodeId, <N as Node>::Req)> + Send + Sync,
>;

/// A workload of `count` requests to `node`, one per equal slot of the fault phase, each at a
/// jitter of whole milliseconds within its slot drawn from the decisions (0 = the slot's start).
/// `request(i)` builds the `i`-th request (0-based).
pub fn spread_over_fault_phase<N: Node>(
    count: u64,
    node: NodeId,
    request: impl Fn(u64) -> N::Req + Send + Sync + 'static,
) -> Workload<N> {
    Box::new(move |d: &mut Decisions, sc: &Scenario| {
        let slot = sc.fault_phase.as_nanos() / count.max(1);
        (0..count)
            .map(|i| {
                let jitter = d.choose(slot / 1_000_000 + 1) * 1_000_000;
                (SimTime(i * slot + jitter), node, request(i))
            })
            .collect()
    })
}

/// A property's check: `Err(detail)` when it does not hold.
pub type Check<N> = fn(&View<'_, N>) -> Result<(), String>;

/// A prepared in-process target: a world and the scenario its campaigns use by default. Targets
/// return it from `Target::prepare` instead of writing their own `Runner`.
pub struct SimRunner<N: Node> {
    pub sim: SimSpec<N>,
    pub scenario: Scenario,
}

impl<N: Node> weft_core::Runner for SimRunner<N> {
    fn default_scenario(&self) -> Scenario {
        self.scenario.clone()
    }

    fn run(
        &self,
        scenario: &Scenario,
        decisions: &mut Decisions,
        obs: &mut dyn Observer,
    ) -> RunReport {
        self.sim.run(scenario, decisions, obs)
    }
}

/// Everything that defines a world, independent of the run's decisions.
pub struct SimSpec<N: Node> {
    pub nodes: usize,
    /// Builds node `id` at start and again after every restart.
    pub make: Box<dyn Fn(NodeId) -> N + Send + Sync>,
    pub workload: Workload<N>,
    pub properties: Vec<Property<N>>,
    /// The model's assumptions: a failing one ends the run as [`Outcome::OutsideModel`].
    pub assumptions: Vec<Property<N>>,
    /// May this node crash now? (None: any live node may.)
    pub crash_gate: Option<fn(&View<'_, N>, NodeId) -> bool>,
    /// Only this property counts as a violation (the others are still evaluated for
    /// `sometimes` bookkeeping).
    pub focus: Option<String>,
}

struct Slot<N: Node> {
    node: Option<N>,
    disk: Disk,
    incarnation: u32,
    paused_until: SimTime,
    /// Timers cancelled but still queued (tiny: nodes cancel few timers at once).
    cancelled: Vec<TimerId>,
}

enum Ev<N: Node> {
    Start { node: NodeId },
    Deliver { from: NodeId, to: NodeId, msg: N::Msg, id: u64 },
    Timer { node: NodeId, incarnation: u32, id: TimerId, tag: u64 },
    Request { node: NodeId, req: N::Req },
    Restart { node: NodeId, incarnation: u32 },
    Resume { node: NodeId },
    Reconnect { from: NodeId, to: NodeId },
    Rejoin { node: NodeId },
    Unsplit { side: Vec<NodeId>, rest: Vec<NodeId> },
    HealPhase,
}

struct Queued<N: Node> {
    time: SimTime,
    seq: u64,
    ev: Ev<N>,
}

impl<N: Node> PartialEq for Queued<N> {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl<N: Node> Eq for Queued<N> {}
impl<N: Node> PartialOrd for Queued<N> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
/// Earliest time first; ties broken by insertion order (deterministic).
impl<N: Node> Ord for Queued<N> {
    fn cmp(&self, o: &Self) -> Ordering {
        o.time.cmp(&self.time).then(o.seq.cmp(&self.seq))
    }
}

struct World<'s, N: Node> {
    spec: &'s SimSpec<N>,
    scenario: &'s Scenario,
    now: SimTime,
    phase: Phase,
    slots: Vec<Slot<N>>,
    queue: BinaryHeap<Queued<N>>,
    seq: u64,
    next_timer: u64,
    next_msg: u64,
    net: Network,
    counts: FaultCounts,
    disk_counts: DiskFaultCounts,
    /// Replay under another contract: every crash state is checked against it.
    audit: Option<weft_core::Contract>,
    /// Set when an audited crash state is not reachable under the audit contract.
    unreachable: Option<String>,
    history: Vec<Observation<N::Obs>>,
    trace: TraceHasher,
    outbox: Vec<Effect<N>>,
    sometimes: Vec<bool>,
    eventually_met: Vec<bool>,
    /// Something properties read may have changed since they were last evaluated.
    changed: bool,
}

impl<N: Node> SimSpec<N> {
    /// Runs the world once. A pure function of (self, scenario, decisions).
    pub fn run(
        &self,
        scenario: &Scenario,
        decisions: &mut Decisions,
        obs: &mut dyn Observer,
    ) -> RunReport {
        let mut w = World {
            spec: self,
            scenario,
            now: SimTime::ZERO,
            phase: Phase::Fault,
            slots: (0..self.nodes as NodeId)
                .map(|i| Slot {
                    node: Some((self.make)(i)),
                    disk: Disk::new(scenario.disk.block_size),
                    incarnation: 0,
                    paused_until: SimTime::ZERO,
                    cancelled: Vec::new(),
                })
                .collect(),
            queue: BinaryHeap::new(),
            seq: 0,
            next_timer: 0,
            next_msg: 0,
            net: Network::new(self.nodes),
            counts: FaultCounts::default(),
            disk_counts: DiskFaultCounts::default(),
            audit: scenario.disk.audit,
            unreachable: None,
            history: Vec::new(),
            trace: TraceHasher::new(),
            outbox: Vec::new(),
            sometimes: vec![false; self.properties.len()],
            eventually_met: vec![false; self.properties.len()],
            changed: true,
        };
        let outcome = w.run(decisions, obs);
        RunReport {
            outcome,
            trace_hash: w.trace.value(),
            events: w.trace.events(),
            faults: w.counts.total(),
            end_time: w.now,
            sometimes: self
                .properties
                .iter()
                .zip(&w.sometimes)
                .filter(|(p, &hit)| hit && p.modality == Modality::Sometimes)
                .map(|(p, _)| p.name.to_string())
                .collect(),
        }
    }
}

impl<'s, N: Node> World<'s, N> {
    fn push(&mut self, time: SimTime, ev: Ev<N>) {
        self.seq += 1;
        self.queue.push(Queued { time, seq: self.seq, ev });
    }

    fn view(&self) -> View<'_, N> {
        View {
            now: self.now,
            phase: self.phase,
            slots: &self.slots,
            queue: &self.queue,
            history: &self.history,
        }
    }

    /// Records one event in the trace hash and, if someone listens, as text.
    #[allow(clippy::too_many_arguments)]
    fn note(
        &mut self,
        obs: &mut dyn Observer,
        node: Option<NodeId>,
        kind: EventKind,
        peer: Option<NodeId>,
        msg: Option<u64>,
        payload: u64,
        summary: impl FnOnce() -> String,
    ) {
        self.trace.event(
            self.now,
            node.unwrap_or(u32::MAX),
            kind,
            peer.unwrap_or(u32::MAX),
            payload,
        );
        if obs.wants_events() {
            let state =
                node.and_then(|n| self.slots[n as usize].node.as_ref().map(|x| x.describe()));
            obs.event(Event {
                index: self.trace.events() - 1,
                time: self.now,
                node,
                kind,
                peer,
                msg,
                summary: summary(),
                state,
                hash: self.trace.value(),
            });
        }
    }

    fn run(&mut self, decisions: &mut Decisions, obs: &mut dyn Observer) -> Outcome {
        let sc = self.scenario;
        let heal_at = SimTime::ZERO + sc.fault_phase;
        let end_at = heal_at + sc.heal_phase;
        for node in 0..self.spec.nodes as NodeId {
            self.push(SimTime::ZERO, Ev::Start { node });
        }
        let base = decisions.set_base(Site::workload());
        let requests = (self.spec.workload)(decisions, sc);
        decisions.set_base(base);
        for (time, node, req) in requests {
            self.push(time, Ev::Request { node, req });
        }
        self.push(heal_at, Ev::HealPhase);
        while let Some(q) = self.queue.pop() {
            if q.time > end_at {
                break;
            }
            self.now = q.time;
            if let Some(node) = self.target_of(&q.ev) {
                let until = self.slots[node as usize].paused_until;
                if until > self.now {
                    // A paused node processes nothing: defer, keeping relative order.
                    self.push(until, q.ev);
                    continue;
                }
            }
            if self.trace.events() >= sc.max_events {
                return Outcome::BudgetExhausted {
                    detail: format!("{} events before the run ended", sc.max_events),
                };
            }
            if let Err(detail) = self.dispatch(q.ev, decisions, obs) {
                return Outcome::TargetCrashed { detail };
            }
            if let Some(outcome) = self.check(obs) {
                return outcome;
            }
            let started = self.now >= SimTime::ZERO + self.scenario.fault_start;
            if self.phase == Phase::Fault && self.now < heal_at && started {
                self.fault_opportunity(decisions, obs);
                if let Some(outcome) = self.check(obs) {
                    return outcome;
                }
            }
        }
        if self.phase == Phase::Fault {
            // The queue ran dry before the heal phase: start it so eventually-checks apply.
            self.now = self.now.max(heal_at);
            self.heal(decisions, obs);
            if let Some(outcome) = self.check(obs) {
                return outcome;
            }
        }
        self.now = self.now.max(end_at.min(self.now.max(heal_at)));
        for (i, p) in self.spec.properties.iter().enumerate() {
            if p.modality == Modality::Eventually && !self.eventually_met[i] && self.counts(p.name)
            {
                let detail = match (p.check)(&self.view()) {
                    Err(d) => d,
                    Ok(()) => "held only after its bound".into(),
                };
                return Outcome::LivenessViolation {
                    property: p.name.into(),
                    detail: format!("not within {} of the heal phase: {detail}", sc.heal_phase),
                };
            }
        }
        Outcome::Pass
    }

    fn counts(&self, name: &str) -> bool {
        self.spec.focus.as_deref().is_none_or(|f| f == name)
    }

    fn target_of(&self, ev: &Ev<N>) -> Option<NodeId> {
        match ev {
            Ev::Deliver { to, .. } => Some(*to),
            Ev::Timer { node, .. } | Ev::Request { node, .. } => Some(*node),
            _ => None,
        }
    }

    /// Evaluates assumptions and properties after an event. Returns the outcome that ends the
    /// run, if any.
    fn check(&mut self, obs: &mut dyn Observer) -> Option<Outcome> {
        if let Some(detail) = self.unreachable.take() {
            return Some(Outcome::OutsideModel { detail });
        }
        let spec = self.spec;
        let view = View {
            now: self.now,
            phase: self.phase,
            slots: &self.slots,
            queue: &self.queue,
            history: &self.history,
        };
        for a in &spec.assumptions {
            if let Err(detail) = (a.check)(&view) {
                return Some(Outcome::OutsideModel { detail: format!("{}: {detail}", a.name) });
            }
        }
        let f = N::world_feature(&view);
        if f != 0 {
            obs.feature(f);
        }
        if N::CHECK_ON_CHANGE && !std::mem::take(&mut self.changed) {
            return None;
        }
        let mut violated = None;
        for (i, p) in spec.properties.iter().enumerate() {
            match p.modality {
                Modality::Always => {
                    if spec.focus.as_deref().is_some_and(|f| f != p.name) {
                        continue;
                    }
                    if violated.is_some() {
                        continue; // the first violated property names the outcome
                    }
                    if let Err(detail) = (p.check)(&view) {
                        violated =
                            Some(Outcome::SafetyViolation { property: p.name.into(), detail });
                    }
                }
                Modality::Sometimes => {
                    if !self.sometimes[i] && (p.check)(&view).is_ok() {
                        self.sometimes[i] = true;
                    }
                }
                Modality::Eventually => {
                    if self.phase == Phase::Heal
                        && !self.eventually_met[i]
                        && (p.check)(&view).is_ok()
                    {
                        self.eventually_met[i] = true;
                    }
                }
            }
        }
        if let Some(outcome) = &violated {
            let text = outcome.to_string();
            self.note(obs, None, EventKind::Violation, None, None, 0, || text);
        }
        violated
    }

    fn dispatch(
        &mut self,
        ev: Ev<N>,
        decisions: &mut Decisions,
        obs: &mut dyn Observer,
    ) -> Result<(), String> {
        match ev {
            Ev::Start { node } => {
                self.changed = true;
                self.note(obs, Some(node), EventKind::Start, None, None, 0, || "start".into());
                self.call(node, decisions, obs, |n, ctx| n.on_start(ctx))?;
            }
            Ev::Deliver { from, to, msg, id } => {
                if self.slots[to as usize].node.is_none() {
                    let m = &msg;
                    self.note(obs, Some(to), EventKind::Drop, Some(from), Some(id), 1, || {
                        format!("{m:?} (receiver down)")
                    });
                    return Ok(());
                }
                let payload = stable_hash(&msg);
                let text = obs.wants_events().then(|| format!("{msg:?}"));
                let crashed = self.invoke(to, decisions, |n, ctx| n.on_message(from, msg, ctx))?;
                self.note(obs, Some(to), EventKind::Deliver, Some(from), Some(id), payload, || {
                    text.unwrap_or_default()
                });
                self.apply(to, decisions, obs);
                self.after_storage_crash(to, crashed, decisions, obs);
            }
            Ev::Timer { node, incarnation, id, tag } => {
                let slot = &mut self.slots[node as usize];
                if slot.incarnation != incarnation || slot.node.is_none() {
                    return Ok(());
                }
                if let Some(pos) = slot.cancelled.iter().position(|&c| c == id) {
                    slot.cancelled.swap_remove(pos);
                    return Ok(());
                }
                let crashed = self.invoke(node, decisions, |n, ctx| n.on_timer(id, tag, ctx))?;
                self.note(obs, Some(node), EventKind::Timer, None, None, tag, || {
                    format!("timer {tag}")
                });
                self.apply(node, decisions, obs);
                self.after_storage_crash(node, crashed, decisions, obs);
            }
            Ev::Request { node, req } => {
                if self.slots[node as usize].node.is_none() {
                    return Ok(());
                }
                let payload = stable_hash(&req);
                let text = obs.wants_events().then(|| format!("{req:?}"));
                let crashed = self.invoke(node, decisions, |n, ctx| n.on_request(req, ctx))?;
                self.note(obs, Some(node), EventKind::Request, None, None, payload, || {
                    text.unwrap_or_default()
                });
                self.apply(node, decisions, obs);
                self.after_storage_crash(node, crashed, decisions, obs);
            }
            Ev::Restart { node, incarnation } => {
                let slot = &self.slots[node as usize];
                if slot.node.is_some() || slot.incarnation != incarnation {
                    return Ok(());
                }
                self.restart(node, decisions, obs)?;
            }
            Ev::Resume { node } => {
                self.note(obs, Some(node), EventKind::Resume, None, None, 0, || "resume".into());
            }
            Ev::Reconnect { from, to } => {
                let up = self.net.set_cut(from, to, false);
                self.note(obs, Some(from), EventKind::Heal, Some(to), None, 0, || {
                    format!("link n{from} -> n{to} restored")
                });
                if up {
                    self.links_up(&[(from, to)], decisions, obs)?;
                }
            }
            Ev::Rejoin { node } => {
                let peers = self.net.isolate(node, false);
                self.note(obs, Some(node), EventKind::Heal, None, None, 0, || "reconnected".into());
                let pairs: Vec<(NodeId, NodeId)> = peers.into_iter().map(|p| (node, p)).collect();
                self.links_up(&pairs, decisions, obs)?;
            }
            Ev::Unsplit { side, rest } => {
                let mut pairs = Vec::new();
                for &a in &side {
                    for &b in &rest {
                        let up = self.net.set_cut(a, b, false) | self.net.set_cut(b, a, false);
                        if up {
                            pairs.push((a, b));
                        }
                    }
                }
                self.note(obs, side.first().copied(), EventKind::Heal, None, None, 0, || {
                    format!(
                        "partition {} | {} healed",
                        faults::node_list(&side),
                        faults::node_list(&rest)
                    )
                });
                self.links_up(&pairs, decisions, obs)?;
            }
            Ev::HealPhase => self.heal(decisions, obs),
        }
        Ok(())
    }

    fn restart(
        &mut self,
        node: NodeId,
        decisions: &mut Decisions,
        obs: &mut dyn Observer,
    ) -> Result<(), String> {
        let fresh = catch_unwind(AssertUnwindSafe(|| (self.spec.make)(node)))
            .map_err(|p| panic_text(node, p))?;
        let slot = &mut self.slots[node as usize];
        slot.node = Some(fresh);
        slot.incarnation += 1;
        self.changed = true;
        slot.cancelled.clear();
        self.note(obs, Some(node), EventKind::Restart, None, None, 0, || "restart".into());
        self.call(node, decisions, obs, |n, ctx| n.on_recover(ctx))
    }

    /// Faults stop: links heal, paused nodes resume, crashed nodes restart (if the scenario
    /// restarts them).
    /// Tells both ends of each pair that their link is back.
    fn links_up(
        &mut self,
        pairs: &[(NodeId, NodeId)],
        decisions: &mut Decisions,
        obs: &mut dyn Observer,
    ) -> Result<(), String> {
        for &(a, b) in pairs {
            self.call(a, decisions, obs, |n, ctx| n.on_link_up(b, ctx))?;
            self.call(b, decisions, obs, |n, ctx| n.on_link_up(a, ctx))?;
        }
        Ok(())
    }

    fn heal(&mut self, decisions: &mut Decisions, obs: &mut dyn Observer) {
        self.phase = Phase::Heal;
        self.changed = true;
        let pairs = self.net.heal_all();
        self.note(obs, None, EventKind::Heal, None, None, 0, || "heal phase: faults stop".into());
        // A panic here is reported by the next event on that node, as for restarts.
        let _ = self.links_up(&pairs, decisions, obs);
        for node in 0..self.slots.len() as NodeId {
            self.slots[node as usize].paused_until = SimTime::ZERO;
            if self.scenario.restart && self.slots[node as usize].node.is_none() {
                // A panic in a factory is reported by the next event on that node.
                let _ = self.restart(node, decisions, obs);
            }
        }
    }

    fn fault_opportunity(&mut self, decisions: &mut Decisions, obs: &mut dyn Observer) {
        let up: Vec<bool> = self.slots.iter().map(|s| s.node.is_some()).collect();
        let fault = {
            let view = View {
                now: self.now,
                phase: self.phase,
                slots: &self.slots,
                queue: &self.queue,
                history: &self.history,
            };
            let gate = self.spec.crash_gate;
            faults::opportunity(self.scenario, &mut self.counts, &up, decisions, &mut |n| {
                gate.is_none_or(|g| g(&view, n))
            })
        };
        let Some(fault) = fault else { return };
        match fault {
            Fault::Crash { node, outage } => {
                self.crash_node(node, outage, "", decisions, obs);
            }
            Fault::Pause { node, duration } => {
                self.slots[node as usize].paused_until = self.now + duration;
                self.push(self.now + duration, Ev::Resume { node });
                self.note(obs, Some(node), EventKind::Pause, None, None, duration.0, || {
                    format!("pause for {duration}")
                });
            }
            Fault::Isolate { node, duration } => {
                self.net.isolate(node, true);
                self.push(self.now + duration, Ev::Rejoin { node });
                self.note(obs, Some(node), EventKind::Partition, None, None, duration.0, || {
                    format!("isolated for {duration}")
                });
            }
            Fault::CutLink { from, to, duration } => {
                self.net.set_cut(from, to, true);
                self.push(self.now + duration, Ev::Reconnect { from, to });
                self.note(
                    obs,
                    Some(from),
                    EventKind::Partition,
                    Some(to),
                    None,
                    duration.0,
                    || format!("link n{from} -> n{to} cut for {duration}"),
                );
            }
            Fault::Split { side, rest, duration } => {
                for &a in &side {
                    for &b in &rest {
                        self.net.set_cut(a, b, true);
                        self.net.set_cut(b, a, true);
                    }
                }
                let text = format!(
                    "partition {} | {} for {duration}",
                    faults::node_list(&side),
                    faults::node_list(&rest)
                );
                let first = side.first().copied();
                self.push(self.now + duration, Ev::Unsplit { side, rest });
                self.note(obs, first, EventKind::Partition, None, None, duration.0, || text);
            }
        }
    }

    /// Calls a handler on a live node, then applies its effects. A panic in target code is an
    /// outcome (TargetCrashed), not a crash of weft.
    fn call(
        &mut self,
        node: NodeId,
        decisions: &mut Decisions,
        obs: &mut dyn Observer,
        f: impl FnOnce(&mut N, &mut Ctx<'_, N>),
    ) -> Result<(), String> {
        let crashed = self.invoke(node, decisions, f)?;
        self.apply(node, decisions, obs);
        self.after_storage_crash(node, crashed, decisions, obs);
        Ok(())
    }

    fn after_storage_crash(
        &mut self,
        node: NodeId,
        crashed: bool,
        decisions: &mut Decisions,
        obs: &mut dyn Observer,
    ) {
        if crashed {
            let base = decisions.set_base(Site::disk(node));
            let outage = faults::outage(self.scenario, decisions);
            decisions.set_base(base);
            self.crash_node(node, outage, "at a storage call", decisions, obs);
        }
    }

    /// The node loses its volatile state; its disk keeps a crash state drawn under the
    /// scenario's contract (each loss noted with the rule that allowed it).
    fn crash_node(
        &mut self,
        node: NodeId,
        outage: Option<SimDuration>,
        why: &str,
        decisions: &mut Decisions,
        obs: &mut dyn Observer,
    ) {
        self.changed = true;
        let slot = &mut self.slots[node as usize];
        slot.node = None;
        slot.incarnation += 1;
        slot.cancelled.clear();
        let inc = slot.incarnation;
        let pre_crash = self.audit.is_some().then(|| slot.disk.clone());
        let base = decisions.set_base(Site::disk(node));
        let (state, losses) = slot.disk.crash(self.scenario.disk.contract, decisions);
        decisions.set_base(base);
        if let Some(d) = outage {
            self.push(self.now + d, Ev::Restart { node, incarnation: inc });
        }
        let what = if why.is_empty() { "crash".to_string() } else { format!("crash {why}") };
        self.note(obs, Some(node), EventKind::Crash, None, None, 0, || match outage {
            Some(d) => format!("{what} (restart in {d})"),
            None => what,
        });
        for loss in losses {
            self.note(obs, Some(node), EventKind::Note, None, None, 0, || loss);
        }
        if let (Some(contract), Some(disk)) = (self.audit, pre_crash) {
            if let Err(rule) = disk.allows(contract, &state) {
                self.unreachable.get_or_insert(format!(
                    "the crash state of n{node} at {} is not reachable under `{}`: {rule}",
                    self.now.to_string().trim(),
                    contract.name()
                ));
            }
        }
    }

    /// Runs a handler, leaving its effects in `self.outbox`. Returns whether the node crashed at
    /// a storage call inside the handler.
    fn invoke(
        &mut self,
        node: NodeId,
        decisions: &mut Decisions,
        f: impl FnOnce(&mut N, &mut Ctx<'_, N>),
    ) -> Result<bool, String> {
        let faulty = self.phase == Phase::Fault;
        let slot = &mut self.slots[node as usize];
        let Some(n) = slot.node.as_mut() else { return Ok(false) };
        let mut ctx = Ctx {
            id: node,
            now: self.now,
            nodes: self.spec.nodes,
            next_timer: &mut self.next_timer,
            outbox: &mut self.outbox,
            decisions,
            disk: &mut slot.disk,
            scenario: self.scenario,
            counts: &mut self.counts,
            disk_counts: &mut self.disk_counts,
            faulty,
            changed: &mut self.changed,
        };
        // Every draw of the handler (node choices, storage faults) is addressed to the node.
        let base = ctx.decisions.set_base(Site::node(node, 0));
        let result = catch_unwind(AssertUnwindSafe(|| f(n, &mut ctx)));
        ctx.decisions.set_base(base);
        match result {
            Ok(()) => Ok(false),
            Err(p) if p.is::<CrashPoint>() => Ok(true),
            Err(p) => Err(panic_text(node, p)),
        }
    }

    /// Applies the effects a handler left in `self.outbox`, in order.
    fn apply(&mut self, node: NodeId, decisions: &mut Decisions, obs: &mut dyn Observer) {
        let mut outbox = std::mem::take(&mut self.outbox);
        let faulty = self.phase == Phase::Fault;
        for effect in outbox.drain(..) {
            match effect {
                Effect::Send { to, msg } => {
                    let id = self.next_msg;
                    self.next_msg += 1;
                    let fate = self.net.route(
                        (node, to),
                        self.now,
                        self.scenario,
                        faulty,
                        &mut self.counts,
                        decisions,
                    );
                    let payload = stable_hash(&msg);
                    let text = || format!("{msg:?}");
                    match fate {
                        Fate::Deliver(at) => {
                            self.note(
                                obs,
                                Some(node),
                                EventKind::Send,
                                Some(to),
                                Some(id),
                                payload,
                                text,
                            );
                            self.push(at, Ev::Deliver { from: node, to, msg, id });
                        }
                        Fate::Duplicate(a, b) => {
                            self.note(
                                obs,
                                Some(node),
                                EventKind::Duplicate,
                                Some(to),
                                Some(id),
                                payload,
                                text,
                            );
                            self.push(a, Ev::Deliver { from: node, to, msg: msg.clone(), id });
                            self.push(b, Ev::Deliver { from: node, to, msg, id });
                        }
                        Fate::Drop | Fate::Cut => {
                            let why = if fate == Fate::Cut { "link cut" } else { "dropped" };
                            self.note(
                                obs,
                                Some(node),
                                EventKind::Drop,
                                Some(to),
                                Some(id),
                                payload,
                                || format!("{msg:?} ({why})"),
                            );
                        }
                    }
                }
                Effect::Timer { id, after, tag } => {
                    let incarnation = self.slots[node as usize].incarnation;
                    self.push(self.now + after, Ev::Timer { node, incarnation, id, tag });
                }
                Effect::Cancel(id) => self.slots[node as usize].cancelled.push(id),
                Effect::Observe(o) => {
                    self.changed = true;
                    let text = obs.wants_events().then(|| format!("{o:?}"));
                    self.history.push(Observation { time: self.now, node, obs: o });
                    self.note(obs, Some(node), EventKind::Observe, None, None, 0, || {
                        text.unwrap_or_default()
                    });
                }
            }
        }
        self.outbox = outbox;
        if let Some(n) = self.slots[node as usize].node.as_ref() {
            let f = n.feature();
            if f != 0 {
                obs.feature(f);
            }
        }
    }
}

fn panic_text(node: NodeId, payload: Box<dyn std::any::Any + Send>) -> String {
    let msg = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic".into());
    format!("node n{node} panicked: {msg}")
}
