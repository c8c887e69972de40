//! TCP-like streams between real processes: connect, accept, ordered bytes, EOF, and resets
//! when a node crashes; deterministic per seed; IPv6 sockets between nodes.

mod common;
use weft_core::{
    Decisions, EventKind, NullObserver, Outcome, Ratio, Recorder, Scenario, SimDuration,
};

fn config() -> weft_host::HostConfig {
    common::config("tcpecho", &["{id}", "{addr}", "{others}"], 3)
}

#[test]
fn tcp_echo_between_processes_is_deterministic() {
    let run = |seed| {
        let mut d = Decisions::random(seed);
        weft_host::run_once(&config(), &Scenario::calm(), &mut d, &mut NullObserver).unwrap()
    };
    let a = run(4);
    let text = a.render();
    assert_eq!(a.report.outcome, Outcome::Pass, "{text}");
    for id in 1..=2 {
        for m in 0..3 {
            assert!(text.contains(&format!("n{id} | echo: LINE {m} FROM {id}")), "{text}");
        }
        assert!(text.contains(&format!("n{id} | final read 0")), "{text}");
    }
    assert_eq!(text.matches("client done (eof)").count(), 2, "{text}");
    assert!(text.contains("n0 | served 2"), "{text}");
    assert_eq!(run(4).render(), text);
    assert!((5..12).any(|s| run(s).render() != text), "seeds should change timing");
}

#[test]
fn a_crashed_peer_resets_its_streams() {
    let mut s = Scenario::calm();
    s.rates.crash = Ratio::new(1, 4);
    s.budget.crashes = 1;
    s.restart = false;
    s.fault_phase = SimDuration::from_millis(30);
    let mut cfg = config();
    cfg.groups[0].exit_codes = vec![0, 1, 2];
    let mut saw_reset = false;
    for seed in 0..10 {
        let mut rec = Recorder::default();
        let mut d = Decisions::random(seed);
        let out = weft_host::run_once(&cfg, &s, &mut d, &mut rec).unwrap();
        let crashed = rec.events.iter().any(|e| e.kind == EventKind::Crash);
        let reset = rec.events.iter().any(|e| e.summary.contains("reset"));
        if crashed && reset {
            saw_reset = true;
            // A surviving process saw it: an error on a read (the server's "client done
            // (Connection reset by peer)", a client's "read: …" or "final read -1"), or a
            // refused connect.
            let text = out.render();
            assert!(
                text.contains("Connection reset")
                    || text.contains("final read -1")
                    || text.contains("connect:"),
                "{text}"
            );
        }
    }
    assert!(saw_reset, "some seed should crash a node with open streams");
}

/// An IPv6 client reaches another node's dual-stack listener at its IPv4-mapped address, both
/// see IPv4-mapped names, and any other IPv6 address is unreachable (one node: `parity.rs`).
#[test]
fn ipv6_sockets_reach_other_nodes_at_mapped_addresses() {
    let cfg = common::config("inet6", &["{id}"], 2);
    let mut d = Decisions::random(3);
    let out = weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap();
    let text = out.render();
    assert_eq!(out.report.outcome, Outcome::Pass, "{text}");
    for line in [
        "n0 | server: peer [::ffff:127.1.0.2]",
        "n1 | client: connect 0",
        "n1 | client: name [::ffff:127.1.0.2]",
        "n1 | client: echo 2 hi",
        "n1 | client: connect 2001:db8::1 -1 Network is unreachable",
        "n1 | client: bind 2001:db8::1 -1 Cannot assign requested address",
    ] {
        assert!(text.contains(line), "missing {line:?} in:\n{text}");
    }
}

#[test]
fn a_full_window_makes_a_sender_wait_for_its_reader() {
    let cfg = common::config("window", &["{id}"], 2);
    let run = || {
        let mut d = Decisions::random(3);
        weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap()
    };
    let out = run();
    let text = out.render();
    assert_eq!(out.report.outcome, Outcome::Pass, "{text}");
    let window = 256 * 1024;
    for line in [
        format!("n1 | non-blocking: took {window} of 1048576, then -1 (EAGAIN)"),
        "n1 | writable while full: 0".into(),
        format!("n1 | blocking: sent the other {}, after the reader began: 1", (1 << 20) - window),
        "n0 | received 1048576 bytes, 0 wrong".into(),
    ] {
        assert!(text.contains(&line), "missing {line:?} in:\n{text}");
    }
    assert_eq!(run().report.trace_hash, out.report.trace_hash);
}

/// A connect whose SYN (or SYN-ACK) meets a partition is not lost for good: the handshake is
/// sent again after 1 s (then 2, 4, … s, as Linux's SYN retransmission), so the client connects
/// once the partition has healed and its echo goes through. Before, the connect never returned.
#[test]
fn a_handshake_lost_to_a_partition_is_sent_again_and_connects_after_the_heal() {
    let mut s = Scenario::calm();
    s.rates.partition = Ratio::new(1, 2);
    s.budget.partitions = 1;
    s.outage_max = SimDuration::from_millis(500);
    s.fault_phase = SimDuration::from_millis(3);
    let mut lost_seen = 0;
    for seed in 0..16 {
        let mut rec = Recorder::default();
        let mut d = Decisions::random(seed);
        let out = weft_host::run_once(&config(), &s, &mut d, &mut rec).unwrap();
        let text = out.render();
        assert_eq!(out.report.outcome, Outcome::Pass, "seed {seed}: {text}");
        assert_eq!(text.matches("client done (eof)").count(), 2, "seed {seed}: {text}");
        let lost =
            rec.events.iter().find(|e| e.summary.ends_with("syn lost (link cut), again in 1s"));
        let Some(lost) = lost else { continue };
        lost_seen += 1;
        let again = rec.events.iter().find(|e| e.summary.ends_with("syn again"));
        let again = again.unwrap_or_else(|| panic!("seed {seed}: no retransmission: {text}"));
        assert_eq!(again.time.as_nanos() - lost.time.as_nanos(), 1_000_000_000, "{text}");
    }
    assert!(lost_seen >= 8, "most seeds should partition a connect's SYN: {lost_seen}");
}

/// `splice` from a simulated stream into a pipe moves the stream's bytes, as many as asked or
/// as are there, and answers 0 at end-of-file: the kernel would have spliced from the
/// never-connected placeholder socket and answered an error.
#[test]
fn splice_from_a_stream_moves_its_bytes_and_sees_its_end() {
    let cfg = common::config("tcpsplice", &["{id}", "127.1.0.1"], 2);
    let mut d = Decisions::random(1);
    let out = weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap();
    assert_eq!(
        common::passing_lines(&out),
        ["got 5 [hello]", "got 5 [ over]", "got 4 [ tcp]", "end 0 total 14"]
    );
}

/// The node's socket tables (`tests/c/socktable.c`): `/proc/net/tcp`, `tcp6` and `udp` list
/// the simulated listeners, the connection and the bound datagram socket in the kernel's
/// format, a `/proc/<pid>/fd` link (`readlink` or `readlinkat`) names the socket's inode
/// there, and `ss -p` (which finds no socket diagnostics module and reads the tables) names the
/// processes holding each, by virtual pid, as `lsof -i` does (it matches a descriptor's `stat`
/// inode against the tables); the same from every seed. The kernel's tables had shown only the
/// unbound placeholders, so no port was ever open (Galera's rsync state transfer waited for
/// ever).
#[test]
fn proc_net_tables_and_ss_show_the_nodes_simulated_sockets() {
    let cfg = common::config("socktable", &[], 1);
    let lines = |seed| {
        let mut d = Decisions::random(seed);
        let out = weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap();
        assert_eq!(out.report.outcome, Outcome::Pass, "{}", out.render());
        out.lines.iter().map(|l| l.text.clone()).collect::<Vec<_>>()
    };
    // ss and lsof pad their columns by what they print: compare the fields.
    let fields = |l: &String| l.split_whitespace().collect::<Vec<_>>().join(" ");
    let seen = lines(1);
    let has = |want: &str| assert!(seen.iter().any(|l| l == want), "no {want:?} in {seen:#?}");
    has("sock_diag: -1 Protocol not supported");
    has("fd link: socket:[268435457]");
    has("fd linkat: socket:[268435457]");
    has("/proc/net/tcp:    0: 00000000:115C 00000000:0000 0A 00000000:00000000 00:00000000 \
         00000000     0        0 268435457 1 0000000000000000 100 0 0 10 0");
    has("/proc/net/tcp:    1: 0100007F:C000 0100007F:115C 01 00000000:00000000 00:00000000 \
         00000000     0        0 268435460 1 0000000000000000 20 4 0 10 -1");
    has("/proc/net/tcp6:    0: 00000000000000000000000000000000:115D \
         00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     \
         0        0 268435458 1 0000000000000000 100 0 0 10 0");
    has("/proc/net/udp:     0: 0100007F:14E9 00000000:0000 07 00000000:00000000 00:00000000 \
         00000000     0        0 268435459 2 0000000000000000 0");
    let ss: Vec<String> = seen
        .iter()
        .filter(|l| l.starts_with("LISTEN") || l.starts_with("ESTAB") || l.starts_with("UNCONN"))
        .map(fields)
        .collect();
    let holders = |fd: u32, ss: u32| {
        format!("users:((\"ss\",pid={ss},fd={fd}),(\"sh\",pid=20001,fd={fd}),(\"socktable\",pid=1000,fd={fd}))")
    };
    let want = [
        format!("LISTEN 0 0 0.0.0.0:4444 0.0.0.0:* {}", holders(3, 20002)),
        format!("ESTAB 0 0 127.0.0.1:49152 127.0.0.1:4444 {}", holders(6, 20002)),
        format!("ESTAB 0 0 127.0.0.1:4444 127.0.0.1:49152 {}", holders(7, 20002)),
        format!("LISTEN 0 0 *:4445 *:* {}", holders(4, 20002)),
        format!("UNCONN 0 0 127.0.0.1:5353 0.0.0.0:* {}", holders(5, 20003)),
        format!("LISTEN 0 0 0.0.0.0:4444 0.0.0.0:* {}", holders(3, 20004)),
    ];
    assert_eq!(ss, want, "ss -tanp, ss -uanp, then ss -nlp for one port");
    let lsof: Vec<String> =
        seen.iter().filter(|l| l.starts_with("socktable")).map(fields).collect();
    let want = [
        "socktable 1000 root 3u IPv4 268435457 0t0 TCP *:4444 (LISTEN)",
        "socktable 1000 root 4u IPv6 268435458 0t0 TCP *:4445 (LISTEN)",
        "socktable 1000 root 5u IPv4 268435459 0t0 UDP 127.0.0.1:5353",
        "socktable 1000 root 6u IPv4 268435460 0t0 TCP 127.0.0.1:49152->127.0.0.1:4444 (ESTABLISHED)",
        "socktable 1000 root 7u IPv4 268435461 0t0 TCP 127.0.0.1:4444->127.0.0.1:49152 (ESTABLISHED)",
    ];
    assert_eq!(lsof, want, "lsof -i of the program: each socket by the inode the tables show");
    assert_eq!(lines(2), seen, "the same from another seed");
}
