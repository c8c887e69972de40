//! weft against Stateright on the same atomic Chord model, in one run.
//!
//! Stateright explores the model (`Ring` states, `Step` actions: the very transition function
//! weft runs) by breadth-first search (shortest counterexample) and depth-first search (fast,
//! long counterexample). weft runs its default campaign (coverage-guided random search), then
//! shrinks the violation it found. The goal (README): DFS speed with BFS path length.
//! Property: AtMostOneRing on `original` (both obvious fixes), r = 2, 4 identities, at most 2
//! failures, starting from node 0 alone.
//!
//! Run: `cargo bench -p weft-target-chord --bench vs_stateright`. Prints times and path lengths
//! and their ratios; asserts nothing (the machine is shared and noisy).

#![allow(clippy::disallowed_methods)] // a benchmark reads the wall clock

use stateright::{Checker, Model, Property};
use std::time::Instant;
use weft_core::{Target, VERSION};
use weft_explore::{run_campaign, shrink, CampaignOptions, Quiet, ShrinkOptions, Strategy};
use weft_target_chord::model::{Enabled, Ring, Rules, Step};
use weft_target_chord::{props, spec, Chord, Config};

struct ChordModel {
    rules: Rules,
}

impl Model for ChordModel {
    type State = Ring;
    type Action = Step;

    fn init_states(&self) -> Vec<Ring> {
        vec![Ring::bootstrap()]
    }

    fn actions(&self, state: &Ring, actions: &mut Vec<Step>) {
        let mut enabled = Enabled::default();
        state.enabled(&self.rules, true, &mut enabled);
        actions.extend_from_slice(enabled.as_slice());
    }

    fn next_state(&self, state: &Ring, action: Step) -> Option<Ring> {
        let mut next = *state;
        next.apply(&self.rules, action);
        Some(next)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![Property::always("AtMostOneRing", |m: &ChordModel, s: &Ring| {
            props::violations(s, &m.rules) & props::Property::AtMostOneRing.bit() == 0
        })]
    }
}

fn main() {
    let spec = spec("original", &[("ids", "4")], Some("AtMostOneRing"));
    let rules = Config::from_spec(&spec).expect("valid spec").rules;
    println!("weft {VERSION} vs Stateright 0.31 on atomic Chord `original`, 4 ids, AtMostOneRing");

    let mut seconds = Vec::new();
    let mut report = |name: &str, secs: f64, states: usize, steps: Option<usize>| {
        seconds.push(secs);
        println!(
            "stateright {name}: {:>8.3} s, {:>10} states, counterexample {} steps",
            secs,
            states,
            steps.map_or("none".into(), |s| s.to_string())
        );
    };
    let start = Instant::now();
    let bfs = ChordModel { rules }.checker().spawn_bfs().join();
    let steps = bfs.discovery("AtMostOneRing").map(|p| p.into_actions().len());
    report("BFS", start.elapsed().as_secs_f64(), bfs.unique_state_count(), steps);
    let start = Instant::now();
    let dfs = ChordModel { rules }.checker().spawn_dfs().join();
    let steps = dfs.discovery("AtMostOneRing").map(|p| p.into_actions().len());
    report("DFS", start.elapsed().as_secs_f64(), dfs.unique_state_count(), steps);

    let runner = Chord.prepare(&spec).expect("valid spec");
    let opts = CampaignOptions {
        seed: 1,
        runs: Some(1_000_000),
        jobs: 1,
        strategy: Strategy::Coverage,
        scenario: runner.default_scenario(),
    };
    let start = Instant::now();
    let result = run_campaign(runner.as_ref(), &opts, &Quiet);
    let search = start.elapsed().as_secs_f64();
    let Some(found) = result.found else {
        println!("weft: no violation in {} runs", result.runs);
        return;
    };
    let shrunk = shrink(
        runner.as_ref(),
        &found.scenario,
        &found.decisions,
        &ShrinkOptions::default(),
        &Quiet,
    )
    .expect("the found run fails when replayed");
    let total = start.elapsed().as_secs_f64();
    let (bfs_secs, dfs_secs) = (seconds[0], seconds[1]);
    // Trace events are steps plus the final violation event.
    println!(
        "weft coverage + shrink: {:>8.3} s ({:.3} s search, run {}), counterexample {} steps \
         (before shrinking {}), {}",
        total,
        search,
        found.run_index,
        shrunk.report.events.saturating_sub(1),
        found.report.events.saturating_sub(1),
        shrunk.report.outcome
    );
    println!(
        "ratios: weft is {:.1}x faster than Stateright's BFS and {:.1}x faster than its DFS",
        bfs_secs / total,
        dfs_secs / total
    );
}
