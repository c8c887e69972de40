//! The set model: Jepsen's set checker (`jepsen.checker/set`). Clients `add` distinct elements
//! and finally `read` the whole set; the last successful read is the final read.
//!
//! Rules, per element, against the final read (invoked at `R0`, completed at `R1`):
//! - **lost**: an `add` acknowledged (`ok`) before `R0` whose element is absent. An add still
//!   running when the read began may or may not be in it.
//! - **unexpected**: an element present that no `add` invoked before `R1` could have put there:
//!   never attempted, or every attempt `fail`ed (`fail` means it certainly did not happen;
//!   Jepsen's checker files such an element under "recovered" instead — weft holds `fail` to
//!   its definition).
//! - an `info` (or never completed) add may be present or absent: both are fine, and the
//!   summary counts how many came back.
//!
//! No successful read at all is not a verdict ([`SetError::Unusable`]): a client must retry its
//! final read until it succeeds.

use super::{Op, Outcome, Stamp};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// Elements listed in a witness before the rest are only counted.
const LIST_MAX: usize = 20;

/// Why a set history failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SetError {
    Witness(SetWitness),
    Unusable(String),
}

/// The smallest sub-history that shows a set violation: the final read, and only the adds of
/// the lost (and unexpected) elements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetWitness {
    /// The final read: process, invoked, completed, how many elements it returned.
    pub read: (u64, Stamp, Stamp, usize),
    /// Acknowledged before the read began, absent from it: element, process, when acknowledged.
    pub lost: Vec<(String, u64, Stamp)>,
    /// Present, but no add could have put it there: element, why.
    pub unexpected: Vec<(String, &'static str)>,
    /// Adds acknowledged before the read began (the denominator of `lost`).
    pub acknowledged: usize,
}

impl fmt::Display for SetWitness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (process, r0, r1, n) = self.read;
        write!(f, "set: final read by process {process} [{r0} .. {r1}] returned {n} elements")?;
        if !self.lost.is_empty() {
            write!(f, "; {} of {} acknowledged adds lost:", self.lost.len(), self.acknowledged)?;
            for (e, p, at) in self.lost.iter().take(LIST_MAX) {
                write!(f, " {e} (ok at {at}, process {p})")?;
            }
            if self.lost.len() > LIST_MAX {
                write!(f, " … and {} more", self.lost.len() - LIST_MAX)?;
            }
        }
        if !self.unexpected.is_empty() {
            write!(f, "; {} unexpected:", self.unexpected.len())?;
            for (e, why) in self.unexpected.iter().take(LIST_MAX) {
                write!(f, " {e} ({why})")?;
            }
            if self.unexpected.len() > LIST_MAX {
                write!(f, " … and {} more", self.unexpected.len() - LIST_MAX)?;
            }
        }
        Ok(())
    }
}

/// Checks a set history; `Ok` is a one-line summary.
pub fn check_set(ops: &[Op]) -> Result<String, SetError> {
    let read = final_read(ops)?;
    let (r0, r1) = (read.invoked.time_ns, read.completed.expect("ok read").time_ns);
    let present = elements(&read.result)?;
    let mut adds: BTreeMap<String, Tally> = BTreeMap::new();
    let (mut acknowledged, mut indeterminate) = (0, 0);
    for op in ops.iter().filter(|op| op.f == "add") {
        let e = element(&op.value);
        let entry = adds.entry(e).or_default();
        let done = op.completed.map(|c| c.time_ns);
        if op.outcome == Outcome::Ok && done.is_some_and(|t| t < r0) && entry.ack.is_none() {
            entry.ack = Some((op.completed.expect("ok"), op.process));
            acknowledged += 1;
        }
        if op.invoked.time_ns <= r1 {
            entry.attempted = true;
            entry.possible |= op.outcome != Outcome::Fail;
        }
        indeterminate += usize::from(op.outcome == Outcome::Info);
    }
    let mut lost = Vec::new();
    for (e, tally) in &adds {
        if let (Some((at, p)), false) = (tally.ack, present.contains(e)) {
            lost.push((e.clone(), p, at));
        }
    }
    lost.sort_by_key(|(e, _, at)| (at.time_ns, e.clone()));
    let mut unexpected = Vec::new();
    let mut recovered = 0;
    for e in &present {
        match adds.get(e) {
            None => unexpected.push((e.clone(), "never added")),
            Some(t) if !t.attempted => unexpected.push((e.clone(), "never added")),
            Some(t) if !t.possible => unexpected.push((e.clone(), "every add of it failed")),
            Some(t) if t.ack.is_none() => recovered += 1,
            Some(_) => {}
        }
    }
    if lost.is_empty() && unexpected.is_empty() {
        return Ok(format!(
            "set: final read at {} has {} elements; all {acknowledged} adds acknowledged \
             before it are present; {recovered} present without an acknowledgement \
             ({indeterminate} adds ended unknown)",
            read.completed.expect("ok"),
            present.len()
        ));
    }
    let read = (read.process, read.invoked, read.completed.expect("ok"), present.len());
    Err(SetError::Witness(SetWitness { read, lost, unexpected, acknowledged }))
}

/// What the adds of one element came to, against the final read.
#[derive(Default)]
struct Tally {
    /// Acknowledged before the read began: the earliest ok stamp and its process.
    ack: Option<(Stamp, u64)>,
    /// Some attempt invoked before the read completed did not fail.
    possible: bool,
    /// Some attempt was invoked before the read completed.
    attempted: bool,
}

/// The successful read that completed last (ties: the later one in the history).
fn final_read(ops: &[Op]) -> Result<&Op, SetError> {
    ops.iter()
        .filter(|op| op.f == "read" && op.outcome == Outcome::Ok)
        .max_by_key(|op| op.completed.map(|c| c.time_ns))
        .ok_or_else(|| SetError::Unusable("set: no successful read: nothing to check".into()))
}

/// An element's identity: its JSON text (so `1` and `"1"` differ).
fn element(v: &Value) -> String {
    v.to_string()
}

fn elements(v: &Value) -> Result<BTreeSet<String>, SetError> {
    let list = v.as_array().ok_or_else(|| {
        SetError::Unusable(format!("set: the final read's value must be a JSON array, not {v}"))
    })?;
    Ok(list.iter().map(element).collect())
}
