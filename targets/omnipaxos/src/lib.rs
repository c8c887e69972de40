//! The target `omnipaxos`: the published omnipaxos crate, versions 0.2.0, 0.2.1, 0.2.2 and
//! 0.2.3 from crates.io, run unmodified as three in-process servers under weft's kernel. It owns
//! the harness (ticks from weft timers, a session transport with link flaps on which
//! `reconnected()` is called at both ends, client appends as workload), the oracles (agreement
//! of decided logs, recovery after faults stop), and frozen counterexamples for the two
//! upstream fixes it tells apart (see `tests/regressions.rs`).
//!
//! Known bugs it is meant to separate: 0.2.0's `AcceptSync` sends a follower the log suffix from
//! the most advanced promise's accepted index even when the follower holds fewer entries, so the
//! suffix lands at the wrong indices and decided logs diverge (fixed in 0.2.1 by upstream PR
//! #112); 0.2.1 and 0.2.2 still diverge under other schedules, which 0.2.3 does not.
//!
//! How the library is controlled: it reads no clock and draws no randomness (checked in its
//! source: no `Instant`, `SystemTime`, `rand` or hash-map iteration in the code paths compiled
//! here; `HashMap` appears only under the `unicache` feature, which is off). Time advances only
//! through `tick()`, which each node calls from a periodic weft timer whose phase is a decision.

// Built by build.rs, one wrapper crate per published version (not Cargo dependencies: Cargo
// allows only one semver-compatible version of a crate per dependency graph).
extern crate omnipaxos_v0_2_0;
extern crate omnipaxos_v0_2_1;
extern crate omnipaxos_v0_2_2;
extern crate omnipaxos_v0_2_3;

pub mod library;
pub mod node;

use library::{Library, Tuning, V0_2_0, V0_2_1, V0_2_2, V0_2_3};
use node::{OpNode, Req, PROBE_BASE};
use weft_core::{
    Allowed, ConfigError, Decisions, Modality, OptionDecl, PropertyInfo, Ratio, RunSpec, Runner,
    Scenario, SimDuration, SimTime, Target, TargetInfo, VariantInfo,
};
use weft_sim::{Check, NodeId, Property, SimRunner, SimSpec};

/// Three servers, as the bug reports need.
pub const NODES: usize = 3;

/// Ticks per leader-election round and per resend of unanswered messages. With a 10 ms tick and
/// 1–10 ms links, a heartbeat round (50 ms) outlasts a round trip (≤ 20 ms) with margin.
pub const TUNING: Tuning = Tuning { election_ticks: 5, resend_ticks: 10 };

/// The properties, one row each: name, modality, summary, check.
fn table<L: Library>() -> [(&'static str, Modality, &'static str, Check<OpNode<L>>); 4] {
    [
        (
            "Agreement",
            Modality::Always,
            "decided logs of all servers are prefixes of one another, and no decided entry changes",
            node::agreement::<L>,
        ),
        (
            "Recovery",
            Modality::Eventually,
            "after faults stop, a leader followed by a majority exists and a new append is decided",
            node::recovery::<L>,
        ),
        (
            "LeaderChanged",
            Modality::Sometimes,
            "some server saw the leader change",
            node::leader_changed::<L>,
        ),
        (
            "MonotoneDecided",
            Modality::Always,
            "no server lowers its decided index (entries it reported decided stay decided)",
            node::monotone_decided::<L>,
        ),
    ]
}

pub const VARIANTS: [(&str, &str); 4] = [
    ("0.2.0", "omnipaxos 0.2.0: AcceptSync suffix may land at the wrong indices"),
    ("0.2.1", "omnipaxos 0.2.1: PR #112 fix (min of max accepted and follower's accepted index)"),
    ("0.2.2", "omnipaxos 0.2.2"),
    ("0.2.3", "omnipaxos 0.2.3 (take_outgoing_messages API)"),
];

/// The `omnipaxos` target.
pub struct OmniPaxos;

/// Parsed options of one spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Client appends during the fault phase.
    pub appends: u64,
    /// Link flaps during the fault phase.
    pub flaps: u64,
    /// Longest flap.
    pub flap_max: SimDuration,
    /// Per-message loss in the fault phase (0: none); with loss, links are datagram-like.
    pub loss: Ratio,
}

const COUNT: Allowed = Allowed::Int { min: 0, max: weft_core::options::MAX_REQUESTS };

const OPTIONS: &[OptionDecl] = &[
    OptionDecl::new("appends", "20", COUNT, "client appends spread over the fault phase"),
    OptionDecl::new(
        "flaps",
        "8",
        COUNT,
        "link flaps in the fault phase (reconnected() on both ends after)",
    ),
    OptionDecl::new(
        "flap-max",
        "300ms",
        Allowed::Duration { min: SimDuration::from_millis(1), max: weft_core::scenario::MAX_PHASE },
        "longest link flap",
    ),
    OptionDecl::new(
        "loss",
        "0",
        Allowed::Ratio,
        "per-message loss ratio in the fault phase, e.g. 1/50 (0: none)",
    ),
];

impl Target for OmniPaxos {
    fn info(&self) -> TargetInfo {
        TargetInfo {
            name: "omnipaxos",
            summary: "the published omnipaxos crate (0.2.0-0.2.3), 3 servers, link flaps",
            variants: VARIANTS
                .iter()
                .map(|&(name, summary)| VariantInfo { name, summary })
                .collect(),
            options: weft_core::options::infos(OPTIONS),
            properties: table::<V0_2_3>()
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
            appends: info.parse_option(spec, "appends")?,
            flaps: info.parse_option(spec, "flaps")?,
            flap_max: SimDuration::parse(info.option(spec, "flap-max"))
                .filter(|d| d.as_nanos() >= 1_000_000)
                .ok_or_else(|| {
                    bad("flap-max", "expected a duration of at least 1ms, e.g. 300ms")
                })?,
            loss: Ratio::parse(info.option(spec, "loss"))
                .ok_or_else(|| bad("loss", "expected a ratio such as 1/50, or 0"))?,
        };
        let focus = spec.property.clone();
        Ok(match spec.variant.as_str() {
            "0.2.0" => runner::<V0_2_0>(opts, focus),
            "0.2.1" => runner::<V0_2_1>(opts, focus),
            "0.2.2" => runner::<V0_2_2>(opts, focus),
            "0.2.3" => runner::<V0_2_3>(opts, focus),
            other => unreachable!("validate() accepted unknown variant {other}"),
        })
    }
}

/// A prepared omnipaxos world for one library version.
fn runner<L: Library>(opts: Options, focus: Option<String>) -> Box<dyn Runner> {
    let fifo = opts.loss.is_zero();
    let sim = SimSpec {
        nodes: NODES,
        make: Box::new(move |id| OpNode::<L>::new(id, NODES, TUNING, fifo)),
        workload: Box::new(move |d: &mut Decisions, sc: &Scenario| workload(opts, d, sc)),
        properties: table::<L>()
            .iter()
            .map(|&(name, modality, _, check)| Property { name, modality, check })
            .collect(),
        assumptions: Vec::new(),
        crash_gate: None,
        focus,
    };
    Box::new(SimRunner { sim, scenario: default_scenario(opts) })
}

/// The run's inputs, drawn from decisions: client appends at random servers and times, link
/// flaps between random pairs (both ends told at once, restored before the fault phase ends),
/// and, in the heal phase, a bounded number of probe appends at every server for `Recovery`.
fn workload(opts: Options, d: &mut Decisions, sc: &Scenario) -> Vec<(SimTime, NodeId, Req)> {
    const MS: u64 = 1_000_000;
    let fault_ms = (sc.fault_phase.as_nanos() / MS).max(1);
    let mut out = Vec::new();
    for i in 0..opts.appends {
        let at = SimTime(d.choose(fault_ms) * MS);
        let node = d.choose(NODES as u64) as NodeId;
        out.push((at, node, Req::Append(i + 1)));
    }
    let flap_ms = (opts.flap_max.as_nanos() / MS).max(1);
    for _ in 0..opts.flaps {
        let (a, b) = [(0, 1), (1, 2), (0, 2)][d.choose(3) as usize];
        let start = d.choose(fault_ms);
        let end = (start + 1 + d.choose(flap_ms)).min(fault_ms);
        for (x, y) in [(a, b), (b, a)] {
            out.push((SimTime(start * MS), x, Req::LinkDown(y)));
            out.push((SimTime(end * MS), x, Req::LinkUp(y)));
        }
    }
    // Bounded demand in the heal phase: a probe at every server every 200 ms during its first
    // half (a client that retries), each a fresh value.
    let heal = sc.fault_phase.as_nanos();
    let mut k = 0;
    let mut at = 100 * MS;
    while at <= sc.heal_phase.as_nanos() / 2 {
        for node in 0..NODES as NodeId {
            out.push((SimTime(heal + at), node, Req::Append(PROBE_BASE + k)));
            k += 1;
        }
        at += 200 * MS;
    }
    out
}

/// No crashes (the harness keeps omnipaxos's state in `MemoryStorage`, which a crash would
/// lose), no silent partitions or duplicates (the transport is a session layer: links break
/// only through flaps, which the harness reports to the library), no pauses (a pause defers
/// the paused node's workload events, so one end of a flap would see its `LinkUp` before
/// its `LinkDown` and the two ends' sessions would disagree), message delays as usual, and
/// per-message loss only when the `loss` option asks for it.
fn default_scenario(opts: Options) -> Scenario {
    let mut s = Scenario::default();
    s.rates.crash = Ratio::ZERO;
    s.rates.partition = Ratio::ZERO;
    s.rates.duplicate = Ratio::ZERO;
    s.rates.pause = Ratio::ZERO;
    s.rates.drop = opts.loss;
    s.budget.crashes = 0;
    s.budget.partitions = 0;
    s.budget.duplicates = 0;
    s.budget.pauses = 0;
    if opts.loss.is_zero() {
        s.budget.drops = 0;
    }
    s
}
