//! weft-explore owns how runs are chosen and what is made of them: campaigns over many seeds
//! (spread over threads, with results independent of thread timing), the strategies that pick
//! each run's scenario and decisions (random, swarm, coverage-guided, bounded exhaustive), the
//! shrinker that turns a failing decision list into a minimal one, replay and determinism
//! checks. It is the only part of weft that creates threads; it reads no clock (wall-clock
//! budgets and Ctrl-C come in through [`Control`]).

mod campaign;
mod exhaustive;
mod replay;
mod shrink;

pub use campaign::{
    run_campaign, run_one, swarm_scenario, CampaignOptions, CampaignResult, Control, Found,
    Progress, Quiet, Strategy, GENERATION,
};
pub use exhaustive::{ExhaustiveStats, MAX_CHOICES};
pub use replay::{check_seed, replay, Divergence, Replayed};
pub use shrink::{shrink, trim, ShrinkError, ShrinkOptions, Shrunk};
pub(crate) use weft_report::timeline::line;
