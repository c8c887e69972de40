//! The simulated disk under the shim: each file call of `tests/c/disk.c` runs natively on an
//! empty real directory and under weft on a data directory (which does not exist for real),
//! and what the program observes — results, errnos, contents, sizes, sorted listings — must be
//! the same line for line; nothing is written to the real directory.

mod common;
use std::path::{Path, PathBuf};
use std::process::Command;
use weft_core::{Decisions, NullObserver, Outcome, Scenario};

fn fresh(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("disk-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// `tests/c/{prog}.c` run natively with a fresh real directory (`fresh(name)`) and `args`
/// after it: its output.
fn native(prog: &str, name: &str, args: &[&str]) -> String {
    let dir = fresh(name);
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(common::compile(prog, &[])).arg(&dir).args(args).output();
    let out = out.expect("run natively");
    assert!(out.status.success(), "{prog} {args:?}: native run failed");
    String::from_utf8(out.stdout).unwrap()
}

/// `tests/c/{prog}.c` under weft from `seed`, with a fresh data directory (`fresh(name)`,
/// which does not exist for real) and `args` after it: the run and the directory.
fn on_disk(
    prog: &str,
    name: &str,
    args: &[&str],
    scenario: &Scenario,
    seed: u64,
) -> (weft_host::RunOutput, PathBuf) {
    let dir = fresh(name);
    let mut all = vec![dir.to_str().unwrap()];
    all.extend_from_slice(args);
    let mut cfg = common::config(prog, &all, 1);
    cfg.groups[0].data_dirs = vec![dir.display().to_string()];
    let mut d = Decisions::random(seed);
    let out = weft_host::run_once(&cfg, scenario, &mut d, &mut NullObserver).unwrap();
    (out, dir)
}

/// The output lines of a run that passed, as one text.
fn passed(out: &weft_host::RunOutput) -> String {
    assert_eq!(out.report.outcome, Outcome::Pass, "under the shim: {}", out.render());
    out.lines.iter().map(|l| format!("{}\n", l.text)).collect()
}

/// `tests/c/{prog}.c` natively (its output holding `reached`, so it ran to its end) and under
/// weft from `seed` on a data directory print the same lines: the data directory.
fn matches_native(prog: &str, reached: &str, seed: u64) -> PathBuf {
    let native = native(prog, &format!("{prog}-native"), &[]);
    assert!(native.contains(reached), "{native}");
    let (out, dir) = on_disk(prog, &format!("{prog}-sim"), &[], &Scenario::calm(), seed);
    assert_eq!(passed(&out), native, "shim (left) vs native (right)");
    dir
}

/// A calm scenario with one crash in its first 2 s.
fn one_crash() -> Scenario {
    let mut scenario = Scenario::calm();
    for (k, v) in [("rates.crash", "1/2"), ("budget.crashes", "1")] {
        scenario.set_knob(k, v).unwrap();
    }
    scenario.fault_start = weft_core::SimDuration::from_millis(30);
    scenario.fault_phase = weft_core::SimDuration::from_secs(2);
    scenario
}

/// `copy_file_range`, `splice`, `tee` and `vmsplice` between data-directory files, pipes and a
/// socketpair answer as natively (bytes, offsets, errors): the kernel had moved bytes between
/// placeholders, so `copy_file_range` answered `EINVAL` (`cp` copies with it) and a splice
/// from a data-directory file failed.
#[test]
fn splice_and_copy_file_range_match_native() {
    matches_native("splice", "read back [vmsplice]", 1);
}

/// An `O_PATH` descriptor on a data-directory file or directory names it (`fstat`, `*at` calls)
/// and its content calls answer `EBADF`, as natively: the disk had refused `O_PATH` by name, so
/// `cp` into a data directory ended the run.
#[test]
fn path_descriptors_match_native() {
    matches_native("opath", "getdents on it: -1 errno EBADF", 1);
}

#[test]
fn file_calls_match_native() {
    let sim_dir = matches_native("disk", "same 1", 3);
    assert!(!sim_dir.exists(), "the data directory is simulated: nothing real is written");
}

/// `tests/c/diskmap.c` under weft on a fresh data directory, ending with `end`.
fn mapped(end: &str) -> weft_host::RunOutput {
    let (out, dir) = on_disk("diskmap", &format!("map-{end}"), &[end], &Scenario::calm(), 2);
    assert!(!dir.exists(), "nothing real is written");
    out
}

#[test]
fn mappings_of_data_directory_files_match_native() {
    let native = native("diskmap", "map-native", &[]);
    assert!(native.contains("write after all unmapped -> 2"), "{native}");
    assert_eq!(passed(&mapped("")), native, "shim (left) vs native (right)");
}

/// A shared mapping of a data file maps a backing file the host keeps alike with the model:
/// a `write` or truncate of a mapped file shows through the mapping, stores through a writable
/// shared mapping reach the file and the node's other mappings, as natively (they had ended
/// the run, exit 4: SQLite's WAL index and LMDB map files shared and writable).
#[test]
fn files_mapped_shared_see_changes_and_stores_as_natively() {
    for end in [
        "write-while-mapped",
        "truncate-while-mapped",
        "child-write-while-mapped",
        "write-after-munmap",
        "shared-stores",
    ] {
        let native = native("diskmap", &format!("map-native-{end}"), &[end]);
        assert_eq!(passed(&mapped(end)), native, "{end}: shim (left) vs native (right)");
        assert!(native.contains("'x'") || !end.contains("write-while"), "{end}: {native}");
    }
}

/// Stores through a shared mapping are the page cache's: `msync(MS_SYNC)` makes them durable,
/// and a crash keeps or loses the rest as the contract allows (`fsync`: a suffix of the
/// writes since the last sync).
#[test]
fn a_crash_keeps_the_synced_stores_of_a_shared_mapping() {
    let mut seen = std::collections::BTreeSet::new();
    let mut scenario = one_crash();
    scenario.disk.contract = weft_core::Contract::Fsync;
    for seed in 1..=24 {
        let (out, _) =
            on_disk("diskmap", "map-store-crash", &["store-then-crash"], &scenario, seed);
        assert_eq!(out.report.outcome, Outcome::Pass, "{}", out.render());
        let after = out.lines.iter().find(|l| l.text.starts_with("after restart"));
        let after = after.unwrap_or_else(|| panic!("no restart: {}", out.render())).text.clone();
        assert!(after.starts_with("after restart: synced 'DUR', unsynced "), "{after}");
        seen.insert(after);
    }
    assert_eq!(seen.len(), 2, "over 24 seeds the unsynced store is kept and lost: {seen:?}");
}

#[test]
fn a_crash_ends_the_mappings_of_its_node() {
    let args = ["rewrite-after-restart"];
    let (out, _) = on_disk("diskmap", "map-crash", &args, &one_crash(), 1);
    assert_eq!(out.report.outcome, Outcome::Pass, "{}", out.render());
    let texts: Vec<&str> = out.lines.iter().map(|l| l.text.as_str()).collect();
    assert!(texts.contains(&"mapped -> 0"), "{texts:?}");
    assert!(texts.contains(&"rewrite after restart -> 3"), "{texts:?}");
}

/// The `statfs` family on a data directory tells of a fixed ext4 file system (LMDB's
/// `mdb_env_open` asks `fstatfs`, which had ended the run, exit 4).
#[test]
fn statfs_of_a_data_directory_is_a_fixed_file_system() {
    let (out, dir) = on_disk("diskrefuse", "statfs", &["statfs"], &Scenario::calm(), 1);
    assert_eq!(
        common::passing_lines(&out),
        [
            "statfs 0: type ef53, block 4096 4096 4096 4096, free 1",
            "statfs of a missing file: -1 ENOENT 1",
        ]
    );
    assert!(!dir.exists(), "nothing real is written");
}

#[test]
fn calls_the_disk_does_not_model_are_refused_by_name() {
    let dir = fresh("refuse");
    for (call, name) in [
        ("mremap", "mremap"),
        ("odirect", "O_DIRECT"),
        ("symlink", "symlink"),
        ("fallocate", "fallocate"),
    ] {
        let mut cfg = common::config("diskrefuse", &[dir.to_str().unwrap(), call], 1);
        cfg.groups[0].data_dirs = vec![dir.display().to_string()];
        let mut d = Decisions::random(1);
        let out = weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap();
        match &out.report.outcome {
            Outcome::Unsupported { detail } => assert!(detail.contains(name), "{call}: {detail}"),
            other => panic!("{call}: expected unsupported, got {other}: {:?}", out.lines),
        }
    }
    assert!(!dir.exists(), "nothing real is written");
}

#[test]
fn crash_at_call_is_refused_for_real_programs_rather_than_ignored() {
    let dir = fresh("knobs");
    let mut cfg = common::config("diskrefuse", &[dir.to_str().unwrap(), "none"], 1);
    cfg.groups[0].data_dirs = vec![dir.display().to_string()];
    let mut scenario = Scenario::calm();
    scenario.set_knob("disk.crash_at_call", "1/10").unwrap();
    let out = weft_host::run_once(&cfg, &scenario, &mut Decisions::random(1), &mut NullObserver);
    match out.unwrap().report.outcome {
        Outcome::Unsupported { detail } => assert!(detail.contains("crash_at_call"), "{detail}"),
        other => panic!("expected unsupported, got {other}"),
    }
}

/// `tests/c/diskfault.c` (`rounds` rounds of write, fsync, read) under `knobs`: its output.
fn faulted(knobs: &[(&str, &str)], rounds: &str, seed: u64) -> (String, u64) {
    let dir = fresh("faults");
    let mut cfg = common::config("diskfault", &[dir.to_str().unwrap(), rounds], 1);
    cfg.groups[0].data_dirs = vec![dir.display().to_string()];
    let mut scenario = Scenario::calm();
    scenario.fault_phase = weft_core::SimDuration::from_secs(10);
    for (k, v) in knobs {
        scenario.set_knob(k, v).unwrap();
    }
    let mut d = Decisions::random(seed);
    let out = weft_host::run_once(&cfg, &scenario, &mut d, &mut NullObserver).unwrap();
    assert_eq!(out.report.outcome, Outcome::Pass, "{}", out.render());
    (out.lines.iter().map(|l| format!("{}\n", l.text)).collect(), out.report.trace_hash)
}

#[test]
fn disk_fault_knobs_reach_real_programs() {
    let knobs = [
        ("disk.eio", "1/4"),
        ("disk.enospc", "1/4"),
        ("disk.latent_error", "1/4"),
        ("disk.corrupt_read", "1/4"),
        ("disk.budget", "1000"),
    ];
    let (out, hash) = faulted(&knobs, "40", 1);
    for want in ["-1 EIO", "ENOSPC", "differs"] {
        assert!(out.contains(want), "no `{want}` in:\n{out}");
    }
    let failed = |what: &str, e: &str| {
        out.lines().any(|l| l.starts_with(what) && l.contains(&format!("-1 {e}")))
    };
    assert!(failed("write", "EIO") && failed("write", "ENOSPC"), "{out}");
    assert!(failed("fsync", "EIO") && failed("read", "EIO"), "{out}");
    assert_eq!(faulted(&knobs, "40", 1), (out, hash), "same seed, same faults");
    // The budget bounds them: none at all with a budget of 0.
    let (calm, _) = faulted(&knobs[..4], "40", 1);
    assert!(!calm.contains("-1") && !calm.contains("differs"), "{calm}");
    // A misdirected write lands one block further: its round reads back something else.
    let (mis, _) = faulted(&[("disk.misdirect", "1/1"), ("disk.budget", "1")], "3", 1);
    assert_eq!(mis.matches("differs").count(), 1, "{mis}");
    // A failed fsync that dropped its pages: the next one succeeds, reads still see the data.
    let (drop, _) = faulted(&[("disk.fsync_drops_pages", "1/1"), ("disk.budget", "1")], "2", 1);
    assert!(drop.contains("fsync 0 -> -1 EIO\nread 0 -> 64 0 same"), "{drop}");
    assert!(drop.contains("fsync 1 -> 0 0"), "{drop}");
}

/// `chdir` into a data directory (as `mkdir -p` does, and daemons into their data) works in
/// an empty real stand-in at its path: relative paths reach the model, `../f` leads back out,
/// listings are the model's, as natively (it had ended the run, exit 4).
#[test]
fn working_in_a_data_directory_matches_native() {
    let dir = matches_native("diskcwd", "entry x", 1);
    let real: Vec<_> = walk(&dir);
    assert!(real.iter().all(|p| p.is_dir()), "only empty stand-ins are real: {real:?}");
}

/// Every path under `dir`, for real.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut all = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        all.push(e.path());
        all.extend(walk(&e.path()));
    }
    all
}

/// Advisory locks between processes on a data-directory file — record locks with `F_GETLK`
/// and a waiting `F_SETLKW`, POSIX's release at the close of any descriptor, `flock`, OFD
/// locks shared through a forked description — as natively (a lock on a file another process
/// had open ended the run, exit 4: SQLite and LMDB used by more than one process lock).
#[test]
fn advisory_locks_between_processes_match_native() {
    let native = native("disklocks", "locks-native", &[]);
    assert!(native.contains("waited for the parent's unlock: 1"), "{native}");
    for seed in [1, 2] {
        let (out, dir) = on_disk("disklocks", "locks", &[], &Scenario::calm(), seed);
        assert_eq!(passed(&out), native, "seed {seed}: shim (left) vs native (right)");
        assert!(!dir.exists(), "nothing real is written");
    }
}

/// A restarted node's process gets a fresh pid, as from the kernel: the pid file its crashed
/// incarnation left names no live process, so a daemon's `kill(pid, 0)` check lets it start
/// (both incarnations had been `1000 + id`: Kea and chronyd said "already running" and quit).
#[test]
fn a_restarted_node_does_not_find_itself_in_its_stale_pid_file() {
    let mut restarted = 0;
    for seed in 1..=4 {
        let (out, _) = on_disk("pidfile", &format!("pidfile-{seed}"), &[], &one_crash(), seed);
        let lines: Vec<&str> = out.lines.iter().map(|l| l.text.as_str()).collect();
        assert!(!lines.iter().any(|l| l.starts_with("already running")), "seed {seed}: {lines:?}");
        let ups: Vec<&&str> = lines.iter().filter(|l| l.starts_with("up as ")).collect();
        if ups.len() == 2 {
            restarted += 1;
            assert!(lines.contains(&"found pid file 1000"), "seed {seed}: {lines:?}");
            assert_ne!(ups[0], ups[1], "seed {seed}: a fresh pid after the restart");
        }
    }
    assert!(restarted > 0, "no seed of four crashed the node while it ran");
}
