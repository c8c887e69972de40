//! Shrinking the fault budget with the faults. At every event of the fault phase the fault
//! model draws whether to inject a crash, a pause or a partition — until the scenario's budget
//! for all three is spent, after which it draws nothing. So a run that spends its whole budget
//! early draws far fewer decisions than one that keeps a fault in hand, and a shrinker that
//! only edits decisions is pushed the wrong way: deleting a harmless fault leaves budget over,
//! every later event draws again, and the longer list is refused. (Measured on raft-rs: a
//! shrunk run kept twenty 1 ms partitions of one node at t = 0 for that reason.)
//!
//! The scenario's budget is therefore part of what is shrunk ([`Narrow`], `Cand::narrow`):
//! deleting a fault also takes one off its kind's budget (the budget never falls below what
//! the remaining faults use, so no other fault is lost), and once a round each budget is
//! lowered to the smallest value that still fails. The shrunk repro records the lowered
//! budget: it says how many faults of each kind the counterexample is allowed, and a replay
//! under it draws exactly the shrunk list.

use super::Shrinker;
use weft_core::{FaultBudget, Ratio, Scenario, SimDuration, SiteKind};

/// What of the scenario is shrunk with the run: the fault budget, the delay rate (the one
/// message fault without a budget) and the latency range. A candidate runs under its own.
/// Each narrowing only takes choices away, so a run under it is a run the input's scenario
/// allows too (with those decisions at their simplest).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Narrow {
    pub(super) budget: FaultBudget,
    pub(super) delay: Ratio,
    pub(super) latency_max: SimDuration,
    /// Fault opportunities drawn as gaps ([`super::gaps`]): a re-encoding, not a narrowing.
    pub(super) fault_gaps: bool,
}

impl Narrow {
    pub(super) fn of(scenario: &Scenario) -> Narrow {
        Narrow {
            budget: scenario.budget.clone(),
            delay: scenario.rates.delay,
            latency_max: scenario.latency_max,
            fault_gaps: scenario.fault_gaps,
        }
    }

    /// `scenario` narrowed to this budget, delay rate and latency range.
    pub(super) fn apply(&self, scenario: &Scenario) -> Scenario {
        let mut s = Scenario { budget: self.budget.clone(), ..scenario.clone() };
        s.rates.delay = self.delay;
        s.latency_max = self.latency_max;
        s.fault_gaps = self.fault_gaps;
        s
    }
}

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
        let used = self.drawn(SiteKind::FaultKind);
        let mut narrow = self.narrow.clone();
        for (kind, &n) in used.iter().enumerate().skip(1) {
            let b = of_kind(&mut narrow.budget, kind as u64).expect("a node-fault kind");
            *b = (*b).min(n);
        }
        self.try_narrowed(narrow)
    }

    /// How many decisions at sites of `kind` drew each of the values 0–3 in the best run (a
    /// fault opportunity's none/crash/pause/partition, a message's none/drop/duplicate/delay).
    fn drawn(&self, kind: SiteKind) -> [u32; 4] {
        let mut used = [0; 4];
        for (&v, &site) in self.best.iter().zip(&self.sites) {
            if site.kind() == Some(kind) && v < 4 {
                used[v as usize] += 1;
            }
        }
        used
    }

    /// The best run's values under a narrower scenario; true if accepted. (A `narrow` that is
    /// the best's own is refused unrun by [`Self::try_candidate`].)
    fn try_narrowed(&mut self, narrow: Narrow) -> bool {
        let c = super::Cand { narrow, ..self.with_each([], 0) };
        self.try_candidate(c)
    }

    /// One candidate: no message faults at all — no drop or duplicate left in the budget and
    /// a delay rate of 0 — under which the network draws no message's fate (only its
    /// latency): on a long run that is one decision fewer per message of the fault phase.
    /// Skipped when the scenario has none already; true if accepted.
    pub(super) fn calm_links(&mut self) -> bool {
        let mut narrow = self.narrow.clone();
        narrow.budget.drops = 0;
        narrow.budget.duplicates = 0;
        narrow.delay = Ratio::new(0, 1);
        self.try_narrowed(narrow)
    }

    /// One candidate: the message-fault budgets lowered to the drops and duplicates the best
    /// run drew, and the delay rate to 0 if it drew no delay, so no message's fate is drawn
    /// after its last message fault. Skipped when already that tight; true if accepted.
    pub(super) fn tighten_links(&mut self) -> bool {
        let used = self.drawn(SiteKind::MessageFault);
        let mut narrow = self.narrow.clone();
        narrow.budget.drops = narrow.budget.drops.min(used[1]);
        narrow.budget.duplicates = narrow.budget.duplicates.min(used[2]);
        if used[3] == 0 {
            narrow.delay = Ratio::new(0, 1);
        }
        self.try_narrowed(narrow)
    }

    /// One candidate: every latency the shortest (the range narrowed to its minimum), under
    /// which no latency is drawn: one decision fewer per message. True if accepted.
    pub(super) fn fixed_latency(&mut self) -> bool {
        let narrow = Narrow { latency_max: self.scenario.latency_min, ..self.narrow.clone() };
        self.try_narrowed(narrow)
    }

    /// The scenario narrowings, one candidate each; true if any was accepted.
    pub(super) fn narrow_scenario(&mut self) -> bool {
        let mut progress = self.tighten_budget();
        progress |= self.calm_links() || self.tighten_links();
        progress |= self.fixed_latency();
        progress
    }

    /// Lowers each budget to the smallest value that still fails (0 first, then a binary
    /// search); true if any candidate was accepted. A lowered budget that leaves the log as it
    /// was is not accepted (the log must get smaller), so message-fault budgets, whose
    /// decisions are drawn anyway, stay as they are.
    pub(super) fn lower_budgets(&mut self) -> bool {
        let mut progress = false;
        for field in FIELDS {
            let (mut lo, mut hi) = (0, *field(&mut self.narrow.budget.clone()));
            while lo < hi && !self.out_of_budget() {
                let mid = if lo == 0 { 0 } else { lo + (hi - lo) / 2 };
                let mut c = self.with_each([], 0);
                *field(&mut c.narrow.budget) = mid;
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

    /// A run of 40 events: each draws a fault opportunity while the partition budget lasts,
    /// a message's fate while any message fault is possible, and a latency. It fails if a
    /// partition came at event 5 and the last latency is not the shortest.
    struct Narrowed;

    impl Runner for Narrowed {
        fn default_scenario(&self) -> Scenario {
            Scenario::calm()
        }
        fn run(&self, sc: &Scenario, d: &mut Decisions, _: &mut dyn Observer) -> RunReport {
            let (mut used, mut at_5, mut last) = (0, false, 0);
            let links = sc.budget.drops > 0 || sc.rates.delay.num > 0;
            for event in 0..40 {
                if used < sc.budget.partitions
                    && d.at(Site::fault_kind()).weighted(&[100, 0, 0, 1]) == 3
                {
                    used += 1;
                    at_5 |= event == 5;
                }
                if links {
                    d.at(Site::message_fault(0, 1)).weighted(&[100, 1, 0, 1]);
                }
                last = d.at(Site::latency(0, 1)).choose(10);
            }
            let outcome = if at_5 && last > 0 {
                Outcome::SafetyViolation { property: "Narrowed".into(), detail: String::new() }
            } else {
                Outcome::Pass
            };
            let (trace_hash, events, faults, end_time) = (0, 40, used as u64, SimTime(0));
            RunReport { outcome, trace_hash, events, faults, end_time, sometimes: vec![] }
        }
    }

    /// Narrowing the scenario alone — the same values, nothing drawn where nothing can happen
    /// any more — is a smaller log, and is accepted: the partition budget falls to the one
    /// partition used and the message faults are switched off, so the shrunk list is the
    /// fault opportunities up to the partition and one latency per event.
    #[test]
    fn a_narrower_scenario_alone_shortens_the_log() {
        let mut sc = Scenario::calm();
        sc.budget.partitions = 4;
        sc.budget.drops = 5;
        sc.rates.delay = weft_core::Ratio::new(1, 10);
        let mut input = Vec::new();
        for event in 0..40 {
            input.extend([if event == 5 { 3 } else { 0 }, 0, (event == 39) as u64]);
        }
        let s = shrink(&Narrowed, &sc, &input, &ShrinkOptions { max_runs: 2000 }, &Quiet).unwrap();
        let want = [vec![0; 10], vec![3, 0], vec![0; 33], vec![1]].concat();
        assert_eq!(s.decisions, want, "{:?}", s.decisions);
        assert_eq!((s.scenario.budget.partitions, s.scenario.budget.drops), (1, 0));
        assert_eq!(s.scenario.rates.delay.num, 0);
    }

    /// 40 messages: each draws its fate while a message fault is possible and its latency
    /// from the scenario's range, then a node draws a choice. It fails if the message at
    /// event 3 was dropped and the last choice is 2.
    struct Dropped;

    impl Runner for Dropped {
        fn default_scenario(&self) -> Scenario {
            Scenario::calm()
        }
        fn run(&self, sc: &Scenario, d: &mut Decisions, _: &mut dyn Observer) -> RunReport {
            let (mut drops, mut at_3, mut last) = (0, false, 0);
            let span = (sc.latency_max.0 - sc.latency_min.0) / 1_000;
            for event in 0..40 {
                if drops < sc.budget.drops || sc.rates.delay.num > 0 {
                    let fate = d.at(Site::message_fault(0, 1)).weighted(&[100, 1, 0, 1]);
                    if fate == 1 && drops < sc.budget.drops {
                        drops += 1;
                        at_3 |= event == 3;
                    }
                }
                d.at(Site::latency(0, 1)).choose(span + 1);
                last = d.at(Site::node(0, 0)).choose(3);
            }
            let outcome = if at_3 && last == 2 {
                Outcome::SafetyViolation { property: "Dropped".into(), detail: String::new() }
            } else {
                Outcome::Pass
            };
            let (trace_hash, events, faults, end_time) = (0, 40, drops as u64, SimTime(0));
            RunReport { outcome, trace_hash, events, faults, end_time, sometimes: vec![] }
        }
    }

    /// The drop is needed, so message faults cannot all go; but the drop budget falls to the
    /// one drop and the delay rate to 0, so no fate is drawn after it, and every latency
    /// becomes the shortest, so none is drawn at all.
    #[test]
    fn message_faults_and_latencies_are_narrowed_to_what_the_run_uses() {
        let mut sc = Scenario::calm();
        sc.budget.drops = 5;
        sc.rates.delay = weft_core::Ratio::new(1, 10);
        let mut input = Vec::new();
        for event in 0..40 {
            input.extend([(event == 3) as u64, 5, if event == 39 { 2 } else { 1 }]);
        }
        let s = shrink(&Dropped, &sc, &input, &ShrinkOptions { max_runs: 5000 }, &Quiet).unwrap();
        let want = [vec![0; 6], vec![1, 0], vec![0; 35], vec![2]].concat();
        assert_eq!(s.decisions, want, "{:?}", s.decisions);
        assert_eq!((s.scenario.budget.drops, s.scenario.rates.delay.num), (1, 0));
        assert_eq!(s.scenario.latency_max, s.scenario.latency_min);
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
