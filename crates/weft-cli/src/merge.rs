//! `weft merge DIR…`: combines the result files of a sharded campaign into the campaign's
//! result, as one machine would have reported it.
//!
//! Every shard of one campaign must be there exactly once, complete, from the same weft
//! version; anything else is a one-line error (exit 2). The failing run with the lowest index
//! over all shards wins, as with `--jobs`; it is run once more here (random and swarm from its
//! seed, coverage from its recorded decisions; its trace hash must be the one its shard
//! recorded, else exit 3: the machines disagree), then written and shrunk once by
//! the same code as `weft explore`, so the summary and `--json` are a single machine's (runs,
//! events, outcomes and features counted over the runs at or below the winning index: what
//! `--jobs 1` counts). A `--time` campaign is merged but reported as not reproducible.

use super::flags::FinishArgs;
use super::progress::Show;
use super::report::{report_campaign, Out, Report};
use super::{shard, Code};
use anyhow::{bail, Context, Result};
use clap::Args;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::PathBuf;
use weft_core::Runner;
use weft_explore::{CampaignOptions, Found, Strategy};

#[derive(Args)]
pub(crate) struct MergeArgs {
    /// Folders holding shard result files (`shard-K-of-N.json`), or such files.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Directory for the campaign's repro files.
    #[arg(long, default_value = "weft-out")]
    out: PathBuf,
    #[command(flatten)]
    finish: FinishArgs,
}

/// The shard result files in `paths` (folders are searched one level deep).
fn collect(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let entries =
                std::fs::read_dir(p).with_context(|| format!("cannot read {}", p.display()))?;
            let mut found: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| {
                    let name = f.file_name().map(|n| n.to_string_lossy().into_owned());
                    name.is_some_and(|n| n.starts_with("shard-") && n.ends_with(".json"))
                })
                .collect();
            if found.is_empty() {
                bail!("{}: no shard result files (shard-K-of-N.json) in this folder", p.display());
            }
            found.sort();
            files.extend(found);
        } else if p.exists() {
            files.push(p.clone());
        } else {
            bail!("{}: no such file or folder", p.display());
        }
    }
    Ok(files)
}

/// Which top-level field of the campaign differs, for the error message.
fn difference(a: &shard::Campaign, b: &shard::Campaign) -> String {
    let (a, b) = (json!(a), json!(b));
    let keys = ["spec", "scenario", "seed", "strategy", "runs", "time_seconds"];
    let differs: Vec<&str> = keys.into_iter().filter(|k| a[k] != b[k]).collect();
    differs.join(", ")
}

/// Reads the files and checks they are the complete set of shards of one campaign.
fn read_all(files: &[PathBuf]) -> Result<Vec<(PathBuf, shard::ShardFile)>> {
    let mut by_index: BTreeMap<u64, (PathBuf, shard::ShardFile)> = BTreeMap::new();
    let mut first: Option<(PathBuf, shard::Campaign, u64)> = None;
    for path in files {
        let f = shard::read(path)?;
        let shown = path.display();
        if f.weft_version != weft_core::VERSION {
            bail!(
                "{shown}: written by weft {}, this is weft {}",
                f.weft_version,
                weft_core::VERSION
            );
        }
        if !f.complete {
            bail!("{shown}: shard {} was interrupted after {} runs; run it again", f.shard, f.runs);
        }
        match &first {
            None => first = Some((path.clone(), f.campaign.clone(), f.shard.count)),
            Some((p0, c0, n0)) => {
                if f.campaign != *c0 {
                    let what = difference(c0, &f.campaign);
                    bail!(
                        "{shown}: a shard of a different campaign than {} ({what})",
                        p0.display()
                    );
                }
                if f.shard.count != *n0 {
                    bail!("{shown}: shard {} of a campaign cut into {n0} shards", f.shard);
                }
            }
        }
        if let Some((other, _)) = by_index.get(&f.shard.index) {
            bail!("{shown} and {}: both are shard {}", other.display(), f.shard);
        }
        by_index.insert(f.shard.index, (path.clone(), f));
    }
    let (_, _, count) = first.context("no shard result files given")?;
    let missing: Vec<String> =
        (0..count).filter(|k| !by_index.contains_key(k)).map(|k| format!("{k}/{count}")).collect();
    if !missing.is_empty() {
        let n = missing.len();
        let shown: Vec<&str> = missing.iter().take(8).map(String::as_str).collect();
        let more = if n > 8 { ", …" } else { "" };
        bail!("missing {n} of {count} shards: {}{more}", shown.join(", "));
    }
    Ok(by_index.into_values().collect())
}

/// The winning run once more: a random or swarm run from its seed; a coverage run from its
/// recorded decisions (their prefix came from a corpus that only the shards built).
fn rerun(runner: &dyn Runner, opts: &CampaignOptions, failure: &shard::Failure) -> (Found, bool) {
    if opts.strategy != Strategy::Coverage {
        return weft_explore::run_one(runner, opts, failure.run_index);
    }
    let r = &failure.repro;
    let report = weft_explore::replay(runner, &r.scenario, &r.decisions, false).report;
    let failed = report.outcome.is_failure();
    let found = Found {
        run_index: failure.run_index,
        seed: failure.seed,
        scenario: r.scenario.clone(),
        decisions: r.decisions.clone(),
        report,
    };
    (found, failed)
}

pub(crate) fn merge(a: MergeArgs) -> Result<Code> {
    let files = collect(&a.paths)?;
    let shards = read_all(&files)?;
    let campaign = shards[0].1.campaign.clone();
    let count = shards.len();
    let target = crate::registry::find(&campaign.spec.target)?;
    weft_core::check_spec(target.as_ref(), &campaign.spec)?;
    let runner = target.prepare(&campaign.spec)?;
    super::output::prepare_dir(&a.out)?;
    let strategy = Strategy::parse(&campaign.strategy, 0)
        .filter(|s| weft_explore::check_shardable(*s).is_ok())
        .with_context(|| {
            format!("{}: strategy {} cannot be sharded", files[0].display(), campaign.strategy)
        })?;
    let opts = CampaignOptions {
        seed: campaign.seed,
        runs: campaign.runs,
        jobs: 1,
        strategy,
        scenario: campaign.scenario.clone(),
    };
    let winner = shards
        .iter()
        .filter_map(|(p, f)| f.first_failure.as_ref().map(|x| (x.run_index, p, x)))
        .min_by_key(|(i, _, _)| *i);
    let exact = campaign.runs.is_some();
    let parts: Vec<_> = shards.iter().map(|(_, f)| (f.shard, &f.ledger)).collect();
    let mut result =
        weft_explore::merge_ledgers(&parts, campaign.runs, winner.map(|w| w.0), exact)?;
    let out = Out { json: a.finish.json };
    out.line(format!("weft merge: {count} shards of `{}`", shard::describe(&campaign)));
    if let Some((index, path, failure)) = winner {
        let hash = failure.trace_hash;
        let (found, failed) = rerun(runner.as_ref(), &opts, failure);
        if !failed || found.report.trace_hash != hash {
            out.line(format!(
                "DIVERGED: run {index} failed in {} with trace hash {hash:016x}, here it gives \
                 {} with {:016x}: the machines ran different builds or the target is not \
                 deterministic",
                path.display(),
                found.report.outcome.kind(),
                found.report.trace_hash
            ));
            return Ok(Code::Diverged);
        }
        result.found = Some(found);
    }
    if !exact {
        out.line(
            "  time-budgeted shards (--time): which runs each shard made depended on its \
             machine's speed, so this result is not reproducible run for run (give --runs)",
        );
    }
    let seconds: Vec<f64> = shards.iter().map(|(_, f)| f.seconds).collect();
    let slowest = seconds.iter().cloned().fold(1e-9, f64::max);
    let merged = json!({
        "shards": count,
        "reproducible": exact,
        "shard_runs": shards.iter().map(|(_, f)| f.runs).collect::<Vec<_>>(),
        "shard_seconds": seconds,
    });
    let report = Report {
        target: target.as_ref(),
        runner: runner.as_ref(),
        spec: &campaign.spec,
        opts: &opts,
        out_dir: &a.out,
        json: a.finish.json,
        no_shrink: a.finish.no_shrink,
        shrink_budget: a.finish.shrink.shrink_budget,
        show: Show::auto(a.finish.quiet),
        secs: slowest,
        merged: Some(merged),
    };
    report_campaign(&report, result)
}
