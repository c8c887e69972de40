//! Client histories in Jepsen's model (invoke / ok / fail / info), for in-process worlds and
//! real processes alike: [`weft_check::history`] re-exported, plus [`Hist`], the observation an
//! in-process node records for each client event, and ready-made properties that check the
//! run's history directly as a register, a key-value store or a set, with a minimal witness.
//!
//! A node whose `Obs` type implements [`AsHistory`] (or is [`Hist`] itself) gets
//! `.always("Linearizable", weft::history::register)` in its [`crate::World`].

use serde_json::Value;
pub use weft_check::history::*;
use weft_sim::{Node, View};

/// One client event, as an in-process node observes it (`ctx.observe(Hist::invoke(…))`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hist {
    pub kind: Kind,
    /// The client (at most one operation open per process).
    pub process: u64,
    /// The operation: `read`, `write`, `cas` (register, kv) or `add`, `read` (set).
    pub f: &'static str,
    pub key: Option<u64>,
    /// What was asked (`invoke`) or what came back (`ok`).
    pub value: Option<u64>,
}

impl Hist {
    pub fn invoke(process: u64, f: &'static str, value: Option<u64>) -> Hist {
        Hist { kind: Kind::Invoke, process, f, key: None, value }
    }
    pub fn ok(process: u64, f: &'static str, value: Option<u64>) -> Hist {
        Hist { kind: Kind::Ok, process, f, key: None, value }
    }
    /// The operation certainly did not happen.
    pub fn fail(process: u64, f: &'static str) -> Hist {
        Hist { kind: Kind::Fail, process, f, key: None, value: None }
    }
    /// Unknown whether it happened (a timeout).
    pub fn info(process: u64, f: &'static str) -> Hist {
        Hist { kind: Kind::Info, process, f, key: None, value: None }
    }
    /// The same event on key `key` (key-value histories).
    pub fn on(mut self, key: u64) -> Hist {
        self.key = Some(key);
        self
    }
}

/// An observation type that carries client events (and maybe other things).
pub trait AsHistory {
    fn as_history(&self) -> Option<&Hist>;
}

impl AsHistory for Hist {
    fn as_history(&self) -> Option<&Hist> {
        Some(self)
    }
}

/// The client events of a run so far, stamped with their time and node.
pub fn events<N: Node>(view: &View<'_, N>) -> Vec<Event>
where
    N::Obs: AsHistory,
{
    let history = view.history().iter();
    let hist = history.filter_map(|o| o.obs.as_history().map(|h| (o, h)));
    hist.map(|(o, h)| Event {
        kind: h.kind,
        process: h.process,
        f: h.f.to_string(),
        key: h.key.map(Value::from),
        value: h.value.map(Value::from).unwrap_or(Value::Null),
        at: Stamp { time_ns: o.time.as_nanos(), node: o.node },
    })
    .collect()
}

/// Checks the run's history against `model`: `Err` carries the witness.
pub fn check_view<N: Node>(model: HistoryModel, view: &View<'_, N>) -> Result<(), String>
where
    N::Obs: AsHistory,
{
    let ops = pair(&events(view)).map_err(|e| e.to_string())?;
    match check(model, &ops) {
        Checked::Valid(_) => Ok(()),
        Checked::Invalid(witness) => Err(witness),
        // Never a pass by default: an undecided history is reported, with why.
        Checked::Unknown(why) => Err(format!("could not decide: {why}")),
    }
}

/// Property: the history is linearizable as one register (`read`, `write`).
pub fn register<N: Node>(view: &View<'_, N>) -> Result<(), String>
where
    N::Obs: AsHistory,
{
    linearizable(HistoryModel::Register, view)
}

/// Property: the history is linearizable as a key-value store (each event with a key).
pub fn kv<N: Node>(view: &View<'_, N>) -> Result<(), String>
where
    N::Obs: AsHistory,
{
    linearizable(HistoryModel::Kv, view)
}

/// Checks only when an `ok` was observed at this instant (only an `ok` can make a linearizable
/// history non-linearizable: invocations, failures and unknown outcomes may all be left out),
/// on operations built straight from the observations; a history that fails (or that the fast
/// path cannot read) goes through [`check_view`], which finds the minimal witness.
fn linearizable<N: Node>(model: HistoryModel, view: &View<'_, N>) -> Result<(), String>
where
    N::Obs: AsHistory,
{
    let history = view.history();
    let recent = history.iter().rev().take_while(|o| o.time == view.now);
    if !recent.filter_map(|o| o.obs.as_history()).any(|h| h.kind == Kind::Ok) {
        return Ok(());
    }
    let keyed = model == HistoryModel::Kv;
    match fast_ops(view, keyed).map(|ops| lin::check(&lin::KeyValue, &ops, lin::Limits::default()))
    {
        Some(lin::Verdict::Linearizable) => Ok(()),
        _ => check_view(model, view),
    }
}

use weft_check::linearizability as lin;

/// The history as linearizability operations, or None if it is not plain reads and writes
/// that pair up (the slow path then explains why).
fn fast_ops<N: Node>(view: &View<'_, N>, keyed: bool) -> Option<Vec<lin::Operation<lin::KvOp, u64>>>
where
    N::Obs: AsHistory,
{
    let mut ops: Vec<Option<lin::Operation<lin::KvOp, u64>>> = Vec::new();
    let mut open = std::collections::BTreeMap::new();
    for o in view.history() {
        let Some(h) = o.obs.as_history() else { continue };
        let time = o.time.as_nanos();
        let key = if keyed { h.key? } else { 0 };
        match h.kind {
            Kind::Invoke => {
                let input = match (h.f, h.value) {
                    ("read", _) => lin::KvOp::Get(key),
                    ("write", Some(v)) => lin::KvOp::Put(key, v),
                    _ => return None,
                };
                open.insert(h.process, ops.len()).is_none().then_some(())?;
                let op = lin::Operation {
                    client: h.process,
                    input,
                    call: time,
                    ret: None,
                    output: None,
                };
                ops.push(Some(op));
            }
            kind => {
                let i = open.remove(&h.process)?;
                let op = ops[i].as_mut()?;
                match kind {
                    Kind::Ok => {
                        op.ret = Some(time);
                        op.output = Some(match op.input {
                            lin::KvOp::Get(_) => h.value.unwrap_or(0),
                            _ => 0,
                        });
                    }
                    Kind::Fail => ops[i] = None,
                    _ => {}
                }
            }
        }
    }
    Some(ops.into_iter().flatten().collect())
}

/// Property: the history satisfies Jepsen's set checker (`add`, then a final `read`).
pub fn set<N: Node>(view: &View<'_, N>) -> Result<(), String>
where
    N::Obs: AsHistory,
{
    check_view(HistoryModel::Set, view)
}
