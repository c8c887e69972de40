//! Waking blocked threads: after every step and every advance of virtual time, each thread
//! blocked in the host (a sleep, a receive, an accept or connect, a poll, a wait for a child,
//! a join, a timed futex or condition wait, `sigwait`, a timerfd or signalfd read) is checked,
//! in creation order, and made runnable with its call's answer when its condition now holds.

use super::{Wait, World};

impl World<'_> {
    /// Makes every blocked thread whose condition holds runnable, in creation order.
    pub(super) fn wake_blocked(&mut self) {
        for t in 0..self.threads.len() {
            let node = self.procs[self.threads[t].proc].node;
            self.fds.enter(node, self.procs[self.threads[t].proc].table);
            let s = self.slot(t);
            // SAFETY: blocked processes wait for TURN_THREAD; their slots are ours.
            let slot = unsafe { &mut *s };
            match self.threads[t].wait {
                Wait::Sleep(until) if until <= self.now => {
                    slot.ret = 0;
                    self.threads[t].wait = Wait::Ready;
                }
                Wait::Accept { .. } | Wait::Connect { .. } => {
                    self.wake_stream_waiter(t, node, slot)
                }
                Wait::Recv { fd, deadline, peek, cap } => {
                    if let Some(r) = self.try_recv(node, fd, peek, cap, slot) {
                        slot.ret = r;
                        self.threads[t].wait = Wait::Ready;
                    } else if !self.fds.is_open(node, fd) {
                        slot.ret = -(libc::EBADF as i64);
                        self.threads[t].wait = Wait::Ready;
                    } else if deadline.is_some_and(|d| d <= self.now) {
                        slot.ret = -(libc::EAGAIN as i64);
                        self.threads[t].wait = Wait::Ready;
                    }
                }
                Wait::Poll { count, deadline, retry, .. } => {
                    let n = self.poll_ready(node, self.threads[t].proc, slot, count);
                    let look_again = retry.is_some_and(|s| s != self.node_steps(node));
                    if n > 0 || look_again || deadline.is_some_and(|d| d <= self.now) {
                        slot.ret = n as i64;
                        self.threads[t].wait = Wait::Ready;
                    }
                }
                Wait::Child { sel, nowait } => {
                    if let Some(r) = self.wait_result(self.threads[t].proc, sel, nowait, slot) {
                        slot.ret = r;
                        self.threads[t].wait = Wait::Ready;
                    }
                }
                Wait::Join(j) if self.threads[j].wait == Wait::Gone => {
                    slot.ret = 0;
                    self.threads[t].wait = Wait::Ready;
                }
                Wait::Futex { deadline: Some(d), .. } if d <= self.now => {
                    slot.ret = -(libc::ETIMEDOUT as i64);
                    self.threads[t].wait = Wait::Ready;
                }
                Wait::Cond { deadline: Some(d), .. } if d <= self.now => {
                    slot.ret = -(libc::ETIMEDOUT as i64);
                    self.threads[t].wait = Wait::Ready;
                }
                Wait::Sigwait { .. } => self.wake_sigwait(t),
                Wait::TimerfdRead { fd } => self.wake_timerfd(t, fd),
                Wait::SignalfdRead { fd, max } => self.wake_signalfd(t, fd, max, slot),
                _ => {}
            }
        }
    }
}
