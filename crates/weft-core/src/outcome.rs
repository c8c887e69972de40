//! Every way a run can end, as a named outcome. Bound everything; name every ending.

use serde::{Deserialize, Serialize};
use std::fmt;

/// When a property must hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Modality {
    /// Checked after every event; a single failing state is a safety violation.
    Always,
    /// Reachability: some run of a campaign should make it true. A campaign in which it never
    /// fired is reported as vacuous for it.
    Sometimes,
    /// Must become true within the heal phase's bound once faults have stopped.
    Eventually,
}

impl fmt::Display for Modality {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Modality::Always => "always",
            Modality::Sometimes => "sometimes",
            Modality::Eventually => "eventually",
        })
    }
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    /// No property failed within the run's bounds.
    Pass,
    /// An `always` property failed in some state.
    SafetyViolation { property: String, detail: String },
    /// An `eventually` property did not become true within its bound after faults stopped.
    LivenessViolation { property: String, detail: String },
    /// Target code panicked (or a real process crashed).
    TargetCrashed { detail: String },
    /// The same decisions produced a different run.
    Nondeterminism { detail: String },
    /// The target did something weft cannot simulate faithfully (an escaped system call, a
    /// static binary).
    Unsupported { detail: String },
    /// Nothing can happen any more and the run is not finished.
    Deadlock { detail: String },
    /// The run hit its event budget before it ended.
    BudgetExhausted { detail: String },
    /// The run left the assumptions of the target's model (e.g. a failure detector that would
    /// have suspected a live node). Labelled, never reported as a violation.
    OutsideModel { detail: String },
    /// A real process exceeded its memory or CPU-time limit (a leak or a runaway loop).
    ResourceLimit { detail: String },
}

impl Outcome {
    /// A finding that `explore` reports and writes a repro for.
    pub fn is_failure(&self) -> bool {
        matches!(
            self,
            Outcome::SafetyViolation { .. }
                | Outcome::LivenessViolation { .. }
                | Outcome::TargetCrashed { .. }
                | Outcome::Deadlock { .. }
                | Outcome::Nondeterminism { .. }
                | Outcome::ResourceLimit { .. }
        )
    }

    /// The short name of the outcome kind (`safety_violation`, …).
    pub fn kind(&self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::SafetyViolation { .. } => "safety_violation",
            Outcome::LivenessViolation { .. } => "liveness_violation",
            Outcome::TargetCrashed { .. } => "target_crashed",
            Outcome::Nondeterminism { .. } => "nondeterminism",
            Outcome::Unsupported { .. } => "unsupported",
            Outcome::Deadlock { .. } => "deadlock",
            Outcome::BudgetExhausted { .. } => "budget_exhausted",
            Outcome::OutsideModel { .. } => "outside_model",
            Outcome::ResourceLimit { .. } => "resource_limit",
        }
    }

    /// The violated property, if any.
    pub fn property(&self) -> Option<&str> {
        match self {
            Outcome::SafetyViolation { property, .. }
            | Outcome::LivenessViolation { property, .. } => Some(property),
            _ => None,
        }
    }

    /// A violation's classification, by convention the detail's leading lowercase word before
    /// a colon (`permanent: …`, `transient: …`); None when the detail has no such tag.
    pub fn class(&self) -> Option<&str> {
        let detail = match self {
            Outcome::SafetyViolation { detail, .. } | Outcome::LivenessViolation { detail, .. } => {
                detail
            }
            _ => return None,
        };
        let (tag, _) = detail.split_once(':')?;
        (tag.len() >= 3 && tag.bytes().all(|b| b.is_ascii_lowercase())).then_some(tag)
    }

    /// Same kind, same property and same class: what the shrinker preserves (so a permanent
    /// ring split never shrinks into a transient one).
    pub fn same_failure(&self, other: &Outcome) -> bool {
        self.kind() == other.kind()
            && self.property() == other.property()
            && self.class() == other.class()
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Pass => write!(f, "pass"),
            Outcome::SafetyViolation { property, detail } => {
                write!(f, "safety violation of {property}: {detail}")
            }
            Outcome::LivenessViolation { property, detail } => {
                write!(f, "liveness violation of {property}: {detail}")
            }
            Outcome::TargetCrashed { detail } => write!(f, "target crashed: {detail}"),
            Outcome::Nondeterminism { detail } => write!(f, "nondeterminism: {detail}"),
            Outcome::Unsupported { detail } => write!(f, "unsupported: {detail}"),
            Outcome::Deadlock { detail } => write!(f, "deadlock: {detail}"),
            Outcome::BudgetExhausted { detail } => write!(f, "budget exhausted: {detail}"),
            Outcome::OutsideModel { detail } => write!(f, "outside the model: {detail}"),
            Outcome::ResourceLimit { detail } => write!(f, "resource limit: {detail}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn safety(detail: &str) -> Outcome {
        Outcome::SafetyViolation { property: "P".into(), detail: detail.into() }
    }

    #[test]
    fn the_class_is_part_of_the_failure() {
        assert_eq!(safety("permanent: split").class(), Some("permanent"));
        assert_eq!(safety("write 3 was acked at 0.2s: lost").class(), None);
        assert_eq!(safety("n2: said so").class(), None);
        assert!(safety("permanent: a").same_failure(&safety("permanent: b")));
        assert!(!safety("permanent: a").same_failure(&safety("transient: a")));
        assert!(safety("x").same_failure(&safety("y")));
    }
}
