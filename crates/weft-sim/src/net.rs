//! The datagram network model: per-link latency and per-message faults (drop, duplicate,
//! delay/reorder), plus link cuts (partitions, symmetric or one-way).
//!
//! Shared by in-process worlds and by the host that runs real processes, so both ways into weft
//! see the same network. Every fault is a decision (0 = no fault) and never exceeds the
//! scenario's budget.

use crate::faults::{count_down, FaultCounts};
use weft_core::{Decisions, Ratio, Scenario, SimDuration, SimTime, Site};

/// What the network does with one datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Lost: the link is cut.
    Cut,
    /// Lost: an injected drop.
    Drop,
    Deliver(SimTime),
    /// Delivered twice (an injected duplicate).
    Duplicate(SimTime, SimTime),
}

/// Weights scaled to parts of 2^20 so that ratios with different denominators can share one
/// weighted decision.
pub(crate) const SCALE: u64 = 1 << 20;

pub(crate) fn weight(r: Ratio) -> u32 {
    ((r.num as u64 * SCALE) / r.den as u64) as u32
}

/// Which directed links are cut. Latency and fault decisions live in [`Network::route`].
///
/// Cuts are counted, so overlapping partitions compose: a link isolated by one fault and cut by
/// another comes back only when both have healed.
#[derive(Clone, Debug)]
pub struct Network {
    nodes: usize,
    /// `cut[from * nodes + to]`: how many active faults cut datagrams from → to.
    cut: Vec<u16>,
}

impl Network {
    pub fn new(nodes: usize) -> Network {
        Network { nodes, cut: vec![0; nodes * nodes] }
    }

    pub fn nodes(&self) -> usize {
        self.nodes
    }

    pub fn is_cut(&self, from: u32, to: u32) -> bool {
        self.cut[from as usize * self.nodes + to as usize] > 0
    }

    /// Adds (`cut = true`) or removes one cut of the link from → to. Returns true when this
    /// brought the pair back to connected in both directions.
    pub fn set_cut(&mut self, from: u32, to: u32, cut: bool) -> bool {
        let c = &mut self.cut[from as usize * self.nodes + to as usize];
        if cut {
            *c += 1;
            false
        } else if *c > 0 {
            *c -= 1;
            *c == 0 && !self.is_cut(to, from)
        } else {
            false
        }
    }

    /// Cuts (or restores) every link to and from `node`. Returns the peers whose link with
    /// `node` came back in both directions.
    pub fn isolate(&mut self, node: u32, cut: bool) -> Vec<u32> {
        let mut up = Vec::new();
        for other in 0..self.nodes as u32 {
            if other != node {
                let a = self.set_cut(node, other, cut);
                let b = self.set_cut(other, node, cut);
                if a || b {
                    up.push(other);
                }
            }
        }
        up
    }

    /// Removes every cut. Returns the pairs `(a, b)`, `a < b`, that were disconnected in some
    /// direction and are connected again.
    pub fn heal_all(&mut self) -> Vec<(u32, u32)> {
        let n = self.nodes as u32;
        let pairs = (0..n)
            .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
            .filter(|&(a, b)| self.is_cut(a, b) || self.is_cut(b, a))
            .collect();
        self.cut.iter_mut().for_each(|c| *c = 0);
        pairs
    }

    pub fn any_cut(&self) -> bool {
        self.cut.iter().any(|&c| c > 0)
    }

    /// Decides the fate of one datagram sent at `now`. Message faults are injected only while
    /// `faulty` (the fault phase) and within the budget; latency is always a decision
    /// (microsecond granularity, 0 = `latency_min`).
    pub fn route(
        &self,
        (from, to): (u32, u32),
        now: SimTime,
        scenario: &Scenario,
        faulty: bool,
        counts: &mut FaultCounts,
        decisions: &mut Decisions,
    ) -> Fate {
        if from != to && self.is_cut(from, to) {
            return Fate::Cut;
        }
        let mut kind = 0;
        if faulty {
            let r = &scenario.rates;
            let b = &scenario.budget;
            let w_drop = if counts.drops < b.drops { weight(r.drop) } else { 0 };
            let w_dup = if counts.duplicates < b.duplicates { weight(r.duplicate) } else { 0 };
            let w_delay = weight(r.delay);
            let faults = w_drop as u64 + w_dup as u64 + w_delay as u64;
            if faults > 0 {
                let none = SCALE.saturating_sub(faults).max(1) as u32;
                let weights = [none, w_drop, w_dup, w_delay];
                let site = Site::message_fault(from, to);
                let total = none as u64 + faults;
                if !scenario.fault_gaps {
                    kind = decisions.at(site).weighted(&weights);
                } else if count_down(
                    counts.link_gaps.entry((from, to)).or_default(),
                    Site::message_gap(from, to),
                    decisions,
                    faults,
                    total,
                ) {
                    kind = decisions.at(site).weighted_or_none(&weights);
                }
            }
        }
        let latency = |d: &mut Decisions| {
            let span = scenario.latency_max.0.saturating_sub(scenario.latency_min.0) / 1_000;
            SimDuration(
                scenario.latency_min.0 + d.at(Site::latency(from, to)).choose(span + 1) * 1_000,
            )
        };
        match kind {
            1 => {
                counts.drops += 1;
                Fate::Drop
            }
            2 => {
                counts.duplicates += 1;
                let a = now + latency(decisions);
                let b = now + latency(decisions);
                Fate::Duplicate(a, b)
            }
            3 => {
                let extra =
                    decisions.at(Site::delay(from, to)).choose(scenario.delay_max.0 / 1_000 + 1)
                        * 1_000;
                Fate::Deliver(now + latency(decisions) + SimDuration(extra))
            }
            _ => Fate::Deliver(now + latency(decisions)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calm_network_only_decides_latency_within_range() {
        let s = Scenario::calm();
        let net = Network::new(3);
        let mut d = Decisions::random(4);
        let mut c = FaultCounts::default();
        for _ in 0..1000 {
            match net.route((0, 1), SimTime(0), &s, true, &mut c, &mut d) {
                Fate::Deliver(t) => assert!(t.0 >= s.latency_min.0 && t.0 <= s.latency_max.0),
                other => panic!("calm network produced {other:?}"),
            }
        }
        assert_eq!(c, FaultCounts::default());
    }

    #[test]
    fn drops_respect_the_budget() {
        let mut s = Scenario::default();
        s.rates.drop = Ratio::new(1, 2);
        s.budget.drops = 3;
        let net = Network::new(2);
        let mut d = Decisions::random(9);
        let mut c = FaultCounts::default();
        let drops = (0..500)
            .filter(|_| net.route((0, 1), SimTime(0), &s, true, &mut c, &mut d) == Fate::Drop)
            .count();
        assert_eq!(drops, 3);
    }

    #[test]
    fn cut_links_lose_everything_one_way() {
        let mut net = Network::new(2);
        net.set_cut(0, 1, true);
        let s = Scenario::calm();
        let mut d = Decisions::random(1);
        let mut c = FaultCounts::default();
        assert_eq!(net.route((0, 1), SimTime(0), &s, true, &mut c, &mut d), Fate::Cut);
        assert!(matches!(
            net.route((1, 0), SimTime(0), &s, true, &mut c, &mut d),
            Fate::Deliver(_)
        ));
        let mut net = Network::new(2);
        net.set_cut(0, 1, true);
        net.isolate(1, true);
        assert!(!net.set_cut(0, 1, false), "still cut by the isolation");
        assert_eq!(net.isolate(1, false), vec![0], "the pair is back");
        net.set_cut(1, 0, true);
        assert_eq!(net.heal_all(), vec![(0, 1)]);
        assert!(!net.any_cut());
    }
}
