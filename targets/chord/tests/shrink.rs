//! Message-mode counterexamples a person can read (issue 14): the frozen ring split of
//! `original` (ids=5, failures=3, AtMostOneRing) still replays, and the shrinker takes its
//! partly shrunk form to the story itself — every timer firing, message and crash of the
//! shortest split, no background maintenance (see docs/explorer.md for the event count).

use weft_core::{Outcome, Target};
use weft_explore::{replay_repro, shrink_repro, Quiet, ReplayVerdict, ShrinkOptions};
use weft_report::Repro;
use weft_target_chord::Chord;

/// Found by `weft explore chord --variant original --mode messages -o ids=5 -o failures=3
/// --property AtMostOneRing` (seed 1, run 19,672: 688 decisions, 396 events), shrunk with the
/// default budget of 20,000 candidates.
const PARTLY_SHRUNK: &str = include_str!("counterexamples/messages-original-split-119-events.json");
/// The same, shrunk to its fixpoint (`--shrink-budget 60s`: 35,202 candidates).
const SHRUNK: &str = include_str!("counterexamples/messages-original-split-97-events.json");

fn load(text: &str) -> (Repro, Box<dyn weft_core::Runner>) {
    let repro = Repro::parse(text).expect("the frozen repro parses");
    let runner = Chord.prepare(&repro.spec).expect("the spec is valid");
    (repro, runner)
}

#[test]
fn the_frozen_message_mode_splits_replay() {
    for (text, events) in [(PARTLY_SHRUNK, 119), (SHRUNK, 97)] {
        let (repro, runner) = load(text);
        let (r, verdict) = replay_repro(runner.as_ref(), &repro, None, false);
        assert_eq!(verdict, ReplayVerdict::Reproduced, "{:?}", r.report.outcome);
        assert_eq!(r.report.events, events);
        assert_eq!(r.report.outcome.property(), Some("AtMostOneRing"));
        assert!(matches!(r.report.outcome, Outcome::SafetyViolation { .. }));
    }
}

/// From 119 events the shrinker reaches the 97-event story (the joins at 1 ms, the maintenance
/// timers idle except the firings the split needs) within 20,000 candidates. Without idle
/// timers (a period's 0 meaning "as often as possible") it stopped at 246 events.
#[test]
fn the_partly_shrunk_split_shrinks_to_the_story() {
    let (repro, runner) = load(PARTLY_SHRUNK);
    let opts = ShrinkOptions { max_runs: 20_000 };
    let (out, stats) = shrink_repro(runner.as_ref(), None, &repro, &opts, &Quiet).unwrap();
    assert!(out.events <= 100, "{} events, {} decisions", out.events, out.decisions.len());
    assert_eq!(out.faults, 2, "both crashes stay: the split needs them");
    assert_eq!(out.outcome.property(), Some("AtMostOneRing"));
    assert!(stats.runs <= 20_000);
}
