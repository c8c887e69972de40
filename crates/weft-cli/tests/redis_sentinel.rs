//! The frozen Redis Sentinel write loss (Jepsen: Redis, 2013; `docs/redis.md`): the shrunk
//! counterexample `weft explore process -o cluster=programs/redis-set/sentinel.toml` found,
//! replayed on Debian's unmodified `redis-server` and `redis-sentinel`. The replay must end in
//! a `history` violation naming acknowledged adds the old primary lost (the trace hash is not
//! yet asserted: see the comment in the test).
//!
//! Redis Sentinel writes its working folder's absolute path into its config file, so the
//! length of those writes (which the trace records) depends on where the run's working folders
//! were: a replay reproduces the trace hash when the repro sits in a folder with the path the
//! campaign's `--out` had (`weft replay` puts the working folders beside the repro). This one
//! was found with `--out /tmp/weft-redis-sentinel-loss`, so the test replays it there.
//!
//! A repro pins every binary by content hash. The client is rebuilt here from
//! `programs/redis-set/redis-set.c` exactly as the repro's was (`cc -O1`, the same relative
//! path, so gcc 12.2.0 of Debian 12 gives the same bytes) and the recorded path is pointed at
//! it. Redis is Debian 12's package 5:7.0.15-1~deb12u10 (what `.ci/run` installs on Debian
//! 12). Skipped, with the reason printed, where redis is not installed or where a binary is
//! not the recorded one (another redis or gcc version): weft refuses such a replay (exit 2)
//! rather than run a different program, and that is not a failure of the capability.

use std::path::{Path, PathBuf};
use std::process::Command;

const REDIS: &str = "/usr/bin/redis-server";
const SENTINEL: &str = "/usr/bin/redis-sentinel";
const FROZEN: &str = "tests/golden/redis-sentinel-write-loss.json";
/// The client's path where the repro was recorded.
const RECORDED_CLIENT: &str = "/work/wt-jepsen2/programs/redis-set/redis-set";
/// The campaign's `--out`, where the replay must put its working folders.
const RECORDED_OUT: &str = "/tmp/weft-redis-sentinel-loss";

/// A folder holding the client, built as the recorded one was, and the repro pointed at it.
fn setup() -> Option<PathBuf> {
    for bin in [REDIS, SENTINEL] {
        if !Path::new(bin).exists() {
            println!(
                "skipped: {bin} is not installed (apt-get install redis-server redis-sentinel)"
            );
            return None;
        }
    }
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("redis-sentinel-loss");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("programs/redis-set")).unwrap();
    let source = crate_dir.join("../../programs/redis-set/redis-set.c");
    std::fs::copy(source, dir.join("programs/redis-set/redis-set.c")).unwrap();
    let ok = Command::new("cc")
        .current_dir(&dir)
        .args(["-O1", "-o", "programs/redis-set/redis-set", "programs/redis-set/redis-set.c"])
        .status()
        .expect("a C compiler (`cc`) is needed for this test");
    assert!(ok.success(), "cc failed for redis-set.c");
    let client = dir.join("programs/redis-set/redis-set");
    let text = std::fs::read_to_string(crate_dir.join(FROZEN)).unwrap();
    assert!(text.contains(RECORDED_CLIENT), "the frozen repro names the client it ran");
    let text = text.replace(RECORDED_CLIENT, client.to_str().unwrap());
    let out = Path::new(RECORDED_OUT);
    let _ = std::fs::remove_dir_all(out.join("work"));
    std::fs::create_dir_all(out).unwrap();
    std::fs::write(out.join("loss.json"), text).unwrap();
    Some(out.to_path_buf())
}

#[test]
fn the_frozen_sentinel_partition_replays_and_reports_the_lost_writes() {
    let Some(dir) = setup() else { return };
    let o = Command::new(env!("CARGO_BIN_EXE_weft"))
        .current_dir(&dir)
        .args(["replay", "--allow-exec", "loss.json"])
        .output()
        .expect("weft");
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
    // Known gap (docs/redis.md): same-seed runs of this cluster still differ now and then
    // (a source of real-machine state not yet found), so the trace hash is not asserted; the
    // loss itself must recur: exit 1 with the same hash, or exit 3 (diverged) with a replayed
    // outcome that still names lost acknowledged adds.
    let code = o.status.code();
    assert!(code == Some(1) || code == Some(3), "exit {code:?}\n{out}{err}");
    let outcome = out.lines().find(|l| l.starts_with("  outcome: ")).unwrap_or_default();
    assert!(outcome.contains("safety violation of history"), "{out}");
    assert!(outcome.contains("acknowledged adds lost:"), "{out}");
    let same = out.contains("reproduced: same outcome, same trace hash");
    println!("replayed: {}", if same { "same trace hash" } else { "diverged, loss recurred" });
    let frozen = std::fs::read_to_string(dir.join("loss.json")).unwrap();
    assert!(frozen.contains(r#""faults": 1"#), "the counterexample has one fault, the partition");
}
