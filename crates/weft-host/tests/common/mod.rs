//! Helpers shared by the integration tests: compile the C programs under `tests/c` with the
//! system `cc` (once per test binary), and build host configurations for them.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use weft_core::{Contract, Decisions, EventKind, Outcome, Recorder, Scenario};
use weft_host::{HostConfig, RunOutput};

/// Compiles `tests/c/{name}.c` with extra flags into the cargo test temp dir; cached.
pub fn compile(name: &str, flags: &[&str]) -> PathBuf {
    compile_src(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c"), name, flags)
}

/// Compiles `{dir}/{name}.c` with extra flags into the cargo test temp dir; cached.
fn compile_src(dir: &Path, name: &str, flags: &[&str]) -> PathBuf {
    static CACHE: Mutex<BTreeMap<String, PathBuf>> = Mutex::new(BTreeMap::new());
    let key = format!("{name} {}", flags.join(" "));
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = cache.get(&key) {
        return p.clone();
    }
    let src = dir.join(format!("{name}.c"));
    let suffix: String =
        flags.iter().map(|f| f.trim_start_matches('-').replace(['=', '/'], "_")).collect();
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}{suffix}"));
    build("cc", &src, &out, flags);
    cache.insert(key, out.clone());
    out
}

/// Compiles `tests/c/{name}.cc` with the system `g++` into the cargo test temp dir.
pub fn compile_cxx(name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/c/{name}.cc"));
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    build("g++", &src, &out, &[]);
    out
}

/// `compiler -O1 -Wall -o out src flags…`, which must succeed.
fn build(compiler: &str, src: &Path, out: &Path, flags: &[&str]) {
    let status = Command::new(compiler)
        .args(["-O1", "-Wall", "-o"])
        .arg(out)
        .arg(src)
        .args(flags)
        .status()
        .unwrap_or_else(|e| panic!("`{compiler}` is needed for these tests: {e}"));
    assert!(status.success(), "{compiler} failed for {}", src.display());
}

pub fn config(name: &str, args: &[&str], nodes: u32) -> HostConfig {
    let mut cfg =
        HostConfig::new(compile(name, &[]), args.iter().map(|s| s.to_string()).collect(), nodes);
    cfg.time_limit = weft_core::SimDuration::from_secs(30);
    cfg
}

/// The output lines of a run that must have passed (else the run's rendering is the failure).
pub fn passing_lines(out: &RunOutput) -> Vec<&str> {
    assert_eq!(out.report.outcome, Outcome::Pass, "{}", out.render());
    out.lines.iter().map(|l| l.text.as_str()).collect()
}

/// A storage workload's cluster file `programs/storage/{file}` with `bin` as its first group's
/// program and, for `Some((flag, default, value))`, that flag's argument (checked to be the
/// file's `default`) replaced by `value`: a set history, `CORRUPT` lines forbidden, 5 s of
/// virtual time in the folder `work`, and the file's scenario under `contract`.
pub fn storage_setup(
    file: &str,
    bin: PathBuf,
    flag: Option<(&str, &str, &str)>,
    contract: weft_core::Contract,
    work: &str,
) -> (HostConfig, weft_core::Scenario) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../programs/storage").join(file);
    let cluster = weft_host::Cluster::read(&path, Default::default()).unwrap();
    let mut groups = cluster.groups.clone();
    groups[0].program = bin;
    if let Some((flag, default, value)) = flag {
        let at = groups[0].args.iter().position(|a| a == flag).unwrap();
        assert_eq!(groups[0].args[at + 1], default, "the cluster file's default");
        groups[0].args[at + 1] = value.into();
    }
    let mut cfg = HostConfig::cluster(groups);
    cfg.history = weft_check::history::HistoryModel::parse("set");
    cfg.forbid = Some("CORRUPT".into());
    cfg.time_limit = weft_core::SimDuration::from_secs(5);
    cfg.work_dir = Some(Path::new(env!("CARGO_TARGET_TMPDIR")).join(work));
    let mut scenario = cluster.apply_scenario(weft_core::Scenario::calm()).unwrap();
    scenario.disk.contract = contract;
    (cfg, scenario)
}

/// The storage workload `programs/storage/{name}.c` linked with `-l{lib}`, or `None` (the
/// reason printed) where `header` is missing; under `.ci/run` (`WEFT_REQUIRE_PACKAGES`) a
/// missing header fails the test instead.
pub fn storage_workload(name: &str, header: &str, package: &str, lib: &str) -> Option<PathBuf> {
    if !Path::new(header).exists() {
        assert!(
            option_env!("WEFT_REQUIRE_PACKAGES").is_none(),
            "{package} is missing (.ci/run installs it)"
        );
        eprintln!("skipped: {header} is missing (apt-get install {package})");
        return None;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../programs/storage");
    Some(compile_src(&dir, name, &[&format!("-l{lib}")]))
}

/// One run, with its trace.
pub fn run_traced(
    cfg: &HostConfig,
    scenario: &Scenario,
    d: &mut Decisions,
) -> (RunOutput, Recorder) {
    let mut obs = Recorder::default();
    let out = weft_host::run_once(cfg, scenario, d, &mut obs).unwrap();
    (out, obs)
}

/// The loss notes of a run that start with `rule` (`fsync:`, `posix:`).
pub fn loss_notes(obs: &Recorder, rule: &str) -> Vec<String> {
    obs.events
        .iter()
        .filter(|e| e.kind == EventKind::Note && e.summary.starts_with(rule))
        .map(|e| e.summary.clone())
        .collect()
}

/// The same decisions audited under `contract`: a crash state it does not allow.
pub fn assert_outside(cfg: &HostConfig, scenario: &Scenario, log: Vec<u64>, contract: Contract) {
    let mut audited = scenario.clone();
    audited.disk.audit = Some(contract);
    let (out, _) = run_traced(cfg, &audited, &mut Decisions::replay(log));
    match out.report.outcome {
        Outcome::OutsideModel { .. } => {}
        other => panic!("expected a crash state outside {contract:?}, got {other}"),
    }
}
