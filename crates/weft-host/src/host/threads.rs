//! Threads of a process: creation, exit and join, and the host side of mutexes, condition
//! variables and futexes (every wait blocks in the host, every wake is a decision).

use super::*;

impl World<'_> {
    pub(super) fn op_thread_new(&mut self, c: Caller, _slot: &mut Slot) -> Reply {
        let Some(k) = self.free_slot() else { return Reply::Ret(-(libc::EAGAIN as i64)) };
        self.region.reset_slot(k);
        // The new thread waits for the baton before running any program code.
        let sig = signals::ThreadSignals::inherit(&self.threads[c.t].sig);
        self.threads.push(Thread {
            proc: c.p,
            slot: k,
            wait: Wait::Unborn(c.t),
            sig,
            cpu: busy::Cpu::default(),
        });
        let n = self.threads.len() - 1;
        self.event(c.node, EventKind::Note, None, None, n as u64, || format!("thread {n} created"));
        Reply::Ret(k as i64)
    }

    pub(super) fn op_thread_abort(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let k = slot.args[0] as usize;
        for x in self.threads.iter_mut() {
            // Already made runnable by `handle`, as every thread the caller created is.
            if x.slot == k && x.proc == c.p && x.wait != Wait::Gone {
                x.wait = Wait::Gone;
            }
        }
        Reply::Ret(0)
    }

    pub(super) fn op_join(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let k = slot.args[0] as usize;
        match self.threads.iter().rposition(|x| x.proc == c.p && x.slot == k) {
            Some(j) if self.threads[j].wait != Wait::Gone => Reply::Block(Wait::Join(j)),
            _ => Reply::Ret(0),
        }
    }

    pub(super) fn op_mutex_unlock(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        self.wake_mutex(c.p, slot.args[0] as u64);
        Reply::Ret(0)
    }

    pub(super) fn op_cond_wait(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        self.wake_mutex(c.p, slot.args[1] as u64);
        let deadline = (slot.args[2] as u64 != u64::MAX).then_some(SimTime(slot.args[2] as u64));
        let addr = slot.args[0] as u64;
        if deadline.is_some_and(|d| d <= self.now) {
            Reply::Ret(-(libc::ETIMEDOUT as i64))
        } else {
            Reply::Block(Wait::Cond { addr, deadline })
        }
    }

    pub(super) fn op_futex_wait(&mut self, _c: Caller, slot: &mut Slot) -> Reply {
        let addr = slot.args[0] as u64;
        let deadline = (slot.args[1] as u64 != u64::MAX).then_some(SimTime(slot.args[1] as u64));
        if deadline.is_some_and(|d| d <= self.now) {
            Reply::Ret(-(libc::ETIMEDOUT as i64))
        } else {
            Reply::Block(Wait::Futex { addr, deadline })
        }
    }

    pub(super) fn op_futex_wake(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let addr = slot.args[0] as u64;
        let shared = slot.args[2] != 0;
        let mut waiters: Vec<usize> = (0..self.threads.len())
            .filter(|&j| {
                self.reaches(c, j, shared)
                    && matches!(self.threads[j].wait, Wait::Futex { addr: a, .. } if a == addr)
            })
            .collect();
        let n = (slot.args[1].max(0) as usize).min(waiters.len());
        // Which waiters a partial wake picks is a decision (0: the earliest created thread).
        let mut woken = 0;
        while woken < n {
            let i = self.decisions.at(Site::wake()).choose(waiters.len() as u64) as usize;
            let j = waiters.remove(i);
            self.answer(j, 0);
            woken += 1;
        }
        Reply::Ret(woken as i64)
    }

    pub(super) fn op_cond_signal(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let addr = slot.args[0] as u64;
        let shared = slot.args[2] != 0;
        let waiters: Vec<usize> = (0..self.threads.len())
            .filter(|&j| {
                self.reaches(c, j, shared) && self.threads[j].wait.cond_addr() == Some(addr)
            })
            .collect();
        let woken: Vec<usize> = if slot.args[1] != 0 || waiters.len() <= 1 {
            waiters
        } else {
            let i = self.decisions.at(Site::wake()).choose(waiters.len() as u64);
            vec![waiters[i as usize]]
        };
        for j in woken {
            self.answer(j, 0);
        }
        Reply::Ret(0)
    }

    /// Whether a wake by caller `c` reaches thread `j`: in the caller's process, or (`shared`: a
    /// process-shared object) in any process of its node.
    fn reaches(&self, c: Caller, j: usize, shared: bool) -> bool {
        let p = self.threads[j].proc;
        if shared {
            self.procs[p].node == c.node
        } else {
            p == c.p
        }
    }

    /// Wakes every thread of process `p` waiting for the mutex at `addr` (they retry), also
    /// those in a timed lock (waiting on the address as on a condition variable).
    pub(super) fn wake_mutex(&mut self, p: usize, addr: u64) {
        for j in 0..self.threads.len() {
            let w = self.threads[j].wait;
            if self.threads[j].proc == p && (w == Wait::Mutex(addr) || w.cond_addr() == Some(addr))
            {
                self.answer(j, 0);
            }
        }
    }

    /// The lowest slot no live thread uses (slots below `nodes` belong to main threads).
    pub(super) fn free_slot(&self) -> Option<usize> {
        (self.cfg.nodes as usize..MAX_SLOTS)
            .find(|&k| !self.threads.iter().any(|t| t.slot == k && t.wait != Wait::Gone))
    }
}
