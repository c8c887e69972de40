//! The frozen Redis Cluster write loss (`docs/redis.md`, "Redis Cluster"): the shrunk
//! counterexample `weft explore process -o cluster=programs/redis-cluster/cluster.toml
//! --faults partition=1/50` found (in its run 14 since 2026-12-06), replayed on Debian's unmodified
//! `redis-server` in cluster mode with an operator's shell script as the client (`redis-cli -c`
//! in a loop, forked and exec'd by `/bin/sh` with its output read through a pipe). The replay
//! must reproduce the recorded run bit for bit (same trace hash, exit 1), end in a `history`
//! violation naming acknowledged adds the isolated master lost, and show one partition (of
//! n0, the set's master) and its heal, nothing else. Skipped, with the reason printed, where
//! redis is not installed or is not the recorded binary (weft refuses such a replay, exit 2).

use std::path::Path;
use std::process::Command;

const FROZEN: &str = "tests/golden/redis-cluster-write-loss.json";

#[test]
fn the_frozen_cluster_partition_replays_bit_for_bit_and_reports_the_lost_writes() {
    if !Path::new("/usr/bin/redis-server").exists() {
        assert!(option_env!("WEFT_REQUIRE_PACKAGES").is_none(), "redis-server is missing");
        println!("skipped: redis-server is not installed (apt-get install redis-server)");
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("redis-cluster-loss");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join(FROZEN), dir.join("loss.json"))
        .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_weft"))
        .current_dir(&dir)
        .args(["replay", "--allow-exec", "--timeline", "loss.json"])
        .output()
        .expect("weft");
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    if o.status.code() == Some(2) && err.contains("changed since the repro was recorded") {
        println!("skipped: a binary differs from the recorded one: {}", err.trim());
        return;
    }
    let tail: String = out.lines().rev().take(4).collect::<Vec<_>>().join("\n");
    assert_eq!(o.status.code(), Some(1), "{tail}\n{err}");
    assert!(out.contains("reproduced: same outcome, same trace hash"), "{tail}");
    let outcome = out.lines().find(|l| l.starts_with("  outcome: ")).unwrap_or_default();
    assert!(outcome.contains("acknowledged adds lost:"), "{tail}");
    let kinds: Vec<&str> = out.lines().filter_map(|l| l.split_whitespace().nth(3)).collect();
    let count = |k: &str| kinds.iter().filter(|&&x| x == k).count();
    assert_eq!((count("partition"), count("heal")), (1, 1), "one partition, healed once");
    for other in ["crash", "pause", "restart", "drop", "duplicate", "delay"] {
        assert_eq!(count(other), 0, "no {other}: the story needs only the partition");
    }
    assert!(out.contains("partition {n0} | {n1 n2 n3 n4 n5}"), "n0, the set's master, is cut off");
    assert!(out.contains("Failover election won"), "its replica takes over");
}
