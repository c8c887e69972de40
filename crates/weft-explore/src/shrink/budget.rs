//! Shrinking the fault budget with the faults. At every event of the fault phase the fault
//! model draws whether to inject a crash, a pause or a partition — until the scenario's budget
//! for all three is spent, after which it draws nothing. So a run that spends its whole budget
//! early draws far fewer decisions than one that keeps a fault in hand, and a shrinker that
//! only edits decisions is pushed the wrong way: deleting a harmless fault leaves budget over,
//! every later event draws again, and the longer list is refused. (Measured on raft-rs: a
//! shrunk run kept twenty 1 ms partitions of one node at t = 0 for that reason.)
//!
//! The scenario's budget is therefore part of what is shrunk ([`super::Cand::budget`]):
//! deleting a fault also takes one off its kind's budget (the budget never falls below what
//! the remaining faults use, so no other fault is lost), and once a round each budget is
//! lowered to the smallest value that still fails. The shrunk repro records the lowered
//! budget: it says how many faults of each kind the counterexample is allowed, and a replay
//! under it draws exactly the shrunk list.

use super::Shrinker;
use weft_core::{FaultBudget, SiteKind};

/// The budget of the node or network fault kind drawn at a fault opportunity, by the value
/// drawn there: weft-sim's fault model draws index 1 for a crash, 2 for a pause, 3 for a
/// partition (`weft_sim::faults::opportunity_among`).
pub(super) fn of_kind(budget: &mut FaultBudget, kind: u64) -> Option<&mut u32> {
    match kind {
        1 => Some(&mut budget.crashes),
        2 => Some(&mut budget.pauses),
        3 => Some(&mut budget.partitions),
        _ => None,
    }
}

/// Each budget field, by name (for the lowering pass).
const FIELDS: [fn(&mut FaultBudget) -> &mut u32; 5] = [
    |b| &mut b.crashes,
    |b| &mut b.pauses,
    |b| &mut b.partitions,
    |b| &mut b.drops,
    |b| &mut b.duplicates,
];

impl Shrinker<'_> {
    /// One candidate: each node-fault budget (crashes, pauses, partitions) lowered to the
    /// number of faults of its kind the best run drew, so the fault model draws nothing after
    /// the last fault. Skipped when the budget is already that tight; true if accepted. Cheap,
    /// so it runs after every pass. (Message-fault budgets are left to [`Self::lower_budgets`]:
    /// a message's fate is drawn whatever they are, since delays have no budget.)
    pub(super) fn tighten_budget(&mut self) -> bool {
        let mut used =
            FaultBudget { crashes: 0, pauses: 0, partitions: 0, drops: 0, duplicates: 0 };
        for (&v, &site) in self.best.iter().zip(&self.sites) {
            if site.kind() == Some(SiteKind::FaultKind) {
                if let Some(n) = of_kind(&mut used, v) {
                    *n += 1;
                }
            }
        }
        let mut c = self.with_each([], 0);
        for kind in 1..=3 {
            let n = *of_kind(&mut used, kind).expect("a node-fault kind");
            let b = of_kind(&mut c.budget, kind).expect("a node-fault kind");
            *b = (*b).min(n);
        }
        c.budget != self.budget && !self.out_of_budget() && self.try_candidate(c)
    }

    /// Lowers each budget to the smallest value that still fails (0 first, then a binary
    /// search); true if any candidate was accepted. A lowered budget that leaves the log as it
    /// was is not accepted (the log must get smaller), so message-fault budgets, whose
    /// decisions are drawn anyway, stay as they are.
    pub(super) fn lower_budgets(&mut self) -> bool {
        let mut progress = false;
        for field in FIELDS {
            let (mut lo, mut hi) = (0, *field(&mut self.budget.clone()));
            while lo < hi && !self.out_of_budget() {
                let mid = if lo == 0 { 0 } else { lo + (hi - lo) / 2 };
                let mut c = self.with_each([], 0);
                *field(&mut c.budget) = mid;
                if self.try_candidate(c) {
                    progress = true;
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
        }
        progress
    }
}

#[cfg(test)]
mod tests {
    use crate::{shrink, Quiet, ShrinkOptions};
    use weft_core::{Decisions, Observer, Outcome, RunReport, Runner, Scenario, SimTime, Site};

    /// A fault model in miniature: 40 events, each a fault opportunity while the partition
    /// budget lasts (kind 3 is a partition), and the run fails if a partition was injected at
    /// event 30 or later. The found run spent its budget of 4 at events 0–2 and 31.
    struct Late;

    impl Runner for Late {
        fn default_scenario(&self) -> Scenario {
            Scenario::calm()
        }
        fn run(&self, sc: &Scenario, d: &mut Decisions, _: &mut dyn Observer) -> RunReport {
            let mut used = 0;
            let mut late = false;
            for event in 0..40 {
                if used < sc.budget.partitions
                    && d.at(Site::fault_kind()).weighted(&[100, 0, 0, 1]) == 3
                {
                    used += 1;
                    late |= event >= 30;
                }
            }
            let outcome = if late {
                Outcome::SafetyViolation { property: "Late".into(), detail: String::new() }
            } else {
                Outcome::Pass
            };
            let (trace_hash, events, faults, end_time) = (0, 40, used as u64, SimTime(0));
            RunReport { outcome, trace_hash, events, faults, end_time, sometimes: vec![] }
        }
    }

    #[test]
    fn early_faults_go_with_their_budget_and_the_repro_keeps_the_budget() {
        let mut sc = Scenario::calm();
        sc.budget.partitions = 4;
        let mut input = vec![0; 32];
        input[..3].copy_from_slice(&[3, 3, 3]);
        input[31] = 3;
        let s = shrink(&Late, &sc, &input, &ShrinkOptions { max_runs: 2000 }, &Quiet).unwrap();
        // One partition at event 30, and nothing drawn after it.
        assert_eq!(s.decisions, [vec![0; 30], vec![3]].concat(), "{:?}", s.decisions);
        assert_eq!(s.scenario.budget.partitions, 1);
        assert_eq!(s.report.faults, 1);
    }
}
