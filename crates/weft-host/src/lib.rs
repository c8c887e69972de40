//! weft-host runs unmodified, dynamically linked Linux programs as the nodes of one
//! deterministic simulation. It starts N processes with the weft shim preloaded (each its own
//! simulated address `127.1.0.(id+1)`, in its own network namespace where the kernel allows),
//! passes a single baton so exactly one simulated thread runs at a time, serves their time,
//! randomness, sleeps, polls, UDP sockets and TCP-like streams from a simulated world,
//! advances virtual time only when every thread is blocked, and turns every ending (exit,
//! crash, hang, deadlock, escaped system call) into a named [`weft_core::Outcome`]. A run is a
//! function of the program, its [`HostConfig`], the [`weft_core::Scenario`] and the
//! [`weft_core::Decisions`]: the same decisions give the same trace hash and byte-identical
//! output.
//!
//! A run's nodes come in [`Group`]s (a program, its arguments, environment, start time, count,
//! expected exit statuses and [`Limits`]); a [`Cluster`] file describes them in TOML, and the
//! resolved form a repro records names every program by absolute path and content hash
//! ([`program_hash`]). Each node runs in a fresh, empty working directory under the
//! configuration's `work_dir`, with a memory and a CPU-time limit; a process that exceeds one
//! ends the run as `resource_limit`.
//!
//! Two ways to drive it: [`ProcessTarget`] (target name `process`) plugs into weft's generic
//! explore / replay / shrink through [`weft_core::Target`]; [`run_program`] is the one call
//! behind `weft run` (`--nodes N … -- PROGRAM ARGS…` or `--cluster FILE`).
//!
//! The shim is built by this crate's build script and embedded; [`shim_path`] writes it out
//! once per content hash.

#![deny(clippy::undocumented_unsafe_blocks)]

#[path = "../../weft-shim/src/proto.rs"]
mod proto;

mod cluster;
mod config;
mod elf;
mod host;
mod hostsfile;
mod idmap;
mod ldcache;
mod privrun;
mod privtmp;
mod privvartmp;
mod region;
mod spawn;
mod symbols;
mod target;
mod workdir;

pub use cluster::{parse_bytes, parse_cpu_secs, Cluster, MAX_CLUSTER_FILE};
pub use config::{join_args, split_args, Group, HostConfig, Limits, Netns, OnIdle, Users};
pub use elf::{check_program, program_hash, unsupported_reason};
pub use host::{format_ip, virtual_pid, OutputLine, RunOutput, NODE_IP_BASE};
/// How many iterations each side of a hand-off spins before it sleeps (when the host and the
/// processes run on different CPUs); public for the benchmark's transport floor.
pub use proto::SPIN_ITERS;
pub use spawn::netns_available;
pub use target::{ProcessRunner, ProcessTarget};

use std::io;
use std::path::PathBuf;
use std::sync::OnceLock;
use weft_core::{Decisions, NullObserver, Observer, Scenario};

/// The shim library this crate was built with.
static SHIM_SO: &[u8] = include_bytes!(env!("WEFT_SHIM_SO"));

/// Path of the embedded shim, written to the temp directory once per content hash (so
/// concurrent runs and differing versions never clash).
pub fn shim_path() -> io::Result<PathBuf> {
    static PATH: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    PATH.get_or_init(|| {
        by_content("weft-shim-", ".so", SHIM_SO)
            .map_err(|e| format!("cannot write the shim to the temp directory: {e}"))
    })
    .clone()
    .map_err(io::Error::other)
}

/// `bytes` as a file of the temp directory named by their hash (`PREFIX-HASH` + `suffix`),
/// written once per content (through a temporary name and a rename, so concurrent runs never
/// see half a file). An existing file is used only if it holds exactly these bytes: a stale or
/// altered one of the same size would otherwise go into every node without a word.
pub(crate) fn by_content(prefix: &str, suffix: &str, bytes: &[u8]) -> io::Result<PathBuf> {
    let hash = weft_core::stable_hash(bytes);
    let path = std::env::temp_dir().join(format!("{prefix}{hash:016x}{suffix}"));
    if std::fs::read(&path).is_ok_and(|b| b == bytes) {
        return Ok(path);
    }
    let tmp = std::env::temp_dir().join(format!("{prefix}{hash:016x}.tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes).and_then(|_| std::fs::rename(&tmp, &path))?;
    Ok(path)
}

/// One deterministic run of `cfg` under `scenario`, every choice drawn from `decisions`.
pub fn run_once(
    cfg: &HostConfig,
    scenario: &Scenario,
    decisions: &mut Decisions,
    obs: &mut dyn Observer,
) -> io::Result<RunOutput> {
    let shim = match &cfg.shim {
        Some(p) => p.clone(),
        None => shim_path()?,
    };
    cfg.check().map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let started = host::real_now_ns();
    let (cfg, _held) = workdir::claim(cfg)?;
    host::run(&cfg, &shim, scenario, decisions, obs, started)
}

/// What `weft run` needs back: the run, plus the decisions to record for replay.
#[derive(Clone, Debug)]
pub struct ProgramRun {
    pub output: RunOutput,
    /// The decision list of this run: `Decisions::replay(decisions)` reproduces it.
    pub decisions: Vec<u64>,
}

/// `weft run`: one run from `seed` (or replaying `replay` when given), no event recording.
/// Print `output.notes`, then every line of `output.lines` (`Display` gives the fixed-column
/// `time node | text` form), then the outcome.
pub fn run_program(
    cfg: &HostConfig,
    scenario: &Scenario,
    seed: u64,
    replay: Option<Vec<u64>>,
) -> io::Result<ProgramRun> {
    let mut decisions = match replay {
        Some(list) => Decisions::replay(list),
        None => Decisions::random(seed),
    };
    let output = run_once(cfg, scenario, &mut decisions, &mut NullObserver)?;
    Ok(ProgramRun { output, decisions: decisions.into_log() })
}

/// The scenario for `weft run --faults SPEC`: weft_core's calm scenario with the fault kinds
/// of `SPEC` switched on ([`Scenario::set_faults`]: `none`, `default`, or a comma list of
/// kinds with optional rates, e.g. `crash,drop=1/10`).
pub fn faults_scenario(spec: &str) -> Result<Scenario, String> {
    let mut s = Scenario::calm();
    s.set_faults(spec).map_err(|e| e.to_string())?;
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_core::Ratio;

    #[test]
    fn fault_specs_parse() {
        assert_eq!(faults_scenario("none").unwrap(), Scenario::calm());
        assert_eq!(faults_scenario("default").unwrap(), Scenario::default());
        let s = faults_scenario("drop=1/10, dup=1/50").unwrap();
        assert_eq!(s.rates.drop, Ratio::new(1, 10));
        assert_eq!(s.rates.duplicate, Ratio::new(1, 50));
        assert!(faults_scenario("drop=2/1").is_err());
        assert!(faults_scenario("quake").is_err());
        assert_eq!(faults_scenario("crash").unwrap().rates.crash, Scenario::default().rates.crash);
    }

    #[test]
    fn output_lines_have_fixed_columns() {
        let line = OutputLine { time: weft_core::SimTime(12_500_000), node: 2, text: "hi".into() };
        assert_eq!(line.to_string(), "    0.012500s n2 | hi");
    }

    #[test]
    fn non_elf_and_missing_programs_are_refused() {
        assert!(unsupported_reason(std::path::Path::new("/nonexistent/x")).is_some());
        assert!(unsupported_reason(std::path::Path::new("/etc/hostname"))
            .or(unsupported_reason(std::path::Path::new("/etc/passwd")))
            .unwrap()
            .contains("not an ELF"));
        assert_eq!(unsupported_reason(std::path::Path::new("/bin/true")), None);
    }
}
