//! `weft bench`: compares strategies on targets by measurement. For each target × strategy it
//! runs `--campaigns` campaigns (campaign seeds `seed..seed+campaigns`) with the same run budget
//! and prints, as a Markdown table, how often a violation was found (discovery probability at
//! an equal run budget) and the median and quartiles of runs and wall-clock time to the first
//! violation, with ratios against `random`. Campaigns that found nothing count as "more than
//! the budget", so a median is shown only when more than half of the campaigns found something.
//!
//! Runs are counted deterministically; times depend on the machine (use `--jobs 1` on a busy
//! one). Exhaustive search does not depend on the seed, so it is run once per target.

use super::flags::{describe_spec, parse_strategy_name, TargetArgs};
use crate::exit::Code;
use anyhow::{bail, Result};
use clap::Args;
use weft_explore::{CampaignOptions, Quiet, Strategy};

#[derive(Args)]
pub struct BenchArgs {
    /// Targets as NAME[:VARIANT][:KEY=VALUE,...][@PROPERTY], e.g. `primary-backup:buggy` or
    /// `primary-backup:fixed@HasPrimary`.
    #[arg(required = true)]
    targets: Vec<String>,
    /// Strategies to compare, comma-separated; the first is the baseline of the ratios.
    #[arg(long, default_value = "random,swarm,coverage", value_delimiter = ',', value_parser = parse_strategy_name)]
    strategies: Vec<String>,
    /// Campaigns per target and strategy.
    #[arg(long, default_value_t = 20)]
    campaigns: u64,
    /// Run budget of each campaign.
    #[arg(long, default_value_t = 2000)]
    runs: u64,
    /// First campaign seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Worker threads per campaign (1 keeps times comparable on a shared machine).
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// Exhaustive search: depth bound.
    #[arg(long, default_value_t = 12)]
    max_depth: u32,
}

fn parse_target(text: &str) -> Result<TargetArgs> {
    let (main, property) = match text.split_once('@') {
        Some((m, p)) => (m, Some(p.to_string())),
        None => (text, None),
    };
    let mut parts = main.splitn(3, ':');
    let name = parts.next().unwrap_or_default();
    if name.is_empty() {
        bail!("empty target in `{text}`");
    }
    let variant = parts.next().filter(|v| !v.is_empty());
    let options: Vec<String> = parts
        .next()
        .map(|o| o.split(',').filter(|kv| !kv.is_empty()).map(str::to_string).collect())
        .unwrap_or_default();
    Ok(TargetArgs::new(name, variant, &options).with_property(property))
}

/// One strategy's campaigns on one target.
struct Row {
    strategy: String,
    /// Per campaign: runs and seconds to the first violation (None: not found in budget).
    results: Vec<Option<(u64, f64)>>,
}

/// The `q`-quantile (nearest rank) of values where None sorts as +infinity.
fn quantile(mut v: Vec<Option<f64>>, q: f64) -> Option<f64> {
    v.sort_by(|a, b| match (a, b) {
        (Some(x), Some(y)) => x.total_cmp(y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    if v.is_empty() {
        return None;
    }
    let i = ((v.len() as f64 - 1.0) * q).round() as usize;
    v[i]
}

impl Row {
    fn runs(&self, q: f64) -> Option<f64> {
        quantile(self.results.iter().map(|r| r.map(|(n, _)| n as f64)).collect(), q)
    }
    fn secs(&self, q: f64) -> Option<f64> {
        quantile(self.results.iter().map(|r| r.map(|(_, s)| s)).collect(), q)
    }
    fn found(&self) -> usize {
        self.results.iter().filter(|r| r.is_some()).count()
    }
    fn p(&self) -> f64 {
        self.found() as f64 / self.results.len().max(1) as f64
    }
}

fn fmt_runs(v: Option<f64>, budget: u64) -> String {
    v.map(|x| format!("{x:.0}")).unwrap_or_else(|| format!(">{budget}"))
}

fn fmt_ms(v: Option<f64>) -> String {
    v.map(|s| format!("{:.1}", s * 1000.0)).unwrap_or_else(|| "—".into())
}

fn ratio(base: Option<f64>, this: Option<f64>) -> String {
    match (base, this) {
        (Some(b), Some(t)) if t > 0.0 => format!("{:.2}×", b / t),
        (None, Some(_)) => "better".into(),
        (Some(_), None) => "worse".into(),
        _ => "—".into(),
    }
}

pub fn bench(a: BenchArgs) -> Result<Code> {
    if a.jobs == 0 || a.campaigns == 0 || a.runs == 0 {
        bail!("--jobs, --campaigns and --runs must be at least 1");
    }
    let targets: Vec<TargetArgs> =
        a.targets.iter().map(|t| parse_target(t)).collect::<Result<_>>()?;
    println!(
        "weft bench: {} campaigns × {} runs per target and strategy, campaign seeds {}..{}, jobs {}",
        a.campaigns,
        a.runs,
        a.seed,
        a.seed + a.campaigns - 1,
        a.jobs
    );
    println!();
    println!(
        "| target | strategy | found | P(found) | runs to 1st: median [p25–p75] | ms to 1st: median \
         [p25–p75] | runs ratio vs {0} | time ratio vs {0} | P ratio vs {0} |",
        a.strategies[0]
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for t in &targets {
        let (target, spec) = t.spec()?;
        let runner = target.prepare(&spec)?;
        let scenario = runner.default_scenario();
        let mut rows: Vec<Row> = Vec::new();
        for name in &a.strategies {
            let strategy = Strategy::parse(name, a.max_depth).expect("validated by clap");
            let seeds: Vec<u64> = if matches!(strategy, Strategy::Exhaustive { .. }) {
                vec![a.seed]
            } else {
                (a.seed..a.seed + a.campaigns).collect()
            };
            let mut results = Vec::new();
            for seed in seeds {
                let opts = CampaignOptions {
                    seed,
                    runs: Some(a.runs),
                    jobs: a.jobs,
                    strategy,
                    scenario: scenario.clone(),
                };
                #[allow(clippy::disallowed_methods)] // the CLI owns the wall clock
                let start = std::time::Instant::now();
                let r = weft_explore::run_campaign(runner.as_ref(), &opts, &Quiet);
                let secs = start.elapsed().as_secs_f64();
                if let Some(why) = &r.unsupported {
                    eprintln!("  {} / {name}: unsupported: {why}", describe_spec(&spec));
                    break;
                }
                let runs_to_first = r.found.as_ref().map(|f| f.run_index + 1);
                results.push(runs_to_first.map(|n| (n, secs)));
            }
            rows.push(Row { strategy: name.clone(), results });
        }
        let base = &rows[0];
        let (b_runs, b_secs, b_p) = (base.runs(0.5), base.secs(0.5), base.p());
        for row in &rows {
            if row.results.is_empty() {
                println!(
                    "| {} | {} | unsupported | | | | | | |",
                    describe_spec(&spec),
                    row.strategy
                );
                continue;
            }
            let p_ratio = if b_p > 0.0 { format!("{:.2}×", row.p() / b_p) } else { "—".into() };
            println!(
                "| {} | {} | {}/{} | {:.2} | {} [{}–{}] | {} [{}–{}] | {} | {} | {} |",
                describe_spec(&spec),
                row.strategy,
                row.found(),
                row.results.len(),
                row.p(),
                fmt_runs(row.runs(0.5), a.runs),
                fmt_runs(row.runs(0.25), a.runs),
                fmt_runs(row.runs(0.75), a.runs),
                fmt_ms(row.secs(0.5)),
                fmt_ms(row.secs(0.25)),
                fmt_ms(row.secs(0.75)),
                ratio(b_runs, row.runs(0.5)),
                ratio(b_secs, row.secs(0.5)),
                p_ratio
            );
        }
    }
    println!();
    println!(
        "Ratios above 1× favour the strategy (fewer runs, less time, more discoveries than {}). \
         Not found = more than the budget.",
        a.strategies[0]
    );
    Ok(Code::Ok)
}
