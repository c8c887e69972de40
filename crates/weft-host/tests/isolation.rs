//! What keeps a run honest: processes in their own network namespace, and programs the shim
//! cannot see into refused up front.

mod common;
use weft_core::{Decisions, NullObserver, Outcome, Scenario};

fn run(cfg: &weft_host::HostConfig) -> weft_host::RunOutput {
    let mut d = Decisions::random(1);
    weft_host::run_once(cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap()
}

/// The output lines of a passing calm run of `cfg` with decisions seeded by `seed`.
fn seeded_lines(cfg: &weft_host::HostConfig, seed: u64) -> Vec<String> {
    let mut d = Decisions::random(seed);
    let out = weft_host::run_once(cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap();
    common::passing_lines(&out).iter().map(|s| s.to_string()).collect()
}

#[test]
fn processes_get_their_own_network_namespace_where_available() {
    let cfg = common::config("netns", &[], 1);
    let out = run(&cfg);
    assert_eq!(out.report.outcome, Outcome::Pass);
    let ours = std::fs::read_link("/proc/self/ns/net").unwrap().display().to_string();
    let theirs = &out.lines[0].text;
    assert!(theirs.starts_with("net:["), "{theirs}");
    if weft_host::netns_available() {
        assert_ne!(theirs, &ours, "the process should not share the host's network");
        assert!(out.notes.is_empty(), "{:?}", out.notes);
    } else {
        assert_eq!(theirs, &ours);
        assert!(out.notes.iter().any(|n| n.contains("namespace")), "{:?}", out.notes);
    }
    let mut off = cfg.clone();
    off.netns = weft_host::Netns::Off;
    assert_eq!(run(&off).lines[0].text, ours);
}

#[test]
fn go_binaries_are_refused_by_their_build_info() {
    // A dynamically linked binary carrying Go's build-info magic, as every Go binary does.
    let mut bytes = std::fs::read(common::compile("netns", &[])).unwrap();
    bytes.extend_from_slice(b"\xff Go buildinf:\x08\x02");
    let fake = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("fake-go");
    std::fs::write(&fake, bytes).unwrap();
    let mut cfg = common::config("netns", &[], 1);
    cfg.groups[0].program = fake;
    let o = run(&cfg).report.outcome;
    assert!(matches!(&o, Outcome::Unsupported { detail } if detail.contains("Go binary")), "{o:?}");
}

#[test]
fn cpu_time_timers_are_unsupported() {
    let o = run(&common::config("timer", &[], 1)).report.outcome;
    assert!(
        matches!(&o, Outcome::Unsupported { detail } if detail.contains("ITIMER_PROF")),
        "{o:?}"
    );
}

/// glibc's getaddrinfo works under the shim: its own netlink traffic (AI_ADDRCONFIG asks the
/// kernel which families are configured) runs as is, and the node's namespace has its address.
#[test]
fn getaddrinfo_with_and_without_addrconfig() {
    for extra in [&[][..], &["addrconfig"][..]] {
        let mut args = vec!["{id}", "{ip}", "{port}", "127.1.0.1"];
        args.extend_from_slice(extra);
        let out = run(&common::config("resolve", &args, 2));
        assert_eq!(out.report.outcome, Outcome::Pass, "{extra:?}: {}", out.render());
        assert!(out.render().contains("n0 | got 2 bytes"), "{}", out.render());
    }
}

/// A program that prints what it can learn of where and how it was started, and writes its
/// working directory into a file and reads it back (as redis-sentinel does with its config).
fn where_am_i(work: &std::path::Path) -> weft_host::HostConfig {
    let script = "pwd; echo \"$HOME $PWD $LANG ${CARGO:-no-cargo}\"; pwd > here; cat here";
    let mut cfg = weft_host::HostConfig::new("/bin/sh", vec!["-c".into(), script.into()], 2);
    cfg.work_dir = Some(work.to_path_buf());
    cfg
}

#[test]
fn processes_see_the_same_folder_and_environment_wherever_weft_runs() {
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let a = run(&where_am_i(&tmp.join("view-a")));
    let b = run(&where_am_i(&tmp.join("view-b/a/longer/path")));
    assert_eq!(a.report.outcome, Outcome::Pass);
    let text: Vec<&str> = a.lines.iter().map(|l| l.text.as_str()).collect();
    // cargo runs this test with CARGO and LANG (or not) set: the process sees neither.
    assert!(text.iter().all(|t| !t.contains(env!("CARGO_PKG_NAME"))), "{text:?}");
    if weft_host::netns_available() {
        assert!(text.contains(&"/tmp/weft-run/n0"), "{text:?}");
        assert!(text.contains(&"/tmp/weft-run/n1 /tmp/weft-run/n1  no-cargo"), "{text:?}");
        assert_eq!(a.report.trace_hash, b.report.trace_hash, "the folder leaked into the run");
        let texts = |o: &weft_host::RunOutput| -> Vec<String> {
            o.lines.iter().map(|l| l.text.clone()).collect()
        };
        assert_eq!(texts(&a), texts(&b));
    }
}

/// Each node has its own System V IPC namespace and its own `/dev/shm`: what one run leaves
/// (PostgreSQL's segments after a crash) is gone with it, ids start afresh, and the machine's
/// shared-memory files are not the node's.
#[test]
fn shared_memory_is_the_nodes_own_and_gone_with_the_run() {
    if !weft_host::netns_available() {
        println!("skipped: no namespaces here");
        return;
    }
    let host_file = std::path::Path::new("/dev/shm/weft-ipc-test-host-file");
    std::fs::write(host_file, "the machine's").unwrap();
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("ipc-work");
    let mut cfg = common::config("ipc", &[host_file.to_str().unwrap()], 1);
    cfg.work_dir = Some(tmp);
    for _ in 0..2 {
        let out = run(&cfg);
        assert_eq!(
            common::passing_lines(&out),
            [
                "System V segment: created, id 0",
                "POSIX shared memory: created",
                "the machine's /dev/shm file visible: 0"
            ]
        );
    }
    let _ = std::fs::remove_file(host_file);
}

/// The kernel's `AT_RANDOM` bytes and the stack-protector canary made from them come from the
/// seed: the same in two runs of one seed, different for another, the same in a new thread and
/// a forked child, and every stack-protected function of the program still returns.
/// (A canary in a stale stack slot reached corosync's packets, so no two runs were alike.)
#[test]
fn the_stack_canary_and_at_random_come_from_the_seed() {
    let bin = common::compile("atrandom", &["-fstack-protector-all", "-pthread"]);
    let native = std::process::Command::new(&bin).output().expect("runs natively");
    let cfg = weft_host::HostConfig::new(bin, vec![], 1);
    let go = |seed| seeded_lines(&cfg, seed);
    let a = go(1);
    assert_eq!(a[2..], ["thread's canary is main's 1", "child's canary is main's 1"], "{a:?}");
    assert_eq!(go(1), a, "one seed, one canary");
    assert_ne!(go(2)[..2], a[..2], "another seed, another canary");
    let native = String::from_utf8_lossy(&native.stdout).into_owned();
    assert!(!native.contains(&a[0]), "natively the kernel's bytes: {native}");
}

/// C++'s `std::random_device` draws from the seed, on libstdc++'s default source (the `RDSEED`
/// or `RDRAND` instruction, which no hook sees: OpenDHT's node ids differed in every run) and on
/// `/dev/urandom`: the same in two runs of one seed, different for another.
#[test]
fn cxx_random_devices_draw_from_the_seed() {
    let cfg = weft_host::HostConfig::new(common::compile_cxx("randdev"), vec![], 1);
    let go = |seed| seeded_lines(&cfg, seed).concat();
    let a = go(1);
    assert!(a.starts_with("random_device: "), "{a}");
    assert_eq!(go(1), a, "one seed, one draw");
    assert_ne!(go(2), a, "another seed, another draw");
}

/// Each node has its own `/run` (an overlay on the machine's): a pid file one node writes
/// there is not the other's, the machine's files show through, and nothing of the run is
/// left in the machine's `/run` (nodes of one daemon met there: corosync's lock, exim's pid
/// file from the run before).
#[test]
fn each_node_has_its_own_run_directory() {
    let script = "if [ {id} = 0 ]; then echo n0 > /run/weft-privrun-test.pid; sleep 0.01; \
                  else sleep 0.005; fi; cat /run/weft-privrun-test.pid 2>/dev/null || echo none; \
                  test -d /run/lock && echo machine dirs show";
    let cfg = weft_host::HostConfig::new("/bin/sh", vec!["-c".into(), script.into()], 2);
    let out = run(&cfg);
    let text = out.render();
    assert_eq!(out.report.outcome, Outcome::Pass, "{text}");
    let real = std::path::Path::new("/run/weft-privrun-test.pid");
    if out.notes.iter().any(|n| n.contains("overlay on /run")) {
        assert!(!weft_host::netns_available() || text.contains("n1 | n0"), "{text}");
        let _ = std::fs::remove_file(real);
        return;
    }
    assert!(text.contains("n0 | n0"), "{text}");
    assert!(text.contains("n1 | none"), "the other node's pid file: {text}");
    assert_eq!(text.matches("machine dirs show").count(), 2, "{text}");
    assert!(!real.exists(), "the run left {} behind", real.display());
}

/// Each node has its own `/tmp` (an overlay on the machine's) when it runs in a working folder,
/// as the CLI's runs do: a file one node writes there is not the other's, the machine's files
/// show through, the working directory is still the run's folder under `/tmp/weft-run`, and
/// nothing of the run is left in the machine's `/tmp` (Python's `tempfile.mkdtemp` found the
/// names the run before had left there taken, and every run of one seed differed).
#[test]
fn each_node_has_its_own_tmp_directory() {
    if !weft_host::netns_available() {
        return; // no mount namespace: the machine's /tmp
    }
    let machine = std::path::Path::new("/tmp/weft-privtmp-machine");
    std::fs::write(machine, "x").unwrap();
    let script = "if [ {id} = 0 ]; then echo n0 > /tmp/weft-privtmp-test; sleep 0.01; \
                  else sleep 0.005; fi; cat /tmp/weft-privtmp-test 2>/dev/null || echo none; \
                  test -e /tmp/weft-privtmp-machine && echo machine files show; pwd; \
                  stat -c %a /tmp";
    let mut cfg = weft_host::HostConfig::new("/bin/sh", vec!["-c".into(), script.into()], 2);
    cfg.work_dir = Some(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("privtmp"));
    let out = run(&cfg);
    let text = out.render();
    assert_eq!(out.report.outcome, Outcome::Pass, "{text}");
    assert!(text.contains("n0 | n0"), "{text}");
    assert!(text.contains("n1 | none"), "the other node's file: {text}");
    assert_eq!(text.matches("machine files show").count(), 2, "{text}");
    assert!(text.contains("n1 | /tmp/weft-run/n1"), "{text}");
    assert_eq!(text.matches("| 1777").count(), 2, "{text}");
    let real = std::path::Path::new("/tmp/weft-privtmp-test");
    assert!(!real.exists(), "the run left {} behind", real.display());
}

/// Each node has its own `/var/tmp`, a folder of the run's (FRR's `bgpd` keeps a directory
/// named by its pid there, and the one a crashed run left met the next run of the seed): a
/// file one node writes there is not the other's, lands in the run's `var-tmp/n0`, and nothing
/// of the run is left in the machine's `/var/tmp`.
#[test]
fn each_node_has_its_own_var_tmp_directory() {
    if !weft_host::netns_available() {
        return; // no mount namespace: the machine's /var/tmp
    }
    let script = "if [ {id} = 0 ]; then echo n0 > /var/tmp/weft-vartmp-test; sleep 0.01; \
                  else sleep 0.005; fi; cat /var/tmp/weft-vartmp-test 2>/dev/null || echo none; \
                  stat -c %a /var/tmp";
    let mut cfg = weft_host::HostConfig::new("/bin/sh", vec!["-c".into(), script.into()], 2);
    let work = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("privvartmp");
    cfg.work_dir = Some(work.clone());
    let out = run(&cfg);
    let text = out.render();
    assert_eq!(out.report.outcome, Outcome::Pass, "{text}");
    assert!(text.contains("n0 | n0"), "{text}");
    assert!(text.contains("n1 | none"), "the other node's file: {text}");
    assert_eq!(text.matches("| 1777").count(), 2, "{text}");
    let kept = work.join("slot0/var-tmp/n0/weft-vartmp-test");
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "n0\n", "{}", kept.display());
    let real = std::path::Path::new("/var/tmp/weft-vartmp-test");
    assert!(!real.exists(), "the run left {} behind", real.display());
}

/// Nodes may have addresses outside `127.0.0.0/8` (`addresses = "10.9.0.1"`: OpenDHT takes a
/// loopback peer for itself): a datagram to another node's address arrives, names resolve to
/// the chosen addresses, and the kernel's own view (`lo` carries the node's address) agrees.
#[test]
fn nodes_can_have_addresses_outside_loopback() {
    if !weft_host::netns_available() {
        return; // refused without the nodes' own network namespaces (the unit tests say so)
    }
    let base = u32::from(std::net::Ipv4Addr::new(10, 9, 0, 1));
    let args = ["{id}", "{ip}", "{port}", "10.9.0.1"].map(String::from).to_vec();
    let mut cfg = weft_host::HostConfig::new(common::compile("resolve", &[]), args, 2);
    cfg.ip_base = base;
    let out = run(&cfg);
    assert_eq!(out.report.outcome, Outcome::Pass, "{}", out.render());
    assert!(out.render().contains("n0 | got 2 bytes"), "{}", out.render());
    let script = "getent hosts n0 n1 | tr -s ' '; ip -4 -o addr show lo | grep -o '10[.0-9]*/32'";
    let mut cfg = weft_host::HostConfig::new("/bin/sh", vec!["-c".into(), script.into()], 2);
    cfg.ip_base = base;
    let text = run(&cfg).render();
    assert!(text.contains("n1 | 10.9.0.1 n0\n"), "{text}");
    assert!(text.contains("n1 | 10.9.0.2 n1\n"), "{text}");
    assert!(text.contains("n1 | 10.9.0.2/32\n"), "{text}");
}

/// The loader's cache a node sees is the machine's padded to a fixed size, so where the
/// loader maps libraries does not depend on how many the machine has installed (installing
/// unrelated packages moved the Redis goldens' traces); programs still find their libraries.
#[test]
fn the_loaders_cache_has_a_machine_independent_size() {
    if !weft_host::netns_available() || !std::path::Path::new("/etc/ld.so.cache").exists() {
        return; // no mount namespace (or no cache): the machine's
    }
    let script = "stat -c %s /etc/ld.so.cache; python3 -c 'import ssl; print(\"ssl loads\")'";
    let cfg = weft_host::HostConfig::new("/bin/sh", vec!["-c".into(), script.into()], 1);
    let out = run(&cfg);
    assert_eq!(out.report.outcome, Outcome::Pass, "{}", out.render());
    let real = std::fs::metadata("/etc/ld.so.cache").unwrap().len();
    let size = real.div_ceil(1 << 20).max(1) << 20;
    assert_eq!(common::passing_lines(&out), [size.to_string().as_str(), "ssl loads"]);
}

/// Every node's name (`n<id>`, its host name) resolves to the address other nodes reach it at,
/// for every node, through the ordinary `/etc/hosts` lookup (Erlang's `-sname`, Java's
/// `getLocalHost` and squid look up their own name).
#[test]
fn node_names_resolve_to_node_addresses() {
    let script = "getent hosts n0 n1 \"$(hostname)\" | tr -s ' '";
    let cfg = weft_host::HostConfig::new("/bin/sh", vec!["-c".into(), script.into()], 2);
    let out = run(&cfg);
    if !weft_host::netns_available() {
        return; // no mount namespace: the machine's /etc/hosts
    }
    let text = out.render();
    for node in ["n0", "n1"] {
        assert!(text.contains(&format!("{node} | 127.1.0.1 n0\n")), "{text}");
        assert!(text.contains(&format!("{node} | 127.1.0.2 n1\n")), "{text}");
    }
    assert_eq!(text.matches("127.1.0.1 n0\n").count(), 3, "n0's own name: {text}");
}
