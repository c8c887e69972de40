//! The foundation's acceptance, through the real `weft` binary: explore finds the canary's bug
//! and writes a repro, replay reproduces it bit for bit, the fixed variant passes, determinism
//! holds, and bad input gets exit 2 with one line on stderr.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn weft(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_weft")).args(args).output().expect("weft runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn trace_hash_line(out: &str) -> String {
    out.lines().find(|l| l.contains("trace hash")).unwrap_or_default().to_string()
}

/// Explores the buggy canary and returns the repro path it printed last.
fn explore_buggy(dir: &Path) -> PathBuf {
    let out = weft(&[
        "explore",
        "primary-backup",
        "--variant",
        "buggy",
        "--seed",
        "1",
        "--runs",
        "10000",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    let last = text.lines().last().unwrap();
    let path = last.strip_prefix("reproduce: weft replay ").expect(last);
    assert!(text.contains("seed 1"), "the seed is printed before the run: {text}");
    PathBuf::from(path)
}

#[test]
fn explore_finds_the_canary_bug_and_replay_reproduces_it() {
    let dir = scratch("explore_buggy");
    let repro = explore_buggy(&dir);
    assert!(repro.exists());
    let recorded: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&repro).unwrap()).unwrap();
    assert_eq!(recorded["outcome"]["property"], "AckedWritesSurviveFailover");
    let out = weft(&["replay", repro.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let hash = recorded["trace_hash"].as_str().unwrap();
    assert!(trace_hash_line(&stdout(&out)).starts_with(&format!("  trace hash {hash}")));
    // The timeline shows the violation as its last event.
    let out = weft(&["replay", repro.to_str().unwrap(), "--timeline"]);
    assert!(stdout(&out).lines().any(|l| l.contains(" violation ")), "{}", stdout(&out));
}

#[test]
fn the_same_campaign_finds_the_same_run_with_one_or_two_jobs() {
    let dir = scratch("jobs");
    let run = |jobs: &str| {
        let out = weft(&[
            "explore",
            "primary-backup",
            "--variant",
            "buggy",
            "--seed",
            "5",
            "--runs",
            "500",
            "--jobs",
            jobs,
            "--out",
            dir.to_str().unwrap(),
        ]);
        stdout(&out).lines().last().unwrap().to_string()
    };
    assert_eq!(run("1"), run("2"));
}

#[test]
fn the_fixed_canary_passes_the_same_budget() {
    let dir = scratch("explore_fixed");
    let out = weft(&[
        "explore",
        "primary-backup",
        "--variant",
        "fixed",
        "--seed",
        "1",
        "--runs",
        "10000",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("no violation found in 10000 runs"));
}

#[test]
fn check_determinism_passes_on_the_canary() {
    let out =
        weft(&["check-determinism", "primary-backup", "--variant", "buggy", "--seeds", "100"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    // How the agreeing runs ended is said, so runs that all stop at once do not pass unseen.
    let text = stdout(&out);
    let line = text.lines().find(|l| l.starts_with("  outcomes: ")).unwrap_or_default();
    assert!(line.contains("events a run on average"), "{text}");
}

#[test]
fn a_tampered_repro_diverges_with_exit_3() {
    let dir = scratch("tampered");
    let repro = explore_buggy(&dir);
    let text = std::fs::read_to_string(&repro).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["decisions"] = serde_json::Value::String(String::new());
    let tampered = dir.join("tampered.json");
    std::fs::write(&tampered, v.to_string()).unwrap();
    let out = weft(&["replay", tampered.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    assert!(stdout(&out).contains("DIVERGED"));
}

/// One line on stderr, exit 2, no backtrace.
fn assert_input_error(out: &Output, mentions: &str) {
    assert_eq!(out.status.code(), Some(2), "{}{}", stdout(out), stderr(out));
    let err = stderr(out);
    assert_eq!(err.lines().count(), 1, "exactly one line: {err:?}");
    assert!(err.contains(mentions), "{err}");
    assert!(!err.contains("panicked") && !err.contains("backtrace"), "{err}");
}

#[test]
fn bad_input_gets_exit_2_and_one_line() {
    let dir = scratch("bad_input");
    let repro = explore_buggy(&dir);
    let text = std::fs::read_to_string(&repro).unwrap();
    let truncated = dir.join("truncated.json");
    std::fs::write(&truncated, &text[..text.len() / 2]).unwrap();
    assert_input_error(&weft(&["replay", truncated.to_str().unwrap()]), "truncated");
    let garbage = dir.join("garbage.json");
    std::fs::write(&garbage, "not json at all").unwrap();
    assert_input_error(&weft(&["replay", garbage.to_str().unwrap()]), "not a valid weft repro");
    assert_input_error(&weft(&["replay", "/nonexistent/repro.json"]), "cannot read");
    assert_input_error(&weft(&["explore", "no-such-target"]), "unknown target `no-such-target`");
    assert_input_error(
        &weft(&["explore", "primary-backup", "--variant", "nope"]),
        "unknown variant `nope`",
    );
    assert_input_error(
        &weft(&["explore", "primary-backup", "--property", "Nope"]),
        "unknown property `Nope`",
    );
    assert_input_error(&weft(&["explore", "primary-backup", "-o", "writes=lots"]), "writes");
    assert_input_error(&weft(&["explore", "primary-backup", "--bogus-flag"]), "--bogus-flag");
    assert_input_error(&weft(&["explore", "primary-backup", "--runs", "ten"]), "ten");
}

#[test]
fn targets_lists_the_canary_and_its_variants() {
    let out = weft(&["targets"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(text.contains("primary-backup") && text.contains("buggy") && text.contains("fixed"));
    assert!(text.contains("AckedWritesSurviveFailover"));
}

/// A repro written by an earlier weft must keep replaying bit for bit: if this fails, either
/// the kernel's semantics changed (update the golden file deliberately, and say why in the
/// commit) or determinism broke.
#[test]
fn golden_repro_still_replays() {
    let golden =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/primary-backup-buggy.json");
    let out = weft(&["replay", golden.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
}
