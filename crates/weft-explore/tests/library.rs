//! The library entry points callers use instead of assembling repros by hand: an unsupported
//! strategy is an error (never "no violation"), a found violation becomes a repro that replays,
//! and a shrunk repro says what it was shrunk from and still replays.

use weft_core::{RunSpec, Target};
use weft_explore::{
    explore, found_repro, replay_repro, shrink_repro, CampaignOptions, Quiet, ReplayVerdict,
    ShrinkOptions, Strategy,
};

fn canary(variant: &str) -> (RunSpec, Box<dyn weft_core::Runner>) {
    let spec =
        RunSpec { target: "primary-backup".into(), variant: variant.into(), ..RunSpec::default() };
    let runner = weft_target_primary_backup::PrimaryBackup.prepare(&spec).unwrap();
    (spec, runner)
}

fn options(strategy: Strategy, runner: &dyn weft_core::Runner) -> CampaignOptions {
    CampaignOptions {
        seed: 1,
        runs: Some(2000),
        jobs: 1,
        strategy,
        scenario: runner.default_scenario(),
    }
}

#[test]
fn exhaustive_search_on_a_target_without_state_hashes_is_an_error() {
    let (_, runner) = canary("buggy");
    let opts = options(Strategy::Exhaustive { max_depth: 4 }, runner.as_ref());
    let err = explore(runner.as_ref(), &opts, &Quiet).expect_err("must not read as a pass");
    assert_eq!(err.strategy, "exhaustive");
    assert!(err.to_string().contains("unsupported"), "{err}");
}

#[test]
fn a_found_violation_becomes_a_repro_that_replays_and_shrinks() {
    let (spec, runner) = canary("buggy");
    let opts = options(Strategy::Random, runner.as_ref());
    let result = explore(runner.as_ref(), &opts, &Quiet).unwrap();
    let found = result.found.expect("the canary's bug is found in 2000 runs");
    let repro = found_repro(&spec, &found, 1, Strategy::Random);
    assert_eq!(repro.spec, spec);
    assert_eq!(repro.provenance.run_index, found.run_index);
    let (_, verdict) = replay_repro(runner.as_ref(), &repro, None, false);
    assert_eq!(verdict, ReplayVerdict::Reproduced);
    let (small, shrunk) =
        shrink_repro(runner.as_ref(), None, &repro, &ShrinkOptions { max_runs: 5000 }, &Quiet)
            .unwrap();
    assert!(small.decisions.len() < repro.decisions.len());
    assert_eq!(small.provenance.shrunk_from.unwrap().decisions, repro.decisions.len() as u64);
    assert_eq!(small.trace_hash, shrunk.report.trace_hash);
    assert_eq!(replay_repro(runner.as_ref(), &small, None, false).1, ReplayVerdict::Reproduced);
    // A tampered file diverges.
    let mut tampered = small.clone();
    tampered.trace_hash ^= 1;
    assert_eq!(replay_repro(runner.as_ref(), &tampered, None, false).1, ReplayVerdict::Diverged);
}
