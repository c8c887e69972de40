//! `weft eval`: does a target tell its buggy variants from its fixed ones, and how reliably?
//! N independent campaigns of equal budget per variant, paired by seed (one library call:
//! `weft_explore::evaluate`).

use crate::cmd::TargetArgs;
use crate::exit::Code;
use anyhow::{bail, Result};
use clap::Args;

#[derive(Args)]
pub struct EvalArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// Variants to compare, comma-separated (e.g. `0.2.0,0.2.1`).
    #[arg(long, value_delimiter = ',', required = true)]
    variants: Vec<String>,
    /// Independent campaigns per variant.
    #[arg(long, default_value_t = 20)]
    campaigns: u64,
    /// Runs per campaign (a campaign stops at its first failing run).
    #[arg(long, default_value_t = 100)]
    budget: u64,
    /// Evaluation seed; campaign and run seeds derive from it, the same for every variant.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Worker threads (default: all cores). The report does not depend on it.
    #[arg(long)]
    jobs: Option<usize>,
}

pub fn eval(a: EvalArgs) -> Result<Code> {
    let (target, spec) = a.target.spec()?;
    for v in &a.variants {
        let mut s = spec.clone();
        s.variant = v.clone();
        target.prepare(&s)?; // unknown variants and bad options are input errors, up front
    }
    if a.campaigns == 0 || a.budget == 0 {
        bail!("--campaigns and --budget must be at least 1");
    }
    let jobs =
        a.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    println!(
        "weft eval {} --variants {}  campaigns {}  budget {} runs  seed {}  jobs {}",
        spec.target,
        a.variants.join(","),
        a.campaigns,
        a.budget,
        a.seed,
        jobs
    );
    // Each variant's own default scenario, unless the command line changes it.
    let scenario = match a.target.overrides_scenario() {
        true => Some(a.target.scenario(target.prepare(&spec)?.as_ref())?),
        false => None,
    };
    let opts = weft_explore::EvalOptions {
        spec,
        variants: a.variants.clone(),
        campaigns: a.campaigns,
        budget: a.budget,
        seed: a.seed,
        jobs: jobs.max(1),
        scenario,
        clock: Some(wall_clock),
    };
    let e = weft_explore::evaluate(target.as_ref(), &opts);
    println!();
    println!("| variant | found / campaigns | Wilson 95% | median runs to 1st | median time to 1st | failed to run | properties |");
    println!("|---|---|---|---|---|---|---|");
    for v in &e.variants {
        let props: Vec<String> = v.properties.iter().map(|(p, n)| format!("{p}: {n}")).collect();
        println!(
            "| {} | {} / {} | [{:.2}, {:.2}] | {} | {} | {} | {} |",
            v.variant,
            v.found,
            v.campaigns,
            v.found_ci95.0,
            v.found_ci95.1,
            v.median_runs_to_failure.map_or("-".into(), |m| m.to_string()),
            v.median_time_to_failure.map_or("-".into(), |t| format!("{:.2} s", t.as_secs_f64())),
            v.failed_to_run,
            if props.is_empty() { "-".into() } else { props.join(", ") }
        );
    }
    println!();
    for d in &e.differences {
        if d.replayed == 0 && d.only_on_variant.is_empty() {
            continue;
        }
        println!(
            "{} vs {}: never on {}: [{}]; of {} failing seeds of {}, {} fail on {} too, {} pass there{}",
            d.variant,
            d.other,
            d.other,
            d.only_on_variant.join(", "),
            d.replayed,
            d.variant,
            d.also_fail,
            d.other,
            d.pass_on_other,
            if d.pass_seeds.is_empty() {
                String::new()
            } else {
                format!(" (e.g. seeds {:?})", &d.pass_seeds[..d.pass_seeds.len().min(3)])
            }
        );
    }
    Ok(Code::Ok)
}

/// Time since the first call: the campaigns' wall-clock timer (the only clock `weft eval`
/// reads; the runs themselves never see it).
#[allow(clippy::disallowed_methods)]
fn wall_clock() -> std::time::Duration {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed()
}
