//! # weft: test your own distributed system
//!
//! `weft` is the one dependency a user adds. It re-exports what a user touches — the sans-IO
//! [`Node`] API and its [`Ctx`], properties, scenarios, client [`history`] checks, the explorer,
//! replay, shrinking and reports — and adds the front door: [`World`] (declare a target once),
//! [`check()`] (run a campaign from `cargo test`, saving and replaying failing repros) and
//! [`cli::main_with`] (the whole `weft` command line over your targets).
//!
//! A complete example — a replica that serves stale reads, found, shrunk, replayed and drawn:
//!
//! ```
//! // `weft::demo` is the two-node system of the guide's step 2: a primary takes writes, a
//! // replica serves reads from its copy (buggy) or asks the primary (fixed).
//! let dir = std::env::temp_dir().join("weft-doc-crate");
//! # let _ = std::fs::remove_dir_all(&dir);
//! let failure = weft::check(weft::demo::world())
//!     .variant("buggy")
//!     .runs(1000)
//!     .regressions(&dir)
//!     .run()
//!     .expect_err("the buggy replica serves a stale read");
//! let weft::Failure::Violation(v) = failure else { panic!("{failure}") };
//! assert!(v.outcome.to_string().contains("Linearizable"), "{}", v.outcome);
//! assert!(v.replay.starts_with("WEFT_REPLAY="), "{}", v.replay);
//! // Drawn as a space-time diagram (and as text):
//! let timeline = weft::draw(&weft::demo::world(), &v.repro, &dir.join("stale.html")).unwrap();
//! assert!(timeline.contains("violation"));
//! // The fixed variant passes the same budget.
//! weft::check(weft::demo::world()).variant("fixed").runs(1000).regressions(&dir).assert();
//! ```
//!
//! The guide walks through it one step per page: [`guide`]. What is not done yet is listed in
//! the crate's README (`crates/weft/README.md`).

mod check;
pub mod clients;
pub mod demo;
pub mod history;

pub use check::{Checker, Failure, Passed, Violation, check, draw};

pub use weft_core::{
    Allowed, Decisions, Modality, Outcome, RunReport, RunSpec, Runner, Scenario, SimDuration,
    SimTime, Target,
};
pub use weft_sim::{
    Config, Ctx, Node, NodeId, Observation, Phase, TimerId, View, Workload, World, requests,
    spread_over_fault_phase,
};

/// The `targets![A, B]` list [`cli::main_with`] takes.
pub use weft_cli::targets;

/// weft's vocabulary: time, decisions, scenarios, outcomes, the [`Target`] interface.
pub mod core {
    pub use weft_core::*;
}
/// The in-process kernel: nodes, the network and fault models, properties.
pub mod sim {
    pub use weft_sim::*;
}
/// Campaigns, strategies, the shrinker, replay, repro assembly.
pub mod explore {
    pub use weft_explore::*;
}
/// Repro files, timelines, HTML space-time diagrams, ShiViz logs.
pub mod report {
    pub use weft_report::*;
}
/// Checkers: linearizability against any sequential model, and synthetic histories.
pub mod checkers {
    pub use weft_check::*;
}
/// Async Rust in-process (`weft-async`): a deterministic executor per node whose task order is a
/// decision, virtual time, tokio-shaped sockets over the simulated network (`docs/async.md`).
pub mod rt {
    pub use weft_async::*;
}
/// The `weft` command line as a library: `fn main() -> ExitCode { main_with(targets![…]) }`.
pub mod cli {
    pub use weft_cli::{builtin_targets, main_with, main_with_args};
}

/// The guide: one page per step a newcomer takes (`docs/guide/`). Every code block on these
/// pages is compiled and run as a doc test of this crate.
pub mod guide {
    #[doc = include_str!("../../../docs/guide/1-add-weft.md")]
    pub mod step1_add_weft {}
    #[doc = include_str!("../../../docs/guide/2-declare-a-world.md")]
    pub mod step2_declare_a_world {}
    #[doc = include_str!("../../../docs/guide/3-properties-and-histories.md")]
    pub mod step3_properties_and_histories {}
    #[doc = include_str!("../../../docs/guide/4-cargo-test.md")]
    pub mod step4_cargo_test {}
    #[doc = include_str!("../../../docs/guide/5-command-line.md")]
    pub mod step5_command_line {}
    #[doc = include_str!("../../../docs/guide/6-replay-shrink-draw.md")]
    pub mod step6_replay_shrink_draw {}
    #[doc = include_str!("../../../docs/guide/7-clients.md")]
    pub mod step7_clients {}
}
