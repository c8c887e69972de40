//! Campaigns: many runs of one prepared target, each with its own seed derived from the campaign
//! seed and the run's index, spread over worker threads.
//!
//! The set of runs is a function of (campaign seed, run budget), never of thread timing: workers
//! claim run indices in increasing order, and when failures are found the campaign reports the
//! one with the lowest index, after every lower index has finished. So `--jobs 2` and `--jobs 1`
//! report the same violation. Coverage-guided search keeps that property by running in
//! generations of fixed size: every run of a generation mutates the corpus as it was when the
//! generation began, and results are merged in run-index order. Exhaustive search is one
//! depth-first walk and runs on one thread. (A wall-clock budget is inherently
//! timing-dependent; the CLI says so.)

use crate::exhaustive::{self, ExhaustiveStats};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use weft_core::{
    derive_seed, Decisions, Observer, Outcome, Ratio, Rng, RunReport, Runner, Scenario,
};

/// How a campaign picks each run's scenario and decisions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// The target's default scenario; decisions from the run's seed.
    Random,
    /// Swarm testing: each run switches a random subset of fault kinds on, at rates drawn from
    /// its seed (the scenario is stored in the repro); decisions from the run's seed.
    Swarm,
    /// Coverage-guided: a corpus of decision lists that reached new features, mutated (splice,
    /// truncate, change values), then continued at random.
    Coverage,
    /// Bounded depth-first enumeration of decision lists with state hashing (targets that call
    /// `Observer::checkpoint`). `max_depth` bounds the checkpoints (scheduling steps) branched
    /// on per run; past it a run continues with the simplest choices.
    Exhaustive { max_depth: u32 },
}

impl Strategy {
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Random => "random",
            Strategy::Swarm => "swarm",
            Strategy::Coverage => "coverage",
            Strategy::Exhaustive { .. } => "exhaustive",
        }
    }

    /// Parses a strategy name; `max_depth` applies to `exhaustive`.
    pub fn parse(name: &str, max_depth: u32) -> Option<Strategy> {
        Some(match name {
            "random" => Strategy::Random,
            "swarm" => Strategy::Swarm,
            "coverage" => Strategy::Coverage,
            "exhaustive" => Strategy::Exhaustive { max_depth },
            _ => return None,
        })
    }

    pub const NAMES: [&'static str; 4] = ["random", "swarm", "coverage", "exhaustive"];
}

/// What the CLI lets a campaign know while it runs: whether to stop (wall-clock budget, Ctrl-C)
/// and where to report progress. The explorer itself reads no clock.
pub trait Control: Sync {
    fn should_stop(&self) -> bool {
        false
    }
    fn progress(&self, _p: &Progress) {}
    /// Sharded campaigns: the lowest campaign run index known (from other shards) to fail, or
    /// `u64::MAX`. Runs above it cannot be the campaign's answer, so a shard need not make them.
    fn known_failure(&self) -> u64 {
        u64::MAX
    }
    /// Sharded campaigns: this shard found a failing run at campaign index `run_index`.
    fn found(&self, _run_index: u64) {}
}

/// A control that never stops early and reports nothing.
pub struct Quiet;
impl Control for Quiet {}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    pub runs: u64,
    pub events: u64,
    pub failures: u64,
    /// Distinct coverage features reached so far (`Observer::feature`).
    pub features: u64,
    /// Exhaustive search: distinct states explored and the deepest level reached.
    pub states: u64,
    pub depth: u32,
    /// Shrinking: the size of the smallest failing run found so far.
    pub best: Option<Best>,
}

/// The size of a run: its (trimmed) decisions, events and injected faults.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Best {
    pub decisions: u64,
    pub events: u64,
    pub faults: u64,
}

#[derive(Clone, Debug)]
pub struct CampaignOptions {
    pub seed: u64,
    /// Upper bound on runs (None: until `Control::should_stop`).
    pub runs: Option<u64>,
    pub jobs: usize,
    pub strategy: Strategy,
    /// Scenario for every run (swarm derives each run's scenario from it).
    pub scenario: Scenario,
}

/// One failing run, with everything needed to write its repro.
#[derive(Clone, Debug)]
pub struct Found {
    pub run_index: u64,
    pub seed: u64,
    pub scenario: Scenario,
    pub decisions: Vec<u64>,
    pub report: RunReport,
}

#[derive(Clone, Debug, Default)]
pub struct CampaignResult {
    pub runs: u64,
    pub events: u64,
    /// The failing run with the lowest index (exhaustive: the first in depth-first order).
    pub found: Option<Found>,
    /// Counts of each outcome kind over all runs, sorted by kind.
    pub outcomes: Vec<(String, u64)>,
    /// `sometimes` properties that held in at least one run.
    pub sometimes_hit: Vec<String>,
    /// Distinct coverage features reached over the campaign.
    pub features: u64,
    /// Exhaustive search only.
    pub exhaustive: Option<ExhaustiveStats>,
    /// Why the strategy cannot run on this target (e.g. exhaustive search on a target that never
    /// calls `checkpoint`).
    pub unsupported: Option<String>,
    /// Whether the campaign ended because `Control::should_stop` said so.
    pub interrupted: bool,
    /// The run with the lowest index that ended `Unsupported` (the target met something weft
    /// cannot simulate), with its outcome's text: random and swarm campaigns only.
    pub first_unsupported: Option<(u64, String)>,
}

/// Collects the distinct features a run reaches.
#[derive(Default)]
pub(crate) struct Features(pub Vec<u64>);

impl Observer for Features {
    fn feature(&mut self, feature: u64) {
        // Most calls repeat a recent feature; a short look-back keeps the vector small.
        if !self.0.iter().rev().take(8).any(|&f| f == feature) {
            self.0.push(feature);
        }
    }
}

impl Features {
    fn finish(mut self) -> Vec<u64> {
        self.0.sort_unstable();
        self.0.dedup();
        self.0
    }
}

/// The swarm scenario of the run with seed `seed`: each fault kind is on with probability 1/2,
/// at its base rate scaled by ¼, 1 or 4 (capped at 1/2). A pure function of (base, seed).
pub fn swarm_scenario(base: &Scenario, seed: u64) -> Scenario {
    let mut rng = Rng::new(derive_seed(seed, 0x5357_4152_4d00));
    let mut pick = |r: Ratio| -> Ratio {
        if r.is_zero() || rng.below(2) == 0 {
            return Ratio::ZERO;
        }
        let (num, den) = match rng.below(3) {
            0 => (r.num as u64, r.den as u64 * 4),
            1 => (r.num as u64, r.den as u64),
            _ => (r.num as u64 * 4, r.den as u64),
        };
        if num * 2 > den {
            Ratio::new(1, 2)
        } else {
            Ratio::new(num as u32, den as u32)
        }
    };
    let mut s = base.clone();
    s.rates.drop = pick(base.rates.drop);
    s.rates.duplicate = pick(base.rates.duplicate);
    s.rates.delay = pick(base.rates.delay);
    s.rates.crash = pick(base.rates.crash);
    s.rates.pause = pick(base.rates.pause);
    s.rates.partition = pick(base.rates.partition);
    s
}

/// One run's result, before it is merged into the campaign.
pub(crate) struct RunOut {
    pub(crate) found: Found,
    pub(crate) failed: bool,
    pub(crate) features: Vec<u64>,
    pub(crate) bounds: Vec<u64>,
}

/// Runs one random or swarm run: a pure function of (runner, options, index).
pub fn run_one(runner: &dyn Runner, opts: &CampaignOptions, index: u64) -> (Found, bool) {
    let out = run_seeded(runner, opts, index, None);
    (out.found, out.failed)
}

pub(crate) fn run_seeded(
    runner: &dyn Runner,
    opts: &CampaignOptions,
    index: u64,
    corpus: Option<&[Entry]>,
) -> RunOut {
    let seed = derive_seed(opts.seed, index);
    let scenario = match opts.strategy {
        Strategy::Swarm => swarm_scenario(&opts.scenario, seed),
        _ => opts.scenario.clone(),
    };
    // Every other run of coverage-guided search starts from scratch: mutating the corpus wins
    // big where features track progress toward a bug (atomic Chord), and fresh runs keep it
    // within 2x of plain random search where they do not (message-level Chord, whose corpus
    // of long lists mutated near the start rarely reaches the split that random runs find).
    let mut decisions = match corpus {
        Some(c) if !c.is_empty() && index % 2 == 1 => {
            Decisions::replay_then_random(mutate(c, seed), seed)
        }
        _ => Decisions::random(seed),
    };
    let mut obs = Features::default();
    let report = runner.run(&scenario, &mut decisions, &mut obs);
    let failed = report.outcome.is_failure();
    let bounds = if corpus.is_some() { decisions.bounds().to_vec() } else { Vec::new() };
    RunOut {
        found: Found { run_index: index, seed, scenario, decisions: decisions.into_log(), report },
        failed,
        features: obs.finish(),
        bounds,
    }
}

/// A corpus entry of coverage-guided search: a run that reached a feature no earlier run had.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub(crate) log: Vec<u64>,
    pub(crate) bounds: Vec<u64>,
}

/// Mutates one corpus entry into the decision prefix of a new run (the rest is drawn at random
/// from the run's seed). A pure function of (corpus, seed).
fn mutate(corpus: &[Entry], seed: u64) -> Vec<u64> {
    let mut rng = Rng::new(derive_seed(seed, 0x434f_5645_5200));
    let parent = &corpus[rng.below(corpus.len() as u64) as usize];
    let n = parent.log.len();
    if n == 0 {
        return Vec::new();
    }
    let change = |rng: &mut Rng, p: &mut Vec<u64>, bounds: &[u64]| -> usize {
        let i = rng.below(p.len() as u64) as usize;
        p[i] = rng.below(bounds[i].max(1));
        i
    };
    match rng.below(4) {
        // Change a few values, then let the run continue at random after the last change.
        0 => {
            let mut p = parent.log.clone();
            let mut last = 0;
            for _ in 0..=rng.below(4) {
                last = last.max(change(&mut rng, &mut p, &parent.bounds));
            }
            p.truncate(last + 1);
            p
        }
        // Change a few values and keep the rest of the parent.
        1 => {
            let mut p = parent.log.clone();
            for _ in 0..=rng.below(4) {
                change(&mut rng, &mut p, &parent.bounds);
            }
            p
        }
        // Truncate: keep a prefix, continue at random.
        2 => parent.log[..rng.below(n as u64) as usize].to_vec(),
        // Splice: a prefix of this parent, the rest of another one.
        _ => {
            let other = &corpus[rng.below(corpus.len() as u64) as usize];
            let cut = rng.below(n.min(other.log.len()).max(1) as u64) as usize;
            let mut p = parent.log[..cut].to_vec();
            p.extend_from_slice(other.log.get(cut..).unwrap_or(&[]));
            p
        }
    }
}

/// Runs per generation of coverage-guided search. Fixed, so results do not depend on `--jobs`.
pub const GENERATION: u64 = 128;

#[derive(Default)]
struct Tally {
    outcomes: BTreeMap<String, u64>,
    sometimes: BTreeSet<String>,
    features: BTreeSet<u64>,
    runs: u64,
    events: u64,
    failures: u64,
    first_unsupported: Option<(u64, String)>,
}

impl Tally {
    /// Counts one run; returns whether it reached a new feature.
    fn add(&mut self, out: &RunOut) -> bool {
        self.runs += 1;
        self.events += out.found.report.events;
        let outcome = &out.found.report.outcome;
        *self.outcomes.entry(outcome.kind().to_string()).or_default() += 1;
        let index = out.found.run_index;
        if matches!(outcome, Outcome::Unsupported { .. })
            && self.first_unsupported.as_ref().is_none_or(|(i, _)| index < *i)
        {
            self.first_unsupported = Some((index, outcome.to_string()));
        }
        self.sometimes.extend(out.found.report.sometimes.iter().cloned());
        if out.failed {
            self.failures += 1;
        }
        let mut new = false;
        for &f in &out.features {
            new |= self.features.insert(f);
        }
        new
    }

    fn progress(&self) -> Progress {
        Progress {
            runs: self.runs,
            events: self.events,
            failures: self.failures,
            features: self.features.len() as u64,
            ..Progress::default()
        }
    }

    fn result(self, found: Option<Found>, interrupted: bool) -> CampaignResult {
        CampaignResult {
            runs: self.runs,
            events: self.events,
            found,
            outcomes: self.outcomes.into_iter().collect(),
            sometimes_hit: self.sometimes.into_iter().collect(),
            features: self.features.len() as u64,
            exhaustive: None,
            unsupported: None,
            interrupted,
            first_unsupported: self.first_unsupported,
        }
    }
}

/// Runs `body(i)` for indices claimed in increasing order from `next` until `limit`, a stop
/// request, or an index above `best` (a lower failing run is already known). On `jobs` threads.
pub(crate) fn pool(
    jobs: usize,
    next: &AtomicU64,
    limit: u64,
    best: &AtomicU64,
    control: &dyn Control,
    stopped: &AtomicBool,
    body: &(dyn Fn(u64) + Sync),
) {
    let worker = || loop {
        if control.should_stop() {
            stopped.store(true, Ordering::Relaxed);
            return;
        }
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= limit || i > best.load(Ordering::Relaxed) {
            return;
        }
        body(i);
    };
    if jobs <= 1 {
        worker();
    } else {
        // The explorer is the one place that creates threads, scoped so none outlives a campaign.
        std::thread::scope(|scope| {
            for _ in 0..jobs {
                scope.spawn(worker);
            }
        });
    }
}

pub fn run_campaign(
    runner: &dyn Runner,
    opts: &CampaignOptions,
    control: &dyn Control,
) -> CampaignResult {
    match opts.strategy {
        Strategy::Random | Strategy::Swarm => run_independent(runner, opts, control),
        Strategy::Coverage => run_coverage(runner, opts, control),
        Strategy::Exhaustive { max_depth } => exhaustive::run(runner, opts, max_depth, control),
    }
}

/// Random and swarm: every run is independent of every other.
fn run_independent(
    runner: &dyn Runner,
    opts: &CampaignOptions,
    control: &dyn Control,
) -> CampaignResult {
    let next = AtomicU64::new(0);
    let best = AtomicU64::new(u64::MAX);
    let stopped = AtomicBool::new(false);
    let shared = Mutex::new((Tally::default(), Vec::<Found>::new()));
    let limit = opts.runs.unwrap_or(u64::MAX);
    pool(opts.jobs, &next, limit, &best, control, &stopped, &|i| {
        let out = run_seeded(runner, opts, i, None);
        let mut guard = shared.lock().expect("campaign state poisoned");
        let (tally, found) = &mut *guard;
        tally.add(&out);
        if out.failed {
            best.fetch_min(i, Ordering::Relaxed);
            found.push(out.found);
        }
        // Every run: the control throttles what it shows (a process run takes seconds).
        let p = tally.progress();
        drop(guard);
        control.progress(&p);
    });
    let (tally, found) = shared.into_inner().expect("campaign state poisoned");
    let found = found.into_iter().min_by_key(|f| f.run_index);
    let interrupted = stopped.load(Ordering::Relaxed);
    tally.result(found, interrupted)
}

/// Progress within a generation, before its runs are merged: the counts so far plus the runs
/// finished since (features are the generation's start's until the merge).
struct Partial {
    base: Progress,
    done: Mutex<(u64, u64, u64)>,
}

impl Partial {
    fn new(base: Progress) -> Partial {
        Partial { base, done: Mutex::new((0, 0, 0)) }
    }

    fn add(&self, out: &RunOut) -> Progress {
        let mut d = self.done.lock().expect("progress poisoned");
        *d = (d.0 + 1, d.1 + out.found.report.events, d.2 + out.failed as u64);
        Progress {
            runs: self.base.runs + d.0,
            events: self.base.events + d.1,
            failures: self.base.failures + d.2,
            ..self.base.clone()
        }
    }
}

/// Coverage-guided: generations of [`GENERATION`] runs over a corpus frozen per generation.
fn run_coverage(
    runner: &dyn Runner,
    opts: &CampaignOptions,
    control: &dyn Control,
) -> CampaignResult {
    let limit = opts.runs.unwrap_or(u64::MAX);
    let mut corpus: Vec<Entry> = Vec::new();
    let mut tally = Tally::default();
    let stopped = AtomicBool::new(false);
    let mut found = None;
    let mut lo = 0;
    while lo < limit && found.is_none() && !stopped.load(Ordering::Relaxed) {
        let hi = limit.min(lo + GENERATION);
        let next = AtomicU64::new(lo);
        let best = AtomicU64::new(u64::MAX);
        let slots: Mutex<Vec<Option<RunOut>>> = Mutex::new((lo..hi).map(|_| None).collect());
        let frozen = &corpus;
        let partial = Partial::new(tally.progress());
        pool(opts.jobs, &next, hi, &best, control, &stopped, &|i| {
            let out = run_seeded(runner, opts, i, Some(frozen));
            if out.failed {
                best.fetch_min(i, Ordering::Relaxed);
            }
            let p = partial.add(&out);
            slots.lock().expect("generation poisoned")[(i - lo) as usize] = Some(out);
            control.progress(&p);
        });
        // Merge in run-index order: the corpus and the reported failure do not depend on which
        // thread finished first.
        for out in slots.into_inner().expect("generation poisoned").into_iter().flatten() {
            let new = tally.add(&out);
            if out.failed {
                found = Some(out.found);
                break;
            }
            if new {
                corpus.push(Entry { log: out.found.decisions, bounds: out.bounds });
            }
        }
        control.progress(&tally.progress());
        lo = hi;
    }
    let interrupted = stopped.load(Ordering::Relaxed);
    tally.result(found, interrupted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swarm_scenarios_vary_and_are_pure() {
        let base = Scenario::default();
        let a: Vec<Scenario> = (0..16).map(|s| swarm_scenario(&base, s)).collect();
        let b: Vec<Scenario> = (0..16).map(|s| swarm_scenario(&base, s)).collect();
        assert_eq!(a, b);
        assert!(a.iter().any(|s| s.rates.crash.is_zero()));
        assert!(a.iter().any(|s| !s.rates.crash.is_zero()));
        assert!(a.iter().any(|s| s.rates != a[0].rates));
    }

    #[test]
    fn mutations_are_pure() {
        let corpus = vec![
            Entry { log: vec![1, 2, 3, 4, 5], bounds: vec![9; 5] },
            Entry { log: vec![0, 7, 0], bounds: vec![8; 3] },
        ];
        for seed in 0..50 {
            assert_eq!(mutate(&corpus, seed), mutate(&corpus, seed));
        }
    }
}
