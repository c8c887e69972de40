//! Register and key-value histories, translated to [`crate::linearizability`] and checked.
//!
//! Operations: `read` (ok value: the number read; `null` reads as the initial 0), `write`
//! (value: a number), `cas` (value: `[expected, new]`; `ok` means it swapped). A `fail`ed
//! operation certainly did not happen and is left out (as Jepsen does); an `info` one is
//! pending (it may take effect at any point after its call, or never). `register` puts every
//! operation on one register; `kv` keys them by `key`. Values are non-negative integers.
//!
//! A violation is shrunk to a witness: the shortest prefix of the failing key's history that
//! already has no linearization (operations still running at its end become pending), then
//! without every read that is not needed to keep it failing (removing a read never makes a
//! linearizable history fail, so what is left is a genuine contradiction).

use super::{Checked, HistoryModel, Op, Outcome};
use crate::linearizability::{check, KeyValue, KvOp, Limits, Operation, Verdict};
use serde_json::Value;
use std::collections::BTreeMap;

/// Most checks spent shrinking one witness.
const SHRINK_CHECKS: usize = 400;

/// Linearizability operations, each with the index of the [`Op`] it came from.
pub type LinOps = Vec<(usize, Operation<KvOp, u64>)>;

/// `ops` as linearizability operations, each with the index of the [`Op`] it came from.
pub fn lin_operations(model: HistoryModel, ops: &[Op]) -> Result<LinOps, String> {
    let mut keys: BTreeMap<String, u64> = BTreeMap::new();
    let mut out = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        if op.outcome == Outcome::Fail {
            continue;
        }
        let key = match (model, &op.key) {
            (HistoryModel::Kv, Some(k)) => {
                let next = keys.len() as u64;
                *keys.entry(k.to_string()).or_insert(next)
            }
            (HistoryModel::Kv, None) => return Err(format!("{op}: a kv operation needs a key")),
            _ => 0,
        };
        let num = |v: &Value, what: &str| match v {
            Value::Null if what == "read" => Ok(0),
            v => v.as_u64().ok_or_else(|| format!("{op}: {what} must be a non-negative integer")),
        };
        let done = op.outcome == Outcome::Ok;
        let (input, output) = match op.f.as_str() {
            "read" => (KvOp::Get(key), if done { Some(num(&op.result, "read")?) } else { None }),
            "write" => (KvOp::Put(key, num(&op.value, "write value")?), done.then_some(0)),
            "cas" => {
                let pair = op.value.as_array().filter(|a| a.len() == 2);
                let pair = pair.ok_or_else(|| format!("{op}: cas value must be [old, new]"))?;
                let (a, b) = (num(&pair[0], "cas old")?, num(&pair[1], "cas new")?);
                (KvOp::Cas(key, a, b), done.then_some(1))
            }
            f => return Err(format!("{op}: operation {f:?} is not read, write or cas")),
        };
        let ret = if done { op.completed.map(|c| c.time_ns) } else { None };
        let call = op.invoked.time_ns;
        out.push((i, Operation { client: op.process, input, call, ret, output }));
    }
    Ok(out)
}

/// Checks a register or key-value history.
pub fn check_linearizable(model: HistoryModel, ops: &[Op], limits: Limits) -> Checked {
    let lin = match lin_operations(model, ops) {
        Ok(l) => l,
        Err(e) => return Checked::Unknown(format!("{}: {e}", model.name())),
    };
    let history: Vec<Operation<KvOp, u64>> = lin.iter().map(|(_, o)| o.clone()).collect();
    match check(&KeyValue, &history, limits) {
        Verdict::Linearizable => Checked::Valid(format!(
            "{}: {} operations ({} failed, left out) are linearizable",
            model.name(),
            history.len(),
            ops.len() - history.len()
        )),
        Verdict::Unknown { key } => Checked::Unknown(format!(
            "{}: the search budget ({} steps) ran out on key #{key}",
            model.name(),
            limits.steps
        )),
        Verdict::NotLinearizable { ops: part, .. } => {
            let witness = minimal_witness(&history, &part, limits);
            let mut text = format!(
                "{}: not linearizable; these {} operations (of {}) cannot be ordered:",
                model.name(),
                witness.len(),
                history.len()
            );
            for w in witness {
                text.push_str(&format!("\n  {}", ops[lin[w].0]));
            }
            Checked::Invalid(text)
        }
    }
}

/// The smallest failing sub-history found of `part` (indices into `history`, a partition that
/// is not linearizable), as indices into `history`, in call order.
pub fn minimal_witness(
    history: &[Operation<KvOp, u64>],
    part: &[usize],
    limits: Limits,
) -> Vec<usize> {
    let fails = |cut: u64, keep: &[usize]| {
        let sub: Vec<_> = keep.iter().map(|&i| truncated(&history[i], cut)).collect();
        matches!(check(&KeyValue, &sub, limits), Verdict::NotLinearizable { .. })
    };
    // The shortest failing prefix: failing is monotone in the cut (a prefix of a linearizable
    // history is linearizable), and it can only start failing at a return.
    let mut cuts: Vec<u64> = part.iter().filter_map(|&i| history[i].ret).collect();
    cuts.sort_unstable();
    cuts.dedup();
    let (mut lo, mut hi) = (0, cuts.len());
    let mut budget = SHRINK_CHECKS;
    while lo < hi && budget > 0 {
        budget -= 1;
        let mid = (lo + hi) / 2;
        if fails(cuts[mid], part) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let cut = cuts.get(hi).copied().unwrap_or(u64::MAX);
    let mut keep: Vec<usize> = part.iter().copied().filter(|&i| history[i].call <= cut).collect();
    let mut k = keep.len();
    while k > 0 && budget > 0 {
        k -= 1;
        if !matches!(history[keep[k]].input, KvOp::Get(_)) {
            continue;
        }
        budget -= 1;
        let without: Vec<usize> = keep.iter().copied().filter(|&i| i != keep[k]).collect();
        if fails(cut, &without) {
            keep = without;
        }
    }
    keep.sort_by_key(|&i| (history[i].call, i));
    keep
}

/// `op` as seen at time `cut`: still running then, it is pending.
fn truncated(op: &Operation<KvOp, u64>, cut: u64) -> Operation<KvOp, u64> {
    let mut op = op.clone();
    if op.ret.is_some_and(|r| r > cut) {
        op.ret = None;
        op.output = None;
    }
    op
}
