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

use weft_async::{entry, world, AsyncNode};
use weft_check::history::HistoryModel;
use weft_core::{
    Allowed, ConfigError, Modality, OptionDecl, PropertyInfo, RunSpec, Runner, Scenario, Target,
    TargetInfo, VariantInfo,
};
use weft_sim::{Check, Property, SimRunner, SimSpec, View};

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

const OPTIONS: &[OptionDecl] = &[
    OptionDecl::new("clients", "3", Allowed::Int { min: 1, max: 8 }, "client tasks"),
    OptionDecl::new("ops", "6", Allowed::Int { min: 0, max: 50 }, "operations per client"),
];

pub struct AsyncKv;

/// The world of one variant: three servers and one client node.
pub fn spec(buggy: bool, clients: u64, ops: u64) -> SimSpec<AsyncNode> {
    let mut sim = world(
        SERVERS as usize + 1,
        entry(move |id| async move {
            if id == CLIENT_NODE {
                client::clients(clients, ops).await
            } else {
                server::server(id, buggy).await
            }
        }),
    );
    sim.properties = PROPERTIES
        .iter()
        .map(|&(name, modality, _, check)| Property { name, modality, check })
        .collect();
    // The clients keep the history: only servers crash.
    sim.crash_gate = Some(|_, node| node != CLIENT_NODE);
    sim
}

impl Target for AsyncKv {
    fn info(&self) -> TargetInfo {
        TargetInfo {
            name: "async-kv",
            summary: "a replicated KV store in async Rust (weft-async); buggy acks writes early",
            variants: vec![
                VariantInfo {
                    name: "buggy",
                    summary: "the leader acknowledges a write before a majority stores it",
                },
                VariantInfo { name: "fixed", summary: "writes are acknowledged once committed" },
            ],
            options: weft_core::options::infos(OPTIONS),
            properties: PROPERTIES
                .iter()
                .map(|&(name, modality, summary, _)| PropertyInfo { name, modality, summary })
                .collect(),
        }
    }

    fn options(&self) -> Vec<OptionDecl> {
        OPTIONS.to_vec()
    }

    fn prepare(&self, run: &RunSpec) -> Result<Box<dyn Runner>, ConfigError> {
        let info = self.info();
        weft_core::check_spec(self, run)?;
        let clients: u64 = info.parse_option(run, "clients")?;
        let ops: u64 = info.parse_option(run, "ops")?;
        let mut sim = spec(run.variant == "buggy", clients, ops);
        sim.focus = run.property.clone();
        Ok(Box::new(SimRunner { sim, scenario: default_scenario() }))
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
