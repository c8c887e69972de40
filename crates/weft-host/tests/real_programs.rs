//! Real programs nobody here wrote, from Debian's packages, under the shim: memcached with its
//! default four worker threads, TCP and UDP on one port and a client node that sets and gets
//! keys; redis-server with its bio and jemalloc background threads; nginx with curl, haproxy
//! in front of nginx, iperf3 server and client, Python's `subprocess` (mosquitto, ZooKeeper and
//! a Redis Cluster run from their cluster
//! files in weft-cli's `tests/clusters.rs`). Each run passes and two runs of one
//! seed are identical. `.ci/run` installs the packages; where a program is not installed the
//! test says so and checks nothing else.

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

/// A folder under the test temp dir holding `files` (name, content), emptied first.
fn folder(name: &str, files: &[(&str, &str)]) -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (file, text) in files {
        std::fs::write(dir.join(file), text).unwrap();
    }
    dir
}

/// Each of `seeds` passes with every line of `lines` in its output, and runs twice alike.
fn runs_alike(cfg: HostConfig, seeds: std::ops::Range<u64>, lines: &[&str]) {
    for seed in seeds.clone() {
        let mut d = weft_core::Decisions::random(seed);
        let out =
            weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut weft_core::NullObserver)
                .unwrap();
        let text = out.render();
        assert_eq!(out.report.outcome, Outcome::Pass, "seed {seed}: {text}");
        for line in lines {
            assert!(text.contains(line), "seed {seed}: no {line:?} in {text}");
        }
    }
    let runner = ProcessRunner::new(cfg);
    for seed in seeds {
        assert!(check_seed(&runner, &Scenario::calm(), seed).is_none(), "seed {seed}");
    }
}

const NGINX_CONF: &str = "daemon off;\nmaster_process on;\nworker_processes WORKERS;\n\
    error_log stderr info;\npid nginx.pid;\nevents { worker_connections 64; }\n\
    http { access_log /dev/stdout; client_body_temp_path body; proxy_temp_path proxy;\n\
    fastcgi_temp_path fcgi; uwsgi_temp_path uwsgi; scgi_temp_path scgi;\n\
    server { listen 7000; listen [::]:7000;\n\
    location / { return 200 \"hello from nginx\\n\"; } } }\n";

fn nginx_cluster(workers: u32) -> HostConfig {
    let conf = NGINX_CONF.replace("WORKERS", &workers.to_string());
    let dir = folder(&format!("nginx-{workers}"), &[("nginx.conf", &conf)]);
    let prefix = format!("{}/", dir.display());
    let conf = dir.join("nginx.conf").display().to_string();
    let args = vec!["-p".into(), prefix, "-c".into(), conf, "-e".into(), "stderr".into()];
    let web = Group::new("web", "/usr/sbin/nginx", args, 1);
    let mut client =
        Group::new("client", "/usr/bin/curl", strings(&["-sS", "http://127.1.0.1:7000/"]), 1);
    client.start = SimDuration::from_millis(200);
    let mut cfg = HostConfig::cluster(vec![web, client]);
    cfg.time_limit = SimDuration::from_secs(2);
    cfg.on_idle = weft_host::OnIdle::Pass;
    cfg
}

/// nginx's master forks a worker that serves curl on another node; its log lines name
/// virtual pids and thread ids (read with `syscall(SYS_gettid)`), so two runs are alike. With
/// two workers the master passes each worker's channel to the other with `SCM_RIGHTS` over
/// their socketpairs (once refused by name), and both start and serve.
#[test]
fn nginx_serves_curl_with_one_worker_and_with_two_that_get_each_others_channels() {
    if !installed("/usr/sbin/nginx") || !installed("/usr/bin/curl") {
        return;
    }
    let lines = ["start worker process 20001", "n1 | hello from nginx", "\"GET / HTTP/1.1\" 200"];
    runs_alike(nginx_cluster(1), 0..3, &lines);
    let two = ["start worker process 20001", "start worker process 20002", "n1 | hello from nginx"];
    runs_alike(nginx_cluster(2), 0..3, &two);
}

/// iperf3's client fills its send buffer from `/dev/urandom` (128 KiB reads, past the 64 KiB
/// the shim's memfd holds) and runs a 1 MB test against the server on another node.
#[test]
fn iperf3_runs_a_test_between_nodes() {
    if !installed("/usr/bin/iperf3") {
        return;
    }
    let server = Group::new("server", "/usr/bin/iperf3", strings(&["-s", "-p", "7000", "-1"]), 1);
    let args = ["-c", "127.1.0.1", "-p", "7000", "-n", "1M"];
    let mut client = Group::new("client", "/usr/bin/iperf3", strings(&args), 1);
    client.start = SimDuration::from_millis(100);
    let mut cfg = HostConfig::cluster(vec![server, client]);
    cfg.time_limit = SimDuration::from_secs(5);
    runs_alike(cfg, 0..2, &["n1 | iperf Done.", "1.00 MBytes"]);
}

/// haproxy with its default two threads (each with a watchdog timer on its own CPU-time clock,
/// signalled to that thread) proxies curl's request to nginx on a third node.
#[test]
fn haproxy_proxies_curl_to_nginx() {
    for p in ["/usr/sbin/haproxy", "/usr/sbin/nginx", "/usr/bin/curl"] {
        if !installed(p) {
            return;
        }
    }
    let cfg_text = "global\n    log stderr format raw local0\ndefaults\n    mode http\n    log global\n\
        \x20   option httplog\n    timeout connect 1s\n    timeout client 5s\n    timeout server 5s\n\
        frontend fe\n    bind 127.1.0.1:7000\n    default_backend be\n\
        backend be\n    server web1 127.1.0.2:7000\n";
    let dir = folder("haproxy", &[("haproxy.cfg", cfg_text)]);
    let conf = dir.join("haproxy.cfg").display().to_string();
    let proxy = Group::new("proxy", "/usr/sbin/haproxy", vec!["-f".into(), conf, "-db".into()], 1);
    let mut web = nginx_cluster(1);
    let mut groups = vec![proxy];
    groups.append(&mut web.groups);
    let mut cfg = HostConfig::cluster(groups);
    cfg.groups[2].start = SimDuration::from_millis(1500);
    cfg.time_limit = SimDuration::from_secs(3);
    cfg.on_idle = weft_host::OnIdle::Pass;
    runs_alike(cfg, 0..2, &["fe be/web1", "n2 | hello from nginx"]);
}

const SUBPROCESS_PY: &str = "import subprocess\n\
r = subprocess.run(['sh', '-c', 'echo out; echo err >&2; exit 3'], capture_output=True)\n\
print('run:', r.returncode, r.stdout, r.stderr)\n\
print('pipeline:', subprocess.check_output(\"printf 'b\\\\na\\\\n' | sort\", shell=True))\n\
p = subprocess.Popen(['tr', 'a-z', 'A-Z'], stdin=subprocess.PIPE, stdout=subprocess.PIPE)\n\
print('communicate:', p.communicate(b'hello\\n')[0], p.returncode)\n\
try:\n    subprocess.run(['/nonexistent/program'])\nexcept FileNotFoundError as e:\n    print('missing:', e.errno)\n";

/// Python's `subprocess` (vfork, pipes on the child's stdio, `close_range` of the rest, exec,
/// and the close-on-exec pipe that reports the exec's errno) runs as natively.
#[test]
fn python_subprocess_pipes_and_waits_for_children() {
    if !installed("/usr/bin/python3") {
        return;
    }
    let dir = folder("python-subprocess", &[("sp.py", SUBPROCESS_PY)]);
    let script = dir.join("sp.py").display().to_string();
    let group = Group::new("py", "/usr/bin/python3", vec![script], 1);
    let cfg = HostConfig::cluster(vec![group]);
    let lines = [
        "run: 3 b'out\\n' b'err\\n'",
        "pipeline: b'a\\nb\\n'",
        "communicate: b'HELLO\\n' 0",
        "missing: 2",
    ];
    runs_alike(cfg, 0..2, &lines);
}
