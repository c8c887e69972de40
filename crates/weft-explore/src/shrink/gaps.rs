//! The shrunk run re-encoded with fault gaps (`Scenario::fault_gaps`). Drawn per opportunity,
//! a fault costs one decision at every event before it (and a message fault one at every
//! message on its link), and on a long run whose story needs two faults far apart (raft-rs:
//! a partition at opportunity 45 and another at 529) those zeros were most of the shrunk
//! list. With gaps, the same run is one decision per fault for where it comes, one for its
//! kind: the list says what happens, not what did not.
//!
//! The re-encoding is exact: opportunity `k` of a segment (the opportunities after one that
//! drew a kind) is the gap's `k`-th, so the run replays identically, and the shrinker only
//! keeps it if it does (same failure, no more events, a smaller log). It runs halfway through
//! the budget, and once more at the end if that failed; the passes work on either encoding
//! (in the gap one a deletion or a zeroed value moves one fault without moving the others).

use super::{Cand, Shrinker};
use std::collections::BTreeMap;
use weft_core::{Site, SiteKind};

/// Runs of a shrink budget of `max_runs` kept back for the re-encoding: its candidate and,
/// when shrinking differentially, its run on the reference — none out of a budget too small
/// to spare them (under 10 runs).
pub(super) fn reserved(max_runs: u64) -> u64 {
    (max_runs / 10).min(2)
}

impl Shrinker<'_> {
    /// One candidate, within a run budget of `limit` (which stays the budget after it): the
    /// best run with its fault opportunities as gaps; true if accepted.
    pub(super) fn as_gaps(&mut self, limit: u64) -> bool {
        self.max_runs = limit;
        if self.narrow.fault_gaps {
            return false;
        }
        let Some(mut c) = gaps_of(&self.with_each([], 0)) else { return false };
        c.narrow.fault_gaps = true;
        self.try_candidate(c)
    }
}

/// The gap site for the opportunities drawn at `site`: node and network faults, or one
/// link's message faults (None: not an opportunity site).
fn gap_site(site: Site) -> Option<Site> {
    match site.kind() {
        Some(SiteKind::FaultKind) if site == Site::fault_kind() => Some(Site::fault_gap()),
        Some(SiteKind::MessageFault) => Some(Site::message_gap(site.a(), site.b())),
        _ => None,
    }
}

/// Per opportunity (by position in the list): the gap drawn there, if it opens a segment, and
/// whether its kind is drawn (it is a fault). Each opportunity site is its own stream of
/// segments.
fn plan(c: &Cand) -> Vec<(Option<u64>, bool)> {
    let mut plan = vec![(None, false); c.values.len()];
    let mut streams: BTreeMap<Site, Vec<usize>> = BTreeMap::new();
    for (i, &site) in c.sites.iter().enumerate() {
        if gap_site(site).is_some() {
            streams.entry(site).or_default().push(i);
        }
    }
    for positions in streams.values() {
        let mut start = 0;
        for (k, &i) in positions.iter().enumerate() {
            if c.values[i] != 0 {
                plan[positions[start]].0 = Some((k - start + 1) as u64);
                plan[i].1 = true;
                start = k + 1;
            }
        }
        if start < positions.len() {
            plan[positions[start]].0 = Some(0); // no fault after the last: "never"
        }
    }
    plan
}

/// `c` with every opportunity draw replaced by the gap encoding (None: it draws none).
fn gaps_of(c: &Cand) -> Option<Cand> {
    if !c.sites.iter().any(|&s| gap_site(s).is_some()) {
        return None;
    }
    let plan = plan(c);
    // Node-fault details are addressed by the kind draw's ordinal, which gaps renumber.
    let kind = Site::fault_kind();
    let ordinal: Vec<Option<u32>> = (0..c.sites.len())
        .filter(|&i| c.sites[i] == kind)
        .scan(0u32, |drawn, i| {
            Some(plan[i].1.then(|| {
                *drawn += 1;
                *drawn - 1
            }))
        })
        .collect();
    let mut out = Cand { values: Vec::new(), labels: Vec::new(), sites: Vec::new(), ..c.clone() };
    for (i, &(gap_here, drawn)) in plan.iter().enumerate() {
        let mut site = c.sites[i];
        if let Some(gap) = gap_site(site) {
            if let Some(g) = gap_here {
                out.values.push(g);
                out.labels.push(0);
                out.sites.push(gap);
            }
            if !drawn {
                continue;
            }
        } else if site.kind() == Some(SiteKind::FaultDetail) {
            let Some(j) = ordinal.get(site.a() as usize).copied().flatten() else { continue };
            site = Site::fault_detail(j);
        }
        out.values.push(c.values[i]);
        out.labels.push(c.labels[i]);
        out.sites.push(site);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shrink::budget::Narrow;
    use weft_core::{Decisions, NullObserver, Ratio, RunSpec, Runner, Scenario, Target};

    fn canary() -> Box<dyn Runner> {
        let spec = RunSpec {
            target: "primary-backup".into(),
            variant: "fixed".into(),
            ..RunSpec::default()
        };
        weft_target_primary_backup::PrimaryBackup.prepare(&spec).unwrap()
    }

    /// Random runs of the canary with many crashes, pauses, partitions, drops, duplicates and
    /// delays, re-encoded with gaps and replayed under `fault_gaps`: every one is the same run
    /// (trace hash and outcome), and a run with faults needs fewer decisions.
    #[test]
    fn a_run_reencoded_with_gaps_replays_identically_and_shorter() {
        let runner = canary();
        let mut sc = runner.default_scenario();
        sc.restart = true;
        sc.rates.pause = Ratio::new(1, 30);
        sc.rates.partition = Ratio::new(1, 30);
        sc.rates.crash = Ratio::new(1, 60);
        (sc.budget.crashes, sc.budget.pauses, sc.budget.partitions) = (2, 3, 3);
        (sc.rates.drop, sc.rates.duplicate) = (Ratio::new(1, 20), Ratio::new(1, 20));
        sc.rates.delay = Ratio::new(1, 10);
        (sc.budget.drops, sc.budget.duplicates) = (4, 4);
        let mut shorter = 0;
        for seed in 0..40 {
            let mut d = Decisions::random(seed);
            let a = runner.run(&sc, &mut d, &mut NullObserver);
            let c = Cand {
                values: d.log().to_vec(),
                labels: d.labels().to_vec(),
                sites: d.sites().to_vec(),
                positional: false,
                grow: false,
                narrow: Narrow::of(&sc),
            };
            let g = gaps_of(&c).expect("every run has fault opportunities");
            let gap_sc = Scenario { fault_gaps: true, ..sc.clone() };
            let mut r = Decisions::replay_sited(g.values.clone(), g.labels, &g.sites);
            let b = runner.run(&gap_sc, &mut r, &mut NullObserver);
            assert_eq!((a.trace_hash, &a.outcome), (b.trace_hash, &b.outcome), "seed {seed}");
            assert_eq!(r.log(), &g.values[..], "seed {seed}: the gap log is what was replayed");
            shorter += (a.faults > 0 && g.values.len() < c.values.len()) as u32;
        }
        assert!(shorter >= 20, "{shorter} of 40 runs got shorter");
    }
}
