//! Synthetic client histories with a known answer, for tests and benchmarks: concurrent clients
//! whose operations take effect at a point drawn inside each operation's interval, so the
//! history is linearizable by construction; [`corrupt_a_read`] then makes it not.

use crate::history::{Op, Outcome, Stamp};
use crate::linearizability::{KvOp, Operation};
use serde_json::Value;
use weft_core::Rng;

/// Shape of a synthetic key-value history.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub ops: usize,
    pub clients: u64,
    pub keys: u64,
    /// Longest operation, in time units (operations overlap more as this grows).
    pub duration_max: u64,
    /// Share of operations, in percent, that are puts (the rest are gets and CAS).
    pub put_percent: u64,
}

/// A linearizable history of a key-value store (registers start at 0).
pub fn kv_history(seed: u64, shape: Shape) -> Vec<Operation<KvOp, u64>> {
    let mut rng = Rng::new(seed);
    let mut next_free = vec![0u64; shape.clients as usize];
    // (linearization point, op) in call order first.
    let mut ops: Vec<(u64, Operation<KvOp, u64>)> = Vec::with_capacity(shape.ops);
    for i in 0..shape.ops {
        let client = i as u64 % shape.clients;
        let call = next_free[client as usize] + 1 + rng.below(3);
        let ret = call + 1 + rng.below(shape.duration_max.max(1));
        next_free[client as usize] = ret;
        let point = call + rng.below(ret - call + 1);
        let key = rng.below(shape.keys.max(1));
        let roll = rng.below(100);
        let input = if roll < shape.put_percent {
            KvOp::Put(key, 1 + rng.below(5))
        } else if roll < shape.put_percent + (100 - shape.put_percent) / 4 {
            KvOp::Cas(key, rng.below(4), 1 + rng.below(5))
        } else {
            KvOp::Get(key)
        };
        ops.push((point, Operation { client, input, call, ret: Some(ret), output: None }));
    }
    // Apply in linearization-point order (ties: call order) to a real store.
    let mut order: Vec<usize> = (0..ops.len()).collect();
    order.sort_by_key(|&i| (ops[i].0, i));
    let mut store = vec![0u64; shape.keys.max(1) as usize];
    for i in order {
        let op = &mut ops[i].1;
        op.output = Some(match op.input {
            KvOp::Get(k) => store[k as usize],
            KvOp::Put(k, v) => {
                store[k as usize] = v;
                0
            }
            KvOp::Cas(k, expected, new) => {
                if store[k as usize] == expected {
                    store[k as usize] = new;
                    1
                } else {
                    0
                }
            }
        });
    }
    ops.into_iter().map(|(_, op)| op).collect()
}

/// Changes the answer of the last get in the history to a value no put ever wrote, which no
/// linearization can explain. Returns its index, or None if there is no get.
pub fn corrupt_a_read(history: &mut [Operation<KvOp, u64>]) -> Option<usize> {
    let i = history.iter().rposition(|op| matches!(op.input, KvOp::Get(_)))?;
    history[i].output = Some(1_000);
    Some(i)
}

/// A set history: `clients` processes add `adds` distinct elements with overlapping calls
/// (about one in ten ends `info`, one in twenty `fail`; an `info` add lands half the time),
/// then one process reads the set. It passes the set checker; [`lose_elements`] makes it not.
pub fn set_history(seed: u64, adds: usize, clients: u64) -> Vec<Op> {
    let mut rng = Rng::new(seed);
    let mut next_free = vec![0u64; clients.max(1) as usize];
    let mut ops = Vec::with_capacity(adds + 1);
    let mut present = Vec::new();
    let at = |t: u64| Stamp { time_ns: t, node: 0 };
    for i in 0..adds {
        let process = i as u64 % clients.max(1);
        let call = next_free[process as usize] + 1 + rng.below(3);
        let ret = call + 1 + rng.below(20);
        next_free[process as usize] = ret;
        let roll = rng.below(20);
        let outcome = match roll {
            0 => Outcome::Fail,
            1 | 2 => Outcome::Info,
            _ => Outcome::Ok,
        };
        if outcome == Outcome::Ok || (outcome == Outcome::Info && rng.below(2) == 0) {
            present.push(Value::from(i as u64));
        }
        let result = Value::Null;
        ops.push(Op {
            process,
            f: "add".into(),
            key: None,
            value: Value::from(i as u64),
            result,
            outcome,
            invoked: at(call),
            completed: Some(at(ret)),
        });
    }
    let start = next_free.iter().copied().max().unwrap_or(0) + 1;
    ops.push(Op {
        process: 0,
        f: "read".into(),
        key: None,
        value: Value::Null,
        result: Value::Array(present),
        outcome: Outcome::Ok,
        invoked: at(start),
        completed: Some(at(start + 5)),
    });
    ops
}

/// Removes `n` acknowledged elements (the earliest) from the final read of a
/// [`set_history`]; returns the removed elements.
pub fn lose_elements(history: &mut [Op], n: usize) -> Vec<u64> {
    let acked: Vec<u64> = history
        .iter()
        .filter(|op| op.f == "add" && op.outcome == Outcome::Ok)
        .filter_map(|op| op.value.as_u64())
        .take(n)
        .collect();
    if let Some(read) = history.iter_mut().rev().find(|op| op.f == "read") {
        if let Value::Array(list) = &mut read.result {
            list.retain(|v| !v.as_u64().is_some_and(|e| acked.contains(&e)));
        }
    }
    acked
}
