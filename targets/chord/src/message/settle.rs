//! When a message-mode run is *settled* (weft-sim's [`weft_sim::Node::settled`]): the heal
//! phase has begun and nothing left in the run can change a replica's ring state, so no
//! property can change either and a passing run may end there instead of running out the heal
//! phase (about six in seven of a run's events at the default scenario).
//!
//! The argument. Ground truth is Ideal, and in Zave's atomic model no maintenance step is
//! effective on it (without joins and failures an ideal network stays ideal). Every live node
//! is a member, so nobody joins, and weft-sim asks only in the heal phase and ends a run only
//! with nothing queued but timers and messages, so nobody fails or comes back. What could still act on a replica
//! is then: a timer (it starts an operation on the ideal state: a no-op), a query in flight
//! (answered from an ideal state), a reply in flight, an operation outstanding, and a notify
//! in flight or (corrected) waiting to be rectified. Each of those is checked to be a no-op
//! by name: a reply that will be applied carries exactly what its sender's state says now;
//! an outstanding operation targets the node's current successor (or predecessor) and a live
//! member, so it is answered before its timeout and applies the ideal state; a notify is one
//! the receiver ignores. By induction on the events that follow, every state stays as it is.
//! `settled_runs_judge_every_run_alike` (tests/message.rs) checks the claim empirically: with
//! and without settling, every run of every variant ends alike.

use super::replica::ChordNode;
use super::truth::{config_of, ground_truth};
use super::wire::{Msg, Op};
use crate::model::{
    accept_notify, between, Enabled, Ring, Rules, Status, Step, Variant, MAX_IDS, NONE,
};
use crate::props;
use weft_sim::{NodeId, View};

/// Is the run settled? (weft-sim asks only in the heal phase, and ends the run only if
/// nothing but timers and messages is queued.)
pub(super) fn settled(view: &View<'_, ChordNode>) -> bool {
    let Some(cfg) = config_of(view) else { return false };
    if !cfg.settle {
        return false;
    }
    let nodes_quiet = view.nodes().all(|(_, n)| n.is_none_or(|n| node_quiet(view, n)));
    if !nodes_quiet || !view.in_flight().all(|(from, to, msg)| message_inert(view, from, to, msg)) {
        return false;
    }
    let Some((mut ring, rules)) = ground_truth(view) else { return false };
    if !props::ideal(&ring, &rules) {
        return false;
    }
    // Notifies in flight were judged above, by the protocol's own acceptance rule.
    ring.pending = 0;
    atomic_fixpoint(&ring, &rules)
}

/// Does every maintenance step of Zave's model, carried to its end (the notify it sends
/// delivered; corrected: the rectify or second stabilize half it starts), leave `ring` as it is?
fn atomic_fixpoint(ring: &Ring, rules: &Rules) -> bool {
    let mut steps = Enabled::default();
    ring.enabled(rules, false, &mut steps);
    steps.as_slice().iter().all(|&step| {
        let mut next = *ring;
        next.apply(rules, step);
        finish(&mut next, rules) && next == *ring
    })
}

/// Delivers pending notifies and runs the halves of corrected operations a step left
/// started, until every node is idle (false if that takes implausibly long).
fn finish(ring: &mut Ring, rules: &Rules) -> bool {
    for _ in 0..4 * MAX_IDS {
        if ring.pending != 0 {
            let bit = ring.pending.trailing_zeros() as u8;
            ring.apply(rules, Step::Notified { target: bit / 8, from: bit % 8 });
            continue;
        }
        let busy = (0..rules.ids).find(|&n| ring.nodes[n as usize].status != Status::Idle);
        let Some(n) = busy else { return true };
        let step = match ring.nodes[n as usize].status {
            Status::Stabilizing => Step::StabilizeFromPredecessor(n),
            _ => Step::Rectify(n),
        };
        ring.apply(rules, step);
    }
    false
}

/// A live replica that is a member, whose outstanding operation (if any) will apply the ideal
/// state, and whose waiting rectify (corrected) changes nothing.
fn node_quiet(view: &View<'_, ChordNode>, n: &ChordNode) -> bool {
    if !n.state.member {
        return false;
    }
    if n.rectify_with != NONE && !notify_ignored(n, n.rectify_with) {
        return false;
    }
    let Some(o) = n.out else { return true };
    let (s, p) = (n.state.list[0], n.state.pred);
    let on_course = match o.op {
        Op::GetPred { s: t }
        | Op::Reconcile { s: t }
        | Op::Stab1 { s: t }
        | Op::UpdatePing { s: t }
        | Op::Stab2 { p: t } => t == s,
        Op::StabPing { x } => x == s,
        Op::FlushPing { p: t } => t == p,
        Op::RectPing { .. } => o.peer == p,
        Op::Join | Op::JoinPing { .. } => false,
    };
    on_course && view.node(o.peer as NodeId).is_some_and(|peer| peer.state.member)
}

/// Does the receiver ignore a notify from `from`, now and (its state not changing) ever?
fn notify_ignored(n: &ChordNode, from: u8) -> bool {
    let (pred, me) = (n.state.pred, n.id);
    if n.cfg.rules.variant == Variant::Corrected {
        // Rectify adopts a notifier inside (pred, me); otherwise it pings the live pred.
        pred != NONE && pred != me && !between(pred, from, me)
    } else {
        !accept_notify(pred, from, me)
    }
}

/// Will this message change nothing when it arrives?
fn message_inert(view: &View<'_, ChordNode>, from: NodeId, to: NodeId, msg: &Msg) -> bool {
    let Some(rx) = view.node(to) else { return true }; // lost with its receiver
    if *msg == Msg::Notify {
        return notify_ignored(rx, from as u8);
    }
    // A query is answered from the (ideal) state it finds.
    let Some(reply_seq) = msg.reply_seq() else { return true };
    if rx.out.is_none_or(|o| o.seq != reply_seq) {
        return true; // answers no outstanding query: dropped on arrival
    }
    let Some(tx) = view.node(from) else { return false };
    match *msg {
        Msg::Pred { pred, .. } => pred == tx.state.pred,
        Msg::SuccList { list, .. } => list == tx.state.list,
        Msg::PredAndSuccs { pred, list, .. } => pred == tx.state.pred && list == tx.state.list,
        Msg::Pong { .. } | Msg::Busy { .. } => true,
        _ => false, // a Found to a member's join: members have none outstanding
    }
}
