//! `weft explore`: its flags, and the campaign they configure (or one shard of it); the
//! finished campaign is reported by [`super::report`].

use super::flags::{describe_spec, parse_strategy_name, parse_wall, FinishArgs, TargetArgs};
use super::progress::{CliControl, Show};
use super::report::{report_campaign, Out, Report};
use super::{output, shard};
use crate::exit::Code;
use anyhow::{bail, Result};
use clap::Args;
use std::path::PathBuf;
use weft_explore::{CampaignOptions, Strategy};

#[derive(Args)]
pub(super) struct ExploreArgs {
    #[command(flatten)]
    pub(super) target: TargetArgs,
    /// Campaign seed; every run's seed derives from it and the run's index.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Stop after this many runs (default 100000 unless --time is given).
    #[arg(long, conflicts_with = "time")]
    pub(super) runs: Option<u64>,
    /// Stop after this much wall-clock time (e.g. `30s`, `5m`). Which runs happen then depends
    /// on machine speed; use --runs for a reproducible campaign.
    #[arg(long, value_parser = parse_wall)]
    time: Option<std::time::Duration>,
    /// Directory for repro files.
    #[arg(long, default_value = "weft-out")]
    out: PathBuf,
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long)]
    jobs: Option<usize>,
    /// How runs are chosen: random, swarm (random fault kinds and rates per run), coverage
    /// (mutate runs that reached new features), exhaustive (depth-first over decisions with
    /// state hashing; needs a target that calls checkpoint). See docs/explorer.md.
    #[arg(long, default_value = DEFAULT_STRATEGY, value_parser = parse_strategy_name)]
    pub(super) strategy: String,
    /// Exhaustive search: scheduling steps (checkpoints) branched on per run.
    #[arg(long, default_value_t = 12)]
    pub(super) max_depth: u32,
    #[command(flatten)]
    finish: FinishArgs,
    /// Run only part K of N of the campaign (random, swarm, coverage): run indices K, K+N, …;
    /// writes OUT/shard-K-of-N.json for `weft merge` (docs/scale-out.md).
    #[arg(long, value_name = "K/N", value_parser = weft_explore::Shard::parse)]
    shard: Option<weft_explore::Shard>,
    /// Coverage shards: the longest wait for the other shards at a generation's end, after
    /// which the shard gives up naming the missing ones (exit 2).
    #[arg(long, default_value = "300s", value_parser = parse_wall)]
    sync_timeout: std::time::Duration,
}

/// The strategy `explore` uses unless told otherwise; chosen by `weft bench` (docs/explorer.md).
pub(crate) const DEFAULT_STRATEGY: &str = "coverage";

pub(super) fn explore(a: ExploreArgs) -> Result<Code> {
    if a.runs == Some(0) || a.time == Some(std::time::Duration::ZERO) {
        bail!("an empty budget checks nothing: give --runs 1 or more, or a --time above 0s");
    }
    let (target, spec) = a.target.spec()?;
    let spec = crate::run::process::resolve(spec, &a.out)?;
    let runner = target.prepare(&spec)?;
    // Before the first run: a violation found must have somewhere to go.
    output::prepare_dir(&a.out)?;
    let scenario = a.target.scenario(runner.as_ref())?;
    let runs = match (a.runs, a.time) {
        (Some(n), _) => Some(n),
        (None, Some(_)) => None,
        (None, None) => Some(100_000),
    };
    let jobs = a
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    if jobs == 0 {
        bail!("--jobs must be at least 1");
    }
    let strategy = Strategy::parse(&a.strategy, a.max_depth).expect("validated by clap");
    if a.shard.is_some() {
        weft_explore::check_shardable(strategy)?;
    }
    let opts = CampaignOptions { seed: a.seed, runs, jobs, strategy, scenario };
    let out = Out { json: a.finish.json };
    // The seed and the derived configuration come first, so a killed run still leaves them.
    out.line(format!("weft explore {}", describe_spec(&spec)));
    let budget = match (runs, a.time) {
        (Some(n), _) => format!("{n} runs"),
        (None, Some(t)) => format!("{}s wall clock", t.as_secs_f64()),
        (None, None) => unreachable!(),
    };
    let depth = match strategy {
        Strategy::Exhaustive { max_depth } => format!("  max depth {max_depth}"),
        _ => String::new(),
    };
    out.line(format!(
        "  seed {}  budget {budget}  jobs {jobs}  strategy {}{depth}",
        opts.seed,
        strategy.name()
    ));
    let base = if strategy == Strategy::Swarm { "base scenario" } else { "scenario" };
    out.line(format!("  {base} {}", serde_json::to_string(&opts.scenario)?));
    // Progress is drawn on stderr, so it stays with --json (stdout carries only the summary).
    let show = Show::auto(a.finish.quiet);
    if let Some(k) = a.shard {
        let campaign = shard::Campaign::new(&spec, &opts, a.time);
        let place = shard::Place {
            out_dir: &a.out,
            json: a.finish.json,
            show,
            sync_timeout: a.sync_timeout,
        };
        return shard::explore_shard(runner.as_ref(), &opts, k, campaign, &place);
    }
    let control = CliControl::new(a.time, runs, show, "runs");
    let result = weft_explore::run_campaign(runner.as_ref(), &opts, &control);
    control.finish();
    let secs = control.elapsed().as_secs_f64().max(1e-9);
    let report = Report {
        target: target.as_ref(),
        runner: runner.as_ref(),
        spec: &spec,
        opts: &opts,
        out_dir: &a.out,
        json: a.finish.json,
        no_shrink: a.finish.no_shrink,
        shrink_budget: a.finish.shrink.shrink_budget,
        show,
        secs,
        merged: None,
    };
    report_campaign(&report, result)
}
