//! Issue 13's probe, row by row, through the real `weft` binary: every bad input is one line on
//! stderr with a documented exit code, no finding is lost or overwritten, and signals and a
//! closed stdout end a command the way Ctrl-C and a normal end do. (Rows 6-8, programs named by
//! repros and resource limits, are tested with the host.)

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

const GOLDEN: &str = include_str!("golden/primary-backup-buggy.json");

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
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hardening").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Exit 2, exactly one line on stderr, mentioning each of `mentions`, and no panic.
fn assert_input_error(out: &Output, mentions: &[&str]) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{}{err}", stdout(out));
    assert_eq!(err.lines().count(), 1, "exactly one line: {err:?}");
    for m in mentions {
        assert!(err.contains(m), "{m:?} not in {err}");
    }
    assert!(!err.contains("panicked") && !err.contains("internal error"), "{err}");
}

/// The golden repro with `edit` applied, written to `dir/name`.
fn edited(dir: &Path, name: &str, edit: impl FnOnce(&mut Value)) -> String {
    let mut v: Value = serde_json::from_str(GOLDEN).unwrap();
    edit(&mut v);
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    path.to_str().unwrap().to_string()
}

fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Row 1: option values are bounded, from the command line and from a repro.
#[test]
fn row1_unbounded_option_values_fail_fast_with_the_range() {
    for (target, option, range) in [
        ("primary-backup", "writes=99999999999", "0..=100000"),
        ("raft-rs", "proposals=99999999999", "0..=100000"),
        ("omnipaxos", "flaps=99999999", "0..=100000"),
        ("chord", "steps=99999999", "0..=100000"),
    ] {
        let out = weft(&["explore", target, "-o", option, "--runs", "1", "--out", "/proc/x"]);
        let (name, value) = option.split_once('=').unwrap();
        assert_input_error(&out, &[&format!("`{name}`"), &format!("`{value}`"), range]);
    }
    let dir = scratch("row1");
    let file =
        edited(&dir, "writes.json", |v| v["spec"]["options"]["writes"] = "99999999999".into());
    for cmd in ["replay", "show", "shrink"] {
        assert_input_error(&weft(&[cmd, &file]), &["writes.json", "`writes`", "0..=100000"]);
    }
    let targets = stdout(&weft(&["targets"]));
    assert!(targets.contains("-o writes=20") && targets.contains("0..=100000"), "{targets}");
    assert!(targets.contains("an integer in 2..=8, or a range like 2-8"), "{targets}");
}

/// Row 2: scenario invariants are checked on read, naming the field.
#[test]
fn row2_broken_scenario_invariants_are_input_errors() {
    let dir = scratch("row2");
    let den = edited(&dir, "den.json", |v| v["scenario"]["rates"]["crash"]["den"] = 0.into());
    let block = edited(&dir, "block.json", |v| {
        v["scenario"]["disk"] = serde_json::json!({"block_size": 0})
    });
    let latency =
        edited(&dir, "lat.json", |v| v["scenario"]["latency_min"] = 99_000_000_000u64.into());
    for cmd in ["replay", "show", "shrink", "explain-crash"] {
        assert_input_error(&weft(&[cmd, &den]), &["`scenario.rates.crash.den` is 0", "1..="]);
        assert_input_error(&weft(&[cmd, &block]), &["`scenario.disk.block_size` is 0"]);
        assert_input_error(&weft(&[cmd, &latency]), &["`scenario.latency_min`"]);
    }
}

/// Row 3: a closed stdout does not turn a violation into an internal error; the campaign
/// writes both repros and exits 1.
#[test]
fn row3_a_closed_stdout_keeps_the_campaigns_exit_code_and_its_repros() {
    let dir = scratch("row3");
    let mut child = Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(["explore", "chord", "--variant", "original", "-o", "ids=5"])
        .args(["--out", dir.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The reader goes away before weft has written anything: every write to stdout fails.
    drop(child.stdout.take());
    assert_eq!(child.wait().unwrap().code(), Some(1));
    let names = files(&dir);
    assert_eq!(names.len(), 2, "the repro and the shrunk repro: {names:?}");
    assert!(names.iter().any(|n| n.ends_with("-shrunk.json")), "{names:?}");

    // And as the issue ran it: `| grep -m1 VIOLATION`.
    let dir = scratch("row3-grep");
    let script = format!(
        "'{}' explore chord --variant original -o ids=5 --out '{}' 2>/dev/null | grep -m1 VIOLATION \
         >/dev/null; echo \"${{PIPESTATUS[0]}}\"",
        env!("CARGO_BIN_EXE_weft"),
        dir.display()
    );
    let out = Command::new("bash").args(["-c", &script]).output().unwrap();
    assert_eq!(stdout(&out).trim(), "1", "{}", stderr(&out));
    assert_eq!(files(&dir).len(), 2);
}

/// Row 4: an unwritable output folder is refused before the first run.
#[test]
fn row4_an_unwritable_out_is_refused_before_running() {
    for json in [false, true] {
        let mut args = vec!["explore", "primary-backup", "--runs", "100", "--out", "/proc/x"];
        if json {
            args.push("--json");
        }
        let out = weft(&args);
        assert_input_error(&out, &["cannot write to output folder /proc/x"]);
        assert!(stdout(&out).is_empty(), "nothing ran: {}", stdout(&out));
    }
    let dir = scratch("row4");
    let file = dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let out = weft(&["explore", "primary-backup", "--runs", "1", "--out", file.to_str().unwrap()]);
    assert_input_error(&out, &["cannot write to output folder"]);
}

fn explore_into(dir: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["explore", "primary-backup", "--seed", "1", "--out", dir.to_str().unwrap()];
    args.extend_from_slice(extra);
    weft(&args)
}

fn contents(dir: &Path) -> Vec<(String, Vec<u8>)> {
    files(dir).into_iter().map(|n| (n.clone(), std::fs::read(dir.join(&n)).unwrap())).collect()
}

/// Row 5: campaigns into one folder never overwrite each other's findings.
#[test]
fn row5_later_campaigns_never_overwrite_earlier_findings() {
    let dir = scratch("row5");
    assert_eq!(explore_into(&dir, &[]).status.code(), Some(1));
    let first = contents(&dir);
    assert_eq!(first.len(), 2);
    assert_eq!(explore_into(&dir, &["-o", "writes=5"]).status.code(), Some(1));
    assert_eq!(
        explore_into(&dir, &["--property", "AckedWritesSurviveFailover"]).status.code(),
        Some(1)
    );
    let after = contents(&dir);
    assert_eq!(after.len(), 6, "other options and property: other names: {:?}", files(&dir));
    for f in &first {
        assert!(after.contains(f), "{} was changed", f.0);
    }
    // The same campaign with a smaller shrink budget: a different shrunk repro, written beside
    // the first one instead of over it; the identical unshrunk repro is not copied.
    let o = explore_into(&dir, &["--shrink-budget", "3"]);
    assert_eq!(o.status.code(), Some(1));
    let names = files(&dir);
    assert_eq!(names.len(), 7, "{names:?}");
    assert!(names.iter().any(|n| n.ends_with("-shrunk-2.json")), "{names:?}");
    assert!(stdout(&o).contains("-shrunk-2.json"), "{}", stdout(&o));
    for f in &first {
        assert_eq!(std::fs::read(dir.join(&f.0)).unwrap(), f.1, "{} was changed", f.0);
    }
}

#[test]
fn row5_concurrent_campaigns_into_one_folder_lose_nothing() {
    let dir = scratch("row5-concurrent");
    let spawn = |budget: &str| {
        Command::new(env!("CARGO_BIN_EXE_weft"))
            .args(["explore", "primary-backup", "--seed", "1", "--shrink-budget", budget])
            .args(["--out", dir.to_str().unwrap()])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    let children: Vec<Child> = ["2", "5", "8", "11"].into_iter().map(spawn).collect();
    let mut reported = Vec::new();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        for line in stdout(&out).lines() {
            if let Some(p) = line.strip_prefix("  shrunk repro: ") {
                reported.push(p.to_string());
            }
        }
    }
    assert_eq!(reported.len(), 4);
    for p in &reported {
        let r = weft(&["replay", p]);
        assert_eq!(r.status.code(), Some(1), "{p} replays: {}{}", stdout(&r), stderr(&r));
    }
    assert!(files(&dir).iter().all(|n| !n.ends_with(".tmp")), "{:?}", files(&dir));
}

/// Waits until the child has printed a line containing `marker` on stdout.
fn wait_for_line(child: &mut Child, marker: &str) -> BufReader<std::process::ChildStdout> {
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0, "no `{marker}` line");
        if line.contains(marker) {
            return reader;
        }
    }
}

fn signal(child: &Child, sig: &str) {
    let status = Command::new("kill").args([sig, &child.id().to_string()]).status().unwrap();
    assert!(status.success());
}

/// Row 9: SIGTERM and SIGHUP are Ctrl-C.
#[test]
fn row9_sigterm_and_sighup_interrupt_a_campaign_like_ctrl_c() {
    for sig in ["-TERM", "-HUP", "-INT"] {
        let dir = scratch("row9");
        let mut child = Command::new(env!("CARGO_BIN_EXE_weft"))
            .args(["explore", "primary-backup", "--variant", "fixed", "--runs", "100000000"])
            .args(["--out", dir.to_str().unwrap()])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut reader = wait_for_line(&mut child, "scenario");
        // The handler is installed right after this line; leave time even on a busy machine.
        std::thread::sleep(std::time::Duration::from_millis(1000));
        signal(&child, sig);
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut reader, &mut rest).unwrap();
        assert_eq!(child.wait().unwrap().code(), Some(130), "{sig}: {rest}");
        assert!(rest.contains("interrupted: no violation found in"), "{sig}: {rest}");
    }
}

/// Row 9: `replay` and `show`, which have nothing to save, end at once on a signal with 130
/// and `weft: interrupted`, as the README's table says (a default SIGTERM would be 143). The
/// repro is a FIFO, so the command is provably inside it (blocked reading) when signalled.
#[test]
fn row9_a_signal_during_replay_or_show_exits_130() {
    let dir = scratch("row9-replay");
    for (i, (cmd, sig)) in
        [("replay", "-TERM"), ("show", "-TERM"), ("replay", "-HUP"), ("show", "-INT")]
            .into_iter()
            .enumerate()
    {
        let fifo = dir.join(format!("repro-{i}.json"));
        let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
        assert!(made.success());
        let child = Command::new(env!("CARGO_BIN_EXE_weft"))
            .args([cmd, fifo.to_str().unwrap()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Opening the write end returns once weft has opened the read end, after its handler
        // was installed; weft then waits for the repro's text.
        let writer = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
        signal(&child, sig);
        let out = child.wait_with_output().unwrap();
        drop(writer);
        assert_eq!(out.status.code(), Some(130), "{cmd} {sig}: {}{}", stdout(&out), stderr(&out));
        assert_eq!(stderr(&out), "weft: interrupted\n", "{cmd} {sig}");
    }
}

/// Rows 9 and 10: a signal during `weft shrink` keeps the best result so far, reported as
/// interrupted (not as a spent budget).
#[test]
fn row9_a_signal_during_shrink_keeps_its_best_result_and_says_interrupted() {
    let frozen = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../targets/raft-rs/tests/counterexamples/0.4.1-transfer-with-unapplied-conf-changes.json"
    );
    for sig in ["-TERM", "-INT"] {
        let dir = scratch("row9-shrink");
        let out = dir.join("best.json");
        let mut child = Command::new(env!("CARGO_BIN_EXE_weft"))
            .args(["shrink", frozen, "--shrink-budget", "1000000", "-o", out.to_str().unwrap()])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut reader = wait_for_line(&mut child, "weft shrink");
        std::thread::sleep(std::time::Duration::from_millis(1500));
        signal(&child, sig);
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut reader, &mut rest).unwrap();
        assert_eq!(child.wait().unwrap().code(), Some(1), "{sig}: {rest}");
        assert!(rest.contains("(interrupted: best so far)"), "{sig}: {rest}");
        assert!(!rest.contains("budget reached"), "{sig}: {rest}");
        let r = weft(&["replay", out.to_str().unwrap()]);
        assert_eq!(r.status.code(), Some(1), "the best result replays: {}", stdout(&r));
    }
}

/// Row 10: messages say what happened.
#[test]
fn row10_messages_name_what_is_wrong() {
    let dir = scratch("row10");
    let golden = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/primary-backup-buggy.json");
    // A write failure says "cannot write".
    let out = weft(&["shrink", golden, "-o", "/proc/x/shrunk.json"]);
    assert_input_error(&out, &["cannot write to output folder /proc/x"]);
    assert!(stdout(&out).is_empty(), "refused before shrinking: {}", stdout(&out));
    // A missing format_version is called missing.
    let file = edited(&dir, "nover.json", |v| {
        v.as_object_mut().unwrap().remove("format_version");
    });
    assert_input_error(&weft(&["replay", &file]), &["missing field `format_version`"]);
    // Newlines from a file are escaped: still one line.
    let file = edited(&dir, "nl.json", |v| v["spec"]["target"] = "evil\nsecond line\r".into());
    assert_input_error(&weft(&["replay", &file]), &["unknown target `evil\\nsecond line\\r`"]);
    // ids=1000 is told the real range.
    let out = weft(&["explore", "chord", "-o", "ids=1000", "--runs", "1"]);
    assert_input_error(&out, &["`ids`", "`1000`", "2..=8"]);
}

/// Row 11: checks of nothing are input errors.
#[test]
fn row11_empty_checks_are_input_errors() {
    assert_input_error(&weft(&["explore", "primary-backup", "--runs", "0"]), &["--runs"]);
    assert_input_error(&weft(&["explore", "primary-backup", "--time", "0s"]), &["--time"]);
    assert_input_error(
        &weft(&["check-determinism", "primary-backup", "--seeds", "0"]),
        &["--seeds 0 checks nothing"],
    );
    let dir = scratch("row11");
    let out = weft(&["explore", "primary-backup", "--time", "1ns", "--out", dir.to_str().unwrap()]);
    assert_input_error(&out, &["allowed no run"]);
}

/// Row 12: `--json` keeps progress on stderr; stdout is the summary alone.
#[test]
fn row12_json_keeps_progress_on_stderr() {
    let dir = scratch("row12");
    let out = weft(&[
        "explore",
        "primary-backup",
        "--variant",
        "fixed",
        "--time",
        "3s",
        "--json",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let summary: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(summary["exit_code"], 0);
    assert!(stderr(&out).contains("runs/s"), "a progress line: {}", stderr(&out));
}

/// Inputs are size-checked before they are read.
#[test]
fn inputs_are_size_checked_before_reading() {
    assert_input_error(&weft(&["replay", "/dev/zero"]), &["/dev/zero is larger than"]);
    let dir = scratch("big");
    let big = dir.join("big.json");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(weft_report::MAX_FILE_BYTES + 1).unwrap();
    assert_input_error(&weft(&["show", big.to_str().unwrap()]), &["larger than"]);
    let many = edited(&dir, "many.json", |v| v["decisions"] = "0*10000000 1".into());
    assert_input_error(&weft(&["replay", &many]), &["more than 10000000 decisions"]);
}
