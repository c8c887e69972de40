//! Sharded coverage-guided search: shard K/N makes the run indices K, K+N, … of every
//! generation, and at each generation's end exchanges with the other shards what the corpus
//! needs ([`GenerationSync`]), so every shard goes into the next generation with the corpus a
//! single machine would have built.
//!
//! One machine's coverage search (`campaign::run_coverage`) runs generations of
//! [`GENERATION`] runs: each run mutates the corpus as it was when the generation began, and the
//! generation's runs are then merged in index order (a run that reached a feature no earlier run
//! had joins the corpus; the first failing run ends the campaign). Here each shard runs its
//! slice of the generation against the same frozen corpus, then publishes its candidates: the
//! runs that reached a feature outside both the campaign's set at the generation's start and its
//! own earlier runs' (a run new to the campaign is always such a candidate, since a shard's
//! earlier runs are a subset of the campaign's), with their features outside the start set. From
//! every shard's candidates, in index order, each shard computes exactly which runs were new —
//! the features of a non-candidate run add nothing the earlier candidates did not — and so the
//! same corpus. A failure or a stop in any shard ends the campaign after that generation.
//!
//! So the runs made, the corpus of each generation and the lowest failing index are those of
//! one machine, whatever N and however the shards are timed; a shard's ledger keeps its runs
//! for the merge exactly as for random search. The price is a barrier per generation: every
//! shard waits for the slowest before it can start the next.

use super::sync::{check_parts, Candidate, GenerationPart, GenerationSync};
use super::{Ledger, Shard, ShardError, ShardRun};
use crate::campaign::{pool, run_seeded, CampaignOptions, Control, Entry, Progress, RunOut};
use crate::GENERATION;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use weft_core::Runner;

/// The campaign's state that every shard holds identically between generations.
#[derive(Default)]
struct Shared {
    corpus: Vec<Entry>,
    /// Every feature any run of the campaign has reached so far.
    features: BTreeSet<u64>,
}

impl Shared {
    /// Adds a generation's candidates from every shard, in index order, as one machine would.
    fn absorb(&mut self, parts: Vec<GenerationPart>) {
        let mut all: Vec<Candidate> = parts.into_iter().flat_map(|p| p.candidates).collect();
        all.sort_by_key(|c| c.index);
        for c in all {
            let mut new = false;
            for &f in &c.features {
                new |= self.features.insert(f);
            }
            if new {
                self.corpus.push(Entry { log: c.decisions, bounds: c.bounds });
            }
        }
    }
}

/// Runs shard `shard` of the coverage-guided campaign `opts`, exchanging each generation's
/// corpus through `sync`.
pub fn run_coverage_shard(
    runner: &dyn Runner,
    opts: &CampaignOptions,
    shard: Shard,
    control: &dyn Control,
    sync: &dyn GenerationSync,
) -> Result<ShardRun, ShardError> {
    let limit = opts.runs.unwrap_or(u64::MAX);
    let stopped = AtomicBool::new(false);
    let mut shared = Shared::default();
    let mut ledger = Ledger::default();
    let mut progress = Progress::default();
    let mut found = None;
    let mut cut_short = false;
    let mut generation: u64 = 0;
    loop {
        let lo = generation.saturating_mul(GENERATION);
        let hi = limit.min(lo.saturating_add(GENERATION));
        let indices: Vec<u64> = (lo..hi).filter(|i| i % shard.count == shard.index).collect();
        let outs = run_slice(runner, opts, &indices, &shared.corpus, control, &stopped);
        let stop = stopped.load(Ordering::Relaxed) || control.should_stop();
        let part = settle(&outs, &indices, &shared.features, generation, shard, stop);
        record(&outs[..part.kept], shard, &mut ledger, &mut progress);
        if let Some(f) = outs.iter().find(|o| o.failed) {
            found = Some(f.found.clone());
        }
        control.progress(&progress);
        sync.publish(&part.part)?;
        if part.part.failed.is_some() || stop || hi >= limit {
            break;
        }
        let parts = check_parts(sync.gather(generation)?, generation, shard.count)?;
        if parts.iter().any(|p| p.failed.is_some() || p.stop) {
            cut_short = parts.iter().any(|p| p.stop);
            break;
        }
        shared.absorb(parts);
        generation += 1;
    }
    let stopped = stopped.load(Ordering::Relaxed);
    Ok(ShardRun { ledger, found, stopped, cut_short })
}

/// This shard's runs of one generation, in index order (a prefix of `indices` if stopped).
fn run_slice(
    runner: &dyn Runner,
    opts: &CampaignOptions,
    indices: &[u64],
    corpus: &[Entry],
    control: &dyn Control,
    stopped: &AtomicBool,
) -> Vec<RunOut> {
    let next = AtomicU64::new(0);
    let best = AtomicU64::new(u64::MAX);
    let slots: Mutex<Vec<Option<RunOut>>> = Mutex::new(indices.iter().map(|_| None).collect());
    pool(opts.jobs, &next, indices.len() as u64, &best, control, stopped, &|p| {
        let out = run_seeded(runner, opts, indices[p as usize], Some(corpus));
        if out.failed {
            best.fetch_min(p, Ordering::Relaxed);
        }
        slots.lock().expect("generation poisoned")[p as usize] = Some(out);
    });
    // Runs are claimed in order, so the finished ones are a prefix unless a thread was still
    // busy past a failure; keep the prefix.
    slots.into_inner().expect("generation poisoned").into_iter().map_while(|o| o).collect()
}

/// What a shard publishes for a generation, and how many of its runs it counts.
struct Settled {
    part: GenerationPart,
    /// Runs counted in the ledger: all of them, or up to and including the first failure.
    kept: usize,
}

fn settle(
    outs: &[RunOut],
    indices: &[u64],
    known: &BTreeSet<u64>,
    generation: u64,
    shard: Shard,
    stop: bool,
) -> Settled {
    debug_assert!(outs.iter().zip(indices).all(|(o, &i)| o.found.run_index == i));
    let kept = outs.iter().position(|o| o.failed).map_or(outs.len(), |p| p + 1);
    let failed = outs[..kept].last().filter(|o| o.failed).map(|o| o.found.run_index);
    let mut seen = known.clone();
    let mut candidates = Vec::new();
    for out in &outs[..kept] {
        let mut new = false;
        for &f in &out.features {
            new |= seen.insert(f);
        }
        if new {
            candidates.push(Candidate {
                index: out.found.run_index,
                features: out.features.iter().copied().filter(|f| !known.contains(f)).collect(),
                decisions: out.found.decisions.clone(),
                bounds: out.bounds.clone(),
            });
        }
    }
    // A shard that did not finish its slice stops the campaign: a missing run would change
    // every later generation's corpus.
    let stop = stop || kept < indices.len() && failed.is_none();
    Settled { part: GenerationPart { generation, shard, candidates, failed, stop }, kept }
}

/// Adds runs (this shard's next ones, in order) to its ledger and progress.
fn record(outs: &[RunOut], shard: Shard, ledger: &mut Ledger, progress: &mut Progress) {
    for out in outs {
        let j = ledger.runs();
        debug_assert_eq!(shard.run_index(j), out.found.run_index);
        let report = &out.found.report;
        ledger.push_outcome(report.outcome.kind());
        ledger.events.push(report.events);
        for &f in &out.features {
            ledger.features.entry(f).or_insert(j);
        }
        for p in &report.sometimes {
            ledger.sometimes.entry(p.clone()).or_insert(j);
        }
        progress.runs += 1;
        progress.events += report.events;
        progress.failures += u64::from(out.failed);
    }
    progress.features = ledger.features.len() as u64;
}

#[cfg(test)]
mod tests;
