//! `weft check-determinism`: each seed run twice with its trace hashes compared; the first
//! differing event is named.

use super::flags::{describe_spec, TargetArgs};
use crate::exit::Code;
use anyhow::{bail, Result};
use clap::Args;

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
}

pub(super) fn check_determinism(a: DeterminismArgs) -> Result<Code> {
    if a.seeds == 0 {
        bail!("--seeds 0 checks nothing: give --seeds 1 or more");
    }
    let (target, spec) = a.target.spec()?;
    let runner = target.prepare(&spec)?;
    let scenario = a.target.scenario(runner.as_ref())?;
    println!(
        "weft check-determinism {}  seeds {}  base seed {}",
        describe_spec(&spec),
        a.seeds,
        a.seed
    );
    for i in 0..a.seeds {
        let seed = weft_core::derive_seed(a.seed, i);
        if let Some(d) = weft_explore::check_seed(runner.as_ref(), &scenario, seed) {
            println!("NONDETERMINISM {d}");
            return Ok(Code::Diverged);
        }
    }
    println!("deterministic: {} seeds, each run twice, identical traces", a.seeds);
    Ok(Code::Ok)
}
