//! Zave's properties (spec §2) as oracles over ground truth: membership is the simulator's own
//! knowledge of who has failed, never a replica's belief.
//!
//! Readings chosen where the spec leaves a choice (each is a documented decision):
//! * **OrderedRing** is judged per ring: an edge a → b = best(a) is out of order if a member of
//!   *the same cycle* lies strictly between a and b. Two rings that interleave are
//!   AtMostOneRing's business; without this reading every split (two self-loops) would also
//!   count as disorder, which Zave's traces do not report (§3.1 e18–e20).
//! * **OrderedMerges** computes "ring member" over raw `succ` pointers, as Zave's chordfull.als does,
//!   and "same best successor" over `best`.
//! * **ValidSuccessorList**: n's list *skips* live m when m lies strictly between two
//!   consecutive entries of n's extended list (n, succ, succ2, …) — the spec's recommendation,
//!   which also covers lists that are not full. Zave's Alloy encoding reports three snapshots
//!   of §3.1 (e15–e17) and two of §3.6 only through an empty-set quirk; this reading does not.
//! * **OrderedSuccessorLists** counts all defined entries (live or dead); **NoDuplicates**
//!   forbids a self entry and a repeated entry.

use crate::model::{between, Ring, Rules, Status, Variant, MAX_IDS, MAX_R, NONE};

/// A property, by Zave's name. The discriminant is its bit in a [`Violations`] mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Property {
    AtLeastOneRing = 0,
    AtMostOneRing = 1,
    OrderedRing = 2,
    ConnectedAppendages = 3,
    OrderedAppendages = 4,
    OrderedMerges = 5,
    ValidSuccessorList = 6,
    OneLiveSuccessor = 7,
    SufficientPrincipals = 8,
    OrderedSuccessorLists = 9,
    NoDuplicates = 10,
    /// Liveness: once joins and failures stop, fair stabilization reaches the Ideal state.
    EventuallyIdeal = 11,
}

pub const ALL: [Property; 12] = [
    Property::AtLeastOneRing,
    Property::AtMostOneRing,
    Property::OrderedRing,
    Property::ConnectedAppendages,
    Property::OrderedAppendages,
    Property::OrderedMerges,
    Property::ValidSuccessorList,
    Property::OneLiveSuccessor,
    Property::SufficientPrincipals,
    Property::OrderedSuccessorLists,
    Property::NoDuplicates,
    Property::EventuallyIdeal,
];

impl Property {
    pub fn name(self) -> &'static str {
        match self {
            Property::AtLeastOneRing => "AtLeastOneRing",
            Property::AtMostOneRing => "AtMostOneRing",
            Property::OrderedRing => "OrderedRing",
            Property::ConnectedAppendages => "ConnectedAppendages",
            Property::OrderedAppendages => "OrderedAppendages",
            Property::OrderedMerges => "OrderedMerges",
            Property::ValidSuccessorList => "ValidSuccessorList",
            Property::OneLiveSuccessor => "OneLiveSuccessor",
            Property::SufficientPrincipals => "SufficientPrincipals",
            Property::OrderedSuccessorLists => "OrderedSuccessorLists",
            Property::NoDuplicates => "NoDuplicates",
            Property::EventuallyIdeal => "EventuallyIdeal",
        }
    }

    pub fn from_name(name: &str) -> Option<Property> {
        ALL.iter().copied().find(|p| p.name() == name)
    }

    pub fn bit(self) -> u16 {
        1 << self as u16
    }

    pub fn summary(self) -> &'static str {
        match self {
            Property::AtLeastOneRing => "some member lies on a cycle of best-successor pointers",
            Property::AtMostOneRing => "all ring members reach each other (no split)",
            Property::OrderedRing => "no ring edge a→b skips a member of the same ring",
            Property::ConnectedAppendages => "every appendage member reaches a ring member",
            Property::OrderedAppendages => "appendage paths are ordered around the circle",
            Property::OrderedMerges => {
                "an appendage merging into the ring lies between its ring neighbours"
            }
            Property::ValidSuccessorList => {
                "a list that skips live m is not contradicted by an antecedent listing m"
            }
            Property::OneLiveSuccessor => "every member has a live entry in its successor list",
            Property::SufficientPrincipals => {
                "at least r+1 members are skipped by no extended successor list"
            }
            Property::OrderedSuccessorLists => {
                "list entries increase strictly around the circle from the owner"
            }
            Property::NoDuplicates => "no list holds its owner or the same node twice",
            Property::EventuallyIdeal => {
                "after joins and failures stop, stabilization reaches Ideal"
            }
        }
    }

    /// Zave's transient properties of the original protocol (§2.1 "Kind of failure").
    pub fn transient_by_nature(self) -> bool {
        matches!(
            self,
            Property::OrderedAppendages | Property::OrderedMerges | Property::ValidSuccessorList
        )
    }
}

/// A set of properties as a bitmask.
pub type Violations = u16;

/// Names of the properties in `mask`, comma-separated.
pub fn names(mask: Violations) -> String {
    ALL.iter().filter(|p| mask & p.bit() != 0).map(|p| p.name()).collect::<Vec<_>>().join(", ")
}

/// The best-successor graph of a state, computed once and shared by the checks.
pub struct Shape {
    pub members: u8,
    pub best: [u8; MAX_IDS],
    /// Members on a cycle of `best`.
    pub ring: u8,
    /// For each ring member, the smallest id on its cycle (a cycle label).
    pub cycle: [u8; MAX_IDS],
    pub rings: u32,
}

impl Shape {
    pub fn of(state: &Ring, ids: u8) -> Shape {
        let members = state.members();
        let mut best = [NONE; MAX_IDS];
        for n in 0..ids {
            if members & (1 << n) != 0 {
                best[n as usize] = state.best(n);
            }
        }
        let mut ring = 0u8;
        let mut cycle = [NONE; MAX_IDS];
        let mut rings = 0;
        for n in 0..ids {
            if members & (1 << n) == 0 || ring & (1 << n) != 0 {
                continue;
            }
            // Walk at most `ids` steps; n is on a cycle iff it comes back.
            let mut x = best[n as usize];
            let mut k = 0;
            while x != NONE && x != n && k < ids {
                x = best[x as usize];
                k += 1;
            }
            if x == n {
                rings += 1;
                let mut y = n;
                let mut label = n;
                loop {
                    ring |= 1 << y;
                    label = label.min(y);
                    y = best[y as usize];
                    if y == n {
                        break;
                    }
                }
                let mut y = n;
                loop {
                    cycle[y as usize] = label;
                    y = best[y as usize];
                    if y == n {
                        break;
                    }
                }
            }
        }
        Shape { members, best, ring, cycle, rings }
    }

    fn is_member(&self, n: u8) -> bool {
        n != NONE && self.members & (1 << n) != 0
    }

    fn is_ring(&self, n: u8) -> bool {
        n != NONE && self.ring & (1 << n) != 0
    }
}

/// Every safety property of §2 violated by `state` (EventuallyIdeal is judged by the runner).
pub fn violations(state: &Ring, rules: &Rules) -> Violations {
    check(state, rules).0
}

/// [`violations`], plus a cheap abstract-state key for coverage-guided search: the
/// best-successor graph and the violated set.
pub fn check(state: &Ring, rules: &Rules) -> (Violations, u64) {
    let shape = Shape::of(state, rules.ids);
    let v = check_shape(state, rules, &shape);
    let mut key = v as u64;
    for &b in &shape.best {
        key = (key << 4) ^ (b as u64 & 0xf);
    }
    (v, weft_core::stable_hash(&(key, shape.members)))
}

fn check_shape(state: &Ring, rules: &Rules, shape: &Shape) -> Violations {
    let mut v: Violations = 0;
    let ids = rules.ids;
    if shape.members != 0 && shape.ring == 0 {
        v |= Property::AtLeastOneRing.bit();
    }
    if shape.rings > 1 {
        v |= Property::AtMostOneRing.bit();
    }
    if !ordered_ring(shape, ids) {
        v |= Property::OrderedRing.bit();
    }
    if !connected_appendages(shape, ids) {
        v |= Property::ConnectedAppendages.bit();
    }
    if !ordered_appendages(shape, ids) {
        v |= Property::OrderedAppendages.bit();
    }
    if !ordered_merges(state, shape, ids) {
        v |= Property::OrderedMerges.bit();
    }
    if !valid_successor_list(state, shape, ids) {
        v |= Property::ValidSuccessorList.bit();
    }
    for n in 0..ids {
        if shape.is_member(n) && shape.best[n as usize] == NONE {
            v |= Property::OneLiveSuccessor.bit();
        }
    }
    if rules.variant == Variant::Corrected
        && state.principals(rules, &[]).count_ones() < rules.r as u32 + 1
    {
        v |= Property::SufficientPrincipals.bit();
    }
    for n in 0..ids {
        if !shape.is_member(n) {
            continue;
        }
        let list = &state.nodes[n as usize].list;
        let dist = |e: u8| (e as u32 + ids as u32 - n as u32) % ids as u32;
        let mut last = 0;
        let mut seen = 1u16 << n;
        for &e in list.iter().take(rules.r as usize) {
            if e == NONE {
                break;
            }
            let d = dist(e);
            if d <= last {
                v |= Property::OrderedSuccessorLists.bit();
            }
            last = d;
            if seen & (1 << e) != 0 {
                v |= Property::NoDuplicates.bit();
            }
            seen |= 1 << e;
        }
    }
    v
}

fn ordered_ring(shape: &Shape, ids: u8) -> bool {
    for a in 0..ids {
        if !shape.is_ring(a) {
            continue;
        }
        let b = shape.best[a as usize];
        for c in 0..ids {
            if c != a
                && shape.is_ring(c)
                && shape.cycle[c as usize] == shape.cycle[a as usize]
                && between(a, c, b)
            {
                return false;
            }
        }
    }
    true
}

fn connected_appendages(shape: &Shape, ids: u8) -> bool {
    for a in 0..ids {
        if !shape.is_member(a) || shape.is_ring(a) {
            continue;
        }
        let mut x = a;
        let mut k = 0;
        while x != NONE && !shape.is_ring(x) && k <= ids {
            x = shape.best[x as usize];
            k += 1;
        }
        if !shape.is_ring(x) {
            return false;
        }
    }
    true
}

fn ordered_appendages(shape: &Shape, ids: u8) -> bool {
    let mut path = [NONE; MAX_IDS + 1];
    for a in 0..ids {
        if !shape.is_member(a) || shape.is_ring(a) {
            continue;
        }
        // The appendage path from a to the first ring member (included).
        let mut len = 0;
        let mut x = a;
        while x != NONE && !shape.is_ring(x) && len < ids as usize {
            path[len] = x;
            len += 1;
            x = shape.best[x as usize];
        }
        if !shape.is_ring(x) {
            continue; // not connected: ConnectedAppendages reports it
        }
        path[len] = x;
        len += 1;
        // Edges from appendage members are path[i] → path[i+1] for i < len - 1.
        for i in 0..len - 1 {
            let (a1, a2) = (path[i], path[i + 1]);
            for (j, &a3) in path[..len].iter().enumerate() {
                if (j < i || j > i + 1) && between(a1, a3, a2) {
                    return false;
                }
            }
        }
    }
    true
}

fn ordered_merges(state: &Ring, shape: &Shape, ids: u8) -> bool {
    // Ring membership over raw `succ` pointers (a failed node has no successor).
    let mut ring_s = 0u8;
    for n in 0..ids {
        if !shape.is_member(n) {
            continue;
        }
        let mut x = state.nodes[n as usize].list[0];
        let mut k = 0;
        while state.member(x) && x != n && k < ids {
            x = state.nodes[x as usize].list[0];
            k += 1;
        }
        if x == n {
            ring_s |= 1 << n;
        }
    }
    for n1 in 0..ids {
        if ring_s & (1 << n1) == 0 {
            continue;
        }
        let n3 = shape.best[n1 as usize];
        if n3 == NONE || ring_s & (1 << n3) == 0 {
            continue;
        }
        for n2 in 0..ids {
            if shape.is_member(n2)
                && ring_s & (1 << n2) == 0
                && shape.best[n2 as usize] == n3
                && !between(n1, n2, n3)
            {
                return false;
            }
        }
    }
    true
}

fn valid_successor_list(state: &Ring, shape: &Shape, ids: u8) -> bool {
    for n in 0..ids {
        if !shape.is_member(n) {
            continue;
        }
        // m is skipped by n's extended list (n, list[0], list[1], …).
        let list = &state.nodes[n as usize].list;
        let mut skipped = 0u8;
        let mut prev = n;
        for &e in list.iter().take(MAX_R) {
            if e == NONE {
                break;
            }
            for m in 0..ids {
                if m != n && shape.is_member(m) && between(prev, m, e) {
                    skipped |= 1 << m;
                }
            }
            prev = e;
        }
        if skipped == 0 {
            continue;
        }
        for a in 0..ids {
            if shape.is_member(a) && state.nodes[a as usize].list[0] == n {
                let s2 = state.nodes[a as usize].list[1];
                if s2 != NONE && skipped & (1 << s2) != 0 {
                    return false;
                }
            }
        }
    }
    true
}

/// Ideal (§2.1 / §2.2): one ring holding every member, each list = the next r members around
/// the circle (cyclically, so a ring of k ≤ r members repeats itself), each pred = the previous
/// member, and (corrected) no operation half done.
pub fn ideal(state: &Ring, rules: &Rules) -> bool {
    let mut ids = [0u8; MAX_IDS];
    let mut k = 0;
    for n in 0..rules.ids {
        if state.member(n) {
            ids[k] = n;
            k += 1;
        }
    }
    if k == 0 {
        return false;
    }
    for i in 0..k {
        let node = &state.nodes[ids[i] as usize];
        if node.pred != ids[(i + k - 1) % k] {
            return false;
        }
        for j in 0..rules.r as usize {
            if node.list[j] != ids[(i + 1 + j) % k] {
                return false;
            }
        }
        if rules.variant == Variant::Corrected && node.status != Status::Idle {
            return false;
        }
    }
    true
}

/// A human-readable witness for a violation of `p` in `state`.
pub fn witness(state: &Ring, rules: &Rules, p: Property) -> String {
    let shape = Shape::of(state, rules.ids);
    let set = |mask: u8| -> String {
        (0..rules.ids)
            .filter(|i| mask & (1 << i) != 0)
            .map(|i| format!("n{i}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    match p {
        Property::AtMostOneRing => {
            let mut rings = Vec::new();
            for n in 0..rules.ids {
                if shape.is_ring(n) && shape.cycle[n as usize] == n {
                    let mut mask = 0u8;
                    for m in 0..rules.ids {
                        if shape.is_ring(m) && shape.cycle[m as usize] == n {
                            mask |= 1 << m;
                        }
                    }
                    rings.push(format!("{{{}}}", set(mask)));
                }
            }
            format!("{} separate rings {}", rings.len(), rings.join(" and "))
        }
        Property::AtLeastOneRing => format!("no ring among members {{{}}}", set(shape.members)),
        Property::ConnectedAppendages | Property::OneLiveSuccessor => {
            let stranded: u8 = (0..rules.ids)
                .filter(|&n| shape.is_member(n) && shape.best[n as usize] == NONE)
                .fold(0, |m, n| m | (1 << n));
            if stranded != 0 {
                format!("{{{}}} have no live successor", set(stranded))
            } else {
                format!("ring {{{}}}", set(shape.ring))
            }
        }
        _ => format!("ring members {{{}}}", set(shape.ring)),
    }
}
