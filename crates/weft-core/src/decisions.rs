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

#[derive(Clone, Debug)]
enum Source {
    Random(Rng),
    Replay { list: Vec<u64>, pos: usize, tail: Option<Rng> },
}

/// A source of decisions plus the log of every decision it answered.
#[derive(Clone, Debug)]
pub struct Decisions {
    source: Source,
    /// The value answered at each decision point, clamped to its bound.
    log: Vec<u64>,
    /// The bound `n` of each decision point (the value was in `[0, n)`).
    bounds: Vec<u64>,
}

impl Decisions {
    /// Draws every decision from `Rng::new(seed)`.
    pub fn random(seed: u64) -> Decisions {
        Decisions { source: Source::Random(Rng::new(seed)), log: Vec::new(), bounds: Vec::new() }
    }

    /// Answers from `list`; past its end, answers 0.
    pub fn replay(list: Vec<u64>) -> Decisions {
        Decisions {
            source: Source::Replay { list, pos: 0, tail: None },
            log: Vec::new(),
            bounds: Vec::new(),
        }
    }

    /// Answers from `prefix`, then draws at random from `Rng::new(seed)` (mutation-based search).
    pub fn replay_then_random(prefix: Vec<u64>, seed: u64) -> Decisions {
        Decisions {
            source: Source::Replay { list: prefix, pos: 0, tail: Some(Rng::new(seed)) },
            log: Vec::new(),
            bounds: Vec::new(),
        }
    }

    #[inline]
    fn draw(&mut self, n: u64, random: impl FnOnce(&mut Rng) -> u64) -> u64 {
        debug_assert!(n >= 2);
        let v = match &mut self.source {
            Source::Random(rng) => random(rng),
            Source::Replay { list, pos, tail } => {
                if let Some(&v) = list.get(*pos) {
                    *pos += 1;
                    v.min(n - 1)
                } else if let Some(rng) = tail {
                    random(rng)
                } else {
                    0
                }
            }
        };
        assert!(v < n, "decision {v} out of bound {n}");
        self.log.push(v);
        self.bounds.push(n);
        v
    }

    /// A value in `[0, n)`, uniform when random. `choose(1)` is not a decision: it answers 0 and
    /// records nothing, so forced steps do not lengthen the log.
    #[inline]
    pub fn choose(&mut self, n: u64) -> u64 {
        assert!(n > 0, "choose(0): no alternatives");
        if n == 1 {
            return 0;
        }
        self.draw(n, |rng| rng.below(n))
    }

    /// A fault coin: true (recorded as 1) with probability `p` when random. A zero probability is
    /// not a decision at all.
    #[inline]
    pub fn chance(&mut self, p: Ratio) -> bool {
        if p.is_zero() {
            return false;
        }
        self.draw(2, |rng| rng.chance(p) as u64) == 1
    }

    /// An index into `weights`, drawn in proportion to them when random. Index 0 should be the
    /// simplest alternative.
    pub fn weighted(&mut self, weights: &[u32]) -> usize {
        assert!(!weights.is_empty(), "weighted(): no alternatives");
        if weights.len() == 1 {
            return 0;
        }
        let total: u64 = weights.iter().map(|&w| w as u64).sum();
        assert!(total > 0, "weighted(): all weights are zero");
        // A replayed list (mutated by a search, edited by the shrinker) may name an alternative
        // whose weight is 0 — a fault kind whose budget is spent or that the scenario switched
        // off. Answer the nearest allowed one below it (else above), so replay never leaves the
        // scenario's budget; the log records the value actually used.
        if let Source::Replay { list, pos, .. } = &mut self.source {
            if let Some(v) = list.get_mut(*pos) {
                let i = (*v).min(weights.len() as u64 - 1) as usize;
                if weights[i] == 0 {
                    let allowed =
                        (0..i).rev().chain(i + 1..weights.len()).find(|&j| weights[j] > 0);
                    *v = allowed.expect("some weight is positive") as u64;
                }
            }
        }
        self.draw(weights.len() as u64, |rng| {
            let mut x = rng.below(total);
            for (i, &w) in weights.iter().enumerate() {
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
    fn weighted_never_picks_a_zero_weight() {
        let mut d = Decisions::random(3);
        for _ in 0..2000 {
            assert_ne!(d.weighted(&[1, 0, 3]), 1);
        }
    }
}
