//! Client histories in Jepsen's model, and the checks weft runs on them.
//!
//! A client writes one JSON object per operation event:
//! `{"type":"invoke"|"ok"|"fail"|"info","process":N,"f":"add","key":K,"value":V}`. `invoke`
//! starts an operation; `ok` (it happened, `value` is what it returned), `fail` (it certainly
//! did not happen) or `info` (unknown: a timeout, a lost connection) ends it. A process has at
//! most one operation open; one still open when the history ends counts as `info`. Real
//! processes print these lines with the prefix [`PREFIX`]; the host stamps each with the virtual
//! time and the node that printed it ([`Stamp`]).
//!
//! Checks: [`check_set`] (Jepsen's set checker, held to the definition of `fail`) and
//! [`check_linearizable`] (a register or a key-value store, translated to
//! [`crate::linearizability`]). A violation names the smallest sub-history that shows it, never
//! the whole list.

use crate::linearizability::Limits;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;

/// The prefix of a history line in a real process's output (stdout or stderr).
pub const PREFIX: &str = "WEFT-HISTORY ";

/// How an event ends (or starts) an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Invoke,
    Ok,
    Fail,
    Info,
}

/// Where and when an event was seen: virtual nanoseconds and the node that printed it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stamp {
    pub time_ns: u64,
    pub node: u32,
}

impl fmt::Display for Stamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.time_ns;
        write!(f, "{}.{:06}s n{}", ns / 1_000_000_000, (ns % 1_000_000_000) / 1000, self.node)
    }
}

/// One history event.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub kind: Kind,
    pub process: u64,
    pub f: String,
    pub key: Option<Value>,
    pub value: Value,
    pub at: Stamp,
}

/// A history line that is not a well-formed event, or events that do not pair up.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum HistoryError {
    #[error("history line {line}: {reason}")]
    Malformed { line: usize, reason: String },
    #[error("history event {event}: process {process} {reason}")]
    Pairing { event: usize, process: u64, reason: String },
}

/// Parses one event (the JSON object, without [`PREFIX`]). `process` defaults to the node.
pub fn parse_event(text: &str, at: Stamp, line: usize) -> Result<Event, HistoryError> {
    let bad = |reason: String| HistoryError::Malformed { line, reason };
    let v: Value = serde_json::from_str(text).map_err(|e| bad(format!("not JSON: {e}")))?;
    let obj = v.as_object().ok_or_else(|| bad("not a JSON object".into()))?;
    let kind = match obj.get("type").and_then(Value::as_str) {
        Some("invoke") => Kind::Invoke,
        Some("ok") => Kind::Ok,
        Some("fail") => Kind::Fail,
        Some("info") => Kind::Info,
        other => return Err(bad(format!("\"type\" must be invoke|ok|fail|info, not {other:?}"))),
    };
    let process = match obj.get("process") {
        None => u64::from(at.node),
        Some(p) => p.as_u64().ok_or_else(|| bad("\"process\" must be a number".into()))?,
    };
    let f = obj
        .get("f")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("\"f\" (the operation) must be a string".into()))?
        .to_string();
    let key = obj.get("key").filter(|k| !k.is_null()).cloned();
    let value = obj.get("value").cloned().unwrap_or(Value::Null);
    Ok(Event { kind, process, f, key, value, at })
}

/// Parses every `PREFIX` line of `lines` (text with its stamp); other lines are skipped.
pub fn parse_lines<'a>(
    lines: impl IntoIterator<Item = (&'a str, Stamp)>,
) -> Result<Vec<Event>, HistoryError> {
    let mut out = Vec::new();
    for (i, (text, at)) in lines.into_iter().enumerate() {
        if let Some(rest) = text.strip_prefix(PREFIX) {
            out.push(parse_event(rest, at, i + 1)?);
        }
    }
    Ok(out)
}

/// How an operation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    Fail,
    /// Unknown: an `info` completion, or never completed.
    Info,
}

/// One operation: an invocation paired with its completion.
#[derive(Clone, Debug, PartialEq)]
pub struct Op {
    pub process: u64,
    pub f: String,
    pub key: Option<Value>,
    /// The invocation's value (what was asked).
    pub value: Value,
    /// The completion's value (what came back; `Null` unless `ok`).
    pub result: Value,
    pub outcome: Outcome,
    pub invoked: Stamp,
    /// When it completed (`None`: never).
    pub completed: Option<Stamp>,
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key = self.key.as_ref().map(|k| format!(" key {k}")).unwrap_or_default();
        write!(f, "process {} {}{key} {}", self.process, self.f, self.value)?;
        match (self.outcome, self.completed) {
            (Outcome::Ok, Some(c)) => write!(f, " -> ok {} [{} .. {c}]", self.result, self.invoked),
            (Outcome::Fail, Some(c)) => write!(f, " -> fail [{} .. {c}]", self.invoked),
            (_, Some(c)) => write!(f, " -> info [{} .. {c}]", self.invoked),
            (_, None) => write!(f, " -> never completed [{} ..]", self.invoked),
        }
    }
}

/// Pairs each process's invocation with its completion, in invocation order.
pub fn pair(events: &[Event]) -> Result<Vec<Op>, HistoryError> {
    let mut ops: Vec<Op> = Vec::new();
    let mut open: BTreeMap<u64, usize> = BTreeMap::new();
    for (i, e) in events.iter().enumerate() {
        let err = |reason: &str| HistoryError::Pairing {
            event: i + 1,
            process: e.process,
            reason: reason.to_string(),
        };
        if e.kind == Kind::Invoke {
            if open.contains_key(&e.process) {
                return Err(err("invoked an operation while another was open"));
            }
            open.insert(e.process, ops.len());
            ops.push(Op {
                process: e.process,
                f: e.f.clone(),
                key: e.key.clone(),
                value: e.value.clone(),
                result: Value::Null,
                outcome: Outcome::Info,
                invoked: e.at,
                completed: None,
            });
            continue;
        }
        let k = open
            .remove(&e.process)
            .ok_or_else(|| err("completed an operation it never invoked"))?;
        let op = &mut ops[k];
        if op.f != e.f {
            return Err(err(&format!("invoked {} but completed {}", op.f, e.f)));
        }
        op.completed = Some(e.at);
        op.outcome = match e.kind {
            Kind::Ok => Outcome::Ok,
            Kind::Fail => Outcome::Fail,
            _ => Outcome::Info,
        };
        if e.kind == Kind::Ok {
            op.result = e.value.clone();
        }
    }
    Ok(ops)
}

/// The model a history is checked against (`-o history=…`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HistoryModel {
    Set,
    Register,
    Kv,
}

impl HistoryModel {
    pub fn parse(s: &str) -> Option<HistoryModel> {
        match s {
            "set" => Some(HistoryModel::Set),
            "register" => Some(HistoryModel::Register),
            "kv" => Some(HistoryModel::Kv),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            HistoryModel::Set => "set",
            HistoryModel::Register => "register",
            HistoryModel::Kv => "kv",
        }
    }
}

/// A history's verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Checked {
    /// The history satisfies the model; what the check saw, in one line.
    Valid(String),
    /// A violation, with its witness, as one paragraph.
    Invalid(String),
    /// The check could not decide (a search budget ran out, or the history is unusable).
    Unknown(String),
}

/// Checks paired operations against `model`.
pub fn check(model: HistoryModel, ops: &[Op]) -> Checked {
    match model {
        HistoryModel::Set => match check_set(ops) {
            Ok(summary) => Checked::Valid(summary),
            Err(SetError::Witness(w)) => Checked::Invalid(w.to_string()),
            Err(SetError::Unusable(why)) => Checked::Unknown(why),
        },
        HistoryModel::Register | HistoryModel::Kv => {
            check_linearizable(model, ops, Limits::default())
        }
    }
}

mod lin;
mod set;

pub use lin::{check_linearizable, lin_operations, minimal_witness};
pub use set::{check_set, SetError, SetWitness};
