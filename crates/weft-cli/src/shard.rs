//! `weft explore … --shard K/N`: runs one shard of a random, swarm or coverage-guided campaign
//! and writes its result file `OUT/shard-K-of-N.json` for `weft merge`.
//!
//! The file is JSON ([`ShardFile`], format `weft-shard` version 1): the campaign (spec,
//! scenario, seed, strategy, budget), which shard, whether it completed, its wall time, its
//! run and event counts, its first failing run with the unshrunk repro, and the ledger a merge
//! needs to count the campaign's runs exactly (`weft_explore::Ledger`). A failing run's repro is
//! also written as an ordinary repro file beside it, before the result file, so it is never
//! lost. A shard exits 0 once its file is written, violation or not: the campaign's verdict is
//! the merge's. Running a shard again whose complete result is already there does nothing.
//!
//! Shards sharing a results folder tell each other of failures ([`Exchange`]): a shard that
//! finds one writes its index to `found-HASH-K-of-N.idx` at once, and every shard reads those
//! files at most twice a second and stops before runs above the lowest index, which cannot be
//! the answer. That saves work (without it each shard runs on to its own first failure); the
//! merged result is the same either way. Coverage shards instead exchange every generation's
//! corpus through `OUT/sync-HASH/` (`shard_sync.rs`), waiting for each other at each
//! generation's end, for at most `--sync-timeout` per wait.

#[path = "shard_sync.rs"]
mod sync;

use super::flags::describe_spec;
use super::progress::{CliControl, Show};
use super::report::Out;
use super::{output, progress, Code};
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::hash::Hasher;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use weft_core::{RunSpec, Runner, Scenario, StableHasher};
use weft_explore::{CampaignOptions, Control, Found, Ledger, Progress, Shard, ShardRun, Strategy};
use weft_report::{Provenance, Repro};

pub(crate) const FORMAT: &str = "weft-shard";
pub(crate) const FORMAT_VERSION: u32 = 1;

/// Everything that decides a campaign's runs; shards merge only if theirs are equal.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Campaign {
    pub spec: RunSpec,
    pub scenario: Scenario,
    pub seed: u64,
    pub strategy: String,
    /// The run budget (`--runs`), or none for a `--time` budget.
    pub runs: Option<u64>,
    /// The `--time` budget in seconds, if any.
    pub time_seconds: Option<f64>,
}

impl Campaign {
    pub(crate) fn new(
        spec: &RunSpec,
        opts: &CampaignOptions,
        time: Option<std::time::Duration>,
    ) -> Campaign {
        Campaign {
            spec: spec.clone(),
            scenario: opts.scenario.clone(),
            seed: opts.seed,
            strategy: opts.strategy.name().to_string(),
            runs: opts.runs,
            time_seconds: time.map(|t| t.as_secs_f64()),
        }
    }
}

/// The first failing run of a shard.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Failure {
    pub run_index: u64,
    pub seed: u64,
    pub kind: String,
    pub trace_hash: u64,
    /// The unshrunk repro, as `weft explore` would write it.
    pub repro: Repro,
}

/// One shard's result file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ShardFile {
    pub format: String,
    pub format_version: u32,
    pub weft_version: String,
    pub campaign: Campaign,
    pub shard: Shard,
    /// False when Ctrl-C (or SIGTERM) stopped a run-budgeted shard early.
    pub complete: bool,
    pub seconds: f64,
    pub runs: u64,
    pub events: u64,
    pub first_failure: Option<Failure>,
    pub ledger: Ledger,
}

/// `shard-K-of-N.json`.
pub(crate) fn file_name(shard: Shard) -> String {
    format!("shard-{}-of-{}.json", shard.index, shard.count)
}

/// The repro `weft explore` writes for a failing run.
pub(crate) fn repro_of(campaign: &Campaign, found: &Found) -> Repro {
    Repro {
        format: weft_report::FORMAT.into(),
        format_version: weft_report::FORMAT_VERSION,
        weft_version: weft_core::VERSION.into(),
        spec: campaign.spec.clone(),
        scenario: found.scenario.clone(),
        seed: found.seed,
        provenance: Provenance {
            campaign_seed: campaign.seed,
            run_index: found.run_index,
            strategy: campaign.strategy.clone(),
            shrunk_from: None,
        },
        decisions: found.decisions.clone(),
        outcome: found.report.outcome.clone(),
        trace_hash: found.report.trace_hash,
        events: found.report.events,
        faults: found.report.faults,
    }
}

/// Largest shard file read (the ledger holds one number per run).
const MAX_FILE: u64 = 1 << 30;

/// Reads and checks the format of a shard result file.
pub(crate) fn read(path: &Path) -> Result<ShardFile> {
    let shown = path.display();
    let len = std::fs::metadata(path).with_context(|| format!("cannot read {shown}"))?.len();
    if len > MAX_FILE {
        bail!("{shown}: {len} bytes is too large for a shard result file");
    }
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {shown}"))?;
    let head: serde_json::Value = serde_json::from_slice(&bytes)
        .with_context(|| format!("{shown}: not a weft shard result file"))?;
    if head.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
        bail!("{shown}: not a weft shard result file (no \"format\": \"{FORMAT}\")");
    }
    let version = head.get("format_version").and_then(|v| v.as_u64());
    if version != Some(FORMAT_VERSION as u64) {
        bail!("{shown}: shard format version {version:?}, this weft reads {FORMAT_VERSION}");
    }
    let file: ShardFile = serde_json::from_value(head)
        .with_context(|| format!("{shown}: malformed shard result file"))?;
    if !file.ledger.is_consistent() || file.runs != file.ledger.runs() {
        bail!("{shown}: inconsistent shard result file (its run counts disagree)");
    }
    Ok(file)
}

/// Writes `file` at `path` whole (temporary name, then rename).
fn write(file: &ShardFile, path: &Path) -> Result<()> {
    let tmp = weft_report::temp_path(path);
    let text = serde_json::to_string(file)?;
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

/// Whether a complete result of this very shard is already at `path` (a retried task);
/// an error if the file belongs to another campaign.
fn already_done(path: &Path, campaign: &Campaign, shard: Shard) -> Result<bool> {
    if !path.exists() {
        return Ok(false);
    }
    let old = read(path)?;
    if old.campaign != *campaign || old.shard != shard {
        bail!(
            "{} holds a shard of a different campaign; give this campaign its own --out",
            path.display()
        );
    }
    Ok(old.complete)
}

/// Where and how a shard runs (the flags that do not change the campaign).
pub(crate) struct Place<'a> {
    pub out_dir: &'a Path,
    pub json: bool,
    pub show: Show,
    /// Coverage: the longest wait for the other shards at a generation's end.
    pub sync_timeout: Duration,
}

/// Runs shard `shard` of the campaign and writes its result file; exit 0 (130 if interrupted).
pub(crate) fn explore_shard(
    runner: &dyn Runner,
    opts: &CampaignOptions,
    shard: Shard,
    campaign: Campaign,
    place: &Place<'_>,
) -> Result<Code> {
    let (out_dir, json, show) = (place.out_dir, place.json, place.show);
    if campaign.spec.target == "process" {
        bail!("--shard does not support the `process` target yet (its repros name local paths)");
    }
    let out = Out { json };
    let path = out_dir.join(file_name(shard));
    if already_done(&path, &campaign, shard)? {
        out.line(format!("  shard {shard}: already done, result in {}", path.display()));
        return finish(json, &path, Code::Ok);
    }
    let budget = campaign.runs.map(|r| shard.runs_below(r));
    out.line(format!(
        "  shard {shard}: run indices {}, {}, {}, … ({})",
        shard.run_index(0),
        shard.run_index(1),
        shard.run_index(2),
        budget.map_or("until the time budget ends".into(), |n| format!("{n} runs"))
    ));
    let control = CliControl::new(
        campaign.time_seconds.map(std::time::Duration::from_secs_f64),
        budget,
        show,
        "runs",
    );
    let run = match opts.strategy {
        Strategy::Coverage => {
            let Some(run) = coverage_shard(runner, opts, shard, &campaign, place, &control)? else {
                control.finish();
                return finish(json, &path, Code::Interrupted);
            };
            run
        }
        _ => {
            let exchange = Exchange::new(&control, out_dir, &campaign, shard);
            weft_explore::run_shard(runner, opts, shard, &exchange)?
        }
    };
    control.finish();
    let seconds = control.elapsed().as_secs_f64().max(1e-9);
    let interrupted = run.stopped && progress::was_interrupted();
    if run.cut_short && campaign.runs.is_some() {
        out.line("  another shard was interrupted: this shard stopped after the same generation");
    }
    let interrupted = interrupted || run.cut_short && campaign.runs.is_some();
    let first_failure = match &run.found {
        Some(found) => Some(write_failure(&campaign, found, out_dir, &out)?),
        None => None,
    };
    let runs = run.ledger.runs();
    let events = run.ledger.events.iter().sum();
    out.line(format!(
        "  {runs} runs, {events} events in {seconds:.2}s ({:.0} runs/s)",
        runs as f64 / seconds
    ));
    let file = ShardFile {
        format: FORMAT.into(),
        format_version: FORMAT_VERSION,
        weft_version: weft_core::VERSION.into(),
        campaign,
        shard,
        complete: !interrupted,
        seconds,
        runs,
        events,
        first_failure,
        ledger: run.ledger,
    };
    write(&file, &path)?;
    out.line(format!("  shard result: {}", path.display()));
    out.line(format!("merge when every shard is done: weft merge {}", out_dir.display()));
    finish(json, &path, if interrupted { Code::Interrupted } else { Code::Ok })
}

/// Writes a shard's failing run as an ordinary repro file (before anything else can fail).
fn write_failure(campaign: &Campaign, found: &Found, out_dir: &Path, out: &Out) -> Result<Failure> {
    let repro = repro_of(campaign, found);
    let name = output::campaign_file(
        out_dir,
        &campaign.spec,
        &campaign.scenario,
        &campaign.strategy,
        campaign.seed,
        found.run_index,
    );
    let written = output::write_new(&repro, &name)?;
    out.line(format!(
        "  this shard's first failing run: {} ({}); repro: {}",
        found.run_index,
        found.report.outcome.kind(),
        written.display()
    ));
    Ok(Failure {
        run_index: found.run_index,
        seed: found.seed,
        kind: found.report.outcome.kind().into(),
        trace_hash: found.report.trace_hash,
        repro,
    })
}

fn finish(json: bool, path: &PathBuf, code: Code) -> Result<Code> {
    if json {
        let summary = json!({"command": "explore", "shard_result": path, "exit_code": code as u8});
        println!("{}", serde_json::to_string(&summary)?);
    }
    Ok(code)
}

/// The command line that runs `campaign` on one machine, for messages.
pub(crate) fn describe(campaign: &Campaign) -> String {
    let budget = match (campaign.runs, campaign.time_seconds) {
        (Some(n), _) => format!("--runs {n}"),
        (None, Some(t)) => format!("--time {t}s"),
        (None, None) => String::new(),
    };
    format!(
        "weft explore {} --seed {} --strategy {} {budget}",
        describe_spec(&campaign.spec),
        campaign.seed,
        campaign.strategy
    )
}

/// Runs a coverage shard over the exchange folder; None if Ctrl-C ended a wait for the others.
fn coverage_shard(
    runner: &dyn Runner,
    opts: &CampaignOptions,
    shard: Shard,
    campaign: &Campaign,
    place: &Place<'_>,
    control: &CliControl,
) -> Result<Option<ShardRun>> {
    let sync =
        sync::FolderSync::new(place.out_dir, campaign_hash(campaign), shard, place.sync_timeout)?;
    Out { json: place.json }.line(format!(
        "  coverage: generations of {} runs, corpus exchanged through {}",
        weft_explore::GENERATION,
        sync.dir().display()
    ));
    match weft_explore::run_coverage_shard(runner, opts, shard, control, &sync) {
        Ok(run) => {
            let (waited, n) = sync.waited();
            Out { json: place.json }.line(format!(
                "  waited {:.3}s in all for the other shards at {n} generation ends",
                waited.as_secs_f64()
            ));
            Ok(Some(run))
        }
        Err(e) => {
            sync.abort(&format!("{e}"));
            if progress::was_interrupted() {
                Out { json: place.json }.line(format!("  shard {shard}: {e}"));
                return Ok(None);
            }
            Err(e.into())
        }
    }
}

/// Names the campaign (and the weft build) in the exchange files' names, so another
/// campaign's files are never read.
fn campaign_hash(campaign: &Campaign) -> u64 {
    let mut h = StableHasher::new();
    // The version too: a stale file from another build must not stop this one's shards.
    h.write(weft_core::VERSION.as_bytes());
    h.write(serde_json::to_string(campaign).unwrap_or_default().as_bytes());
    h.finish()
}

/// How often a shard looks for other shards' failures.
const POLL: Duration = Duration::from_millis(500);

/// A shard's control: the CLI's (time budget, Ctrl-C, progress), plus failures exchanged with
/// the other shards of the campaign through files in the results folder.
struct Exchange<'a> {
    inner: &'a CliControl,
    dir: PathBuf,
    /// `found-HASH-`: HASH names the campaign, so another campaign's files are never read.
    prefix: String,
    own: PathBuf,
    known: AtomicU64,
    mine: Mutex<u64>,
    last_poll: Mutex<Option<Instant>>,
}

impl<'a> Exchange<'a> {
    fn new(inner: &'a CliControl, dir: &Path, campaign: &Campaign, shard: Shard) -> Exchange<'a> {
        let prefix = format!("found-{:016x}-", campaign_hash(campaign));
        let own = dir.join(format!("{prefix}{}-of-{}.idx", shard.index, shard.count));
        Exchange {
            inner,
            dir: dir.into(),
            prefix,
            own,
            known: AtomicU64::new(u64::MAX),
            mine: Mutex::new(u64::MAX),
            last_poll: Mutex::new(None),
        }
    }

    /// The lowest index in the campaign's `found-` files.
    fn scan(&self) -> u64 {
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return u64::MAX };
        let lowest = entries.flatten().filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if !name.starts_with(&self.prefix) || !name.ends_with(".idx") {
                return None;
            }
            std::fs::read_to_string(e.path()).ok()?.trim().parse::<u64>().ok()
        });
        lowest.min().unwrap_or(u64::MAX)
    }
}

impl Control for Exchange<'_> {
    fn should_stop(&self) -> bool {
        self.inner.should_stop()
    }

    fn progress(&self, p: &Progress) {
        self.inner.progress(p)
    }

    #[allow(clippy::disallowed_methods)] // the CLI owns the wall clock: how often to look
    fn known_failure(&self) -> u64 {
        if let Ok(mut last) = self.last_poll.try_lock() {
            if last.is_none_or(|t| t.elapsed() >= POLL) {
                *last = Some(Instant::now());
                self.known.fetch_min(self.scan(), Ordering::Relaxed);
            }
        }
        self.known.load(Ordering::Relaxed)
    }

    fn found(&self, run_index: u64) {
        let mut mine = self.mine.lock().expect("exchange poisoned");
        if run_index >= *mine {
            return;
        }
        *mine = run_index;
        self.known.fetch_min(run_index, Ordering::Relaxed);
        // Whole or not at all; if it cannot be written, the other shards just work longer.
        let tmp = weft_report::temp_path(&self.own);
        if std::fs::write(&tmp, format!("{run_index}\n")).is_ok() {
            let _ = std::fs::rename(&tmp, &self.own);
        }
    }
}
