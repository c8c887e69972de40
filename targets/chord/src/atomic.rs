//! Atomic mode: Zave's models executed directly. Each operation of §1.3 / §4.2 is one atomic
//! step; at every step the decision source picks one of the enabled steps.
//!
//! A run has two phases. The **fault phase** lasts `steps` steps: any enabled step may happen,
//! joins and failures included (failures through the gate, at most `failures` of them). The
//! **heal phase** stops joins and failures and runs stabilization in deterministic fair rounds
//! (every member performs each enabled maintenance operation once per round, notifies are
//! delivered at the end of the stabilize pass); the network must become Ideal within
//! `ids² + 8` rounds. The same heal, run on a *copy* of the state, is how a violation is
//! classified: **transient** if healing from that state reaches Ideal, **permanent** if not.

use crate::model::{Enabled, Ring, Rules, Step, Variant, MAX_IDS, NONE};
use crate::props::{self, Property, Violations};
use crate::Config;
use weft_core::{
    Decisions, Event, EventKind, Flow, Observer, Outcome, RunReport, SimTime, TraceHasher,
};

/// Virtual time of one atomic step, so that timelines read in order.
pub const STEP_TIME_NS: u64 = 1_000_000;

/// Rounds of fair stabilization the heal phase gets before the run counts as not converging.
pub fn heal_bound(ids: u8) -> u32 {
    ids as u32 * ids as u32 + 8
}

/// Runs deterministic fair stabilization rounds from `ring` until it is Ideal (true), a round
/// changes nothing (false: stuck) or `rounds` run out (false). `on_step` sees every step taken.
pub fn heal(
    ring: &mut Ring,
    rules: &Rules,
    rounds: u32,
    mut on_step: impl FnMut(&Ring, Step),
) -> bool {
    let mut take = |ring: &mut Ring, step: Step| {
        if ring.effective(rules, step) {
            ring.apply(rules, step);
            on_step(ring, step);
            true
        } else {
            false
        }
    };
    for _ in 0..rounds {
        if props::ideal(ring, rules) {
            return true;
        }
        let before = *ring;
        if rules.variant == Variant::Corrected {
            for t in 0..rules.ids {
                take(ring, Step::Rectify(t));
                take(ring, Step::StabilizeFromSuccessor(t));
                take(ring, Step::StabilizeFromPredecessor(t));
            }
            for x in 0..rules.ids {
                take(ring, Step::Rectify(x));
            }
        } else {
            for n in 0..rules.ids {
                while take(ring, Step::Update(n)) {}
                take(ring, Step::Flush(n));
            }
            for n in 0..rules.ids {
                take(ring, Step::Stabilize(n));
            }
            while ring.pending != 0 {
                let bit = ring.pending.trailing_zeros() as u8;
                take(ring, Step::Notified { target: bit / 8, from: bit % 8 });
            }
            for n in 0..rules.ids {
                take(ring, Step::Reconcile(n));
            }
        }
        if *ring == before {
            return props::ideal(ring, rules);
        }
    }
    props::ideal(ring, rules)
}

/// Would fair stabilization from `ring` reach Ideal? (The transient/permanent classifier.)
pub fn heals(ring: &Ring, rules: &Rules) -> bool {
    let mut copy = *ring;
    heal(&mut copy, rules, heal_bound(rules.ids), |_, _| {})
}

/// The initial state of a run: node 0 alone (literal, original), or an ideal ring over a
/// member set containing node 0 (corrected; `initial` members, the set drawn by a decision
/// among all such sets in lexicographic order, so decision 0 is {0, 1, …, initial-1}).
pub fn initial_state(rules: &Rules, initial: u8, decisions: &mut Decisions) -> Ring {
    if rules.variant != Variant::Corrected {
        return Ring::bootstrap();
    }
    let sets = initial_sets(rules.ids, initial);
    let pick = decisions.choose(sets.len() as u64) as usize;
    Ring::ideal(sets[pick], rules.r)
}

/// All member sets of size `k` over `ids` identities that contain node 0 (rotations of the
/// circle are equivalent, so this loses nothing).
pub fn initial_sets(ids: u8, k: u8) -> Vec<u8> {
    (0..(1u16 << ids))
        .map(|m| m as u8)
        .filter(|m| m & 1 == 1 && m.count_ones() == k as u32)
        .collect()
}

/// Swarm testing for atomic mode: each run draws how often each kind of step happens, so that
/// some runs reconcile rarely (stale list tails linger), some fail early, some join in bursts.
/// Uniform scheduling almost never lines up the 3–5 specific events the ring bugs need (spec
/// §5.3). Decision 0 for every kind is the neutral weight, so a shrunk run is uniform.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Profile {
    /// Weight per kind: notify delivery, update/flush, stabilize (all three corrected
    /// stabilize/rectify steps), reconcile, join, fail, and fail *inside a repair window* (the
    /// victim is some member's first successor while that member's list is not yet reconciled
    /// with it, spec §5.2.3).
    pub weights: [u32; 7],
}

/// Steps per swarm segment: every segment draws a fresh profile, so a run can first build a
/// small ring with frequent reconciles, then join in a burst without reconciling, then fail.
pub const SEGMENT: u64 = 8;

/// The weight levels a kind may draw; index 0 is neutral, 3 switches the kind off (unless
/// everything enabled is off).
const LEVELS: [u32; 4] = [4, 1, 16, 0];

impl Profile {
    pub fn draw(decisions: &mut Decisions) -> Profile {
        let mut weights = [0; 7];
        for w in &mut weights {
            *w = LEVELS[decisions.choose(LEVELS.len() as u64) as usize];
        }
        Profile { weights }
    }

    #[inline]
    pub fn weight(&self, step: Step, ring: &Ring) -> u32 {
        self.weights[match step {
            Step::Notified { .. } => 0,
            Step::Update(_) | Step::Flush(_) => 1,
            Step::Stabilize(_)
            | Step::Rectify(_)
            | Step::StabilizeFromPredecessor(_)
            | Step::StabilizeFromSuccessor(_) => 2,
            Step::Reconcile(_) => 3,
            Step::Join { .. } => 4,
            Step::Fail(f) if in_repair_window(ring, f) => 6,
            Step::Fail(_) => 5,
        }]
    }
}

/// Is `f` some member's first successor while that member's list tail does not yet reflect
/// `f`'s own list (a stabilize moved entry 0 and no reconcile has followed)?
fn in_repair_window(ring: &Ring, f: u8) -> bool {
    let fl = ring.nodes[f as usize].list;
    ring.nodes.iter().any(|m| m.member && m.list[0] == f && m.list[1] != fl[0])
}

/// Which violations end a run, per the configuration (see the crate docs, "What counts").
#[derive(Clone, Copy, Debug)]
pub struct Policy {
    /// Counted as soon as they occur, transient or not.
    pub always: Violations,
    /// Counted only when healing from the violating state fails (permanent).
    pub if_permanent: Violations,
    /// Whether a heal phase that does not reach Ideal counts (EventuallyIdeal).
    pub liveness: bool,
}

impl Policy {
    pub fn of(variant: Variant, focus: Option<Property>) -> Policy {
        match focus {
            Some(Property::EventuallyIdeal) => {
                Policy { always: 0, if_permanent: 0, liveness: true }
            }
            Some(p) => Policy { always: p.bit(), if_permanent: 0, liveness: false },
            None if variant == Variant::Corrected => Policy {
                always: props::ALL
                    .iter()
                    .filter(|p| **p != Property::EventuallyIdeal && !p.transient_by_nature())
                    .fold(0, |m, p| m | p.bit()),
                if_permanent: 0,
                liveness: true,
            },
            None => Policy {
                always: 0,
                if_permanent: Property::AtLeastOneRing.bit()
                    | Property::AtMostOneRing.bit()
                    | Property::OrderedRing.bit()
                    | Property::ConnectedAppendages.bit(),
                liveness: true,
            },
        }
    }
}

struct Trace<'a> {
    hasher: TraceHasher,
    obs: &'a mut dyn Observer,
    index: u64,
    rules: Rules,
}

impl Trace<'_> {
    fn step(&mut self, ring: &Ring, step: Step) {
        let time = SimTime(self.index * STEP_TIME_NS);
        let kind = if matches!(step, Step::Fail(_)) { EventKind::Crash } else { EventKind::Step };
        let peer = step.peer();
        self.hasher.event(time, step.actor() as u32, kind, peer as u32, step.code());
        if self.obs.wants_events() {
            self.obs.event(Event {
                index: self.index,
                time,
                node: Some(step.actor() as u32),
                kind,
                peer: (peer != NONE).then_some(peer as u32),
                msg: None,
                summary: step.to_string(),
                state: Some(ring.describe(&self.rules)),
                hash: self.hasher.value(),
            });
        }
        self.index += 1;
    }

    fn violation(&mut self, ring: &Ring, outcome: &Outcome) {
        let time = SimTime(self.index.saturating_sub(1) * STEP_TIME_NS);
        let payload = weft_core::stable_hash(outcome.property().unwrap_or(""));
        self.hasher.event(time, u32::MAX, EventKind::Violation, u32::MAX, payload);
        if self.obs.wants_events() {
            self.obs.event(Event {
                index: self.index,
                time,
                node: None,
                kind: EventKind::Violation,
                peer: None,
                msg: None,
                summary: outcome.to_string(),
                state: Some(ring.describe(&self.rules)),
                hash: self.hasher.value(),
            });
        }
    }

    fn report(self, outcome: Outcome, ring: &Ring) -> RunReport {
        RunReport {
            outcome,
            trace_hash: self.hasher.value(),
            events: self.hasher.events(),
            faults: ring.failures as u64,
            end_time: SimTime(self.index * STEP_TIME_NS),
            sometimes: Vec::new(),
        }
    }
}

/// The leading class of a violation's detail (compared by `Outcome::same_failure`, so both
/// modes must word it the same way): whether fair stabilization from the state heals it.
pub(crate) fn class(healed: bool) -> &'static str {
    if healed {
        "transient: fair stabilization from this state reaches Ideal"
    } else {
        "permanent: fair stabilization from this state never reaches Ideal"
    }
}

/// The outcome for a counted violation `mask` found after step `at` (1-based) in `ring`.
fn violation_outcome(ring: &Ring, rules: &Rules, mask: Violations, at: u64, step: Step) -> Outcome {
    let p = props::ALL.iter().copied().find(|p| mask & p.bit() != 0).expect("non-empty mask");
    let class = class(heals(ring, rules));
    Outcome::SafetyViolation {
        property: p.name().into(),
        detail: format!(
            "{class}; after step {at} ({step}): {}; state: {}",
            props::witness(ring, rules, p),
            ring.describe(rules)
        ),
    }
}

/// A stable, non-zero name for a step: its kind and the nodes it involves.
pub fn step_label(step: Step) -> u64 {
    let (kind, a, b) = match step {
        Step::Notified { target, from } => (1, target, from),
        Step::Update(n) => (2, n, 0),
        Step::Flush(n) => (3, n, 0),
        Step::Stabilize(n) => (4, n, 0),
        Step::Reconcile(n) => (5, n, 0),
        Step::Rectify(n) => (6, n, 0),
        Step::StabilizeFromPredecessor(n) => (7, n, 0),
        Step::StabilizeFromSuccessor(n) => (8, n, 0),
        Step::Join { node, via } => (9, node, via),
        Step::Fail(n) => (10, n, 0),
    };
    (kind << 16) | ((a as u64) << 8) | b as u64
}

/// One run in atomic mode.
pub fn run(cfg: &Config, decisions: &mut Decisions, obs: &mut dyn Observer) -> RunReport {
    let ids = if cfg.ids_max > cfg.ids_min {
        cfg.ids_min + decisions.choose((cfg.ids_max - cfg.ids_min + 1) as u64) as u8
    } else {
        cfg.ids_min
    };
    let rules = Rules { ids, ..cfg.rules };
    let initial = cfg.initial.min(ids);
    let mut ring = initial_state(&rules, initial, decisions);
    let policy = Policy::of(rules.variant, cfg.focus);
    let mut trace = Trace { hasher: TraceHasher::new(), obs, index: 0, rules };
    let mut enabled = Enabled::default();
    let mut last_transient: u64 = 0;
    let mut profile: Option<Profile> = None;
    let mut weights = [0u32; crate::model::ENABLED_MAX];
    let mut labels = [0u64; crate::model::ENABLED_MAX];

    // Every segment's profile is drawn before the first step, so step decisions are contiguous:
    // deleting one step while shrinking must not turn a later step decision into a profile.
    let profiles: Vec<Profile> = if cfg.swarm {
        (0..(cfg.steps as u64).div_ceil(SEGMENT)).map(|_| Profile::draw(decisions)).collect()
    } else {
        Vec::new()
    };
    for at in 1..=cfg.steps as u64 {
        if cfg.swarm && (at - 1) % SEGMENT == 0 {
            profile = profiles.get(((at - 1) / SEGMENT) as usize).copied();
        }
        ring.enabled(&rules, true, &mut enabled);
        if enabled.is_empty() {
            break;
        }
        if trace.obs.checkpoint(ring.state_hash()) == Flow::Stop {
            return trace.report(Outcome::Pass, &ring);
        }
        // Steps are chosen by index but named by label, so that a shrinker deleting one step
        // keeps every later decision meaning the same step (see `Decisions::choose_labeled`).
        let labels = &mut labels[..enabled.len()];
        for (l, s) in labels.iter_mut().zip(enabled.as_slice()) {
            *l = step_label(*s);
        }
        let step = match &profile {
            None => enabled.as_slice()[decisions.choose_labeled(labels)],
            Some(profile) => {
                let weights = &mut weights[..enabled.len()];
                for (w, s) in weights.iter_mut().zip(enabled.as_slice()) {
                    *w = profile.weight(*s, &ring);
                }
                if weights.iter().all(|&w| w == 0) {
                    enabled.as_slice()[decisions.choose_labeled(labels)]
                } else {
                    enabled.as_slice()[decisions.weighted_labeled(weights, labels)]
                }
            }
        };
        ring.apply(&rules, step);
        trace.step(&ring, step);
        let (v, feature) = props::check(&ring, &rules);
        trace.obs.feature(feature);
        let now = v & policy.always;
        if now != 0 {
            let outcome = violation_outcome(&ring, &rules, now, at, step);
            trace.violation(&ring, &outcome);
            return trace.report(outcome, &ring);
        }
        let perm = v & policy.if_permanent;
        if perm != 0 {
            // Classify once per distinct state; a transient one lets the run go on.
            let h = ring.state_hash();
            if h != last_transient {
                if heals(&ring, &rules) {
                    last_transient = h;
                } else {
                    let outcome = violation_outcome(&ring, &rules, perm, at, step);
                    trace.violation(&ring, &outcome);
                    return trace.report(outcome, &ring);
                }
            }
        }
    }

    // Heal phase: no joins, no failures, fair stabilization; the ring must become Ideal.
    let mut broke: Option<(Violations, Step, u64, Ring)> = None;
    let healed = heal(&mut ring, &rules, heal_bound(ids), |r, s| {
        trace.step(r, s);
        if broke.is_none() {
            let v = props::violations(r, &rules) & policy.always;
            if v != 0 {
                broke = Some((v, s, trace.index, *r));
            }
        }
    });
    if let Some((mask, step, at, state)) = broke {
        let outcome = violation_outcome(&state, &rules, mask, at, step);
        trace.violation(&state, &outcome);
        return trace.report(outcome, &ring);
    }
    if !healed && policy.liveness {
        let outcome = Outcome::LivenessViolation {
            property: Property::EventuallyIdeal.name().into(),
            detail: format!(
                "permanent: {} rounds of fair stabilization after the last join/failure did not \
                 reach Ideal; state: {}",
                heal_bound(ids),
                ring.describe(&rules)
            ),
        };
        trace.violation(&ring, &outcome);
        return trace.report(outcome, &ring);
    }
    trace.report(Outcome::Pass, &ring)
}

/// Replays a script of steps from the initial state: each step must be enabled (or a no-op,
/// which Zave's traces contain, e.g. a Flush whose predecessor is alive). Returns the decisions
/// that make [`run`] take exactly the effective steps (with `swarm=false`: the decisions are
/// plain `choose` indices), and the state after each scripted step.
pub fn script(
    rules: &Rules,
    mut ring: Ring,
    steps: &[Step],
) -> Result<(Vec<u64>, Vec<Ring>), String> {
    let mut enabled = Enabled::default();
    let mut decisions = Vec::new();
    let mut states = Vec::new();
    for (i, &step) in steps.iter().enumerate() {
        let mut want = ring;
        want.apply(rules, step);
        if want == ring {
            states.push(ring);
            continue; // a no-op event: no decision
        }
        ring.enabled(rules, true, &mut enabled);
        let pos = enabled.as_slice().iter().position(|&e| {
            let mut got = ring;
            got.apply(rules, e);
            e.name() == step.name() && e.actor() == step.actor() && got == want
        });
        let Some(pos) = pos else {
            return Err(format!("step {i} ({step}) is not enabled in {}", ring.describe(rules)));
        };
        if enabled.len() > 1 {
            decisions.push(pos as u64);
        }
        ring = want;
        states.push(ring);
    }
    Ok((decisions, states))
}

/// A compact list of member ids, for reports.
pub fn member_list(ring: &Ring) -> Vec<u8> {
    (0..MAX_IDS as u8).filter(|&n| ring.member(n)).collect()
}
