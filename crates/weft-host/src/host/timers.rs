//! Timers in virtual time, owned by the host per process: `alarm`/`setitimer(ITIMER_REAL)`
//! (one per process), POSIX timers (`timer_create`, ids from 0 as Linux gives them) and
//! timerfds (one per descriptor). A timer fires exactly at its virtual deadline: virtual time
//! advances to the earliest armed deadline when nothing can run ([`World::next_timer`]), and
//! [`World::timers_due`] then sends its signal or counts an expiration on its timerfd, whose
//! readers and pollers wake.

use super::*;

const ITIMER_REAL_ID: i64 = TIMER_ID_ITIMER_REAL;
const TIMERFD_BASE: i64 = TIMERFD_ID_BASE;

/// What a timer does when it expires.
#[derive(Clone, Copy, Debug)]
enum Notify {
    /// Sends `sig` (`code` SI_TIMER for POSIX timers, SI_KERNEL for ITIMER_REAL), to the
    /// thread in slot `to` if given (`SIGEV_THREAD_ID`), else to the process.
    Signal { sig: i32, code: i32, value: u64, to: Option<usize> },
    /// SIGEV_NONE: only `timer_gettime` sees it.
    Nothing,
    /// A timerfd: expirations since the last read.
    Fd { count: u64 },
}

pub(super) struct Timer {
    deadline: Option<SimTime>,
    interval: u64,
    notify: Notify,
    overrun: i32,
}

/// Time left until `deadline` (0: disarmed; an armed timer never reports 0).
fn remaining(deadline: Option<SimTime>, now: SimTime) -> u64 {
    deadline.map_or(0, |d| d.as_nanos().saturating_sub(now.as_nanos()).max(1))
}

impl World<'_> {
    pub(super) fn op_timer_create(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let notify = match slot.args[0] {
            TIMER_KIND_FD => Notify::Fd { count: 0 },
            _ if slot.args[4] != 0 => Notify::Nothing,
            _ => Notify::Signal {
                sig: slot.args[1] as i32,
                code: SI_TIMER,
                value: slot.args[2] as u64,
                to: usize::try_from(slot.args[3]).ok(),
            },
        };
        let id = if slot.args[0] == TIMER_KIND_FD {
            TIMERFD_BASE + slot.args[3]
        } else {
            (0..).find(|&i| !self.timers.contains_key(&(c.p, i))).unwrap_or(0)
        };
        // No sigevent given: the signal's value is the timer's id, as glibc makes it.
        let notify = match notify {
            Notify::Signal { sig, code, value, to } if value == u64::MAX => {
                Notify::Signal { sig, code, value: id as u64, to }
            }
            n => n,
        };
        let fresh = Timer { deadline: None, interval: 0, notify, overrun: 0 };
        if let Some(old) = self.timers.insert((c.p, id), fresh) {
            self.requeue((c.p, id), old.deadline, None);
        }
        Reply::Ret(id)
    }

    /// The timer `id` of process `p`; the process's ITIMER_REAL is made on first use.
    fn timer_mut(&mut self, p: usize, id: i64) -> Option<&mut Timer> {
        if id == ITIMER_REAL_ID {
            let notify = Notify::Signal { sig: libc::SIGALRM, code: SI_KERNEL, value: 0, to: None };
            let fresh = Timer { deadline: None, interval: 0, notify, overrun: 0 };
            return Some(self.timers.entry((p, id)).or_insert(fresh));
        }
        self.timers.get_mut(&(p, id))
    }

    pub(super) fn op_timer_set(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let now = self.now;
        let (at, interval) = (slot.args[1] as u64, slot.args[2] as u64);
        let Some(t) = self.timer_mut(c.p, slot.args[0]) else {
            return Reply::Ret(-(libc::EINVAL as i64));
        };
        slot.args[1] = remaining(t.deadline, now) as i64;
        slot.args[2] = t.interval as i64;
        let old = t.deadline;
        t.deadline = (at != 0).then_some(SimTime(at.max(now.as_nanos())));
        t.interval = interval;
        t.overrun = 0;
        if let Notify::Fd { count } = &mut t.notify {
            *count = 0;
        }
        let new = t.deadline;
        self.requeue((c.p, slot.args[0]), old, new);
        Reply::Ret(0)
    }

    /// Keeps `timer_queue` in step with a change of timer `key`'s deadline.
    fn requeue(&mut self, key: (usize, i64), old: Option<SimTime>, new: Option<SimTime>) {
        if let Some(d) = old {
            self.timer_queue.remove(&(d, key.0, key.1));
        }
        if let Some(d) = new {
            self.timer_queue.insert((d, key.0, key.1));
        }
    }

    /// Process `p` is gone: so are its timers.
    pub(super) fn drop_timers(&mut self, p: usize) {
        self.timers.retain(|&(q, _), _| q != p);
        self.timer_queue.retain(|&(_, q, _)| q != p);
    }

    pub(super) fn op_timer_get(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let now = self.now;
        let Some(t) = self.timer_mut(c.p, slot.args[0]) else {
            return Reply::Ret(-(libc::EINVAL as i64));
        };
        slot.args[1] = remaining(t.deadline, now) as i64;
        slot.args[2] = t.interval as i64;
        slot.args[3] = t.overrun as i64;
        Reply::Ret(0)
    }

    pub(super) fn op_timer_delete(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        match self.timers.remove(&(c.p, slot.args[0])) {
            Some(t) => {
                self.requeue((c.p, slot.args[0]), t.deadline, None);
                Reply::Ret(0)
            }
            None => Reply::Ret(-(libc::EINVAL as i64)),
        }
    }

    /// The earliest armed deadline of a live process's timer (a dead process has none: see
    /// [`World::drop_timers`]).
    pub(super) fn next_timer(&self) -> Option<SimTime> {
        self.timer_queue.first().map(|&(d, _, _)| d)
    }

    /// Fires every timer whose deadline has come, in (deadline, process, id) order. A periodic
    /// timer that missed expirations counts them (overruns; timerfd expirations). Once per
    /// hand-off, so the common case (nothing due) is one look at the queue's first entry.
    pub(super) fn timers_due(&mut self) {
        let now = self.now;
        while let Some(&(d, p, id)) = self.timer_queue.first() {
            if d > now {
                break;
            }
            self.timer_queue.pop_first();
            let Some(t) = self.timers.get_mut(&(p, id)) else { continue };
            if t.deadline != Some(d) {
                continue; // replaced since it was queued (a timerfd's id reused)
            }
            let late = now.as_nanos() - d.as_nanos();
            let n = late.checked_div(t.interval).map_or(1, |k| k + 1);
            t.deadline = (t.interval > 0).then(|| SimTime(d.as_nanos() + n * t.interval));
            if let Some(next) = t.deadline {
                self.timer_queue.insert((next, p, id)); // after now: not fired again here
            }
            t.overrun = (n - 1).min(i32::MAX as u64) as i32;
            let overrun = t.overrun;
            match &mut t.notify {
                Notify::Fd { count } => *count += n,
                Notify::Nothing => {}
                &mut Notify::Signal { sig, code, value, to } => {
                    let timer = if code == SI_TIMER { id as i32 } else { 0 };
                    let info =
                        SigInfo { signo: sig, code, timer, overrun, value, ..SigInfo::default() };
                    // A target thread that is gone: the process takes it.
                    let thread = to.and_then(|k| self.live_thread_in_slot(p, k));
                    self.send_signal(p, thread, info);
                }
            }
        }
    }

    /// The live thread of process `p` in slot `k`.
    fn live_thread_in_slot(&self, p: usize, k: usize) -> Option<usize> {
        let t = &self.threads;
        (0..t.len()).find(|&j| t[j].proc == p && t[j].slot == k && t[j].wait != Wait::Gone)
    }

    /// Reads timerfd `fd` of the caller: its expiration count (then 0), or blocks.
    pub(super) fn op_timerfd_read(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let fd = slot.args[0] as i32;
        match self.timerfd_take(c.p, fd) {
            Some(0) if slot.args[1] != 0 => Reply::Ret(-(libc::EAGAIN as i64)),
            Some(0) => Reply::Block(Wait::TimerfdRead { fd }),
            Some(n) => Reply::Ret(n as i64),
            None => Reply::Ret(-(libc::EBADF as i64)),
        }
    }

    fn timerfd_take(&mut self, p: usize, fd: i32) -> Option<u64> {
        match &mut self.timers.get_mut(&(p, TIMERFD_BASE + fd as i64))?.notify {
            Notify::Fd { count } => Some(std::mem::take(count)),
            _ => None,
        }
    }

    /// A reader blocked on timerfd `fd` gets the count once it is non-zero.
    pub(super) fn wake_timerfd(&mut self, t: usize, fd: i32) {
        let p = self.threads[t].proc;
        match self.timerfd_take(p, fd) {
            Some(0) => {}
            Some(n) => self.answer(t, n as i64),
            None => self.answer(t, -(libc::EBADF as i64)),
        }
    }

    /// Whether `fd` of process `p` is a timerfd, and if so whether it is readable.
    pub(super) fn timerfd_readable(&self, p: usize, fd: i32) -> Option<bool> {
        match self.timers.get(&(p, TIMERFD_BASE + fd as i64))?.notify {
            Notify::Fd { count } => Some(count > 0),
            _ => None,
        }
    }
}
