//! The first shrink pass for runs of real processes: keep only the faults. In a run under the
//! host most decisions are noise — which runnable thread takes the next step (tens of
//! thousands of them), which waiter a partial wake picks, each process's random seed — and
//! none of the generic passes can remove them: a deletion shifts every later pick, and each
//! candidate costs a whole run of real programs (tens of seconds). So, once, before anything
//! else, one candidate sets every decision that is not a fault's (its kind, victim, shape,
//! duration: [`SiteKind::FaultKind`], [`SiteKind::FaultDetail`]) to 0, replayed by site: the
//! faults keep their answers while every step goes to the first runnable thread, every wake
//! to the first waiter, every seed is 0. If the failure needs no particular schedule (a
//! partition that outlasts a failover loses the writes whatever the interleaving), that one
//! run takes the list to the faults' own decisions among zeros. If not, a second candidate
//! zeroes only the scheduler's picks and wakes (the seeds kept).
//!
//! Only for lists with host schedule decisions ([`SiteKind::Schedule`]): in-process targets
//! keep their shrink exactly as it was.

use super::{Cand, Shrinker};
use weft_core::{Site, SiteKind};

/// How many times the input's events the faults-only candidate may have.
const GROWTH: u64 = 2;

impl Shrinker<'_> {
    /// True if a candidate was accepted.
    pub(super) fn faults_only(&mut self) -> bool {
        let is = |s: Site, k: SiteKind| s.kind() == Some(k);
        if !self.sites.iter().any(|&s| is(s, SiteKind::Schedule)) {
            return false;
        }
        let noise = |s: Site| !is(s, SiteKind::FaultKind) && !is(s, SiteKind::FaultDetail);
        self.zero_growing(noise) || self.zero_growing(|s| is(s, SiteKind::Schedule))
    }

    /// One candidate: every non-zero value at a site satisfying `at` set to 0. It may have up
    /// to [`GROWTH`] times the input's events: the schedule it makes is another one, which
    /// may well take a few more steps to the same failure (measured on the Redis Sentinel
    /// loss: 8,164 events or more against the found run's 8,078, for 91,799 decisions fewer
    /// to read). Afterwards no candidate has more events than this one.
    fn zero_growing(&mut self, at: impl Fn(Site) -> bool) -> bool {
        let positions: Vec<usize> =
            (0..self.best.len()).filter(|&i| self.best[i] != 0 && at(self.sites[i])).collect();
        if positions.is_empty() {
            return false;
        }
        let input = self.input_events;
        self.input_events = input.saturating_mul(GROWTH);
        let accepted = self.try_candidate(Cand { grow: true, ..self.with_each(positions, 0) });
        self.input_events = if accepted { input.max(self.report.events) } else { input };
        accepted
    }
}

#[cfg(test)]
mod tests {
    use crate::{shrink, Quiet, ShrinkOptions};
    use weft_core::{Decisions, Observer, Outcome, RunReport, Runner, Scenario, SimTime, Site};

    /// A run shaped like one under the host: 300 scheduler picks, and at step 100 a fault
    /// opportunity (kind 3 is the partition) with its duration. It fails when a partition of
    /// 50 or more happened, whatever the schedule.
    struct Partitioned;

    impl Runner for Partitioned {
        fn default_scenario(&self) -> Scenario {
            Scenario::calm()
        }
        fn run(&self, _: &Scenario, d: &mut Decisions, _: &mut dyn Observer) -> RunReport {
            let mut lost = false;
            for step in 0..300 {
                d.at(Site::schedule()).choose(3);
                if step == 100 && d.at(Site::fault_kind()).choose(4) == 3 {
                    lost = d.at(Site::fault_detail(0)).choose(100) >= 50;
                }
            }
            let outcome = if lost {
                Outcome::SafetyViolation { property: "history".into(), detail: "lost".into() }
            } else {
                Outcome::Pass
            };
            let (trace_hash, events, faults, end_time) = (0, 300, 1, SimTime(0));
            RunReport { outcome, trace_hash, events, faults, end_time, sometimes: vec![] }
        }
    }

    #[test]
    fn one_candidate_takes_a_process_run_to_its_faults() {
        // A found run: picks all over the place, the partition at step 100.
        let mut input: Vec<u64> = (0..101).map(|i| 1 + i % 2).collect();
        input.extend([3, 70]);
        input.extend((0..199).map(|i| 2 - i % 2));
        let opts = ShrinkOptions { max_runs: 2 }; // the input's replay and one candidate
        let s = shrink(&Partitioned, &Scenario::calm(), &input, &opts, &Quiet).unwrap();
        assert_eq!(s.accepted, 1, "the faults-only candidate is the first one tried");
        let mut expected = vec![0; 101];
        expected.extend([3, 70]);
        assert_eq!(s.decisions, expected, "every pick zeroed, the partition kept");
        assert!(s.report.outcome.is_failure());
    }
}
