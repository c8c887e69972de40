//! What property evaluation costs on this example: the same campaign (same seed, same runs,
//! the fixed variant so no run stops early) with the `Linearizable` property and without it.
//! `cargo bench -p register-study`. Prints both times and the overhead.

use std::time::Instant;
use weft::Target;
use weft::explore::{CampaignOptions, Quiet, Strategy};

fn time(world: &dyn Target, runs: u64) -> (f64, u64) {
    let spec = weft::RunSpec {
        target: "register-study".into(),
        variant: "fixed".into(),
        ..Default::default()
    };
    let runner = world.prepare(&spec).unwrap();
    let opts = CampaignOptions {
        seed: 1,
        runs: Some(runs),
        jobs: 1,
        strategy: Strategy::Random,
        scenario: runner.default_scenario(),
    };
    #[allow(clippy::disallowed_methods)] // a benchmark times wall clock, outside any run
    let start = Instant::now();
    let r = weft::explore::explore(runner.as_ref(), &opts, &Quiet).unwrap();
    assert!(r.found.is_none(), "the fixed variant passes");
    (start.elapsed().as_secs_f64(), r.events)
}

fn main() {
    let runs = 2000;
    let (with, _) = (0..3)
        .map(|_| time(&register_study::world(), runs))
        .fold((f64::MAX, 0), |a, b| if b.0 < a.0 { b } else { a });
    let (without, events) = (0..3)
        .map(|_| time(&register_study::unchecked(), runs))
        .fold((f64::MAX, 0), |a, b| if b.0 < a.0 { b } else { a });
    println!(
        "register-study fixed, {runs} runs ({events} events), best of 3: properties on {with:.3}s, off {without:.3}s: property cost {:.1}% of a run",
        100.0 * (with - without) / with
    );
}
