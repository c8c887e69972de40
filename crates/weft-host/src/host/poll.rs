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
        let epoll = slot.args[5] != 0;
        let mut n = 0;
        for k in 0..count {
            let PollEntry { fd, events, .. } = slot.polls[k];
            let mut re = if fd < 0 { 0 } else { self.revents(node, p, fd, events) };
            if epoll {
                re &= !self.read_edge(node, fd, &mut slot.data[k * 8..k * 8 + 8]);
            }
            slot.polls[k].revents = re;
            n += (re != 0) as usize;
        }
        n
    }

    /// poll() readiness of simulated descriptor `fd` of process `p` for `events`.
    fn revents(&self, node: u32, p: usize, fd: i32, events: i16) -> i16 {
        let special = self.timerfd_readable(p, fd);
        if let Some(readable) = special.or_else(|| self.signalfd_readable(p, fd)) {
            return if readable && events & libc::POLLIN != 0 { libc::POLLIN } else { 0 };
        }
        match self.local_revents(node, fd, events) {
            Some(re) => re,
            None => self.sock_revents(node, fd, events),
        }
    }

    /// An epoll entry's read edge (`OP_POLL`): the read-side bits that may not count (no write
    /// into `fd`'s object since the generation in `edge`, when one is there), and `edge` set to
    /// the object's read generation now (plus one; 0: it has none).
    fn read_edge(&self, node: u32, fd: i32, edge: &mut [u8]) -> i16 {
        let after = u64::from_le_bytes(edge.try_into().expect("8 bytes"));
        let now = self.read_generation(node, fd).map_or(0, |g| g + 1);
        edge.copy_from_slice(&now.to_le_bytes());
        if after != 0 && after == now {
            libc::POLLIN | libc::POLLRDNORM | libc::POLLRDHUP | libc::POLLPRI
        } else {
            0
        }
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
