//! Sharded coverage search against one machine's: N shards on threads of this process,
//! exchanging generations in memory, must merge to exactly what `run_campaign` reports.

use super::super::sync::{memory::Board, SyncError};
use super::*;
use crate::{merge_ledgers, run_campaign, CampaignResult, Quiet, Strategy};
use weft_core::{RunSpec, Target};

fn prepare(
    target: &dyn Target,
    name: &str,
    variant: &str,
    opts: &[(&str, &str)],
) -> Box<dyn Runner> {
    let spec = RunSpec {
        target: name.into(),
        variant: variant.into(),
        options: opts.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        property: None,
    };
    target.prepare(&spec).expect("prepares")
}

fn options(runner: &dyn Runner, runs: u64, jobs: usize) -> CampaignOptions {
    CampaignOptions {
        seed: 7,
        runs: Some(runs),
        jobs,
        strategy: Strategy::Coverage,
        scenario: runner.default_scenario(),
    }
}

/// Runs `count` shards at once on `sync` (a board by default) and merges them as `weft merge`.
fn sharded(runner: &dyn Runner, opts: &CampaignOptions, count: u64) -> CampaignResult {
    let board = Board::new(count);
    let runs: Vec<ShardRun> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..count)
            .map(|index| {
                let board = &board;
                scope.spawn(move || {
                    run_coverage_shard(runner, opts, Shard { index, count }, &Quiet, board)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("shard thread").expect("shard")).collect()
    });
    let found = runs.iter().filter_map(|r| r.found.clone()).min_by_key(|f| f.run_index);
    let parts: Vec<_> = runs
        .iter()
        .enumerate()
        .map(|(k, r)| (Shard { index: k as u64, count }, &r.ledger))
        .collect();
    let at = found.as_ref().map(|f| f.run_index);
    let mut merged = merge_ledgers(&parts, opts.runs, at, true).expect("merge");
    merged.found = found;
    merged
}

type Key = (u64, u64, Vec<(String, u64)>, u64, Vec<String>, Option<(u64, u64, Vec<u64>, u64)>);

fn key(r: &CampaignResult) -> Key {
    let f =
        r.found.as_ref().map(|f| (f.run_index, f.seed, f.decisions.clone(), f.report.trace_hash));
    (r.runs, r.events, r.outcomes.clone(), r.features, r.sometimes_hit.clone(), f)
}

fn chord() -> Box<dyn Runner> {
    prepare(&weft_target_chord::Chord, "chord", "original", &[("ids", "5")])
}

/// A violation deep in a coverage search (chord's, at run 3501 of seed 7's campaign, after 27
/// generations of corpus) is found at the same index with the same decisions, and the same
/// runs counted, by 1, 3 and 4 shards as by one machine with 2 threads.
#[test]
fn sharded_coverage_finds_what_one_machine_finds() {
    let runner = chord();
    let one = run_campaign(runner.as_ref(), &options(runner.as_ref(), 20_000, 2), &Quiet);
    let at = one.found.as_ref().expect("chord original fails").run_index;
    assert!(at > 4 * GENERATION, "the answer needs several generations of corpus, not {at}");
    for count in [1, 3, 4] {
        let merged = sharded(runner.as_ref(), &options(runner.as_ref(), 20_000, 1), count);
        assert_eq!(key(&one), key(&merged), "{count} shards");
    }
}

/// A passing campaign: every count (runs, events, outcomes, features, sometimes) is one
/// machine's, with a budget that ends inside a generation, and with more shards than some
/// generations give runs to.
#[test]
fn sharded_coverage_counts_what_one_machine_counts() {
    let pb = weft_target_primary_backup::PrimaryBackup;
    let runner = prepare(&pb, "primary-backup", "fixed", &[]);
    let opts = options(runner.as_ref(), 3 * GENERATION + 50, 1);
    let one = run_campaign(runner.as_ref(), &opts, &Quiet);
    assert!(one.found.is_none() && one.features > 10, "{} features", one.features);
    for count in [2, 5] {
        assert_eq!(key(&one), key(&sharded(runner.as_ref(), &opts, count)), "{count} shards");
    }
}

/// Shows a shard only its own parts, as if it were alone with its own corpus.
struct Alone(Board);

impl GenerationSync for Alone {
    fn publish(&self, part: &GenerationPart) -> Result<(), SyncError> {
        for index in 0..self.0.count {
            let mut p = part.clone();
            p.shard = Shard { index, count: self.0.count };
            self.0.publish(&p)?;
        }
        Ok(())
    }
    fn gather(&self, generation: u64) -> Result<Vec<GenerationPart>, SyncError> {
        self.0.gather(generation)
    }
}

/// Without the exchange a shard finds something else (or nothing): the tests above would
/// catch an exchange that carried nothing.
#[test]
fn a_shard_without_the_exchange_searches_another_space() {
    let runner = chord();
    let opts = options(runner.as_ref(), 20_000, 1);
    let one = run_campaign(runner.as_ref(), &opts, &Quiet);
    let alone = Alone(Board::new(2));
    let run =
        run_coverage_shard(runner.as_ref(), &opts, Shard { index: 0, count: 2 }, &Quiet, &alone)
            .expect("shard");
    assert_ne!(run.found.map(|f| f.run_index), one.found.map(|f| f.run_index));
}
