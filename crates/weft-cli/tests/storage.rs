//! The crash-consistency matrix: each demonstration target's buggy variant is found exactly
//! under the contracts that allow its crash state, and every fixed variant passes all three,
//! with equal budgets; a posix counterexample replayed under fsync names the rule that makes it
//! unreachable there.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const RUNS: &str = "1000";

fn weft(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_weft")).args(args).output().expect("weft runs")
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn explore(target: &str, variant: &str, contract: &str, out: &Path) -> Output {
    weft(&[
        "explore",
        target,
        "--variant",
        variant,
        "--contract",
        contract,
        "--seed",
        "1",
        "--runs",
        RUNS,
        "--out",
        out.to_str().unwrap(),
    ])
}

/// (target, contracts under which the buggy variant must be found)
const CELLS: [(&str, &[&str]); 3] =
    [("wal-ack", &["fsync", "posix"]), ("snapshot-rename", &["posix"]), ("torn-log", &["posix"])];

#[test]
fn each_cell_of_the_matrix() {
    let out = scratch("matrix");
    let mut table = Vec::new();
    for (target, found_under) in CELLS {
        for variant in ["buggy", "fixed"] {
            for contract in ["durable", "fsync", "posix"] {
                let o = explore(target, variant, contract, &out);
                let expect =
                    if variant == "buggy" && found_under.contains(&contract) { 1 } else { 0 };
                table.push(format!("{target} {variant} {contract}: exit {:?}", o.status.code()));
                assert_eq!(
                    o.status.code(),
                    Some(expect),
                    "{target} --variant {variant} --contract {contract}\n{}",
                    String::from_utf8_lossy(&o.stdout)
                );
            }
        }
    }
    assert_eq!(table.len(), 18);
}

#[test]
fn a_posix_counterexample_is_unreachable_under_fsync_and_says_why() {
    let out = scratch("audit");
    let o = explore("torn-log", "buggy", "posix", &out);
    assert_eq!(o.status.code(), Some(1));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let repro = text.lines().last().unwrap().strip_prefix("reproduce: weft replay ").unwrap();
    let o = weft(&["replay", repro, "--contract", "fsync"]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(text.contains("not reachable under `fsync`"), "{text}");
    assert!(text.contains("in-order prefix"), "names the fsync rule: {text}");
    // Under its own contract it still reproduces.
    let o = weft(&["replay", repro, "--contract", "posix"]);
    assert_eq!(o.status.code(), Some(1));
    // explain-crash names the posix rule for each loss and the verdict per contract.
    let o = weft(&["explain-crash", repro]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(text.contains("posix: "), "{text}");
    assert!(text.contains("durable  not reachable"), "{text}");
    assert!(text.contains("posix    every crash state of this run is reachable"), "{text}");
}

#[test]
fn a_bad_contract_is_an_input_error() {
    let o = weft(&["explore", "wal-ack", "--contract", "ext4"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a contract"));
}
