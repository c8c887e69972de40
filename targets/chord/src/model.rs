//! The replica logic as pure state-transition functions over ground truth, shared by atomic mode
//! (one call = one atomic step of Zave's models) and message mode (a handler calls the same
//! functions when the reply that completes an operation arrives).
//!
//! Identities are small integers `0..ids` on a circle of size `ids`: only their relative order
//! matters (spec §5.2.2), so node, address and identifier are one number, as in Zave's models.
//! Everything is fixed-size (`[NodeState; MAX_IDS]`, lists of `MAX_R` entries padded with
//! [`NONE`]) so that a step allocates nothing.

use std::fmt::Write as _;
use std::hash::Hasher;
use weft_core::StableHasher;

/// Largest identifier space a run may use.
pub const MAX_IDS: usize = 8;
/// Longest successor list.
pub const MAX_R: usize = 4;
/// "No node": an empty list slot or an undefined predecessor.
pub const NONE: u8 = u8::MAX;

/// `b` lies strictly inside the clockwise open interval `(a, c)`; for `a == c` every `b != a`
/// does (Zave: `Between[x, y, x]` holds for all `y != x`).
#[inline]
pub fn between(a: u8, b: u8, c: u8) -> bool {
    if a < c {
        a < b && b < c
    } else {
        a < b || b < c
    }
}

/// Which protocol the replicas run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// SIGCOMM 2001 + PODC 2002 successor-list operations, without the two obvious fixes.
    Literal,
    /// Literal + FIX-J + FIX-S: the protocol Zave analysed in CCR 2012 (spec §1.3).
    Original,
    /// Zave's corrected protocol (TSE 2017, spec §4.2).
    Corrected,
}

impl Variant {
    pub fn name(self) -> &'static str {
        match self {
            Variant::Literal => "literal",
            Variant::Original => "original",
            Variant::Corrected => "corrected",
        }
    }
    /// FIX-J (joiner adopts only a live successor) and FIX-S (stabilize adopts only a live
    /// predecessor-of-successor).
    pub fn fixes(self) -> bool {
        self == Variant::Original
    }
}

/// Which failures the environment may inject (the fault gate, evaluated on ground truth).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Gate {
    /// Spec §5.2.5 / the *intended* rule of §1.3: after the failure every surviving member still
    /// has a live list entry, and at least one member survives.
    Successor,
    /// `Successor` plus Zave's principal rule (§4.2): a principal may fail only while more than
    /// r + 1 principals exist. The rule of the corrected protocol.
    Principal,
    /// Only "the network never becomes empty" (an ablation: failures the papers exclude).
    Unguarded,
}

/// The part of a run's configuration the transition functions need.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rules {
    pub variant: Variant,
    /// Successor-list length.
    pub r: u8,
    /// Size of the identifier space.
    pub ids: u8,
    /// May a failed identity join again?
    pub reuse: bool,
    /// D1 ablation (original/literal only): stabilize and reconcile are one atomic step.
    pub fused: bool,
    pub gate: Gate,
    /// At most this many failures in a run.
    pub max_failures: u8,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Status {
    #[default]
    Idle,
    /// Corrected: StabilizeFromSuccessor saw a better successor `saved` and will query it.
    Stabilizing,
    /// Corrected: notified by `saved`; will rectify its predecessor.
    Rectifying,
}

/// One replica's protocol state. A non-member has none (all fields at their defaults).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeState {
    pub member: bool,
    /// Successor list; entries past `r`, and missing ones, are [`NONE`].
    pub list: [u8; MAX_R],
    pub pred: u8,
    pub status: Status,
    pub saved: u8,
}

impl Default for NodeState {
    fn default() -> NodeState {
        NodeState {
            member: false,
            list: [NONE; MAX_R],
            pred: NONE,
            status: Status::Idle,
            saved: NONE,
        }
    }
}

impl NodeState {
    pub fn succ(&self) -> u8 {
        self.list[0]
    }
}

/// One atomic step. `Notified` is the delivery of a notify caused by an earlier `Stabilize`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Step {
    // Maintenance steps come first in [`Ring::enabled`]: decision 0 means "no churn".
    Notified {
        target: u8,
        from: u8,
    },
    Update(u8),
    Flush(u8),
    Stabilize(u8),
    Reconcile(u8),
    Rectify(u8),
    StabilizeFromPredecessor(u8),
    StabilizeFromSuccessor(u8),
    /// `node` joins; its lookup was answered by member `via`.
    Join {
        node: u8,
        via: u8,
    },
    Fail(u8),
}

impl Step {
    /// The node that acts.
    pub fn actor(self) -> u8 {
        match self {
            Step::Notified { target, .. } => target,
            Step::Join { node, .. } => node,
            Step::Update(n)
            | Step::Flush(n)
            | Step::Stabilize(n)
            | Step::Reconcile(n)
            | Step::Rectify(n)
            | Step::StabilizeFromPredecessor(n)
            | Step::StabilizeFromSuccessor(n)
            | Step::Fail(n) => n,
        }
    }

    /// The other node involved (notifier, lookup responder), or [`NONE`].
    pub fn peer(self) -> u8 {
        match self {
            Step::Notified { from, .. } => from,
            Step::Join { via, .. } => via,
            _ => NONE,
        }
    }

    pub fn is_churn(self) -> bool {
        matches!(self, Step::Join { .. } | Step::Fail(_))
    }

    /// A stable numeric code (kind, actor, peer) for trace hashes.
    pub fn code(self) -> u64 {
        let kind: u64 = match self {
            Step::Notified { .. } => 1,
            Step::Update(_) => 2,
            Step::Flush(_) => 3,
            Step::Stabilize(_) => 4,
            Step::Reconcile(_) => 5,
            Step::Rectify(_) => 6,
            Step::StabilizeFromPredecessor(_) => 7,
            Step::StabilizeFromSuccessor(_) => 8,
            Step::Join { .. } => 9,
            Step::Fail(_) => 10,
        };
        (kind << 16) | ((self.actor() as u64) << 8) | self.peer() as u64
    }

    pub fn name(self) -> &'static str {
        match self {
            Step::Notified { .. } => "Notified",
            Step::Update(_) => "Update",
            Step::Flush(_) => "Flush",
            Step::Stabilize(_) => "Stabilize",
            Step::Reconcile(_) => "Reconcile",
            Step::Rectify(_) => "Rectify",
            Step::StabilizeFromPredecessor(_) => "StabilizeFromPredecessor",
            Step::StabilizeFromSuccessor(_) => "StabilizeFromSuccessor",
            Step::Join { .. } => "Join",
            Step::Fail(_) => "Fail",
        }
    }
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Step::Notified { target, from } => write!(f, "Notified n{target} (by n{from})"),
            Step::Join { node, via } => write!(f, "Join n{node} (lookup answered by n{via})"),
            s => write!(f, "{} n{}", s.name(), s.actor()),
        }
    }
}

/// Ground truth of the whole network in atomic mode: every replica's state plus the notifies
/// in flight. Message mode builds the same struct from its world to evaluate properties.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ring {
    pub nodes: [NodeState; MAX_IDS],
    /// Pending notifies, as a set: bit `target * 8 + from`. A second identical notify sent while
    /// one is pending merges with it (this keeps the state space finite; a notify is
    /// idempotent until its target's predecessor moves, and the notifier can always re-send).
    pub pending: u64,
    /// Identities that have ever been members (for "no identity reuse").
    pub ever: u8,
    pub failures: u8,
}

/// Most steps one state can enable (8 ids: 64 notifies, 7 kinds × 8 nodes, 8 × 8 joins, 8
/// failures).
pub const ENABLED_MAX: usize = 192;

/// The enabled steps of one state, in a fixed array (no allocation per step).
pub struct Enabled {
    steps: [Step; ENABLED_MAX],
    len: usize,
}

impl Default for Enabled {
    fn default() -> Enabled {
        Enabled { steps: [Step::Update(0); ENABLED_MAX], len: 0 }
    }
}

impl Enabled {
    #[inline]
    fn push(&mut self, s: Step) {
        self.steps[self.len] = s;
        self.len += 1;
    }
    pub fn as_slice(&self) -> &[Step] {
        &self.steps[..self.len]
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[inline]
fn pending_bit(target: u8, from: u8) -> u64 {
    1u64 << (target as u32 * 8 + from as u32)
}

impl Ring {
    /// No members at all.
    pub fn empty() -> Ring {
        Ring { nodes: [NodeState::default(); MAX_IDS], pending: 0, ever: 0, failures: 0 }
    }

    /// `create()`: node 0 alone, successor itself, no second entry, no predecessor.
    pub fn bootstrap() -> Ring {
        let mut ring = Ring::empty();
        ring.nodes[0].member = true;
        ring.nodes[0].list[0] = 0;
        ring.ever = 1;
        ring
    }

    /// An ideal ring over `members` (bitmask): every list holds the next r members, every pred
    /// is the ring predecessor (corrected protocol, C1).
    pub fn ideal(members: u8, r: u8) -> Ring {
        let mut ring = Ring::empty();
        let ids: Vec<u8> = (0..MAX_IDS as u8).filter(|i| members & (1 << i) != 0).collect();
        let k = ids.len();
        for (i, &n) in ids.iter().enumerate() {
            let node = &mut ring.nodes[n as usize];
            node.member = true;
            for j in 0..r as usize {
                node.list[j] = ids[(i + 1 + j) % k];
            }
            node.pred = ids[(i + k - 1) % k];
        }
        ring.ever = members;
        ring
    }

    #[inline]
    pub fn member(&self, n: u8) -> bool {
        n != NONE && self.nodes[n as usize].member
    }

    pub fn members(&self) -> u8 {
        let mut m = 0u8;
        for i in 0..MAX_IDS {
            if self.nodes[i].member {
                m |= 1 << i;
            }
        }
        m
    }

    /// First live entry of `n`'s list, or [`NONE`].
    #[inline]
    pub fn best(&self, n: u8) -> u8 {
        for &e in &self.nodes[n as usize].list {
            if self.member(e) {
                return e;
            }
        }
        NONE
    }

    pub fn is_pending(&self, target: u8, from: u8) -> bool {
        self.pending & pending_bit(target, from) != 0
    }

    /// A hash of everything that determines the future of a run (all node states, pending
    /// notifies, identities used, failures so far). The step counter is deliberately left out.
    pub fn state_hash(&self) -> u64 {
        let mut h = StableHasher::new();
        for n in &self.nodes {
            let mut w = n.member as u64;
            for &e in &n.list {
                w = (w << 8) | e as u64;
            }
            h.add(w);
            h.add(((n.pred as u64) << 16) | ((n.status as u64) << 8) | n.saved as u64);
        }
        h.add(self.pending);
        h.add(((self.ever as u64) << 8) | self.failures as u64);
        h.finish()
    }

    /// The enabled, *effective* steps (a step that would leave the state unchanged is a
    /// self-loop and is left out), maintenance steps first, then joins, then failures.
    pub fn enabled(&self, rules: &Rules, allow_churn: bool, out: &mut Enabled) {
        out.len = 0;
        let ids = rules.ids;
        let mut p = self.pending;
        while p != 0 {
            let bit = p.trailing_zeros() as u8;
            p &= p - 1;
            out.push(Step::Notified { target: bit / 8, from: bit % 8 });
        }
        for n in 0..ids {
            if !self.member(n) {
                continue;
            }
            for s in [
                Step::Update(n),
                Step::Flush(n),
                Step::Stabilize(n),
                Step::Reconcile(n),
                Step::Rectify(n),
                Step::StabilizeFromPredecessor(n),
                Step::StabilizeFromSuccessor(n),
            ] {
                if self.effective(rules, s) {
                    out.push(s);
                }
            }
        }
        if !allow_churn {
            return;
        }
        for n in 0..ids {
            if self.member(n) || (!rules.reuse && self.ever & (1 << n) != 0) {
                continue;
            }
            // One step per distinct outcome: the responder matters only through what the
            // joiner adopts (its successor, and for corrected its predecessor too).
            let mut seen_succ = 0u16;
            for m in 0..ids {
                if !self.join_allowed(rules, n, m) {
                    continue;
                }
                if rules.variant == Variant::Corrected {
                    out.push(Step::Join { node: n, via: m });
                } else {
                    let s = self.nodes[m as usize].list[0];
                    if seen_succ & (1 << s) == 0 {
                        seen_succ |= 1 << s;
                        out.push(Step::Join { node: n, via: m });
                    }
                }
            }
        }
        if self.failures < rules.max_failures {
            for f in 0..ids {
                if self.member(f) && self.fail_allowed(rules, f, &[]) {
                    out.push(Step::Fail(f));
                }
            }
        }
    }

    /// May `n` join with its lookup answered by `m`?
    pub fn join_allowed(&self, rules: &Rules, n: u8, m: u8) -> bool {
        if self.member(n) || !self.member(m) {
            return false;
        }
        let s = self.nodes[m as usize].list[0];
        if s == NONE || !between(m, n, s) {
            return false;
        }
        // FIX-J: the joiner adopts only a live successor.
        !rules.variant.fixes() || self.member(s)
    }

    /// Would `step` change the state? (Preconditions included.)
    pub fn effective(&self, rules: &Rules, step: Step) -> bool {
        let corrected = rules.variant == Variant::Corrected;
        match step {
            Step::Notified { target, from } => self.is_pending(target, from),
            Step::Update(n) => {
                let node = &self.nodes[n as usize];
                !corrected && node.member && !self.member(node.list[0]) && node.list[1] != NONE
            }
            Step::Flush(n) => {
                let node = &self.nodes[n as usize];
                !corrected && node.member && node.pred != NONE && !self.member(node.pred)
            }
            Step::Stabilize(n) | Step::Reconcile(n) => {
                let node = &self.nodes[n as usize];
                if corrected || !node.member || !self.member(node.list[0]) {
                    return false;
                }
                let s = node.list[0];
                match step {
                    Step::Reconcile(_) if rules.fused => false,
                    Step::Reconcile(_) => {
                        let sl = &self.nodes[s as usize].list;
                        reconcile_list(n, s, sl, rules.r as usize).is_some_and(|l| l != node.list)
                    }
                    _ if rules.fused => {
                        let mut next = *self;
                        next.apply(rules, step);
                        next != *self
                    }
                    _ => {
                        // Changes entry 0, or sends a notify not already pending.
                        let x = self.nodes[s as usize].pred;
                        let new =
                            stabilize_choice(n, s, x, !rules.variant.fixes() || self.member(x));
                        new != s || !self.is_pending(new, n)
                    }
                }
            }
            Step::Rectify(n) => corrected && self.nodes[n as usize].status == Status::Rectifying,
            Step::StabilizeFromPredecessor(n) => {
                let node = &self.nodes[n as usize];
                corrected
                    && node.status == Status::Stabilizing
                    && between(n, node.saved, node.list[0])
            }
            Step::StabilizeFromSuccessor(n) => {
                let node = &self.nodes[n as usize];
                if !corrected || !node.member || node.status != Status::Idle {
                    return false;
                }
                let mut next = *self;
                next.apply(rules, step);
                next != *self
            }
            Step::Join { node, via } => {
                !self.member(node)
                    && (rules.reuse || self.ever & (1 << node) == 0)
                    && self.join_allowed(rules, node, via)
            }
            Step::Fail(f) => {
                self.member(f)
                    && self.failures < rules.max_failures
                    && self.fail_allowed(rules, f, &[])
            }
        }
    }

    /// The fault gate on ground truth. `in_flight` lists `(receiver, extended list)` pairs for
    /// successor lists carried in replies still in flight (message mode); each counts as a list
    /// its receiver will adopt, in both halves of the rule (as in verdi-chord).
    pub fn fail_allowed(&self, rules: &Rules, f: u8, in_flight: &[(u8, [u8; MAX_R + 1])]) -> bool {
        let alive = self.members() & !(1 << f);
        if alive == 0 {
            return false;
        }
        if rules.gate == Gate::Unguarded {
            return true;
        }
        let live_other = |e: u8| e != NONE && e != f && alive & (1 << e) != 0;
        for m in 0..rules.ids {
            if m == f || !self.member(m) {
                continue;
            }
            if !self.nodes[m as usize].list.iter().any(|&e| live_other(e)) {
                return false;
            }
        }
        // In-flight lists count for every receiver that is up (a joiner is about to become a
        // member with that list); the caller passes only those.
        for (receiver, list) in in_flight {
            if *receiver != f && !list[1..].iter().any(|&e| live_other(e)) {
                return false;
            }
        }
        if rules.gate == Gate::Principal {
            let principals = self.principals(rules, in_flight);
            if principals & (1 << f) != 0 && principals.count_ones() <= rules.r as u32 + 1 {
                return false;
            }
        }
        true
    }

    /// Members no member's extended successor list skips (spec §2.2), counting the extended
    /// lists in `in_flight` too.
    pub fn principals(&self, rules: &Rules, in_flight: &[(u8, [u8; MAX_R + 1])]) -> u8 {
        let members = self.members();
        let mut skipped = 0u8;
        let mut skip = |esl: &[u8]| {
            let mut prev = esl[0];
            for &e in &esl[1..] {
                if e == NONE {
                    break;
                }
                for p in 0..rules.ids {
                    if members & (1 << p) != 0 && between(prev, p, e) {
                        skipped |= 1 << p;
                    }
                }
                prev = e;
            }
        };
        for m in 0..rules.ids {
            if self.member(m) {
                let mut esl = [NONE; MAX_R + 1];
                esl[0] = m;
                esl[1..].copy_from_slice(&self.nodes[m as usize].list);
                skip(&esl);
            }
        }
        for (_, esl) in in_flight {
            skip(esl); // the caller passes lists bound for nodes that are up
        }
        members & !skipped
    }

    /// Applies one step. The caller has checked that it is enabled; applying a disabled step
    /// is a no-op or follows the same rules (scripts may contain Zave's no-op events).
    pub fn apply(&mut self, rules: &Rules, step: Step) {
        let r = rules.r as usize;
        let fixes = rules.variant.fixes();
        match step {
            Step::Notified { target, from } => {
                self.pending &= !pending_bit(target, from);
                if self.member(target) {
                    let t = &mut self.nodes[target as usize];
                    if accept_notify(t.pred, from, target) {
                        t.pred = from;
                    }
                }
            }
            Step::Update(n) => {
                if !self.effective(rules, step) {
                    return;
                }
                shift_left(&mut self.nodes[n as usize].list, r);
            }
            Step::Flush(n) => {
                if self.effective(rules, step) {
                    self.nodes[n as usize].pred = NONE;
                }
            }
            Step::Stabilize(n) => {
                let node = self.nodes[n as usize];
                if !node.member || !self.member(node.list[0]) {
                    return;
                }
                let s = node.list[0];
                let x = self.nodes[s as usize].pred;
                let new_succ = stabilize_choice(n, s, x, !fixes || self.member(x));
                self.nodes[n as usize].list[0] = new_succ;
                self.pending |= pending_bit(new_succ, n);
                if rules.fused && self.member(new_succ) {
                    self.reconcile(rules, n);
                }
            }
            Step::Reconcile(n) => {
                let node = self.nodes[n as usize];
                if node.member && self.member(node.list[0]) {
                    self.reconcile(rules, n);
                }
            }
            Step::Join { node, via } => {
                if rules.variant == Variant::Corrected {
                    let m = self.nodes[via as usize];
                    self.nodes[node as usize] = NodeState {
                        member: true,
                        list: m.list,
                        pred: via,
                        status: Status::Idle,
                        saved: NONE,
                    };
                } else {
                    let mut joiner = NodeState { member: true, ..NodeState::default() };
                    joiner.list[0] = self.nodes[via as usize].list[0];
                    self.nodes[node as usize] = joiner;
                }
                self.ever |= 1 << node;
            }
            Step::Fail(f) => {
                self.nodes[f as usize] = NodeState::default();
                self.failures += 1;
            }
            Step::StabilizeFromSuccessor(t) => {
                let node = self.nodes[t as usize];
                if !node.member || node.status != Status::Idle {
                    return;
                }
                let s = node.list[0];
                if !self.member(s) {
                    shift_left(&mut self.nodes[t as usize].list, r);
                    let first = self.nodes[t as usize].list[0];
                    self.notify(first, t);
                } else {
                    let sn = self.nodes[s as usize];
                    self.nodes[t as usize].list = adopt_list(s, &sn.list, r);
                    if sn.pred != NONE && between(t, sn.pred, s) {
                        let tn = &mut self.nodes[t as usize];
                        tn.status = Status::Stabilizing;
                        tn.saved = sn.pred;
                    } else {
                        self.notify(s, t);
                    }
                }
            }
            Step::StabilizeFromPredecessor(t) => {
                let node = self.nodes[t as usize];
                if node.status != Status::Stabilizing {
                    return;
                }
                let p = node.saved;
                let tn = &mut self.nodes[t as usize];
                tn.status = Status::Idle;
                tn.saved = NONE;
                if !self.member(p) {
                    self.notify(node.list[0], t);
                } else {
                    let pl = self.nodes[p as usize].list;
                    self.nodes[t as usize].list = adopt_list(p, &pl, r);
                    self.notify(p, t);
                }
            }
            Step::Rectify(x) => {
                let node = self.nodes[x as usize];
                if node.status != Status::Rectifying {
                    return;
                }
                let pred_live = self.member(node.pred);
                let xn = &mut self.nodes[x as usize];
                xn.status = Status::Idle;
                xn.saved = NONE;
                if rectify_adopts(node.pred, node.saved, x, pred_live) {
                    xn.pred = node.saved;
                }
            }
        }
    }

    /// Original reconcile (r = 2: succ2 := succ.succ unless succ is a self-loop and n is not).
    fn reconcile(&mut self, rules: &Rules, n: u8) {
        let s = self.nodes[n as usize].list[0];
        let sl = self.nodes[s as usize].list;
        if let Some(list) = reconcile_list(n, s, &sl, rules.r as usize) {
            self.nodes[n as usize].list = list;
        }
    }

    /// Corrected notification: the target records the notifier (overwriting any status).
    fn notify(&mut self, target: u8, from: u8) {
        if self.member(target) {
            let t = &mut self.nodes[target as usize];
            t.status = Status::Rectifying;
            t.saved = from;
        }
    }

    /// The network in the style of the spec's tables: `n0 [n2, n0] p=n2 b=n2` per member.
    pub fn describe(&self, rules: &Rules) -> String {
        let mut out = String::new();
        for n in 0..rules.ids {
            if !out.is_empty() {
                out.push_str(" | ");
            }
            let _ = write!(out, "n{n} ");
            let _ = write!(out, "{}", self.describe_node(rules, n));
        }
        out
    }

    pub fn describe_node(&self, rules: &Rules, n: u8) -> String {
        let node = &self.nodes[n as usize];
        if !node.member {
            return if self.ever & (1 << n) != 0 { "dead".into() } else { "—".into() };
        }
        let name = |e: u8| if e == NONE { "-".to_string() } else { format!("n{e}") };
        let list: Vec<String> = node.list[..rules.r as usize].iter().map(|&e| name(e)).collect();
        let mut s = format!("[{}] p={} b={}", list.join(", "), name(node.pred), name(self.best(n)));
        match node.status {
            Status::Idle => {}
            Status::Stabilizing => {
                let _ = write!(s, " stabilizing({})", name(node.saved));
            }
            Status::Rectifying => {
                let _ = write!(s, " rectifying({})", name(node.saved));
            }
        }
        s
    }
}

/// Drops entry 0 and shifts the rest up, padding with [`NONE`].
#[inline]
pub fn shift_left(list: &mut [u8; MAX_R], r: usize) {
    for i in 0..r - 1 {
        list[i] = list[i + 1];
    }
    list[r - 1] = NONE;
}

/// `([s] ++ s_list)[0..r]`, padded with [`NONE`] (corrected C3).
#[inline]
pub fn adopt_list(s: u8, s_list: &[u8; MAX_R], r: usize) -> [u8; MAX_R] {
    let mut list = [NONE; MAX_R];
    list[0] = s;
    list[1..r].copy_from_slice(&s_list[..r - 1]);
    list
}

/// Original stabilize: the successor `n` keeps, given its successor `s` and `s`'s predecessor
/// `x`. `x_ok` is FIX-S's liveness check (always true for the literal protocol).
#[inline]
pub fn stabilize_choice(n: u8, s: u8, x: u8, x_ok: bool) -> u8 {
    if x != NONE && between(n, x, s) && x_ok {
        x
    } else {
        s
    }
}

/// Original notified: accept the notifier if there is no predecessor or it is closer.
#[inline]
pub fn accept_notify(pred: u8, from: u8, me: u8) -> bool {
    pred == NONE || between(pred, from, me)
}

/// Original reconcile of `n` with its successor `s` whose list is `s_list`: the new list, or
/// `None` when Zave's guard leaves it alone (s is a self-loop and n is not s).
#[inline]
pub fn reconcile_list(n: u8, s: u8, s_list: &[u8; MAX_R], r: usize) -> Option<[u8; MAX_R]> {
    if s_list[0] == s && s != n {
        return None;
    }
    Some(adopt_list(s, s_list, r))
}

/// Corrected rectify: does `x` (predecessor `pred`, alive or not) adopt notifier `n`?
#[inline]
pub fn rectify_adopts(pred: u8, n: u8, x: u8, pred_live: bool) -> bool {
    pred == NONE || between(pred, n, x) || !pred_live
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn between_is_the_clockwise_open_interval() {
        assert!(between(0, 1, 2));
        assert!(!between(0, 2, 2));
        assert!(!between(0, 0, 2));
        assert!(between(3, 0, 1));
        assert!(between(3, 4, 1));
        assert!(!between(3, 2, 1));
        // a == c: everything but a itself.
        assert!(between(2, 0, 2));
        assert!(between(2, 3, 2));
        assert!(!between(2, 2, 2));
    }

    #[test]
    fn ideal_ring_lists_the_next_r_members() {
        let ring = Ring::ideal(0b10101, 2);
        assert_eq!(&ring.nodes[0].list[..2], &[2, 4]);
        assert_eq!(&ring.nodes[4].list[..2], &[0, 2]);
        assert_eq!(ring.nodes[0].pred, 4);
    }
}
