//! The in-process run: a [`SimSpec`] (the world's nodes, workload and properties) run once over
//! a scenario and a decision source, as a loop over an event queue in simulated time with
//! deterministic tie-breaking; properties are checked after every event. What an event does
//! to the nodes is in `dispatch`; how faults are injected and healed is in `inject`.

mod dispatch;
mod inject;

use crate::disk::{Disk, DiskFaultCounts};
use crate::faults::FaultCounts;
use crate::net::Network;
use crate::node::{Effect, Node, NodeId, TimerId};
use crate::view::{Observation, Phase, Property, View};
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use weft_core::{
    Decisions, Event, EventKind, Modality, Observer, Outcome, RunReport, Scenario, SimTime, Site,
    TraceHasher,
};

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

pub(crate) struct Slot<N: Node> {
    pub(crate) node: Option<N>,
    disk: Disk,
    incarnation: u32,
    paused_until: SimTime,
    /// Timers cancelled but still queued (tiny: nodes cancel few timers at once).
    cancelled: Vec<TimerId>,
}

pub(crate) enum Ev<N: Node> {
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

pub(crate) struct Queued<N: Node> {
    time: SimTime,
    seq: u64,
    pub(crate) ev: Ev<N>,
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
            if self.phase == Phase::Heal && self.settled() {
                break;
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

    /// The target says nothing left can change a property ([`Node::settled`]), and the world
    /// agrees: every counted `eventually` property met, every `sometimes` one reached, and
    /// nothing queued that is not a node's own timer or a message (no restart, resume,
    /// reconnect or request to come). The queue is scanned last: a target that never settles
    /// (the default) costs nothing per event beyond the properties' flags.
    fn settled(&self) -> bool {
        let met = self.spec.properties.iter().enumerate().all(|(i, p)| match p.modality {
            Modality::Always => true,
            Modality::Sometimes => self.sometimes[i],
            Modality::Eventually => self.eventually_met[i] || !self.counts(p.name),
        });
        met && N::settled(&self.view())
            && self.queue.iter().all(|q| matches!(q.ev, Ev::Timer { .. } | Ev::Deliver { .. }))
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
}
