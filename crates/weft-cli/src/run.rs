//! `weft run`: unmodified programs under the shim as the nodes of one simulated world — N
//! copies of one program, or the node groups of a cluster file — printing every output line
//! with its node and virtual time, deterministically per seed.

use crate::exit::Code;
use anyhow::{Context, Result};
use clap::Args;
use std::collections::BTreeMap;
use std::path::PathBuf;
use weft_core::{Outcome, RunSpec, Scenario};
use weft_report::{Provenance, Repro};

#[path = "knobs.rs"]
pub mod knobs;
#[path = "process.rs"]
pub mod process;

#[derive(Args)]
pub struct RunArgs {
    /// How many processes (nodes) to start (without --cluster).
    #[arg(long, default_value_t = 3, conflicts_with = "cluster")]
    nodes: u32,
    /// A cluster file (TOML) naming node groups, each with its program, arguments,
    /// environment, start time, count and expected exit statuses (see the README).
    #[arg(long, value_name = "FILE")]
    cluster: Option<PathBuf>,
    /// Seed for every decision of the run (scheduling, latency, faults).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    knobs: knobs::ScenarioArgs,
    /// Write the run as a repro file (replay with `weft replay --allow-exec FILE`).
    #[arg(long)]
    record: Option<PathBuf>,
    /// Output folder: each node runs in a fresh, empty directory under OUT/work.
    #[arg(long, default_value = "weft-out")]
    out: PathBuf,
    /// An output line containing this text is a violation (`no_forbidden_output`).
    #[arg(long)]
    forbid: Option<String>,
    /// Check the client history (output lines `WEFT-HISTORY {json}`) against this model at
    /// the end of the run: `set`, `register` or `kv` (property `history`).
    #[arg(long, value_name = "MODEL")]
    history: Option<String>,
    /// Exit statuses that count as success (comma-separated; without --cluster).
    #[arg(long, value_delimiter = ',', conflicts_with = "cluster")]
    exit_codes: Vec<i32>,
    /// Memory limit per process (RLIMIT_DATA), e.g. `512MiB`; `0` = none (default 2GiB).
    #[arg(long, value_name = "SIZE")]
    memory_limit: Option<String>,
    /// CPU-time limit per process (RLIMIT_CPU), e.g. `60s`; `0` = none (default 300s).
    #[arg(long, value_name = "DURATION")]
    cpu_limit: Option<String>,
    /// How a run ends when every thread waits with nothing to come: `deadlock` (the default)
    /// or `pass` (a server that only waits for clients); a cluster file's `on_idle` too.
    #[arg(long, value_name = "pass|deadlock")]
    on_idle: Option<String>,
    /// Virtual time at which the run ends as a pass (default 60s); a cluster file's
    /// `time_limit` too.
    #[arg(long, value_name = "DURATION")]
    time_limit: Option<String>,
    /// The program, then its arguments (without --cluster); `{id}`, `{ip}`, `{port}`,
    /// `{addr}`, `{peers}` (every node's address), `{others}` (every other node's) and
    /// `{nodes}` are replaced per node.
    #[arg(last = true, num_args = 1.., required_unless_present = "cluster", conflicts_with = "cluster")]
    command: Vec<String>,
}

impl RunArgs {
    /// The `process` target spec these flags describe.
    fn spec(&self) -> Result<RunSpec> {
        let mut o = BTreeMap::new();
        match &self.cluster {
            Some(file) => {
                o.insert("cluster".to_string(), file.display().to_string());
            }
            None => {
                if self.nodes == 0 {
                    anyhow::bail!("--nodes must be at least 1");
                }
                o.insert("program".into(), self.command[0].clone());
                o.insert("args".into(), weft_host::join_args(&self.command[1..]));
                o.insert("nodes".into(), self.nodes.to_string());
                if !self.exit_codes.is_empty() {
                    let codes: Vec<String> = self.exit_codes.iter().map(i32::to_string).collect();
                    o.insert("exit_codes".into(), codes.join(","));
                }
            }
        }
        let mut put = |k: &str, v: &Option<String>| {
            if let Some(v) = v {
                o.insert(k.to_string(), v.clone());
            }
        };
        put("forbid", &self.forbid);
        put("history", &self.history);
        put("memory_limit", &self.memory_limit);
        put("cpu_limit", &self.cpu_limit);
        put("on_idle", &self.on_idle);
        put("time_limit", &self.time_limit);
        let work = std::path::absolute(&self.out)?.join("work");
        o.insert("work_dir".into(), work.display().to_string());
        Ok(RunSpec {
            target: "process".into(),
            variant: "default".into(),
            options: o,
            property: None,
        })
    }

    fn header(&self) -> String {
        let what = match &self.cluster {
            Some(file) => format!("--cluster {}", file.display()),
            None => format!("--nodes {} -- {}", self.nodes, self.command.join(" ")),
        };
        format!("weft run --seed {}{} {what}", self.seed, self.knobs.describe())
    }
}

pub fn run(a: RunArgs) -> Result<Code> {
    let spec = a.spec()?;
    let (cfg, cluster) = weft_host::ProcessTarget.load(&spec)?;
    let scenario = cluster.apply_scenario(Scenario::calm()).map_err(anyhow::Error::msg)?;
    let scenario = a.knobs.apply(scenario)?;
    let recorded = cfg.to_spec_with(&cluster.scenario).map_err(anyhow::Error::msg)?;
    // Before the run: the recording must have somewhere to go.
    if let Some(dir) =
        a.record.as_ref().and_then(|p| p.parent()).filter(|d| !d.as_os_str().is_empty())
    {
        crate::cmd::output::prepare_dir(dir)?;
    }
    println!("{}", a.header());
    let r = weft_host::run_program(&cfg, &scenario, a.seed, None)
        .with_context(|| format!("cannot run {}", a.header()))?;
    for note in &r.output.notes {
        println!("note: {note}");
    }
    print!("{}", r.output.render());
    let report = &r.output.report;
    println!("outcome: {}", report.outcome);
    println!(
        "  {} events, {} faults, trace hash {:016x}",
        report.events, report.faults, report.trace_hash
    );
    if let Some(path) = &a.record {
        let repro = Repro {
            format: weft_report::FORMAT.into(),
            format_version: weft_report::FORMAT_VERSION,
            weft_version: weft_core::VERSION.into(),
            spec: recorded,
            scenario,
            seed: a.seed,
            provenance: Provenance {
                campaign_seed: a.seed,
                run_index: 0,
                strategy: "run".into(),
                shrunk_from: None,
            },
            decisions: r.decisions,
            outcome: report.outcome.clone(),
            trace_hash: report.trace_hash,
            events: report.events,
            faults: report.faults,
        };
        // Never over another file: a different one already there makes it `FILE-2.json`.
        let written = crate::cmd::output::write_new(&repro, path)?;
        if written != *path {
            println!(
                "{} holds another recording: this one is {}",
                path.display(),
                written.display()
            );
        }
        println!("recorded: weft replay --allow-exec {}", written.display());
    }
    Ok(match &report.outcome {
        o if o.is_failure() => Code::Violation,
        Outcome::Unsupported { .. } => Code::Unsupported,
        _ => Code::Ok,
    })
}
