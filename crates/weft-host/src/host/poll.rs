//! `poll`/`select`/`epoll` waits: which simulated descriptors are ready.

use super::*;

impl World<'_> {
    pub(super) fn op_poll(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let count = (slot.args[0] as usize).min(POLL_MAX);
        let deadline = (slot.args[1] as u64 != u64::MAX).then_some(SimTime(slot.args[1] as u64));
        let n = self.poll_ready(c.node, c.p, slot, count);
        if n > 0 || deadline.is_some_and(|d| d <= self.now) {
            Reply::Ret(n as i64)
        } else {
            if slot.args[3] != 0 {
                // A second look that found nothing: the thread ran no program code since its
                // last request, so this hand-off is no news for the node's other waiters.
                self.procs[c.p].steps -= 1;
            }
            let retry = (slot.args[2] != 0).then_some(self.node_steps(c.node));
            let write = slot.args[4] != 0;
            Reply::Block(Wait::Poll { count, deadline, retry, write })
        }
    }

    /// `OP_EPOLL_TOUCH`: the caller's process changed its epoll set `args[0]`: its threads
    /// waiting on that set (their poll's `args[5]`) answer `TOUCHED` and look again.
    pub(super) fn op_epoll_touch(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let tag = slot.args[0];
        for j in 0..self.threads.len() {
            let mine = self.threads[j].proc == c.p && j != c.t;
            if mine && matches!(self.threads[j].wait, Wait::Poll { .. }) {
                // SAFETY: `j` waits for the baton: its slot is the host's to read.
                if unsafe { (*self.slot(j)).args[5] } == tag {
                    self.answer(j, TOUCHED);
                }
            }
        }
        Reply::Ret(0)
    }

    /// Hand-offs made on `node` (by any of its processes): a waiter on real descriptors (a
    /// pipe to a thread or a child) looks again once this has moved.
    pub(super) fn node_steps(&self, node: u32) -> u64 {
        self.procs.iter().filter(|p| p.node == node).map(|p| p.steps).sum()
    }

    pub(super) fn poll_ready(&self, node: u32, p: usize, slot: &mut Slot, count: usize) -> usize {
        let mut n = 0;
        for e in slot.polls[..count].iter_mut() {
            e.revents = 0;
            if e.fd < 0 {
                continue;
            }
            let special = self.timerfd_readable(p, e.fd);
            if let Some(readable) = special.or_else(|| self.signalfd_readable(p, e.fd)) {
                if readable && e.events & libc::POLLIN != 0 {
                    e.revents = libc::POLLIN;
                    n += 1;
                }
                continue;
            }
            e.revents = match self.local_revents(node, e.fd, e.events) {
                Some(re) => re,
                None => self.sock_revents(node, e.fd, e.events),
            };
            if e.revents != 0 {
                n += 1;
            }
        }
        n
    }

    /// poll() readiness of a socket (`POLLNVAL`: `fd` is not open).
    fn sock_revents(&self, node: u32, fd: i32, events: i16) -> i16 {
        match self.fds.sock(node, fd) {
            None => libc::POLLNVAL,
            Some(s) if s.stream.is_some() => self.stream_revents(node, fd, events),
            Some(s) => {
                let mut re = 0;
                if events & libc::POLLIN != 0 && !s.queue.is_empty() {
                    re |= libc::POLLIN;
                }
                if events & libc::POLLOUT != 0 {
                    re |= libc::POLLOUT;
                }
                re
            }
        }
    }
}
