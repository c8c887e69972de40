//! The network model the host delivers datagrams through.
//!
//! The host talks to the model through [`Network`] only, so the model can be swapped for the
//! shared one in weft-sim (the same latency, drop, duplicate and delay decisions for both ways
//! into weft). [`ScenarioNetwork`] is the stand-in until then: per-message latency drawn from the
//! scenario's range, and drop / duplicate / delay faults at the scenario's rates during its fault
//! phase, never beyond its budget. Every choice goes through the run's [`Decisions`], 0 being the
//! simplest (minimum latency, no fault).

use weft_core::{Decisions, Scenario, SimDuration, SimTime};

/// What happens to one datagram.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fate {
    /// Arrival times, earliest first: empty when dropped, two when duplicated.
    pub arrivals: Vec<SimTime>,
    pub dropped: bool,
    pub duplicated: bool,
    pub delayed: bool,
}

/// A datagram network between nodes.
pub trait Network {
    /// Decides the fate of a datagram sent at `now` from node `from` to node `to`.
    fn send(&mut self, now: SimTime, from: u32, to: u32, decisions: &mut Decisions) -> Fate;
    /// Faults injected so far.
    fn faults(&self) -> u64;
}

/// The scenario-driven stand-in network (see the module docs).
pub struct ScenarioNetwork {
    scenario: Scenario,
    drops: u32,
    duplicates: u32,
}

impl ScenarioNetwork {
    pub fn new(scenario: &Scenario) -> ScenarioNetwork {
        ScenarioNetwork { scenario: scenario.clone(), drops: 0, duplicates: 0 }
    }

    /// Latency in whole microseconds within the scenario's range (a decision; 0 = minimum).
    fn latency(&self, decisions: &mut Decisions) -> SimDuration {
        let min = self.scenario.latency_min.as_nanos() / 1_000;
        let max =
            self.scenario.latency_max.as_nanos().max(self.scenario.latency_min.as_nanos()) / 1_000;
        SimDuration::from_micros(min + decisions.choose(max - min + 1))
    }
}

impl Network for ScenarioNetwork {
    fn send(&mut self, now: SimTime, _from: u32, _to: u32, decisions: &mut Decisions) -> Fate {
        let s = &self.scenario;
        let in_fault_phase = now < SimTime::ZERO + s.fault_phase;
        let mut fate = Fate::default();
        if in_fault_phase && self.drops < s.budget.drops && decisions.chance(s.rates.drop) {
            self.drops += 1;
            fate.dropped = true;
            return fate;
        }
        let mut at = now + self.latency(decisions);
        if in_fault_phase && decisions.chance(s.rates.delay) {
            let extra = s.delay_max.as_nanos() / 1_000;
            if extra > 0 {
                at += SimDuration::from_micros(1 + decisions.choose(extra));
                fate.delayed = true;
            }
        }
        fate.arrivals.push(at);
        if in_fault_phase
            && self.duplicates < s.budget.duplicates
            && decisions.chance(s.rates.duplicate)
        {
            self.duplicates += 1;
            fate.duplicated = true;
            let again = now + self.latency(decisions);
            fate.arrivals.push(again);
            fate.arrivals.sort();
        }
        fate
    }

    fn faults(&self) -> u64 {
        (self.drops + self.duplicates) as u64
    }
}
