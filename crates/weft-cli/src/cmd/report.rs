//! Reporting what a command found: the human lines (to stdout, or to stderr under `--json`),
//! sizes of a run, and a finished campaign's summary, repro and shrink, which `explore` and
//! `merge` share.

use super::flags::Budget;
use super::output;
use super::progress::{self, Show};
use super::shrink::{shrink_note, shrink_repro, shrunk_path};
use crate::exit::Code;
use anyhow::{bail, Result};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;
use weft_core::{RunSpec, Runner};
use weft_explore::{CampaignOptions, Strategy};
use weft_report::Sizes;

/// Human text goes to stdout, or to stderr when stdout carries `--json`.
pub(super) struct Out {
    pub(super) json: bool,
}

impl Out {
    pub(super) fn line(&self, text: impl AsRef<str>) {
        if self.json {
            eprintln!("{}", text.as_ref());
        } else {
            println!("{}", text.as_ref());
        }
    }
}

pub(super) fn sizes(decisions: usize, report: &weft_core::RunReport) -> Sizes {
    Sizes { decisions: decisions as u64, events: report.events, faults: report.faults }
}

pub(super) fn show_sizes(s: &Sizes) -> String {
    format!("{} decisions, {} events, {} faults", s.decisions, s.events, s.faults)
}

/// Everything reporting a finished campaign needs: `explore` and `merge` print the same
/// summary, write the same repro and shrink it the same way.
pub(crate) struct Report<'a> {
    pub target: &'a dyn weft_core::Target,
    pub runner: &'a dyn Runner,
    pub spec: &'a RunSpec,
    pub opts: &'a CampaignOptions,
    pub out_dir: &'a Path,
    pub json: bool,
    pub no_shrink: bool,
    pub shrink_budget: Budget,
    pub show: Show,
    pub secs: f64,
    /// `weft merge`: fields added to the `--json` summary (shards, reproducible).
    pub merged: Option<serde_json::Value>,
}

/// Prints a campaign's summary (and `--json`), writes its repro, shrinks it; the exit code.
pub(crate) fn report_campaign(
    r: &Report<'_>,
    result: weft_explore::CampaignResult,
) -> Result<Code> {
    let (secs, jobs, strategy, spec, opts) = (r.secs, r.opts.jobs, r.opts.strategy, r.spec, r.opts);
    let (target, show, out) = (r.target, r.show, Out { json: r.json });
    out.line(format!(
        "  {} runs, {} events in {:.2}s ({:.0} runs/s, {:.0} events/s), {} distinct features",
        result.runs,
        result.events,
        secs,
        result.runs as f64 / secs,
        result.events as f64 / secs,
        result.features
    ));
    let outcomes: Vec<String> = result.outcomes.iter().map(|(k, n)| format!("{k}: {n}")).collect();
    out.line(format!("  outcomes: {}", outcomes.join(", ")));
    if let Some(x) = &result.exhaustive {
        out.line(format!(
            "  exhaustive: {} distinct states, deepest checkpoint {}, depth bound {}, {} paths \
             cut at the bound, {} decisions wider than {} values; {}",
            x.states,
            x.max_depth,
            x.depth_bound,
            x.cut_at_bound,
            x.wide_decisions,
            weft_explore::MAX_CHOICES,
            if x.exhausted {
                "the bounded space was exhausted"
            } else {
                "the bounded space was NOT exhausted"
            }
        ));
    }
    let info = target.info();
    let mut vacuous = Vec::new();
    for p in info.properties.iter().filter(|p| p.modality == weft_core::Modality::Sometimes) {
        if !result.sometimes_hit.iter().any(|h| h == p.name) {
            out.line(format!(
                "  vacuous: sometimes-property {} never held in this campaign",
                p.name
            ));
            vacuous.push(p.name);
        }
    }
    // A campaign stopped by its --time budget ran out of budget; only Ctrl-C is "interrupted".
    let interrupted = result.interrupted && progress::was_interrupted();
    let mut summary = json!({
        "command": "explore",
        "target": spec.target,
        "variant": spec.variant,
        "options": spec.options,
        "property": spec.property,
        "seed": opts.seed,
        "strategy": strategy.name(),
        "jobs": jobs,
        "runs": result.runs,
        "events": result.events,
        "seconds": secs,
        "features": result.features,
        "outcomes": result.outcomes.iter().cloned().collect::<BTreeMap<_, _>>(),
        "vacuous": vacuous,
        "interrupted": interrupted,
    });
    if let Some(extra) = &r.merged {
        summary["merged"] = extra.clone();
    }
    if let Some(x) = &result.exhaustive {
        summary["exhaustive"] = json!({
            "states": x.states, "max_depth": x.max_depth, "depth_bound": x.depth_bound,
            "cut_at_bound": x.cut_at_bound, "wide_decisions": x.wide_decisions,
            "exhausted": x.exhausted,
        });
    }
    let finish = |code: Code, mut summary: serde_json::Value| -> Result<Code> {
        if r.json {
            summary["exit_code"] = json!(code as u8);
            println!("{}", serde_json::to_string(&summary)?);
        }
        Ok(code)
    };
    if let Some(why) = &result.unsupported {
        out.line(format!("UNSUPPORTED strategy {}: {why}", strategy.name()));
        summary["unsupported"] = json!(why);
        return finish(Code::Unsupported, summary);
    }
    let Some(found) = result.found else {
        if interrupted {
            out.line(format!("interrupted: no violation found in {} runs", result.runs));
            return finish(Code::Interrupted, summary);
        }
        if result.runs == 0 {
            bail!("the --time budget allowed no run: nothing was checked (give more time)");
        }
        if let Some((index, why)) = &result.first_unsupported {
            // Runs weft could not simulate faithfully checked nothing past that point.
            let n = result.outcomes.iter().find(|(k, _)| k == "unsupported").map_or(0, |o| o.1);
            out.line(format!(
                "UNSUPPORTED in {n} of {} runs, first run {index}: {why}",
                result.runs
            ));
            out.line(format!("no violation found in {} runs", result.runs));
            summary["unsupported"] = json!(why);
            return finish(Code::Unsupported, summary);
        }
        out.line(format!("no violation found in {} runs", result.runs));
        return finish(Code::Ok, summary);
    };
    let repro = weft_explore::found_repro(spec, &found, opts.seed, strategy);
    let path = output::campaign_file(
        r.out_dir,
        spec,
        &opts.scenario,
        strategy.name(),
        opts.seed,
        found.run_index,
    );
    // Written before shrinking, so an interrupted or failed shrink loses nothing; if it cannot
    // be written, the violation line and the run's seed below still say how to find it again.
    let written = output::write_new(&repro, &path);
    out.line(format!("VIOLATION {}", found.report.outcome));
    out.line(format!(
        "  run {} (seed {:#x}): {} events, {} faults, {} decisions, trace hash {:016x}",
        found.run_index,
        found.seed,
        found.report.events,
        found.report.faults,
        found.decisions.len(),
        found.report.trace_hash
    ));
    if strategy == Strategy::Swarm {
        out.line(format!("  run scenario {}", serde_json::to_string(&found.scenario.rates)?));
    }
    let path = written?;
    out.line(format!("  repro: {}", path.display()));
    let before = sizes(found.decisions.len(), &found.report);
    summary["violation"] = json!({
        "kind": found.report.outcome.kind(),
        "property": found.report.outcome.property(),
        "detail": found.report.outcome.to_string(),
        "run_index": found.run_index,
        "repro": path,
        "before": before,
    });
    let mut reproduce = path.clone();
    if !r.no_shrink {
        match shrink_repro(r.runner, None, &repro, r.shrink_budget, show) {
            Ok((small, shrunk)) => {
                let spath = output::write_new(&small, &shrunk_path(&path))?;
                let after = sizes(small.decisions.len(), &shrunk.report);
                out.line(format!(
                    "  shrunk in {} runs{}: {} -> {}",
                    shrunk.runs,
                    shrink_note(&shrunk),
                    show_sizes(&before),
                    show_sizes(&after)
                ));
                out.line(format!("  shrunk repro: {}", spath.display()));
                summary["violation"]["shrunk_repro"] = json!(spath);
                summary["violation"]["after"] = json!(after);
                summary["violation"]["shrink_runs"] = json!(shrunk.runs);
                summary["violation"]["shrink_complete"] = json!(shrunk.complete);
                reproduce = spath;
            }
            Err(e) => out.line(format!("  not shrunk: {e}")),
        }
    }
    summary["reproduce"] = json!(format!("weft replay {}", reproduce.display()));
    out.line(format!("reproduce: weft replay {}", reproduce.display()));
    finish(Code::Violation, summary)
}
