//! `weft show`: a repro replayed and shown as a text timeline, a self-contained HTML
//! space-time diagram, a ShiViz log, or which decision decides what.

use super::flags::{describe_spec, open_repro};
use super::report::show_sizes;
use crate::exit::Code;
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub(super) struct ShowArgs {
    /// A repro file.
    path: PathBuf,
    #[command(flatten)]
    exec: crate::run::process::ExecArgs,
    /// Write a self-contained HTML space-time diagram here.
    #[arg(long, value_name = "OUT.html")]
    html: Option<PathBuf>,
    /// Write a ShiViz log (vector clocks computed from sends and deliveries) here.
    #[arg(long, value_name = "OUT.log")]
    shiviz: Option<PathBuf>,
    /// Print which decision decides what instead of the timeline: the decisions by kind of
    /// site, and every one that is not zero with its site.
    #[arg(long)]
    decisions: bool,
}

pub(super) fn show(a: ShowArgs) -> Result<Code> {
    let (repro, target) = open_repro(&a.path, &a.exec)?;
    let runner = target.prepare(&repro.spec)?;
    let r = weft_explore::replay(runner.as_ref(), &repro.scenario, &repro.decisions, true);
    let diverged = r.report.trace_hash != repro.trace_hash || r.report.outcome != repro.outcome;
    if a.decisions {
        print!("{}", weft_report::decisions::render(&repro.decisions, &r.sites));
    } else if a.html.is_none() && a.shiviz.is_none() {
        print!("{}", weft_report::timeline::render(&r.events));
    }
    if let Some(path) = &a.html {
        let mut lines = vec![
            format!("{}", describe_spec(&repro.spec)),
            format!("outcome: {}", r.report.outcome),
            format!(
                "{} decisions, {} events, {} faults, trace hash {:016x}",
                repro.decisions.len(),
                r.report.events,
                r.report.faults,
                r.report.trace_hash
            ),
        ];
        if let Some(from) = &repro.provenance.shrunk_from {
            lines.push(format!("shrunk from {}", show_sizes(from)));
        }
        lines.push(format!("reproduce: weft replay {}", a.path.display()));
        let title = format!("weft: {}", a.path.display());
        let page = weft_report::html::render(
            &weft_report::html::Header { title: &title, lines: &lines },
            &r.events,
        );
        std::fs::write(path, page).with_context(|| format!("cannot write {}", path.display()))?;
        println!("wrote {} ({} events)", path.display(), r.events.len());
    }
    if let Some(path) = &a.shiviz {
        std::fs::write(path, weft_report::shiviz::render(&r.events))
            .with_context(|| format!("cannot write {}", path.display()))?;
        println!(
            "wrote {} (paste into ShiViz; the first line is its parsing regex)",
            path.display()
        );
    }
    if diverged {
        eprintln!(
            "weft: warning: the replay did not reproduce the recorded run (recorded: {}); shown \
             is what the replay did",
            repro.outcome
        );
        return Ok(Code::Diverged);
    }
    Ok(Code::Ok)
}
