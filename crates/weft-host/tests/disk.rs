//! The simulated disk under the shim: each file call of `tests/c/disk.c` runs natively on an
//! empty real directory and under weft on a data directory (which does not exist for real),
//! and what the program observes — results, errnos, contents, sizes, sorted listings — must be
//! the same line for line; nothing is written to the real directory.

mod common;
use std::path::PathBuf;
use std::process::Command;
use weft_core::{Decisions, NullObserver, Outcome, Scenario};

fn fresh(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("disk-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn file_calls_match_native() {
    let bin = common::compile("disk", &[]);
    let native_dir = fresh("native");
    std::fs::create_dir_all(&native_dir).unwrap();
    let native = Command::new(&bin).arg(&native_dir).output().expect("run natively");
    assert!(native.status.success(), "native run failed");
    let native = String::from_utf8(native.stdout).unwrap();
    assert!(native.contains("same 1"), "{native}");

    let sim_dir = fresh("sim");
    let mut cfg = common::config("disk", &[sim_dir.to_str().unwrap()], 1);
    cfg.groups[0].data_dirs = vec![sim_dir.display().to_string()];
    let mut d = Decisions::random(3);
    let out = weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap();
    assert_eq!(out.report.outcome, Outcome::Pass, "under the shim: {:?}", out.lines);
    let shim: String = out.lines.iter().map(|l| format!("{}\n", l.text)).collect();
    assert_eq!(shim, native, "shim (left) vs native (right)");
    assert!(!sim_dir.exists(), "the data directory is simulated: nothing real is written");
}

#[test]
fn calls_the_disk_does_not_model_are_refused_by_name() {
    let dir = fresh("refuse");
    for (call, name) in [
        ("mmap", "mmap"),
        ("odirect", "O_DIRECT"),
        ("link", "link"),
        ("fallocate", "fallocate"),
        ("fopen", "fopen"),
    ] {
        let mut cfg = common::config("diskrefuse", &[dir.to_str().unwrap(), call], 1);
        cfg.groups[0].data_dirs = vec![dir.display().to_string()];
        let mut d = Decisions::random(1);
        let out = weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap();
        match &out.report.outcome {
            Outcome::Unsupported { detail } => assert!(detail.contains(name), "{call}: {detail}"),
            other => panic!("{call}: expected unsupported, got {other}: {:?}", out.lines),
        }
    }
    assert!(!dir.exists(), "nothing real is written");
}

#[test]
fn disk_fault_knobs_are_refused_for_real_programs_rather_than_ignored() {
    let dir = fresh("knobs");
    let mut cfg = common::config("diskrefuse", &[dir.to_str().unwrap(), "none"], 1);
    cfg.groups[0].data_dirs = vec![dir.display().to_string()];
    let mut scenario = Scenario::calm();
    scenario.set_knob("disk.eio", "1/10").unwrap();
    let out = weft_host::run_once(&cfg, &scenario, &mut Decisions::random(1), &mut NullObserver);
    match out.unwrap().report.outcome {
        Outcome::Unsupported { detail } => assert!(detail.contains("eio"), "{detail}"),
        other => panic!("expected unsupported, got {other}"),
    }
}
