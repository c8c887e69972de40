//! Message mode: the same replica logic ([`crate::model`]'s pure functions) running as
//! weft-sim [`Node`]s that exchange datagrams through the simulated network.
//!
//! * **RPCs** (§1.4 for literal/original, §4.3 for corrected). Every operation has its own
//!   periodic timer with a period drawn from the decision source, so the scheduler interleaves
//!   stabilize, reconcile, update and flush arbitrarily, as Zave's model does. A node runs at
//!   most one query at a time; a timer that fires while one is outstanding re-arms itself.
//! * **Notify** is a one-way message with its own latency (and delay faults), so it can arrive
//!   late (D4).
//! * **Corrected (§4.4)**: while a query is outstanding the node answers state queries with
//!   `Busy`; the asker abandons its operation (no state change, so atomicity is kept) and
//!   retries on its next timer. Pings are answered at once.
//! * **Failure detection** is a request timeout longer than any round trip the scenario allows
//!   (`2 × (latency_max + delay_max) + 1ms`). The model assumes it perfect: an assumption
//!   check ends a run as `OutsideModel` when a node times out on a peer that is a live member
//!   or whose reply is in flight (a drop or a pause can cause this; neither is a Chord bug).
//! * **Ground truth**: properties, the heal classification and the fault gate read every
//!   node's state and the messages in flight, never a node's belief. The gate counts successor
//!   lists inside in-flight replies (verdi-chord's rule, spec §5.2.5).
//! * Membership: an identity that crashed comes back (if the scenario restarts it) with no
//!   state; with `reuse=false` it then stays out of the ring, otherwise it joins again.

use crate::atomic::{heals, Policy};
use crate::model::{
    accept_notify, adopt_list, between, reconcile_list, rectify_adopts, shift_left,
    stabilize_choice, NodeState, Ring, Rules, Status, Variant, MAX_IDS, MAX_R, NONE,
};
use crate::props::{self, Property};
use crate::Config;
use weft_core::{Decisions, Modality, Observer, RunReport, Scenario, SimDuration, SimTime};
use weft_sim::{Ctx, Node, NodeId, SimSpec, TimerId, View};

const TAG_STABILIZE: u64 = 1;
const TAG_RECONCILE: u64 = 2;
const TAG_UPDATE: u64 = 3;
const TAG_FLUSH: u64 = 4;
const TAG_JOIN: u64 = 5;
const TAG_RECTIFY: u64 = 6;
/// Request timeouts carry `TAG_TIMEOUT | seq`.
const TAG_TIMEOUT: u64 = 1 << 32;
/// Maintenance timer periods are drawn uniformly from 1..=PERIOD_MS milliseconds.
const PERIOD_MS: u64 = 20;

/// Datagrams between replicas. `seq` matches a reply to its query.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub enum Msg {
    /// Join lookup for `joiner`, routed along first successors.
    FindSuccessor {
        joiner: u8,
        seq: u32,
        hops: u8,
    },
    /// Member `via` covers the joiner: its list (and so its successor) is the answer.
    Found {
        via: u8,
        list: [u8; MAX_R],
        seq: u32,
    },
    GetPred {
        seq: u32,
    },
    Pred {
        pred: u8,
        seq: u32,
    },
    GetSuccList {
        seq: u32,
    },
    SuccList {
        list: [u8; MAX_R],
        seq: u32,
    },
    GetPredAndSuccs {
        seq: u32,
    },
    PredAndSuccs {
        pred: u8,
        list: [u8; MAX_R],
        seq: u32,
    },
    Notify,
    Ping {
        seq: u32,
    },
    Pong {
        seq: u32,
    },
    /// Corrected: "response pending" — the receiver is mid-operation (§4.4).
    Busy {
        seq: u32,
    },
}

/// The one outstanding query of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Join,
    /// FIX-J: the joiner pings the successor it was given before adopting it.
    JoinPing {
        via: u8,
        list: [u8; MAX_R],
    },
    GetPred {
        s: u8,
    },
    /// FIX-S: ping `x` before adopting it as successor.
    StabPing {
        x: u8,
    },
    Reconcile {
        s: u8,
    },
    UpdatePing {
        s: u8,
    },
    FlushPing {
        p: u8,
    },
    Stab1 {
        s: u8,
    },
    Stab2 {
        p: u8,
    },
    RectPing {
        n: u8,
    },
}

#[derive(Clone, Copy, Debug)]
struct Outstanding {
    op: Op,
    seq: u32,
    peer: u8,
    timer: TimerId,
}

/// Static configuration every replica carries (properties and the gate read it from the view).
#[derive(Clone, Copy, Debug)]
pub struct NodeConfig {
    pub rules: Rules,
    pub policy: Policy,
    pub timeout: SimDuration,
    /// Joins start within this many milliseconds of the run's start.
    pub join_window_ms: u64,
    /// Members of the initial state (node 0 alone, or the corrected ideal ring).
    pub initial: u8,
    /// Report the ring's shape as a coverage feature ([`Config::ring_feature`]).
    pub ring_feature: bool,
}

/// One Chord replica in message mode.
pub struct ChordNode {
    id: u8,
    cfg: NodeConfig,
    pub state: NodeState,
    /// Has this identity ever been a member (for `reuse=false` after a restart)?
    pub ever: bool,
    out: Option<Outstanding>,
    seq: u32,
    /// Corrected: the best notifier waiting to be rectified.
    rectify_with: u8,
    /// The peer this node last declared dead, and when (for the perfect-detector assumption).
    pub suspected: Option<(u8, SimTime)>,
    /// Operations whose timer fired while a query was outstanding, oldest first.
    wanted: [u8; 8],
    wanted_len: usize,
}

impl ChordNode {
    /// A replica at the start of a run: a member with its initial state if it belongs to the
    /// initial network (so properties never see a half-built start), otherwise not yet joined.
    pub fn new(id: u8, cfg: NodeConfig) -> ChordNode {
        let initial = cfg.initial & (1 << id) != 0;
        let state = if !initial {
            NodeState::default()
        } else if cfg.rules.variant == Variant::Corrected {
            Ring::ideal(cfg.initial, cfg.rules.r).nodes[id as usize]
        } else {
            Ring::bootstrap().nodes[id as usize]
        };
        ChordNode {
            id,
            cfg,
            state,
            ever: initial,
            out: None,
            seq: 0,
            rectify_with: NONE,
            suspected: None,
            wanted: [0; 8],
            wanted_len: 0,
        }
    }

    fn corrected(&self) -> bool {
        self.cfg.rules.variant == Variant::Corrected
    }

    fn r(&self) -> usize {
        self.cfg.rules.r as usize
    }

    fn arm(&self, tag: u64, ctx: &mut Ctx<'_, Self>) {
        // One decision stream per (node, timer): zeroing one timer's periods leaves the others.
        let ms = 1 + ctx.choose_at(tag as u32, PERIOD_MS);
        ctx.set_timer(SimDuration::from_millis(ms), tag);
    }

    fn arm_maintenance(&self, ctx: &mut Ctx<'_, Self>) {
        self.arm(TAG_STABILIZE, ctx);
        if !self.corrected() {
            self.arm(TAG_RECONCILE, ctx);
            self.arm(TAG_UPDATE, ctx);
            self.arm(TAG_FLUSH, ctx);
        }
    }

    fn become_member(&mut self, list: [u8; MAX_R], pred: u8, ctx: &mut Ctx<'_, Self>) {
        self.state = NodeState { member: true, list, pred, status: Status::Idle, saved: NONE };
        self.ever = true;
        self.arm_maintenance(ctx);
    }

    /// Sends a query and starts its timeout.
    fn query(&mut self, op: Op, peer: u8, msg: impl FnOnce(u32) -> Msg, ctx: &mut Ctx<'_, Self>) {
        self.seq += 1;
        let seq = self.seq;
        let wait = if op == Op::Join {
            // A routed lookup crosses up to `ids` hops before the answer comes back.
            SimDuration(self.cfg.timeout.0 * (self.cfg.rules.ids as u64 + 1))
        } else {
            self.cfg.timeout
        };
        let timer = ctx.set_timer(wait, TAG_TIMEOUT | seq as u64);
        self.out = Some(Outstanding { op, seq, peer, timer });
        ctx.send(peer as NodeId, msg(seq));
    }

    /// Takes the outstanding query if `seq` answers it.
    fn answer(&mut self, seq: u32, ctx: &mut Ctx<'_, Self>) -> Option<Outstanding> {
        match self.out {
            Some(o) if o.seq == seq => {
                ctx.cancel_timer(o.timer);
                self.out = None;
                Some(o)
            }
            _ => None,
        }
    }

    fn notify(&self, target: u8, ctx: &mut Ctx<'_, Self>) {
        if target != NONE {
            ctx.send(target as NodeId, Msg::Notify);
        }
    }

    fn start_join(&mut self, ctx: &mut Ctx<'_, Self>) {
        // Ask any other identity; a non-member does not answer and the lookup times out.
        let others = self.cfg.rules.ids as u64 - 1;
        let pick = ctx.choose(others) as u8;
        let to = if pick >= self.id { pick + 1 } else { pick };
        let joiner = self.id;
        self.query(Op::Join, to, |seq| Msg::FindSuccessor { joiner, seq, hops: 0 }, ctx);
    }

    fn on_tick(&mut self, tag: u64, ctx: &mut Ctx<'_, Self>) {
        if tag == TAG_JOIN {
            if !self.state.member && self.out.is_none() {
                self.start_join(ctx);
            }
            return;
        }
        if !self.state.member {
            return;
        }
        if self.out.is_some() {
            // One query at a time: queue the operation (FIFO, so none starves) and run it when
            // the current query is answered or times out.
            if !self.wanted[..self.wanted_len].contains(&(tag as u8)) {
                self.wanted[self.wanted_len] = tag as u8;
                self.wanted_len += 1;
            }
            return;
        }
        let me = self.id;
        let s = self.state.list[0];
        match tag {
            TAG_STABILIZE if self.corrected() => {
                if self.rectify_with != NONE {
                    self.rectify(ctx);
                } else if s == me || s == NONE {
                    // Cannot happen while NoDuplicates holds; keep the node alive regardless.
                } else {
                    self.query(Op::Stab1 { s }, s, |seq| Msg::GetPredAndSuccs { seq }, ctx);
                }
            }
            TAG_RECTIFY if self.corrected() => {
                if self.rectify_with != NONE {
                    self.rectify(ctx);
                }
                return;
            }
            TAG_STABILIZE => {
                if s == me {
                    let x = self.state.pred;
                    self.stabilize_with(x, ctx);
                } else {
                    self.query(Op::GetPred { s }, s, |seq| Msg::GetPred { seq }, ctx);
                }
            }
            TAG_RECONCILE => {
                if s == me {
                    let list = self.state.list;
                    if let Some(l) = reconcile_list(me, me, &list, self.r()) {
                        self.state.list = l;
                    }
                } else {
                    self.query(Op::Reconcile { s }, s, |seq| Msg::GetSuccList { seq }, ctx);
                }
            }
            TAG_UPDATE => {
                if s != me && self.state.list[1] != NONE {
                    self.query(Op::UpdatePing { s }, s, |seq| Msg::Ping { seq }, ctx);
                }
            }
            TAG_FLUSH => {
                let p = self.state.pred;
                if p != NONE && p != me {
                    self.query(Op::FlushPing { p }, p, |seq| Msg::Ping { seq }, ctx);
                }
            }
            _ => return,
        }
        self.arm(tag, ctx);
    }

    /// Starts queued operations while no query is outstanding.
    fn run_wanted(&mut self, ctx: &mut Ctx<'_, Self>) {
        while self.out.is_none() && self.wanted_len > 0 {
            let tag = self.wanted[0] as u64;
            self.wanted.copy_within(1..self.wanted_len, 0);
            self.wanted_len -= 1;
            self.on_tick(tag, ctx);
        }
    }

    /// Original stabilize, given the successor's predecessor `x`.
    fn stabilize_with(&mut self, x: u8, ctx: &mut Ctx<'_, Self>) {
        let me = self.id;
        let s = self.state.list[0];
        let adopt = stabilize_choice(me, s, x, true);
        if adopt != s && self.cfg.rules.variant.fixes() && adopt != me {
            // FIX-S: adopt x only if it answers.
            self.query(Op::StabPing { x: adopt }, adopt, |seq| Msg::Ping { seq }, ctx);
            return;
        }
        self.state.list[0] = adopt;
        self.notify(adopt, ctx);
    }

    /// Corrected rectify with the best notifier so far.
    fn rectify(&mut self, ctx: &mut Ctx<'_, Self>) {
        let n = self.rectify_with;
        self.rectify_with = NONE;
        let me = self.id;
        let pred = self.state.pred;
        if pred == NONE || pred == me || between(pred, n, me) {
            if rectify_adopts(pred, n, me, true) {
                self.state.pred = n;
            }
        } else {
            // Adopt n only if the current predecessor is dead.
            self.query(Op::RectPing { n }, pred, |seq| Msg::Ping { seq }, ctx);
        }
    }

    /// Updates after `s` (the first successor) was found dead.
    fn drop_first(&mut self) {
        if self.state.list[1] != NONE {
            let r = self.r();
            shift_left(&mut self.state.list, r);
        }
    }

    fn on_timeout(&mut self, seq: u32, ctx: &mut Ctx<'_, Self>) {
        let Some(o) = self.out.filter(|o| o.seq == seq) else { return };
        self.out = None;
        if o.op != Op::Join {
            self.suspected = Some((o.peer, ctx.now()));
        }
        match o.op {
            Op::Join | Op::JoinPing { .. } => {
                ctx.set_timer(SimDuration::from_millis(1), TAG_JOIN);
            }
            // The first successor is dead: Update (shift the list up).
            Op::GetPred { .. } | Op::Reconcile { .. } | Op::UpdatePing { .. } => self.drop_first(),
            // FIX-S: x did not answer, keep the successor.
            Op::StabPing { .. } => self.notify(self.state.list[0], ctx),
            // check_predecessor / Flush.
            Op::FlushPing { .. } => self.state.pred = NONE,
            // StabilizeFromSuccessor with a dead successor: shift up, notify the new first.
            Op::Stab1 { .. } => {
                let r = self.r();
                shift_left(&mut self.state.list, r);
                self.notify(self.state.list[0], ctx);
            }
            // StabilizeFromPredecessor with a dead p: keep the list, notify the first.
            Op::Stab2 { .. } => self.notify(self.state.list[0], ctx),
            // Rectify: the old predecessor is dead, adopt the notifier.
            Op::RectPing { n } => self.state.pred = n,
        }
    }

    /// Answers a state query, or says Busy (corrected, mid-operation).
    fn reply_state(&self, from: NodeId, msg: Msg, ctx: &mut Ctx<'_, Self>) {
        if !self.state.member {
            return; // no state: behaves as a failed node
        }
        let seq = match msg {
            Msg::GetPred { seq }
            | Msg::GetSuccList { seq }
            | Msg::GetPredAndSuccs { seq }
            | Msg::Ping { seq } => seq,
            _ => return,
        };
        if self.corrected() && self.out.is_some() && !matches!(msg, Msg::Ping { .. }) {
            ctx.send(from, Msg::Busy { seq });
            return;
        }
        let reply = match msg {
            Msg::GetPred { .. } => Msg::Pred { pred: self.state.pred, seq },
            Msg::GetSuccList { .. } => Msg::SuccList { list: self.state.list, seq },
            Msg::GetPredAndSuccs { .. } => {
                Msg::PredAndSuccs { pred: self.state.pred, list: self.state.list, seq }
            }
            _ => Msg::Pong { seq },
        };
        ctx.send(from, reply);
    }

    fn on_find(&mut self, joiner: u8, seq: u32, hops: u8, ctx: &mut Ctx<'_, Self>) {
        if !self.state.member || (self.corrected() && self.out.is_some()) {
            return; // the joiner's lookup times out and retries
        }
        let me = self.id;
        let s = self.state.list[0];
        if between(me, joiner, s) {
            ctx.send(joiner as NodeId, Msg::Found { via: me, list: self.state.list, seq });
        } else if (hops as u32) < self.cfg.rules.ids as u32 && s != me {
            ctx.send(s as NodeId, Msg::FindSuccessor { joiner, seq, hops: hops + 1 });
        }
    }

    fn on_reply(&mut self, msg: Msg, ctx: &mut Ctx<'_, Self>) {
        let seq = match msg {
            Msg::Found { seq, .. }
            | Msg::Pred { seq, .. }
            | Msg::SuccList { seq, .. }
            | Msg::PredAndSuccs { seq, .. }
            | Msg::Pong { seq }
            | Msg::Busy { seq } => seq,
            _ => return,
        };
        let Some(o) = self.answer(seq, ctx) else { return };
        let me = self.id;
        let r = self.r();
        if let Msg::Busy { .. } = msg {
            // Abandon the operation (nothing was applied) and retry on the next tick.
            if o.op == Op::Join || matches!(o.op, Op::JoinPing { .. }) {
                self.arm(TAG_JOIN, ctx);
            }
            return;
        }
        match (o.op, msg) {
            (Op::Join, Msg::Found { via, list, .. }) => {
                if self.state.member {
                    return;
                }
                if self.corrected() {
                    self.become_member(list, via, ctx);
                } else if self.cfg.rules.variant.fixes() && list[0] != me {
                    let s = list[0];
                    self.query(Op::JoinPing { via, list }, s, |seq| Msg::Ping { seq }, ctx);
                } else {
                    let mut l = [NONE; MAX_R];
                    l[0] = list[0];
                    self.become_member(l, NONE, ctx);
                }
            }
            (Op::JoinPing { list, .. }, Msg::Pong { .. }) => {
                let mut l = [NONE; MAX_R];
                l[0] = list[0];
                self.become_member(l, NONE, ctx);
            }
            (Op::GetPred { s }, Msg::Pred { pred, .. }) if self.state.list[0] == s => {
                self.stabilize_with(pred, ctx);
            }
            (Op::StabPing { x }, Msg::Pong { .. }) => {
                self.state.list[0] = x;
                self.notify(x, ctx);
            }
            (Op::Reconcile { s }, Msg::SuccList { list, .. }) if self.state.list[0] == s => {
                if let Some(l) = reconcile_list(me, s, &list, r) {
                    self.state.list = l;
                }
            }
            (Op::Stab1 { s }, Msg::PredAndSuccs { pred, list, .. }) => {
                self.state.list = adopt_list(s, &list, r);
                if pred != NONE && between(me, pred, s) {
                    self.query(Op::Stab2 { p: pred }, pred, |seq| Msg::GetSuccList { seq }, ctx);
                } else {
                    self.notify(s, ctx);
                }
            }
            (Op::Stab2 { p }, Msg::SuccList { list, .. }) => {
                self.state.list = adopt_list(p, &list, r);
                self.notify(p, ctx);
            }
            // A live peer answered: nothing to change (update, flush, rectify keep their state).
            _ => {}
        }
    }
}

impl Node for ChordNode {
    type Msg = Msg;
    type Req = ();
    type Obs = ();

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        if self.state.member {
            self.arm_maintenance(ctx);
        } else {
            let at = 1 + ctx.choose(self.cfg.join_window_ms.max(1));
            ctx.set_timer(SimDuration::from_millis(at), TAG_JOIN);
        }
    }

    fn on_recover(&mut self, ctx: &mut Ctx<'_, Self>) {
        // A restarted identity has lost everything. Without reuse it stays out for good.
        self.state = NodeState::default();
        self.ever = true;
        self.wanted_len = 0;
        if self.cfg.rules.reuse {
            self.arm(TAG_JOIN, ctx);
        }
    }

    fn on_message(&mut self, from: NodeId, msg: Msg, ctx: &mut Ctx<'_, Self>) {
        match msg {
            Msg::FindSuccessor { joiner, seq, hops } => self.on_find(joiner, seq, hops, ctx),
            Msg::GetPred { .. }
            | Msg::GetSuccList { .. }
            | Msg::GetPredAndSuccs { .. }
            | Msg::Ping { .. } => self.reply_state(from, msg, ctx),
            Msg::Notify => {
                if !self.state.member {
                    return;
                }
                let n = from as u8;
                if self.corrected() {
                    // Keep the better of two notifiers; rectify later, when not busy.
                    let me = self.id;
                    if self.rectify_with == NONE || between(self.rectify_with, n, me) {
                        self.rectify_with = n;
                    }
                    self.arm(TAG_RECTIFY, ctx);
                } else if accept_notify(self.state.pred, n, self.id) {
                    self.state.pred = n;
                }
            }
            other => self.on_reply(other, ctx),
        }
        self.run_wanted(ctx);
    }

    fn on_timer(&mut self, _timer: TimerId, tag: u64, ctx: &mut Ctx<'_, Self>) {
        if tag & TAG_TIMEOUT != 0 {
            self.on_timeout((tag & 0xffff_ffff) as u32, ctx);
        } else {
            self.on_tick(tag, ctx);
        }
        self.run_wanted(ctx);
    }

    /// The replica's protocol state, as a coverage feature.
    fn feature(&self) -> u64 {
        weft_core::stable_hash(&(self.id, self.state))
    }

    /// The ring's shape (which nodes form rings and appendages, which properties fail): the
    /// abstract state Zave's properties are about, which no single replica's state shows.
    fn world_feature(view: &View<'_, Self>) -> u64 {
        if !config_of(view).is_some_and(|c| c.ring_feature) {
            return 0;
        }
        match ground_truth(view) {
            Some((ring, rules)) => props::check(&ring, &rules).1 | 1,
            None => 0,
        }
    }

    fn describe(&self) -> String {
        if !self.state.member {
            return if self.ever { "out".into() } else { "not joined".into() };
        }
        let name = |e: u8| if e == NONE { "-".to_string() } else { format!("n{e}") };
        let list: Vec<String> = self.state.list[..self.r()].iter().map(|&e| name(e)).collect();
        format!("[{}] p={}", list.join(", "), name(self.state.pred))
    }
}

/// Any node's configuration (every node carries the same one).
fn config_of(view: &View<'_, ChordNode>) -> Option<NodeConfig> {
    view.nodes().find_map(|(_, n)| n.map(|n| n.cfg))
}

/// Ground truth as a [`Ring`]: the states of live members, notifies in flight as pending.
pub fn ground_truth(view: &View<'_, ChordNode>) -> Option<(Ring, Rules)> {
    let cfg = config_of(view)?;
    let mut ring = Ring::empty();
    for (id, node) in view.nodes() {
        if let Some(n) = node {
            if n.ever || n.state.member {
                ring.ever |= 1 << id;
            }
            if n.state.member {
                ring.nodes[id as usize] = n.state;
            }
        } else {
            ring.ever |= 1 << id; // crashed: it was up, so it may have been a member
        }
    }
    if cfg.rules.variant != Variant::Corrected {
        for (from, to, msg) in view.in_flight() {
            if *msg == Msg::Notify && (to as usize) < MAX_IDS {
                ring.pending |= 1u64 << (to * 8 + from);
            }
        }
    }
    Some((ring, cfg.rules))
}

/// The successor lists that replies in flight will install when they arrive, as extended
/// lists `(receiver, [receiver] ++ list)`: for each reply to an up node whose outstanding query
/// it answers, the list that node adopts on receipt (a joiner's first list, a FIX-J/FIX-S ping
/// that is about to be believed, a reconcile, a corrected stabilize). This generalises
/// verdi-chord's "lists carried in in-flight replies" to every check-then-act window of the
/// message protocol, so the gate never approves a failure that a reply already on its way would
/// turn into a list with no live entry.
fn in_flight_lists(view: &View<'_, ChordNode>) -> Vec<(u8, [u8; MAX_R + 1])> {
    let mut out = Vec::new();
    for (_, to, msg) in view.in_flight() {
        let Some(node) = view.node(to) else { continue };
        let Some(o) = node.out else { continue };
        let r = node.r();
        let seq = match msg {
            Msg::Found { seq, .. }
            | Msg::SuccList { seq, .. }
            | Msg::PredAndSuccs { seq, .. }
            | Msg::Pong { seq } => *seq,
            _ => continue,
        };
        if seq != o.seq {
            continue;
        }
        let mut list = [NONE; MAX_R];
        match (o.op, msg) {
            (Op::Join, Msg::Found { list: l, .. }) if node.corrected() => list = *l,
            (Op::Join, Msg::Found { list: l, .. }) => list[0] = l[0],
            (Op::JoinPing { list: l, .. }, Msg::Pong { .. }) => list[0] = l[0],
            (Op::StabPing { x }, Msg::Pong { .. }) => {
                list = node.state.list;
                list[0] = x;
            }
            (Op::Reconcile { s }, Msg::SuccList { list: l, .. })
            | (Op::Stab1 { s }, Msg::PredAndSuccs { list: l, .. })
            | (Op::Stab2 { p: s }, Msg::SuccList { list: l, .. }) => list = adopt_list(s, l, r),
            _ => continue,
        }
        let mut esl = [NONE; MAX_R + 1];
        esl[0] = to as u8;
        esl[1..].copy_from_slice(&list);
        out.push((to as u8, esl));
    }
    out
}

/// The fault gate (§5.2.5) on ground truth, counting lists in in-flight replies.
fn crash_gate(view: &View<'_, ChordNode>, victim: NodeId) -> bool {
    let Some((ring, rules)) = ground_truth(view) else { return false };
    if !ring.member(victim as u8) {
        return false; // Zave's Fail applies to members only
    }
    ring.fail_allowed(&rules, victim as u8, &in_flight_lists(view))
}

/// The perfect failure detector the model assumes.
fn perfect_detector(view: &View<'_, ChordNode>) -> Result<(), String> {
    for (id, node) in view.nodes() {
        let Some(n) = node else { continue };
        let Some((peer, at)) = n.suspected else { continue };
        if at != view.now {
            continue;
        }
        let live = view.node(peer as NodeId).is_some_and(|p| p.state.member);
        let reply_in_flight = view.in_flight().any(|(f, t, _)| f == peer as NodeId && t == id);
        if live || reply_in_flight {
            return Err(format!(
                "n{id} timed out on n{peer}, which is {}",
                if live { "a live member" } else { "dead but its reply is in flight" }
            ));
        }
    }
    Ok(())
}

thread_local! {
    /// The last ground truth evaluated: (state hash, violations, heals?). weft-sim calls one
    /// property function per property after every event, all on the same state; this memo
    /// (a pure function cache, so determinism is unaffected) computes the state's verdicts
    /// once instead of twelve times.
    static MEMO: std::cell::Cell<(u64, props::Violations, Option<bool>)> =
        const { std::cell::Cell::new((0, 0, None)) };
}

/// Violations of `ring`, memoised per state.
fn memo_violations(ring: &Ring, rules: &Rules) -> (u64, props::Violations) {
    let h = ring.state_hash() ^ weft_core::stable_hash(rules);
    let (mh, mv, _) = MEMO.with(|m| m.get());
    if mh == h && h != 0 {
        return (h, mv);
    }
    let v = props::violations(ring, rules);
    MEMO.with(|m| m.set((h, v, None)));
    (h, v)
}

fn memo_heals(h: u64, ring: &Ring, rules: &Rules) -> bool {
    let (mh, mv, healed) = MEMO.with(|m| m.get());
    if mh == h {
        if let Some(x) = healed {
            return x;
        }
    }
    let x = heals(ring, rules);
    if mh == h {
        MEMO.with(|m| m.set((h, mv, Some(x))));
    }
    x
}

/// Evaluates `p` on ground truth under the run's policy.
fn check(view: &View<'_, ChordNode>, p: Property) -> Result<(), String> {
    // The policy first: most properties are not counted at all, and building ground truth
    // (every node and message) after every event is the expensive part.
    let Some(cfg) = config_of(view) else { return Ok(()) };
    let always = cfg.policy.always & p.bit() != 0;
    let permanent_only = cfg.policy.if_permanent & p.bit() != 0;
    if !always && !permanent_only {
        return Ok(());
    }
    let Some((ring, rules)) = ground_truth(view) else { return Ok(()) };
    let (h, v) = memo_violations(&ring, &rules);
    if v & p.bit() == 0 {
        return Ok(());
    }
    let healed = memo_heals(h, &ring, &rules);
    if permanent_only && healed {
        return Ok(());
    }
    let class = crate::atomic::class(healed);
    Err(format!("{class}; {}; state: {}", props::witness(&ring, &rules, p), ring.describe(&rules)))
}

macro_rules! property_fns {
    ($($f:ident => $p:ident),* $(,)?) => {
        $(fn $f(view: &View<'_, ChordNode>) -> Result<(), String> { check(view, Property::$p) })*
        fn property_table() -> Vec<(Property, fn(&View<'_, ChordNode>) -> Result<(), String>)> {
            vec![$((Property::$p, $f as fn(&View<'_, ChordNode>) -> Result<(), String>)),*]
        }
    };
}

property_fns!(
    at_least_one_ring => AtLeastOneRing,
    at_most_one_ring => AtMostOneRing,
    ordered_ring => OrderedRing,
    connected_appendages => ConnectedAppendages,
    ordered_appendages => OrderedAppendages,
    ordered_merges => OrderedMerges,
    valid_successor_list => ValidSuccessorList,
    one_live_successor => OneLiveSuccessor,
    sufficient_principals => SufficientPrincipals,
    ordered_successor_lists => OrderedSuccessorLists,
    no_duplicates => NoDuplicates,
);

fn eventually_ideal(view: &View<'_, ChordNode>) -> Result<(), String> {
    let Some((ring, rules)) = ground_truth(view) else { return Err("no node is up".into()) };
    if props::ideal(&ring, &rules) {
        Ok(())
    } else {
        Err(format!("not Ideal: {}", ring.describe(&rules)))
    }
}

/// The scenario message mode uses by default: no loss or duplication (Zave's model has none),
/// delays on (late notifies), up to `failures` crashes, no restarts, no pauses or partitions
/// (those would only produce OutsideModel runs).
pub fn default_scenario(cfg: &Config) -> Scenario {
    let mut s = Scenario::calm();
    s.restart = false;
    s.rates.delay = weft_core::Ratio::new(1, 10);
    s.rates.crash = weft_core::Ratio::new(1, 100);
    s.budget.crashes = cfg.rules.max_failures as u32;
    s.budget.drops = 0;
    s.budget.duplicates = 0;
    s.budget.pauses = 0;
    s.budget.partitions = 0;
    s.fault_phase = SimDuration::from_secs(1);
    s.heal_phase = SimDuration::from_secs(5);
    s
}

/// One run in message mode.
pub fn run(
    cfg: &Config,
    scenario: &Scenario,
    decisions: &mut Decisions,
    obs: &mut dyn Observer,
) -> RunReport {
    let ids = if cfg.ids_max > cfg.ids_min {
        cfg.ids_min + decisions.choose((cfg.ids_max - cfg.ids_min + 1) as u64) as u8
    } else {
        cfg.ids_min
    };
    let rules = Rules { ids, ..cfg.rules };
    let initial = if rules.variant == Variant::Corrected {
        let sets = crate::atomic::initial_sets(ids, cfg.initial.min(ids));
        sets[decisions.choose(sets.len() as u64) as usize]
    } else {
        1
    };
    let rtt = scenario.latency_max.0 + scenario.delay_max.0;
    let node_cfg = NodeConfig {
        rules,
        policy: Policy::of(rules.variant, cfg.focus),
        timeout: SimDuration(2 * rtt + 1_000_000),
        join_window_ms: (scenario.fault_phase.0 / 2_000_000).max(1),
        initial,
        ring_feature: cfg.ring_feature,
    };
    let mut properties: Vec<weft_sim::Property<ChordNode>> = property_table()
        .into_iter()
        .map(|(p, check)| weft_sim::Property { name: p.name(), modality: Modality::Always, check })
        .collect();
    properties.push(weft_sim::Property {
        name: Property::EventuallyIdeal.name(),
        modality: Modality::Eventually,
        check: eventually_ideal,
    });
    let sim = SimSpec {
        nodes: ids as usize,
        make: Box::new(move |id| ChordNode::new(id as u8, node_cfg)),
        workload: Box::new(|_, _| Vec::new()),
        properties,
        assumptions: vec![weft_sim::Property {
            name: "PerfectFailureDetector",
            modality: Modality::Always,
            check: perfect_detector,
        }],
        crash_gate: Some(crash_gate),
        focus: cfg.focus.map(|p| p.name().to_string()),
    };
    sim.run(scenario, decisions, obs)
}
