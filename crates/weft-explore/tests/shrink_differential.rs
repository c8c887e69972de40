//! Differential shrinking keeps a counterexample that tells two variants apart: the plain
//! shrinker is free to drop what makes the reference pass, the differential one is not.

use weft_core::{Decisions, Observer, Outcome, RunReport, Runner, Scenario, SimTime};
use weft_explore::{shrink, shrink_differential, Quiet, ShrinkError, ShrinkOptions};

/// Draws four values of 0..10. The buggy variant fails when some value is 7; the fixed one
/// only when a 7 comes with no 3 (the "fix" handles the case a 3 sets up).
struct Toy {
    fixed: bool,
}

impl Runner for Toy {
    fn default_scenario(&self) -> Scenario {
        Scenario::calm()
    }
    fn run(&self, _: &Scenario, d: &mut Decisions, _: &mut dyn Observer) -> RunReport {
        let draws: Vec<u64> = (0..4).map(|_| d.choose(10)).collect();
        let fails = draws.contains(&7) && !(self.fixed && draws.contains(&3));
        RunReport {
            outcome: if fails {
                Outcome::SafetyViolation { property: "No7".into(), detail: format!("{draws:?}") }
            } else {
                Outcome::Pass
            },
            trace_hash: 0,
            events: 4,
            faults: 0,
            end_time: SimTime(0),
            sometimes: vec![],
        }
    }
}

#[test]
fn differential_shrinking_keeps_what_the_fix_is_about() {
    let (buggy, fixed) = (Toy { fixed: false }, Toy { fixed: true });
    let sc = Scenario::calm();
    let opts = ShrinkOptions::default();
    let input = [5, 3, 9, 7];
    // Plain shrinking drops the 3: the result no longer passes on the fixed variant.
    let plain = shrink(&buggy, &sc, &input, &opts, &Quiet).unwrap();
    assert_eq!(plain.decisions, vec![7]);
    // Differential shrinking keeps it, and removes everything else it can.
    let diff = shrink_differential(&buggy, &fixed, &sc, &input, &opts, &Quiet).unwrap();
    assert_eq!(diff.decisions, vec![3, 7]);
    assert!(diff.report.outcome.is_failure());
}

#[test]
fn differential_shrinking_refuses_input_that_fails_on_the_reference() {
    let (buggy, fixed) = (Toy { fixed: false }, Toy { fixed: true });
    let err = shrink_differential(
        &buggy,
        &fixed,
        &Scenario::calm(),
        &[0, 7],
        &ShrinkOptions::default(),
        &Quiet,
    )
    .unwrap_err();
    assert!(matches!(err, ShrinkError::FailsOnReference(_)), "{err}");
}
