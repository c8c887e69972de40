//! Message mode: the same replica logic ([`crate::model`]'s pure functions) running as
//! weft-sim [`Node`]s that exchange datagrams through the simulated network.
//!
//! * **RPCs** (§1.4 for literal/original, §4.3 for corrected). Every operation has its own
//!   periodic timer with a period drawn from the decision source, so the scheduler interleaves
//!   stabilize, reconcile, update and flush arbitrarily, as Zave's model does. A node runs at
//!   most one query at a time; a timer that fires while one is outstanding re-arms itself.
//!   A timer's decision may also make it wait long or idle until the heal phase (rare at
//!   random; the value 0, so the shrinker's simplest run has no background traffic:
//!   `ChordNode::arm`).
//! * **Notify** is a one-way message with its own latency (and delay faults), so it can arrive
//!   late (D4).
//! * **Corrected (§4.4)**: while a query is outstanding the node answers state queries with
//!   `Busy`; the asker abandons its operation (no state change, so atomicity is kept) and
//!   retries on its next timer. Pings are answered at once.
//! * **Failure detection** is a request timeout longer than any round trip the scenario allows
//!   (`2 × (latency_max + delay_max) + 1ms`). The model assumes it perfect: an assumption
//!   check ends a run as `OutsideModel` when a node times out on a peer that is a live member
//!   or whose reply is in flight (a drop or a pause can cause this; neither is a Chord bug).
//! * **Ground truth**: properties, the heal classification and the fault gate read every
//!   node's state and the messages in flight, never a node's belief. The gate counts successor
//!   lists inside in-flight replies (verdi-chord's rule, spec §5.2.5).
//! * Membership: an identity that crashed comes back (if the scenario restarts it) with no
//!   state; with `reuse=false` it then stays out of the ring, otherwise it joins again.
//!
//! **Layout.** [`wire`] holds the datagrams and the one outstanding query; [`replica`] the
//! replica's state, timers and operations; [`handlers`] what it does on each message and
//! timer (weft-sim's [`Node`] trait); [`truth`] ground truth and everything read from it (the
//! properties, the crash gate, the failure-detector assumption, the ring-shape feature); [`settle`] when a
//! passing run may end before its heal phase does. This module puts them together into one run.

mod handlers;
mod replica;
mod settle;
mod truth;
mod wire;

pub use replica::{ChordNode, NodeConfig};
pub use truth::ground_truth;
pub use wire::Msg;

use crate::atomic::Policy;
use crate::model::{Rules, Variant};
use crate::Config;
use weft_core::{Decisions, Modality, Observer, RunReport, Scenario, SimDuration};
use weft_sim::SimSpec;

/// The scenario message mode uses by default: no loss or duplication (Zave's model has none),
/// delays on (late notifies), up to `failures` crashes, no restarts, no pauses or partitions
/// (those would only produce OutsideModel runs).
pub fn default_scenario(cfg: &Config) -> Scenario {
    let mut s = Scenario::calm();
    s.restart = false;
    s.rates.delay = weft_core::Ratio::new(1, 10);
    s.rates.crash = weft_core::Ratio::new(1, 100);
    s.budget.crashes = cfg.rules.max_failures as u32;
    s.budget.drops = 0;
    s.budget.duplicates = 0;
    s.budget.pauses = 0;
    s.budget.partitions = 0;
    s.fault_phase = SimDuration::from_secs(1);
    s.heal_phase = SimDuration::from_secs(5);
    s
}

/// One run in message mode.
pub fn run(
    cfg: &Config,
    scenario: &Scenario,
    decisions: &mut Decisions,
    obs: &mut dyn Observer,
) -> RunReport {
    let ids = if cfg.ids_max > cfg.ids_min {
        cfg.ids_min + decisions.choose((cfg.ids_max - cfg.ids_min + 1) as u64) as u8
    } else {
        cfg.ids_min
    };
    let rules = Rules { ids, ..cfg.rules };
    let initial = if rules.variant == Variant::Corrected {
        let sets = crate::atomic::initial_sets(ids, cfg.initial.min(ids));
        sets[decisions.choose(sets.len() as u64) as usize]
    } else {
        1
    };
    let rtt = scenario.latency_max.0 + scenario.delay_max.0;
    let node_cfg = NodeConfig {
        rules,
        policy: Policy::of(rules.variant, cfg.focus),
        timeout: SimDuration(2 * rtt + 1_000_000),
        join_window_ms: (scenario.fault_phase.0 / 2_000_000).max(1),
        initial,
        ring_feature: cfg.ring_feature,
        settle: cfg.settle,
        fault_phase: scenario.fault_phase,
    };
    let mut properties: Vec<weft_sim::Property<ChordNode>> = truth::property_table()
        .into_iter()
        .map(|(p, check)| weft_sim::Property { name: p.name(), modality: Modality::Always, check })
        .collect();
    properties.push(weft_sim::Property {
        name: crate::props::Property::EventuallyIdeal.name(),
        modality: Modality::Eventually,
        check: truth::eventually_ideal,
    });
    let sim = SimSpec {
        nodes: ids as usize,
        make: Box::new(move |id| ChordNode::new(id as u8, node_cfg)),
        workload: Box::new(|_, _| Vec::new()),
        properties,
        assumptions: vec![weft_sim::Property {
            name: "PerfectFailureDetector",
            modality: Modality::Always,
            check: truth::perfect_detector,
        }],
        crash_gate: Some(truth::crash_gate),
        focus: cfg.focus.map(|p| p.name().to_string()),
    };
    sim.run(scenario, decisions, obs)
}
