//! The decision source: the one funnel through which every nondeterministic choice of a run
//! passes (which event next, a message's latency, whether it is dropped, when a node crashes…).
//!
//! `choose(n)` answers a value in `[0, n)`; by convention **0 is the simplest choice** (deliver in
//! order, no fault, keep the write). A run draws from a seeded [`Rng`] and records what it drew;
//! a replay feeds a recorded list back (past its end it answers 0). Explore, replay, shrink and
//! exhaustive search are all "run the target with a different decision source".
//!
//! Only the *outcome* of a choice is recorded, never the distribution it was drawn from: a
//! `chance(1/1000)` that fired is recorded as `1`, so the shrinker can lower it to `0` (no fault).

use crate::rng::{Ratio, Rng};
use crate::site::Site;
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
enum Source {
    Random(Rng),
    /// `labels[i]`, when present and non-zero, names the alternative decision `i` chose (see
    /// [`Decisions::choose_labeled`]); it takes precedence over the index while it matches an
    /// alternative offered.
    Replay {
        list: Vec<u64>,
        labels: Vec<u64>,
        pos: usize,
        tail: Option<Rng>,
    },
    /// Answers the k-th draw at site s with the k-th recorded value for s (0 past its end).
    Sited(BTreeMap<Site, Stream>),
}

/// One site's recorded values (and labels) in draw order.
#[derive(Clone, Debug, Default)]
struct Stream {
    values: Vec<u64>,
    labels: Vec<u64>,
}

/// A source of decisions plus the log of every decision it answered.
#[derive(Clone, Debug)]
pub struct Decisions {
    source: Source,
    /// The value answered at each decision point, clamped to its bound.
    log: Vec<u64>,
    /// The bound `n` of each decision point (the value was in `[0, n)`).
    bounds: Vec<u64>,
    /// The label of the alternative chosen at each decision point (0: unlabelled).
    labels: Vec<u64>,
    /// The site of each decision point ([`Site::ANON`] unless the caller addressed it).
    sites: Vec<Site>,
    /// How many decisions each addressed site has answered so far.
    drawn: BTreeMap<Site, u32>,
    /// The site of the next draw (set by [`Decisions::at`], reset to `base` by every draw).
    next: Site,
    /// The site of draws nobody addressed (see [`Decisions::set_base`]).
    base: Site,
}

impl Decisions {
    /// Draws every decision from `Rng::new(seed)`.
    pub fn random(seed: u64) -> Decisions {
        Decisions {
            source: Source::Random(Rng::new(seed)),
            log: Vec::new(),
            bounds: Vec::new(),
            labels: Vec::new(),
            sites: Vec::new(),
            drawn: BTreeMap::new(),
            next: Site::ANON,
            base: Site::ANON,
        }
    }

    /// Answers from `list`; past its end, answers 0.
    pub fn replay(list: Vec<u64>) -> Decisions {
        Decisions::replay_labeled(list, Vec::new())
    }

    /// Answers from `list`, but where `labels[i]` is non-zero and names one of the alternatives
    /// offered by a labelled choice, answers that alternative instead of index `list[i]`. The
    /// shrinker uses it so that deleting one step of a schedule does not turn every later step
    /// into a different one: later decisions still pick the same *named* alternatives.
    pub fn replay_labeled(list: Vec<u64>, labels: Vec<u64>) -> Decisions {
        Decisions {
            source: Source::Replay { list, labels, pos: 0, tail: None },
            log: Vec::new(),
            bounds: Vec::new(),
            labels: Vec::new(),
            sites: Vec::new(),
            drawn: BTreeMap::new(),
            next: Site::ANON,
            base: Site::ANON,
        }
    }

    /// Answers from `prefix`, then draws at random from `Rng::new(seed)` (mutation-based search).
    pub fn replay_then_random(prefix: Vec<u64>, seed: u64) -> Decisions {
        Decisions {
            source: Source::Replay {
                list: prefix,
                labels: Vec::new(),
                pos: 0,
                tail: Some(Rng::new(seed)),
            },
            log: Vec::new(),
            bounds: Vec::new(),
            labels: Vec::new(),
            sites: Vec::new(),
            drawn: BTreeMap::new(),
            next: Site::ANON,
            base: Site::ANON,
        }
    }

    /// Answers by site: `values[i]` (with `labels[i]`, as in [`Decisions::replay_labeled`]) is
    /// the answer of the draw at `sites[i]` whose index within that site equals the number of
    /// earlier entries of the same site. Removing an entry shifts only its own site's stream.
    /// With every site [`Site::ANON`] this is exactly [`Decisions::replay_labeled`].
    pub fn replay_sited(values: Vec<u64>, labels: Vec<u64>, sites: &[Site]) -> Decisions {
        assert_eq!(values.len(), sites.len(), "one site per value");
        let mut streams: BTreeMap<Site, Stream> = BTreeMap::new();
        for (i, (&v, &site)) in values.iter().zip(sites).enumerate() {
            let s = streams.entry(site).or_default();
            s.values.push(v);
            s.labels.push(labels.get(i).copied().unwrap_or(0));
        }
        let mut d = Decisions::replay(Vec::new());
        d.source = Source::Sited(streams);
        d
    }

    /// Addresses the next draw (one draw only; a forced or zero-probability choice that draws
    /// nothing also consumes it). Positional sources ignore the address but log it.
    #[inline]
    pub fn at(&mut self, site: Site) -> &mut Decisions {
        self.next = site;
        self
    }

    /// Sets the site of every draw not addressed with [`Decisions::at`] (e.g. "node 2" while
    /// node 2's handler runs) and returns the previous one, for the caller to restore.
    pub fn set_base(&mut self, site: Site) -> Site {
        self.next = site;
        std::mem::replace(&mut self.base, site)
    }

    /// How many decisions `site` has answered so far (the index its next draw will have).
    /// The anonymous site counts too: its stream is positional among anonymous draws.
    pub fn drawn_at(&self, site: Site) -> u32 {
        self.drawn.get(&site).copied().unwrap_or(0)
    }

    /// The recorded value the next draw would consume, if the source is a replay with one left.
    fn pending(&mut self) -> Option<&mut u64> {
        match &mut self.source {
            Source::Random(_) => None,
            Source::Replay { list, pos, .. } => list.get_mut(*pos),
            Source::Sited(streams) => {
                let k = self.drawn.get(&self.next).copied().unwrap_or(0) as usize;
                streams.get_mut(&self.next).and_then(|s| s.values.get_mut(k))
            }
        }
    }

    #[inline]
    fn draw(&mut self, n: u64, random: impl FnOnce(&mut Rng) -> u64) -> u64 {
        self.draw_labeled(n, None, random)
    }

    /// `label_of(i)` names alternative `i` (0: it cannot be matched by label).
    #[inline]
    fn draw_labeled(
        &mut self,
        n: u64,
        label_of: Option<&dyn Fn(u64) -> u64>,
        random: impl FnOnce(&mut Rng) -> u64,
    ) -> u64 {
        debug_assert!(n >= 2);
        let site = std::mem::replace(&mut self.next, self.base);
        let k = {
            let c = self.drawn.entry(site).or_insert(0);
            *c += 1;
            *c as usize - 1
        };
        let v = match &mut self.source {
            Source::Random(rng) => random(rng),
            Source::Replay { list, labels, pos, tail } => {
                if let Some(&v) = list.get(*pos) {
                    let want = labels.get(*pos).copied().unwrap_or(0);
                    *pos += 1;
                    let by_label = match label_of {
                        Some(f) if want != 0 => (0..n).find(|&i| f(i) == want),
                        _ => None,
                    };
                    by_label.unwrap_or(v.min(n - 1))
                } else if let Some(rng) = tail {
                    random(rng)
                } else {
                    0
                }
            }
            Source::Sited(streams) => match streams.get(&site).filter(|s| k < s.values.len()) {
                Some(s) => {
                    let want = s.labels[k];
                    let by_label = match label_of {
                        Some(f) if want != 0 => (0..n).find(|&i| f(i) == want),
                        _ => None,
                    };
                    by_label.unwrap_or(s.values[k].min(n - 1))
                }
                None => 0,
            },
        };
        assert!(v < n, "decision {v} out of bound {n}");
        self.sites.push(site);
        self.log.push(v);
        self.bounds.push(n);
        self.labels.push(label_of.map_or(0, |f| f(v)));
        v
    }

    /// Like [`Decisions::choose`] over `labels.len()` alternatives, each named by a stable label
    /// (e.g. a hash of "Stabilize n2"; 0 = unnamed). Recorded with the chosen label, so a
    /// labelled replay follows names rather than positions.
    pub fn choose_labeled(&mut self, labels: &[u64]) -> usize {
        assert!(!labels.is_empty(), "choose_labeled(): no alternatives");
        let n = labels.len() as u64;
        if n == 1 {
            self.next = self.base;
            return 0;
        }
        self.draw_labeled(n, Some(&|i| labels[i as usize]), |rng| rng.below(n)) as usize
    }

    /// [`Decisions::weighted`] with a stable label per alternative; a label never selects an
    /// alternative of weight 0.
    pub fn weighted_labeled(&mut self, weights: &[u32], labels: &[u64]) -> usize {
        assert_eq!(weights.len(), labels.len(), "one label per alternative");
        if weights.len() == 1 {
            self.next = self.base;
            return 0;
        }
        let label_of = |i: u64| if weights[i as usize] > 0 { labels[i as usize] } else { 0 };
        self.weighted_inner(weights, Some(&label_of), 0)
    }

    /// A value in `[0, n)`, uniform when random. `choose(1)` is not a decision: it answers 0 and
    /// records nothing, so forced steps do not lengthen the log.
    #[inline]
    pub fn choose(&mut self, n: u64) -> u64 {
        assert!(n > 0, "choose(0): no alternatives");
        if n == 1 {
            self.next = self.base;
            return 0;
        }
        self.draw(n, |rng| rng.below(n))
    }

    /// A fault coin: true (recorded as 1) with probability `p` when random. A zero probability is
    /// not a decision at all.
    #[inline]
    pub fn chance(&mut self, p: Ratio) -> bool {
        if p.is_zero() {
            self.next = self.base;
            return false;
        }
        self.draw(2, |rng| rng.chance(p) as u64) == 1
    }

    /// A gap: at which of the coming trials the first success comes, each a success with
    /// probability `hits / total` (1: this one). Random: geometric, one trial per step,
    /// capped at 2^24 (far past any run's event budget). Replayed: the recorded value, where
    /// 0 means "never" (the simplest answer).
    pub fn gap(&mut self, hits: u64, total: u64) -> u64 {
        assert!(hits > 0 && hits <= total, "gap(): a rate of {hits}/{total}");
        let cap = 1 << 24;
        self.draw(cap + 1, |rng| {
            let mut n = 1;
            while n < cap && rng.below(total) >= hits {
                n += 1;
            }
            n
        })
    }

    /// An index into `weights` that is never 0 when random (drawn in proportion to
    /// `weights[1..]`); replayed, 0 stands for "none" (the simplest answer; `weights[0]` is its
    /// weight and must be positive), and a value naming a zero weight is answered as
    /// [`Decisions::weighted`] answers it.
    pub fn weighted_or_none(&mut self, weights: &[u32]) -> usize {
        assert!(weights.first().is_some_and(|&w| w > 0), "weighted_or_none(): no weight for none");
        self.weighted_inner(weights, None, 1)
    }

    /// An index into `weights`, drawn in proportion to them when random. Index 0 should be the
    /// simplest alternative.
    pub fn weighted(&mut self, weights: &[u32]) -> usize {
        assert!(!weights.is_empty(), "weighted(): no alternatives");
        if weights.len() == 1 {
            self.next = self.base;
            return 0;
        }
        self.weighted_inner(weights, None, 0)
    }

    /// At random, an index from `from` on, in proportion to its weight; replayed, see
    /// [`Decisions::weighted`].
    fn weighted_inner(
        &mut self,
        weights: &[u32],
        label_of: Option<&dyn Fn(u64) -> u64>,
        from: usize,
    ) -> usize {
        let total: u64 = weights[from..].iter().map(|&w| w as u64).sum();
        assert!(total > 0, "weighted(): all weights are zero");
        // A replayed list (mutated by a search, edited by the shrinker) may name an alternative
        // whose weight is 0 — a fault kind whose budget is spent or that the scenario switched
        // off. Answer the nearest allowed one below it (else above), so replay never leaves the
        // scenario's budget; the log records the value actually used.
        if let Some(v) = self.pending() {
            let i = (*v).min(weights.len() as u64 - 1) as usize;
            if weights[i] == 0 {
                let allowed = (0..i).rev().chain(i + 1..weights.len()).find(|&j| weights[j] > 0);
                *v = allowed.expect("some weight is positive") as u64;
            }
        }
        self.draw_labeled(weights.len() as u64, label_of, |rng| {
            let mut x = rng.below(total);
            for (i, &w) in weights.iter().enumerate().skip(from) {
                if x < w as u64 {
                    return i as u64;
                }
                x -= w as u64;
            }
            unreachable!("weighted draw past the total")
        }) as usize
    }

    /// The decisions answered so far: replaying them reproduces this run.
    pub fn log(&self) -> &[u64] {
        &self.log
    }

    /// The label of the alternative chosen at each logged decision (0: unlabelled).
    pub fn labels(&self) -> &[u64] {
        &self.labels
    }

    /// The site of each logged decision.
    pub fn sites(&self) -> &[Site] {
        &self.sites
    }

    /// The bound of each logged decision.
    pub fn bounds(&self) -> &[u64] {
        &self.bounds
    }

    pub fn len(&self) -> usize {
        self.log.len()
    }

    pub fn is_empty(&self) -> bool {
        self.log.is_empty()
    }

    pub fn into_log(self) -> Vec<u64> {
        self.log
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replayed_gap_of_zero_is_never_and_a_replayed_kind_of_zero_is_none() {
        let mut d = Decisions::replay(vec![0, 3, 0, 2]);
        assert_eq!(d.gap(1, 10), 0, "0: no fault to come");
        assert_eq!(d.gap(1, 10), 3);
        assert_eq!(d.weighted_or_none(&[5, 1, 1, 1]), 0, "0: none, although random never says so");
        assert_eq!(d.weighted_or_none(&[5, 1, 0, 1]), 1, "a zero weight answers the one below");
        let mut r = Decisions::random(7);
        for _ in 0..200 {
            assert!(r.gap(1, 4) >= 1, "random gaps name an opportunity");
            assert!(r.weighted_or_none(&[9, 1, 0, 1]) % 2 == 1, "never none, never a zero weight");
        }
        let mean = (0..2000).map(|_| r.gap(1, 4)).sum::<u64>() as f64 / 2000.0;
        assert!((3.6..4.4).contains(&mean), "geometric with p = 1/4 has mean 4: {mean}");
    }

    fn draw_some(d: &mut Decisions) -> Vec<u64> {
        let mut out = vec![d.choose(10), d.choose(1), d.chance(Ratio::new(1, 2)) as u64];
        out.push(d.weighted(&[1, 5, 0, 2]) as u64);
        out.push(d.choose(1000));
        out
    }

    #[test]
    fn replay_reproduces_a_random_run() {
        let mut a = Decisions::random(99);
        let first = draw_some(&mut a);
        let mut b = Decisions::replay(a.log().to_vec());
        assert_eq!(draw_some(&mut b), first);
        assert_eq!(a.log(), b.log());
    }

    #[test]
    fn forced_and_zero_probability_choices_are_not_recorded() {
        let mut d = Decisions::random(1);
        assert_eq!(d.choose(1), 0);
        assert!(!d.chance(Ratio::ZERO));
        assert!(d.is_empty());
    }

    #[test]
    fn past_the_end_answers_zero() {
        let mut d = Decisions::replay(vec![3]);
        assert_eq!(d.choose(5), 3);
        assert_eq!(d.choose(5), 0);
        assert!(!d.chance(Ratio::ONE));
        assert_eq!(d.log(), &[3, 0, 0]);
    }

    #[test]
    fn replayed_values_are_clamped_to_the_bound() {
        let mut d = Decisions::replay(vec![9, 7]);
        assert_eq!(d.choose(4), 3);
        assert!(d.chance(Ratio::new(1, 100)));
        assert_eq!(d.log(), &[3, 1]);
        assert_eq!(d.bounds(), &[4, 2]);
    }

    #[test]
    fn replay_then_random_keeps_the_prefix() {
        let mut d = Decisions::replay_then_random(vec![2, 2], 5);
        assert_eq!(d.choose(3), 2);
        assert_eq!(d.choose(3), 2);
        let _ = d.choose(3);
        assert_eq!(d.len(), 3);
    }

    #[test]
    fn replay_never_picks_a_zero_weight_either() {
        let mut d = Decisions::replay(vec![1, 2, 0]);
        assert_eq!(d.weighted(&[1, 0, 3]), 0);
        assert_eq!(d.weighted(&[0, 0, 3]), 2);
        assert_eq!(d.weighted(&[0, 5, 3]), 1);
        assert_eq!(d.log(), &[0, 2, 1]);
    }

    #[test]
    fn labelled_replay_follows_names_not_positions() {
        // Record: pick "b" among [a, b, c], then "c" among [a, c].
        let mut d = Decisions::replay(vec![1, 1]);
        assert_eq!(d.choose_labeled(&[10, 20, 30]), 1);
        assert_eq!(d.choose_labeled(&[10, 30]), 1);
        assert_eq!(d.labels(), &[20, 30]);
        // Delete the first decision: a positional replay now picks index 1 = "c" among
        // [a, c, b]'s positions; a labelled replay still picks "c" by name wherever it is.
        let mut d = Decisions::replay_labeled(vec![1], vec![30]);
        assert_eq!(d.choose_labeled(&[30, 10, 20]), 0);
        assert_eq!(d.log(), &[0]);
        // An unknown label falls back to the index; weight 0 is never chosen by label.
        let mut d = Decisions::replay_labeled(vec![2, 0], vec![99, 20]);
        assert_eq!(d.choose_labeled(&[10, 20, 30]), 2);
        assert_eq!(d.weighted_labeled(&[1, 0], &[10, 20]), 0);
    }

    #[test]
    fn sited_replay_answers_by_address() {
        let (a, b) = (Site::latency(0, 1), Site::latency(1, 0));
        let mut d = Decisions::random(7);
        let first: Vec<u64> =
            (0..6).map(|i| d.at(if i % 2 == 0 { a } else { b }).choose(100)).collect();
        assert_eq!(d.sites(), &[a, b, a, b, a, b]);
        assert_eq!(d.drawn_at(a), 3);
        // Replayed by site, the same draws get the same answers.
        let mut r = Decisions::replay_sited(d.log().to_vec(), vec![], d.sites());
        let again: Vec<u64> =
            (0..6).map(|i| r.at(if i % 2 == 0 { a } else { b }).choose(100)).collect();
        assert_eq!(again, first);
        // Remove b's first entry: only b's stream shifts; a keeps its answers.
        let (mut v, mut s) = (d.log().to_vec(), d.sites().to_vec());
        v.remove(1);
        s.remove(1);
        let mut r = Decisions::replay_sited(v, vec![], &s);
        let got: Vec<u64> =
            (0..6).map(|i| r.at(if i % 2 == 0 { a } else { b }).choose(100)).collect();
        assert_eq!(got, vec![first[0], first[3], first[2], first[5], first[4], 0]);
        // All-anonymous sited replay is positional replay.
        let mut p = Decisions::replay_sited(vec![3, 1], vec![], &[Site::ANON; 2]);
        assert_eq!((p.choose(5), p.choose(5), p.choose(5)), (3, 1, 0));
        // Weight-0 clamping applies by site too.
        let mut w = Decisions::replay_sited(vec![1], vec![], &[a]);
        assert_eq!(w.at(a).weighted(&[1, 0, 3]), 0);
    }

    #[test]
    fn weighted_never_picks_a_zero_weight() {
        let mut d = Decisions::random(3);
        for _ in 0..2000 {
            assert_ne!(d.weighted(&[1, 0, 3]), 1);
        }
    }
}
