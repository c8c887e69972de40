//! Client histories from async tasks: a client task records each operation's invocation and
//! completion (`ok`, `fail`, or `info` for "unknown": a timeout, a lost connection) with
//! [`invoke`] / [`ok`] / [`fail`] / [`info`]. Events are stamped with the virtual time and the
//! node, kept on the node for [`crate::AsyncNode::check_history`] (the `weft_check` set,
//! register and key-value checkers with minimal witnesses), and shown in the trace as
//! observations in the JSON form real processes print (`weft_check::history`).

use crate::rt::{with_state, Op};
pub use serde_json::{json, Value};
use weft_check::history::{Event, Kind, Stamp};

/// Records one event of client `process`'s operation `f` (`read`, `write`, `cas`, `add`…).
pub fn record(kind: Kind, process: u64, f: &str, key: Option<Value>, value: Value) {
    let name = match kind {
        Kind::Invoke => "invoke",
        Kind::Ok => "ok",
        Kind::Fail => "fail",
        Kind::Info => "info",
    };
    let mut line = json!({ "type": name, "process": process, "f": f, "value": value });
    if let Some(k) = &key {
        line["key"] = k.clone();
    }
    with_state(|s| {
        let at = Stamp { time_ns: s.now.0, node: s.id };
        let f = f.to_string();
        s.history.push(Event { kind, process, f, key, value, at });
        s.ops.push(Op::Observe(line.to_string()));
    });
}

pub fn invoke(process: u64, f: &str, key: Option<Value>, value: Value) {
    record(Kind::Invoke, process, f, key, value)
}

/// The operation happened; `value` is what it returned.
pub fn ok(process: u64, f: &str, key: Option<Value>, value: Value) {
    record(Kind::Ok, process, f, key, value)
}

/// The operation certainly did not happen.
pub fn fail(process: u64, f: &str, key: Option<Value>) {
    record(Kind::Fail, process, f, key, Value::Null)
}

/// Unknown whether the operation happened (a timeout, a reset stream).
pub fn info(process: u64, f: &str, key: Option<Value>) {
    record(Kind::Info, process, f, key, Value::Null)
}
