//! Acceptance of async-kv: the explorer finds the buggy variant's lost write from scratch,
//! shrinks it, and the shrunk decisions replay bit for bit (same trace hash) and pass on the
//! fixed variant; the fixed variant passes the same campaign budget.

use std::collections::BTreeMap;
use weft_core::{Outcome, RunSpec, Runner, Target};
use weft_explore::{replay, run_campaign, shrink, CampaignOptions, Quiet, ShrinkOptions, Strategy};
use weft_target_async_kv::AsyncKv;

const SEED: u64 = 1;
const RUNS: u64 = 400;

fn runner(variant: &str) -> Box<dyn Runner> {
    let spec = RunSpec {
        target: "async-kv".into(),
        variant: variant.into(),
        options: BTreeMap::new(),
        property: None,
    };
    AsyncKv.prepare(&spec).expect("valid spec")
}

fn campaign(r: &dyn Runner) -> weft_explore::CampaignResult {
    let opts = CampaignOptions {
        seed: SEED,
        runs: Some(RUNS),
        jobs: 2,
        strategy: Strategy::Coverage,
        scenario: r.default_scenario(),
    };
    run_campaign(r, &opts, &Quiet)
}

#[test]
fn buggy_is_found_shrunk_and_replayed_and_the_fix_passes_it() {
    let buggy = runner("buggy");
    let found = campaign(buggy.as_ref()).found.expect("the lost write is found");
    match &found.report.outcome {
        Outcome::SafetyViolation { property, detail } => {
            assert_eq!(property, "Linearizable");
            assert!(detail.contains("write"), "{detail}");
        }
        o => panic!("expected a linearizability violation, got {o:?}"),
    }
    let sc = &found.scenario;
    let shrunk =
        shrink(buggy.as_ref(), sc, &found.decisions, &ShrinkOptions { max_runs: 300 }, &Quiet)
            .expect("it fails when replayed");
    assert!(shrunk.report.events < found.report.events, "shrinking made it shorter");
    // The shrunk list replays under the shrunk scenario (its fault budget may be lower).
    let sc = &shrunk.scenario;
    let again = replay(buggy.as_ref(), sc, &shrunk.decisions, false).report;
    assert_eq!(again.trace_hash, shrunk.report.trace_hash, "bit for bit");
    assert_eq!(again.outcome, shrunk.report.outcome);
    let fixed = runner("fixed");
    assert_eq!(replay(fixed.as_ref(), sc, &shrunk.decisions, false).report.outcome, Outcome::Pass);
}

#[test]
fn fixed_passes_the_same_budget() {
    let result = campaign(runner("fixed").as_ref());
    assert!(result.found.is_none(), "{:?}", result.found.map(|f| f.report.outcome));
    assert_eq!(result.runs, RUNS);
    assert!(result.sometimes_hit.iter().any(|p| p == "WriteAcknowledged"), "not vacuous");
}

#[test]
fn runs_are_deterministic() {
    let r = runner("buggy");
    for seed in 0..5 {
        assert!(weft_explore::check_seed(r.as_ref(), &r.default_scenario(), seed).is_none());
    }
}
