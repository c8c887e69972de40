//! Campaigns: many runs of one prepared target, each with its own seed derived from the campaign
//! seed and the run's index, spread over worker threads.
//!
//! The set of runs is a function of (campaign seed, run budget), never of thread timing: workers
//! claim run indices in increasing order, and when failures are found the campaign reports the
//! one with the lowest index, after every lower index has finished. So `--jobs 2` and `--jobs 1`
//! report the same violation. (A wall-clock budget is inherently timing-dependent; the CLI says
//! so.)

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use weft_core::{derive_seed, Decisions, NullObserver, RunReport, Runner, Scenario};

/// How a campaign picks each run's scenario and decisions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// The target's default scenario; decisions from the run's seed.
    Random,
}

impl Strategy {
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Random => "random",
        }
    }
}

/// What the CLI lets a campaign know while it runs: whether to stop (wall-clock budget, Ctrl-C)
/// and where to report progress. The explorer itself reads no clock.
pub trait Control: Sync {
    fn should_stop(&self) -> bool {
        false
    }
    fn progress(&self, _p: &Progress) {}
}

/// A control that never stops early and reports nothing.
pub struct Quiet;
impl Control for Quiet {}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    pub runs: u64,
    pub events: u64,
    pub failures: u64,
}

#[derive(Clone, Debug)]
pub struct CampaignOptions {
    pub seed: u64,
    /// Upper bound on runs (None: until `Control::should_stop`).
    pub runs: Option<u64>,
    pub jobs: usize,
    pub strategy: Strategy,
    /// Scenario for every run (strategies may vary it per run).
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
    /// The failing run with the lowest index, if any.
    pub found: Option<Found>,
    /// Counts of each outcome kind over all runs, sorted by kind.
    pub outcomes: Vec<(String, u64)>,
    /// `sometimes` properties that held in at least one run.
    pub sometimes_hit: Vec<String>,
    /// Whether the campaign ended because `Control::should_stop` said so.
    pub interrupted: bool,
}

/// Runs one run of a campaign: a pure function of (runner, options, index).
pub fn run_one(runner: &dyn Runner, opts: &CampaignOptions, index: u64) -> (Found, bool) {
    let seed = derive_seed(opts.seed, index);
    let scenario = match opts.strategy {
        Strategy::Random => opts.scenario.clone(),
    };
    let mut decisions = Decisions::random(seed);
    let report = runner.run(&scenario, &mut decisions, &mut NullObserver);
    let failed = report.outcome.is_failure();
    (Found { run_index: index, seed, scenario, decisions: decisions.into_log(), report }, failed)
}

#[derive(Default)]
struct Shared {
    outcomes: std::collections::BTreeMap<String, u64>,
    sometimes: std::collections::BTreeSet<String>,
    found: Vec<Found>,
    runs: u64,
    events: u64,
}

pub fn run_campaign(
    runner: &dyn Runner,
    opts: &CampaignOptions,
    control: &dyn Control,
) -> CampaignResult {
    let next = AtomicU64::new(0);
    let best = AtomicU64::new(u64::MAX);
    let stopped = std::sync::atomic::AtomicBool::new(false);
    let shared = Mutex::new(Shared::default());
    let limit = opts.runs.unwrap_or(u64::MAX);
    let worker = || loop {
        if control.should_stop() {
            stopped.store(true, Ordering::Relaxed);
            return;
        }
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= limit || i > best.load(Ordering::Relaxed) {
            return;
        }
        let (found, failed) = run_one(runner, opts, i);
        let mut s = shared.lock().expect("campaign state poisoned");
        s.runs += 1;
        s.events += found.report.events;
        *s.outcomes.entry(found.report.outcome.kind().to_string()).or_default() += 1;
        s.sometimes.extend(found.report.sometimes.iter().cloned());
        if failed {
            best.fetch_min(i, Ordering::Relaxed);
            s.found.push(found);
        }
        if s.runs % 64 == 0 || failed {
            let p = Progress { runs: s.runs, events: s.events, failures: s.found.len() as u64 };
            drop(s);
            control.progress(&p);
        }
    };
    let jobs = opts.jobs.max(1);
    if jobs == 1 {
        worker();
    } else {
        std::thread::scope(|scope| {
            for _ in 0..jobs {
                scope.spawn(worker);
            }
        });
    }
    let s = shared.into_inner().expect("campaign state poisoned");
    let found = s.found.into_iter().min_by_key(|f| f.run_index);
    let interrupted = stopped.load(Ordering::Relaxed) && found.is_none();
    CampaignResult {
        runs: s.runs,
        events: s.events,
        found,
        outcomes: s.outcomes.into_iter().collect(),
        sometimes_hit: s.sometimes.into_iter().collect(),
        interrupted,
    }
}
