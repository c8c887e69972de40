//! Signals in virtual time: each process's dispositions (as the shim reports them), each
//! thread's mask and pending signals, sending (`kill`, `raise`, `pthread_kill`, timers), the
//! choice of the thread a process-directed signal goes to (as Linux: the main thread if it
//! does not block it, else the first thread in creation order that does not), interrupting
//! that thread's blocking call, and handing pending signals over with the next answer a thread
//! gets ([`World::attach_signals`], the one delivery point). The shim runs handlers and
//! default actions; the host decides what is delivered, to whom and when.

use super::*;

const NSIG: usize = 64;

fn bit(sig: i32) -> u64 {
    1u64 << (sig - 1)
}

/// What the process does with a signal.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
enum Disp {
    #[default]
    Default,
    Ignore,
    Handler,
}

/// Signals whose default action is to do nothing.
fn ignored_by_default(sig: i32) -> bool {
    matches!(sig, libc::SIGCHLD | libc::SIGCONT | libc::SIGURG | libc::SIGWINCH)
}

/// Signals whose default action stops the process.
fn stops_by_default(sig: i32) -> bool {
    matches!(sig, libc::SIGSTOP | libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU)
}

/// The first real-time signal number (the kernel's; glibc keeps 32 and 33 for itself).
const SIGRT_FIRST: i32 = 32;
/// At most this many instances of one real-time signal wait (Linux bounds them by
/// `RLIMIT_SIGPENDING`); later ones are dropped.
const RT_QUEUE_MAX: usize = 4096;

/// Signals sent and not yet taken, by number: one instance of a standard signal (another sent
/// meanwhile merges into it), every instance of a real-time one, in the order sent, as Linux
/// keeps them.
#[derive(Default)]
pub(super) struct Pending(BTreeMap<i32, std::collections::VecDeque<SigInfo>>);

impl Pending {
    fn add(&mut self, sig: i32, info: SigInfo) {
        let q = self.0.entry(sig).or_default();
        if q.is_empty() || (sig >= SIGRT_FIRST && q.len() < RT_QUEUE_MAX) {
            q.push_back(info);
        }
    }

    /// The oldest instance of `sig`, taken.
    fn take(&mut self, sig: i32) -> Option<SigInfo> {
        let q = self.0.get_mut(&sig)?;
        let info = q.pop_front();
        if q.is_empty() {
            self.0.remove(&sig);
        }
        info
    }

    /// Discards every instance of `sig`.
    fn remove(&mut self, sig: &i32) {
        self.0.remove(sig);
    }

    fn keys(&self) -> impl Iterator<Item = &i32> {
        self.0.keys()
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A process's signal state: dispositions and the signals sent to it that no thread has
/// taken yet (every thread blocks them).
pub(super) struct ProcSignals {
    disp: [Disp; NSIG + 1],
    pending: Pending,
    /// The process's signalfds and their masks.
    signalfds: BTreeMap<i32, u64>,
}

impl Default for ProcSignals {
    fn default() -> ProcSignals {
        ProcSignals {
            disp: [Disp::Default; NSIG + 1],
            pending: Pending::default(),
            signalfds: BTreeMap::new(),
        }
    }
}

/// A thread's signal state.
#[derive(Default)]
pub(super) struct ThreadSignals {
    mask: u64,
    pending: Pending,
    /// The mask to go back to once the signals of the next answer are attached (sigsuspend).
    restore: Option<u64>,
}

impl ThreadSignals {
    /// The state a new thread starts with: its creator's mask, nothing pending.
    pub(super) fn inherit(from: &ThreadSignals) -> ThreadSignals {
        ThreadSignals { mask: from.mask, ..ThreadSignals::default() }
    }
}

impl ProcSignals {
    /// A forked child's: its parent's dispositions, nothing pending, no signalfds of its own
    /// (a signalfd inherited across fork is not simulated).
    pub(super) fn forked(&self) -> ProcSignals {
        ProcSignals { disp: self.disp, ..ProcSignals::default() }
    }

    /// After exec: handled signals go back to their default action.
    pub(super) fn exec(&mut self) {
        for d in self.disp.iter_mut() {
            if *d == Disp::Handler {
                *d = Disp::Default;
            }
        }
    }

    fn ignores(&self, sig: i32) -> bool {
        sig != libc::SIGKILL
            && match self.disp[sig as usize] {
                Disp::Ignore => true,
                Disp::Default => ignored_by_default(sig),
                Disp::Handler => false,
            }
    }
}

impl World<'_> {
    pub(super) fn op_sigaction(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let sig = slot.args[0] as i32;
        if !(1..=NSIG as i32).contains(&sig) {
            return Reply::Ret(-(libc::EINVAL as i64));
        }
        let disp = match slot.args[1] {
            SIGDISP_IGNORE => Disp::Ignore,
            SIGDISP_HANDLER => Disp::Handler,
            _ => Disp::Default,
        };
        self.procs[c.p].sig.disp[sig as usize] = disp;
        if self.procs[c.p].sig.ignores(sig) {
            // As Linux: setting a signal to be ignored discards its pending instances.
            self.procs[c.p].sig.pending.remove(&sig);
            for t in self.threads.iter_mut().filter(|t| t.proc == c.p) {
                t.sig.pending.remove(&sig);
            }
        }
        Reply::Ret(0)
    }

    pub(super) fn op_sigmask(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let set = slot.args[1] as u64 & !(bit(libc::SIGKILL) | bit(libc::SIGSTOP));
        let ts = &mut self.threads[c.t].sig;
        let old = ts.mask;
        ts.mask = match slot.args[0] as i32 {
            -1 => old,
            libc::SIG_BLOCK => old | set,
            libc::SIG_UNBLOCK => old & !set,
            libc::SIG_SETMASK => set,
            _ => return Reply::Ret(-(libc::EINVAL as i64)),
        };
        slot.args[1] = old as i64;
        slot.args[2] = ts.mask as i64;
        slot.args[3] = self.pending_set(c.t) as i64;
        Reply::Ret(0)
    }

    /// Signals pending for thread `t`: its own and its process's.
    fn pending_set(&self, t: usize) -> u64 {
        let p = self.threads[t].proc;
        let own = self.threads[t].sig.pending.keys();
        own.chain(self.procs[p].sig.pending.keys()).fold(0, |m, &s| m | bit(s))
    }

    pub(super) fn op_kill(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let sig = slot.args[1] as i32;
        if !(0..=NSIG as i32).contains(&sig) {
            return Reply::Ret(-(libc::EINVAL as i64));
        }
        let me = self.procs[c.p].vpid as i32;
        let (p, t, code) = match slot.args[2] {
            SIGTO_SELF => (c.p, Some(c.t), SI_TKILL),
            SIGTO_THREAD => {
                let k = slot.args[0] as usize;
                let found = (0..self.threads.len()).find(|&j| {
                    self.threads[j].proc == c.p
                        && self.threads[j].slot == k
                        && self.threads[j].wait != Wait::Gone
                });
                let Some(j) = found else { return Reply::Ret(-(libc::ESRCH as i64)) };
                (c.p, Some(j), SI_TKILL)
            }
            _ => {
                let pid = slot.args[0] as i32;
                if pid <= 0 {
                    return self.kill_group(c, -pid, sig);
                }
                let found = (0..self.procs.len()).rev().find(|&q| {
                    let x = &self.procs[q];
                    x.node == c.node && x.vpid as i32 == pid && (x.alive || x.zombie)
                });
                let Some(q) = found else { return Reply::Ret(-(libc::ESRCH as i64)) };
                if !self.procs[q].alive {
                    return Reply::Ret(0); // a zombie: the signal has no effect
                }
                if sig == libc::SIGKILL && q != c.p {
                    self.kill_now(q); // ends now, in virtual time
                    return Reply::Ret(0);
                }
                (q, None, SI_USER)
            }
        };
        let (code, value) =
            if slot.args[3] == 1 { (SI_QUEUE, slot.args[4] as u64) } else { (code, 0) };
        if sig != 0 {
            let info = SigInfo { signo: sig, code, pid: me, value, ..SigInfo::default() };
            self.send_signal(p, t, info);
        }
        Reply::Ret(0)
    }

    /// `kill(0)` / `kill(-pgid)`: `sig` to every live process of the caller's node in the
    /// group with virtual id `pgid` (0: the caller's own), in the order they were made, the
    /// caller last, as the kernel delivers to the whole group at once. None in it: `ESRCH`.
    /// `kill(-1)` (`pgid` 1): every process of the node but the caller, as every process the
    /// caller may signal but itself and init on a machine (a node has no init).
    fn kill_group(&mut self, c: Caller, pgid: i32, sig: i32) -> Reply {
        let want = if pgid == 0 { self.virtual_group(c.p) } else { pgid as i64 };
        let members: Vec<usize> = (0..self.procs.len())
            .filter(|&q| self.procs[q].alive && self.procs[q].node == c.node)
            .filter(|&q| if pgid == 1 { q != c.p } else { self.virtual_group(q) == want })
            .collect();
        if members.is_empty() {
            return Reply::Ret(-(libc::ESRCH as i64));
        }
        if sig == 0 {
            return Reply::Ret(0);
        }
        let me = self.procs[c.p].vpid as i32;
        let info = SigInfo { signo: sig, code: SI_USER, pid: me, ..SigInfo::default() };
        for &q in members.iter().filter(|&&q| q != c.p) {
            if sig == libc::SIGKILL {
                self.kill_now(q);
            } else {
                self.send_signal(q, None, info);
            }
        }
        if members.contains(&c.p) {
            self.send_signal(c.p, None, info);
        }
        Reply::Ret(0)
    }

    /// Sends `info` to process `p` (to its thread `to`, if given): discarded if ignored, else
    /// pending for the thread that takes it, whose blocking call it interrupts.
    pub(super) fn send_signal(&mut self, p: usize, to: Option<usize>, info: SigInfo) {
        let sig = info.signo;
        if !self.procs[p].alive {
            return;
        }
        let node = self.procs[p].node;
        let blocked_at = to.unwrap_or_else(|| self.main_thread(p));
        let blocked = self.threads[blocked_at].sig.mask & bit(sig) != 0;
        if self.procs[p].sig.ignores(sig) && !blocked {
            return;
        }
        if stops_by_default(sig) && self.procs[p].sig.disp[sig as usize] == Disp::Default {
            self.fail(Outcome::Unsupported {
                detail: format!("node {node}: {}: stopping a process is not simulated", {
                    process::signal_name(sig)
                }),
            });
            return;
        }
        self.event(node, EventKind::Note, None, None, sig as u64, || {
            format!("{} sent (code {})", process::signal_name(sig), info.code)
        });
        if to.is_none() && self.give_to_waiter(p, info) {
            return;
        }
        let target = to.or_else(|| self.taker(p, sig));
        match target {
            Some(t) => {
                self.threads[t].sig.pending.add(sig, info);
                if self.threads[t].sig.mask & bit(sig) == 0 {
                    self.interrupt(t, sig);
                }
            }
            None => {
                self.procs[p].sig.pending.add(sig, info);
            }
        }
    }

    /// The first thread of `p` (its main thread, while it lives).
    fn main_thread(&self, p: usize) -> usize {
        (0..self.threads.len())
            .find(|&t| self.threads[t].proc == p && self.threads[t].wait != Wait::Gone)
            .or_else(|| (0..self.threads.len()).find(|&t| self.threads[t].proc == p))
            .unwrap_or(0)
    }

    /// The thread of `p` that takes a process-directed `sig`: the first live one, in creation
    /// order (the main thread first), that does not block it.
    fn taker(&self, p: usize, sig: i32) -> Option<usize> {
        (0..self.threads.len()).find(|&t| {
            let x = &self.threads[t];
            x.proc == p
                && !matches!(x.wait, Wait::Gone | Wait::Unborn(_) | Wait::Hello)
                && (x.sig.mask & bit(sig) == 0 || sig == libc::SIGKILL)
        })
    }

    /// A thread of `p` in `sigwait` for `info`'s signal takes it at once.
    fn give_to_waiter(&mut self, p: usize, info: SigInfo) -> bool {
        let waiter = (0..self.threads.len()).find(|&t| {
            self.threads[t].proc == p
                && matches!(self.threads[t].wait, Wait::Sigwait { set, .. } if set & bit(info.signo) != 0)
        });
        let Some(t) = waiter else { return false };
        self.answer_sigwait(t, info);
        true
    }

    fn answer_sigwait(&mut self, t: usize, info: SigInfo) {
        let s = self.slot(t);
        // SAFETY: `t` waits for TURN_THREAD; its slot is ours.
        unsafe { std::ptr::write_unaligned((*s).data.as_mut_ptr() as *mut SigInfo, info) };
        self.answer(t, info.signo as i64);
    }

    /// Thread `t` got `sig` (unblocked): if it is blocked in a call that a signal interrupts,
    /// the call answers -EINTR (the shim then runs the handler and returns or restarts it).
    fn interrupt(&mut self, t: usize, sig: i32) {
        let p = self.threads[t].proc;
        if self.procs[p].sig.ignores(sig) {
            return;
        }
        let interruptible = matches!(
            self.threads[t].wait,
            Wait::Sleep(_)
                | Wait::Recv { .. }
                | Wait::Accept { .. }
                | Wait::Poll { .. }
                | Wait::Futex { .. }
                | Wait::Cond { .. }
                | Wait::Mutex(_)
                | Wait::DiskLock { .. }
                | Wait::Join(_)
                | Wait::Suspend
                | Wait::Sigwait { .. }
                | Wait::TimerfdRead { .. }
                | Wait::SignalfdRead { .. }
                | Wait::Child { .. }
        );
        if !interruptible {
            return;
        }
        if let Wait::Child { sel, nowait } = self.threads[t].wait {
            // A wait the signal's own child ended satisfies answers that child, as on Linux
            // (the kernel rescans children before it looks at signals); SIGCHLD's handler runs
            // on the way back, with the answer.
            // SAFETY: `t` waits for TURN_THREAD; its slot is ours.
            let slot = unsafe { &mut *self.slot(t) };
            if let Some(r) = self.wait_result(p, sel, nowait, slot) {
                return self.answer(t, r);
            }
        }
        self.answer(t, -(libc::EINTR as i64));
    }

    pub(super) fn op_sigsuspend(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let mask = slot.args[0] as u64;
        let ts = &mut self.threads[c.t].sig;
        if mask != u64::MAX {
            ts.restore = Some(ts.mask);
            ts.mask = mask & !(bit(libc::SIGKILL) | bit(libc::SIGSTOP));
        }
        if self.deliverable(c.t) != 0 {
            Reply::Ret(-(libc::EINTR as i64))
        } else {
            Reply::Block(Wait::Suspend)
        }
    }

    pub(super) fn op_sigwait(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let set = slot.args[0] as u64;
        let deadline = (slot.args[1] as u64 != u64::MAX).then_some(SimTime(slot.args[1] as u64));
        if let Some(info) = self.take_pending(c.t, set) {
            // SAFETY: the slot is ours while the caller waits for the answer.
            unsafe { std::ptr::write_unaligned(slot.data.as_mut_ptr() as *mut SigInfo, info) };
            return Reply::Ret(info.signo as i64);
        }
        if deadline.is_some_and(|d| d <= self.now) {
            return Reply::Ret(-(libc::EAGAIN as i64));
        }
        Reply::Block(Wait::Sigwait { set, deadline })
    }

    /// A thread in `sigwait` whose deadline has passed (signals reach it in `send_signal`).
    pub(super) fn wake_sigwait(&mut self, t: usize) {
        if let Wait::Sigwait { deadline: Some(d), .. } = self.threads[t].wait {
            if d <= self.now {
                self.answer(t, -(libc::EAGAIN as i64));
            }
        }
    }

    /// Removes and answers the lowest pending signal of `set` for thread `t` (its own first,
    /// then its process's).
    pub(super) fn take_pending(&mut self, t: usize, set: u64) -> Option<SigInfo> {
        let p = self.threads[t].proc;
        let pick = |m: &Pending| m.keys().copied().find(|&s| set & bit(s) != 0);
        if let Some(s) = pick(&self.threads[t].sig.pending) {
            return self.threads[t].sig.pending.take(s);
        }
        let s = pick(&self.procs[p].sig.pending)?;
        self.procs[p].sig.pending.take(s)
    }

    /// Signals thread `t` would take now (pending and not blocked).
    fn deliverable(&self, t: usize) -> u64 {
        self.pending_set(t) & !self.threads[t].sig.mask
    }

    /// The delivery point: before thread `t` gets the turn, the signals pending for it that it
    /// does not block go into its slot with the answer (lowest number first, its own before
    /// its process's, as Linux dequeues them).
    pub(super) fn attach_signals(&mut self, t: usize) {
        let p = self.threads[t].proc;
        if self.threads[t].sig.pending.is_empty() && self.procs[p].sig.pending.is_empty() {
            // The common case, once per hand-off: nothing to deliver.
            if let Some(m) = self.threads[t].sig.restore.take() {
                self.threads[t].sig.mask = m;
            }
            return;
        }
        let mut batch = [SigInfo::default(); SIG_BATCH];
        let mut n = 0;
        while n < SIG_BATCH {
            let open = !self.threads[t].sig.mask;
            let Some(info) = self.take_pending(t, open) else { break };
            batch[n] = info;
            n += 1;
        }
        if let Some(m) = self.threads[t].sig.restore.take() {
            self.threads[t].sig.mask = m;
        }
        if n == 0 {
            return;
        }
        let node = self.procs[self.threads[t].proc].node;
        for info in &batch[..n] {
            self.event(node, EventKind::Note, None, None, info.signo as u64, || {
                format!("{} delivered to thread {t}", process::signal_name(info.signo))
            });
        }
        let s = self.slot(t);
        // SAFETY: `t` waits for TURN_THREAD (not yet handed over); its slot is ours.
        unsafe {
            (&mut (*s).sigs)[..n].copy_from_slice(&batch[..n]);
            (*s).nsig = n as u32;
        }
    }

    pub(super) fn op_signalfd(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let fd = slot.args[0] as i32;
        let fds = &mut self.procs[c.p].sig.signalfds;
        if slot.args[2] == 1 {
            fds.remove(&fd);
        } else {
            fds.insert(fd, slot.args[1] as u64);
        }
        Reply::Ret(0)
    }

    pub(super) fn op_signalfd_read(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let fd = slot.args[0] as i32;
        let max = (slot.args[2].max(1) as usize).min(SIG_BATCH);
        match self.signalfd_take(c.t, fd, max, slot) {
            None => Reply::Ret(-(libc::EBADF as i64)),
            Some(0) if slot.args[1] != 0 => Reply::Ret(-(libc::EAGAIN as i64)),
            Some(0) => Reply::Block(Wait::SignalfdRead { fd, max }),
            Some(n) => Reply::Ret(n as i64),
        }
    }

    /// Takes up to `max` pending signals of signalfd `fd`'s mask for thread `t` into `slot`'s
    /// data; `None` if `fd` is no signalfd of its process.
    fn signalfd_take(&mut self, t: usize, fd: i32, max: usize, slot: &mut Slot) -> Option<usize> {
        let mask = *self.procs[self.threads[t].proc].sig.signalfds.get(&fd)?;
        let mut n = 0;
        while n < max {
            let Some(info) = self.take_pending(t, mask) else { break };
            let at = n * std::mem::size_of::<SigInfo>();
            // SAFETY: `at + size_of::<SigInfo>()` <= SIG_BATCH * 32 bytes, well inside `data`.
            unsafe {
                std::ptr::write_unaligned(slot.data.as_mut_ptr().add(at) as *mut SigInfo, info)
            };
            n += 1;
        }
        Some(n)
    }

    /// A reader blocked on signalfd `fd` takes what is pending once there is something.
    pub(super) fn wake_signalfd(&mut self, t: usize, fd: i32, max: usize, slot: &mut Slot) {
        let ret = match self.signalfd_take(t, fd, max, slot) {
            Some(0) => return,
            Some(n) => n as i64,
            None => -(libc::EBADF as i64),
        };
        slot.ret = ret;
        self.threads[t].wait = Wait::Ready;
    }

    /// Whether `fd` of process `p` is a signalfd, and if so whether a signal of its mask is
    /// pending for the process or any of its threads.
    pub(super) fn signalfd_readable(&self, p: usize, fd: i32) -> Option<bool> {
        let mask = *self.procs[p].sig.signalfds.get(&fd)?;
        let threads = self.threads.iter().filter(|t| t.proc == p);
        let pending = threads
            .flat_map(|t| t.sig.pending.keys())
            .chain(self.procs[p].sig.pending.keys())
            .fold(0, |m, &s| m | bit(s));
        Some(pending & mask != 0)
    }
}
