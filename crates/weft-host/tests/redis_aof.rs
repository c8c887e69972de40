//! Debian's redis-server with an append-only file on the simulated disk
//! (`programs/storage/redis-aof.toml`: the `redis-acks` workload starts the server in its node,
//! adds 20 members with SADD, one crash of the node, restart on the surviving disk).
//!
//! - `appendfsync always` under `fsync`: every acknowledged add survives every crash (Redis
//!   fdatasyncs the AOF before it replies), and the crashes did land among the adds.
//! - `appendfsync everysec` under `fsync`: a crash loses acknowledged adds (Redis documents up
//!   to a second of loss), the note names the rule, and the same decisions are not a reachable
//!   crash state under `durable`; so the test fails if the disk stops losing unsynced writes.
//! - `appendfsync always` under `posix`: Redis 7.0 fsyncs `appendonlydir` but never its working
//!   directory, which holds the source side of the base AOF's rename into `appendonlydir`, so
//!   under `posix` (a rename needs both parents synced) a crash can lose the base file while the
//!   manifest naming it survives: the restarted server refuses to start. Not reachable under
//!   `fsync`.
//! - The same seed twice: byte-identical output and trace hash.
//!
//! Needs `cc` and `redis-server` (`.ci/run` installs them).

mod common;
use common::{loss_notes as losses, run_traced as run};
use std::path::{Path, PathBuf};
use std::process::Command;
use weft_core::{Contract, Decisions, EventKind, Outcome, Recorder, Scenario};
use weft_host::{HostConfig, RunOutput};

const REDIS: &str = "/usr/bin/redis-server";

/// The workload, compiled once per test binary.
fn workload() -> PathBuf {
    assert!(Path::new(REDIS).exists(), "{REDIS} is needed (apt-get install redis-server)");
    static ONCE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    ONCE.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../programs/storage/redis-acks.c");
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("redis-acks");
        let status =
            Command::new("cc").args(["-O1", "-Wall", "-o"]).arg(&out).arg(&src).status().unwrap();
        assert!(status.success(), "cc failed for {}", src.display());
        out
    })
    .clone()
}

/// The cluster file's configuration with `--appendfsync fsync_policy`, and its scenario under
/// `contract`.
fn setup(policy: &str, contract: Contract, work: &str) -> (HostConfig, Scenario) {
    let flag = Some(("--appendfsync", "always", policy));
    common::storage_setup("redis-aof.toml", workload(), flag, contract, work)
}

/// The first event where two traces differ (index, kind, summary of each), for a failed
/// determinism check.
fn first_difference(a: &Recorder, b: &Recorder) -> String {
    let pairs = a.events.iter().zip(&b.events);
    match pairs.enumerate().find(|(_, (x, y))| x.hash != y.hash) {
        Some((i, (x, y))) => format!(
            "first difference at event {i}: {:?} `{}` vs {:?} `{}`",
            x.kind, x.summary, y.kind, y.summary
        ),
        None => format!("{} vs {} events", a.events.len(), b.events.len()),
    }
}

/// The first of `seeds` whose run violates a property: its seed, decisions, detail and trace.
fn first_violation(
    cfg: &HostConfig,
    scenario: &Scenario,
    seeds: u64,
) -> Option<(u64, Vec<u64>, String, RunOutput, Recorder)> {
    (0..seeds).find_map(|seed| {
        let mut d = Decisions::random(seed);
        let (out, obs) = run(cfg, scenario, &mut d);
        match &out.report.outcome {
            Outcome::SafetyViolation { detail, .. } => {
                Some((seed, d.log().to_vec(), detail.clone(), out, obs))
            }
            Outcome::Pass => None,
            other => panic!("seed {seed}: {other}\n{}", out.render()),
        }
    })
}

/// Whether the same decisions, audited under `contract`, reach a crash state it forbids.
fn outside(cfg: &HostConfig, scenario: &Scenario, log: Vec<u64>, contract: Contract) -> String {
    let mut audited = scenario.clone();
    audited.disk.audit = Some(contract);
    let (out, _) = run(cfg, &audited, &mut Decisions::replay(log));
    match out.report.outcome {
        Outcome::OutsideModel { detail } => detail,
        other => panic!("expected a crash state outside {contract:?}, got {other}"),
    }
}

#[test]
fn appendfsync_always_keeps_every_acknowledged_add_under_fsync() {
    let (cfg, scenario) = setup("always", Contract::Fsync, "redis-aof-always");
    let mut crashed_among_adds = 0;
    for seed in 0..6 {
        let (out, obs) = run(&cfg, &scenario, &mut Decisions::random(seed));
        assert_eq!(out.report.outcome, Outcome::Pass, "seed {seed}:\n{}", out.render());
        // A crash that fell after the first acknowledged add and before the last one.
        let crash = obs.events.iter().position(|e| e.kind == EventKind::Crash);
        let acked = |e: &weft_core::Event| e.summary.contains(" ok add ");
        if let Some(at) = crash {
            let before = obs.events[..at].iter().filter(|e| acked(e)).count();
            crashed_among_adds += usize::from((1..20).contains(&before));
        }
    }
    assert!(crashed_among_adds >= 2, "only {crashed_among_adds} crashes landed among the adds");
}

#[test]
fn appendfsync_everysec_loses_acknowledged_adds_under_fsync_only() {
    let (cfg, scenario) = setup("everysec", Contract::Fsync, "redis-aof-everysec");
    let found = first_violation(&cfg, &scenario, 6);
    let (seed, log, detail, out, obs) = found.expect("fsync: lost acknowledged adds");
    assert!(detail.contains("acknowledged adds lost"), "{detail}");
    let l = losses(&obs, "fsync:");
    assert!(l.iter().any(|l| l.contains("appendonly.aof.1.incr.aof")), "{l:?}\n{}", out.render());
    let why = outside(&cfg, &scenario, log, Contract::Durable);
    assert!(why.contains("durable"), "{why}");
    // Deterministic: the same seed again, byte for byte (naming the first differing event).
    let (again, again_obs) = run(&cfg, &scenario, &mut Decisions::random(seed));
    assert_eq!(again.report.trace_hash, out.report.trace_hash, "seed {seed}: {}", {
        first_difference(&obs, &again_obs)
    });
    assert_eq!(again.render(), out.render());
}

#[test]
fn appendfsync_always_under_posix_loses_the_aof_without_directory_fsyncs() {
    let (cfg, scenario) = setup("always", Contract::Posix, "redis-aof-posix");
    let found = first_violation(&cfg, &scenario, 6);
    let (_, log, detail, out, obs) = found.expect("posix: the working directory is never fsynced");
    let l = losses(&obs, "posix:");
    assert!(
        l.iter().any(|l| l.contains("not covered by an fsync of directory")),
        "{detail}: {l:?}\n{}",
        out.render()
    );
    let why = outside(&cfg, &scenario, log, Contract::Fsync);
    assert!(why.contains("fsync"), "{why}");
}
