//! One Chord replica of message mode: its state, its periodic maintenance timers, and the
//! operations those timers start (each a query to one peer, answered in [`super::handlers`] or
//! ended by its timeout here).

use super::wire::*;
use crate::atomic::Policy;
use crate::model::{
    between, reconcile_list, rectify_adopts, shift_left, stabilize_choice, NodeState, Ring, Rules,
    Status, Variant, MAX_R, NONE,
};
use weft_core::{SimDuration, SimTime};
use weft_sim::{Ctx, NodeId};

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
    /// End the run once it is settled ([`Config::settle`](crate::Config)).
    pub settle: bool,
    /// The scenario's fault phase: an idle timer (`ChordNode::arm`) fires after it.
    pub fault_phase: SimDuration,
}

/// One Chord replica in message mode.
pub struct ChordNode {
    pub(super) id: u8,
    pub(super) cfg: NodeConfig,
    pub state: NodeState,
    /// Has this identity ever been a member (for `reuse=false` after a restart)?
    pub ever: bool,
    pub(super) out: Option<Outstanding>,
    pub(super) seq: u32,
    /// Corrected: the best notifier waiting to be rectified.
    pub(super) rectify_with: u8,
    /// The peer this node last declared dead, and when (for the perfect-detector assumption).
    pub suspected: Option<(u8, SimTime)>,
    /// Operations whose timer fired while a query was outstanding, oldest first.
    pub(super) wanted: [u8; 8],
    pub(super) wanted_len: usize,
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

    pub(super) fn corrected(&self) -> bool {
        self.cfg.rules.variant == Variant::Corrected
    }

    pub(super) fn r(&self) -> usize {
        self.cfg.rules.r as usize
    }

    /// Arms a maintenance timer (or the join retry). One decision stream per (node, timer), so
    /// zeroing one timer's periods leaves the others. The value is encoded so that smaller
    /// means quieter — the shrinker's simplest run is the one with the least background
    /// traffic ([`wait_of`]): 0 leaves the timer idle until the heal phase, the next
    /// `LONG_WAITS` values wait longer than any period (the longest first), then come the
    /// periods, longest first. At random, idling or a long wait is a 21-in-4021 draw and every
    /// period in `1..=PERIOD_MS` is equally likely, as before. Both are legal schedules (Zave's
    /// model lets any operation wait arbitrarily long); in the heal phase 0 is the longest
    /// period, so every timer keeps firing there and liveness is judged on a fair run.
    pub(super) fn arm(&self, tag: u64, ctx: &mut Ctx<'_, Self>) {
        let v = ctx.choose_at(tag as u32, 1 + LONG_WAITS + PERIOD_MS * PERIOD_SLOTS);
        let heal = SimTime::ZERO + self.cfg.fault_phase;
        let after = match wait_of(v) {
            None if ctx.now() < heal => SimDuration(heal.0 - ctx.now().0) + ms(PERIOD_MS),
            None => ms(PERIOD_MS),
            Some(wait) => wait,
        };
        ctx.set_timer(after, tag);
    }

    pub(super) fn arm_maintenance(&self, ctx: &mut Ctx<'_, Self>) {
        self.arm(TAG_STABILIZE, ctx);
        if !self.corrected() {
            self.arm(TAG_RECONCILE, ctx);
            self.arm(TAG_UPDATE, ctx);
            self.arm(TAG_FLUSH, ctx);
        }
    }

    pub(super) fn become_member(&mut self, list: [u8; MAX_R], pred: u8, ctx: &mut Ctx<'_, Self>) {
        self.state = NodeState { member: true, list, pred, status: Status::Idle, saved: NONE };
        self.ever = true;
        self.arm_maintenance(ctx);
    }

    /// Sends a query and starts its timeout.
    pub(super) fn query(
        &mut self,
        op: Op,
        peer: u8,
        msg: impl FnOnce(u32) -> Msg,
        ctx: &mut Ctx<'_, Self>,
    ) {
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
    pub(super) fn answer(&mut self, seq: u32, ctx: &mut Ctx<'_, Self>) -> Option<Outstanding> {
        match self.out {
            Some(o) if o.seq == seq => {
                ctx.cancel_timer(o.timer);
                self.out = None;
                Some(o)
            }
            _ => None,
        }
    }

    pub(super) fn notify(&self, target: u8, ctx: &mut Ctx<'_, Self>) {
        if target != NONE {
            ctx.send(target as NodeId, Msg::Notify);
        }
    }

    pub(super) fn start_join(&mut self, ctx: &mut Ctx<'_, Self>) {
        // Ask any other identity; a non-member does not answer and the lookup times out.
        let others = self.cfg.rules.ids as u64 - 1;
        let pick = ctx.choose(others) as u8;
        let to = if pick >= self.id { pick + 1 } else { pick };
        let joiner = self.id;
        self.query(Op::Join, to, |seq| Msg::FindSuccessor { joiner, seq, hops: 0 }, ctx);
    }

    pub(super) fn on_tick(&mut self, tag: u64, ctx: &mut Ctx<'_, Self>) {
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
    pub(super) fn run_wanted(&mut self, ctx: &mut Ctx<'_, Self>) {
        while self.out.is_none() && self.wanted_len > 0 {
            let tag = self.wanted[0] as u64;
            self.wanted.copy_within(1..self.wanted_len, 0);
            self.wanted_len -= 1;
            self.on_tick(tag, ctx);
        }
    }

    /// Original stabilize, given the successor's predecessor `x`.
    pub(super) fn stabilize_with(&mut self, x: u8, ctx: &mut Ctx<'_, Self>) {
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
    pub(super) fn rectify(&mut self, ctx: &mut Ctx<'_, Self>) {
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
    pub(super) fn drop_first(&mut self) {
        if self.state.list[1] != NONE {
            let r = self.r();
            shift_left(&mut self.state.list, r);
        }
    }

    pub(super) fn on_timeout(&mut self, seq: u32, ctx: &mut Ctx<'_, Self>) {
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
}

fn ms(n: u64) -> SimDuration {
    SimDuration::from_millis(n)
}

/// The wait a maintenance timer's decision value stands for (None: idle until the heal phase).
/// Monotone: a smaller value never waits less, so lowering a value never adds firings.
pub(super) fn wait_of(v: u64) -> Option<SimDuration> {
    match v {
        0 => None,
        v if v <= LONG_WAITS => Some(ms(PERIOD_MS + (LONG_WAITS + 1 - v) * LONG_STEP_MS)),
        v => Some(ms(PERIOD_MS - (v - LONG_WAITS - 1) / PERIOD_SLOTS)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smaller_values_never_wait_less_and_periods_stay_uniform() {
        let bound = 1 + LONG_WAITS + PERIOD_MS * PERIOD_SLOTS;
        let wait = |v| wait_of(v).map_or(u64::MAX, |d| d.0);
        assert_eq!(wait_of(0), None, "0 idles");
        for v in 1..bound {
            assert!(wait(v) <= wait(v - 1), "value {v} waits longer than {}", v - 1);
        }
        assert_eq!(wait(bound - 1), SimDuration::from_millis(1).0, "the highest is 1 ms");
        // Past the long waits, every period 1..=PERIOD_MS has PERIOD_SLOTS values.
        for p in 1..=PERIOD_MS {
            let n = (LONG_WAITS + 1..bound).filter(|&v| wait(v) == ms(p).0).count();
            assert_eq!(n as u64, PERIOD_SLOTS, "period {p} ms");
        }
        assert!((1..=LONG_WAITS).all(|v| wait(v) > ms(PERIOD_MS).0));
    }
}
