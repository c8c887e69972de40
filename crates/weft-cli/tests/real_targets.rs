//! Real libraries through the `weft` binary: a frozen raft-rs counterexample replays on the
//! buggy release and passes on the fixed one (`weft replay --variant`), shrinking can be made to
//! keep that difference (`weft shrink --passing-on`), and `weft eval` prints its comparison
//! table with runs and time to the first failure.

use std::path::PathBuf;
use std::process::{Command, Output};

fn weft(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_weft")).args(args).output().expect("weft runs")
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn frozen_raft_repro() -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../targets/raft-rs/tests/counterexamples")
        .join("0.4.1-transfer-with-unapplied-conf-changes.json");
    p.to_str().expect("utf-8 path").to_string()
}

#[test]
fn a_frozen_raft_counterexample_fails_on_0_4_1_and_passes_on_0_4_2() {
    let file = frozen_raft_repro();
    let buggy = weft(&["replay", &file]);
    assert_eq!(buggy.status.code(), Some(1), "{}", text(&buggy));
    assert!(text(&buggy).contains("reproduced: same outcome, same trace hash"), "{}", text(&buggy));
    assert!(text(&buggy).contains("were both leader in term"), "{}", text(&buggy));

    let fixed = weft(&["replay", &file, "--variant", "0.4.2"]);
    assert_eq!(fixed.status.code(), Some(0), "{}", text(&fixed));
    assert!(text(&fixed).contains("on `0.4.2`: pass"), "{}", text(&fixed));

    let unknown = weft(&["replay", &file, "--variant", "9.9.9"]);
    assert_eq!(unknown.status.code(), Some(2));
    let err = String::from_utf8_lossy(&unknown.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("unknown variant `9.9.9`"), "{err}");
}

#[test]
fn eval_prints_runs_and_time_to_the_first_failure() {
    let o = weft(&[
        "eval",
        "primary-backup",
        "--variants",
        "buggy,fixed",
        "--campaigns",
        "4",
        "--budget",
        "200",
        "--jobs",
        "1",
    ]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("| median runs to 1st | median time to 1st |"), "{out}");
    let row = |v: &str| {
        out.lines().find(|l| l.starts_with(&format!("| {v} |"))).unwrap_or_default().to_string()
    };
    // buggy: every campaign finds it, with a time; fixed: none, no time.
    assert!(row("buggy").starts_with("| buggy | 4 / 4 |"), "{out}");
    assert!(row("buggy").contains(" s |"), "{out}");
    assert!(row("fixed").starts_with("| fixed | 0 / 4 |"), "{out}");
    assert!(out.contains("never on fixed"), "{out}");
}

#[test]
fn shrink_passing_on_keeps_the_difference_or_refuses() {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("real_targets");
    std::fs::create_dir_all(&d).unwrap();
    let out = d.join("diff.json");
    let file = frozen_raft_repro();
    let o = weft(&[
        "shrink",
        &file,
        "--passing-on",
        "0.4.2",
        "--shrink-budget",
        "200",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("keeping it passing on `0.4.2`"), "{}", text(&o));
    let fixed = weft(&["replay", out.to_str().unwrap(), "--variant", "0.4.2"]);
    assert_eq!(fixed.status.code(), Some(0), "{}", text(&fixed));

    // Against the buggy variant itself there is no difference to keep: a one-line input error.
    let same = weft(&["shrink", &file, "--passing-on", "0.4.1", "-o", out.to_str().unwrap()]);
    assert_eq!(same.status.code(), Some(2));
    let err = String::from_utf8_lossy(&same.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("fail on the reference too"), "{err}");
}
