//! Bounded-exhaustive breadth-first search over atomic states: every enabled step from every
//! reachable state, states deduplicated by their full packed contents (not a hash, so no
//! collision can hide a state). Breadth-first order makes the first path found to a violation
//! a shortest one (in effective steps), which is how docs/chord.md's "shortest" column is
//! measured.

use crate::atomic::heals;
use crate::model::{Enabled, NodeState, Ring, Rules, Status, Step, MAX_IDS, NONE};
use crate::props::{self, Property, Violations};

/// What a search found.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Distinct states reached (initial states included).
    pub states: u64,
    pub transitions: u64,
    /// Depth (in steps) of the deepest state.
    pub depth: u32,
    /// False if `max_states` stopped the search early.
    pub complete: bool,
    /// For each property violated in some reachable state: a shortest path to such a state,
    /// from initial state number `.1`.
    pub shortest: Vec<(Property, usize, Vec<Step>)>,
    /// If asked: a shortest path to a state from which fair stabilization does not reach Ideal.
    pub not_healing: Option<(usize, Vec<Step>)>,
}

impl Report {
    pub fn shortest_for(&self, p: Property) -> Option<&[Step]> {
        self.shortest.iter().find(|(q, _, _)| *q == p).map(|(_, _, path)| path.as_slice())
    }
}

type Key = [u64; 4];

struct Packer {
    words: Key,
    bit: u32,
}

impl Packer {
    fn put(&mut self, value: u64, width: u32) {
        assert!(self.bit + width <= 256, "state does not fit the 256-bit key");
        let w = (self.bit / 64) as usize;
        let o = self.bit % 64;
        self.words[w] |= value << o;
        if o + width > 64 {
            self.words[w + 1] |= value >> (64 - o);
        }
        self.bit += width;
    }
    fn get(&mut self, width: u32) -> u64 {
        let w = (self.bit / 64) as usize;
        let o = self.bit % 64;
        let mut v = self.words[w] >> o;
        if o + width > 64 {
            v |= self.words[w + 1] << (64 - o);
        }
        self.bit += width;
        v & ((1u64 << width) - 1)
    }
}

fn id4(x: u8) -> u64 {
    if x == NONE {
        15
    } else {
        x as u64
    }
}
fn un4(x: u64) -> u8 {
    if x == 15 {
        NONE
    } else {
        x as u8
    }
}

fn pack(ring: &Ring, rules: &Rules) -> Key {
    let mut p = Packer { words: [0; 4], bit: 0 };
    for n in &ring.nodes[..rules.ids as usize] {
        p.put(n.member as u64, 1);
        for &e in &n.list[..rules.r as usize] {
            p.put(id4(e), 4);
        }
        p.put(id4(n.pred), 4);
        p.put(n.status as u64, 2);
        p.put(id4(n.saved), 4);
    }
    for t in 0..rules.ids {
        for f in 0..rules.ids {
            p.put(ring.is_pending(t, f) as u64, 1);
        }
    }
    p.put(ring.ever as u64, rules.ids as u32);
    p.put(ring.failures as u64, 4);
    p.words
}

fn unpack(key: &Key, rules: &Rules) -> Ring {
    let mut p = Packer { words: *key, bit: 0 };
    let mut ring = Ring::empty();
    for n in &mut ring.nodes[..rules.ids as usize] {
        let mut s = NodeState { member: p.get(1) == 1, ..NodeState::default() };
        for e in &mut s.list[..rules.r as usize] {
            *e = un4(p.get(4));
        }
        s.pred = un4(p.get(4));
        s.status = match p.get(2) {
            0 => Status::Idle,
            1 => Status::Stabilizing,
            _ => Status::Rectifying,
        };
        s.saved = un4(p.get(4));
        *n = s;
    }
    for t in 0..rules.ids {
        for f in 0..rules.ids {
            if p.get(1) == 1 {
                ring.pending |= 1u64 << (t as u32 * 8 + f as u32);
            }
        }
    }
    ring.ever = p.get(rules.ids as u32) as u8;
    ring.failures = p.get(4) as u8;
    ring
}

/// An insert-only open-addressing set of keys, handing out dense indices.
struct Seen {
    keys: Vec<Key>,
    table: Vec<u32>,
}

impl Seen {
    fn new() -> Seen {
        Seen { keys: Vec::new(), table: vec![0; 1 << 16] }
    }
    fn slot(&self, key: &Key) -> usize {
        let h = weft_core::stable_hash(key);
        h as usize & (self.table.len() - 1)
    }
    /// `Some(index)` if new.
    fn insert(&mut self, key: Key) -> Option<u32> {
        if self.keys.len() * 2 >= self.table.len() {
            let mut table = vec![0u32; self.table.len() * 2];
            std::mem::swap(&mut table, &mut self.table);
            for (i, k) in self.keys.iter().enumerate() {
                let mut s = self.slot(k);
                while self.table[s] != 0 {
                    s = (s + 1) & (self.table.len() - 1);
                }
                self.table[s] = i as u32 + 1;
            }
        }
        let mut s = self.slot(&key);
        loop {
            match self.table[s] {
                0 => {
                    self.keys.push(key);
                    let index = self.keys.len() as u32 - 1;
                    self.table[s] = index + 1;
                    return Some(index);
                }
                i if self.keys[i as usize - 1] == key => return None,
                _ => s = (s + 1) & (self.table.len() - 1),
            }
        }
    }
}

/// Breadth-first search from `initials` under `rules` (joins and failures included), checking
/// every property in `check` at every state and, if `check_heal`, that fair stabilization from
/// every state reaches Ideal. Stops after `max_states` states, or (without `check_heal`) as soon
/// as every property in `check` has its shortest path.
pub fn search(
    rules: &Rules,
    initials: &[Ring],
    check: Violations,
    check_heal: bool,
    max_states: usize,
) -> Report {
    assert!(rules.ids as usize <= MAX_IDS);
    let mut seen = Seen::new();
    // Per state: (parent index or u32::MAX, the step that reached it, initial index, depth).
    let mut parent: Vec<(u32, Step, u16, u32)> = Vec::new();
    let mut report = Report { complete: true, ..Report::default() };
    let mut found: Violations = 0;
    let mut enabled = Enabled::default();
    let mut next = 0usize;

    let path_to = |parent: &Vec<(u32, Step, u16, u32)>, mut i: u32| -> (usize, Vec<Step>) {
        let mut path = Vec::new();
        let init = parent[i as usize].2 as usize;
        while parent[i as usize].0 != u32::MAX {
            path.push(parent[i as usize].1);
            i = parent[i as usize].0;
        }
        path.reverse();
        (init, path)
    };

    for (k, ring) in initials.iter().enumerate() {
        if seen.insert(pack(ring, rules)).is_some() {
            parent.push((u32::MAX, Step::Update(0), k as u16, 0));
        }
    }
    while next < seen.keys.len() {
        let index = next as u32;
        next += 1;
        let ring = unpack(&seen.keys[next - 1], rules);
        debug_assert_eq!(pack(&ring, rules), seen.keys[next - 1]);
        let v = props::violations(&ring, rules) & check & !found;
        if v != 0 {
            for p in props::ALL {
                if v & p.bit() != 0 {
                    let (init, path) = path_to(&parent, index);
                    report.shortest.push((p, init, path));
                }
            }
            found |= v;
            if found == check && !check_heal {
                report.complete = false; // every property asked about has its shortest path
                break;
            }
        }
        if check_heal && report.not_healing.is_none() && !heals(&ring, rules) {
            report.not_healing = Some(path_to(&parent, index));
        }
        ring.enabled(rules, true, &mut enabled);
        let depth = parent[index as usize].3;
        report.depth = report.depth.max(depth);
        for &step in enabled.as_slice() {
            report.transitions += 1;
            let mut succ = ring;
            succ.apply(rules, step);
            if seen.keys.len() >= max_states {
                report.complete = false;
                continue;
            }
            if seen.insert(pack(&succ, rules)).is_some() {
                parent.push((index, step, parent[index as usize].2, depth + 1));
            }
        }
    }
    report.states = seen.keys.len() as u64;
    report.shortest.sort_by_key(|(p, _, _)| *p);
    report
}

/// All initial states of a configuration: node 0 alone (literal, original), or every ideal
/// ring of `initial` members containing node 0 (corrected).
pub fn initial_states(rules: &Rules, initial: u8) -> Vec<Ring> {
    if rules.variant != crate::model::Variant::Corrected {
        return vec![Ring::bootstrap()];
    }
    crate::atomic::initial_sets(rules.ids, initial)
        .into_iter()
        .map(|m| Ring::ideal(m, rules.r))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Gate, Variant};

    #[test]
    fn pack_round_trips() {
        let rules = Rules {
            variant: Variant::Corrected,
            r: 2,
            ids: 6,
            reuse: false,
            fused: false,
            gate: Gate::Principal,
            max_failures: 3,
        };
        let mut ring = Ring::ideal(0b101101, 2);
        ring.nodes[2].status = Status::Rectifying;
        ring.nodes[2].saved = 5;
        ring.pending = 1 << (3 * 8 + 4);
        ring.failures = 2;
        assert_eq!(unpack(&pack(&ring, &rules), &rules), ring);
    }
}
