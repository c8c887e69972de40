//! `weft shrink`: an existing repro shrunk to a smaller one that fails the same way (optionally
//! while passing on another variant); and the shrink within a budget that `explore` uses too.

use super::flags::{describe_spec, open_repro, Budget, ShrinkBudget};
use super::output;
use super::progress::{self, CliControl, Show};
use super::report::{show_sizes, sizes};
use crate::exit::Code;
use anyhow::Result;
use clap::Args;
use std::path::{Path, PathBuf};
use weft_core::{RunSpec, Runner};
use weft_explore::ShrinkOptions;
use weft_report::Repro;

#[derive(Args)]
pub(super) struct ShrinkArgs {
    /// A repro file written by `weft explore` (or an earlier `weft shrink`).
    path: PathBuf,
    #[command(flatten)]
    exec: crate::run::process::ExecArgs,
    /// Where to write the shrunk repro (default: PATH with `-shrunk` before `.json`).
    #[arg(long, short = 'o')]
    out: Option<PathBuf>,
    /// Keep the counterexample telling two variants apart: accept only smaller decision lists
    /// that also pass on this variant (e.g. the fixed version of a library), under the repro's
    /// property selection.
    #[arg(long, value_name = "VARIANT")]
    passing_on: Option<String>,
    #[command(flatten)]
    shrink: ShrinkBudget,
}

/// Wall-clock backstop for a run-counted shrink budget.
const SHRINK_BACKSTOP: std::time::Duration = std::time::Duration::from_secs(300);

/// Why a shrink stopped before its fixpoint, for the `shrunk in N runs…` line.
pub(super) fn shrink_note(shrunk: &weft_explore::Shrunk) -> &'static str {
    if shrunk.complete {
        ""
    } else if progress::was_interrupted() {
        " (interrupted: best so far)"
    } else {
        " (budget reached: best so far)"
    }
}

/// A shrunk repro goes beside the original: `x.json` → `x-shrunk.json`.
pub(super) fn shrunk_path(path: &Path) -> PathBuf {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let stem = stem.strip_suffix("-shrunk").unwrap_or(&stem).to_string();
    path.with_file_name(format!("{stem}-shrunk.json"))
}

/// Shrinks `repro` within `budget`, returning the shrunk repro (its provenance says what it was
/// shrunk from) and whether a fixpoint was reached.
pub(super) fn shrink_repro(
    runner: &dyn Runner,
    reference: Option<&dyn Runner>,
    repro: &Repro,
    budget: Budget,
    show: Show,
) -> Result<(Repro, weft_explore::Shrunk), weft_explore::ShrinkError> {
    // A run budget is reproducible, but on a slow target (message-level Chord, real processes)
    // 20,000 candidate runs can take an hour: a wall-clock backstop keeps the best list so far.
    let (max_runs, deadline) = match budget {
        Budget::Runs(n) => (n, Some(SHRINK_BACKSTOP)),
        Budget::Time(t) => (u64::MAX, Some(t)),
    };
    // The control gives the shrinker the wall-clock budget and Ctrl-C and shows its progress.
    let control = CliControl::new(deadline, None, show, "shrink runs");
    let opts = ShrinkOptions { max_runs };
    let shrunk = weft_explore::shrink_repro(runner, reference, repro, &opts, &control);
    control.finish();
    shrunk
}

pub(super) fn shrink(a: ShrinkArgs) -> Result<Code> {
    let (repro, target) = open_repro(&a.path, &a.exec)?;
    let runner = target.prepare(&repro.spec)?;
    let reference = match &a.passing_on {
        Some(v) => Some(target.prepare(&RunSpec { variant: v.clone(), ..repro.spec.clone() })?),
        None => None,
    };
    let out = a.out.clone().unwrap_or_else(|| shrunk_path(&a.path));
    // Before shrinking: the result must have somewhere to go.
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        output::prepare_dir(dir)?;
    }
    print!("weft shrink {} ({})", a.path.display(), describe_spec(&repro.spec));
    match &a.passing_on {
        Some(v) => println!(", keeping it passing on `{v}`"),
        None => println!(),
    }
    let show = Show::auto(false);
    let budget = a.shrink.shrink_budget;
    let (small, shrunk) =
        match shrink_repro(runner.as_ref(), reference.as_deref(), &repro, budget, show) {
            Ok(x) => x,
            Err(e @ weft_explore::ShrinkError::FailsOnReference(_)) => {
                anyhow::bail!("cannot shrink differentially: {e}")
            }
            Err(e) => {
                println!("DIVERGED: {e}; recorded: {}", repro.outcome);
                return Ok(Code::Diverged);
            }
        };
    let out = output::write_new(&small, &out)?;
    let before = weft_explore::repro_sizes(&repro);
    println!("  outcome: {}", small.outcome);
    println!(
        "  shrunk in {} runs{}: {} -> {}",
        shrunk.runs,
        shrink_note(&shrunk),
        show_sizes(&before),
        show_sizes(&sizes(small.decisions.len(), &shrunk.report))
    );
    println!("reproduce: weft replay {}", out.display());
    Ok(Code::Violation)
}
