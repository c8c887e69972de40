//! Client histories of real processes: `WEFT-HISTORY` lines are stamped with virtual time and
//! node, checked at the end of a passing run against the configured model, and a violation is
//! the run's outcome with the checker's witness; without a model the lines are plain output.

mod common;
use weft_check::history::HistoryModel;
use weft_core::{Decisions, NullObserver, Outcome, Scenario};
use weft_host::{HostConfig, RunOutput};

fn run(mode: &str, model: Option<HistoryModel>) -> RunOutput {
    let mut cfg: HostConfig = common::config("history", &[mode], 1);
    cfg.history = model;
    let mut d = Decisions::random(3);
    weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).expect("host error")
}

#[test]
fn a_valid_set_history_passes_and_says_what_it_checked() {
    let out = run("good", Some(HistoryModel::Set));
    assert_eq!(out.report.outcome, Outcome::Pass, "{}", out.render());
    let note = out.notes.iter().find(|n| n.starts_with("set:")).expect("a verdict note");
    assert!(note.contains("all 4 adds acknowledged before it are present"), "{note}");
}

#[test]
fn a_lost_acknowledged_add_is_a_violation_naming_it_and_its_virtual_time() {
    let out = run("lose", Some(HistoryModel::Set));
    let Outcome::SafetyViolation { property, detail } = &out.report.outcome else {
        panic!("must fail: {:?}", out.report.outcome)
    };
    assert_eq!(property, "history");
    // Element 2's ok is the fourth event, printed at 30 ms (10 ms after each event).
    assert!(detail.contains("1 of 4 acknowledged adds lost: 2 (ok at 0.030000s n0"), "{detail}");
    let again = run("lose", Some(HistoryModel::Set));
    assert_eq!(out.report, again.report, "deterministic");
}

#[test]
fn without_a_model_history_lines_are_plain_output_and_malformed_ones_are_named() {
    assert_eq!(run("lose", None).report.outcome, Outcome::Pass);
    let Outcome::SafetyViolation { detail, .. } =
        run("bad", Some(HistoryModel::Set)).report.outcome
    else {
        panic!("an unpaired completion is an unusable history")
    };
    assert!(detail.contains("completed an operation it never invoked"), "{detail}");
}
