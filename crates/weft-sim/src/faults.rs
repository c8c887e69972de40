//! Node and network faults injected at event boundaries: crash, pause, partition.
//!
//! | fault | opportunity | decisions drawn | ends |
//! |---|---|---|---|
//! | crash | each event in the fault phase | kind, victim, outage | restart after the outage, or at heal (if `Scenario::restart`) |
//! | pause | each event in the fault phase | kind, victim, duration | resume after the duration, or at heal |
//! | partition | each event in the fault phase | kind, shape (per `partition_shape`: isolate a node / cut one direction of a link / split into halves / cut off a minority), nodes, duration | heal after the duration, or at heal |
//!
//! One weighted decision per opportunity picks "none" (index 0, the simplest) or a fault kind,
//! so shrinking a fault away is lowering one value to 0. Kinds whose budget is spent get weight
//! 0, so the budget is never exceeded. Partitions cut only links between nodes that may be
//! partitioned (all, unless the caller says otherwise: Jepsen's control node keeps its links). A target may veto a crash victim with a gate (e.g. Chord's
//! "no member loses all live successors"); a vetoed crash is simply not injected.

use crate::net::{weight, SCALE};
use weft_core::{Decisions, PartitionShape, Scenario, SimDuration, Site};

/// How many faults of each kind a run has injected so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultCounts {
    pub crashes: u32,
    pub pauses: u32,
    pub partitions: u32,
    pub drops: u32,
    pub duplicates: u32,
    /// With `Scenario::fault_gaps`: opportunities left before the next fault (None: the gap
    /// is drawn at the next opportunity).
    pub gap_left: Option<u64>,
    /// The same for each link's message faults, counted in its messages.
    pub link_gaps: std::collections::BTreeMap<(u32, u32), Option<u64>>,
}

impl FaultCounts {
    pub fn total(&self) -> u64 {
        (self.crashes + self.pauses + self.partitions + self.drops + self.duplicates) as u64
    }
}

/// A node or network fault chosen at one opportunity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Crash `node`; it restarts after `outage` (None: not before the heal phase).
    Crash {
        node: u32,
        outage: Option<SimDuration>,
    },
    Pause {
        node: u32,
        duration: SimDuration,
    },
    /// Cut every link of `node` (symmetric) for `duration`.
    Isolate {
        node: u32,
        duration: SimDuration,
    },
    /// Cut the one-way link `from → to` for `duration`.
    CutLink {
        from: u32,
        to: u32,
        duration: SimDuration,
    },
    /// Cut every link (both directions) between a node of `side` and a node of `rest` for
    /// `duration`; links with nodes in neither are untouched. Both lists ascend.
    Split {
        side: Vec<u32>,
        rest: Vec<u32>,
        duration: SimDuration,
    },
}

/// A fault's duration: 1 ms plus a decision, at most `outage_max` (0 = the shortest).
pub(crate) fn duration(scenario: &Scenario, d: &mut Decisions) -> SimDuration {
    let span = scenario.outage_max.0 / 1_000_000;
    SimDuration::from_millis(1 + d.choose(span.max(1)))
}

/// How long a crashed node stays down (None: until the heal phase, or for good if the scenario
/// does not restart nodes).
pub(crate) fn outage(scenario: &Scenario, d: &mut Decisions) -> Option<SimDuration> {
    (scenario.restart && scenario.outage_max.0 > 0).then(|| duration(scenario, d))
}

/// Draws the fault (if any) injected at one opportunity. `up[i]` says whether node `i` is up;
/// `gate(i)` whether node `i` may crash now. Every node may be partitioned.
pub fn opportunity(
    scenario: &Scenario,
    counts: &mut FaultCounts,
    up: &[bool],
    decisions: &mut Decisions,
    gate: &mut dyn FnMut(u32) -> bool,
) -> Option<Fault> {
    opportunity_among(scenario, counts, up, &[], decisions, gate)
}

/// [`opportunity`], where partitions cut only links between nodes `i` with
/// `partitionable[i]` (missing entries count as true). With every node partitionable the
/// decisions drawn are exactly those of [`opportunity`].
pub fn opportunity_among(
    scenario: &Scenario,
    counts: &mut FaultCounts,
    up: &[bool],
    partitionable: &[bool],
    decisions: &mut Decisions,
    gate: &mut dyn FnMut(u32) -> bool,
) -> Option<Fault> {
    let [w_crash, w_pause, w_part] = weights(scenario, counts, up.len(), partitionable);
    let faults = w_crash as u64 + w_pause as u64 + w_part as u64;
    if faults == 0 {
        return None;
    }
    let cut: Vec<u32> = (0..up.len() as u32)
        .filter(|&i| partitionable.get(i as usize).copied().unwrap_or(true))
        .collect();
    let none = SCALE.saturating_sub(faults).max(1) as u32;
    // Opportunity k's kind is the k-th draw at the fault-kind site and its details live at
    // their own site, so removing one fault leaves every other fault's details where they were.
    let k = decisions.drawn_at(Site::fault_kind());
    let weights = [none, w_crash, w_pause, w_part];
    let kind = if !scenario.fault_gaps {
        decisions.at(Site::fault_kind()).weighted(&weights)
    } else if count_down(
        &mut counts.gap_left,
        Site::fault_gap(),
        decisions,
        faults,
        none as u64 + faults,
    ) {
        decisions.at(Site::fault_kind()).weighted_or_none(&weights)
    } else {
        return None;
    };
    let base = decisions.set_base(Site::fault_detail(k));
    let fault = if kind == 3 && !up.contains(&true) {
        None
    } else if kind == 3 {
        counts.partitions += 1;
        Some(partition(scenario, &cut, cut.len() == up.len(), decisions))
    } else {
        details(scenario, counts, up, kind, decisions, gate)
    };
    decisions.set_base(base);
    fault
}

/// `Scenario::fault_gaps`: is this the opportunity the current gap names? A gap is drawn at
/// `site` when `left` is None — at the first opportunity after one that drew a kind, or the
/// run's first — with the rate of a fault then (`hits / total`, as a draw per opportunity
/// would have it), and counted down at each opportunity after (a gap of 0, "never", counts
/// down forever). At the opportunity it names, `left` becomes None again.
pub fn count_down(
    left: &mut Option<u64>,
    site: Site,
    decisions: &mut Decisions,
    hits: u64,
    total: u64,
) -> bool {
    let n = left.unwrap_or_else(|| {
        let gap = decisions.at(site).gap(hits, total);
        gap.checked_sub(1).unwrap_or(u64::MAX)
    });
    *left = n.checked_sub(1);
    n == 0
}

/// The weights of a crash, a pause and a partition at an opportunity among `nodes` nodes
/// (0: that kind cannot happen now: no rate, or its budget is spent).
fn weights(
    scenario: &Scenario,
    counts: &FaultCounts,
    nodes: usize,
    partitionable: &[bool],
) -> [u32; 3] {
    let r = &scenario.rates;
    let b = &scenario.budget;
    let w_crash = if counts.crashes < b.crashes { weight(r.crash) } else { 0 };
    let w_pause = if counts.pauses < b.pauses { weight(r.pause) } else { 0 };
    let cuttable = (0..nodes).filter(|&i| partitionable.get(i).copied().unwrap_or(true)).count();
    let w_part =
        if counts.partitions < b.partitions && cuttable > 1 { weight(r.partition) } else { 0 };
    [w_crash, w_pause, w_part]
}

/// Whether [`opportunity_among`] could inject anything now; when not, it would draw no
/// decision either, so a caller may skip it (and the work of preparing its arguments).
pub fn possible(
    scenario: &Scenario,
    counts: &FaultCounts,
    nodes: usize,
    partitionable: &[bool],
) -> bool {
    let r = &scenario.rates;
    if r.crash.is_zero() && r.pause.is_zero() && r.partition.is_zero() {
        return false; // the common case, without the divisions
    }
    weights(scenario, counts, nodes, partitionable).iter().any(|&w| w > 0)
}

/// The victim and duration of a node fault of `kind` (1 crash, 2 pause).
fn details(
    scenario: &Scenario,
    counts: &mut FaultCounts,
    up: &[bool],
    kind: usize,
    decisions: &mut Decisions,
    gate: &mut dyn FnMut(u32) -> bool,
) -> Option<Fault> {
    let live: Vec<u32> = (0..up.len() as u32).filter(|&i| up[i as usize]).collect();
    if live.is_empty() {
        return None;
    }
    let duration = |d: &mut Decisions| duration(scenario, d);
    match kind {
        1 => {
            let candidates: Vec<u32> = live.into_iter().filter(|&n| gate(n)).collect();
            if candidates.is_empty() {
                return None;
            }
            let node = candidates[decisions.choose(candidates.len() as u64) as usize];
            let outage = outage(scenario, decisions);
            counts.crashes += 1;
            Some(Fault::Crash { node, outage })
        }
        2 => {
            let node = live[decisions.choose(live.len() as u64) as usize];
            counts.pauses += 1;
            Some(Fault::Pause { node, duration: duration(decisions) })
        }
        _ => None,
    }
}

/// The links one partition cuts, among nodes `cut` (ascending, at least 2; `all`: every node
/// of the run), by the scenario's shape, and for how long.
fn partition(scenario: &Scenario, cut: &[u32], all: bool, d: &mut Decisions) -> Fault {
    let k = cut.len() as u64;
    let shape = match scenario.partition_shape {
        PartitionShape::Mixed if d.choose(2) == 0 => PartitionShape::Node,
        PartitionShape::Mixed => PartitionShape::Link,
        other => other,
    };
    let size = match shape {
        PartitionShape::Node => {
            let node = cut[d.choose(k) as usize];
            if all {
                return Fault::Isolate { node, duration: duration(scenario, d) };
            }
            return split(cut, &[node], duration(scenario, d));
        }
        PartitionShape::Link => {
            let i = d.choose(k);
            let j = (i + 1 + d.choose(k - 1)) % k;
            let (from, to) = (cut[i as usize], cut[j as usize]);
            return Fault::CutLink { from, to, duration: duration(scenario, d) };
        }
        PartitionShape::Halves => k / 2,
        _ => 1 + d.choose(((k - 1) / 2).max(1)),
    };
    // A partial Fisher-Yates shuffle draws the side (all zeros: the first `size` nodes).
    let mut pool = cut.to_vec();
    for i in 0..size as usize {
        let j = i + d.choose(k - i as u64) as usize;
        pool.swap(i, j);
    }
    let side = pool[..size as usize].to_vec();
    split(cut, &side, duration(scenario, d))
}

/// `{n0 n3 n5}`: a side of a partition, for timelines.
pub fn node_list(nodes: &[u32]) -> String {
    let names: Vec<String> = nodes.iter().map(|n| format!("n{n}")).collect();
    format!("{{{}}}", names.join(" "))
}

fn split(cut: &[u32], side: &[u32], duration: SimDuration) -> Fault {
    let mut side = side.to_vec();
    side.sort_unstable();
    let rest = cut.iter().copied().filter(|n| !side.contains(n)).collect();
    Fault::Split { side, rest, duration }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_core::Ratio;

    #[test]
    fn never_exceeds_the_budget() {
        let mut s = Scenario::default();
        s.rates.crash = Ratio::new(1, 3);
        s.rates.pause = Ratio::new(1, 3);
        s.rates.partition = Ratio::new(1, 3);
        s.budget.crashes = 2;
        s.budget.pauses = 1;
        s.budget.partitions = 4;
        let mut d = Decisions::random(3);
        let mut c = FaultCounts::default();
        for _ in 0..10_000 {
            opportunity(&s, &mut c, &[true, true, true], &mut d, &mut |_| true);
        }
        assert_eq!((c.crashes, c.pauses, c.partitions), (2, 1, 4));
    }

    #[test]
    fn the_gate_can_veto_every_crash() {
        let mut s = Scenario::calm();
        s.rates.crash = Ratio::ONE;
        let mut d = Decisions::random(3);
        let mut c = FaultCounts::default();
        for _ in 0..100 {
            assert_eq!(opportunity(&s, &mut c, &[true, true], &mut d, &mut |_| false), None);
        }
    }

    fn partitions(shape: PartitionShape, cut: &[bool], seed: u64) -> Vec<Fault> {
        let mut s = Scenario::calm();
        s.rates.partition = Ratio::ONE;
        s.budget.partitions = 1;
        s.partition_shape = shape;
        let mut out = Vec::new();
        for i in 0..50 {
            let mut d = Decisions::random(seed + i);
            let mut c = FaultCounts::default();
            let up = [true; 6];
            out.extend(opportunity_among(&s, &mut c, &up, cut, &mut d, &mut |_| true));
        }
        out
    }

    #[test]
    fn halves_and_minorities_split_only_partitionable_nodes() {
        let cut = [true, true, true, true, true, false];
        for f in partitions(PartitionShape::Halves, &cut, 1) {
            let Fault::Split { side, rest, .. } = f else { panic!("{f:?}") };
            assert_eq!((side.len(), rest.len()), (2, 3), "{side:?} | {rest:?}");
            assert!(!side.contains(&5) && !rest.contains(&5));
        }
        let mut sizes = Vec::new();
        for f in partitions(PartitionShape::Minority, &cut, 7) {
            let Fault::Split { side, rest, .. } = f else { panic!("{f:?}") };
            assert!(side.len() < rest.len() && side.len() + rest.len() == 5);
            sizes.push(side.len());
        }
        assert!(sizes.contains(&1) && sizes.contains(&2), "{sizes:?}");
        for f in partitions(PartitionShape::Node, &cut, 3) {
            let Fault::Split { side, rest, .. } = f else { panic!("{f:?}") };
            assert_eq!((side.len(), rest.len()), (1, 4));
        }
    }

    #[test]
    fn every_node_partitionable_draws_what_opportunity_draws() {
        let s = Scenario { partition_shape: PartitionShape::Mixed, ..Scenario::default() };
        let (mut a, mut b) = (Decisions::random(9), Decisions::random(9));
        let (mut ca, mut cb) = (FaultCounts::default(), FaultCounts::default());
        for _ in 0..5_000 {
            let up = [true; 4];
            let x = opportunity(&s, &mut ca, &up, &mut a, &mut |_| true);
            let y = opportunity_among(&s, &mut cb, &up, &[true; 4], &mut b, &mut |_| true);
            assert_eq!(x, y);
        }
        assert!(ca.partitions > 0);
    }

    #[test]
    fn zero_decisions_mean_no_fault() {
        let s = Scenario::default();
        let mut d = Decisions::replay(vec![]);
        let mut c = FaultCounts::default();
        assert_eq!(opportunity(&s, &mut c, &[true, true], &mut d, &mut |_| true), None);
    }
}
