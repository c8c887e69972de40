//! The `process` target under weft's generic explorer: a campaign finds the planted election
//! bug in real processes, the failing seed is deterministic, the shrinker makes its decision
//! list smaller, and the shrunk list replays to the same failure.

mod common;
use weft_core::{Decisions, Outcome, RunSpec, Scenario, Site, Target};
use weft_explore::{
    check_seed, replay, run_campaign, shrink, CampaignOptions, Quiet, ShrinkOptions, Strategy,
};
use weft_host::ProcessTarget;

fn election() -> Box<dyn weft_core::Runner> {
    let bin = common::compile("election", &[]);
    let mut spec =
        RunSpec { target: "process".into(), variant: "default".into(), ..Default::default() };
    spec.options.insert("program".into(), bin.display().to_string());
    let args: Vec<String> = ["{id}", "{addr}", "{others}"].map(String::from).to_vec();
    spec.options.insert("args".into(), weft_host::join_args(&args));
    spec.options.insert("forbid".into(), "SPLIT BRAIN".into());
    spec.options.insert("time_limit".into(), "2s".into());
    ProcessTarget.prepare(&spec).unwrap()
}

/// The host addresses its own decisions: each process's seed and the scheduler's picks have
/// their sites, so a replay by site keeps them apart from faults and latencies (the shrinker
/// relies on that), and a random run still draws exactly what it drew before.
#[test]
fn a_process_run_addresses_its_seeds_and_scheduler_picks() {
    let runner = election();
    let mut d = Decisions::random(3);
    runner.run(&Scenario::calm(), &mut d, &mut weft_core::NullObserver);
    let sites = d.sites();
    for p in 0..3 {
        assert_eq!(sites.iter().filter(|&&s| s == Site::seed(p)).count(), 1, "seed of p{p}");
    }
    assert!(sites.contains(&Site::schedule()), "scheduler picks are addressed");
    // The seeds come first (each process's hello), and no host draw is left anonymous.
    assert_eq!(&sites[..3], &[Site::seed(0), Site::seed(1), Site::seed(2)]);
    assert!(!sites.contains(&Site::ANON), "{:?}", sites.iter().map(|s| s.to_string()));
}

#[test]
fn campaign_finds_shrinks_and_replays_the_election_bug() {
    let runner = election();
    let scenario = Scenario::calm();

    let opts = CampaignOptions {
        seed: 1,
        runs: Some(20),
        jobs: 2,
        strategy: Strategy::Random,
        scenario: scenario.clone(),
    };
    let result = run_campaign(runner.as_ref(), &opts, &Quiet);
    let found = result.found.expect("the campaign should find the split brain");
    assert!(matches!(found.report.outcome, Outcome::SafetyViolation { .. }), "{:?}", found.report);

    assert!(
        check_seed(runner.as_ref(), &scenario, found.seed).is_none(),
        "runs must be deterministic"
    );

    let shrunk = shrink(
        runner.as_ref(),
        &scenario,
        &found.decisions,
        &ShrinkOptions { max_runs: 150 },
        &Quiet,
    )
    .unwrap();
    println!(
        "seed {} failed at run {}; shrunk {} -> {} decisions (sum {} -> {}) in {} runs",
        found.seed,
        found.run_index,
        found.decisions.len(),
        shrunk.decisions.len(),
        found.decisions.iter().map(|&d| d as u128).sum::<u128>(),
        shrunk.decisions.iter().map(|&d| d as u128).sum::<u128>(),
        shrunk.runs
    );
    assert!(shrunk.report.outcome.same_failure(&found.report.outcome));
    assert!(shrunk.accepted > 0, "the shrinker should simplify something");
    // The shrunk list replays under the shrunk scenario (its fault budget may be lower).
    let again = replay(runner.as_ref(), &shrunk.scenario, &shrunk.decisions, false);
    assert!(again.report.outcome.same_failure(&found.report.outcome));
    assert_eq!(again.report.trace_hash, shrunk.report.trace_hash);
}

/// Determinism under faults and threads, checked the way `weft check-determinism` does: each
/// seed runs twice with every event recorded, and any difference names the first event.
#[test]
fn seeds_are_deterministic_with_faults_and_threads() {
    let scenario =
        Scenario { fault_phase: weft_core::SimDuration::from_millis(100), ..Scenario::default() };
    for (name, args, nodes) in
        [("pingpong", vec!["{id}", "{addr}", "{others}", "4"], 3), ("threads", vec![], 2)]
    {
        let bin = common::compile(name, &[]);
        let mut spec =
            RunSpec { target: "process".into(), variant: "default".into(), ..Default::default() };
        spec.options.insert("program".into(), bin.display().to_string());
        let args: Vec<String> = args.into_iter().map(String::from).collect();
        spec.options.insert("args".into(), weft_host::join_args(&args));
        spec.options.insert("nodes".into(), nodes.to_string());
        spec.options.insert("exit_codes".into(), "0,3".into());
        let runner = ProcessTarget.prepare(&spec).unwrap();
        for seed in 0..6 {
            if let Some(d) = check_seed(runner.as_ref(), &scenario, seed) {
                panic!("{name}: {d}");
            }
        }
    }
}

/// The check above can fail: a program that leaks real CPU time through /proc is caught, and the
/// first differing event is its output line.
#[test]
fn a_leak_of_real_time_is_caught_by_the_determinism_check() {
    let bin = common::compile("leak", &[]);
    let mut spec =
        RunSpec { target: "process".into(), variant: "default".into(), ..Default::default() };
    spec.options.insert("program".into(), bin.display().to_string());
    spec.options.insert("nodes".into(), "1".into());
    let runner = ProcessTarget.prepare(&spec).unwrap();
    let d = check_seed(runner.as_ref(), &Scenario::calm(), 1).expect("runs should differ");
    let first = d.first.expect("an event");
    assert_eq!(first.kind, weft_core::EventKind::Observe);
    assert!(first.summary.starts_with("cpu time "), "{}", first.summary);
}
