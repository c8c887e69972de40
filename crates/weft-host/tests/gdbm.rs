//! Debian's GDBM on the simulated disk (`programs/storage/gdbm.toml`: the `gdbm-acks`
//! workload opens with `GDBM_SYNC`, stores 20 keys, one crash of the node after the database
//! was created, restart on the surviving disk).
//!
//! - `--commit store` (acknowledged after `gdbm_store` returned, with `GDBM_SYNC`): GDBM 1.23
//!   fsyncs only when a store changes the header or the directory — a store that changes one
//!   bucket is written and not synced (strace of the native run shows the same) — so under
//!   `fsync` a crash loses acknowledged keys; not reachable under `durable`, where the same
//!   seeds pass. The test fails if the simulated disk stops losing unsynced writes.
//! - `--commit sync` (`gdbm_sync` after each store): every acknowledged key survives under
//!   `fsync`; under `posix` a durability and an atomicity vulnerability (ALICE's terms): the
//!   database file's creation is never covered by a directory fsync, so a crash can lose the
//!   whole file, and a bucket rewritten in place can tear (GDBM: "Malformed bucket hash
//!   entry"); neither is reachable under `fsync`. The same seed twice is byte-identical.
//!
//! Needs `cc` and `libgdbm-dev` (`.ci/run` installs them).

mod common;
use common::{assert_outside, run_traced as run};
use std::path::{Path, PathBuf};
use weft_core::{Contract, Decisions, EventKind, Outcome, Recorder, Scenario};
use weft_host::{HostConfig, RunOutput};

fn workload() -> Option<PathBuf> {
    common::storage_workload("gdbm-acks", "/usr/include/gdbm.h", "libgdbm-dev", "gdbm")
}

/// The cluster file's configuration with `--commit commit`, and its scenario under `contract`.
fn setup(bin: &Path, commit: &str, contract: Contract, work: &str) -> (HostConfig, Scenario) {
    let flag = Some(("--commit", "store", commit));
    common::storage_setup("gdbm.toml", bin.to_path_buf(), flag, contract, work)
}

/// The first of `seeds` whose run violates a property: its seed, decisions, output and trace.
fn first_violation(
    cfg: &HostConfig,
    scenario: &Scenario,
    seeds: u64,
    lost_only: bool,
) -> (u64, Vec<u64>, RunOutput, Recorder) {
    (0..seeds)
        .find_map(|seed| {
            let mut d = Decisions::random(seed);
            let (out, obs) = run(cfg, scenario, &mut d);
            match &out.report.outcome {
                Outcome::SafetyViolation { detail, .. } => {
                    let lost = detail.contains("acknowledged adds lost");
                    assert!(lost || !lost_only && detail.contains("CORRUPT"), "{detail}");
                    Some((seed, d.log().to_vec(), out, obs))
                }
                Outcome::Pass => None,
                other => panic!("seed {seed}: {other}\n{}", out.render()),
            }
        })
        .expect("a lost acknowledged key")
}

fn has_note(obs: &Recorder, starts: &str, contains: &str) -> bool {
    obs.events.iter().any(|e| {
        e.kind == EventKind::Note && e.summary.starts_with(starts) && e.summary.contains(contains)
    })
}

#[test]
fn gdbm_sync_store_is_not_synced_and_loses_acknowledged_keys_under_fsync() {
    let Some(bin) = workload() else { return };
    let (cfg, fsync) = setup(&bin, "store", Contract::Fsync, "gdbm-store");
    let (seed, log, out, obs) = first_violation(&cfg, &fsync, 8, true);
    assert!(has_note(&obs, "fsync:", "test.gdbm"), "{}", out.render());
    assert_outside(&cfg, &fsync, log, Contract::Durable);
    let (_, durable) = setup(&bin, "store", Contract::Durable, "gdbm-store");
    for s in 0..=seed {
        let (out, _) = run(&cfg, &durable, &mut Decisions::random(s));
        assert_eq!(out.report.outcome, Outcome::Pass, "durable, seed {s}:\n{}", out.render());
    }
}

#[test]
fn gdbm_sync_after_each_store_keeps_every_key_under_fsync() {
    let Some(bin) = workload() else { return };
    let (cfg, fsync) = setup(&bin, "sync", Contract::Fsync, "gdbm-sync");
    let mut among_adds = 0;
    for seed in 0..20 {
        let (out, obs) = run(&cfg, &fsync, &mut Decisions::random(seed));
        assert_eq!(out.report.outcome, Outcome::Pass, "seed {seed}:\n{}", out.render());
        if let Some(at) = obs.events.iter().position(|e| e.kind == EventKind::Crash) {
            let acked = obs.events[..at].iter().filter(|e| e.summary.contains(" ok add ")).count();
            among_adds += usize::from((1..20).contains(&acked));
        }
    }
    assert!(among_adds >= 5, "only {among_adds} of 20 crashes landed among the stores");
}

#[test]
fn gdbm_loses_keys_or_its_structure_under_posix_only() {
    let Some(bin) = workload() else { return };
    let (cfg, posix) = setup(&bin, "sync", Contract::Posix, "gdbm-posix");
    let (seed, log, out, obs) = first_violation(&cfg, &posix, 20, false);
    assert!(has_note(&obs, "posix:", ""), "{}", out.render());
    assert_outside(&cfg, &posix, log, Contract::Fsync);
    let (again, _) = run(&cfg, &posix, &mut Decisions::random(seed));
    assert_eq!(again.report.trace_hash, out.report.trace_hash, "seed {seed}");
    assert_eq!(again.render(), out.render());
}
