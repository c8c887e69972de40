//! Debian's LevelDB 1.23 on the simulated disk (`programs/storage/leveldb.toml`: the
//! `leveldb-acks` workload puts 40 keys with 4 KiB values through the C API, a 64 KiB write
//! buffer, one crash of the node, restart on the surviving disk). LevelDB reads its table
//! files through `mmap(MAP_SHARED, PROT_READ)`, which the shim serves as copies: every run
//! below maps tables.
//!
//! - `sync` puts under `durable` and `fsync`: every acknowledged key survives every crash
//!   (LevelDB fdatasyncs its log before a synchronous put returns), and the crashes did land
//!   among the puts.
//! - `sync` puts under `posix`: LevelDB renames `CURRENT` into place at every open and unlinks
//!   the old manifest and log, but never fsyncs the directory after the rename (nor the parent
//!   after creating its own directory), so a crash can keep the unlink and lose the rename:
//!   the restarted LevelDB refuses to open (`CURRENT points to a non-existent file`) or comes
//!   back without acknowledged keys (google/leveldb#195 describes the reordering). Not
//!   reachable under `fsync`. The same seed twice is byte-identical.
//! - Puts without `sync` under `fsync`: a crash loses acknowledged keys (LevelDB documents
//!   that a machine crash may lose recent non-synchronous writes), outside `durable`.
//! - `disk.corrupt_read` reaches a mapping's page-in: a byte of a table flipped as it is mapped
//!   fails LevelDB's block checksum when the table is read.
//!
//! Needs `cc` and `libleveldb-dev` (`.ci/run` installs them).

mod common;
use common::{assert_outside, loss_notes as losses, run_traced as run};
use std::path::{Path, PathBuf};
use weft_core::{Contract, Decisions, EventKind, Outcome, Recorder, Scenario};
use weft_host::{HostConfig, RunOutput};

fn workload() -> Option<PathBuf> {
    common::storage_workload(
        "leveldb-acks",
        "/usr/include/leveldb/c.h",
        "libleveldb-dev",
        "leveldb",
    )
}

/// The cluster file's configuration with `--sync sync` and the database at `db`, and its
/// scenario under `contract`.
fn setup(
    bin: &Path,
    db: &str,
    sync: &str,
    contract: Contract,
    work: &str,
) -> (HostConfig, Scenario) {
    let flag = Some(("--sync", "1", sync));
    let (mut cfg, scenario) =
        common::storage_setup("leveldb.toml", bin.to_path_buf(), flag, contract, work);
    assert_eq!(cfg.groups[0].args[0], "data/db", "the cluster file's database");
    cfg.groups[0].args[0] = db.into();
    (cfg, scenario)
}

/// The first of `seeds` whose run violates a property: its seed, decisions, output and trace.
fn first_violation(
    cfg: &HostConfig,
    scenario: &Scenario,
    seeds: u64,
) -> Option<(u64, Vec<u64>, RunOutput, Recorder)> {
    (0..seeds).find_map(|seed| {
        let mut d = Decisions::random(seed);
        let (out, obs) = run(cfg, scenario, &mut d);
        match &out.report.outcome {
            Outcome::SafetyViolation { .. } => Some((seed, d.log().to_vec(), out, obs)),
            Outcome::Pass => None,
            other => panic!("seed {seed}: {other}\n{}", out.render()),
        }
    })
}

#[test]
fn sync_puts_survive_every_crash_under_durable_and_fsync() {
    let Some(bin) = workload() else { return };
    for contract in [Contract::Durable, Contract::Fsync] {
        let (cfg, scenario) = setup(&bin, "data/db", "1", contract, "leveldb-sync");
        let mut among_puts = 0;
        for seed in 0..10 {
            let (out, obs) = run(&cfg, &scenario, &mut Decisions::random(seed));
            let render = || out.render();
            assert_eq!(
                out.report.outcome,
                Outcome::Pass,
                "{contract:?} seed {seed}:\n{}",
                render()
            );
            let maps = obs.events.iter().filter(|e| e.summary.starts_with("disk mmap ")).count();
            assert!(maps >= 1, "seed {seed}: no table was mapped\n{}", render());
            if let Some(at) = obs.events.iter().position(|e| e.kind == EventKind::Crash) {
                let acked =
                    obs.events[..at].iter().filter(|e| e.summary.contains(" ok add ")).count();
                among_puts += usize::from((1..40).contains(&acked));
            }
        }
        assert!(among_puts >= 5, "{contract:?}: only {among_puts} of 10 crashes among the puts");
    }
}

#[test]
fn posix_loses_the_rename_of_current_and_leveldb_does_not_open() {
    let Some(bin) = workload() else { return };
    // The database in the data directory itself: no mkdir of LevelDB's own to lose.
    let (cfg, posix) = setup(&bin, "data", "1", Contract::Posix, "leveldb-posix");
    let found = first_violation(&cfg, &posix, 20);
    let (seed, log, out, obs) = found.expect("posix: the rename of CURRENT is never covered");
    let l = losses(&obs, "posix:");
    let current = l.iter().any(|l| l.contains("CURRENT` was lost (not covered by an fsync"));
    assert!(current, "{l:?}\n{}", out.render());
    assert!(out.render().contains("CURRENT points to a non-existent file"), "{}", out.render());
    assert_outside(&cfg, &posix, log, Contract::Fsync);
    let (again, _) = run(&cfg, &posix, &mut Decisions::random(seed));
    assert_eq!(again.report.trace_hash, out.report.trace_hash, "seed {seed}");
    assert_eq!(again.render(), out.render());
}

#[test]
fn posix_loses_leveldbs_own_directory_and_the_keys_in_it() {
    let Some(bin) = workload() else { return };
    let (cfg, posix) = setup(&bin, "data/db", "1", Contract::Posix, "leveldb-posix-dir");
    let found = first_violation(&cfg, &posix, 12);
    let (_, log, out, obs) = found.expect("posix: LevelDB never fsyncs its directory's parent");
    let l = losses(&obs, "posix:");
    assert!(l.iter().any(|l| l.contains("mkdir") && l.contains("was lost")), "{l:?}");
    let why = out.report.outcome.to_string();
    assert!(why.contains("acknowledged adds lost"), "{why}");
    assert_outside(&cfg, &posix, log, Contract::Fsync);
}

#[test]
fn puts_without_sync_lose_acknowledged_keys_under_fsync() {
    let Some(bin) = workload() else { return };
    let (cfg, fsync) = setup(&bin, "data/db", "0", Contract::Fsync, "leveldb-nosync");
    let found = first_violation(&cfg, &fsync, 6);
    let (_, log, out, obs) = found.expect("fsync: unsynced log writes are lost");
    let l = losses(&obs, "fsync:");
    assert!(l.iter().any(|l| l.contains(".log")), "{l:?}\n{}", out.render());
    let why = out.report.outcome.to_string();
    assert!(why.contains("acknowledged adds lost"), "{why}");
    assert_outside(&cfg, &fsync, log, Contract::Durable);
}

#[test]
fn a_corrupted_page_in_of_a_mapped_table_fails_leveldbs_block_checksum() {
    let Some(bin) = workload() else { return };
    let (cfg, mut scenario) = setup(&bin, "data/db", "1", Contract::Durable, "leveldb-corrupt");
    scenario.set_knob("disk.corrupt_read", "1/10").unwrap();
    scenario.set_knob("disk.budget", "1").unwrap();
    let found = (0..10).find_map(|seed| {
        let (out, obs) = run(&cfg, &scenario, &mut Decisions::random(seed));
        let text = out.render();
        text.contains("Corruption: block checksum mismatch").then_some((out, obs))
    });
    let (out, obs) = found.expect("a corrupted table block within 10 seeds");
    // The corrupted byte came from the page-in of a table's mapping (the next event).
    let at = obs.events.iter().position(|e| e.summary.starts_with("disk fault (injected): byte"));
    let at = at.unwrap_or_else(|| panic!("no corrupted read:\n{}", out.render()));
    let fault = &obs.events[at].summary;
    assert!(fault.ends_with(".ldb"), "{fault}");
    let next = &obs.events[at + 1].summary;
    assert!(next.starts_with("disk mmap ") && fault.ends_with(next.split(' ').nth(2).unwrap()));
}
