//! What callers make of a campaign's result, so none of them assembles a repro by hand:
//! [`explore`] (a campaign whose unsupported strategy is an error, never a pass),
//! [`found_repro`] (the repro file of a violation found), [`shrink_repro`] (a shrunk repro whose
//! provenance says what it was shrunk from) and [`replay_repro`] (re-run a repro and say whether
//! it reproduced). The `weft` command line and the `weft` facade's test runner both use them.

use crate::campaign::{run_campaign, CampaignOptions, CampaignResult, Control, Found, Strategy};
use crate::replay::{replay, Replayed};
use crate::shrink::{shrink, shrink_differential, ShrinkError, ShrinkOptions, Shrunk};
use weft_core::{Contract, Outcome, RunSpec, Runner};
use weft_report::{Provenance, Repro, Sizes};

/// The campaign's strategy cannot run on this target (exhaustive search on a target that
/// reports no state hashes): nothing was checked.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("strategy {strategy} is unsupported here: {why}")]
pub struct Unsupported {
    pub strategy: &'static str,
    pub why: String,
}

/// [`run_campaign`], with an unsupported strategy as an error instead of a result that reads
/// like "no violation found".
pub fn explore(
    runner: &dyn Runner,
    opts: &CampaignOptions,
    control: &dyn Control,
) -> Result<CampaignResult, Unsupported> {
    let result = run_campaign(runner, opts, control);
    match &result.unsupported {
        Some(why) => Err(Unsupported { strategy: opts.strategy.name(), why: why.clone() }),
        None => Ok(result),
    }
}

/// The repro file of a violation a campaign of `spec` (campaign seed `campaign_seed`, strategy
/// `strategy`) found.
pub fn found_repro(spec: &RunSpec, found: &Found, campaign_seed: u64, strategy: Strategy) -> Repro {
    Repro {
        format: weft_report::FORMAT.into(),
        format_version: weft_report::FORMAT_VERSION,
        weft_version: weft_core::VERSION.into(),
        spec: spec.clone(),
        scenario: found.scenario.clone(),
        seed: found.seed,
        provenance: Provenance {
            campaign_seed,
            run_index: found.run_index,
            strategy: strategy.name().into(),
            shrunk_from: None,
        },
        decisions: found.decisions.clone(),
        outcome: found.report.outcome.clone(),
        trace_hash: found.report.trace_hash,
        events: found.report.events,
        faults: found.report.faults,
    }
}

/// The sizes a repro file records.
pub fn repro_sizes(repro: &Repro) -> Sizes {
    Sizes { decisions: repro.decisions.len() as u64, events: repro.events, faults: repro.faults }
}

/// Shrinks `repro` (keeping it passing on `reference`, when given), returning the shrunk repro
/// — its provenance names the sizes of the first, unshrunk repro — and the shrink's statistics.
pub fn shrink_repro(
    runner: &dyn Runner,
    reference: Option<&dyn Runner>,
    repro: &Repro,
    opts: &ShrinkOptions,
    control: &dyn Control,
) -> Result<(Repro, Shrunk), ShrinkError> {
    let shrunk = match reference {
        None => shrink(runner, &repro.scenario, &repro.decisions, opts, control),
        Some(reference) => {
            shrink_differential(runner, reference, &repro.scenario, &repro.decisions, opts, control)
        }
    }?;
    let before = repro.provenance.shrunk_from.unwrap_or_else(|| repro_sizes(repro));
    let mut out = repro.clone();
    out.weft_version = weft_core::VERSION.into();
    out.provenance.shrunk_from = Some(before);
    out.decisions = shrunk.decisions.clone();
    out.scenario = shrunk.scenario.clone();
    out.outcome = shrunk.report.outcome.clone();
    out.trace_hash = shrunk.report.trace_hash;
    out.events = shrunk.report.events;
    out.faults = shrunk.report.faults;
    Ok((out, shrunk))
}

/// What a replay of a repro showed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplayVerdict {
    /// The recorded failure recurred: same outcome, same trace hash.
    Reproduced,
    /// The run passed as recorded (a repro of a passing run).
    Passed,
    /// The target did something weft cannot simulate, as recorded.
    Unsupported,
    /// The replay did not reproduce the recorded run.
    Diverged,
}

/// Replays `repro` on `runner` (auditing crash states against `audit`, when given; recording
/// every event when `record`), and compares it with what the file recorded.
pub fn replay_repro(
    runner: &dyn Runner,
    repro: &Repro,
    audit: Option<Contract>,
    record: bool,
) -> (Replayed, ReplayVerdict) {
    let mut scenario = repro.scenario.clone();
    scenario.disk.audit = audit;
    let r = replay(runner, &scenario, &repro.decisions, record);
    let same = r.report.trace_hash == repro.trace_hash && r.report.outcome == repro.outcome;
    let verdict = match &r.report.outcome {
        _ if !same => ReplayVerdict::Diverged,
        o if o.is_failure() => ReplayVerdict::Reproduced,
        Outcome::Unsupported { .. } => ReplayVerdict::Unsupported,
        _ => ReplayVerdict::Passed,
    };
    (r, verdict)
}
