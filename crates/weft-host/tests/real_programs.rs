//! Real programs nobody here wrote, from Debian's packages, under the shim: memcached with its
//! default four worker threads, TCP and UDP on one port and a client node that sets and gets
//! keys; redis-server with its bio and jemalloc background threads. Each run passes and two
//! runs of one seed are identical. `.ci/run` installs both packages; where a program is not
//! installed the test says so and checks nothing else.

mod common;
use std::path::Path;
use weft_core::{Outcome, Scenario, SimDuration};
use weft_explore::check_seed;
use weft_host::{Group, HostConfig, ProcessRunner};

fn installed(program: &str) -> bool {
    let ok = Path::new(program).exists();
    if !ok {
        assert!(
            option_env!("WEFT_REQUIRE_PACKAGES").is_none(),
            "{program} is missing (.ci/run installs it)"
        );
        println!("skipped: {program} is not installed (apt-get install it to run this test)");
    }
    ok
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn memcached_cluster() -> HostConfig {
    let server = Group::new(
        "memcached",
        "/usr/bin/memcached",
        strings(&["-u", "root", "-l", "{ip}", "-p", "{port}", "-U", "{port}"]),
        1,
    );
    let mut client = Group::new(
        "client",
        common::compile("mcclient", &[]),
        strings(&["{peers:memcached}", "20"]),
        1,
    );
    client.start = SimDuration::from_millis(50);
    let mut cfg = HostConfig::cluster(vec![server, client]);
    cfg.time_limit = SimDuration::from_secs(2);
    cfg.forbid = Some("MISMATCH".into());
    cfg
}

#[test]
fn memcached_serves_a_client_over_tcp_and_udp_deterministically() {
    if !installed("/usr/bin/memcached") {
        return;
    }
    let cfg = memcached_cluster();
    for seed in 0..10 {
        let mut d = weft_core::Decisions::random(seed);
        let out =
            weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut weft_core::NullObserver)
                .unwrap();
        assert_eq!(out.report.outcome, Outcome::Pass, "seed {seed}: {}", out.render());
        let text = out.render();
        assert!(text.contains("ok 20 keys") && text.contains("udp get ok"), "{text}");
    }
    let runner = ProcessRunner::new(cfg);
    for seed in 0..10 {
        assert!(check_seed(&runner, &Scenario::calm(), seed).is_none(), "seed {seed}");
    }
}

#[test]
fn redis_starts_its_threads_and_serves_deterministically() {
    if !installed("/usr/bin/redis-server") {
        return;
    }
    let args = strings(&["--port", "{port}", "--bind", "{ip}", "--save", "", "--daemonize", "no"]);
    let mut cfg = HostConfig::new("/usr/bin/redis-server", args, 1);
    cfg.time_limit = SimDuration::from_secs(1);
    let mut d = weft_core::Decisions::random(1);
    let out =
        weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut weft_core::NullObserver).unwrap();
    assert_eq!(out.report.outcome, Outcome::Pass, "{}", out.render());
    let text = out.render();
    assert!(text.contains("Ready to accept connections"), "{text}");
    // Its three bio threads and jemalloc's background thread (which jemalloc creates through
    // dlsym(RTLD_NEXT)) are all simulated: unseen, runs of one seed differed.
    let runner = ProcessRunner::new(cfg);
    for seed in 0..5 {
        assert!(check_seed(&runner, &Scenario::calm(), seed).is_none(), "seed {seed}");
    }
}
