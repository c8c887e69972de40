//! Linearizability of a client history against a sequential specification.
//!
//! The search is Wing & Gong's, with Lowe's memoisation, as in Porcupine: walk the history's
//! call and return events in time order; at a call, try to linearize that operation now (the
//! model must accept its output), remember (set of linearized operations, model state) and move
//! on; at a return whose operation is not linearized yet, backtrack. A configuration already
//! seen is never explored twice. The history is first split by the model's partition key
//! (P-compositionality: a key-value store is linearizable iff each key's sub-history is), which
//! keeps each search small.
//!
//! Operations that never returned (the client crashed or timed out) are *pending*: they may take
//! effect at any point after their call, or never, and any output is acceptable for them.
//!
//! Every search is bounded by a step budget; running out is its own answer
//! ([`Verdict::Unknown`]), never a guess.

use std::fmt::Debug;
use std::hash::Hash;
use weft_core::stable_hash;

/// A sequential specification.
pub trait Model {
    type State: Clone + Eq + Hash + Debug;
    type Input: Clone + Debug;
    type Output: Clone + Debug + PartialEq;

    fn init(&self) -> Self::State;

    /// Applies `input` to `state`. `output` is what the client observed, or `None` for a pending
    /// operation (any output is then acceptable). Returns the next state if the observed output
    /// is one the specification allows, `None` otherwise.
    fn step(
        &self,
        state: &Self::State,
        input: &Self::Input,
        output: Option<&Self::Output>,
    ) -> Option<Self::State>;

    /// Operations with different keys are independent (each key has its own state from
    /// [`Model::init`]). The default puts everything in one partition.
    fn partition(&self, _input: &Self::Input) -> u64 {
        0
    }
}

/// One client operation: called at `call`, returned at `ret` with `output` (both `None` if it
/// never returned). Times are any monotone clock (simulated nanoseconds, event indices); an
/// operation that returned before another was called precedes it in real time.
#[derive(Clone, Debug, PartialEq)]
pub struct Operation<I, O> {
    pub client: u64,
    pub input: I,
    pub call: u64,
    pub ret: Option<u64>,
    pub output: Option<O>,
}

/// The answer for a whole history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Linearizable,
    /// The partition with this key has no linearization; `ops` are the indices (into the
    /// history) of that partition's operations.
    NotLinearizable {
        key: u64,
        ops: Vec<usize>,
    },
    /// The step budget ran out in the partition with this key.
    Unknown {
        key: u64,
    },
}

/// Search limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Most model steps per partition. Each new configuration stores its linearized set (one bit
    /// per operation of the partition) and model state, so this also bounds memory: about
    /// `steps * (ops / 8 + size_of::<State>())` bytes in the worst case.
    pub steps: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { steps: 5_000_000 }
    }
}

/// Checks `history` against `model`.
pub fn check<M: Model>(
    model: &M,
    history: &[Operation<M::Input, M::Output>],
    limits: Limits,
) -> Verdict {
    let mut parts: Vec<(u64, Vec<usize>)> = Vec::new();
    let mut index: std::collections::BTreeMap<u64, usize> = std::collections::BTreeMap::new();
    for (i, op) in history.iter().enumerate() {
        let key = model.partition(&op.input);
        let slot = *index.entry(key).or_insert_with(|| {
            parts.push((key, Vec::new()));
            parts.len() - 1
        });
        parts[slot].1.push(i);
    }
    for (key, ops) in parts {
        match check_partition(model, history, &ops, limits) {
            Some(true) => {}
            Some(false) => return Verdict::NotLinearizable { key, ops },
            None => return Verdict::Unknown { key },
        }
    }
    Verdict::Linearizable
}

const NIL: usize = usize::MAX;

/// One call or return event in the doubly linked list the search lifts entries out of.
#[derive(Clone, Copy, Debug)]
struct Node {
    /// Operation index within the partition.
    op: usize,
    is_call: bool,
    /// For a call: its return's node.
    matching: usize,
    prev: usize,
    next: usize,
}

struct List {
    nodes: Vec<Node>,
    /// Node `head` is a sentinel before the first event.
    head: usize,
}

impl List {
    fn lift(&mut self, call: usize) {
        let ret = self.nodes[call].matching;
        self.unlink(call);
        self.unlink(ret);
    }

    fn unlift(&mut self, call: usize) {
        let ret = self.nodes[call].matching;
        self.relink(ret);
        self.relink(call);
    }

    fn unlink(&mut self, n: usize) {
        let Node { prev, next, .. } = self.nodes[n];
        self.nodes[prev].next = next;
        if next != NIL {
            self.nodes[next].prev = prev;
        }
    }

    fn relink(&mut self, n: usize) {
        let Node { prev, next, .. } = self.nodes[n];
        self.nodes[prev].next = n;
        if next != NIL {
            self.nodes[next].prev = n;
        }
    }
}

/// A set of operation indices.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Bits(Vec<u64>);

impl Bits {
    fn new(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }
    fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    fn clear(&mut self, i: usize) {
        self.0[i / 64] &= !(1 << (i % 64));
    }
}

/// Open-addressing set of seen configurations, keyed by a stable hash and compared in full
/// (std's hash maps are banned in weft for their per-process random seeds).
struct Seen<S> {
    entries: Vec<(u64, Bits, S)>,
    slots: Vec<u32>,
}

impl<S: Eq + Hash> Seen<S> {
    fn new() -> Seen<S> {
        Seen { entries: Vec::new(), slots: vec![u32::MAX; 1024] }
    }

    /// Inserts; false if already present.
    fn insert(&mut self, bits: &Bits, state: &S) -> bool
    where
        S: Clone,
    {
        let h = stable_hash(&(bits, state));
        let mask = self.slots.len() - 1;
        let mut i = (h as usize) & mask;
        loop {
            let s = self.slots[i];
            if s == u32::MAX {
                break;
            }
            let (eh, eb, es) = &self.entries[s as usize];
            if *eh == h && eb == bits && es == state {
                return false;
            }
            i = (i + 1) & mask;
        }
        self.slots[i] = self.entries.len() as u32;
        self.entries.push((h, bits.clone(), state.clone()));
        if self.entries.len() * 2 > self.slots.len() {
            self.grow();
        }
        true
    }

    fn grow(&mut self) {
        let mut slots = vec![u32::MAX; self.slots.len() * 2];
        let mask = slots.len() - 1;
        for (k, (h, _, _)) in self.entries.iter().enumerate() {
            let mut i = (*h as usize) & mask;
            while slots[i] != u32::MAX {
                i = (i + 1) & mask;
            }
            slots[i] = k as u32;
        }
        self.slots = slots;
    }
}

/// Some(true): linearizable; Some(false): not; None: budget exhausted.
fn check_partition<M: Model>(
    model: &M,
    history: &[Operation<M::Input, M::Output>],
    ops: &[usize],
    limits: Limits,
) -> Option<bool> {
    let n = ops.len();
    // Events: (time, is_return, op). At equal times calls sort before returns, so operations
    // that touch the same instant are concurrent.
    let mut events: Vec<(u64, bool, usize)> = Vec::with_capacity(2 * n);
    for (k, &i) in ops.iter().enumerate() {
        let op = &history[i];
        events.push((op.call, false, k));
        events.push((op.ret.unwrap_or(u64::MAX), true, k));
    }
    events.sort_by_key(|&(t, is_ret, k)| (t, is_ret, k));
    let mut nodes = Vec::with_capacity(events.len() + 1);
    nodes.push(Node { op: usize::MAX, is_call: false, matching: NIL, prev: NIL, next: 1 });
    let mut call_node = vec![NIL; n];
    for (pos, &(_, is_ret, k)) in events.iter().enumerate() {
        let id = pos + 1;
        let next = if pos + 1 < events.len() { id + 1 } else { NIL };
        nodes.push(Node { op: k, is_call: !is_ret, matching: NIL, prev: id - 1, next });
        if is_ret {
            nodes[call_node[k]].matching = id;
        } else {
            call_node[k] = id;
        }
    }
    let mut list = List { nodes, head: 0 };
    let mut seen = Seen::new();
    let mut linearized = Bits::new(n);
    let mut state = model.init();
    let mut stack: Vec<(usize, M::State)> = Vec::new();
    let mut entry = list.nodes[list.head].next;
    let mut steps = 0u64;
    while list.nodes[list.head].next != NIL {
        let node = list.nodes[entry];
        if !node.is_call && history[ops[node.op]].ret.is_none() {
            // A pending operation's return sits at the end of time, after every other event:
            // only pending operations are left, and each may simply never have taken effect.
            return Some(true);
        }
        if node.is_call {
            steps += 1;
            if steps > limits.steps {
                return None;
            }
            let op = &history[ops[node.op]];
            let output = if op.ret.is_some() { op.output.as_ref() } else { None };
            if let Some(next_state) = model.step(&state, &op.input, output) {
                linearized.set(node.op);
                if seen.insert(&linearized, &next_state) {
                    stack.push((entry, std::mem::replace(&mut state, next_state)));
                    list.lift(entry);
                    entry = list.nodes[list.head].next;
                    continue;
                }
                linearized.clear(node.op);
            }
            entry = node.next;
        } else {
            // A return whose call is still in the list: that operation must have been
            // linearized before this point. Backtrack.
            let Some((call, prev_state)) = stack.pop() else { return Some(false) };
            state = prev_state;
            linearized.clear(list.nodes[call].op);
            list.unlift(call);
            entry = list.nodes[call].next;
        }
    }
    Some(true)
}

/// A read/write register holding a `u64` (initially 0).
#[derive(Clone, Copy, Debug, Default)]
pub struct Register;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegisterOp {
    Read,
    Write(u64),
}

impl Model for Register {
    type State = u64;
    type Input = RegisterOp;
    /// A read's value; writes answer `0`.
    type Output = u64;

    fn init(&self) -> u64 {
        0
    }

    fn step(&self, state: &u64, input: &RegisterOp, output: Option<&u64>) -> Option<u64> {
        match input {
            RegisterOp::Write(v) => Some(*v),
            RegisterOp::Read => match output {
                Some(seen) if seen != state => None,
                _ => Some(*state),
            },
        }
    }
}

/// A key-value store of `u64` registers (each initially 0), partitioned by key.
#[derive(Clone, Copy, Debug, Default)]
pub struct KeyValue;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KvOp {
    Get(u64),
    Put(u64, u64),
    /// Compare-and-set: `Cas(key, expected, new)` answers 1 if it swapped, 0 if not.
    Cas(u64, u64, u64),
}

impl Model for KeyValue {
    type State = u64;
    type Input = KvOp;
    type Output = u64;

    fn init(&self) -> u64 {
        0
    }

    fn step(&self, state: &u64, input: &KvOp, output: Option<&u64>) -> Option<u64> {
        match *input {
            KvOp::Get(_) => match output {
                Some(seen) if seen != state => None,
                _ => Some(*state),
            },
            KvOp::Put(_, v) => Some(v),
            KvOp::Cas(_, expected, new) => {
                let swapped = *state == expected;
                match output {
                    Some(&1) if !swapped => None,
                    Some(&0) if swapped => None,
                    Some(&x) if x > 1 => None,
                    _ => Some(if swapped { new } else { *state }),
                }
            }
        }
    }

    fn partition(&self, input: &KvOp) -> u64 {
        match *input {
            KvOp::Get(k) | KvOp::Put(k, _) | KvOp::Cas(k, _, _) => k,
        }
    }
}
