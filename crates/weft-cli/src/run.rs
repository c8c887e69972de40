//! `weft run`: N copies of an unmodified program under the shim, as the nodes of one simulated
//! world; prints every output line with its node and virtual time, deterministically per seed.

use crate::exit::Code;
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;
use weft_core::Outcome;
use weft_report::{Provenance, Repro};

#[derive(Args)]
pub struct RunArgs {
    /// How many processes (nodes) to start.
    #[arg(long, default_value_t = 3)]
    nodes: u32,
    /// Seed for every decision of the run (scheduling, latency, faults).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Faults: `none`, `default`, or per-message rates like `drop=1/10,dup=1/50,delay=1/20`.
    #[arg(long, default_value = "none")]
    faults: String,
    /// Write the run as a repro file (replay with `weft replay FILE`).
    #[arg(long)]
    record: Option<PathBuf>,
    /// An output line containing this text is a violation (`no_forbidden_output`).
    #[arg(long)]
    forbid: Option<String>,
    /// Exit statuses that count as success (comma-separated).
    #[arg(long, default_value = "0", value_delimiter = ',')]
    exit_codes: Vec<i32>,
    /// The program, then its arguments; `{id}`, `{ip}`, `{port}`, `{addr}`, `{peers}` (every
    /// node's address), `{others}` (every other node's) and `{nodes}` are replaced per node.
    #[arg(required = true, last = true, num_args = 1..)]
    command: Vec<String>,
}

pub fn run(a: RunArgs) -> Result<Code> {
    if a.nodes == 0 {
        anyhow::bail!("--nodes must be at least 1");
    }
    let program = PathBuf::from(&a.command[0]);
    let mut cfg = weft_host::HostConfig::new(program, a.command[1..].to_vec(), a.nodes);
    cfg.forbid = a.forbid.clone();
    cfg.groups[0].exit_codes = a.exit_codes.clone();
    let scenario =
        weft_host::faults_scenario(&a.faults).map_err(|e| anyhow::anyhow!("bad --faults: {e}"))?;
    let spec = cfg.to_spec().map_err(anyhow::Error::msg)?;
    println!(
        "weft run --nodes {} --seed {} --faults {} -- {}",
        a.nodes,
        a.seed,
        a.faults,
        a.command.join(" ")
    );
    let r = weft_host::run_program(&cfg, &scenario, a.seed, None)
        .with_context(|| format!("cannot run {}", a.command[0]))?;
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
            spec,
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
        repro.write(path)?;
        println!("recorded: weft replay {}", path.display());
    }
    Ok(match &report.outcome {
        o if o.is_failure() => Code::Violation,
        Outcome::Unsupported { .. } => Code::Unsupported,
        _ => Code::Ok,
    })
}
