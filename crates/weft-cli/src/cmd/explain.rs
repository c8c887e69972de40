//! `weft explain-crash`: for each crash in a repro, what the disk lost and the rule that
//! allowed it, and under which persistence contracts that crash state is reachable.

use super::flags::open_repro;
use crate::exit::Code;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use weft_core::Outcome;

#[derive(Args)]
pub(super) struct ExplainArgs {
    /// A repro file written by `weft explore`.
    path: PathBuf,
    #[command(flatten)]
    exec: crate::run::process::ExecArgs,
}

pub(super) fn explain_crash(a: ExplainArgs) -> Result<Code> {
    let (repro, target) = open_repro(&a.path, &a.exec)?;
    let runner = target.prepare(&repro.spec)?;
    let recorded = repro.scenario.disk.contract;
    let r = weft_explore::replay(runner.as_ref(), &repro.scenario, &repro.decisions, true);
    println!("weft explain-crash {} (recorded under `{}`)", a.path.display(), recorded.name());
    let mut crashes = 0;
    for e in &r.events {
        match e.kind {
            weft_core::EventKind::Crash => {
                crashes += 1;
                println!("{}", weft_report::timeline::line(e));
            }
            // The losses noted after a crash; a real program's disk calls (notes that start
            // with `disk `) are the timeline's, not the explanation's.
            weft_core::EventKind::Note if crashes > 0 && !e.summary.starts_with("disk ") => {
                println!("{}", weft_report::timeline::line(e))
            }
            _ => {}
        }
    }
    if crashes == 0 {
        println!("  no crash in this run");
        return Ok(Code::Ok);
    }
    for c in weft_core::Contract::ALL {
        let mut scenario = repro.scenario.clone();
        scenario.disk.audit = Some(c);
        let audited = weft_explore::replay(runner.as_ref(), &scenario, &repro.decisions, false);
        match audited.report.outcome {
            Outcome::OutsideModel { detail } => {
                println!("  {:<8} not reachable: {detail}", c.name())
            }
            _ => println!("  {:<8} every crash state of this run is reachable", c.name()),
        }
    }
    Ok(Code::Ok)
}
