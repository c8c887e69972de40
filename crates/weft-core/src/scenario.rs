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
    /// The simulated disks' persistence contract and fault knobs.
    #[serde(default)]
    pub disk: DiskConfig,
    /// Real processes only: the modelled CPU cost of one intercepted call that does not block
    /// (a call served locally, such as a clock read, costs a hundredth of it). A thread's
    /// costs accumulate while virtual time stands still and are paid by holding the thread
    /// back, so that busy waits (a `clock_gettime` loop, `poll` with timeout 0, `sched_yield`,
    /// a failing `trylock`) see time pass and let the other threads run, as on Linux.
    /// Shadow's `--model-unblocked-syscall-latency`, always on. In-process targets ignore it.
    #[serde(default = "default_call_latency")]
    pub call_latency: SimDuration,
    /// Which links one partition fault cuts (`partition_shape`). Absent from repro files at
    /// its default, so older files and their hashes are unchanged.
    #[serde(default, skip_serializing_if = "PartitionShape::is_default")]
    pub partition_shape: PartitionShape,
    /// Node and network faults (crash, pause, partition) only from this virtual time on
    /// (`fault_start`; Jepsen's nemesis sleeps before its first fault the same way). Absent
    /// from repro files at 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fault_start: SimDuration,
    /// How fault opportunities are drawn. False (the default, absent from repro files): at
    /// every opportunity, whether a node or network fault comes now. True: one decision, a
    /// *gap*, says at which opportunity from now the next fault comes (0: none), and only
    /// then its kind; a random run is distributed exactly as with a draw per opportunity
    /// (a geometric gap with the same rate), but a list with faults far apart is hundreds of
    /// decisions shorter. The shrinker switches it on for its result, re-encoding the same
    /// run.
    #[serde(default, skip_serializing_if = "is_false")]
    pub fault_gaps: bool,
}

/// The shape of one partition fault, over the nodes that may be partitioned (a cluster
/// file's groups with `in_partitions = false`, Jepsen's control node, are never cut off).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PartitionShape {
    /// Either of the next two, one decision apart (the original shape; the default).
    #[default]
    Mixed,
    /// Isolate one node from every other node.
    Node,
    /// Cut one direction of one link.
    Link,
    /// Split the nodes into two random halves (Jepsen's `partition-random-halves`); with an
    /// odd count the first side has the smaller half.
    Halves,
    /// Cut a random minority (1 to (n-1)/2 nodes) off from the rest.
    Minority,
}

impl PartitionShape {
    pub const ALL: [PartitionShape; 5] = [
        PartitionShape::Mixed,
        PartitionShape::Node,
        PartitionShape::Link,
        PartitionShape::Halves,
        PartitionShape::Minority,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PartitionShape::Mixed => "mixed",
            PartitionShape::Node => "node",
            PartitionShape::Link => "link",
            PartitionShape::Halves => "halves",
            PartitionShape::Minority => "minority",
        }
    }

    pub fn parse(text: &str) -> Option<PartitionShape> {
        PartitionShape::ALL.into_iter().find(|s| s.name() == text)
    }

    fn is_default(&self) -> bool {
        *self == PartitionShape::Mixed
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(d: &SimDuration) -> bool {
    d.0 == 0
}

fn default_call_latency() -> SimDuration {
    SimDuration::from_micros(1)
}

/// Which crash states a simulated disk may be in when its node restarts. Nested: every crash
/// state `durable` allows, `fsync` allows; every one `fsync` allows, `posix` allows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Contract {
    /// Every completed operation survives a crash.
    #[default]
    Durable,
    /// File data survives up to its last fsync/fdatasync; later writes are lost as an in-order
    /// suffix of whole calls; namespace operations are durable on return.
    Fsync,
    /// Unsynced data survives per block in any subset; an appended size may survive without its
    /// data; namespace operations need an fsync of their parent directory.
    Posix,
}

impl Contract {
    pub const ALL: [Contract; 3] = [Contract::Durable, Contract::Fsync, Contract::Posix];

    pub fn name(self) -> &'static str {
        match self {
            Contract::Durable => "durable",
            Contract::Fsync => "fsync",
            Contract::Posix => "posix",
        }
    }

    pub fn parse(text: &str) -> Option<Contract> {
        Contract::ALL.into_iter().find(|c| c.name() == text)
    }
}

/// Disk faults, each off by default and bounded by `budget` (a total over all kinds).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DiskConfig {
    pub contract: Contract,
    /// Unit of loss under `posix` (bytes).
    pub block_size: u32,
    /// Per mutating storage call in the fault phase: crash the node right before the call (so
    /// a crash can fall between two storage calls of one handler). Counts toward
    /// `FaultBudget::crashes`.
    pub crash_at_call: Ratio,
    /// Per write / fsync: fail with EIO.
    pub eio: Ratio,
    /// Per write: fail with ENOSPC.
    pub enospc: Ratio,
    /// Per fsync: fail with EIO and drop the file's dirty pages; a retried fsync then reports
    /// success (Linux's behaviour).
    pub fsync_drops_pages: Ratio,
    /// Per read: one byte of the result is flipped.
    pub corrupt_read: Ratio,
    /// Per read: the read fails with EIO (a latent sector error).
    pub latent_error: Ratio,
    /// Per write: the data lands one block away from where it was meant to.
    pub misdirect: Ratio,
    /// At most this many injected disk faults per run (crashes at calls are budgeted as crashes).
    pub budget: u32,
    /// Replay under another contract: every crash state (drawn under `contract`) is also
    /// checked against this one; a state it does not allow ends the run as `outside_model`,
    /// naming the rule.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audit: Option<Contract>,
}

impl Default for DiskConfig {
    fn default() -> DiskConfig {
        DiskConfig {
            contract: Contract::Durable,
            block_size: 512,
            crash_at_call: Ratio::ZERO,
            eio: Ratio::ZERO,
            enospc: Ratio::ZERO,
            fsync_drops_pages: Ratio::ZERO,
            corrupt_read: Ratio::ZERO,
            latent_error: Ratio::ZERO,
            misdirect: Ratio::ZERO,
            budget: 0,
            audit: None,
        }
    }
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
            disk: DiskConfig::default(),
            call_latency: default_call_latency(),
            partition_shape: PartitionShape::Mixed,
            fault_start: SimDuration::ZERO,
            fault_gaps: false,
        }
    }
}

/// A scenario field outside its allowed range (read from a repro file, most likely).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("`scenario.{field}` is {value}; allowed: {allowed}")]
pub struct ScenarioError {
    /// The field's path below `scenario` (`rates.crash.den`).
    pub field: String,
    pub value: String,
    pub allowed: String,
}

/// Longest latency, extra delay or outage a scenario may ask for.
pub const MAX_LATENCY: SimDuration = SimDuration::from_secs(3600);
/// Longest fault or heal phase.
pub const MAX_PHASE: SimDuration = SimDuration::from_secs(3600);
/// Most events one run may be allowed (5x the default budget; a recorded timeline of a run
/// this long stays within a few hundred MB).
pub const MAX_EVENTS: u64 = 1_000_000;
/// Largest unit of loss of a simulated disk.
pub const MAX_BLOCK_SIZE: u32 = 1 << 20;

impl Scenario {
    /// Checks the invariants the kernel relies on (ratios with `den > 0` and `num <= den`,
    /// `latency_min <= latency_max`, a block size above 0) and the bounds that keep one run's
    /// time and memory sane. The error names the field, its value and the allowed range.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        let bad = |field: &str, value: String, allowed: String| {
            Err(ScenarioError { field: field.into(), value, allowed })
        };
        let durations = [
            ("latency_min", self.latency_min, MAX_LATENCY),
            ("latency_max", self.latency_max, MAX_LATENCY),
            ("delay_max", self.delay_max, MAX_LATENCY),
            ("outage_max", self.outage_max, MAX_LATENCY),
            ("fault_phase", self.fault_phase, MAX_PHASE),
            ("fault_start", self.fault_start, MAX_PHASE),
            ("heal_phase", self.heal_phase, MAX_PHASE),
        ];
        for (field, d, max) in durations {
            if d > max {
                return bad(field, d.0.to_string(), format!("0..={} (ns, {max})", max.0));
            }
        }
        if self.latency_min > self.latency_max {
            return bad(
                "latency_min",
                self.latency_min.0.to_string(),
                format!("0..=latency_max ({})", self.latency_max.0),
            );
        }
        if !(1..=MAX_EVENTS).contains(&self.max_events) {
            return bad("max_events", self.max_events.to_string(), format!("1..={MAX_EVENTS}"));
        }
        for (field, r) in self.ratios() {
            if r.den == 0 {
                return bad(&format!("{field}.den"), "0".into(), format!("1..={}", u32::MAX));
            }
            if r.num > r.den {
                return bad(
                    &format!("{field}.num"),
                    r.num.to_string(),
                    format!("0..=den ({})", r.den),
                );
            }
        }
        if !(1..=MAX_BLOCK_SIZE).contains(&self.disk.block_size) {
            return bad(
                "disk.block_size",
                self.disk.block_size.to_string(),
                format!("1..={MAX_BLOCK_SIZE}"),
            );
        }
        Ok(())
    }

    /// Every probability of the scenario, with its field path.
    fn ratios(&self) -> [(&'static str, Ratio); 13] {
        let (r, d) = (&self.rates, &self.disk);
        [
            ("rates.drop", r.drop),
            ("rates.duplicate", r.duplicate),
            ("rates.delay", r.delay),
            ("rates.crash", r.crash),
            ("rates.pause", r.pause),
            ("rates.partition", r.partition),
            ("disk.crash_at_call", d.crash_at_call),
            ("disk.eio", d.eio),
            ("disk.enospc", d.enospc),
            ("disk.fsync_drops_pages", d.fsync_drops_pages),
            ("disk.corrupt_read", d.corrupt_read),
            ("disk.latent_error", d.latent_error),
            ("disk.misdirect", d.misdirect),
        ]
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_valid_and_each_broken_invariant_is_named() {
        Scenario::default().validate().unwrap();
        Scenario::calm().validate().unwrap();
        let check = |edit: fn(&mut Scenario), field: &str| {
            let mut s = Scenario::default();
            edit(&mut s);
            let err = s.validate().unwrap_err();
            assert_eq!(err.field, field, "{err}");
        };
        check(|s| s.rates.crash.den = 0, "rates.crash.den");
        check(|s| s.rates.drop.num = 51, "rates.drop.num");
        check(|s| s.disk.misdirect = Ratio { num: 0, den: 0 }, "disk.misdirect.den");
        check(|s| s.disk.block_size = 0, "disk.block_size");
        check(|s| s.latency_min = SimDuration::from_secs(1), "latency_min");
        check(|s| s.heal_phase = SimDuration(u64::MAX), "heal_phase");
        check(|s| s.max_events = 0, "max_events");
        check(|s| s.max_events = u64::MAX, "max_events");
        let err = Scenario { max_events: 0, ..Scenario::default() }.validate().unwrap_err();
        assert_eq!(err.to_string(), "`scenario.max_events` is 0; allowed: 1..=1000000");
    }
}
