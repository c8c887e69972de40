//! Subcommands: each parses its flags into a configuration and makes one library call. This
//! module owns the command table ([`Cli`], [`dispatch`]); each command's flags and body live in
//! a module of its own, the flags several commands share in `flags`, and the lines and campaign
//! summary they print in `report`.

use crate::exit::Code;
use anyhow::Result;
use clap::{Parser, Subcommand};

mod determinism;
mod explain;
mod explore;
mod flags;
mod replay;
mod report;
mod show;
mod shrink;
mod targets;

// These modules live beside this file, not in `cmd/`; declared here so `main.rs` stays as the
// lead wrote it.
#[path = "bench.rs"]
mod bench;
#[path = "deploy.rs"]
mod deploy;
#[path = "merge.rs"]
mod merge;
#[path = "output.rs"]
pub(crate) mod output;
#[path = "progress.rs"]
mod progress;
#[path = "shard.rs"]
mod shard;

pub(crate) use flags::TargetArgs;

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
    Explore(explore::ExploreArgs),
    /// Re-run a repro file; exit 1 if the recorded violation recurs with the same trace hash.
    Replay(replay::ReplayArgs),
    /// Shrink an existing repro to a smaller one that fails the same way; exit 1.
    Shrink(shrink::ShrinkArgs),
    /// Show a repro: its text timeline, or an HTML space-time diagram, or a ShiViz log.
    Show(show::ShowArgs),
    /// Compare strategies: time and runs to the first violation over many campaign seeds.
    Bench(bench::BenchArgs),
    /// Run each seed twice and compare trace hashes; name the first differing event.
    CheckDeterminism(determinism::DeterminismArgs),
    /// For each crash in a repro: what the disk lost, the rule that allowed it, and under which
    /// persistence contracts that crash state is reachable.
    ExplainCrash(explain::ExplainArgs),
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

pub fn dispatch(cli: Cli) -> Result<Code> {
    // Commands that make one run (or a few) have nothing to save when interrupted: they end at
    // once with 130. Campaigns and shrinking stop cooperatively and keep what they found.
    let at_once = matches!(
        cli.cmd,
        Cmd::Replay(_)
            | Cmd::Show(_)
            | Cmd::ExplainCrash(_)
            | Cmd::CheckDeterminism(_)
            | Cmd::Run(_)
    );
    progress::exit_at_once_on_interrupt(at_once);
    match cli.cmd {
        Cmd::Targets => targets::targets(),
        Cmd::Explore(a) => explore::explore(a),
        Cmd::Replay(a) => replay::replay(a),
        Cmd::Shrink(a) => shrink::shrink(a),
        Cmd::Show(a) => show::show(a),
        Cmd::Bench(a) => bench::bench(a),
        Cmd::CheckDeterminism(a) => determinism::check_determinism(a),
        Cmd::ExplainCrash(a) => explain::explain_crash(a),
        Cmd::Run(a) => crate::run::run(a),
        Cmd::Eval(a) => crate::eval::eval(a),
        Cmd::Merge(a) => merge::merge(a),
        Cmd::Deploy(a) => deploy::deploy(a),
    }
}
