//! The explorer through the `weft` binary: explore shrinks and both repros replay; results do
//! not depend on `--jobs`; `shrink`, `show --html/--shiviz` and `--json` do what they say.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn weft(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_weft")).args(args).output().expect("weft runs")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited")
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("explorer").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn decisions(path: &Path) -> Vec<u64> {
    weft_report::Repro::read(path).unwrap().decisions
}

/// See `MINIMAL` in crates/weft-explore/tests/strategies.rs and docs/explorer.md: the canary's
/// shortest counterexample has 23 decisions.
const MINIMAL_DECISIONS: usize = 23;

#[test]
fn explore_writes_the_unshrunk_then_a_shrunk_repro_and_both_replay() {
    let d = dir("shrink");
    let o = weft(&[
        "explore",
        "primary-backup",
        "--variant",
        "buggy",
        "--seed",
        "1",
        "--runs",
        "500",
        "--jobs",
        "1",
        "--strategy",
        "random",
        "--out",
        d.to_str().unwrap(),
    ]);
    let out = text(&o);
    assert_eq!(code(&o), 1, "{out}");
    // DIR/TARGET-VARIANT-seedS-runI-HASH.json, HASH naming the campaign (see output.rs).
    let named = |prefix: &str| {
        let line = out.lines().find_map(|l| l.strip_prefix(prefix)).expect(prefix);
        PathBuf::from(line)
    };
    let full = named("  repro: ");
    let small = named("  shrunk repro: ");
    let name = full.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("primary-backup-buggy-seed1-run0-") && name.len() == 45, "{name}");
    assert_eq!(small, d.join(name.replace(".json", "-shrunk.json")));
    assert!(
        out.lines().last().unwrap().ends_with(&format!("weft replay {}", small.display())),
        "{out}"
    );
    assert!(out.contains("shrunk in"), "{out}");
    for path in [&full, &small] {
        let r = weft(&["replay", path.to_str().unwrap()]);
        assert_eq!(code(&r), 1, "{}", text(&r));
    }
    let n = decisions(&small).len();
    assert!(n <= MINIMAL_DECISIONS + 1, "shrunk repro has {n} decisions");
    assert!(decisions(&full).len() > n);
    let repro = weft_report::Repro::read(&small).unwrap();
    let from = repro.provenance.shrunk_from.expect("shrunk_from recorded");
    assert_eq!(from.decisions as usize, decisions(&full).len());
    assert!(repro.events < from.events);
}

#[test]
fn no_shrink_writes_only_the_unshrunk_repro() {
    let d = dir("no-shrink");
    let o = weft(&[
        "explore",
        "primary-backup",
        "--variant",
        "buggy",
        "--runs",
        "50",
        "--jobs",
        "1",
        "--strategy",
        "random",
        "--no-shrink",
        "--out",
        d.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 1);
    let files: Vec<_> = std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
}

#[test]
fn one_and_two_jobs_report_the_same_violation_for_every_strategy() {
    for strategy in ["random", "swarm", "coverage"] {
        for seed in ["3", "11"] {
            let mut repros = Vec::new();
            for jobs in ["1", "2"] {
                let d = dir(&format!("jobs-{strategy}-{seed}-{jobs}"));
                let o = weft(&[
                    "explore",
                    "primary-backup",
                    "--variant",
                    "buggy",
                    "--seed",
                    seed,
                    "--runs",
                    "3000",
                    "--jobs",
                    jobs,
                    "--strategy",
                    strategy,
                    "--no-shrink",
                    "--out",
                    d.to_str().unwrap(),
                ]);
                assert_eq!(code(&o), 1, "{}", text(&o));
                let file = std::fs::read_dir(&d).unwrap().next().unwrap().unwrap().path();
                repros.push((
                    file.file_name().unwrap().to_owned(),
                    std::fs::read_to_string(&file).unwrap(),
                ));
            }
            assert_eq!(repros[0], repros[1], "{strategy} seed {seed}");
        }
    }
}

#[test]
fn exhaustive_search_says_when_a_target_has_no_state_hashes() {
    let d = dir("exhaustive");
    let o = weft(&[
        "explore",
        "primary-backup",
        "--strategy",
        "exhaustive",
        "--runs",
        "100",
        "--out",
        d.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 4, "{}", text(&o));
    assert!(text(&o).contains("never calls Observer::checkpoint"));
}

#[test]
fn json_summary_is_the_only_thing_on_stdout() {
    let d = dir("json");
    let o = weft(&[
        "explore",
        "primary-backup",
        "--variant",
        "buggy",
        "--runs",
        "200",
        "--jobs",
        "2",
        "--json",
        "--out",
        d.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 1);
    let v: serde_json::Value = serde_json::from_str(text(&o).trim()).expect("one JSON document");
    assert_eq!(v["exit_code"], 1);
    assert_eq!(v["violation"]["property"], "AckedWritesSurviveFailover");
    let shrunk = v["violation"]["shrunk_repro"].as_str().unwrap();
    assert!(Path::new(shrunk).exists());
    assert!(
        v["violation"]["after"]["decisions"].as_u64().unwrap()
            <= v["violation"]["before"]["decisions"].as_u64().unwrap()
    );
    assert!(v["reproduce"].as_str().unwrap().starts_with("weft replay "));
    let fixed = weft(&[
        "explore",
        "primary-backup",
        "--variant",
        "fixed",
        "--property",
        "AckedWritesSurviveFailover",
        "--runs",
        "50",
        "--json",
        "--out",
        d.to_str().unwrap(),
    ]);
    assert_eq!(code(&fixed), 0);
    let v: serde_json::Value = serde_json::from_str(text(&fixed).trim()).unwrap();
    assert_eq!(v["runs"], 50);
    assert!(v.get("violation").is_none());
}

#[test]
fn shrink_command_shrinks_an_existing_repro() {
    let d = dir("shrink-cmd");
    let o = weft(&[
        "explore",
        "primary-backup",
        "--variant",
        "buggy",
        "--seed",
        "5",
        "--runs",
        "100",
        "--jobs",
        "1",
        "--strategy",
        "random",
        "--no-shrink",
        "--out",
        d.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 1);
    let full = std::fs::read_dir(&d).unwrap().next().unwrap().unwrap().path();
    let out = d.join("small.json");
    let s = weft(&["shrink", full.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(code(&s), 1, "{}", text(&s));
    assert!(text(&s).contains(" -> "), "{}", text(&s));
    assert_eq!(code(&weft(&["replay", out.to_str().unwrap()])), 1);
    assert!(decisions(&out).len() <= MINIMAL_DECISIONS + 1);
    // Shrinking is deterministic: the same input gives the same output.
    let again = d.join("again.json");
    assert_eq!(code(&weft(&["shrink", full.to_str().unwrap(), "-o", again.to_str().unwrap()])), 1);
    assert_eq!(decisions(&out), decisions(&again));
    // A tiny budget still leaves a failing repro.
    let quick = d.join("quick.json");
    let q = weft(&[
        "shrink",
        full.to_str().unwrap(),
        "-o",
        quick.to_str().unwrap(),
        "--shrink-budget",
        "5",
    ]);
    assert!(text(&q).contains("budget reached"), "{}", text(&q));
    assert_eq!(code(&weft(&["replay", quick.to_str().unwrap()])), 1);
}

/// The canary's first violation (random search, seed 1), unshrunk, written into `d`.
fn unshrunk_canary(d: &std::path::Path) -> std::path::PathBuf {
    let o = weft(&[
        "explore",
        "primary-backup",
        "--variant",
        "buggy",
        "--seed",
        "1",
        "--runs",
        "100",
        "--jobs",
        "1",
        "--strategy",
        "random",
        "--no-shrink",
        "--out",
        d.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 1);
    std::fs::read_dir(d).unwrap().next().unwrap().unwrap().path()
}

#[test]
fn show_draws_one_lane_per_node_and_one_arrow_per_delivery() {
    let d = dir("show");
    let repro = unshrunk_canary(&d);
    let timeline = weft(&["show", repro.to_str().unwrap()]);
    assert_eq!(code(&timeline), 0);
    let deliveries = text(&timeline).lines().filter(|l| l.contains(" deliver ")).count();
    assert!(deliveries > 0);
    let html = d.join("run.html");
    let log = d.join("run.log");
    let s = weft(&[
        "show",
        repro.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
        "--shiviz",
        log.to_str().unwrap(),
    ]);
    assert_eq!(code(&s), 0, "{}", text(&s));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert_eq!(page.matches("<g class=\"lane\"").count(), 2);
    assert_eq!(page.matches("<line class=\"arrow\"").count(), deliveries);
    assert_eq!(page.matches("class=\"violation\"").count(), 1);
    assert!(!page.contains("src=\"http") && !page.contains("href=\"http"), "no external assets");
    let shiviz = std::fs::read_to_string(&log).unwrap();
    assert_eq!(shiviz.lines().next().unwrap(), weft_report::shiviz::REGEX);
    assert_eq!(
        shiviz.lines().filter(|l| l.starts_with('n') || l.starts_with("world")).count(),
        text(&timeline).lines().count() - 1
    );
}

/// `weft show --decisions`: every decision of the repro is counted under its site's kind, and
/// every one that is not zero is listed with its site and its value, in order.
#[test]
fn show_decisions_says_which_decision_decides_what() {
    let d = dir("show-decisions");
    let path = unshrunk_canary(&d);
    let repro = weft_report::Repro::read(&path).unwrap();
    let s = weft(&["show", path.to_str().unwrap(), "--decisions"]);
    assert_eq!(code(&s), 0, "{}", text(&s));
    let out = text(&s);
    let nonzero: Vec<u64> = repro.decisions.iter().copied().filter(|&v| v != 0).collect();
    let head = format!("{} decisions, {} not zero", repro.decisions.len(), nonzero.len());
    assert!(out.starts_with(&head), "{out}");
    let listed: Vec<u64> = out
        .lines()
        .filter(|l| l.trim_start().starts_with('#'))
        .map(|l| l.rsplit(" = ").next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(listed, nonzero, "{out}");
    let counted: usize = out
        .lines()
        .skip(2)
        .take_while(|l| !l.starts_with("not zero"))
        .map(|l| l.split_whitespace().nth(1).unwrap().parse::<usize>().unwrap())
        .sum();
    assert_eq!(counted, repro.decisions.len(), "{out}");
    assert!(out.contains("fault"), "the canary's pause is a fault decision: {out}");
}

/// Regression: the canary's minimal counterexample, written by hand (postmortem in
/// docs/explorer.md). The primary is paused at t=0 for 59 ms; the backup hears nothing for more
/// than 50 ms and takes over; then the primary handles write 1, acknowledges it at once and
/// replicates it to a backup that no longer follows. It must keep failing; the fixed primary
/// must not fail on it.
#[test]
fn the_hand_written_minimal_canary_repro_replays() {
    let d = dir("minimal");
    let o = weft(&[
        "explore",
        "primary-backup",
        "--variant",
        "buggy",
        "--runs",
        "50",
        "--jobs",
        "1",
        "--strategy",
        "random",
        "--no-shrink",
        "--out",
        d.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 1);
    let found = std::fs::read_dir(&d).unwrap().next().unwrap().unwrap().path();
    let mut r = weft_report::Repro::read(&found).unwrap();
    // A random campaign's repro carries the target's default scenario: keep it.
    let mut list = vec![0u64; 20];
    list.extend([2, 0, 58]);
    assert_eq!(list.len(), MINIMAL_DECISIONS);
    r.decisions = list;
    let path = d.join("minimal.json");
    r.write(&path).unwrap();
    // The recorded hash is the found run's, so replay reports divergence (3) but shows the
    // outcome; shrinking it must keep exactly this list (it is already minimal).
    let out = d.join("minimal-shrunk.json");
    let s = weft(&["shrink", path.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(code(&s), 1, "{}", text(&s));
    assert_eq!(decisions(&out).len(), MINIMAL_DECISIONS);
    assert_eq!(code(&weft(&["replay", out.to_str().unwrap()])), 1);
    let mut fixed = weft_report::Repro::read(&out).unwrap();
    fixed.spec.variant = "fixed".into();
    let fixed_path = d.join("minimal-fixed.json");
    fixed.write(&fixed_path).unwrap();
    let f = weft(&["replay", fixed_path.to_str().unwrap()]);
    assert_eq!(code(&f), 3, "the fixed variant does not fail: {}", text(&f));
    assert!(text(&f).contains("outcome: pass"), "{}", text(&f));
}

#[test]
fn a_spent_time_budget_is_not_an_interruption() {
    let d = dir("time");
    let o = weft(&[
        "explore",
        "primary-backup",
        "--variant",
        "fixed",
        "--property",
        "AckedWritesSurviveFailover",
        "--time",
        "300ms",
        "--quiet",
        "--out",
        d.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(text(&o).contains("no violation found"), "{}", text(&o));
}
