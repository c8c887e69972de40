//! weft-explore owns how runs are chosen and what is made of them: campaigns over many seeds
//! (spread over threads, with results independent of thread timing), strategies, replay and
//! determinism checks. It is the only part of weft that creates threads; it reads no clock
//! (wall-clock budgets and Ctrl-C come in through [`Control`]).

mod campaign;
mod replay;

pub use campaign::{
    run_campaign, run_one, CampaignOptions, CampaignResult, Control, Found, Progress, Quiet,
    Strategy,
};
pub use replay::{check_seed, replay, Divergence, Replayed};
pub(crate) use weft_report::timeline::line;
