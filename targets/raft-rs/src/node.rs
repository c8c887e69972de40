//! The harness node: one raft-rs `RawNode` inside weft's kernel, its apply loop, and the
//! oracles.
//!
//! Time: raft-rs has no clock; it advances when `tick()` is called. Each node calls it from a
//! weft timer whose first phase is a decision. The library's randomised election
//! timeout is pinned to one value (see [`crate::library`]); the harness puts the randomness
//! back under weft's control: whenever a node's term or role changes (which is when raft resets
//! its election timer) and it is not the leader, its next tick is held back by a drawn number
//! of ticks (0 to `election_tick - 1`), so its election timeout falls in `[election_tick,
//! 2 * election_tick)` ticks as with the library's defaults. Without this, two nodes whose
//! clocks happen to be in step split every vote forever. The draw is a decision during the
//! fault phase (the search may race timeouts as it likes) and fair once faults stop
//! ([`weft_sim::Ctx::fair_choose`]): a scheduler that picks every timeout can livelock any
//! randomised election, which `Recovery` would otherwise report. Optionally (`tick-jitter`) each tick
//! period is also stretched by a drawn number of milliseconds.
//!
//! The clock's pace is a decision too, drawn when the node starts and whenever its term or
//! role changes (the points where raft's own timers restart), and encoded so that smaller
//! means quieter, as the shrinker's simplest run should be the one with the least background
//! traffic ([`clock_of`]): 0 stops the node's clock until its next change of term or role (or
//! the heal phase), small values make it coarse (each timer firing does up to 20 ticks at
//! once, stopping early as soon as the library has something to do, after as many tick
//! periods), and everything else — all but 21 of 65,536 values — is one tick per period, as
//! before. All are legal schedules: raft's safety may not depend on how fast, or how evenly, a
//! node's clock runs. In the heal phase every node ticks once per period, so `Recovery` is
//! judged on a fair run.
//!
//! The apply loop is asynchronous, as in TiKV: after each library call the node drains every
//! `Ready` (persisting entries and hard state to the node's `MemStorage` at once and sending
//! the messages), but committed entries go to an apply queue that an *apply timer* drains
//! later, after a delay drawn from the decisions (0 up to the `apply-lag` option). Only then
//! are configuration changes applied to the library (`apply_conf_change`) and `advance_apply`
//! called. So "committed" and "applied" are separate schedulable events, and the search
//! decides how far apply lags behind commit on each node.
//!
//! The network is weft's: messages may be delayed, reordered, duplicated, lost or cut by
//! partitions, all of which raft tolerates by design.

use crate::library::{Committed, Kind, Library, Role, State, Tuning};
use std::collections::VecDeque;
use std::fmt::{self, Debug};
use std::hash::{Hash, Hasher};
use weft_core::SimDuration;
use weft_sim::{Ctx, Node, NodeId, Phase, TimerId, View};

/// Nominal period of the tick timer; each period adds 0 to `tick-jitter` milliseconds.
pub const TICK_MS: u64 = 10;
/// Values at or above this are the heal-phase probes of the recovery property.
pub const PROBE_BASE: u64 = 1_000_000;
/// The most ticks one coarse clock step does at once (see [`clock_of`]).
pub const COARSE_TICKS: u64 = 20;
/// The bound of a tick's clock decision: 0, the coarse steps, then the ordinary ticks.
pub const CLOCK_CHOICES: u64 = 1 << 16;
/// Timer tags; they double as the node's decision streams, one per concern, so zeroing one
/// (say, the clock) leaves the others (apply delays, election holds) where they were.
const TIMER_TICK: u64 = 1;
const TIMER_APPLY: u64 = 2;
const STREAM_HOLD: u32 = 3;
const STREAM_JITTER: u32 = 4;
const MS: u64 = 1_000_000;

/// The pace a clock decision `v` stands for: `None` stops the clock (until the node's next
/// change of term or role, or the heal phase); `Some(n)` does up to `n` ticks per timer
/// firing, one firing every `n` periods. Monotone: a smaller value never fires more often.
pub fn clock_of(v: u64) -> Option<u64> {
    match v {
        0 => None,
        v if v <= COARSE_TICKS => Some(COARSE_TICKS + 1 - v),
        _ => Some(1),
    }
}

/// A raft message on the wire. The library's messages implement `Debug` but not `Hash`: the
/// trace hash folds in every field ([`Library::hash_msg`]); traces and diagrams show a one-line
/// summary ([`Library::summary`]).
pub struct Wire<L: Library>(pub L::Msg);

impl<L: Library> Clone for Wire<L> {
    fn clone(&self) -> Self {
        Wire(self.0.clone())
    }
}

impl<L: Library> Debug for Wire<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&L::summary(&self.0))
    }
}

impl<L: Library> Hash for Wire<L> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        L::hash_msg(&self.0, state);
    }
}

/// Workload inputs, delivered to one node.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub enum Req {
    /// A client proposes this value here (a follower forwards it to its leader).
    Propose(u64),
    /// An administrator asks this node to add node `n` as a voter (forwarded to the leader).
    AddNode(NodeId),
    /// An administrator asks for leadership to move to node `n` (forwarded to the leader).
    Transfer(NodeId),
}

/// What a node reports to the history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Obs {
    /// This node became leader of `term`.
    Leader { term: u64 },
    /// This node applied the entry at `index`.
    Applied { index: u64, term: u64, kind: Kind },
}

/// Per-node knobs (from the target's options).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeOptions {
    pub tuning: Tuning,
    /// Raft ids `1..=initial` are the bootstrap voters; the others join by configuration change.
    pub initial: usize,
    /// Largest extra delay of one apply step, in ms.
    pub apply_lag_ms: u64,
    /// Largest extra length of one tick period, in ms.
    pub tick_jitter_ms: u64,
}

pub struct RaftNode<L: Library> {
    pub id: NodeId,
    raw: L::Raw,
    opts: NodeOptions,
    /// Highest index handed to the apply queue (`ready_since` is asked from here).
    queued_to: u64,
    queue: VecDeque<Committed>,
    apply_pending: bool,
    /// The applied entries, `(term, kind)` of index `i + 1` at `applied[i]`.
    pub applied: Vec<(u64, Kind)>,
    /// A running hash of `applied[..=i]` at `prefix[i]`, so comparing two nodes' applied logs
    /// (after every event) costs one comparison per pair unless they differ.
    prefix: Vec<u64>,
    /// Terms this node led, ascending.
    pub led: Vec<u64>,
    /// Set when an entry this node applied is no longer in its log, or applies out of order.
    pub lost: Option<String>,
    /// The library's state after the last call, and its voters.
    pub state: State,
    pub voters: Vec<u64>,
    out: Vec<L::Msg>,
    committed: Vec<Committed>,
    ticks: usize,
    /// Ticks to hold the clock back before the next tick (a randomised election timeout).
    hold: u64,
    /// The clock's pace in the fault phase ([`clock_of`]; `None`: stopped).
    clock: Option<u64>,
    /// Ticks the next tick timer firing does, at most.
    batch: u64,
    /// The tick timer while the clock is stopped (it is parked at the heal phase).
    parked: Option<TimerId>,
}

impl<L: Library> RaftNode<L> {
    pub fn new(id: NodeId, opts: NodeOptions) -> RaftNode<L> {
        let raft_id = id as u64 + 1;
        let voters: Vec<u64> = if (id as usize) < opts.initial {
            (1..=opts.initial as u64).collect()
        } else {
            Vec::new()
        };
        let raw = L::build(raft_id, &voters, opts.tuning);
        RaftNode {
            id,
            state: L::state(&raw),
            voters: L::voters(&raw),
            raw,
            opts,
            queued_to: 0,
            queue: VecDeque::new(),
            apply_pending: false,
            applied: Vec::new(),
            prefix: Vec::new(),
            led: Vec::new(),
            lost: None,
            out: Vec::new(),
            committed: Vec::new(),
            ticks: 0,
            hold: 0,
            clock: Some(1),
            batch: 1,
            parked: None,
        }
    }

    /// The node this one believes leads.
    pub fn leader(&self) -> Option<NodeId> {
        (self.state.leader_id > 0).then(|| self.state.leader_id as NodeId - 1)
    }

    /// Drains every `Ready`: sends messages, queues committed entries, records leadership, and
    /// schedules the apply step if entries wait.
    fn pump(&mut self, ctx: &mut Ctx<'_, Self>) {
        while L::ready(&mut self.raw, self.queued_to, &mut self.out, &mut self.committed) {
            for msg in self.out.drain(..) {
                let to = L::receiver(&msg);
                if to >= 1 && to as usize <= ctx.nodes() && to != self.id as u64 + 1 {
                    ctx.send(to as NodeId - 1, Wire(msg));
                }
            }
            for c in self.committed.drain(..) {
                self.queued_to = self.queued_to.max(c.index);
                self.queue.push_back(c);
            }
        }
        let before = self.state;
        self.state = L::state(&self.raw);
        let leader = self.state.role == Role::Leader;
        if (before.term, before.role) != (self.state.term, self.state.role) {
            if !leader {
                let n = self.opts.tuning.election_ticks as u64;
                self.hold = match ctx.phase() {
                    Phase::Fault => ctx.choose_at(STREAM_HOLD, n),
                    Phase::Heal => ctx.fair_choose(n, self.state.term),
                };
            }
            self.pace(ctx);
        }
        if leader && self.led.last() != Some(&self.state.term) {
            self.led.push(self.state.term);
            ctx.observe(Obs::Leader { term: self.state.term });
        }
        if !self.queue.is_empty() && !self.apply_pending {
            self.apply_pending = true;
            let lag = ctx.choose_at(TIMER_APPLY as u32, self.opts.apply_lag_ms + 1);
            ctx.set_timer(SimDuration(lag * MS), TIMER_APPLY);
        }
    }

    /// The apply step: applies everything queued, configuration changes included.
    fn apply(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.apply_pending = false;
        let mut last = None;
        while let Some(c) = self.queue.pop_front() {
            if c.index != self.applied.len() as u64 + 1 {
                self.lost.get_or_insert_with(|| {
                    format!("applied index {} after {}", c.index, self.applied.len())
                });
                continue;
            }
            if let Kind::AddNode(id) = c.kind {
                L::apply_add_node(&mut self.raw, id);
            }
            let before = self.prefix.last().copied().unwrap_or(0);
            self.prefix.push(weft_core::stable_hash(&(before, c.term, c.kind)));
            self.applied.push((c.term, c.kind));
            ctx.observe(Obs::Applied { index: c.index, term: c.term, kind: c.kind });
            last = Some(c.index);
        }
        if let Some(index) = last {
            L::advance_apply(&mut self.raw, index);
        }
        self.voters = L::voters(&self.raw);
    }

    /// Every applied entry must still be in this node's log with the term it was applied with:
    /// raft never truncates a committed entry.
    fn audit(&mut self) {
        if self.lost.is_some() {
            return;
        }
        for (i, &(term, _)) in self.applied.iter().enumerate() {
            let index = i as u64 + 1;
            let now = L::term_at(&self.raw, index);
            if now != Some(term) {
                self.lost = Some(match now {
                    Some(t) => format!("applied entry {index} (term {term}) became term {t}"),
                    None => format!("applied entry {index} (term {term}) is gone from its log"),
                });
                return;
            }
        }
    }

    /// Draws the clock's pace (in the fault phase; in the heal phase it is one tick per
    /// period) and restarts a stopped clock that may now run.
    fn pace(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.clock = match ctx.phase() {
            Phase::Fault => clock_of(ctx.choose_at(TIMER_TICK as u32, CLOCK_CHOICES)),
            Phase::Heal => Some(1),
        };
        if self.clock.is_some() {
            if let Some(id) = self.parked.take() {
                ctx.cancel_timer(id);
                self.arm_tick(SimDuration(TICK_MS * MS), ctx);
            }
        }
    }

    /// Sets the next tick timer `lead` after now, plus one period per tick of its batch beyond
    /// the first and per tick of any hold, plus any jitter. A stopped clock parks the timer one
    /// period (and a millisecond per node id, so parked clocks do not tick in step) into the
    /// heal phase.
    fn arm_tick(&mut self, lead: SimDuration, ctx: &mut Ctx<'_, Self>) {
        let hold = std::mem::take(&mut self.hold);
        self.batch = match (ctx.phase(), self.clock) {
            (Phase::Heal, _) => 1,
            (Phase::Fault, Some(n)) => n,
            (Phase::Fault, None) => {
                let at = ctx.heal_at().0 + (TICK_MS + self.id as u64) * MS;
                let after = SimDuration(at.saturating_sub(ctx.now().0));
                self.parked = Some(ctx.set_timer(after, TIMER_TICK));
                return;
            }
        };
        let jitter = if self.opts.tick_jitter_ms > 0 {
            ctx.choose_at(STREAM_JITTER, self.opts.tick_jitter_ms + 1)
        } else {
            0
        };
        let ms = TICK_MS * (self.batch - 1 + hold) + jitter;
        ctx.set_timer(SimDuration(lead.0 + ms * MS), TIMER_TICK);
    }

    /// One tick timer firing: up to `batch` ticks, stopping as soon as the library has work.
    fn tick(&mut self) {
        for _ in 0..self.batch {
            L::tick(&mut self.raw);
            self.ticks += 1;
            if self.ticks >= self.opts.tuning.election_ticks {
                self.ticks = 0;
                self.audit();
            }
            if L::has_ready(&self.raw, self.queued_to) {
                break;
            }
        }
    }
}

impl<L: Library> Node for RaftNode<L> {
    type Msg = Wire<L>;
    type Req = Req;
    type Obs = Obs;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        // The first tick's phase is a decision (0: at once), so node clocks interleave freely,
        // and the first election timeout is randomised like every later one.
        let phase = ctx.choose_at(TIMER_TICK as u32, TICK_MS);
        self.hold = ctx.choose_at(STREAM_HOLD, self.opts.tuning.election_ticks as u64);
        self.pace(ctx);
        self.arm_tick(SimDuration(phase * MS), ctx);
        self.pump(ctx);
    }

    fn on_message(&mut self, _from: NodeId, msg: Self::Msg, ctx: &mut Ctx<'_, Self>) {
        L::step(&mut self.raw, msg.0);
        self.pump(ctx);
    }

    fn on_timer(&mut self, _timer: TimerId, tag: u64, ctx: &mut Ctx<'_, Self>) {
        match tag {
            TIMER_TICK => {
                self.parked = None;
                self.tick();
                self.pump(ctx);
                self.arm_tick(SimDuration(TICK_MS * MS), ctx);
            }
            _ => {
                self.apply(ctx);
                self.pump(ctx);
            }
        }
    }

    fn on_request(&mut self, req: Req, ctx: &mut Ctx<'_, Self>) {
        match req {
            Req::Propose(value) => {
                L::propose(&mut self.raw, value);
            }
            Req::AddNode(n) => {
                let id = n as u64 + 1;
                if !self.voters.contains(&id) {
                    L::propose_add_node(&mut self.raw, id);
                }
            }
            Req::Transfer(n) => L::transfer_leader(&mut self.raw, n as u64 + 1),
        }
        self.pump(ctx);
    }

    fn describe(&self) -> String {
        let s = &self.state;
        let role = format!("{:?}", s.role).to_lowercase();
        let leader = match self.leader() {
            Some(l) => format!("n{l}"),
            None => "none".into(),
        };
        let voters: Vec<String> = self.voters.iter().map(|v| format!("n{}", v - 1)).collect();
        format!(
            "raft {} term={} {role} leader={leader} commit={} applied={} voters=[{}]",
            L::VERSION,
            s.term,
            s.commit,
            self.applied.len(),
            voters.join(",")
        )
    }

    fn feature(&self) -> u64 {
        let s = &self.state;
        (s.term.min(255) << 16)
            | ((s.role as u64) << 12)
            | ((self.voters.len() as u64) << 8)
            | (s.commit - self.applied.len() as u64).min(15) << 4
            | self.leader().map_or(0, |l| l as u64 + 1)
    }
}

fn live<'a, L: Library>(v: &View<'a, RaftNode<L>>) -> Vec<&'a RaftNode<L>> {
    v.nodes().filter_map(|(_, n)| n).collect()
}

/// At most one leader per term: no two nodes ever led the same term.
pub fn one_leader_per_term<L: Library>(v: &View<'_, RaftNode<L>>) -> Result<(), String> {
    let nodes = live(v);
    for (i, a) in nodes.iter().enumerate() {
        for b in &nodes[i + 1..] {
            if let Some(term) = a.led.iter().find(|t| b.led.binary_search(t).is_ok()) {
                return Err(format!("n{} and n{} were both leader in term {term}", a.id, b.id));
            }
        }
    }
    Ok(())
}

/// Committed entries are never lost: every node's applied entries are a prefix of every
/// other's (same index, same term, same content), and no node's log drops or replaces an entry
/// it applied.
pub fn committed_kept<L: Library>(v: &View<'_, RaftNode<L>>) -> Result<(), String> {
    let nodes = live(v);
    for n in &nodes {
        if let Some(why) = &n.lost {
            return Err(format!("n{}: {why}", n.id));
        }
    }
    for (i, a) in nodes.iter().enumerate() {
        for b in &nodes[i + 1..] {
            let common = a.applied.len().min(b.applied.len());
            if common == 0 || a.prefix[common - 1] == b.prefix[common - 1] {
                continue;
            }
            if let Some(k) = (0..common).find(|&k| a.applied[k] != b.applied[k]) {
                let show = |(term, kind): (u64, Kind)| format!("{kind:?} of term {term}");
                return Err(format!(
                    "n{} and n{} applied different entries at index {}: {} vs {}",
                    a.id,
                    b.id,
                    k + 1,
                    show(a.applied[k]),
                    show(b.applied[k])
                ));
            }
        }
    }
    Ok(())
}

/// Recovery: a leader that a majority of its voters follow in its term exists, and a
/// heal-phase probe value has been applied.
pub fn recovery<L: Library>(v: &View<'_, RaftNode<L>>) -> Result<(), String> {
    let nodes = live(v);
    let leader = nodes.iter().find(|n| {
        n.state.role == Role::Leader && {
            let followers = n
                .voters
                .iter()
                .filter(|&&id| {
                    nodes.iter().any(|m| {
                        m.id as u64 + 1 == id
                            && m.state.term == n.state.term
                            && m.state.leader_id == n.id as u64 + 1
                    })
                })
                .count();
            followers > n.voters.len() / 2
        }
    });
    let Some(leader) = leader else {
        let views: Vec<String> = nodes
            .iter()
            .map(|n| format!("n{}:t{}->{:?}", n.id, n.state.term, n.leader()))
            .collect();
        return Err(format!(
            "no leader followed by a majority of its voters ({})",
            views.join(" ")
        ));
    };
    let probe = |n: &&RaftNode<L>| {
        n.applied.iter().any(|&(_, k)| matches!(k, Kind::Value(x) if x >= PROBE_BASE))
    };
    if nodes.iter().any(probe) {
        Ok(())
    } else {
        Err(format!("leader n{}, but no heal-phase proposal was applied", leader.id))
    }
}

/// Reachability: the membership grew to every node (the bug needs 3 → 4 → 5).
pub fn grew<L: Library>(v: &View<'_, RaftNode<L>>) -> Result<(), String> {
    let all = v.len();
    if live(v).iter().any(|n| n.voters.len() == all) {
        Ok(())
    } else {
        Err(format!("no node saw all {all} nodes as voters"))
    }
}
