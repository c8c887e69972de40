//! Busy waits make progress: every intercepted call costs modelled CPU time
//! (`Scenario::call_latency`; a locally served call a hundredth of it). A thread's cost
//! accumulates while virtual time stands still for it; once it reaches [`CHARGE_AT`] the
//! thread is held back until virtual time has moved by that much, so a thread that spins on
//! non-blocking calls (a clock loop, `poll` with timeout 0, `sched_yield`, `trylock`) sees time
//! pass and lets the others run, exactly as the same loop would on Linux. All of it is a
//! function of the calls the thread made, so it is as deterministic as the calls themselves.

use super::*;
use weft_core::SimDuration;

/// Accumulated cost at which a thread is held back (and pays it all at once).
const CHARGE_AT: SimDuration = SimDuration::from_micros(10);

/// What the host keeps per thread for the model.
#[derive(Clone, Copy, Default)]
pub(super) struct Cpu {
    /// Cost accumulated since virtual time last moved for this thread.
    debt: SimDuration,
    /// Virtual time of the thread's previous request.
    last_seen: SimTime,
    /// The thread may not run before this (it is paying its cost).
    held_until: SimTime,
}

impl World<'_> {
    /// Charges thread `t`'s request (and the `local` calls served locally before it).
    pub(super) fn charge(&mut self, t: usize, local: u32) {
        let unit = self.scenario.call_latency.as_nanos();
        let now = self.now;
        let cpu = &mut self.threads[t].cpu;
        if now > cpu.last_seen {
            cpu.debt = SimDuration::ZERO; // time passed for it since its last call
        }
        cpu.last_seen = now;
        let cost = unit.saturating_add((local as u64).saturating_mul(unit) / 100);
        cpu.debt = SimDuration::from_nanos(cpu.debt.as_nanos().saturating_add(cost));
        if cpu.debt >= CHARGE_AT {
            cpu.held_until = now + cpu.debt;
            cpu.debt = SimDuration::ZERO;
        }
    }

    /// True when thread `t` has paid its cost at the current time.
    pub(super) fn cpu_free(&self, t: usize) -> bool {
        self.threads[t].cpu.held_until <= self.now
    }

    /// The earliest time a ready thread that is still paying may run again.
    pub(super) fn next_unheld(&self) -> Option<SimTime> {
        self.threads
            .iter()
            .filter(|t| t.wait == Wait::Ready && t.cpu.held_until > self.now)
            .map(|t| t.cpu.held_until)
            .min()
    }
}
