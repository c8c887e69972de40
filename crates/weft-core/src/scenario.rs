//! A run's fault environment: latency, fault rates, the fault budget, the two phases.
//!
//! A scenario is plain data, stored whole in every repro file. Strategies derive it (e.g. swarm
//! testing switches fault kinds on and off per run from the run's seed); targets consume the
//! knobs that apply to them and say in their docs which ones they ignore.

use crate::rng::Ratio;
use crate::time::SimDuration;
use serde::{Deserialize, Serialize};

/// At most this many faults of each kind in one run. The run never exceeds it, so a target is
/// not blamed for failures it never promised to survive.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultBudget {
    pub crashes: u32,
    pub pauses: u32,
    pub partitions: u32,
    pub drops: u32,
    pub duplicates: u32,
}

/// Fault probabilities, each applied at its own kind of opportunity: message faults per message
/// sent, node and network faults per event processed during the fault phase.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultRates {
    /// Per message: lose it.
    pub drop: Ratio,
    /// Per message: deliver it twice.
    pub duplicate: Ratio,
    /// Per message: add up to `delay_max` on top of the link latency (reorders).
    pub delay: Ratio,
    /// Per event: crash a node (volatile state lost).
    pub crash: Ratio,
    /// Per event: pause a node (it processes nothing for a while, then resumes).
    pub pause: Ratio,
    /// Per event: cut links (isolate a node, or one direction of one link).
    pub partition: Ratio,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Per-link latency is drawn uniformly from `[latency_min, latency_max]` (a decision; 0 =
    /// the minimum).
    pub latency_min: SimDuration,
    pub latency_max: SimDuration,
    /// Extra delay drawn for a delayed message, at most this.
    pub delay_max: SimDuration,
    /// A crashed node restarts after at most this (0: it stays down until the heal phase).
    pub outage_max: SimDuration,
    /// Whether crashed nodes restart at all (at the latest when the heal phase begins).
    pub restart: bool,
    pub rates: FaultRates,
    pub budget: FaultBudget,
    /// Faults may be injected only before this time; then partitions heal, paused nodes resume,
    /// crashed nodes restart (if `restart`), and `eventually` properties get `heal_phase`.
    pub fault_phase: SimDuration,
    pub heal_phase: SimDuration,
    /// Hard bound on events in one run.
    pub max_events: u64,
}

impl Default for Scenario {
    fn default() -> Scenario {
        Scenario {
            latency_min: SimDuration::from_millis(1),
            latency_max: SimDuration::from_millis(10),
            delay_max: SimDuration::from_millis(100),
            outage_max: SimDuration::from_millis(500),
            restart: true,
            rates: FaultRates {
                drop: Ratio::new(1, 50),
                duplicate: Ratio::new(1, 100),
                delay: Ratio::new(1, 20),
                crash: Ratio::new(1, 200),
                pause: Ratio::new(1, 400),
                partition: Ratio::new(1, 400),
            },
            budget: FaultBudget { crashes: 1, pauses: 2, partitions: 2, drops: 20, duplicates: 10 },
            fault_phase: SimDuration::from_secs(2),
            heal_phase: SimDuration::from_secs(2),
            max_events: 200_000,
        }
    }
}

impl Scenario {
    /// A scenario with no faults at all (for determinism checks and baselines).
    pub fn calm() -> Scenario {
        Scenario {
            rates: FaultRates {
                drop: Ratio::ZERO,
                duplicate: Ratio::ZERO,
                delay: Ratio::ZERO,
                crash: Ratio::ZERO,
                pause: Ratio::ZERO,
                partition: Ratio::ZERO,
            },
            ..Scenario::default()
        }
    }
}
