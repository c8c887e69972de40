//! Shards: the K-th of N disjoint parts of a campaign, and the merge of their ledgers into the
//! campaign's tallies.
//!
//! Shard K/N makes the campaign's run indices K, K+N, K+2N, … below the run budget: interleaved,
//! not blocks, so every shard works on low indices, where the campaign's answer (the failing run
//! with the lowest index) is. Within a shard runs are claimed in increasing order on its threads
//! and the shard stops past its own lowest failing index, exactly as a whole campaign does, so
//! the lowest failing index over all shards is the one `--jobs` finds on one machine.
//!
//! Random and swarm shards run independently ([`run_shard`]); they may tell each other about
//! failures ([`Control::found`], [`Control::known_failure`]): a shard stops before runs above a
//! failing index another shard found, since they cannot be the answer. This changes how much
//! work is done, never the merged result. Coverage-guided shards ([`run_coverage_shard`],
//! `coverage.rs`) exchange each generation's corpus through a [`GenerationSync`] (`sync.rs`) so
//! each generation mutates the corpus one machine would have; exhaustive search is one
//! depth-first walk and is not sharded.
//!
//! A shard does not know where the campaign's answer lies, so it keeps a [`Ledger`] of its runs
//! in index order (each run's outcome kind and events; the first run that reached each feature
//! and each `sometimes` property). A merge counts exactly the runs at or below the campaign's
//! lowest failing index — the runs `--jobs 1` makes — whatever N was.

mod coverage;
mod sync;

pub use coverage::run_coverage_shard;
pub use sync::{Candidate, GenerationPart, GenerationSync, SyncError};

use crate::campaign::{
    pool, run_seeded, CampaignOptions, CampaignResult, Control, Found, Progress,
};
use crate::Strategy;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use weft_core::Runner;

/// Most shards a campaign may be cut into.
pub const MAX_SHARDS: u64 = 1 << 20;

/// Which part of a campaign a process runs: `index` of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// Parses `K/N` (0 <= K < N <= [`MAX_SHARDS`]).
    pub fn parse(text: &str) -> Result<Shard, String> {
        let bad = || format!("`{text}` is not a shard K/N with 0 <= K < N (e.g. 0/4)");
        let (k, n) = text.split_once('/').ok_or_else(bad)?;
        let index: u64 = k.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        if count > MAX_SHARDS {
            return Err(format!("`{text}`: at most {MAX_SHARDS} shards"));
        }
        Ok(Shard { index, count })
    }

    /// The campaign run index of this shard's `j`-th run (saturating: past `u64::MAX` is past
    /// every budget).
    pub fn run_index(self, j: u64) -> u64 {
        j.saturating_mul(self.count).saturating_add(self.index)
    }

    /// How many of this shard's runs have a campaign index below `limit`.
    pub fn runs_below(self, limit: u64) -> u64 {
        if limit <= self.index {
            0
        } else {
            (limit - self.index - 1) / self.count + 1
        }
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// A shard's runs in its own order (its `j`-th run has campaign index `Shard::run_index(j)`),
/// as much as a merge needs to count any prefix of them exactly.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ledger {
    /// Each run's outcome kind, run-length encoded: (kind, consecutive runs).
    pub outcomes: Vec<(String, u64)>,
    /// Each run's events.
    pub events: Vec<u64>,
    /// Every feature reached, with the first run (`j`) that reached it.
    pub features: BTreeMap<u64, u64>,
    /// Every `sometimes` property that held, with the first run (`j`) where it did.
    pub sometimes: BTreeMap<String, u64>,
}

impl Ledger {
    pub fn runs(&self) -> u64 {
        self.events.len() as u64
    }

    pub(crate) fn push_outcome(&mut self, kind: &str) {
        match self.outcomes.last_mut() {
            Some((k, n)) if k == kind => *n += 1,
            _ => self.outcomes.push((kind.to_string(), 1)),
        }
    }

    /// Checks that the parts agree with each other (a hand-edited or truncated file).
    pub fn is_consistent(&self) -> bool {
        let counted: u64 = self.outcomes.iter().map(|(_, n)| n).sum();
        let n = self.runs();
        counted == n
            && self.features.values().all(|&j| j < n)
            && self.sometimes.values().all(|&j| j < n)
    }

    /// Adds this ledger's first `n` runs to `into`.
    fn add_prefix(&self, n: u64, into: &mut Tallies) {
        into.runs += n;
        into.events += self.events[..n as usize].iter().sum::<u64>();
        let mut left = n;
        for (kind, count) in &self.outcomes {
            let take = left.min(*count);
            if take > 0 {
                *into.outcomes.entry(kind.clone()).or_default() += take;
            }
            left -= take;
        }
        into.features.extend(self.features.iter().filter(|(_, &j)| j < n).map(|(&f, _)| f));
        into.sometimes
            .extend(self.sometimes.iter().filter(|(_, &j)| j < n).map(|(s, _)| s.clone()));
    }
}

#[derive(Default)]
struct Tallies {
    runs: u64,
    events: u64,
    outcomes: BTreeMap<String, u64>,
    features: std::collections::BTreeSet<u64>,
    sometimes: std::collections::BTreeSet<String>,
}

/// What one shard found.
#[derive(Clone, Debug)]
pub struct ShardRun {
    pub ledger: Ledger,
    /// The shard's failing run with the lowest index.
    pub found: Option<Found>,
    /// Whether `Control::should_stop` ended the shard early (time budget or Ctrl-C).
    pub stopped: bool,
    /// Coverage: another shard stopped early, so this one stopped after the same generation.
    pub cut_short: bool,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ShardError {
    #[error(
        "--shard needs --strategy random, swarm or coverage, not {0}: exhaustive search is one \
         depth-first walk"
    )]
    Strategy(&'static str),
    #[error("{0} shards are not independent runs: run them with run_coverage_shard")]
    NotIndependent(&'static str),
    #[error(
        "shard {shard} ran {ran} runs but the merge needs its first {needed}: it stopped early \
         (a failure below that index was reported in its folder, in a found-*.idx file, that no \
         shard file given to the merge contains)"
    )]
    Short { shard: Shard, ran: u64, needed: u64 },
    #[error("shard {shard}'s ledger is inconsistent (its counts disagree)")]
    Inconsistent { shard: Shard },
    #[error("coverage shards' corpus exchange: {0}")]
    Sync(#[from] SyncError),
}

/// Whether `strategy` can be sharded.
pub fn check_shardable(strategy: Strategy) -> Result<(), ShardError> {
    match strategy {
        Strategy::Random | Strategy::Swarm | Strategy::Coverage => Ok(()),
        s => Err(ShardError::Strategy(s.name())),
    }
}

/// One run's ledger entry, until the shard's runs are put in order.
struct Entry {
    kind: &'static str,
    events: u64,
}

#[derive(Default)]
struct State {
    entries: BTreeMap<u64, Entry>,
    features: BTreeMap<u64, u64>,
    sometimes: BTreeMap<String, u64>,
    found: Vec<(u64, Found)>,
    progress: Progress,
}

/// Runs shard `shard` of the campaign `opts` (random or swarm) on `opts.jobs` threads.
pub fn run_shard(
    runner: &dyn Runner,
    opts: &CampaignOptions,
    shard: Shard,
    control: &dyn Control,
) -> Result<ShardRun, ShardError> {
    if !matches!(opts.strategy, Strategy::Random | Strategy::Swarm) {
        return Err(ShardError::NotIndependent(opts.strategy.name()));
    }
    let next = AtomicU64::new(0);
    let best = AtomicU64::new(u64::MAX);
    let stopped = AtomicBool::new(false);
    let state = Mutex::new(State::default());
    let limit = shard.runs_below(opts.runs.unwrap_or(u64::MAX));
    pool(opts.jobs, &next, limit, &best, control, &stopped, &|j| {
        // Another shard's failure below this run: neither this run nor any later one of this
        // shard can be the answer (the bound only falls, so the runs made stay a prefix).
        if shard.run_index(j) > control.known_failure() {
            best.fetch_min(j, Ordering::Relaxed);
            return;
        }
        let out = run_seeded(runner, opts, shard.run_index(j), None);
        let mut s = state.lock().expect("shard state poisoned");
        let report = &out.found.report;
        s.entries.insert(j, Entry { kind: report.outcome.kind(), events: report.events });
        for &f in &out.features {
            s.features.entry(f).and_modify(|m| *m = (*m).min(j)).or_insert(j);
        }
        for p in &report.sometimes {
            s.sometimes.entry(p.clone()).and_modify(|m| *m = (*m).min(j)).or_insert(j);
        }
        s.progress.runs += 1;
        s.progress.events += report.events;
        s.progress.features = s.features.len() as u64;
        if out.failed {
            best.fetch_min(j, Ordering::Relaxed);
            control.found(out.found.run_index);
            s.progress.failures += 1;
            s.found.push((j, out.found));
        }
        if s.progress.runs % 64 == 0 || out.failed {
            let p = s.progress.clone();
            drop(s);
            control.progress(&p);
        }
    });
    let s = state.into_inner().expect("shard state poisoned");
    let found = s.found.into_iter().min_by_key(|(j, _)| *j);
    // Runs past the shard's lowest failing run (in flight when it was found) are left out, so
    // the ledger does not depend on thread timing; below it every claimed run finished.
    let end = found.as_ref().map_or(u64::MAX, |(j, _)| *j);
    let mut ledger = Ledger::default();
    for (j, e) in s.entries.range(..=end) {
        assert_eq!(*j, ledger.runs(), "a shard's finished runs below its failure are a prefix");
        ledger.push_outcome(e.kind);
        ledger.events.push(e.events);
    }
    let n = ledger.runs();
    ledger.features = s.features.into_iter().filter(|&(_, j)| j < n).collect();
    ledger.sometimes = s.sometimes.into_iter().filter(|(_, j)| *j < n).collect();
    let stopped = stopped.load(Ordering::Relaxed);
    Ok(ShardRun { ledger, found: found.map(|(_, f)| f), stopped, cut_short: false })
}

/// The campaign's tallies from all its shards' ledgers: the runs with index at or below
/// `cutoff` (the lowest failing index), or all of them. With `exact`, every shard must have run
/// all its runs up to there (a run budget); otherwise (a time budget) each shard counts what it
/// ran. `found`, `exhaustive` and `unsupported` are left empty for the caller.
pub fn merge_ledgers(
    parts: &[(Shard, &Ledger)],
    budget: Option<u64>,
    cutoff: Option<u64>,
    exact: bool,
) -> Result<CampaignResult, ShardError> {
    let end = match cutoff {
        Some(c) => c.saturating_add(1).min(budget.unwrap_or(u64::MAX)),
        None => budget.unwrap_or(u64::MAX),
    };
    let mut t = Tallies::default();
    for &(shard, ledger) in parts {
        if !ledger.is_consistent() {
            return Err(ShardError::Inconsistent { shard });
        }
        let needed = shard.runs_below(end);
        let ran = ledger.runs();
        if exact && ran < needed {
            return Err(ShardError::Short { shard, ran, needed });
        }
        ledger.add_prefix(needed.min(ran), &mut t);
    }
    Ok(CampaignResult {
        runs: t.runs,
        events: t.events,
        outcomes: t.outcomes.into_iter().collect(),
        sometimes_hit: t.sometimes.into_iter().collect(),
        features: t.features.len() as u64,
        ..CampaignResult::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_run_indices() {
        for count in 1..6 {
            let mut seen = vec![0u32; 23];
            for index in 0..count {
                let s = Shard { index, count };
                let n = s.runs_below(23);
                for j in 0..n {
                    seen[s.run_index(j) as usize] += 1;
                }
                assert!(s.run_index(n) >= 23);
            }
            assert!(seen.iter().all(|&c| c == 1), "{count} shards: {seen:?}");
        }
    }

    /// A shard told of a failure elsewhere makes exactly its runs at or below that index.
    #[test]
    fn a_known_failure_elsewhere_stops_a_shard_after_a_prefix() {
        struct Told;
        impl Control for Told {
            fn known_failure(&self) -> u64 {
                10
            }
        }
        use weft_core::Target;
        let spec = weft_core::RunSpec {
            target: "primary-backup".into(),
            variant: "fixed".into(),
            ..Default::default()
        };
        let runner = weft_target_primary_backup::PrimaryBackup.prepare(&spec).unwrap();
        let opts = CampaignOptions {
            seed: 1,
            runs: Some(1000),
            jobs: 2,
            strategy: Strategy::Random,
            scenario: runner.default_scenario(),
        };
        let run = run_shard(runner.as_ref(), &opts, Shard { index: 1, count: 3 }, &Told).unwrap();
        assert_eq!(run.ledger.runs(), 4, "indices 1, 4, 7, 10");
        assert!(run.found.is_none());
    }

    #[test]
    fn parse_rejects_bad_shards() {
        assert_eq!(Shard::parse("1/4"), Ok(Shard { index: 1, count: 4 }));
        for bad in ["4/4", "0/0", "1", "-1/4", "a/b", "1/4/5"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_prefix_counts_only_its_runs() {
        let mut l = Ledger::default();
        for (kind, ev) in [("pass", 3), ("pass", 4), ("outside_model", 5), ("pass", 6)] {
            l.push_outcome(kind);
            l.events.push(ev);
        }
        l.features = [(10, 0), (11, 2), (12, 3)].into_iter().collect();
        let s = Shard { index: 1, count: 2 }; // indices 1, 3, 5, 7
        let r = merge_ledgers(&[(s, &l)], Some(8), Some(5), true).unwrap();
        assert_eq!((r.runs, r.events, r.features), (3, 12, 2));
        assert_eq!(r.outcomes, vec![("outside_model".into(), 1), ("pass".into(), 2)]);
        let short = merge_ledgers(&[(s, &l)], Some(20), None, true);
        assert_eq!(short.unwrap_err(), ShardError::Short { shard: s, ran: 4, needed: 10 });
    }
}
