//! `weft check-determinism`: each seed run twice with its trace hashes compared; the first
//! differing event is named. A seed whose runs both end unsupported ends the check, exit 4.

use super::flags::{describe_spec, TargetArgs};
use crate::exit::Code;
use anyhow::{bail, Result};
use clap::Args;
use std::collections::BTreeMap;
use weft_core::Outcome;

#[derive(Args)]
pub(super) struct DeterminismArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// How many seeds to check.
    #[arg(long, default_value_t = 100)]
    seeds: u64,
    /// Base seed; checked seeds derive from it.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output folder: a process target's nodes run in fresh directories under OUT/work (as
    /// with `explore` and `run`; `-o work_dir=` names one directly).
    #[arg(long, default_value = "weft-out")]
    out: std::path::PathBuf,
}

pub(super) fn check_determinism(a: DeterminismArgs) -> Result<Code> {
    if a.seeds == 0 {
        bail!("--seeds 0 checks nothing: give --seeds 1 or more");
    }
    let (target, mut spec) = a.target.spec()?;
    if spec.target == "process" && !spec.options.contains_key("work_dir") {
        let work = std::path::absolute(&a.out)?.join("work");
        spec.options.insert("work_dir".into(), work.display().to_string());
    }
    let runner = target.prepare(&spec)?;
    let scenario = a.target.scenario(runner.as_ref())?;
    println!(
        "weft check-determinism {}  seeds {}  base seed {}",
        describe_spec(&spec),
        a.seeds,
        a.seed
    );
    let mut outcomes: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut events = 0u64;
    for i in 0..a.seeds {
        let seed = weft_core::derive_seed(a.seed, i);
        match weft_explore::check_seed_report(runner.as_ref(), &scenario, seed) {
            Err(d) => {
                println!("NONDETERMINISM {d}");
                return Ok(Code::Diverged);
            }
            // Alike, but not a run of the program as it runs natively: saying "deterministic"
            // of a program weft refused (a Go binary) or stopped would mislead.
            Ok(r) if matches!(r.outcome, Outcome::Unsupported { .. }) => {
                println!("UNSUPPORTED seed {seed:#x}: both runs ended alike, {}", r.outcome);
                println!("  weft cannot run this program faithfully; nothing more was checked");
                return Ok(Code::Unsupported);
            }
            Ok(report) => {
                *outcomes.entry(report.outcome.kind()).or_default() += 1;
                events += report.events;
            }
        }
    }
    println!("deterministic: {} seeds, each run twice, identical traces", a.seeds);
    // Runs that agree because both ended early (a start script failing after a crash) agree
    // too: say how they ended, as explore does.
    let ends: Vec<String> = outcomes.iter().map(|(k, n)| format!("{k}: {n}")).collect();
    println!("  outcomes: {}  ({} events a run on average)", ends.join(", "), events / a.seeds);
    Ok(Code::Ok)
}
