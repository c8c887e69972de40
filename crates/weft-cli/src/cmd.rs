//! Subcommands: each parses its flags into a configuration and makes one library call.

use crate::exit::Code;
use crate::registry;
use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use weft_core::{Outcome, RunSpec, Runner, SimDuration};
use weft_explore::{CampaignOptions, ShrinkOptions, Strategy};
use weft_report::{Repro, Sizes};

// New CLI modules live beside this file; declared here so `main.rs` stays as the lead wrote it.
#[path = "bench.rs"]
mod bench;
#[path = "deploy.rs"]
mod deploy;
#[path = "merge.rs"]
mod merge;
#[path = "output.rs"]
mod output;
#[path = "progress.rs"]
mod progress;
#[path = "shard.rs"]
mod shard;

use progress::{CliControl, Show};

#[derive(Parser)]
#[command(
    name = "weft",
    version,
    about = "Deterministic simulation testing for distributed systems",
    after_help = "Exit codes: 0 ok/no violation, 1 violation found or reproduced, 2 usage or input \
                  error, 3 divergence (replay differs / nondeterminism), 4 unsupported, \
                  70 internal error, 130 interrupted (Ctrl-C, SIGTERM, SIGHUP)."
)]
pub struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// List the targets, their variants, options and properties.
    Targets,
    /// Run a campaign of many seeded runs; on a violation write a repro, shrink it, exit 1.
    Explore(ExploreArgs),
    /// Re-run a repro file; exit 1 if the recorded violation recurs with the same trace hash.
    Replay(ReplayArgs),
    /// Shrink an existing repro to a smaller one that fails the same way; exit 1.
    Shrink(ShrinkArgs),
    /// Show a repro: its text timeline, or an HTML space-time diagram, or a ShiViz log.
    Show(ShowArgs),
    /// Compare strategies: time and runs to the first violation over many campaign seeds.
    Bench(bench::BenchArgs),
    /// Run each seed twice and compare trace hashes; name the first differing event.
    CheckDeterminism(DeterminismArgs),
    /// For each crash in a repro: what the disk lost, the rule that allowed it, and under which
    /// persistence contracts that crash state is reachable.
    ExplainCrash(ExplainArgs),
    /// Run N copies of an unmodified Linux program under the shim, deterministically.
    Run(crate::run::RunArgs),
    /// Compare variants of a target: N campaigns of equal budget each, paired by seed.
    Eval(crate::eval::EvalArgs),
    /// Combine the result files of a sharded campaign (`explore --shard K/N`) into the
    /// campaign's result: the lowest failing run index wins, then it is shrunk once.
    Merge(merge::MergeArgs),
    /// Write a Slurm job-array script or a Kubernetes Indexed Job that runs a sharded campaign.
    Deploy(deploy::DeployArgs),
}

#[derive(Args)]
struct ExplainArgs {
    /// A repro file written by `weft explore`.
    path: PathBuf,
    #[command(flatten)]
    exec: crate::run::process::ExecArgs,
}

/// Which target, variant, options and property a command runs.
#[derive(Args, Clone)]
pub(crate) struct TargetArgs {
    /// Target name (see `weft targets`).
    target: String,
    /// Target variant (default: the target's first variant).
    #[arg(long)]
    variant: Option<String>,
    /// Target option KEY=VALUE (repeatable; see `weft targets`).
    #[arg(long = "option", short = 'o', value_name = "KEY=VALUE")]
    options: Vec<String>,
    /// Shorthand for `--option mode=MODE` (e.g. chord's `atomic` or `messages`).
    #[arg(long)]
    mode: Option<String>,
    /// Count only violations of this property.
    #[arg(long)]
    property: Option<String>,
    /// Persistence contract of the simulated disks: durable, fsync or posix (default: the
    /// target's).
    #[arg(long, value_parser = parse_contract)]
    contract: Option<weft_core::Contract>,
    #[command(flatten)]
    knobs: crate::run::knobs::ScenarioArgs,
}

fn parse_contract(text: &str) -> Result<weft_core::Contract, String> {
    weft_core::Contract::parse(text)
        .ok_or_else(|| format!("`{text}` is not a contract (durable, fsync, posix)"))
}

#[derive(Args)]
struct ExploreArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// Campaign seed; every run's seed derives from it and the run's index.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Stop after this many runs (default 100000 unless --time is given).
    #[arg(long, conflicts_with = "time")]
    runs: Option<u64>,
    /// Stop after this much wall-clock time (e.g. `30s`, `5m`). Which runs happen then depends
    /// on machine speed; use --runs for a reproducible campaign.
    #[arg(long, value_parser = parse_wall)]
    time: Option<std::time::Duration>,
    /// Directory for repro files.
    #[arg(long, default_value = "weft-out")]
    out: PathBuf,
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long)]
    jobs: Option<usize>,
    /// How runs are chosen: random, swarm (random fault kinds and rates per run), coverage
    /// (mutate runs that reached new features), exhaustive (depth-first over decisions with
    /// state hashing; needs a target that calls checkpoint). See docs/explorer.md.
    #[arg(long, default_value = DEFAULT_STRATEGY, value_parser = parse_strategy_name)]
    strategy: String,
    /// Exhaustive search: scheduling steps (checkpoints) branched on per run.
    #[arg(long, default_value_t = 12)]
    max_depth: u32,
    #[command(flatten)]
    shrink: ShrinkBudget,
    /// Do not shrink a violation (the unshrunk repro is always written first).
    #[arg(long)]
    no_shrink: bool,
    /// Print a machine-readable summary on stdout at the end (human text goes to stderr).
    #[arg(long)]
    json: bool,
    /// No progress display.
    #[arg(long)]
    quiet: bool,
    /// Run only part K of N of the campaign (random and swarm): run indices K, K+N, …; writes
    /// OUT/shard-K-of-N.json for `weft merge` (docs/scale-out.md).
    #[arg(long, value_name = "K/N", value_parser = weft_explore::Shard::parse)]
    shard: Option<weft_explore::Shard>,
}

/// The strategy `explore` uses unless told otherwise; chosen by `weft bench` (docs/explorer.md).
pub(crate) const DEFAULT_STRATEGY: &str = "coverage";

/// Wall-clock backstop for a run-counted shrink budget.
const SHRINK_BACKSTOP: std::time::Duration = std::time::Duration::from_secs(300);

#[derive(Args, Clone)]
pub(crate) struct ShrinkBudget {
    /// Shrinking budget: a number of runs (`5000`) or wall-clock time (`30s`). A run budget
    /// gives the same result everywhere unless it takes longer than 5 minutes (then the best
    /// found so far is kept); a time budget keeps the best found so far.
    #[arg(long, default_value = "20000", value_parser = parse_budget)]
    pub(crate) shrink_budget: Budget,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Budget {
    Runs(u64),
    Time(std::time::Duration),
}

fn parse_budget(text: &str) -> Result<Budget, String> {
    if let Ok(n) = text.parse::<u64>() {
        return Ok(Budget::Runs(n.max(1)));
    }
    parse_wall(text)
        .map(Budget::Time)
        .map_err(|_| format!("`{text}` is neither a number of runs nor a duration like 30s or 5m"))
}

fn parse_strategy_name(text: &str) -> Result<String, String> {
    if Strategy::NAMES.contains(&text) {
        Ok(text.to_string())
    } else {
        Err(format!("unknown strategy `{text}` (known: {})", Strategy::NAMES.join(", ")))
    }
}

#[derive(Args)]
struct ReplayArgs {
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

#[derive(Args)]
struct ShrinkArgs {
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

#[derive(Args)]
struct ShowArgs {
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
}

#[derive(Args)]
struct DeterminismArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// How many seeds to check.
    #[arg(long, default_value_t = 100)]
    seeds: u64,
    /// Base seed; checked seeds derive from it.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

pub(crate) fn parse_wall(text: &str) -> Result<std::time::Duration, String> {
    SimDuration::parse(text)
        .map(|d| std::time::Duration::from_nanos(d.as_nanos()))
        .ok_or_else(|| format!("`{text}` is not a duration like 30s, 500ms or 5m"))
}

pub fn dispatch(cli: Cli) -> Result<Code> {
    match cli.cmd {
        Cmd::Targets => targets(),
        Cmd::Explore(a) => explore(a),
        Cmd::Replay(a) => replay(a),
        Cmd::Shrink(a) => shrink(a),
        Cmd::Show(a) => show(a),
        Cmd::Bench(a) => bench::bench(a),
        Cmd::CheckDeterminism(a) => check_determinism(a),
        Cmd::ExplainCrash(a) => explain_crash(a),
        Cmd::Run(a) => crate::run::run(a),
        Cmd::Eval(a) => crate::eval::eval(a),
        Cmd::Merge(a) => merge::merge(a),
        Cmd::Deploy(a) => deploy::deploy(a),
    }
}

fn targets() -> Result<Code> {
    for t in registry::all() {
        let info = t.info();
        println!("{}  {}", info.name, info.summary);
        for (i, v) in info.variants.iter().enumerate() {
            let default = if i == 0 { " (default)" } else { "" };
            println!("  --variant {:<12} {}{default}", v.name, v.summary);
        }
        for o in &t.options() {
            let allowed = match o.allowed {
                weft_core::Allowed::Any => String::new(),
                a => format!(" ({})", a.describe()),
            };
            println!("  -o {:<22} {}{allowed}", format!("{}={}", o.name, o.default), o.summary);
        }
        for p in &info.properties {
            println!("  property {:<28} {:<10} {}", p.name, p.modality.to_string(), p.summary);
        }
        println!();
    }
    Ok(Code::Ok)
}

impl TargetArgs {
    pub(crate) fn new(target: &str, variant: Option<&str>, options: &[String]) -> TargetArgs {
        TargetArgs {
            target: target.into(),
            variant: variant.map(str::to_string),
            options: options.to_vec(),
            mode: None,
            property: None,
            contract: None,
            knobs: Default::default(),
        }
    }

    /// Whether this command overrides the target's default scenario.
    pub(crate) fn overrides_scenario(&self) -> bool {
        self.contract.is_some() || !self.knobs.is_empty()
    }

    /// The runner's default scenario with this command's overrides (`--contract`, then the
    /// scenario flags of [`crate::run::knobs::ScenarioArgs`]).
    pub(crate) fn scenario(&self, runner: &dyn weft_core::Runner) -> Result<weft_core::Scenario> {
        let mut scenario = runner.default_scenario();
        if let Some(c) = self.contract {
            scenario.disk.contract = c;
        }
        self.knobs.apply(scenario)
    }

    pub(crate) fn with_property(mut self, property: Option<String>) -> TargetArgs {
        self.property = property;
        self
    }

    pub(crate) fn spec(&self) -> Result<(std::sync::Arc<dyn weft_core::Target>, RunSpec)> {
        let target = registry::find(&self.target)?;
        let info = target.info();
        let variant = match &self.variant {
            Some(v) => v.clone(),
            None => info.variants[0].name.to_string(),
        };
        let mut options = BTreeMap::new();
        for kv in &self.options {
            let (k, v) =
                kv.split_once('=').with_context(|| format!("option `{kv}` is not KEY=VALUE"))?;
            options.insert(k.trim().to_string(), v.trim().to_string());
        }
        if let Some(mode) = &self.mode {
            options.insert("mode".into(), mode.clone());
        }
        let spec = RunSpec {
            target: info.name.to_string(),
            variant,
            options,
            property: self.property.clone(),
        };
        weft_core::check_spec(target.as_ref(), &spec)?;
        Ok((target, spec))
    }
}

pub(crate) fn describe_spec(spec: &RunSpec) -> String {
    let mut s = format!("{} --variant {}", spec.target, spec.variant);
    for (k, v) in &spec.options {
        s.push_str(&format!(" -o {k}={v}"));
    }
    if let Some(p) = &spec.property {
        s.push_str(&format!(" --property {p}"));
    }
    s
}

/// Human text goes to stdout, or to stderr when stdout carries `--json`.
struct Out {
    json: bool,
}

impl Out {
    fn line(&self, text: impl AsRef<str>) {
        if self.json {
            eprintln!("{}", text.as_ref());
        } else {
            println!("{}", text.as_ref());
        }
    }
}

fn sizes(decisions: usize, report: &weft_core::RunReport) -> Sizes {
    Sizes { decisions: decisions as u64, events: report.events, faults: report.faults }
}

fn show_sizes(s: &Sizes) -> String {
    format!("{} decisions, {} events, {} faults", s.decisions, s.events, s.faults)
}

/// Why a shrink stopped before its fixpoint, for the `shrunk in N runs…` line.
fn shrink_note(shrunk: &weft_explore::Shrunk) -> &'static str {
    if shrunk.complete {
        ""
    } else if progress::was_interrupted() {
        " (interrupted: best so far)"
    } else {
        " (budget reached: best so far)"
    }
}

/// Reads a repro file (size-bounded; its scenario checked by the reader) and checks its spec
/// against the target's declared variants, options and properties.
fn open_repro(
    path: &Path,
    exec: &crate::run::process::ExecArgs,
) -> Result<(Repro, std::sync::Arc<dyn weft_core::Target>)> {
    let repro = crate::run::process::open_repro(path, exec)?;
    let shown = path.display();
    let target = registry::find(&repro.spec.target).with_context(|| format!("{shown}"))?;
    weft_core::check_spec(target.as_ref(), &repro.spec).with_context(|| format!("{shown}"))?;
    Ok((repro, target))
}

/// A shrunk repro goes beside the original: `x.json` → `x-shrunk.json`.
fn shrunk_path(path: &Path) -> PathBuf {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let stem = stem.strip_suffix("-shrunk").unwrap_or(&stem).to_string();
    path.with_file_name(format!("{stem}-shrunk.json"))
}

/// Shrinks `repro` within `budget`, returning the shrunk repro (its provenance says what it was
/// shrunk from) and whether a fixpoint was reached.
fn shrink_repro(
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

fn explore(a: ExploreArgs) -> Result<Code> {
    if a.runs == Some(0) || a.time == Some(std::time::Duration::ZERO) {
        bail!("an empty budget checks nothing: give --runs 1 or more, or a --time above 0s");
    }
    let (target, spec) = a.target.spec()?;
    let spec = crate::run::process::resolve(spec, &a.out)?;
    let runner = target.prepare(&spec)?;
    // Before the first run: a violation found must have somewhere to go.
    output::prepare_dir(&a.out)?;
    let scenario = a.target.scenario(runner.as_ref())?;
    let runs = match (a.runs, a.time) {
        (Some(n), _) => Some(n),
        (None, Some(_)) => None,
        (None, None) => Some(100_000),
    };
    let jobs = a
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    if jobs == 0 {
        bail!("--jobs must be at least 1");
    }
    let strategy = Strategy::parse(&a.strategy, a.max_depth).expect("validated by clap");
    if a.shard.is_some() {
        weft_explore::check_shardable(strategy)?;
    }
    let opts = CampaignOptions { seed: a.seed, runs, jobs, strategy, scenario };
    let out = Out { json: a.json };
    // The seed and the derived configuration come first, so a killed run still leaves them.
    out.line(format!("weft explore {}", describe_spec(&spec)));
    let budget = match (runs, a.time) {
        (Some(n), _) => format!("{n} runs"),
        (None, Some(t)) => format!("{}s wall clock", t.as_secs_f64()),
        (None, None) => unreachable!(),
    };
    let depth = match strategy {
        Strategy::Exhaustive { max_depth } => format!("  max depth {max_depth}"),
        _ => String::new(),
    };
    out.line(format!(
        "  seed {}  budget {budget}  jobs {jobs}  strategy {}{depth}",
        opts.seed,
        strategy.name()
    ));
    let base = if strategy == Strategy::Swarm { "base scenario" } else { "scenario" };
    out.line(format!("  {base} {}", serde_json::to_string(&opts.scenario)?));
    // Progress is drawn on stderr, so it stays with --json (stdout carries only the summary).
    let show = Show::auto(a.quiet);
    if let Some(k) = a.shard {
        let campaign = shard::Campaign::new(&spec, &opts, a.time);
        return shard::explore_shard(runner.as_ref(), &opts, k, campaign, &a.out, a.json, show);
    }
    let control = CliControl::new(a.time, runs, show, "runs");
    let result = weft_explore::run_campaign(runner.as_ref(), &opts, &control);
    control.finish();
    let secs = control.elapsed().as_secs_f64().max(1e-9);
    let report = Report {
        target: target.as_ref(),
        runner: runner.as_ref(),
        spec: &spec,
        opts: &opts,
        out_dir: &a.out,
        json: a.json,
        no_shrink: a.no_shrink,
        shrink_budget: a.shrink.shrink_budget,
        show,
        secs,
        merged: None,
    };
    report_campaign(&report, result)
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

fn shrink(a: ShrinkArgs) -> Result<Code> {
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

fn show(a: ShowArgs) -> Result<Code> {
    let (repro, target) = open_repro(&a.path, &a.exec)?;
    let runner = target.prepare(&repro.spec)?;
    let r = weft_explore::replay(runner.as_ref(), &repro.scenario, &repro.decisions, true);
    let diverged = r.report.trace_hash != repro.trace_hash || r.report.outcome != repro.outcome;
    if a.html.is_none() && a.shiviz.is_none() {
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

fn replay(a: ReplayArgs) -> Result<Code> {
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

fn check_determinism(a: DeterminismArgs) -> Result<Code> {
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

fn explain_crash(a: ExplainArgs) -> Result<Code> {
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
