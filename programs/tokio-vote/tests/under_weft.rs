//! tokio-vote under weft's `process` target: a real tokio program (multi-thread runtime, TCP
//! between three nodes, timers) runs deterministically, and the explorer finds its planted
//! double vote, shrinks the counterexample and replays it bit for bit; the fixed build passes.

use weft_core::{Outcome, RunSpec, Scenario, Target};
use weft_explore::{
    check_seed, replay, run_campaign, shrink, CampaignOptions, Quiet, ShrinkOptions, Strategy,
};
use weft_host::ProcessTarget;

fn spec(extra: &[&str]) -> RunSpec {
    let mut spec =
        RunSpec { target: "process".into(), variant: "default".into(), ..Default::default() };
    spec.options.insert("program".into(), env!("CARGO_BIN_EXE_tokio-vote").into());
    let mut args: Vec<String> = ["{id}", "{addr}", "{others}"].map(String::from).to_vec();
    args.extend(extra.iter().map(|s| s.to_string()));
    spec.options.insert("args".into(), weft_host::join_args(&args));
    spec.options.insert("forbid".into(), "SPLIT BRAIN".into());
    spec.options.insert("time_limit".into(), "3s".into());
    spec
}

#[test]
fn twenty_seeds_are_deterministic() {
    let runner = ProcessTarget.prepare(&spec(&["--fixed"])).unwrap();
    let scenario = Scenario::default(); // network faults on: drops, delays, partitions, crashes
    for seed in 0..20 {
        if let Some(diff) = check_seed(runner.as_ref(), &scenario, seed) {
            panic!("seed {seed} is not deterministic: {diff:?}");
        }
    }
}

#[test]
fn the_double_vote_is_found_shrunk_and_replayed() {
    let runner = ProcessTarget.prepare(&spec(&[])).unwrap();
    let scenario = Scenario::calm();
    let opts = CampaignOptions {
        seed: 7,
        runs: Some(50),
        jobs: 1,
        strategy: Strategy::Random,
        scenario: scenario.clone(),
    };
    let found =
        run_campaign(runner.as_ref(), &opts, &Quiet).found.expect("the split brain is found");
    assert!(
        matches!(&found.report.outcome, Outcome::SafetyViolation { property, .. } if property == "no_forbidden_output"),
        "{:?}",
        found.report.outcome
    );
    let shrunk = shrink(
        runner.as_ref(),
        &scenario,
        &found.decisions,
        &ShrinkOptions { max_runs: 80 },
        &Quiet,
    )
    .unwrap();
    assert!(shrunk.report.outcome.same_failure(&found.report.outcome));
    assert!(shrunk.decisions.len() <= found.decisions.len());
    println!(
        "found at run {} (seed {}); shrunk {} -> {} decisions in {} runs",
        found.run_index,
        found.seed,
        found.decisions.len(),
        shrunk.decisions.len(),
        shrunk.runs
    );
    let again = replay(runner.as_ref(), &scenario, &shrunk.decisions, false);
    assert_eq!(again.report.trace_hash, shrunk.report.trace_hash, "bit for bit");

    // The same campaign on the fixed build finds nothing.
    let fixed = ProcessTarget.prepare(&spec(&["--fixed"])).unwrap();
    let clean = run_campaign(fixed.as_ref(), &CampaignOptions { runs: Some(30), ..opts }, &Quiet);
    assert!(
        clean.found.is_none(),
        "the fixed build splits: {:?}",
        clean.found.map(|f| f.report.outcome)
    );
}
