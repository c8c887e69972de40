//! Ground truth of a message-mode run and everything read from it: the ring built from every
//! live replica's state and the notifies in flight, the lists that replies in flight will
//! install, the crash gate (§5.2.5), the perfect-failure-detector assumption, and the
//! properties (memoised per state, since weft-sim checks each one after every event).

use super::replica::{ChordNode, NodeConfig};
use super::wire::{Msg, Op};
use crate::atomic::heals;
use crate::model::{adopt_list, Ring, Rules, Variant, MAX_IDS, MAX_R, NONE};
use crate::props::{self, Property};
use weft_sim::{NodeId, View};

/// Any node's configuration (every node carries the same one).
pub(super) fn config_of(view: &View<'_, ChordNode>) -> Option<NodeConfig> {
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
pub(super) fn in_flight_lists(view: &View<'_, ChordNode>) -> Vec<(u8, [u8; MAX_R + 1])> {
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
pub(super) fn crash_gate(view: &View<'_, ChordNode>, victim: NodeId) -> bool {
    let Some((ring, rules)) = ground_truth(view) else { return false };
    if !ring.member(victim as u8) {
        return false; // Zave's Fail applies to members only
    }
    ring.fail_allowed(&rules, victim as u8, &in_flight_lists(view))
}

/// The perfect failure detector the model assumes.
pub(super) fn perfect_detector(view: &View<'_, ChordNode>) -> Result<(), String> {
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

/// The last ground truth evaluated and its verdicts: weft-sim calls one property function
/// per property after every event, all on the same state; this memo (a pure function cache,
/// so determinism is unaffected) computes the state's verdicts once instead of twelve times.
/// Keyed by the state itself: comparing it is cheaper than hashing it.
#[derive(Clone, Copy)]
struct Memo {
    ring: Ring,
    rules: Rules,
    violations: props::Violations,
    healed: Option<bool>,
}

thread_local! {
    static MEMO: std::cell::Cell<Option<Memo>> = const { std::cell::Cell::new(None) };
}

/// The memo entry for `ring` under `rules`, its violations computed if it was not there.
fn memo_of(ring: &Ring, rules: &Rules) -> Memo {
    if let Some(m) = MEMO.with(|m| m.get()).filter(|m| m.ring == *ring && m.rules == *rules) {
        return m;
    }
    let m = Memo {
        ring: *ring,
        rules: *rules,
        violations: props::violations(ring, rules),
        healed: None,
    };
    MEMO.with(|c| c.set(Some(m)));
    m
}

/// Does `ring` heal (memoised with its violations)?
fn memo_heals(mut m: Memo) -> bool {
    if let Some(x) = m.healed {
        return x;
    }
    let x = heals(&m.ring, &m.rules);
    m.healed = Some(x);
    MEMO.with(|c| c.set(Some(m)));
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
    let memo = memo_of(&ring, &rules);
    if memo.violations & p.bit() == 0 {
        return Ok(());
    }
    let healed = memo_heals(memo);
    if permanent_only && healed {
        return Ok(());
    }
    let class = crate::atomic::class(healed);
    Err(format!("{class}; {}; state: {}", props::witness(&ring, &rules, p), ring.describe(&rules)))
}

macro_rules! property_fns {
    ($($f:ident => $p:ident),* $(,)?) => {
        $(fn $f(view: &View<'_, ChordNode>) -> Result<(), String> { check(view, Property::$p) })*
        pub(super) fn property_table() -> Vec<(Property, fn(&View<'_, ChordNode>) -> Result<(), String>)> {
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

pub(super) fn eventually_ideal(view: &View<'_, ChordNode>) -> Result<(), String> {
    let Some((ring, rules)) = ground_truth(view) else { return Err("no node is up".into()) };
    if props::ideal(&ring, &rules) {
        Ok(())
    } else {
        Err(format!("not Ideal: {}", ring.describe(&rules)))
    }
}
