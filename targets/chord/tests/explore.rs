//! The target through weft's explorer, as `weft explore chord …` will drive it: a random
//! campaign finds the literal ring loss, its recorded decisions replay to the same outcome and
//! trace hash, and `check_seed` finds no nondeterminism in either mode.

use weft_core::Target;
use weft_explore::{check_seed, replay, run_campaign, CampaignOptions, Quiet, Strategy};
use weft_target_chord::{spec, Chord};

#[test]
fn campaign_finds_and_replays_the_literal_ring_loss() {
    let runner = Chord.prepare(&spec("literal", &[("ids", "4")], None)).unwrap();
    let opts = CampaignOptions {
        seed: 1,
        runs: Some(500),
        jobs: 1,
        strategy: Strategy::Random,
        scenario: runner.default_scenario(),
    };
    let result = run_campaign(runner.as_ref(), &opts, &Quiet);
    let found = result.found.expect("the literal protocol loses its ring within 500 runs");
    let property = found.report.outcome.property().unwrap().to_string();
    assert!(["AtLeastOneRing", "ConnectedAppendages"].contains(&property.as_str()));
    let again = replay(runner.as_ref(), &found.scenario, &found.decisions, true);
    assert_eq!(again.report, found.report);
    assert_eq!(again.events.last().map(|e| e.hash), Some(found.report.trace_hash));
}

#[test]
fn no_nondeterminism_in_either_mode() {
    for mode in ["atomic", "messages"] {
        for variant in ["original", "corrected"] {
            let runner = Chord.prepare(&spec(variant, &[("mode", mode)], None)).unwrap();
            let mut scenario = runner.default_scenario();
            scenario.fault_phase = weft_core::SimDuration::from_millis(300);
            scenario.heal_phase = weft_core::SimDuration::from_millis(600);
            for seed in 0..3 {
                assert!(
                    check_seed(runner.as_ref(), &scenario, seed).is_none(),
                    "{mode} {variant} {seed}"
                );
            }
        }
    }
}
