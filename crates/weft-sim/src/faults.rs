//! Node and network faults injected at event boundaries: crash, pause, partition.
//!
//! | fault | opportunity | decisions drawn | ends |
//! |---|---|---|---|
//! | crash | each event in the fault phase | kind, victim, outage | restart after the outage, or at heal (if `Scenario::restart`) |
//! | pause | each event in the fault phase | kind, victim, duration | resume after the duration, or at heal |
//! | partition | each event in the fault phase | kind, shape (isolate a node / cut one direction of a link), nodes, duration | heal after the duration, or at heal |
//!
//! One weighted decision per opportunity picks "none" (index 0, the simplest) or a fault kind,
//! so shrinking a fault away is lowering one value to 0. Kinds whose budget is spent get weight
//! 0, so the budget is never exceeded. A target may veto a crash victim with a gate (e.g. Chord's
//! "no member loses all live successors"); a vetoed crash is simply not injected.

use crate::net::{weight, SCALE};
use weft_core::{Decisions, Scenario, SimDuration, Site};

/// How many faults of each kind a run has injected so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultCounts {
    pub crashes: u32,
    pub pauses: u32,
    pub partitions: u32,
    pub drops: u32,
    pub duplicates: u32,
}

impl FaultCounts {
    pub fn total(&self) -> u64 {
        (self.crashes + self.pauses + self.partitions + self.drops + self.duplicates) as u64
    }
}

/// A node or network fault chosen at one opportunity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Crash `node`; it restarts after `outage` (None: not before the heal phase).
    Crash {
        node: u32,
        outage: Option<SimDuration>,
    },
    Pause {
        node: u32,
        duration: SimDuration,
    },
    /// Cut every link of `node` (symmetric) for `duration`.
    Isolate {
        node: u32,
        duration: SimDuration,
    },
    /// Cut the one-way link `from → to` for `duration`.
    CutLink {
        from: u32,
        to: u32,
        duration: SimDuration,
    },
}

/// A fault's duration: 1 ms plus a decision, at most `outage_max` (0 = the shortest).
pub(crate) fn duration(scenario: &Scenario, d: &mut Decisions) -> SimDuration {
    let span = scenario.outage_max.0 / 1_000_000;
    SimDuration::from_millis(1 + d.choose(span.max(1)))
}

/// How long a crashed node stays down (None: until the heal phase, or for good if the scenario
/// does not restart nodes).
pub(crate) fn outage(scenario: &Scenario, d: &mut Decisions) -> Option<SimDuration> {
    (scenario.restart && scenario.outage_max.0 > 0).then(|| duration(scenario, d))
}

/// Draws the fault (if any) injected at one opportunity. `up[i]` says whether node `i` is up;
/// `gate(i)` whether node `i` may crash now.
pub fn opportunity(
    scenario: &Scenario,
    counts: &mut FaultCounts,
    up: &[bool],
    decisions: &mut Decisions,
    gate: &mut dyn FnMut(u32) -> bool,
) -> Option<Fault> {
    let r = &scenario.rates;
    let b = &scenario.budget;
    let w_crash = if counts.crashes < b.crashes { weight(r.crash) } else { 0 };
    let w_pause = if counts.pauses < b.pauses { weight(r.pause) } else { 0 };
    let w_part =
        if counts.partitions < b.partitions && up.len() > 1 { weight(r.partition) } else { 0 };
    let faults = w_crash as u64 + w_pause as u64 + w_part as u64;
    if faults == 0 {
        return None;
    }
    let none = SCALE.saturating_sub(faults).max(1) as u32;
    // Opportunity k's kind is the k-th draw at the fault-kind site and its details live at
    // their own site, so removing one fault leaves every other fault's details where they were.
    let k = decisions.drawn_at(Site::fault_kind());
    let kind = decisions.at(Site::fault_kind()).weighted(&[none, w_crash, w_pause, w_part]);
    let base = decisions.set_base(Site::fault_detail(k));
    let fault = details(scenario, counts, up, kind, decisions, gate);
    decisions.set_base(base);
    fault
}

/// The victim, shape and duration of a fault of `kind` (1 crash, 2 pause, 3 partition).
fn details(
    scenario: &Scenario,
    counts: &mut FaultCounts,
    up: &[bool],
    kind: usize,
    decisions: &mut Decisions,
    gate: &mut dyn FnMut(u32) -> bool,
) -> Option<Fault> {
    let live: Vec<u32> = (0..up.len() as u32).filter(|&i| up[i as usize]).collect();
    if live.is_empty() {
        return None;
    }
    let duration = |d: &mut Decisions| duration(scenario, d);
    match kind {
        1 => {
            let candidates: Vec<u32> = live.into_iter().filter(|&n| gate(n)).collect();
            if candidates.is_empty() {
                return None;
            }
            let node = candidates[decisions.choose(candidates.len() as u64) as usize];
            let outage = outage(scenario, decisions);
            counts.crashes += 1;
            Some(Fault::Crash { node, outage })
        }
        2 => {
            let node = live[decisions.choose(live.len() as u64) as usize];
            counts.pauses += 1;
            Some(Fault::Pause { node, duration: duration(decisions) })
        }
        3 => {
            counts.partitions += 1;
            let n = up.len() as u64;
            if decisions.choose(2) == 0 {
                let node = decisions.choose(n) as u32;
                Some(Fault::Isolate { node, duration: duration(decisions) })
            } else {
                let from = decisions.choose(n) as u32;
                let to = (from + 1 + decisions.choose(n - 1) as u32) % n as u32;
                Some(Fault::CutLink { from, to, duration: duration(decisions) })
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_core::Ratio;

    #[test]
    fn never_exceeds_the_budget() {
        let mut s = Scenario::default();
        s.rates.crash = Ratio::new(1, 3);
        s.rates.pause = Ratio::new(1, 3);
        s.rates.partition = Ratio::new(1, 3);
        s.budget.crashes = 2;
        s.budget.pauses = 1;
        s.budget.partitions = 4;
        let mut d = Decisions::random(3);
        let mut c = FaultCounts::default();
        for _ in 0..10_000 {
            opportunity(&s, &mut c, &[true, true, true], &mut d, &mut |_| true);
        }
        assert_eq!((c.crashes, c.pauses, c.partitions), (2, 1, 4));
    }

    #[test]
    fn the_gate_can_veto_every_crash() {
        let mut s = Scenario::calm();
        s.rates.crash = Ratio::ONE;
        let mut d = Decisions::random(3);
        let mut c = FaultCounts::default();
        for _ in 0..100 {
            assert_eq!(opportunity(&s, &mut c, &[true, true], &mut d, &mut |_| false), None);
        }
    }

    #[test]
    fn zero_decisions_mean_no_fault() {
        let s = Scenario::default();
        let mut d = Decisions::replay(vec![]);
        let mut c = FaultCounts::default();
        assert_eq!(opportunity(&s, &mut c, &[true, true], &mut d, &mut |_| true), None);
    }
}
