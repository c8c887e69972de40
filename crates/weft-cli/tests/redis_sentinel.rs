//! The frozen Redis Sentinel write loss (Jepsen: Redis, 2013; `docs/redis.md`): the shrunk
//! counterexample `weft explore process -o cluster=programs/redis-set/sentinel.toml` found,
//! replayed on Debian's unmodified `redis-server` and `redis-sentinel`. The replay must
//! reproduce the recorded run bit for bit (same trace hash, exit 1) from a folder other than
//! the campaign's, end in a `history` violation naming acknowledged adds the old primary lost,
//! and show one partition and its heal, nothing else. A second test runs a short calm run of
//! the cluster twice at once, from two folders of different path lengths, with different
//! environments and inherited descriptors, and asks for one trace hash: what a node sees (its
//! working folder, its environment, its descriptors) does not depend on where or from what
//! weft runs.
//!
//! A repro pins every binary by content hash. The client is rebuilt here from
//! `programs/redis-set/redis-set.c` exactly as the repro's was (`cc -O1`, the same relative
//! path, so gcc 12.2.0 of Debian 12 gives the same bytes) and the recorded path is pointed at
//! it. Redis is Debian 12's package 5:7.0.15-1~deb12u10 (what `.ci/run` installs on Debian
//! 12). Skipped, with the reason printed, where redis is not installed or where a binary is
//! not the recorded one (another redis or gcc version): weft refuses such a replay (exit 2)
//! rather than run a different program, and that is not a failure of the capability.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const REDIS: &str = "/usr/bin/redis-server";
const SENTINEL: &str = "/usr/bin/redis-sentinel";
const FROZEN: &str = "tests/golden/redis-sentinel-write-loss.json";
/// The client's path where the repro was recorded.
const RECORDED_CLIENT: &str = "/work/main/programs/redis-set/redis-set";

/// A fresh folder `name` holding `programs/redis-set/` with the client built as the recorded
/// one was and the cluster file; `None` (reason printed) where redis is not installed.
fn setup(name: &str) -> Option<PathBuf> {
    for bin in [REDIS, SENTINEL] {
        if !Path::new(bin).exists() {
            assert!(
                option_env!("WEFT_REQUIRE_PACKAGES").is_none(),
                "{bin} is missing (.ci/run installs it)"
            );
            println!(
                "skipped: {bin} is not installed (apt-get install redis-server redis-sentinel)"
            );
            return None;
        }
    }
    let programs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../programs/redis-set");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("programs/redis-set")).unwrap();
    for file in ["redis-set.c", "sentinel.toml"] {
        std::fs::copy(programs.join(file), dir.join("programs/redis-set").join(file)).unwrap();
    }
    let ok = Command::new("cc")
        .current_dir(&dir)
        .args(["-O1", "-o", "programs/redis-set/redis-set", "programs/redis-set/redis-set.c"])
        .status()
        .expect("a C compiler (`cc`) is needed for this test");
    assert!(ok.success(), "cc failed for redis-set.c");
    Some(dir)
}

fn weft(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_weft")).current_dir(dir).args(args).output().expect("weft")
}

#[test]
fn the_frozen_sentinel_partition_replays_bit_for_bit_and_reports_the_lost_writes() {
    let Some(dir) = setup("redis-sentinel-loss") else { return };
    let client = dir.join("programs/redis-set/redis-set");
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(FROZEN)).unwrap();
    assert!(text.contains(RECORDED_CLIENT), "the frozen repro names the client it ran");
    let text = text.replace(RECORDED_CLIENT, client.to_str().unwrap());
    std::fs::write(dir.join("loss.json"), text).unwrap();
    let o = weft(&dir, &["replay", "--allow-exec", "--timeline", "loss.json"]);
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    if o.status.code() == Some(2) && err.contains("changed since the repro was recorded") {
        println!(
            "skipped: a binary differs from the recorded one (the repro needs Debian 12's \
             redis-server 5:7.0.15-1~deb12u10 and gcc 12.2.0): {}",
            err.trim()
        );
        return;
    }
    let tail: String = out.lines().rev().take(4).collect::<Vec<_>>().join("\n");
    assert_eq!(o.status.code(), Some(1), "{tail}\n{err}");
    assert!(out.contains("reproduced: same outcome, same trace hash"), "{tail}");
    let outcome = out.lines().find(|l| l.starts_with("  outcome: ")).unwrap_or_default();
    assert!(outcome.contains("safety violation of history"), "{tail}");
    assert!(outcome.contains("acknowledged adds lost:"), "{tail}");
    // The replayed run's faults, from its timeline (`index time node kind text`): the one
    // partition and its heal.
    let kinds: Vec<&str> = out.lines().filter_map(|l| l.split_whitespace().nth(3)).collect();
    let count = |k: &str| kinds.iter().filter(|&&x| x == k).count();
    assert_eq!(count("partition"), 1, "one partition");
    assert_eq!(count("heal"), 1, "healed once");
    for other in ["crash", "pause", "restart", "drop", "duplicate", "delay"] {
        assert_eq!(count(other), 0, "no {other}: the story needs only the partition");
    }
}

#[test]
fn the_sentinel_cluster_runs_the_same_from_any_folder_and_environment() {
    let Some(dir) = setup("redis-sentinel-twice") else { return };
    // The cluster as the campaign runs it, cut to its first 2 s (failovers need more, but
    // the start — full syncs through fork, sentinels writing their configs — is all there).
    let cluster = dir.join("programs/redis-set/sentinel.toml");
    let text = std::fs::read_to_string(&cluster).unwrap();
    assert!(text.contains("time_limit = \"12s\""), "the cluster file's time limit moved");
    std::fs::write(&cluster, text.replace("time_limit = \"12s\"", "time_limit = \"2s\"")).unwrap();
    let cluster = cluster.to_str().unwrap().to_string();
    let deep = dir.join("a/much/longer/folder/path");
    std::fs::create_dir_all(&deep).unwrap();
    // `fds`: weft started by a shell that leaves two descriptors open without close-on-exec
    // (as the CI runner or a terminal may), which no node may inherit.
    let run = |at: &Path, env: &[(&str, &str)], fds: bool| {
        let mut c = Command::new("sh");
        let open = if fds { "exec 7</dev/null 9</dev/null; " } else { "" };
        c.arg("-c").arg(format!("{open}exec \"$0\" \"$@\"")).arg(env!("CARGO_BIN_EXE_weft"));
        c.current_dir(at).args(["run", "--cluster", &cluster, "--out", "out"]);
        c.envs(env.iter().copied()).stdout(Stdio::piped()).stderr(Stdio::piped());
        c.spawn().expect("weft")
    };
    // At the same time: one of them may find the other's slot held, and must not care.
    let a = run(&dir, &[], false);
    let junk = [("LANG", "C.UTF-8"), ("TERM", "dumb"), ("JUNK", "xxxxxxxxxxxxxxxx")];
    let b = run(&deep, &junk, true);
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    let hash = |o: &Output| {
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        assert_eq!(o.status.code(), Some(0), "{out}{}", String::from_utf8_lossy(&o.stderr));
        out.lines().find_map(|l| l.split("trace hash ").nth(1).map(str::to_string)).unwrap()
    };
    assert_eq!(hash(&a), hash(&b), "the folder, environment or descriptors leaked into the run");
}
