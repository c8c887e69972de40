//! weft's own acceptance checks on the example (not harness a user writes): from `cargo test`
//! the stale read is found, shrunk and saved, the next check replays the saved repro first and
//! fails at once, and it is drawn; from the example's own `main_with` command line explore
//! finds it (exit 1), replay reproduces it (exit 1), show draws it, the fixed variant passes
//! (exit 0) and exhaustive search, which needs state hashes, is unsupported (exit 4).
use std::path::PathBuf;
use std::process::Command;
use weft::Failure;

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn the_saved_repro_is_replayed_first_and_drawn() {
    let dir = scratch("saved");
    let check = || {
        let w = register_study::world();
        weft::check(w).variant("buggy").runs(2000).shrink_runs(2000).regressions(&dir)
    };
    let Err(Failure::Violation(v)) = check().run() else { panic!("no stale read found") };
    assert!(!v.saved && v.repro.to_string_lossy().ends_with("-shrunk.json"), "{v}");
    assert!(v.replay.starts_with(&format!("WEFT_REPLAY={} cargo test", v.repro.display())));
    assert!(v.replay.contains("-p register-study --test acceptance"), "{}", v.replay);
    let Err(Failure::Violation(again)) = check().run() else { panic!("the saved repro passed") };
    assert!(again.saved && again.repro == v.repro, "{again}");
    let timeline = weft::draw(&register_study::world(), &v.repro, &dir.join("stale.html")).unwrap();
    assert!(timeline.contains("violation") && dir.join("stale.html").exists());
}

fn weft(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_register-study")).args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn explore_replay_show_from_the_examples_own_cli() {
    let dir = scratch("cli");
    let (out, html) = (dir.to_str().unwrap(), dir.join("stale.html"));
    let explore = ["explore", "register-study", "--runs", "2000", "--out", out, "--quiet"];
    let buggy = ["--variant", "buggy", "--shrink-budget", "2000"];
    let (code, text) = weft(&[&explore[..], &buggy].concat());
    let repro = text.lines().last().unwrap().strip_prefix("reproduce: weft replay ").unwrap();
    assert_eq!((code, weft(&["replay", repro]).0), (1, 1), "{text}");
    assert_eq!(weft(&["show", repro, "--html", html.to_str().unwrap()]).0, 0);
    assert!(std::fs::read_to_string(&html).unwrap().contains("Linearizable"));
    let fixed = ["explore", "register-study", "--variant", "fixed", "--runs", "300", "--out", out];
    assert_eq!(weft(&fixed).0, 0);
    assert_eq!(weft(&["explore", "register-study", "--strategy", "exhaustive", "--out", out]).0, 4);
}

/// The harness — everything a user writes but the protocol — stays within 60 lines.
#[test]
fn the_harness_is_at_most_60_lines() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = ["src/lib.rs", "src/main.rs", "tests/stale_read.rs"];
    let lines: usize =
        files.iter().map(|f| std::fs::read_to_string(root.join(f)).unwrap().lines().count()).sum();
    assert!(lines <= 60, "the harness is {lines} lines");
}
