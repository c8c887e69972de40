//! End to end through `fork`: a redis primary and two replicas (the Debian `redis-server`,
//! started by `sh -c` that execs it, so the shim follows the exec) complete a full
//! synchronisation, which redis makes in a forked child writing the snapshot into a pipe; and
//! the same seed twice gives the same output and trace hash. Default configuration apart from
//! addresses, `save ""`, no AOF and protected mode off (jemalloc's background thread on).

mod common;
use std::path::Path;
use weft_core::{Decisions, NullObserver, Outcome, Scenario, SimDuration};
use weft_host::HostConfig;

const REDIS: &str = "/usr/bin/redis-server";
const SYNCED: &str = "MASTER <-> REPLICA sync: Finished with success";

fn run(seed: u64) -> weft_host::RunOutput {
    assert!(Path::new(REDIS).exists(), "{REDIS} is needed (apt-get install redis-server)");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("redis-fork");
    let _ = std::fs::remove_dir_all(&dir);
    for n in 0..3 {
        std::fs::create_dir_all(dir.join(n.to_string())).unwrap();
    }
    let common = format!(
        "{REDIS} --port 7000 --bind {{ip}} --save '' --appendonly no --protected-mode no \
         --dir {}/{{id}}",
        dir.display()
    );
    let script = format!(
        "if [ {{id}} = 0 ]; then exec {common}; else exec {common} --replicaof 127.1.0.1 7000; fi"
    );
    let mut cfg = HostConfig::new("/bin/sh", vec!["-c".into(), script], 3);
    cfg.time_limit = SimDuration::from_secs(25);
    let mut d = Decisions::random(seed);
    weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap()
}

#[test]
fn redis_replicas_complete_a_full_sync_through_fork() {
    let out = run(1);
    assert_eq!(out.report.outcome, Outcome::Pass, "{}", out.render());
    for node in [1, 2] {
        assert!(
            out.lines.iter().any(|l| l.node == node && l.text.contains(SYNCED)),
            "replica n{node} did not finish its sync:\n{}",
            out.render()
        );
    }
    // The snapshot went through a forked child, which ended well.
    for what in [
        "Background RDB transfer started by pid",
        "Background RDB transfer terminated with success",
    ] {
        assert!(
            out.lines.iter().any(|l| l.node == 0 && l.text.contains(what)),
            "primary never logged `{what}`:\n{}",
            out.render()
        );
    }
    let again = run(1);
    assert_eq!(again.render(), out.render(), "same seed, different output");
    assert_eq!(again.report.trace_hash, out.report.trace_hash);
}
