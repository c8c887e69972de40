//! The cluster files the README's "Real programs" commands run, run as a user runs them:
//! `weft run --cluster programs/clusters/F` from the repository's root, twice, with the same
//! output and trace hash, and the lines that show the program did its job. `.ci/run` installs
//! the packages; elsewhere a missing one skips its file, saying so.

use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// Whether every path in `need` exists (else the reason is printed, or, under `.ci/run`, the
/// test fails).
fn installed(need: &[&str]) -> bool {
    for p in need {
        if !Path::new(p).exists() {
            assert!(option_env!("WEFT_REQUIRE_PACKAGES").is_none(), "{p} is missing");
            println!("skipped: {p} is not installed");
            return false;
        }
    }
    true
}

/// `weft ARGS… --out OUT` from the repository's root, `OUT` named after `name`: the exit code,
/// standard output and standard error.
fn weft(name: &str, args: &[&str]) -> (Option<i32>, String, String) {
    let out = root().join("target/tmp/clusters-test").join(name);
    let o = Command::new(env!("CARGO_BIN_EXE_weft"))
        .current_dir(root())
        .args(args)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("weft runs");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (o.status.code(), text(&o.stdout), text(&o.stderr))
}

/// Runs the cluster file twice; both runs pass with the same output, which holds `lines`.
fn runs_twice_alike(file: &str, lines: &[&str]) {
    let path = format!("programs/clusters/{file}");
    let run = || {
        let (code, text, err) = weft(file, &["run", "--cluster", &path]);
        assert_eq!(code, Some(0), "{file}: {text}{err}");
        text
    };
    let first = run();
    for line in lines {
        assert!(first.contains(line), "{file}: no {line:?} in\n{first}");
    }
    assert_eq!(run(), first, "{file}: two runs of one seed differ");
}

#[test]
fn mosquitto_relays_messages_between_client_nodes() {
    if installed(&["/usr/sbin/mosquitto", "/usr/bin/mosquitto_sub", "/usr/bin/mosquitto_pub"]) {
        let lines = ["Opening ipv6 listen socket on port 7000", "n1 | t hello1", "n1 | t hello3"];
        runs_twice_alike("mosquitto.toml", &lines);
    }
}

#[test]
fn a_zookeeper_ensemble_elects_one_leader() {
    let jars = ["/usr/share/java/zookeeper.jar", "/usr/share/java/maven3-slf4j-provider.jar"];
    if installed(&jars) {
        runs_twice_alike("zookeeper.toml", &["QuorumPeer - LEADING\n", "QuorumPeer - FOLLOWING\n"]);
    }
}

#[test]
fn a_redis_cluster_forms_and_redirects_a_client() {
    if installed(&["/usr/bin/redis-server", "/usr/bin/redis-cli"]) {
        let lines = ["[OK] All 16384 slots covered.", "n3 | bar", "cluster_state:ok"];
        runs_twice_alike("redis-cluster.toml", &lines);
    }
}

#[test]
fn dig_asks_dnsmasq_which_asks_named() {
    if installed(&["/usr/sbin/named", "/usr/sbin/dnsmasq", "/usr/bin/dig"]) {
        let lines = [
            " running\n", // named's start log (its time moves with the path it prints)
            "n1 | dnsmasq[1001]: forwarded www.example.test to 127.1.0.1#7000",
            "n2 | 10.9.8.7\n",
            "reply ns.example.test is 10.9.8.1",
            "n2 | 10.9.8.1\n",
            "n2 | 10.9.8.9\n",
            "n2 | status: NXDOMAIN\n",
        ];
        runs_twice_alike("dns.toml", &lines);
    }
}

/// Three BEAM VMs speak distributed Erlang: the client pings both servers through their epmd
/// and makes an rpc:call on each.
#[test]
fn distributed_erlang_pings_and_calls_across_nodes() {
    if installed(&["/usr/bin/erl"]) {
        let lines = [
            "n2 | ping 's0@127.1.0.1' -> pong",
            "n2 | ping 's1@127.1.0.2' -> pong",
            "n2 | rpc 's1@127.1.0.2' -> \"25\"",
            "n2 | nodes ['s0@127.1.0.1','s1@127.1.0.2']",
        ];
        runs_twice_alike("erlang.toml", &lines);
    }
}

/// Corosync's totem protocol forms one ring of the three nodes, votequorum gives it quorum,
/// and corosync-quorumtool reads it from node 0's daemon over libqb's shared-memory IPC.
#[test]
fn corosync_forms_one_ring_with_quorum() {
    if installed(&["/usr/sbin/corosync", "/usr/sbin/corosync-quorumtool"]) {
        let lines = [
            "n0 | notice  [TOTEM ] A new membership (1.5) was formed. Members joined: 1 2 3",
            "n2 | notice  [QUORUM] Members[3]: 1 2 3",
            "n0 | Quorate:          Yes",
            "n0 |          2          1 n1\n",
            "n0 | quorumtool=0",
        ];
        runs_twice_alike("corosync.toml", &lines);
    }
}

#[test]
fn postgres_initdb_and_pgbench_run_on_forked_backends() {
    let bin = "/usr/lib/postgresql/15/bin";
    let need = [format!("{bin}/postgres"), format!("{bin}/pgbench"), format!("{bin}/pg_isready")];
    if installed(&need.iter().map(String::as_str).collect::<Vec<_>>()) {
        let lines = [
            "LOG:  database system is ready to accept connections",
            "creating primary keys...",
            "number of transactions actually processed: 100/100",
            "number of failed transactions: 0 (0.000%)",
        ];
        runs_twice_alike("postgres.toml", &lines);
    }
}

#[test]
fn lmdb_loads_and_reads_back_an_environment_on_the_simulated_disk() {
    if installed(&["/usr/bin/mdb_load", "/usr/bin/mdb_stat", "/usr/bin/mdb_dump"]) {
        let lines = ["n0 |   Entries: 200", "n0 | dumped 200 values", "n0 |  value199"];
        runs_twice_alike("lmdb.toml", &lines);
    }
}

#[test]
fn slapd_on_lmdb_takes_entries_and_finds_one() {
    if installed(&["/usr/sbin/slapd", "/usr/bin/ldapadd", "/usr/bin/ldapsearch"]) {
        let lines = [
            "n1 | adding new entry \"cn=alice,dc=example,dc=test\"",
            "n1 | dn: cn=alice,dc=example,dc=test",
            "n1 | sn: Smith",
        ];
        runs_twice_alike("ldap.toml", &lines);
    }
}

#[test]
fn squid_caches_a_page_made_during_the_run_with_a_virtual_last_modified() {
    if installed(&["/usr/sbin/squid", "/usr/bin/curl", "/usr/bin/python3"]) {
        let lines = [
            "n2 | Last-Modified: Thu, 01 Jan 2026 00:00:02 GMT",
            "n2 | X-Cache: MISS from n1",
            "n2 | X-Cache: HIT from n1",
        ];
        runs_twice_alike("squid.toml", &lines);
    }
}

/// Knot DNS: the secondary bootstraps the zone by AXFR and follows the primary's NOTIFY by
/// IXFR (each request sent right after a non-blocking connect: a send while connecting waits),
/// and dig reads the new record from the secondary.
#[test]
fn knot_secondary_transfers_the_zone_and_follows_notify() {
    if installed(&["/usr/sbin/knotd", "/usr/sbin/knotc", "/usr/bin/kdig", "/usr/bin/dig"]) {
        let lines = [
            "[example.test.] AXFR, incoming, remote 127.1.0.1@7000, finished",
            "n0 | knotc=0",
            "[example.test.] IXFR, incoming, remote 127.1.0.1@7000, finished",
            "n2 | 10.9.8.42",
            "n2 | ns.example.test. admin.example.test. 2 3600 600 86400 300",
        ];
        runs_twice_alike("knot.toml", &lines);
    }
}

/// lighttpd sends a file larger than a stream window with sendfile(2), in partial sends; curl
/// gets every byte.
#[test]
fn lighttpd_serves_static_files_with_sendfile() {
    if installed(&["/usr/sbin/lighttpd", "/usr/bin/curl"]) {
        let lines = [
            "n1 | hello from lighttpd",
            "n1 | 1c0f34fee7176dc367bead8f96cba6bc  -",
            "n1 | range 8 18519 18",
            "n1 | 404",
            "n1 | Content-Length: 228894",
        ];
        runs_twice_alike("lighttpd.toml", &lines);
    }
}

/// Two BIRD routers in different autonomous systems bring up an eBGP session over a simulated
/// stream and each learns the other's announced /16, which birdc reads over the control socket.
#[test]
fn bird_routers_peer_over_bgp_and_learn_each_others_routes() {
    if installed(&["/usr/sbin/bird", "/usr/sbin/birdc"]) {
        let lines = [
            "n0 | peer       BGP        ---        up",
            "n0 | 10.2.0.0/16          unreachable [peer",
            "from 127.1.0.2",
            "n1 | 10.1.0.0/16          unreachable [peer",
            "from 127.1.0.1",
        ];
        runs_twice_alike("bird.toml", &lines);
    }
}

/// Open vSwitch's ovsdb-server replicates a clustered database by its own Raft: two nodes join
/// the first, a client writes through the leader and reads from a follower, and each node
/// reports its role; under crashes and partitions its runs still end well.
#[test]
fn an_ovsdb_raft_cluster_elects_a_leader_and_replicates_a_write() {
    let need = [
        "/usr/sbin/ovsdb-server",
        "/usr/bin/ovs-vsctl",
        "/usr/share/openvswitch/vswitch.ovsschema",
    ];
    if installed(&need) {
        let lines = [
            "n3 | init=0",
            "n3 | add-br=0",
            "n3 | bridges on a follower: br0",
            "n0 | Role: leader",
            "n1 | Role: follower",
            "n2 | Role: follower",
        ];
        runs_twice_alike("ovsdb.toml", &lines);
        let file = "cluster=programs/clusters/ovsdb.toml";
        let args = ["explore", "process", "-o", file, "--faults", "crash,partition", "--runs", "4"];
        let (code, text, err) = weft("ovsdb-explore", &args);
        assert_eq!(code, Some(0), "{text}{err}");
    }
}

/// Galera: two nodes join the first by rsync state transfer (the joiner's script waits, with
/// `ss`, for its rsync daemon's port: the simulated socket tables), and a table made on one
/// node and written on another reads the same on all three, each synced in a cluster of three.
#[test]
fn a_galera_cluster_grows_by_rsync_state_transfer() {
    let need =
        ["/usr/sbin/mariadbd", "/usr/lib/galera/libgalera_smm.so", "/usr/bin/rsync", "/usr/bin/ss"];
    if installed(&need) {
        let mut lines = vec!["n1 | WSREP_SST: [INFO] rsync SST completed on joiner".to_string()];
        lines.push("n2 | WSREP_SST: [INFO] rsync SST completed on joiner".into());
        for n in 1..=3 {
            let state = "wsrep_cluster_size\t3 wsrep_local_state_comment\tSynced";
            lines.push(format!("n3 | node {n}: 1=10,2=20 {state}"));
        }
        runs_twice_alike("galera.toml", &lines.iter().map(String::as_str).collect::<Vec<_>>());
    }
}

/// Jepsen's register test on Galera (`programs/galera`, `docs/galera.md`): six PyMySQL
/// clients, two per node, at MariaDB's default `wsrep_sync_wait = 0`: a read on one node misses
/// a write that another node acknowledged before the read began, and an explore of at most four
/// runs finds it (exit 1; not every run has one, and which do moves with the shim's build); with
/// `wsrep_sync_wait = 1` every read waits for its node to catch up and the history is
/// linearizable. No fault is needed: the appliers' lag under load is enough.
#[test]
fn galera_reads_are_stale_at_sync_wait_0_and_linearizable_at_1() {
    let need = [
        "/usr/sbin/mariadbd",
        "/usr/lib/galera/libgalera_smm.so",
        "/usr/bin/rsync",
        "/usr/bin/ss",
        "/usr/lib/python3/dist-packages/pymysql/__init__.py",
    ];
    if !installed(&need) {
        return;
    }
    let stale = "programs/galera/register.toml";
    let fixed = "programs/galera/register-sync-wait.toml";
    let body = |file: &str, wait: &str| {
        let text = std::fs::read_to_string(root().join(file)).expect("cluster file");
        let lines = text.lines().filter(|l| !l.starts_with('#'));
        lines.map(|l| l.replace(&format!("SYNC_WAIT = \"{wait}\""), "")).collect::<Vec<_>>()
    };
    assert_eq!(body(stale, "0"), body(fixed, "1"), "the two files differ but for SYNC_WAIT");
    let cluster = format!("cluster={stale}");
    let explore =
        ["explore", "process", "-o", &cluster, "--runs", "4", "--jobs", "2", "--no-shrink"];
    let (code, text, err) = weft("galera-explore", &explore);
    assert_eq!(code, Some(1), "{text}{err}");
    let violation = "VIOLATION safety violation of history: kv: not linearizable; these ";
    assert!(text.contains(violation) || err.contains(violation), "{text}{err}");
    let (code, text, err) = weft("galera-sync-wait", &["run", "--cluster", fixed]);
    assert_eq!(code, Some(0), "{text}{err}");
    assert!(text.contains(") are linearizable\n"), "{text}");
}
