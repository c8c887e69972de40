//! weft-core owns weft's vocabulary and nothing else: simulated time ([`SimTime`],
//! [`SimDuration`]), the pinned PRNG ([`Rng`], [`Ratio`]), the decision source ([`Decisions`])
//! through which every nondeterministic choice of a run flows, the stable hasher behind trace
//! and state hashes, named run outcomes, the [`Scenario`] (fault environment, with the invariants
//! and bounds [`Scenario::validate`] checks), the [`Target`] interface the explorer drives and
//! the declared, bounded target options ([`options`]). It does no IO, reads no clock and creates no thread.

pub mod decisions;
pub mod hash;
pub mod knobs;
pub mod options;
pub mod outcome;
pub mod rng;
pub mod scenario;
pub mod site;
pub mod target;
pub mod time;

pub use decisions::Decisions;
pub use hash::{hash_debug, stable_hash, StableHasher};
pub use knobs::{KnobError, FAULT_KINDS, KNOBS};
pub use options::{check_options, check_spec, Allowed, OptionDecl};
pub use outcome::{Modality, Outcome};
pub use rng::{derive_seed, Ratio, Rng};
pub use scenario::{
    Contract, DiskConfig, FaultBudget, FaultRates, PartitionShape, Scenario, ScenarioError,
};
pub use site::{Site, SiteKind};
pub use target::{
    ConfigError, Event, EventKind, Flow, NullObserver, Observer, OptionInfo, PropertyInfo,
    Recorder, RunReport, RunSpec, Runner, Target, TargetInfo, TraceHasher, VariantInfo,
};
pub use time::{SimDuration, SimTime};

/// weft's version, recorded in every repro file.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
