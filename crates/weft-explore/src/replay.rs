//! Replay and determinism checks: run a recorded decision list again and compare.

use weft_core::{Decisions, Event, NullObserver, Recorder, RunReport, Runner, Scenario, Site};

/// The result of re-running a decision list.
pub struct Replayed {
    pub report: RunReport,
    /// Every event, when recording was asked for.
    pub events: Vec<Event>,
    /// The site of every decision the replay drew, in order.
    pub sites: Vec<Site>,
}

pub fn replay(
    runner: &dyn Runner,
    scenario: &Scenario,
    decisions: &[u64],
    record: bool,
) -> Replayed {
    let mut d = Decisions::replay(decisions.to_vec());
    if record {
        let mut rec = Recorder::default();
        let report = runner.run(scenario, &mut d, &mut rec);
        Replayed { report, events: rec.events, sites: d.sites().to_vec() }
    } else {
        let report = runner.run(scenario, &mut d, &mut NullObserver);
        Replayed { report, events: Vec::new(), sites: d.sites().to_vec() }
    }
}

/// Two runs of the same seed disagreed.
#[derive(Clone, Debug)]
pub struct Divergence {
    pub seed: u64,
    /// The first event whose running trace hash differs, with both versions (None: one trace
    /// ended earlier).
    pub index: u64,
    pub first: Option<Event>,
    pub second: Option<Event>,
    /// How each run ended: the outcome and its event count (a run that ended early, or the
    /// same trace judged differently, shows here).
    pub ends: [String; 2],
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let show = |e: &Option<Event>| match e {
            Some(e) => crate::line(e),
            None => "(trace ended)".into(),
        };
        write!(
            f,
            "seed {}: runs differ first at event {}\n  first run:  {}\n  second run: {}\n  \
             first run ended: {}\n  second run ended: {}",
            self.seed,
            self.index,
            show(&self.first),
            show(&self.second),
            self.ends[0],
            self.ends[1],
        )
    }
}

/// Runs `seed` twice from random decisions, recording both traces; None if they agree.
pub fn check_seed(runner: &dyn Runner, scenario: &Scenario, seed: u64) -> Option<Divergence> {
    check_seed_report(runner, scenario, seed).err().map(|d| *d)
}

/// [`check_seed`], answering the report both runs agreed on.
pub fn check_seed_report(
    runner: &dyn Runner,
    scenario: &Scenario,
    seed: u64,
) -> Result<RunReport, Box<Divergence>> {
    let run = || {
        let mut d = Decisions::random(seed);
        let mut rec = Recorder::default();
        let report = runner.run(scenario, &mut d, &mut rec);
        (report, rec.events)
    };
    let (ra, ea) = run();
    let (rb, eb) = run();
    if ra == rb && ea == eb {
        return Ok(ra);
    }
    let n = ea.len().max(eb.len());
    let index = (0..n)
        .find(|&i| ea.get(i).map(|e| e.hash) != eb.get(i).map(|e| e.hash) || ea.get(i) != eb.get(i))
        .unwrap_or(n);
    let end = |r: &RunReport| format!("{} after {} events", r.outcome, r.events);
    Err(Box::new(Divergence {
        seed,
        index: index as u64,
        first: ea.get(index).cloned(),
        second: eb.get(index).cloned(),
        ends: [end(&ra), end(&rb)],
    }))
}
