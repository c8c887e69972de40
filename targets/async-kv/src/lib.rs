//! The target `async-kv`: a small replicated key-value store written with async/await, run
//! in-process by `weft-async`. Three servers elect a leader with randomised timeouts over UDP,
//! replicate over streams and persist their state to disk; a fourth node runs the clients as
//! tasks, which retry through timeouts and leader changes and record a Jepsen history. The
//! `buggy` leader acknowledges a write before a majority stores it, so a leader crash inside
//! that window loses an acknowledged write; `fixed` acknowledges only committed writes. The
//! property `Linearizable` checks the client history as a key-value store (`weft_check`).
//!
//! `sys.rs` is the only file that names the runtime: the protocol reads like tokio code.

mod client;
mod server;
mod sys;
mod wire;

use weft_async::{entry, world, AsyncNode, Entry};
use weft_check::history::HistoryModel;
use weft_core::{
    Allowed, ConfigError, Modality, OptionDecl, RunSpec, Runner, Scenario, Target, TargetInfo,
};
use weft_sim::{Check, Property, SimSpec, View, World};

pub use server::SERVERS;

/// The node that runs the clients.
pub const CLIENT_NODE: u32 = SERVERS;

fn linearizable(v: &View<'_, AsyncNode>) -> Result<(), String> {
    v.node(CLIENT_NODE).map_or(Ok(()), |c| c.check_history(HistoryModel::Kv))
}

fn write_acknowledged(v: &View<'_, AsyncNode>) -> Result<(), String> {
    let acked = v.node(CLIENT_NODE).is_some_and(|c| {
        c.history().iter().any(|e| e.kind == weft_check::history::Kind::Ok && e.f == "write")
    });
    if acked {
        Ok(())
    } else {
        Err("no write acknowledged".into())
    }
}

const PROPERTIES: [(&str, Modality, &str, Check<AsyncNode>); 2] = [
    (
        "Linearizable",
        Modality::Always,
        "the clients' history is linearizable as a key-value store",
        linearizable,
    ),
    ("WriteAcknowledged", Modality::Sometimes, "some write is acknowledged", write_acknowledged),
];

pub struct AsyncKv;

/// What every node of a variant runs: the clients on [`CLIENT_NODE`], a server elsewhere.
fn node_entry(buggy: bool, clients: u64, ops: u64) -> Entry {
    entry(move |id| async move {
        if id == CLIENT_NODE {
            client::clients(clients, ops).await
        } else {
            server::server(id, buggy).await
        }
    })
}

/// The world of one variant as a bare spec (the benchmark runs it directly).
pub fn spec(buggy: bool, clients: u64, ops: u64) -> SimSpec<AsyncNode> {
    let mut sim = world(SERVERS as usize + 1, node_entry(buggy, clients, ops));
    sim.properties = PROPERTIES
        .iter()
        .map(|&(name, modality, _, check)| Property { name, modality, check })
        .collect();
    sim.crash_gate = Some(|_, node| node != CLIENT_NODE);
    sim
}

/// The target as a world: three servers and one client node, which keeps the history and so
/// never crashes.
pub fn kv_world() -> World<AsyncNode> {
    let mut w = World::new("async-kv", SERVERS as usize + 1, |cfg, id| {
        AsyncNode::new(id, node_entry(cfg.is("buggy"), cfg.get("clients"), cfg.get("ops")))
    })
    .summary("a replicated KV store in async Rust (weft-async); buggy acks writes early")
    .variant("buggy", "the leader acknowledges a write before a majority stores it")
    .variant("fixed", "writes are acknowledged once committed")
    .option("clients", "3", Allowed::Int { min: 1, max: 8 }, "client tasks")
    .option("ops", "6", Allowed::Int { min: 0, max: 50 }, "operations per client")
    .scenario(|_, s| *s = default_scenario())
    .crash_gate(|_, node| node != CLIENT_NODE);
    for (name, modality, summary, check) in PROPERTIES {
        w = w.described(name, modality, summary, check);
    }
    w
}

impl Target for AsyncKv {
    fn info(&self) -> TargetInfo {
        kv_world().info()
    }

    fn options(&self) -> Vec<OptionDecl> {
        kv_world().options()
    }

    fn prepare(&self, spec: &RunSpec) -> Result<Box<dyn Runner>, ConfigError> {
        kv_world().prepare(spec)
    }
}

/// One crash of a server with restart, partitions, message faults.
pub fn default_scenario() -> Scenario {
    let mut s = Scenario::default();
    s.budget.crashes = 1;
    s.rates.crash = weft_core::Ratio::new(1, 300);
    s.fault_phase = weft_core::SimDuration::from_secs(1);
    s.heal_phase = weft_core::SimDuration::from_secs(1);
    s
}
