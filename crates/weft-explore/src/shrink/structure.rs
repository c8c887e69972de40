//! Structure-aware shrink passes: edits that mean something in the run's own terms (a fault, a
//! link, a timer), one candidate each, tried before the generic zeroing and lowering passes
//! because one of them often removes what a hundred generic candidates would not. They run
//! after the span deletions of each round (measured: on the canary, running them first left
//! seed 18 at 33 decisions; after the deletions, at 26 and every other seed at 23–24).
//!
//! | pass | what it tries | sites |
//! |---|---|---|
//! | delete a whole fault | one fault opportunity's kind to 0 and one off its kind's budget, latest first (its victim and duration are then never drawn); retried with the next fault one opportunity earlier, then with the last remaining fault's duration at its maximum; may grow the run up to the input's events | `fault` |
//! | shorten a fault | each victim, shape and duration lowered (0, then a binary search) | `fault-detail #k` |
//! | remove message faults | each drop, duplicate or delay to "deliver", latest first | `message-fault a>b` |
//! | zero a site | every latency at once, then each site's whole stream at once (one link's latencies, one timer's periods, the workload's jitters) | every other site |
//!
//! Each edit is addressed by site, so it changes only what it names: the other faults, links
//! and timers keep their answers ([`weft_core::Decisions::replay_sited`]). Every candidate goes
//! through the same acceptance as the generic passes (same failure, no more events, smaller
//! log), so these passes cannot change the violation's class.

use super::{Cand, Shrinker};
use std::collections::BTreeSet;
use weft_core::{Site, SiteKind};

fn is(kind: SiteKind) -> impl Fn(Site) -> bool {
    move |s| s.kind() == Some(kind)
}

impl Shrinker<'_> {
    /// The coarse structure-aware passes (a few candidates each: one per fault, one per
    /// site); true if any candidate was accepted.
    pub(super) fn coarse_passes(&mut self) -> bool {
        let mut progress = self.delete_faults();
        progress |= self.zero_sites();
        progress
    }

    /// The fine structure-aware passes (one candidate per message fault, a binary search per
    /// fault detail).
    pub(super) fn fine_passes(&mut self) -> bool {
        let mut progress = self.zero_each_where(is(SiteKind::MessageFault));
        progress |= self.lower_where(is(SiteKind::FaultDetail));
        progress
    }

    /// Sets each non-zero value at a site satisfying `at` to 0, one at a time, latest first.
    fn zero_each_where(&mut self, at: impl Fn(Site) -> bool) -> bool {
        let mut progress = false;
        let mut i = self.best.len();
        while i > 0 && !self.out_of_budget() {
            i -= 1;
            if i < self.best.len() && self.best[i] != 0 && at(self.sites[i]) {
                progress |= self.try_candidate(self.with(i, i + 1, 0));
            }
        }
        progress
    }

    /// Deletes each fault (its kind to 0), latest first. A deletion that fails is retried with
    /// the next fault one opportunity earlier ([`next_fault_earlier`]), then with the last detail of the faults that remain (their duration) raised to its maximum: two
    /// short faults often do together what one long one does alone (on the canary, a 50 ms
    /// pause of the backup plus a crash of the primary; without the retry that pair was a
    /// local minimum at 30 decisions, with it the shrink reaches the single pause, 23–24).
    fn delete_faults(&mut self) -> bool {
        let kind = Site::fault_kind();
        let mut progress = false;
        let mut i = self.best.len();
        while i > 0 && !self.out_of_budget() {
            i -= 1;
            if i >= self.best.len() || self.best[i] == 0 || self.sites[i] != kind {
                continue;
            }
            // The fault's budget goes with it (see [`super::budget`]).
            let mut c = Cand { grow: true, ..self.with(i, i + 1, 0) };
            if let Some(n) = super::budget::of_kind(&mut c.narrow.budget, self.best[i]) {
                *n = n.saturating_sub(1);
            }
            if self.try_candidate(c.clone()) || self.try_candidate(next_fault_earlier(&c, i)) {
                progress = true;
                continue;
            }
            // The last detail (a duration) of a fault that remains, zero or not.
            let n = self.sites[..i].iter().filter(|&&s| s == kind).count() as u32;
            let own = Site::fault_detail(n);
            let detail = (0..c.values.len()).rev().find(|&j| {
                let s = self.sites[j];
                s.kind() == Some(SiteKind::FaultDetail) && s != own
            });
            if let Some(j) = detail {
                let max = self.bounds[j].saturating_sub(1);
                if c.values[j] < max {
                    let mut c = c;
                    c.values[j] = max;
                    c.labels[j] = 0;
                    c.grow = true;
                    progress |= self.try_candidate(c);
                }
            }
        }
        progress
    }

    /// Zeroes every latency at once, then each site's whole stream (fault kinds excepted: a
    /// whole-fault deletion is the pass above).
    fn zero_sites(&mut self) -> bool {
        let mut progress = self.zero_all(is(SiteKind::Latency));
        let sites: BTreeSet<Site> = self.sites.iter().copied().collect();
        for site in sites.into_iter().rev() {
            if self.out_of_budget() {
                break;
            }
            if site != Site::fault_kind() {
                progress |= self.zero_all(|s| s == site);
            }
        }
        progress
    }

    /// One candidate: every non-zero value at a site satisfying `at` set to 0.
    fn zero_all(&mut self, at: impl Fn(Site) -> bool) -> bool {
        let positions: Vec<usize> =
            (0..self.best.len()).filter(|&i| self.best[i] != 0 && at(self.sites[i])).collect();
        !positions.is_empty() && self.try_candidate(self.with_each(positions, 0))
    }
}

/// `c` (a fault deleted at position `i`) with the next fault moved one opportunity earlier:
/// the zero fault-kind draw just before it is removed, and the later faults' detail sites are
/// renumbered with their opportunities ([`super::removing`]). Opportunities are counted in
/// events, and a deleted fault usually takes one event with it (its heal, resume or restart),
/// so without this the next fault would strike one event later than before — often at another
/// node's step, so the story breaks (on raft-rs this kept harmless 1 ms partitions at t = 0 in
/// shrunk runs). Unchanged if no fault follows.
fn next_fault_earlier(c: &Cand, i: usize) -> Cand {
    let kind = Site::fault_kind();
    let next = (i + 1..c.values.len()).find(|&j| c.sites[j] == kind && c.values[j] != 0);
    let gap = next.and_then(|j| (i..j).rev().find(|&z| c.sites[z] == kind && c.values[z] == 0));
    match gap {
        Some(z) => super::removing(c, |j| j == z),
        None => c.clone(),
    }
}
