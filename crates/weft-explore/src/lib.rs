//! weft-explore owns how runs are chosen and what is made of them: campaigns over many seeds
//! (spread over threads, with results independent of thread timing), the strategies that pick
//! each run's scenario and decisions (random, swarm, coverage-guided, bounded exhaustive), the
//! shrinker that turns a failing decision list into a minimal one, replay and determinism
//! checks, the repro files made of them ([`found_repro`], [`shrink_repro`], [`replay_repro`]), and the paired evaluation of a target's variants ([`evaluate`]: buggy versus fixed,
//! N campaigns of equal budget each). It is the only part of weft that creates threads; it reads no clock (wall-clock
//! budgets and Ctrl-C come in through [`Control`]).

mod campaign;
mod eval;
mod exhaustive;
mod replay;
mod repro;
mod shard;
mod shrink;

pub use campaign::{
    run_campaign, run_one, swarm_scenario, Best, CampaignOptions, CampaignResult, Control, Found,
    Progress, Quiet, Strategy, GENERATION,
};
pub use eval::{evaluate, wilson95, CampaignEnd, Difference, EvalOptions, Evaluation, VariantEval};
pub use exhaustive::{ExhaustiveStats, MAX_CHOICES};
pub use replay::{check_seed, check_seed_report, replay, Divergence, Replayed};
pub use repro::{
    explore, found_repro, replay_repro, repro_sizes, shrink_repro, ReplayVerdict, Unsupported,
};
pub use shard::{
    check_shardable, merge_ledgers, run_coverage_shard, run_shard, Candidate, GenerationPart,
    GenerationSync, Ledger, Shard, ShardError, ShardRun, SyncError, MAX_SHARDS,
};
pub use shrink::{shrink, shrink_differential, trim, ShrinkError, ShrinkOptions, Shrunk};
pub(crate) use weft_report::timeline::line;
