//! The target `raft-rs`: the published `raft` crate (tikv/raft-rs), versions 0.4.1 and 0.4.2
//! from crates.io, run unmodified as five in-process `RawNode`s under weft's kernel. It owns the
//! harness (ticks from jittered weft timers, an apply step that lags commit as its own
//! schedulable event, membership growth 3 → 4 → 5, leader transfers, client proposals), the
//! oracles (at most one leader per term, committed entries never lost, recovery after faults
//! stop), and the frozen counterexample that tells the two versions apart
//! (`tests/regressions.rs`).
//!
//! The bug it is meant to find (tikv/raft-rs #221, fixed by PR #225 and released in 0.4.2): a
//! follower receiving `MsgTimeoutNow` (leadership transfer) campaigned at once, without the
//! check `MsgHup` makes for committed but unapplied configuration changes. A node that has not
//! yet applied "add 4" and "add 5" still counts votes among the three original voters, so it can
//! win a term with two votes while another candidate, counting among all five, wins the same
//! term with three others.
//!
//! How the library is controlled: see [`library`] (hidden randomness pinned, no clock) and
//! [`node`] (time and apply lag from decisions). Nodes do not crash: `MemStorage` is the
//! library's in-memory store, and a restart that lost it would break raft's assumptions, not
//! raft.

// Built by build.rs, one wrapper crate per published version (not Cargo dependencies: Cargo
// allows only one semver-compatible version of a crate per dependency graph).
extern crate raft_v0_4_1;
extern crate raft_v0_4_2;

pub mod library;
pub mod node;

use library::{Library, Tuning, V0_4_1, V0_4_2};
use node::{NodeOptions, RaftNode, Req, PROBE_BASE};
use weft_core::{
    Allowed, ConfigError, Decisions, Modality, OptionDecl, PropertyInfo, Ratio, RunSpec, Runner,
    Scenario, SimTime, Site, Target, TargetInfo, VariantInfo,
};
use weft_sim::{Check, NodeId, Property, SimRunner, SimSpec};

/// Ticks per election timeout and per heartbeat. With a 10 ms tick and 1–10 ms links, a
/// heartbeat (every 20 ms) arrives well within an election timeout (100–200 ms).
pub const TUNING: Tuning = Tuning { election_ticks: 10, heartbeat_ticks: 2 };

/// The properties, one row each: name, modality, summary, check.
fn table<L: Library>() -> [(&'static str, Modality, &'static str, Check<RaftNode<L>>); 4] {
    [
        (
            "OneLeaderPerTerm",
            Modality::Always,
            "no two nodes are ever leader in the same term",
            node::one_leader_per_term::<L>,
        ),
        (
            "CommittedKept",
            Modality::Always,
            "applied entries agree across nodes and stay in every log that applied them",
            node::committed_kept::<L>,
        ),
        (
            "Recovery",
            Modality::Eventually,
            "after faults stop, a leader followed by a majority of its voters applies a new proposal",
            node::recovery::<L>,
        ),
        (
            "Grew",
            Modality::Sometimes,
            "the membership reaches every node (3 -> 4 -> 5 by default)",
            node::grew::<L>,
        ),
    ]
}

pub const VARIANTS: [(&str, &str); 2] = [
    ("0.4.1", "raft 0.4.1: MsgTimeoutNow campaigns with unapplied configuration changes"),
    ("0.4.2", "raft 0.4.2: PR #225, a transfer campaign checks for pending conf changes first"),
];

/// The `raft-rs` target.
pub struct RaftRs;

/// Parsed options of one spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Bootstrap voters (raft ids `1..=initial`).
    pub initial: usize,
    /// Nodes in the world; the ones after `initial` join by configuration change.
    pub nodes: usize,
    /// Client proposals during the fault phase.
    pub proposals: u64,
    /// Leader-transfer requests during the fault phase.
    pub transfers: u64,
    /// Requests per joining node to add it (a lost or refused request is retried this often).
    pub add_retries: u64,
    /// Largest delay of one apply step, ms.
    pub apply_lag_ms: u64,
    /// Largest extra length of one tick, ms.
    pub tick_jitter_ms: u64,
}

const COUNT: Allowed = Allowed::Int { min: 0, max: weft_core::options::MAX_REQUESTS };
/// Nodes in the world, at most.
const MAX_NODES: u64 = 9;

const OPTIONS: &[OptionDecl] = &[
    OptionDecl::new("initial", "3", Allowed::Int { min: 1, max: MAX_NODES }, "bootstrap voters"),
    OptionDecl::new(
        "nodes",
        "5",
        Allowed::Int { min: 1, max: MAX_NODES },
        "nodes in all; the ones past `initial` join by conf change",
    ),
    OptionDecl::new("proposals", "20", COUNT, "client proposals spread over the fault phase"),
    OptionDecl::new("transfers", "16", COUNT, "leader-transfer requests in the fault phase"),
    OptionDecl::new(
        "add-retries",
        "6",
        Allowed::Int { min: 0, max: 1000 },
        "requests to add each joining node (lost ones are retried)",
    ),
    OptionDecl::new(
        "apply-lag",
        "500",
        Allowed::Int { min: 0, max: 60_000 },
        "longest delay of one apply step behind commit, in ms",
    ),
    OptionDecl::new(
        "tick-jitter",
        "0",
        Allowed::Int { min: 0, max: 10_000 },
        "longest extra length of one 10 ms tick, in ms (0: none)",
    ),
];

impl Target for RaftRs {
    fn info(&self) -> TargetInfo {
        TargetInfo {
            name: "raft-rs",
            summary: "the published raft crate (0.4.1, 0.4.2), membership 3->4->5, leader transfer",
            variants: VARIANTS
                .iter()
                .map(|&(name, summary)| VariantInfo { name, summary })
                .collect(),
            options: weft_core::options::infos(OPTIONS),
            properties: table::<V0_4_2>()
                .iter()
                .map(|&(name, modality, summary, _)| PropertyInfo { name, modality, summary })
                .collect(),
        }
    }

    fn options(&self) -> Vec<OptionDecl> {
        OPTIONS.to_vec()
    }

    fn prepare(&self, spec: &RunSpec) -> Result<Box<dyn Runner>, ConfigError> {
        let info = self.info();
        weft_core::check_spec(self, spec)?;
        let bad = |option: &str, reason: &str| info.bad_option(spec, option, reason);
        let opts = Options {
            initial: info.parse_option(spec, "initial")?,
            nodes: info.parse_option(spec, "nodes")?,
            proposals: info.parse_option(spec, "proposals")?,
            transfers: info.parse_option(spec, "transfers")?,
            add_retries: info.parse_option(spec, "add-retries")?,
            apply_lag_ms: info.parse_option(spec, "apply-lag")?,
            tick_jitter_ms: info.parse_option(spec, "tick-jitter")?,
        };
        if opts.initial == 0 {
            return Err(bad("initial", "expected at least 1 bootstrap voter"));
        }
        if opts.nodes < opts.initial {
            return Err(bad("nodes", &format!("expected `initial` ({}) to 9 nodes", opts.initial)));
        }
        Ok(match spec.variant.as_str() {
            "0.4.1" => runner::<V0_4_1>(opts, spec.property.clone()),
            "0.4.2" => runner::<V0_4_2>(opts, spec.property.clone()),
            other => unreachable!("validate() accepted unknown variant {other}"),
        })
    }
}

fn runner<L: Library>(opts: Options, focus: Option<String>) -> Box<dyn Runner> {
    let node_opts = NodeOptions {
        tuning: TUNING,
        initial: opts.initial,
        apply_lag_ms: opts.apply_lag_ms,
        tick_jitter_ms: opts.tick_jitter_ms,
    };
    let sim = SimSpec {
        nodes: opts.nodes,
        make: Box::new(move |id| RaftNode::<L>::new(id, node_opts)),
        workload: Box::new(move |d: &mut Decisions, sc: &Scenario| workload(opts, d, sc)),
        properties: table::<L>()
            .iter()
            .map(|&(name, modality, _, check)| Property { name, modality, check })
            .collect(),
        assumptions: Vec::new(),
        crash_gate: None,
        focus,
    };
    Box::new(SimRunner { sim, scenario: default_scenario() })
}

/// The run's inputs, drawn from decisions: client proposals and leader-transfer requests at
/// random nodes and times, requests to add each joining node (retried, since a request that
/// reaches no leader, or a leader with a configuration change still pending, is dropped), and,
/// in the heal phase, a bounded number of probe proposals at every node for `Recovery`.
///
/// Each fault-phase request draws at its own site ([`Site::workload_item`]), its time first:
/// time 0 means the request is never made (and draws nothing more), so the shrinker drops a
/// request by zeroing its site and every other request keeps its time and node. At random
/// that is one draw in `fault_ms + 1`.
fn workload(opts: Options, d: &mut Decisions, sc: &Scenario) -> Vec<(SimTime, NodeId, Req)> {
    const MS: u64 = 1_000_000;
    let fault_ms = (sc.fault_phase.as_nanos() / MS).max(1);
    let nodes = opts.nodes as u64;
    let mut out = Vec::new();
    let mut item = 0;
    let mut request = |d: &mut Decisions, req: &dyn Fn(&mut Decisions) -> Req| {
        let site = Site::workload_item(item);
        item += 1;
        let at = d.at(site).choose(fault_ms + 1);
        if at > 0 {
            let node = d.at(site).choose(nodes) as NodeId;
            let req = req(d.at(site));
            out.push((SimTime(at * MS), node, req));
        }
    };
    for i in 0..opts.proposals {
        request(d, &|_| Req::Propose(i + 1));
    }
    for joiner in opts.initial as u64..nodes {
        for _ in 0..opts.add_retries {
            request(d, &|_| Req::AddNode(joiner as NodeId));
        }
    }
    for _ in 0..opts.transfers {
        request(d, &|d| Req::Transfer(d.choose(nodes) as NodeId));
    }
    // Bounded demand in the heal phase: a probe at every node every 200 ms during its first
    // three quarters (a client that retries), each a fresh value.
    let heal = sc.fault_phase.as_nanos();
    let mut k = 0;
    let mut at = 100 * MS;
    while at <= sc.heal_phase.as_nanos() / 4 * 3 {
        for node in 0..opts.nodes as NodeId {
            out.push((SimTime(heal + at), node, Req::Propose(PROBE_BASE + k)));
            k += 1;
        }
        at += 200 * MS;
    }
    out
}

/// Message delays, loss, duplication, reordering and pauses as usual, and a flaky network:
/// partitions (a node isolated, or one direction of a link cut) up to ten times as often as the
/// default and spread over the whole fault phase (budget 20, each lasting at most 300 ms). Raft
/// is built for all of these. No crashes (see the crate documentation).
///
/// Why flaky: the bug needs a second election in the same term as the transfer's, which needs
/// some node not to hear the new leader for an election timeout. With the default two
/// partitions, drawn early in the run, campaigns of 4,000 runs found nothing; with this network
/// about one run in a thousand violates a property (`examples/stats.rs` measures it).
fn default_scenario() -> Scenario {
    let mut s = Scenario::default();
    s.rates.crash = Ratio::ZERO;
    s.budget.crashes = 0;
    s.rates.partition = Ratio::new(1, 100);
    s.budget.partitions = 20;
    s.outage_max = weft_core::SimDuration::from_millis(300);
    s
}
