//! The shrinker: makes a failing decision list shorter and simpler while the run still ends in
//! the same failure (same outcome kind, same property — [`Outcome::same_failure`]).
//!
//! It edits the recorded decision stream, never domain objects: shorter lists and smaller values
//! mean simpler runs, because 0 is every decision point's simplest choice. Every logged
//! decision carries its site (the link of a latency, the opportunity of a fault, the node and
//! timer of a node's choice: [`Site`]). Value edits replay **by site**
//! ([`Decisions::replay_sited`]), so zeroing one fault or one link's latencies leaves every
//! other site's answers where they were; deletions replay by position first, then by site.
//! Once, before the first round, a run of real processes is tried with every decision but its
//! faults' set to 0 ([`real_process`]); then the simplest lists of all are tried (every list
//! of one or two values below 4: a real process's seed decides its timeouts, and a tiny list
//! often fails by itself). A list longer than 256 decisions then gets the coarse passes (2
//! below) and a value-lowering pass (5) at once, which cost a candidate per fault, site or
//! value, before the first span deletions, which cost eight scans of the whole list (measured
//! on raft-rs: the deletions alone spent 15,000 of the default 20,000 candidates in their first
//! round, and the found run's junk faults survived the budget). Passes per round, until a
//! whole round changes nothing:
//!
//! 1. delete spans of decreasing size (halvings of the list, then 8 down to 1), scanning from
//!    the end, by position (the tail moves up, so the log gets shorter); a failed deletion is
//!    retried by site (only the deleted decisions' own sites shift), then without labels
//!    (later decisions keep their labels, [`Decisions::replay_labeled`], so a target that names
//!    its alternatives replays the same named steps after a deletion), then with the last
//!    non-zero value after the span raised to its maximum (a pause long enough at 0.5 s is too
//!    short at t = 0; pass 5 lowers it);
//! 2. the coarse structure-aware passes of [`structure`]: delete a whole fault (retried with
//!    the remaining fault lengthened; these may grow the run up to the input's events), zero
//!    every latency, zero each site's whole stream;
//! 3. the fine ones: remove message faults one by one, shorten each fault;
//! 4. zero spans of the same sizes as pass 1 (turning whole stretches into "simplest choice");
//! 5. lower each remaining value, by binary search for the smallest value that still fails;
//! 6. lower each fault budget of the scenario ([`budget`]: the budget is shrunk with the
//!    faults, and a cheap tightening to the faults the run draws follows passes 1, 2 and 4),
//!    and narrow the scenario (once before the first round too): no message faults at all, or
//!    only as many as the run drew, and every latency the shortest, under which nothing is
//!    drawn where nothing can vary (one candidate each).
//!
//! Half the budget goes to rounds on the list as drawn; then it is re-encoded with fault gaps
//! ([`gaps`]: the same run, with one decision per fault for where it comes instead of one per
//! opportunity, kept if it replays), and the rest goes to rounds on the gap list.
//!
//! A candidate is accepted only if its replay fails the same way, has no more events than the
//! current best, **and** the replay's *log*
//! (clamped values, decisions drawn past the end; trailing zeros trimmed, since a replay answers
//! 0 past the end anyway) is smaller in shortlex order than the current best. Storing the log,
//! not the candidate, keeps the result canonical; the shortlex rule guarantees termination.
//! The result is a pure function of (runner, scenario, decisions, budget in runs): no clock, no
//! threads. A wall-clock stop (through [`Control`]) keeps the best list found so far.
//!
//! [`shrink_differential`] adds one more condition: the candidate must *pass* on a reference
//! runner (the fixed version of a library), so the shrunk counterexample still tells the two
//! apart. The reference is checked last, on an otherwise acceptable candidate, under the full
//! scenario (no event cap), so a "pass" there is a whole run.

mod budget;
mod gaps;
mod real_process;
mod structure;

use crate::campaign::{Best, Control, Progress};
use budget::Narrow;
use std::cmp::Ordering;
use weft_core::{Decisions, NullObserver, Outcome, RunReport, Runner, Scenario, Site, SiteKind};

#[derive(Clone, Debug)]
pub struct ShrinkOptions {
    /// At most this many candidate runs.
    pub max_runs: u64,
}

impl Default for ShrinkOptions {
    fn default() -> ShrinkOptions {
        ShrinkOptions { max_runs: 20_000 }
    }
}

#[derive(Clone, Debug)]
pub struct Shrunk {
    /// The smallest failing decision list found (a canonical replay log, trailing zeros trimmed).
    /// It replays by position ([`Decisions::replay`]) exactly as it did by site, under
    /// [`Shrunk::scenario`] (not necessarily the input's: see [`budget`]).
    pub decisions: Vec<u64>,
    /// The site of each of `decisions` (for showing what each decision decides).
    pub sites: Vec<Site>,
    /// The report of replaying `decisions` under `scenario`.
    pub report: RunReport,
    /// The input's scenario with its fault budget lowered to what the shrunk run needs
    /// ([`budget`]): `decisions` replay under it.
    pub scenario: Scenario,
    /// Candidate runs spent.
    pub runs: u64,
    /// Candidates accepted.
    pub accepted: u64,
    /// Whether a fixpoint was reached (false: the run budget or a stop request ended it).
    pub complete: bool,
}

/// Why shrinking could not start.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShrinkError {
    #[error("the decisions do not fail when replayed (outcome: {0})")]
    DoesNotFail(String),
    #[error("the decisions fail on the reference too, so there is no difference to keep (outcome there: {0})")]
    FailsOnReference(String),
}

/// Trailing zeros are implied: a replay answers 0 past the end of its list.
pub fn trim(mut log: Vec<u64>) -> Vec<u64> {
    while log.last() == Some(&0) {
        log.pop();
    }
    log
}

/// Shortlex: shorter first, then lexicographically smaller.
fn shortlex(a: &[u64], b: &[u64]) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// A candidate: values with the label and site each replays under.
#[derive(Clone, Debug)]
struct Cand {
    values: Vec<u64>,
    labels: Vec<u64>,
    sites: Vec<Site>,
    /// Replay by position instead of by site (see `Shrinker::try_positional`).
    positional: bool,
    /// May have as many events as the input had, not only as many as the best so far (a
    /// structural jump that the passes after it bring back down; see `delete_faults`).
    grow: bool,
    /// What of the scenario the candidate runs under its own (fault budget, delay rate,
    /// latency range, fault gaps: [`budget`]).
    narrow: Narrow,
}

struct Shrinker<'a> {
    runner: &'a dyn Runner,
    /// The input's scenario with `max_events` capped at what the best so far allows (what
    /// [`Narrow`] covers is the input's: each candidate brings its own, `Cand::narrow`).
    scenario: Scenario,
    /// The narrowed scenario of the best so far.
    narrow: Narrow,
    /// The input's own event budget.
    max_events: u64,
    /// The input's events: no candidate ever has more.
    input_events: u64,
    /// A runner on which every accepted candidate must pass, with the uncapped scenario.
    reference: Option<(&'a dyn Runner, &'a Scenario)>,
    target: Outcome,
    best: Vec<u64>,
    /// The site of each decision of `best`: candidates replay by site.
    sites: Vec<Site>,
    /// The bound of each decision of `best`.
    bounds: Vec<u64>,
    /// The label of each decision of `best` (0: unlabelled; see `Decisions::choose_labeled`).
    labels: Vec<u64>,
    report: RunReport,
    runs: u64,
    accepted: u64,
    max_runs: u64,
    control: &'a dyn Control,
}

impl Shrinker<'_> {
    fn out_of_budget(&self) -> bool {
        self.runs >= self.max_runs || self.control.should_stop()
    }

    /// `best` (labels, sites) with `[start, end)` removed. Later decisions keep their labels, so
    /// a target that names its alternatives replays the same named steps after a deletion, and
    /// their sites, so only the removed decisions' own sites shift. A removed fault opportunity
    /// takes its fault's details with it, and later opportunities keep theirs (see
    /// [`removing`]).
    fn without(&self, start: usize, end: usize) -> Cand {
        let all = self.with_each([], 0);
        removing(&all, |i| (start..end).contains(&i))
    }

    /// `best` with `[start, end)` set to `value`; those positions lose their labels (a label
    /// would override the new value).
    fn with(&self, start: usize, end: usize, value: u64) -> Cand {
        self.with_each(start..end, value)
    }

    /// `best` with every position in `at` set to `value` (and unlabelled).
    fn with_each(&self, at: impl IntoIterator<Item = usize>, value: u64) -> Cand {
        let mut c = Cand {
            values: self.best.clone(),
            labels: self.labels.clone(),
            sites: self.sites.clone(),
            positional: false,
            grow: false,
            narrow: self.narrow.clone(),
        };
        for i in at {
            c.values[i] = value;
            c.labels[i] = 0;
        }
        c
    }

    fn report_progress(&self) {
        // `failures` counts accepted candidates while shrinking; `best` is what they reached.
        self.control.progress(&Progress {
            runs: self.runs,
            failures: self.accepted,
            best: Some(Best {
                decisions: self.best.len() as u64,
                events: self.report.events,
                faults: self.report.faults,
            }),
            ..Progress::default()
        });
    }

    /// Runs `candidate`; keeps it if it fails the same way and its log is smaller than the best.
    fn try_candidate(&mut self, c: Cand) -> bool {
        let len = c.values.iter().rposition(|&v| v != 0).map_or(0, |i| i + 1);
        // A candidate that only narrows the scenario has the best's values: its log can still
        // get shorter (nothing drawn where nothing can happen), which the check after the run
        // decides.
        let same_scenario = c.narrow == self.narrow;
        let no_smaller = shortlex(&c.values[..len], &self.best) != Ordering::Less;
        if self.out_of_budget() || (same_scenario && no_smaller) {
            return false;
        }
        self.runs += 1;
        if self.runs & 63 == 0 {
            self.report_progress();
        }
        let mut d = if c.positional {
            Decisions::replay_labeled(c.values, c.labels)
        } else {
            Decisions::replay_sited(c.values, c.labels, &c.sites)
        };
        let limit = if c.grow { self.input_events } else { self.report.events };
        let max_events =
            if c.grow { event_cap(self.max_events, limit) } else { self.scenario.max_events };
        let scenario = c.narrow.apply(&Scenario { max_events, ..self.scenario.clone() });
        let report = self.runner.run(&scenario, &mut d, &mut NullObserver);
        // A shorter decision list that makes the run itself longer (past the end of a list
        // every choice is 0, which may be a step that still happens) is not simpler for the
        // person reading the trace: never trade events for decisions (except in a marked
        // structural jump, and never past the input's length).
        if !report.outcome.same_failure(&self.target) || report.events > limit {
            return false;
        }
        let log = trim(d.log().to_vec());
        if shortlex(&log, &self.best) != Ordering::Less {
            return false;
        }
        if let Some((reference, scenario)) = self.reference {
            self.runs += 1;
            let mut r = Decisions::replay(log.clone());
            let scenario = c.narrow.apply(scenario);
            if reference.run(&scenario, &mut r, &mut NullObserver).outcome.is_failure() {
                return false;
            }
        }
        self.bounds = d.bounds()[..log.len()].to_vec();
        self.labels = d.labels()[..log.len()].to_vec();
        self.sites = d.sites()[..log.len()].to_vec();
        self.best = log;
        self.narrow = c.narrow;
        self.report = report;
        self.accepted += 1;
        self.scenario.max_events = event_cap(self.max_events, self.report.events);
        self.report_progress();
        true
    }

    /// Span sizes from about half the list down to 1: halvings, then every size up to 8 (a
    /// schedule step is often a few decisions long).
    fn sizes(&self) -> Vec<usize> {
        let mut sizes = Vec::new();
        let mut k = self.best.len() / 2;
        while k > 8 {
            sizes.push(k);
            k /= 2;
        }
        sizes.extend((1..=8.min(self.best.len().max(1))).rev());
        sizes
    }

    fn delete_spans(&mut self) -> bool {
        let mut progress = false;
        for k in self.sizes() {
            // Scan from the end: late decisions are the likeliest to be irrelevant, and deleting
            // there does not shift the decisions that set the failure up.
            // Spans longer than 8 move by an eighth of their size and are tried once: on a
            // 2,221-decision raft-rs run, moving a 1,110-long span one decision at a time with
            // every retry spent 13,000 candidates (the whole 5-minute backstop) before the
            // first deletion that worked.
            let (step, retry) = if k > 8 { (k / 8, false) } else { (1, true) };
            let mut end = self.best.len();
            while end >= k && !self.out_of_budget() {
                let start = end - k;
                let c = self.without(start, end);
                if self.try_candidate(Cand { positional: true, ..c.clone() })
                    || (retry
                        && (self.try_sited(&c, start)
                            || self.try_unlabeled(&c, start)
                            || self.try_raised(c, start, k)))
                {
                    progress = true;
                    end = end.min(self.best.len());
                } else {
                    end = end.saturating_sub(step);
                }
            }
        }
        progress
    }

    /// Labels keep later steps the same after a deletion, which is usually what makes a
    /// deletion work — but sometimes the shifted meaning is what fails. Retry by position when
    /// any label follows the span (never, for targets that do not label their choices).
    fn try_unlabeled(&mut self, c: &Cand, start: usize) -> bool {
        if c.labels.iter().skip(start).all(|&x| x == 0) {
            return false;
        }
        let mut c = Cand { positional: true, ..c.clone() };
        c.labels[start..].iter_mut().for_each(|x| *x = 0);
        self.try_candidate(c)
    }

    /// A deletion is tried by position first: it shifts everything after the span, so the
    /// list's tail moves past its end and the log gets shorter even when the run draws as many
    /// decisions (by site, the other sites' values stay at their indices and the log keeps its
    /// length). Retried by site when an addressed site follows the span: there, deleting an
    /// entry shifts only its own site's stream (a fault moves one opportunity earlier with its
    /// details; the latencies around it stay).
    fn try_sited(&mut self, c: &Cand, start: usize) -> bool {
        if c.sites[start..].iter().all(|&s| s == Site::ANON) {
            return false;
        }
        self.try_candidate(c.clone())
    }

    /// A deletion often fails only because what follows now happens earlier (a pause that was
    /// long enough later is too short at the start). Shortlex allows any later value to grow
    /// when the list gets shorter, so retry the deletion with the last non-zero value raised to
    /// its maximum; lowering brings it back down to what is needed.
    fn try_raised(&mut self, mut c: Cand, start: usize, k: usize) -> bool {
        let Some(j) = (start..c.values.len()).rev().find(|&j| c.values[j] != 0) else {
            return false;
        };
        let max = self.bounds[j + k].saturating_sub(1);
        if c.values[j] >= max {
            return false;
        }
        c.values[j] = max;
        c.labels[j] = 0;
        c.positional = true;
        self.try_candidate(c)
    }

    /// The simplest lists of all, tried once before the first round, in shortlex order: every
    /// list of one or two values below 4 (15 candidates). Where a run's first decisions are
    /// opaque — a real process's random seed, from which its timeouts follow — no edit of the
    /// found list leads to a small one, but some tiny list often fails by itself: the planted
    /// election bug of `crates/weft-host/tests/c/election.c` fails with `0 1` (33 events, no
    /// fault), while the structural passes took its 225-decision, 2-fault run only to 196
    /// decisions in 60 s. Stops at the first that is accepted: it is the smallest of them.
    fn simplest_lists(&mut self) {
        const VALUES: u64 = 4;
        for len in 1..=2usize {
            let count = VALUES.pow(len as u32 - 1) * (VALUES - 1);
            for code in 0..count {
                if self.best.len() <= len || self.out_of_budget() {
                    return;
                }
                let mut values = vec![0; len];
                values[len - 1] = 1 + code % (VALUES - 1);
                let mut rest = code / (VALUES - 1);
                for v in values[..len - 1].iter_mut().rev() {
                    *v = rest % VALUES;
                    rest /= VALUES;
                }
                let c = Cand {
                    labels: vec![0; len],
                    sites: vec![Site::ANON; len],
                    values,
                    positional: true,
                    grow: false,
                    narrow: self.narrow.clone(),
                };
                if self.try_candidate(c) {
                    return;
                }
            }
        }
    }

    fn zero_spans(&mut self) -> bool {
        let mut progress = false;
        for k in self.sizes() {
            let mut start = 0;
            while start + k <= self.best.len() && !self.out_of_budget() {
                if self.best[start..start + k].iter().all(|&v| v == 0) {
                    start += 1;
                    continue;
                }
                if self.try_candidate(self.with(start, start + k, 0)) {
                    progress = true;
                } else {
                    start += 1;
                }
            }
        }
        progress
    }

    fn lower_values(&mut self) -> bool {
        self.lower_where(|_| true)
    }

    /// Lowers each value whose site satisfies `keep`: 0 first, else a binary search.
    fn lower_where(&mut self, keep: impl Fn(Site) -> bool) -> bool {
        let mut progress = false;
        let mut i = 0;
        while i < self.best.len() && !self.out_of_budget() {
            let v = self.best[i];
            if v > 0 && keep(self.sites[i]) {
                if self.try_candidate(self.with(i, i + 1, 0)) {
                    progress = true;
                } else if v > 1 {
                    // Smallest value in (0, v) that still fails: binary search on the value. The
                    // predicate need not be monotone; the search still only ever accepts
                    // improvements.
                    let (mut lo, mut hi) = (1, v);
                    while lo < hi && !self.out_of_budget() {
                        let mid = lo + (hi - lo) / 2;
                        let Some(&cur) = self.best.get(i) else { break };
                        if mid >= cur {
                            break;
                        }
                        if self.try_candidate(self.with(i, i + 1, mid)) {
                            progress = true;
                            hi = mid;
                        } else {
                            lo = mid + 1;
                        }
                    }
                }
            }
            i += 1;
        }
        progress
    }
}

/// `c` without the positions `gone` selects. A removed fault opportunity takes the details of
/// its fault with it, and the later opportunities' `fault-detail #k` sites are renumbered with
/// them (they name the opportunity's index), so each later fault moves earlier whole.
fn removing(c: &Cand, gone: impl Fn(usize) -> bool) -> Cand {
    let kind = Site::fault_kind();
    // The index of every removed opportunity.
    let removed: Vec<u32> = (0..c.sites.len())
        .filter(|&i| c.sites[i] == kind)
        .enumerate()
        .filter(|&(_, i)| gone(i))
        .map(|(k, _)| k as u32)
        .collect();
    let mut out = Cand { values: Vec::new(), labels: Vec::new(), sites: Vec::new(), ..c.clone() };
    for i in (0..c.values.len()).filter(|&i| !gone(i)) {
        let mut site = c.sites[i];
        if !removed.is_empty() && site.kind() == Some(SiteKind::FaultDetail) {
            let k = site.a();
            if removed.contains(&k) {
                continue;
            }
            site = Site::fault_detail(k - removed.iter().filter(|&&x| x < k).count() as u32);
        }
        out.values.push(c.values[i]);
        out.labels.push(c.labels[i]);
        out.sites.push(site);
    }
    out
}

/// Lists longer than this get the coarse structure passes and a lowering pass before the
/// first round of span deletions (shorter lists, like the primary-backup canary's, shrink best
/// with the deletions first: see [`structure`]).
const LONG: usize = 256;

/// The event budget of a candidate when the best so far has `best_events` events.
///
/// Candidates that do not fail would otherwise run to the end of the heal phase, which is most
/// of a shrink's cost. A candidate with more events than the best is rejected anyway, and a run
/// that fails within its first `cap` events is identical under any larger budget, so capping
/// at the best's length plus one step's worth of events (64 is more than any target's single
/// step adds) changes no accepted result; it only stops hopeless candidates early. (It was
/// 4× + 1,000 events; on raft-rs, where a non-failing candidate runs 5,000 events, the tight
/// cap made candidates about twice as fast.)
fn event_cap(max_events: u64, best_events: u64) -> u64 {
    max_events.min(best_events.saturating_add(64))
}

/// Shrinks `decisions`, which must fail when replayed under `scenario`.
pub fn shrink(
    runner: &dyn Runner,
    scenario: &Scenario,
    decisions: &[u64],
    opts: &ShrinkOptions,
    control: &dyn Control,
) -> Result<Shrunk, ShrinkError> {
    shrink_inner(runner, None, scenario, decisions, opts, control)
}

/// Shrinks `decisions`, which must fail on `runner` and pass on `reference` (e.g. the fixed
/// version of the same library), keeping both: every accepted candidate fails the same way on
/// `runner` and passes on `reference`.
pub fn shrink_differential(
    runner: &dyn Runner,
    reference: &dyn Runner,
    scenario: &Scenario,
    decisions: &[u64],
    opts: &ShrinkOptions,
    control: &dyn Control,
) -> Result<Shrunk, ShrinkError> {
    shrink_inner(runner, Some(reference), scenario, decisions, opts, control)
}

fn shrink_inner(
    runner: &dyn Runner,
    reference: Option<&dyn Runner>,
    scenario: &Scenario,
    decisions: &[u64],
    opts: &ShrinkOptions,
    control: &dyn Control,
) -> Result<Shrunk, ShrinkError> {
    let mut d = Decisions::replay(decisions.to_vec());
    let report = runner.run(scenario, &mut d, &mut NullObserver);
    if !report.outcome.is_failure() {
        return Err(ShrinkError::DoesNotFail(report.outcome.to_string()));
    }
    if let Some(reference) = reference {
        let mut r = Decisions::replay(decisions.to_vec());
        let outcome = reference.run(scenario, &mut r, &mut NullObserver).outcome;
        if outcome.is_failure() {
            return Err(ShrinkError::FailsOnReference(outcome.to_string()));
        }
    }
    let whole = opts.max_runs.max(1);
    let passes = (whole - gaps::reserved(whole)).max(1);
    let best = trim(d.log().to_vec());
    let mut s = Shrinker {
        sites: d.sites()[..best.len()].to_vec(),
        runner,
        scenario: Scenario {
            max_events: event_cap(scenario.max_events, report.events),
            ..scenario.clone()
        },
        narrow: Narrow::of(scenario),
        max_events: scenario.max_events,
        input_events: report.events,
        reference: reference.map(|r| (r, scenario)),
        target: report.outcome.clone(),
        labels: d.labels()[..best.len()].to_vec(),
        best,
        bounds: d.bounds().to_vec(),
        report,
        runs: 1,
        accepted: 0,
        // Runs kept back for a last gap re-encoding at the end ([`gaps::reserved`]).
        max_runs: passes,
        control,
    };
    s.report_progress();
    s.faults_only();
    s.simplest_lists();
    // A candidate each: the scenario narrowed to what the run uses, before any pass that
    // costs a scan of the list.
    s.narrow_scenario();
    // Half the budget on the list as drawn, then the rest on it re-encoded with fault gaps
    // (see [`gaps`]: each encoding lets the passes reach runs the other does not).
    s.max_runs = passes / 2;
    s.first_passes();
    s.rounds();
    s.as_gaps(passes);
    let complete = s.rounds();
    s.as_gaps(whole);
    s.report_progress();
    Ok(Shrunk {
        scenario: s.narrow.apply(scenario),
        decisions: s.best,
        sites: s.sites,
        report: s.report,
        runs: s.runs,
        accepted: s.accepted,
        complete,
    })
}

impl Shrinker<'_> {
    /// A long list's first passes: a candidate per fault, site or value, before span
    /// deletions that cost eight scans of the whole list (on a 2,000-decision raft-rs run
    /// those alone spent most of the default budget).
    fn first_passes(&mut self) {
        if self.best.len() > LONG {
            self.coarse_passes();
            self.tighten_budget();
            self.lower_values();
            self.tighten_budget();
        }
    }

    /// Rounds of every pass until one changes nothing (true: that fixpoint was reached) or
    /// the run budget ends (false).
    fn rounds(&mut self) -> bool {
        while !self.out_of_budget() {
            let mut progress = self.delete_spans();
            progress |= self.tighten_budget();
            progress |= self.coarse_passes();
            progress |= self.tighten_budget();
            progress |= self.fine_passes();
            progress |= self.zero_spans();
            progress |= self.tighten_budget();
            progress |= self.lower_values();
            progress |= self.lower_budgets();
            progress |= self.narrow_scenario();
            if !progress {
                return !self.out_of_budget();
            }
        }
        false
    }
}
