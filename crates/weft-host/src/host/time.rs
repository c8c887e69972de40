//! Virtual time: sleeps, and advancing the clock when nothing can run (to the next deadline,
//! arrival or fault ending), or ending the run when nothing ever will.

use super::*;

impl World<'_> {
    pub(super) fn op_sleep(&mut self, _c: Caller, slot: &mut Slot) -> Reply {
        let until = SimTime(slot.args[0] as u64);
        if until <= self.now {
            Reply::Ret(0)
        } else {
            Reply::Block(Wait::Sleep(until))
        }
    }

    /// Nothing can run: move virtual time to the next deadline or arrival, or end the run.
    pub(super) fn advance(&mut self) -> Option<Outcome> {
        let next_flight = self.flights.keys().next().map(|k| k.0);
        let next_segment = self.segments.keys().next().map(|k| k.0);
        let next_flight = match (next_flight, next_segment) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let next_deadline = self
            .threads
            .iter()
            .filter_map(|t| t.wait.deadline())
            .chain(self.timed.keys().next().map(|k| k.0))
            .chain(self.next_timer())
            .chain(self.next_unheld())
            .chain(self.heal_pending().then_some(SimTime::ZERO + self.scenario.fault_phase))
            .min();
        let next = match (next_flight, next_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let live = self.threads.iter().filter(|t| t.wait != Wait::Gone).count();
        let limit = SimTime::ZERO + self.cfg.time_limit;
        match next {
            None if live == 0 => Some(Outcome::Pass),
            None => match self.cfg.on_idle {
                OnIdle::Pass => Some(Outcome::Pass),
                OnIdle::Deadlock => Some(Outcome::Deadlock {
                    detail: format!(
                        "at {}: {live} thread(s) blocked with no timer and nothing in flight \
                         ({}); a server that only waits for clients ends so: `--on-idle pass` (`on_idle = \"pass\"` \
                         in a cluster file) makes that a pass",
                        self.now,
                        self.blocked_calls()
                    ),
                }),
            },
            Some(t) if t > limit => {
                self.set_now(limit);
                Some(Outcome::Pass)
            }
            Some(t) => {
                self.set_now(t);
                None
            }
        }
    }

    pub(super) fn set_now(&mut self, t: SimTime) {
        assert!(t >= self.now, "virtual time went backwards");
        if t > self.now {
            self.steps_since_advance = 0;
        }
        self.now = t;
        self.region.set_now(t.as_nanos());
    }

    /// Where each live thread waits, by node: `n0 accept, n0 poll/select/epoll_wait` (the
    /// first eight).
    fn blocked_calls(&self) -> String {
        let live = self.threads.iter().filter(|t| t.wait != Wait::Gone);
        let each = live.map(|t| format!("n{} {}", self.procs[t.proc].node, t.wait.call()));
        let mut names: Vec<String> = each.take(9).collect();
        if names.len() == 9 {
            names[8] = "…".into();
        }
        names.join(", ")
    }
}
