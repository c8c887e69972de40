//! `weft run` and the `process` target through the real binary: byte-identical output and
//! trace hash for one seed, another seed changes the interleaving, a recording replays, the
//! planted election bug is found, shrunk and replayed by `weft explore`, and escapes from the
//! shim exit 4 (unsupported) with the reason.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

fn weft(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_weft")).args(args).output().expect("weft runs")
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
}

/// Compiles one of weft-host's C test programs, once per test process: the tests run in
/// parallel, and recompiling over a binary another test is starting makes it "not executable".
fn compile(name: &str, flags: &[&str]) -> PathBuf {
    static DONE: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());
    let mut done = DONE.lock().unwrap_or_else(|e| e.into_inner());
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{name}{}", flags.join("")));
    if done.contains(&out) {
        return out;
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../weft-host/tests/c")
        .join(format!("{name}.c"));
    let ok = Command::new("cc")
        .args(["-O1", "-o"])
        .arg(&out)
        .arg(&src)
        .args(flags)
        .status()
        .expect("a C compiler (`cc`) is needed for these tests");
    assert!(ok.success(), "cc failed for {}", src.display());
    done.insert(out.clone());
    out
}

fn run(prog: &Path, seed: &str, extra: &[&str]) -> Output {
    let mut args = vec!["run", "--nodes", "3", "--seed", seed];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--", prog.to_str().unwrap(), "{id}", "{addr}", "{others}", "3"]);
    weft(&args)
}

#[test]
fn same_seed_same_bytes_other_seed_other_interleaving() {
    let prog = compile("pingpong", &[]);
    let a = run(&prog, "4", &["--faults", "drop=1/10"]);
    let b = run(&prog, "4", &["--faults", "drop=1/10"]);
    assert_eq!(a.status.code(), Some(0), "{}", text(&a));
    assert_eq!(a.stdout, b.stdout, "one seed, byte-identical output and trace hash");
    assert!(text(&a).contains("trace hash"));
    let lines = |o: &Output| -> Vec<String> {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| l.contains(" | "))
            .map(String::from)
            .collect()
    };
    assert!(lines(&a).iter().any(|l| l.contains(" n1 | ")), "prefixed by node: {:?}", lines(&a));
    let differs = (5..15)
        .any(|s| lines(&run(&prog, &s.to_string(), &["--faults", "drop=1/10"])) != lines(&a));
    assert!(differs, "some other seed changes the interleaving");
}

#[test]
fn a_recorded_run_replays_bit_for_bit() {
    let prog = compile("pingpong", &[]);
    let file = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pingpong-run.json");
    let _ = std::fs::remove_file(&file);
    let o = run(&prog, "2", &["--faults", "default", "--record", file.to_str().unwrap()]);
    let recorded = text(&o);
    let hash = recorded
        .lines()
        .find(|l| l.contains("trace hash"))
        .unwrap()
        .split_whitespace()
        .last()
        .unwrap()
        .to_string();
    let r = weft(&["replay", "--allow-exec", file.to_str().unwrap()]);
    assert!(text(&r).contains(&format!("trace hash {hash} (recorded {hash})")), "{}", text(&r));
    assert!(!text(&r).contains("DIVERGED"));
}

#[test]
fn the_planted_election_bug_is_found_shrunk_and_replayed() {
    let prog = compile("election", &[]);
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("election-out");
    let _ = std::fs::remove_dir_all(&out);
    let args = "{id}\u{1f}{addr}\u{1f}{others}".to_string();
    let o = weft(&[
        "explore",
        "process",
        "-o",
        &format!("program={}", prog.display()),
        "-o",
        &format!("args={args}"),
        "-o",
        "forbid=SPLIT BRAIN",
        "--runs",
        "60",
        "--seed",
        "1",
        "--strategy",
        "random",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("no_forbidden_output"), "{t}");
    // The hand-derived minimum: whatever the faults, a split brain takes 24 events — 3 starts;
    // two candidates of one term (2 lines, 4 vote requests sent); for each, one request
    // delivered, one vote sent and delivered, one LEADER line (8); the two leaders' heartbeats
    // sent (4); one heartbeat delivered to the other leader, its SPLIT BRAIN line and the
    // violation (3). Messages still in flight when it fails add nothing. The shrunk run must be
    // within twice that, with no fault.
    let shrunk = t.lines().find(|l| l.contains("shrunk in")).expect(&t);
    let after = shrunk.rsplit("->").next().unwrap();
    let number = |unit: &str| -> u64 {
        let words: Vec<&str> = after.split_whitespace().collect();
        let i = words.iter().position(|w| w.trim_end_matches(',') == unit).expect(shrunk);
        words[i - 1].parse().expect(shrunk)
    };
    assert!(number("events") <= 2 * 24, "{shrunk}");
    assert_eq!(number("faults"), 0, "{shrunk}");
    let last = String::from_utf8_lossy(&o.stdout).lines().last().unwrap().to_string();
    let repro = last.strip_prefix("reproduce: weft replay ").expect(&last).to_string();
    let r = weft(&["replay", "--allow-exec", &repro]);
    assert_eq!(r.status.code(), Some(1), "{}", text(&r));
    assert!(text(&r).contains("reproduced"));
}

#[test]
fn escapes_from_the_shim_are_unsupported_with_the_reason() {
    let raw = compile("rawrandom", &[]);
    let o = weft(&["run", "--nodes", "1", "--", raw.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    assert!(text(&o).contains("getrandom"), "{}", text(&o));
    let stat = compile("pingpong", &["-static"]);
    let o = weft(&["run", "--nodes", "1", "--", stat.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    assert!(text(&o).contains("statically linked"), "{}", text(&o));
}

/// `check-determinism` and `explore` of a program weft refuses (a static binary) exit 4 with
/// the reason, as `weft run` does: they said "deterministic" and "no violation found", exit 0.
#[test]
fn checks_of_a_refused_program_are_unsupported_with_the_reason() {
    let stat = compile("pingpong", &["-static"]);
    let program = format!("program={}", stat.display());
    let d =
        weft(&["check-determinism", "process", "-o", &program, "-o", "nodes=1", "--seeds", "2"]);
    assert_eq!(d.status.code(), Some(4), "{}", text(&d));
    assert!(text(&d).contains("statically linked"), "{}", text(&d));
    assert!(!text(&d).contains("deterministic:"), "{}", text(&d));
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("explore-refused");
    let out = out.to_str().unwrap();
    let e =
        weft(&["explore", "process", "-o", &program, "-o", "nodes=1", "--runs", "2", "--out", out]);
    assert_eq!(e.status.code(), Some(4), "{}", text(&e));
    assert!(text(&e).contains("UNSUPPORTED in 2 of 2 runs"), "{}", text(&e));
    assert!(text(&e).contains("statically linked"), "{}", text(&e));
}

/// `check-determinism --out` puts the nodes' working directories under OUT/work, as
/// `explore` and `run` do (it had no `--out`: they went to ./weft-out/work).
#[test]
fn check_determinism_runs_its_nodes_under_out() {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("determinism-out");
    let _ = std::fs::remove_dir_all(&out);
    let args = ["check-determinism", "process", "-o", "program=/bin/true", "-o", "nodes=2"];
    let d = weft(&[&args[..], &["--seeds", "2", "--out", out.to_str().unwrap()]].concat());
    assert_eq!(d.status.code(), Some(0), "{}", text(&d));
    assert!(text(&d).contains("deterministic: 2 seeds"), "{}", text(&d));
    let work = out.join("work");
    assert!(text(&d).contains(&format!("work_dir={}", work.display())), "{}", text(&d));
    assert!(work.is_dir(), "no {}", work.display());
}

#[test]
fn a_missing_program_is_an_input_error() {
    let not_elf = Path::new(env!("CARGO_TARGET_TMPDIR")).join("not-elf");
    std::fs::write(&not_elf, "just text\n").unwrap();
    std::fs::set_permissions(&not_elf, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .unwrap();
    for prog in ["/nonexistent/prog", "/tmp", not_elf.to_str().unwrap()] {
        let o = weft(&["run", "--nodes", "2", "--", prog]);
        assert_eq!(o.status.code(), Some(2), "{prog}: {}", text(&o));
        assert!(o.stdout.is_empty(), "{prog}: nothing on stdout: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{prog}: one line on stderr: {err}");
        assert!(err.contains(prog), "{err}");
    }
}

/// `weft run -- redis-server` works as a shell would: a bare name is looked up in `PATH`, and
/// the run records the absolute path it found.
#[test]
fn a_bare_program_name_is_found_in_path() {
    let bin = Path::new(env!("CARGO_TARGET_TMPDIR")).join("path-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let prog = bin.join("weft-test-pingpong");
    let _ = std::fs::remove_file(&prog);
    std::fs::copy(compile("pingpong", &[]), &prog).unwrap();
    let path = format!("/nonexistent-dir:{}:/usr/bin:/bin", bin.display());
    let record = bin.join("bare.json");
    let _ = std::fs::remove_file(&record);
    let o = Command::new(env!("CARGO_BIN_EXE_weft"))
        .env("PATH", &path)
        .args(["run", "--nodes", "3", "--record", record.to_str().unwrap()])
        .args(["--", "weft-test-pingpong", "{id}", "{addr}", "{others}", "3"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let repro = std::fs::read_to_string(&record).unwrap();
    assert!(repro.contains(prog.to_str().unwrap()), "the absolute path is recorded: {repro}");
    // In a cluster file, a bare name not found beside the file is looked up in PATH too.
    let cluster = bin.join("bare.toml");
    let group = "[[group]]\nname = \"p\"\nprogram = \"weft-test-pingpong\"\ncount = 3\n";
    let args = "args = [\"{id}\", \"{addr}\", \"{others}\", \"3\"]\n";
    std::fs::write(&cluster, format!("{group}{args}")).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_weft"))
        .env("PATH", &path)
        .args(["run", "--cluster", cluster.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = Command::new(env!("CARGO_BIN_EXE_weft"))
        .env("PATH", &path)
        .args(["run", "--nodes", "1", "--", "weft-no-such-program"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("weft-no-such-program: not found in PATH"), "{err}");
}

/// `--on-idle pass` ends a run whose every thread waits with nothing to come as a pass (a
/// server with no client); without it, a deadlock naming where they wait. Bad values: exit 2.
#[test]
fn on_idle_pass_makes_an_idle_server_a_pass() {
    let prog = Path::new(env!("CARGO_MANIFEST_DIR")).join("../weft-host/tests/c/crash.c");
    let bin = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-crash");
    let ok = Command::new("cc").args(["-O1", "-o"]).arg(&bin).arg(&prog).status().unwrap();
    assert!(ok.success());
    let bin = bin.to_str().unwrap();
    let idle = weft(&["run", "--nodes", "1", "--", bin, "block"]);
    assert_eq!(idle.status.code(), Some(1), "{}", text(&idle));
    assert!(text(&idle).contains("deadlock") && text(&idle).contains("--on-idle pass"));
    let pass = weft(&["run", "--nodes", "1", "--on-idle", "pass", "--", bin, "block"]);
    assert_eq!(pass.status.code(), Some(0), "{}", text(&pass));
    assert!(text(&pass).contains("outcome: pass"), "{}", text(&pass));
    let bad = weft(&["run", "--nodes", "1", "--on-idle", "maybe", "--", bin, "block"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("on_idle"), "{}", text(&bad));
}

#[test]
fn a_recording_never_replaces_a_file() {
    let prog = compile("pingpong", &[]);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("record-noclobber");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("r.json");
    std::fs::write(&file, "an earlier counterexample\n").unwrap();
    let o = run(&prog, "2", &["--record", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "an earlier counterexample\n");
    let fresh = dir.join("r-2.json");
    let said = format!("recorded: weft replay --allow-exec {}", fresh.display());
    assert!(text(&o).contains(&said), "says where it went: {}", text(&o));
    assert!(text(&o).contains("holds another recording"), "{}", text(&o));
    let r = weft(&["replay", "--allow-exec", fresh.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(0), "the fresh recording replays: {}", text(&r));
    // A folder that cannot be written is refused before the run.
    let o = run(&prog, "2", &["--record", "/proc/x/r.json"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot write"), "{}", text(&o));
    assert!(!text(&o).contains("outcome:"), "refused before the run: {}", text(&o));
}

/// The shim written to the temp directory is used again only if it is the same bytes: a stale
/// or altered file of the same size (here zeros) is replaced, not loaded into every node.
#[test]
fn a_same_sized_stale_shim_in_the_temp_directory_is_replaced() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("stale-shim");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let go = || {
        Command::new(env!("CARGO_BIN_EXE_weft"))
            .env("TMPDIR", &tmp)
            .args(["run", "--nodes", "1", "--out"])
            .arg(tmp.join("out"))
            .args(["--", "/bin/echo", "shim in place"])
            .output()
            .expect("weft runs")
    };
    let first = go();
    assert!(first.status.success(), "{}", text(&first));
    let shims: Vec<PathBuf> = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "so"))
        .collect();
    assert_eq!(shims.len(), 1, "{shims:?}");
    let good = std::fs::read(&shims[0]).unwrap();
    std::fs::write(&shims[0], vec![0u8; good.len()]).unwrap();
    let again = go();
    assert!(again.status.success(), "{}", text(&again));
    assert!(text(&again).contains("shim in place"), "{}", text(&again));
    assert!(std::fs::read(&shims[0]).unwrap() == good, "the stale copy is rewritten");
}
