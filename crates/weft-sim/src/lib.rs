//! weft-sim is the deterministic kernel for in-process targets: the [`Node`] trait (sans-IO
//! nodes that push effects into their [`Ctx`]), the event queue in simulated time with
//! deterministic tie-breaking, the datagram [`net`]work model, node and network [`faults`] within
//! a budget, per-node simulated [`disk`]s with three persistence contracts, the fault and heal phases, and property checks with a modality. One call of
//! [`SimSpec::run`] is one run: a pure function of the spec, the scenario and the decisions.
//! [`World`] declares a whole in-process target with a builder.
//! The kernel does no IO, reads no clock and creates no thread; target panics become
//! `Outcome::TargetCrashed`.

mod builder;
pub mod disk;
pub mod faults;
pub mod net;
mod node;
mod storage;
mod view;
mod world;

pub use builder::{requests, Config, World};
pub use disk::{CrashState, Disk};
pub use faults::{Fault, FaultCounts};
pub use net::{Fate, Network};
pub use node::{Ctx, Node, NodeId, TimerId};
pub use storage::DiskIo;
pub use view::{Check, Observation, Phase, Property, View};
pub use world::{spread_over_fault_phase, SimRunner, SimSpec, Workload};
