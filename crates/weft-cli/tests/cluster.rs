//! Clusters of different programs through the real binary: a server group and a client group
//! run deterministically from a cluster file, the repro replays from another directory, a
//! repro's programs run only when allowed and only unchanged, malformed files are input
//! errors, fault knobs from the command line take effect, and limits end a hog as
//! `resource_limit`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn weft_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_weft")).current_dir(dir).args(args).output().expect("weft")
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
}

fn stderr_line(o: &Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(err.lines().count(), 1, "one line on stderr: {}", text(o));
    err
}

/// A fresh folder for one test.
fn folder(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cluster-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Compiles weft-host's C test program `name` to `out`.
fn compile(name: &str, out: &Path, flags: &[&str]) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../weft-host/tests/c/{name}.c"));
    let ok = Command::new("cc")
        .args(["-O1", "-o"])
        .arg(out)
        .arg(&src)
        .args(flags)
        .status()
        .expect("a C compiler (`cc`) is needed for these tests");
    assert!(ok.success(), "cc failed for {}", src.display());
}

/// Two echo servers and one client (a different program, started at 100 ms, with its own
/// environment), programs named relative to the file.
const CLUSTER: &str = r#"
time_limit = "10s"
[[group]]
name = "server"
program = "server"
args = ["0", "{addr}", "{peers:client}"]
count = 2
[[group]]
name = "client"
program = "./client"
args = ["{peers:server}"]
start = "100ms"
env = { GREETING = "hi" }
"#;

/// A folder with `server`, `client` and `c.toml` (CLUSTER plus `extra` at the top).
fn cluster(name: &str, extra: &str) -> PathBuf {
    let dir = folder(name);
    compile("tcpecho", &dir.join("server"), &[]);
    compile("client", &dir.join("client"), &[]);
    std::fs::write(dir.join("c.toml"), format!("{extra}\n{CLUSTER}")).unwrap();
    dir
}

fn hash_line(o: &Output) -> String {
    let out = String::from_utf8_lossy(&o.stdout);
    out.lines().find(|l| l.contains("trace hash")).expect("a trace hash line").to_string()
}

#[test]
fn a_server_and_client_cluster_is_deterministic_and_replays_from_elsewhere() {
    let dir = cluster("basic", "");
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "--cluster", "c.toml", "--seed", "5"];
        args.extend_from_slice(extra);
        weft_in(&dir, &args)
    };
    let a = run(&[]);
    let b = run(&["--record", "r.json"]);
    assert_eq!(a.status.code(), Some(0), "{}", text(&a));
    let t = text(&a);
    for want in ["n2 | greeting hi, cwd entries 0", "HELLO SERVER 0", "HELLO SERVER 1", "served 1"]
    {
        assert!(t.contains(want), "{want}: {t}");
    }
    assert!(t.contains("0.100000s n2 | greeting"), "the client starts at 100 ms: {t}");
    let lines = |o: &Output| -> String {
        String::from_utf8_lossy(&o.stdout).lines().filter(|l| !l.starts_with("recorded")).collect()
    };
    assert_eq!(lines(&a), lines(&b), "same seed, same bytes (and a fresh working dir each run)");
    assert!(dir.join("weft-out/work/slot0/n2/mark").exists(), "the client ran in its own dir");
    let elsewhere = folder("basic-elsewhere");
    let repro = dir.join("r.json");
    let r = weft_in(&elsewhere, &["replay", "--allow-exec", repro.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r));
    let hash = hash_line(&a).split_whitespace().last().unwrap().to_string();
    assert!(text(&r).contains(&format!("trace hash {hash} (recorded {hash})")), "{}", text(&r));
}

#[test]
fn a_repro_runs_only_allowed_and_unchanged_programs() {
    let dir = cluster("allow", "");
    let o = weft_in(&dir, &["run", "--cluster", "c.toml", "--record", "r.json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    for cmd in ["replay", "show", "shrink"] {
        let r = weft_in(&dir, &[cmd, "r.json"]);
        assert_eq!(r.status.code(), Some(2), "{cmd}: {}", text(&r));
        assert!(stderr_line(&r).contains("--allow-exec"), "{cmd}: says how to allow");
        let listed = String::from_utf8_lossy(&r.stdout);
        let server = dir.join("server").canonicalize().unwrap();
        assert!(listed.contains(&format!("server: {} (hash ", server.display())), "{listed}");
        assert!(!dir.join("work").exists(), "{cmd}: nothing ran");
    }
    let server = dir.join("server");
    let only_one =
        weft_in(&dir, &["replay", "r.json", "--allow-program", server.to_str().unwrap()]);
    assert_eq!(only_one.status.code(), Some(2), "the client is not allowed: {}", text(&only_one));
    assert!(stderr_line(&only_one).contains("client"));
    let client = dir.join("client");
    let both = ["replay", "r.json", "--allow-program", "server", "--allow-program", "./client"];
    let r = weft_in(&dir, &both);
    assert_eq!(r.status.code(), Some(0), "both named on the command line: {}", text(&r));
    // A repro that would preload a library, through the shim option or a group's environment,
    // needs --allow-exec even when its programs are named.
    let mut repro: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("r.json")).unwrap()).unwrap();
    repro["spec"]["options"]["shim"] = "/tmp/evil.so".into();
    std::fs::write(dir.join("shim.json"), repro.to_string()).unwrap();
    let named = ["replay", "shim.json", "--allow-program", "server", "--allow-program", "./client"];
    let r = weft_in(&dir, &named);
    assert_eq!(r.status.code(), Some(2), "{}", text(&r));
    assert!(stderr_line(&r).contains("/tmp/evil.so"));
    let options = repro["spec"]["options"].as_object_mut().unwrap();
    options.remove("shim");
    let json = options["cluster_json"].as_str().unwrap().replace(
        "\"env\":{\"GREETING\":\"hi\"}",
        "\"env\":{\"GREETING\":\"hi\",\"LD_PRELOAD\":\"/tmp/evil.so\"}",
    );
    assert!(json.contains("LD_PRELOAD"));
    options.insert("cluster_json".into(), json.into());
    std::fs::write(dir.join("env.json"), repro.to_string()).unwrap();
    let named = ["replay", "env.json", "--allow-program", "server", "--allow-program", "./client"];
    let r = weft_in(&dir, &named);
    assert_eq!(r.status.code(), Some(2), "{}", text(&r));
    assert!(String::from_utf8_lossy(&r.stdout).contains("LD_PRELOAD"), "the env is listed");
    compile("client", &client, &["-O2", "-DCHANGED"]);
    let r = weft_in(&dir, &["replay", "--allow-exec", "r.json"]);
    assert_eq!(r.status.code(), Some(2), "a changed binary is refused: {}", text(&r));
    assert!(stderr_line(&r).contains("changed since the repro was recorded"), "{}", text(&r));
}

#[test]
fn a_malformed_cluster_file_is_an_input_error_naming_the_field() {
    let dir = cluster("malformed", "");
    let cases = [
        ("[[group]]\nname = \"a\"\nprogrm = \"server\"\n", "progrm"),
        ("[[group]]\nname = \"a\"\nprogram = \"server\"\ncount = \"many\"\n", "line 4"),
        ("[[group]]\nname = \"a\"\nprogram = \"server\"\nstart = \"later\"\n", "start"),
        ("[[group]]\nname = \"a\"\nprogram = \"nothere\"\n", "nothere"),
        ("[[group]]\nname = \"a\"\nprogram = \"server\"\nargs = [\"{peers:b}\"]\n", "peers:b"),
        (
            "[scenario]\nbudget.crashes = -1\n[[group]]\nname = \"a\"\nprogram = \"server\"\n",
            "budget.crashes",
        ),
        (
            "[scenario]\nfaults = \"quake\"\n[[group]]\nname = \"a\"\nprogram = \"server\"\n",
            "quake",
        ),
        ("name = \"a\"\n", "name"),
    ];
    for (i, (body, needle)) in cases.iter().enumerate() {
        let file = format!("bad{i}.toml");
        std::fs::write(dir.join(&file), body).unwrap();
        for args in [
            vec!["run", "--cluster", &file],
            vec!["explore", "process", "-o", &format!("cluster={file}")],
        ] {
            let o = weft_in(&dir, &args);
            assert_eq!(o.status.code(), Some(2), "{body}: {}", text(&o));
            let line = stderr_line(&o);
            assert!(line.contains(needle), "{body}: {line} should name {needle}");
        }
    }
    let o = weft_in(&dir, &["run", "--cluster", "missing.toml"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(stderr_line(&o).contains("missing.toml"));
}

#[test]
fn each_group_has_its_own_expected_exit_statuses() {
    let dir = folder("exits");
    let file = |codes: &str| {
        format!(
            "[[group]]\nname = \"f\"\nprogram = \"/bin/false\"\nexit_codes = {codes}\n\
             [[group]]\nname = \"t\"\nprogram = \"/bin/true\"\n"
        )
    };
    std::fs::write(dir.join("ok.toml"), file("[1]")).unwrap();
    std::fs::write(dir.join("bad.toml"), file("[0]")).unwrap();
    let o = weft_in(&dir, &["run", "--cluster", "ok.toml"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = weft_in(&dir, &["run", "--cluster", "bad.toml"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("target crashed: node 0 exited with status 1"), "{}", text(&o));
}

fn faults(o: &Output) -> u64 {
    let line = hash_line(o);
    let words: Vec<&str> = line.split_whitespace().collect();
    words[2].parse().expect("`N events, M faults`")
}

#[test]
fn fault_knobs_from_the_command_line_and_the_file_take_effect() {
    let dir = cluster("knobs", "");
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "--cluster", "c.toml", "--seed", "2"];
        args.extend_from_slice(extra);
        weft_in(&dir, &args)
    };
    let base = ["--faults", "crash=1/3,partition=1/3", "--fault-phase", "1s"];
    let none = run(&[&base[..], &["--fault-budget", "crash=0,partition=0"]].concat());
    let some = run(&[&base[..], &["--fault-budget", "crash=2,partition=2"]].concat());
    assert_eq!(faults(&none), 0, "{}", text(&none));
    assert!(faults(&some) > 0, "{}", text(&some));
    let calm = run(&["--faults", "none"]);
    assert_eq!(faults(&calm), 0);
    let bad = run(&["--scenario", "rates.crash=5/4"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    assert!(stderr_line(&bad).contains("rates.crash"));
    // The same knobs from the file's [scenario] table, and for explore.
    let filed = "[scenario]\nfaults = [\"crash\", \"partition\"]\nrates.crash = \"1/3\"\n\
                 rates.partition = \"1/3\"\nfault_phase = \"1s\"\nbudget.crashes = 2\n";
    std::fs::write(dir.join("f.toml"), format!("{CLUSTER}\n{filed}")).unwrap();
    let from_file = weft_in(&dir, &["run", "--cluster", "f.toml", "--seed", "2"]);
    assert!(faults(&from_file) > 0, "{}", text(&from_file));
    let o = weft_in(
        &dir,
        &[
            "explore",
            "process",
            "-o",
            "cluster=f.toml",
            "--runs",
            "1",
            "--fault-budget",
            "crash=0",
            "--heal-phase",
            "3s",
        ],
    );
    let t = text(&o);
    assert!(t.contains("\"crashes\":0"), "the flag beats the file: {t}");
    assert!(t.contains("\"heal_phase\":3000000000"), "{t}");
    assert!(t.contains("\"crash\":{\"num\":1,\"den\":3}"), "the file's rate: {t}");
}

#[test]
fn explore_takes_a_cluster_and_its_repro_replays() {
    let dir = cluster("explore", "forbid = \"HELLO SERVER 1\"");
    let o = weft_in(
        &dir,
        &[
            "explore",
            "process",
            "-o",
            "cluster=c.toml",
            "--runs",
            "2",
            "--no-shrink",
            "--faults",
            "none",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("no_forbidden_output"), "{}", text(&o));
    let last = String::from_utf8_lossy(&o.stdout).lines().last().unwrap().to_string();
    let repro = last.strip_prefix("reproduce: weft replay ").expect(&last).to_string();
    let r = weft_in(
        &folder("explore-elsewhere"),
        &["replay", "--allow-exec", &dir.join(&repro).display().to_string()],
    );
    assert_eq!(r.status.code(), Some(1), "{}", text(&r));
    assert!(text(&r).contains("reproduced"), "{}", text(&r));
}

#[test]
fn limits_end_a_hog_as_resource_limit() {
    let dir = folder("hog");
    let hog = dir.join("hog");
    compile("hog", &hog, &[]);
    let o = weft_in(&dir, &["run", "--nodes", "1", "--memory-limit", "64MiB", "--", "./hog"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("outcome: resource limit: node 0"), "{}", text(&o));
    assert!(text(&o).contains("memory limit"), "{}", text(&o));
    let o = weft_in(&dir, &["run", "--nodes", "1", "--cpu-limit", "1s", "--", "./hog", "cpu"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("CPU-time limit of 1s"), "{}", text(&o));
    let file = "[[group]]\nname = \"leaky\"\nprogram = \"hog\"\nmemory_limit = \"48MiB\"\n";
    std::fs::write(dir.join("h.toml"), file).unwrap();
    let o = weft_in(&dir, &["run", "--cluster", "h.toml"]);
    assert!(text(&o).contains("resource limit: node 0 (group leaky)"), "{}", text(&o));
    assert!(text(&o).contains("limit 48 MiB"), "{}", text(&o));
}
