//! The node side of the in-process world: the [`Node`] trait a target implements (sans-IO
//! handlers) and the [`Ctx`] handle through which a handler sends, sets timers, observes,
//! draws decisions and reaches its disk.

use crate::disk::{Disk, DiskFaultCounts};
use crate::faults::FaultCounts;
use crate::storage::DiskIo;
use crate::view::{Phase, View};
use std::fmt::Debug;
use std::hash::Hash;
use weft_core::{Decisions, Scenario, SimDuration, SimTime};

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
    /// Is the world *settled*: in the heal phase (the only time it is asked), can no event
    /// left change what any property reads, ever, assuming nothing but timers and messages is
    /// queued? When a target says so (and that holds, every counted `eventually` property is
    /// already met, every `sometimes` one reached), the run ends there, judged as if it had
    /// run to the heal phase's end: a passing run stops paying for a heal phase in which
    /// nothing can happen. The claim is
    /// the target's, and it must be sound: a settled run that would have failed later is a
    /// missed bug (Chord's test compares every outcome with and without it). Default: never.
    fn settled(_view: &View<'_, Self>) -> bool {
        false
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

pub(crate) enum Effect<N: Node> {
    Send { to: NodeId, msg: N::Msg },
    Timer { id: TimerId, after: SimDuration, tag: u64 },
    Cancel(TimerId),
    Observe(N::Obs),
}

/// A node's handle to the world during one handler call.
pub struct Ctx<'a, N: Node> {
    pub(crate) id: NodeId,
    pub(crate) now: SimTime,
    pub(crate) nodes: usize,
    pub(crate) next_timer: &'a mut u64,
    pub(crate) outbox: &'a mut Vec<Effect<N>>,
    pub(crate) decisions: &'a mut Decisions,
    pub(crate) disk: &'a mut Disk,
    pub(crate) scenario: &'a Scenario,
    pub(crate) counts: &'a mut FaultCounts,
    pub(crate) disk_counts: &'a mut DiskFaultCounts,
    pub(crate) faulty: bool,
    pub(crate) changed: &'a mut bool,
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
    /// When the heal phase begins (faults stop): the end of the scenario's fault phase. A
    /// node may park a timer there, e.g. to stay quiet for the rest of the fault phase.
    pub fn heal_at(&self) -> SimTime {
        SimTime::ZERO + self.scenario.fault_phase
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
