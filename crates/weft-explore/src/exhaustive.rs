//! Bounded exhaustive search: depth-first enumeration of decision lists, pruned by state hashes.
//!
//! Stateless model checking over the decision source. A work item is a decision prefix plus a
//! checkpoint ordinal `k`: the run replays the prefix (answering 0 past its end) and stops at
//! its `k`-th call of `Observer::checkpoint`, which targets make right before each scheduling
//! decision with a hash of their state. Then
//!
//! * every decision drawn after the prefix and before that checkpoint is a branch point: each of
//!   its other values becomes a sibling item (same `k`), so every decision list is enumerated
//!   exactly once;
//! * the state at checkpoint `k` is pruned if it was already reached at an ordinal `<= k` (a
//!   state reached earlier has at least as much future); otherwise the walk goes on with item
//!   (this run's log, `k + 1`);
//! * at the depth bound the run is finished with the simplest choices (no more branching), so
//!   violations that show only at the end of a run (liveness) are still checked.
//!
//! A target that never calls `checkpoint` cannot be searched this way; the campaign says so
//! instead of enumerating blindly. The walk is one thread and fully deterministic.

use crate::campaign::{CampaignOptions, CampaignResult, Control, Found, Progress};
use std::collections::{BTreeMap, BTreeSet};
use weft_core::{Decisions, Flow, Observer, Runner};

/// At most this many values of one decision are enumerated (a latency drawn from thousands of
/// microseconds would otherwise explode the tree); wider decisions count as truncated.
pub const MAX_CHOICES: u64 = 64;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExhaustiveStats {
    /// Distinct states (checkpoint hashes) explored. A state first met deep in the walk and
    /// later at a shallower depth is explored again (it has more future there) but counted once.
    pub states: u64,
    /// The deepest checkpoint ordinal reached.
    pub max_depth: u32,
    /// The depth bound of the search.
    pub depth_bound: u32,
    /// Paths finished with the simplest choices because they reached the depth bound.
    pub cut_at_bound: u64,
    /// Decisions wider than [`MAX_CHOICES`] whose extra values were not enumerated.
    pub wide_decisions: u64,
    /// Every decision list within the bound was enumerated (not stopped by a violation, the run
    /// budget or a stop request).
    pub exhausted: bool,
}

struct Probe {
    /// Stop at this checkpoint ordinal (`usize::MAX`: never).
    stop_at: usize,
    seen: usize,
    stopped: Option<u64>,
    features: BTreeSet<u64>,
}

impl Observer for Probe {
    fn feature(&mut self, feature: u64) {
        self.features.insert(feature);
    }
    fn checkpoint(&mut self, state: u64) -> Flow {
        let k = self.seen;
        self.seen += 1;
        if k == self.stop_at {
            self.stopped = Some(state);
            Flow::Stop
        } else {
            Flow::Continue
        }
    }
}

struct Item {
    prefix: Vec<u64>,
    stop_at: usize,
    /// False for a completion run at the depth bound: no branching.
    branch: bool,
}

pub(crate) fn run(
    runner: &dyn Runner,
    opts: &CampaignOptions,
    max_depth: u32,
    control: &dyn Control,
) -> CampaignResult {
    let limit = opts.runs.unwrap_or(u64::MAX);
    let scenario = &opts.scenario;
    let mut stats = ExhaustiveStats { depth_bound: max_depth, ..ExhaustiveStats::default() };
    let mut visited: BTreeMap<u64, usize> = BTreeMap::new();
    let mut features: BTreeSet<u64> = BTreeSet::new();
    let mut outcomes: BTreeMap<String, u64> = BTreeMap::new();
    let mut sometimes: BTreeSet<String> = BTreeSet::new();
    let mut stack = vec![Item { prefix: Vec::new(), stop_at: 0, branch: true }];
    let (mut runs, mut events) = (0u64, 0u64);
    let mut found = None;
    let mut unsupported = None;
    let mut interrupted = false;
    let mut out_of_runs = false;
    while let Some(item) = stack.pop() {
        if runs >= limit {
            out_of_runs = true;
            break;
        }
        if control.should_stop() {
            interrupted = true;
            break;
        }
        let mut probe =
            Probe { stop_at: item.stop_at, seen: 0, stopped: None, features: BTreeSet::new() };
        let start = item.prefix.len();
        let mut d = Decisions::replay(item.prefix);
        let report = runner.run(scenario, &mut d, &mut probe);
        runs += 1;
        events += report.events;
        features.extend(probe.features.iter().copied());
        if runs == 1 && probe.seen == 0 {
            unsupported = Some(
                "this target never calls Observer::checkpoint (no state hashes), so exhaustive \
                 search cannot prune or branch on its schedule; use random, swarm or coverage"
                    .to_string(),
            );
            break;
        }
        let log = d.log().to_vec();
        let bounds = d.bounds();
        if item.branch {
            for i in start..log.len() {
                let width = bounds[i].min(MAX_CHOICES);
                if bounds[i] > MAX_CHOICES {
                    stats.wide_decisions += 1;
                }
                for v in (0..width).rev().filter(|&v| v != log[i]) {
                    let mut p = log[..i].to_vec();
                    p.push(v);
                    stack.push(Item { prefix: p, stop_at: item.stop_at, branch: true });
                }
            }
        }
        match probe.stopped {
            Some(state) => {
                let k = item.stop_at;
                if visited.get(&state).is_some_and(|&at| at <= k) {
                    continue;
                }
                visited.insert(state, k);
                stats.states = visited.len() as u64;
                stats.max_depth = stats.max_depth.max(k as u32);
                if k + 1 >= max_depth as usize {
                    stats.cut_at_bound += 1;
                    stack.push(Item { prefix: log, stop_at: usize::MAX, branch: false });
                } else {
                    stack.push(Item { prefix: log, stop_at: k + 1, branch: true });
                }
            }
            None => {
                *outcomes.entry(report.outcome.kind().to_string()).or_default() += 1;
                sometimes.extend(report.sometimes.iter().cloned());
                if report.outcome.is_failure() {
                    found = Some(Found {
                        run_index: runs - 1,
                        seed: 0,
                        scenario: scenario.clone(),
                        decisions: log,
                        report,
                    });
                    break;
                }
            }
        }
        if runs % 256 == 0 {
            control.progress(&Progress {
                runs,
                events,
                failures: 0,
                features: features.len() as u64,
                states: stats.states,
                depth: stats.max_depth,
                best: None,
            });
        }
    }
    stats.exhausted = stack.is_empty()
        && found.is_none()
        && !interrupted
        && !out_of_runs
        && unsupported.is_none();
    control.progress(&Progress {
        runs,
        events,
        failures: found.is_some() as u64,
        features: features.len() as u64,
        states: stats.states,
        depth: stats.max_depth,
        best: None,
    });
    CampaignResult {
        runs,
        events,
        found,
        outcomes: outcomes.into_iter().collect(),
        sometimes_hit: sometimes.into_iter().collect(),
        features: features.len() as u64,
        exhaustive: Some(stats),
        unsupported,
        interrupted,
        first_unsupported: None,
    }
}
