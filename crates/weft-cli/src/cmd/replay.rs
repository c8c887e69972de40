//! `weft replay`: a repro re-run with its recorded decisions, compared with the recorded
//! outcome and trace hash; or audited under another persistence contract; or run on another
//! variant of the target.

use super::flags::{describe_spec, open_repro, parse_contract};
use crate::exit::Code;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use weft_core::Outcome;
use weft_report::Repro;

#[derive(Args)]
pub(super) struct ReplayArgs {
    /// A repro file written by `weft explore`.
    path: PathBuf,
    #[command(flatten)]
    exec: crate::run::process::ExecArgs,
    /// Print the run's timeline, one event per line.
    #[arg(long)]
    timeline: bool,
    /// Replay the same decisions, and check every crash state against this contract too:
    /// reports whether the recorded crash states are reachable under it, and the rule if not.
    #[arg(long, value_parser = parse_contract)]
    contract: Option<weft_core::Contract>,
    /// Replay the same decisions on another variant of the target (e.g. the fixed version of
    /// a library): exit 1 if that variant violates the property too, 0 if it passes. The
    /// trace hash is not compared, since a different variant takes a different path.
    #[arg(long)]
    variant: Option<String>,
}

pub(super) fn replay(a: ReplayArgs) -> Result<Code> {
    let (repro, target) = open_repro(&a.path, &a.exec)?;
    if let Some(variant) = &a.variant {
        return replay_on_variant(&a, &repro, target.as_ref(), variant);
    }
    let runner = target.prepare(&repro.spec)?;
    let (r, verdict) = weft_explore::replay_repro(runner.as_ref(), &repro, a.contract, a.timeline);
    if a.timeline {
        print!("{}", weft_report::timeline::render(&r.events));
    }
    println!("weft replay {} ({})", a.path.display(), describe_spec(&repro.spec));
    println!("  outcome: {}", r.report.outcome);
    println!("  trace hash {:016x} (recorded {:016x})", r.report.trace_hash, repro.trace_hash);
    if let (Some(c), Outcome::OutsideModel { detail }) = (a.contract, &r.report.outcome) {
        println!(
            "not reachable under `{}`: {detail}\n  (recorded under `{}`: {})",
            c.name(),
            repro.scenario.disk.contract.name(),
            repro.outcome
        );
        return Ok(Code::Ok);
    }
    Ok(match verdict {
        weft_explore::ReplayVerdict::Diverged => {
            println!(
                "DIVERGED: the replay did not reproduce the recorded run (recorded: {})",
                repro.outcome
            );
            Code::Diverged
        }
        weft_explore::ReplayVerdict::Reproduced => {
            println!("reproduced: same outcome, same trace hash");
            Code::Violation
        }
        weft_explore::ReplayVerdict::Unsupported => Code::Unsupported,
        weft_explore::ReplayVerdict::Passed => Code::Ok,
    })
}

/// `weft replay --variant`: the recorded decisions on another variant of the same target.
fn replay_on_variant(
    a: &ReplayArgs,
    repro: &Repro,
    target: &dyn weft_core::Target,
    variant: &str,
) -> Result<Code> {
    let spec = weft_core::RunSpec { variant: variant.to_string(), ..repro.spec.clone() };
    let runner = target.prepare(&spec)?;
    let mut scenario = repro.scenario.clone();
    scenario.disk.audit = a.contract;
    let r = weft_explore::replay(runner.as_ref(), &scenario, &repro.decisions, a.timeline);
    if a.timeline {
        print!("{}", weft_report::timeline::render(&r.events));
    }
    println!("weft replay {} on {}", a.path.display(), describe_spec(&spec));
    println!("  recorded on `{}`: {}", repro.spec.variant, repro.outcome);
    println!("  on `{variant}`: {}", r.report.outcome);
    Ok(match &r.report.outcome {
        o if o.is_failure() => Code::Violation,
        Outcome::Unsupported { .. } => Code::Unsupported,
        _ => Code::Ok,
    })
}
