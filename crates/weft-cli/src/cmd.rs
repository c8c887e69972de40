//! Subcommands: each parses its flags into a configuration and makes one library call.

use crate::exit::Code;
use crate::registry;
use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use weft_core::{Outcome, RunSpec, SimDuration};
use weft_explore::{CampaignOptions, Control, Progress, Strategy};
use weft_report::{Provenance, Repro};

#[derive(Parser)]
#[command(
    name = "weft",
    version,
    about = "Deterministic simulation testing for distributed systems",
    after_help = "Exit codes: 0 ok/no violation, 1 violation found or reproduced, 2 usage or input \
                  error, 3 divergence (replay differs / nondeterminism), 4 unsupported, \
                  70 internal error, 130 interrupted."
)]
pub struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// List the built-in targets, their variants, options and properties.
    Targets,
    /// Run a campaign of many seeded runs; on a violation write a repro and exit 1.
    Explore(ExploreArgs),
    /// Re-run a repro file; exit 1 if the recorded violation recurs with the same trace hash.
    Replay(ReplayArgs),
    /// Run each seed twice and compare trace hashes; name the first differing event.
    CheckDeterminism(DeterminismArgs),
}

/// Which target, variant, options and property a command runs.
#[derive(Args, Clone)]
struct TargetArgs {
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
}

#[derive(Args)]
struct ReplayArgs {
    /// A repro file written by `weft explore`.
    path: PathBuf,
    /// Print the run's timeline, one event per line.
    #[arg(long)]
    timeline: bool,
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

fn parse_wall(text: &str) -> Result<std::time::Duration, String> {
    SimDuration::parse(text)
        .map(|d| std::time::Duration::from_nanos(d.as_nanos()))
        .ok_or_else(|| format!("`{text}` is not a duration like 30s, 500ms or 5m"))
}

pub fn dispatch(cli: Cli) -> Result<Code> {
    match cli.cmd {
        Cmd::Targets => targets(),
        Cmd::Explore(a) => explore(a),
        Cmd::Replay(a) => replay(a),
        Cmd::CheckDeterminism(a) => check_determinism(a),
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
        for o in &info.options {
            println!("  -o {}={:<10} {}", o.name, o.default, o.summary);
        }
        for p in &info.properties {
            println!("  property {:<28} {:<10} {}", p.name, p.modality.to_string(), p.summary);
        }
        println!();
    }
    Ok(Code::Ok)
}

impl TargetArgs {
    fn spec(&self) -> Result<(Box<dyn weft_core::Target>, RunSpec)> {
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
        Ok((target, spec))
    }
}

fn describe_spec(spec: &RunSpec) -> String {
    let mut s = format!("{} --variant {}", spec.target, spec.variant);
    for (k, v) in &spec.options {
        s.push_str(&format!(" -o {k}={v}"));
    }
    if let Some(p) = &spec.property {
        s.push_str(&format!(" --property {p}"));
    }
    s
}

/// Wall-clock budget, Ctrl-C and progress lines: the CLI side of a campaign.
struct CliControl {
    #[allow(clippy::disallowed_methods)] // the CLI owns the wall clock
    start: std::time::Instant,
    deadline: Option<std::time::Duration>,
    interrupted: Arc<AtomicBool>,
    last_report: std::sync::Mutex<std::time::Duration>,
}

impl CliControl {
    #[allow(clippy::disallowed_methods)] // the CLI owns the wall clock
    fn new(deadline: Option<std::time::Duration>) -> CliControl {
        let interrupted = Arc::new(AtomicBool::new(false));
        let flag = interrupted.clone();
        // If a handler cannot be installed (e.g. one already exists), Ctrl-C simply kills the
        // process; repros already written are on disk either way.
        let _ = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst));
        CliControl {
            start: std::time::Instant::now(),
            deadline,
            interrupted,
            last_report: std::sync::Mutex::new(std::time::Duration::ZERO),
        }
    }
}

impl Control for CliControl {
    fn should_stop(&self) -> bool {
        self.interrupted.load(Ordering::Relaxed)
            || self.deadline.is_some_and(|d| self.start.elapsed() >= d)
    }

    fn progress(&self, p: &Progress) {
        let now = self.start.elapsed();
        let mut last = self.last_report.lock().expect("progress lock");
        if now.as_secs_f64() - last.as_secs_f64() < 2.0 {
            return;
        }
        *last = now;
        let secs = now.as_secs_f64().max(1e-9);
        eprintln!(
            "  {:>8} runs  {:>9.0} runs/s  {:>11.0} events/s  {} violations  ({:.0}s)",
            p.runs,
            p.runs as f64 / secs,
            p.events as f64 / secs,
            p.failures,
            secs
        );
    }
}

fn explore(a: ExploreArgs) -> Result<Code> {
    let (target, spec) = a.target.spec()?;
    let runner = target.prepare(&spec)?;
    let scenario = runner.default_scenario();
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
    let opts = CampaignOptions { seed: a.seed, runs, jobs, strategy: Strategy::Random, scenario };
    // The seed and the derived configuration come first, so a killed run still leaves them.
    println!("weft explore {}", describe_spec(&spec));
    println!(
        "  seed {}  budget {}  jobs {}  strategy {}",
        opts.seed,
        match (runs, a.time) {
            (Some(n), _) => format!("{n} runs"),
            (None, Some(t)) => format!("{}s wall clock", t.as_secs_f64()),
            (None, None) => unreachable!(),
        },
        jobs,
        opts.strategy.name()
    );
    println!("  scenario {}", serde_json::to_string(&opts.scenario)?);
    let control = CliControl::new(a.time);
    let result = weft_explore::run_campaign(runner.as_ref(), &opts, &control);
    #[allow(clippy::disallowed_methods)]
    let secs = control.start.elapsed().as_secs_f64().max(1e-9);
    println!(
        "  {} runs, {} events in {:.2}s ({:.0} events/s)",
        result.runs,
        result.events,
        secs,
        result.events as f64 / secs
    );
    let outcomes: Vec<String> = result.outcomes.iter().map(|(k, n)| format!("{k}: {n}")).collect();
    println!("  outcomes: {}", outcomes.join(", "));
    let info = target.info();
    for p in info.properties.iter().filter(|p| p.modality == weft_core::Modality::Sometimes) {
        if !result.sometimes_hit.iter().any(|h| h == p.name) {
            println!("  vacuous: sometimes-property {} never held in this campaign", p.name);
        }
    }
    let Some(found) = result.found else {
        if result.interrupted {
            println!("interrupted: no violation found in {} runs", result.runs);
            return Ok(Code::Interrupted);
        }
        println!("no violation found in {} runs", result.runs);
        return Ok(Code::Ok);
    };
    let repro = Repro {
        format: weft_report::FORMAT.into(),
        format_version: weft_report::FORMAT_VERSION,
        weft_version: weft_core::VERSION.into(),
        spec: spec.clone(),
        scenario: found.scenario.clone(),
        seed: found.seed,
        provenance: Provenance {
            campaign_seed: a.seed,
            run_index: found.run_index,
            strategy: opts.strategy.name().into(),
            shrunk_from: None,
        },
        decisions: found.decisions.clone(),
        outcome: found.report.outcome.clone(),
        trace_hash: found.report.trace_hash,
        events: found.report.events,
        faults: found.report.faults,
    };
    let path = a.out.join(format!(
        "{}-{}-seed{}-run{}.json",
        spec.target, spec.variant, a.seed, found.run_index
    ));
    repro.write(&path)?;
    println!("VIOLATION {}", found.report.outcome);
    println!(
        "  run {} (seed {:#x}): {} events, {} faults, {} decisions, trace hash {:016x}",
        found.run_index,
        found.seed,
        found.report.events,
        found.report.faults,
        found.decisions.len(),
        found.report.trace_hash
    );
    println!("reproduce: weft replay {}", path.display());
    Ok(Code::Violation)
}

fn replay(a: ReplayArgs) -> Result<Code> {
    let repro = Repro::read(&a.path)?;
    let target = registry::find(&repro.spec.target)?;
    let runner = target.prepare(&repro.spec)?;
    let r = weft_explore::replay(runner.as_ref(), &repro.scenario, &repro.decisions, a.timeline);
    if a.timeline {
        print!("{}", weft_report::timeline::render(&r.events));
    }
    println!("weft replay {} ({})", a.path.display(), describe_spec(&repro.spec));
    println!("  outcome: {}", r.report.outcome);
    println!("  trace hash {:016x} (recorded {:016x})", r.report.trace_hash, repro.trace_hash);
    let same = r.report.trace_hash == repro.trace_hash && r.report.outcome == repro.outcome;
    if !same {
        println!(
            "DIVERGED: the replay did not reproduce the recorded run (recorded: {})",
            repro.outcome
        );
        return Ok(Code::Diverged);
    }
    Ok(match &r.report.outcome {
        o if o.is_failure() => {
            println!("reproduced: same outcome, same trace hash");
            Code::Violation
        }
        Outcome::Unsupported { .. } => Code::Unsupported,
        _ => Code::Ok,
    })
}

fn check_determinism(a: DeterminismArgs) -> Result<Code> {
    let (target, spec) = a.target.spec()?;
    let runner = target.prepare(&spec)?;
    let scenario = runner.default_scenario();
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
