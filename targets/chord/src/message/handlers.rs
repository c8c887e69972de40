//! What a replica does on each datagram and timer: answers state queries and lookups, applies
//! the reply to its outstanding query, and weft-sim's [`Node`] trait (start, recover, message,
//! timer, the coverage features).

use super::replica::ChordNode;
use super::truth::{config_of, ground_truth};
use super::wire::*;
use crate::model::{accept_notify, adopt_list, between, reconcile_list, NodeState, MAX_R, NONE};
use crate::props;
use weft_core::SimDuration;
use weft_sim::{Ctx, Node, NodeId, TimerId, View};

impl ChordNode {
    /// Answers a state query, or says Busy (corrected, mid-operation).
    pub(super) fn reply_state(&self, from: NodeId, msg: Msg, ctx: &mut Ctx<'_, Self>) {
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

    pub(super) fn on_find(&mut self, joiner: u8, seq: u32, hops: u8, ctx: &mut Ctx<'_, Self>) {
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

    pub(super) fn on_reply(&mut self, msg: Msg, ctx: &mut Ctx<'_, Self>) {
        let Some(seq) = msg.reply_seq() else { return };
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

    fn settled(view: &View<'_, Self>) -> bool {
        super::settle::settled(view)
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
