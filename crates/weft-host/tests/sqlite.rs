//! Debian's SQLite on the simulated disk (`programs/storage/sqlite.toml`: the `sqlite-acks`
//! workload, rollback journal, `synchronous=FULL`, one crash). Under `posix` weft rediscovers
//! ALICE's SQLite finding — the journal's unlink is the commit point and is never made durable
//! by a directory fsync, so a crash can resurrect the journal and roll back an acknowledged
//! commit — and names the rule; the same decisions are not a reachable crash state under
//! `durable`; the same seeds pass under `durable`; a crashing run is byte-identical twice.
//!
//! Needs `cc` and `libsqlite3-dev` (`.ci/run` installs them).

mod common;
use std::path::{Path, PathBuf};
use std::process::Command;
use weft_core::{Contract, Decisions, EventKind, Outcome, Scenario};
use weft_host::HostConfig;

/// The workload compiled against the system's libsqlite3, or `None` (with the reason printed)
/// when the library's header is not installed.
fn workload() -> Option<PathBuf> {
    // The tests of this file run at once: one build for all of them.
    static BUILT: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    BUILT.get_or_init(build).clone()
}

fn build() -> Option<PathBuf> {
    if !Path::new("/usr/include/sqlite3.h").exists() {
        assert!(
            option_env!("WEFT_REQUIRE_PACKAGES").is_none(),
            "libsqlite3-dev is missing (.ci/run installs it)"
        );
        eprintln!("skipped: /usr/include/sqlite3.h is missing (apt-get install libsqlite3-dev)");
        return None;
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../programs/storage/sqlite-acks.c");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sqlite-acks");
    let status = Command::new("cc")
        .args(["-O1", "-Wall", "-o"])
        .arg(&out)
        .arg(&src)
        .arg("-lsqlite3")
        .status()
        .expect("cc");
    assert!(status.success(), "cc failed for {}", src.display());
    Some(out)
}

/// The cluster file's configuration with the compiled workload, and its scenario under
/// `contract`.
fn setup(bin: &Path, contract: Contract) -> (HostConfig, Scenario) {
    let (cfg, scenario) =
        common::storage_setup("sqlite.toml", bin.to_path_buf(), None, contract, "sqlite-work");
    assert_eq!(cfg.groups[0].data_dirs, ["data"]);
    (cfg, scenario)
}

fn run(cfg: &HostConfig, scenario: &Scenario, d: &mut Decisions) -> weft_host::RunOutput {
    weft_host::run_once(cfg, scenario, d, &mut weft_core::NullObserver).unwrap()
}

/// Seeds tried for the `posix` violation (found at the 2nd to 5th seed when measured).
const SEEDS: u64 = 12;

#[test]
fn rollback_journal_full_loses_an_acknowledged_commit_under_posix_only() {
    let Some(bin) = workload() else { return };
    let (cfg, posix) = setup(&bin, Contract::Posix);
    let found = (0..SEEDS).find_map(|seed| {
        let mut d = Decisions::random(seed);
        let out = run(&cfg, &posix, &mut d);
        match &out.report.outcome {
            Outcome::SafetyViolation { property, detail } if property == "history" => {
                Some((seed, d.log().to_vec(), detail.clone(), out))
            }
            Outcome::Pass => None,
            other => panic!("seed {seed}: {other}\n{}", out.render()),
        }
    });
    let (seed, log, detail, out) = found.expect("posix: a lost acknowledged commit");
    assert!(detail.contains("acknowledged adds lost"), "{detail}");

    // The same seed again (recording the trace), and the rule that allowed the loss, by name:
    // the journal's unlink was not covered by a directory fsync.
    let mut obs = weft_core::Recorder::default();
    let again = weft_host::run_once(&cfg, &posix, &mut Decisions::random(seed), &mut obs);
    let again = again.unwrap();
    let losses: Vec<&str> = obs
        .events
        .iter()
        .filter(|e| e.kind == EventKind::Note && e.summary.starts_with("posix:"))
        .map(|e| e.summary.as_str())
        .collect();
    assert!(
        losses.iter().any(|l| l.contains("unlink") && l.contains("test.db-journal")),
        "{losses:?}"
    );
    // Deterministic: the same seed gives the same run, byte for byte.
    assert_eq!(again.report.trace_hash, out.report.trace_hash, "seed {seed}");
    assert_eq!(again.render(), out.render());

    // `replay --contract durable`: that crash state is not reachable under `durable`.
    let mut audited = posix.clone();
    audited.disk.audit = Some(Contract::Durable);
    let a = run(&cfg, &audited, &mut Decisions::replay(log));
    match a.report.outcome {
        Outcome::OutsideModel { detail } => assert!(detail.contains("durable"), "{detail}"),
        other => panic!("expected outside the model under durable, got {other}"),
    }

    // The same seeds under `durable`: every acknowledged commit survives.
    let (cfg, durable) = setup(&bin, Contract::Durable);
    for s in 0..=seed {
        let out = run(&cfg, &durable, &mut Decisions::random(s));
        assert_eq!(out.report.outcome, Outcome::Pass, "durable, seed {s}:\n{}", out.render());
    }
}

/// SQLite's default WAL setup keeps the WAL index in a shared writable mapping of `-shm`
/// (weft had refused the mapping, exit 4, so WAL ran only with `locking_mode=EXCLUSIVE`): it
/// runs on the simulated disk, its stores through the mapping reach the model, and with
/// `synchronous=FULL` every acknowledged commit survives a crash under `posix`.
#[test]
fn wal_with_its_index_in_a_shared_mapping_keeps_every_commit_under_posix() {
    let Some(bin) = workload() else { return };
    let flag = Some(("--journal", "delete", "wal-shared"));
    let (cfg, posix) =
        common::storage_setup("sqlite.toml", bin, flag, Contract::Posix, "sqlite-wal-shared");
    let mut crashed = 0;
    for seed in 0..6 {
        let mut obs = weft_core::Recorder::default();
        let out = weft_host::run_once(&cfg, &posix, &mut Decisions::random(seed), &mut obs);
        let out = out.unwrap();
        assert_eq!(out.report.outcome, Outcome::Pass, "seed {seed}:\n{}", out.render());
        let has = |p: &str| {
            obs.events.iter().any(|e| e.summary.starts_with(p) && e.summary.contains("test.db-shm"))
        };
        assert!(has("disk mmap "), "seed {seed}: no shared mapping of -shm");
        assert!(has("disk store "), "seed {seed}: no store through it reached the model");
        crashed += obs.events.iter().filter(|e| e.kind == EventKind::Crash).count();
    }
    assert!(crashed > 0, "no seed crashed the node");
}
