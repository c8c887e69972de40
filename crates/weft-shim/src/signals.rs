//! Signals in virtual time. The program's dispositions (`sigaction`, `signal`) are recorded
//! here and told to the host; masks (`sigprocmask`, `pthread_sigmask`) and pending signals live
//! in the host, which sends (`kill`, `raise`, `pthread_kill`, `tgkill`, `sigqueue`: `sigsend`), fires timers, picks
//! the thread a signal goes to, and hands it over with an answer (`Slot::sigs`). The shim runs
//! the handler — or the default action — at a deterministic point: when the hooked call that
//! received it returns to the program ([`deliver_queued`], from `Guard::drop`), or, when the
//! signal interrupted a blocking call, before that call returns `EINTR` or is restarted
//! (`SA_RESTART`, as Linux restarts it: [`answered`], from `slot::handoff`).
//!
//! Real signals: the kernel must never deliver an asynchronous signal at a wall-clock moment
//! of its choosing. So every thread keeps the asynchronous signals blocked in the kernel for
//! its whole life ([`isolate`]), and the program's handlers for them are never installed in the
//! kernel: a real `SIGTERM` from outside stays pending and unseen. The synchronous signals
//! (faults, `SIGPIPE`, `SIGABRT` from `abort`, the resource limits' `SIGXCPU`/`SIGXFSZ`,
//! [`KERNEL_SIGNALS`]) are the kernel's: their
//! dispositions and mask bits go to the kernel as asked, and when one is sent virtually the
//! shim raises it for real at the delivery point. `SIGSYS` stays the shim's (the escape trap);
//! glibc's internal signals 32 and 33 pass through untouched.
//!
//! Not modelled: handlers do not nest (a signal that arrives while a handler runs is delivered
//! after it returns), `sa_mask` is not applied while a handler runs, `SA_ONSTACK` runs on the
//! current stack, real-time signals do not queue (one pending instance each).

use crate::prelude::*;
use crate::slot::hooks_open;
use core::cell::{Cell, RefCell};

/// Highest signal number.
const NSIG: usize = 64;

pub(crate) fn bit(sig: c_int) -> u64 {
    1u64 << (sig - 1)
}

/// Signals the kernel keeps: raised synchronously by what the thread itself does, so their
/// timing is already deterministic.
const KERNEL_SIGNALS: u64 = (1 << (libc::SIGILL - 1))
    | (1 << (libc::SIGTRAP - 1))
    | (1 << (libc::SIGABRT - 1))
    | (1 << (libc::SIGBUS - 1))
    | (1 << (libc::SIGFPE - 1))
    | (1 << (libc::SIGSEGV - 1))
    | (1 << (libc::SIGPIPE - 1))
    | (1 << (libc::SIGXFSZ - 1))
    | (1 << (libc::SIGXCPU - 1))
    | (1 << (libc::SIGSYS - 1));
/// glibc's own signals (cancellation, setxid): never blocked, never virtualised.
pub(crate) const GLIBC_SIGNALS: u64 = (1 << 31) | (1 << 32);
const UNBLOCKABLE: u64 = (1 << (libc::SIGKILL - 1)) | (1 << (libc::SIGSTOP - 1));
/// What every thread keeps blocked in the kernel.
const KERNEL_BLOCKED: u64 = !(KERNEL_SIGNALS | GLIBC_SIGNALS | UNBLOCKABLE);

/// The program's disposition of each signal (index = signal number): handler address
/// (`SIG_DFL` = 0, `SIG_IGN` = 1), `sa_flags`, and the first 64 bits of `sa_mask`.
static HANDLER: [AtomicU64; NSIG + 1] = [const { AtomicU64::new(0) }; NSIG + 1];
static FLAGS: [AtomicU64; NSIG + 1] = [const { AtomicU64::new(0) }; NSIG + 1];
static MASK: [AtomicU64; NSIG + 1] = [const { AtomicU64::new(0) }; NSIG + 1];

const QUEUE_MAX: usize = 64;

#[derive(Clone, Copy)]
struct Queue {
    n: usize,
    items: [SigInfo; QUEUE_MAX],
}

thread_local! {
    /// Signals handed over by the host and not yet delivered.
    static QUEUED: Cell<usize> = const { Cell::new(0) };
    static QUEUE: RefCell<Queue> =
        const { RefCell::new(Queue { n: 0, items: [SigInfo { signo: 0, code: 0, pid: 0, timer: 0, overrun: 0, status: 0, value: 0 }; QUEUE_MAX] }) };
    /// Set while handlers run: signals arriving meanwhile wait for the loop in progress.
    static DELIVERING: Cell<bool> = const { Cell::new(false) };
}

/// Blocks the asynchronous signals in the kernel for this thread (threads created later
/// inherit it). Called once, when the shim becomes active.
pub(crate) fn isolate() {
    // SAFETY: pthread_self cannot fail; init runs on the main thread.
    MAIN_THREAD.store(unsafe { libc::pthread_self() } as u64, Ordering::Relaxed);
    set_kernel_mask(0);
}

/// The main thread's `pthread_t` (for `pthread_kill`).
pub(crate) static MAIN_THREAD: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The synchronous signals this thread's program blocks (the kernel's part of its mask).
    static SYNC_BLOCKED: Cell<u64> = const { Cell::new(0) };
}

/// Whether this thread's program blocks `sig` (one of [`KERNEL_SIGNALS`]).
pub(crate) fn program_blocks(sig: c_int) -> bool {
    SYNC_BLOCKED.try_with(|b| b.get() & bit(sig) != 0).unwrap_or(false)
}

/// Sets the kernel's mask for the program's mask `mask`. `SIGSEGV` stays open while the
/// counter traps ([`crate::tsc`]): a blocked `SIGSEGV` from a trapped `rdtsc` would kill the
/// process (dash and exim block every signal around a fork, and glibc's own clock reads then
/// trap); the handler applies the program's block to real faults itself.
fn set_kernel_mask(mask: u64) {
    let mut keep = mask & KERNEL_SIGNALS & !bit(libc::SIGSYS);
    let _ = SYNC_BLOCKED.try_with(|b| b.set(keep));
    if crate::tsc::trapping() {
        keep &= !bit(libc::SIGSEGV);
    }
    let set = KERNEL_BLOCKED | keep;
    let args = [libc::SIG_SETMASK as i64, &set as *const u64 as i64, 0, 8, 0, 0];
    // SAFETY: rt_sigprocmask with a valid 8-byte set and no old set.
    unsafe { sys::raw_ret(libc::SYS_rt_sigprocmask, args) };
}

pub(crate) fn valid(sig: c_int) -> bool {
    (1..=NSIG as c_int).contains(&sig)
}

/// Moves the signals the host handed over with this answer into this thread's queue.
pub(crate) fn take(slot: *mut Slot) {
    // SAFETY: the thread holds the baton: the slot is its own until the next hand-off.
    let s = unsafe { &mut *slot };
    let n = (s.nsig as usize).min(SIG_BATCH);
    s.nsig = 0;
    let _ = QUEUE.try_with(|q| {
        let mut q = q.borrow_mut();
        for info in &s.sigs[..n] {
            if q.n < QUEUE_MAX {
                let k = q.n;
                q.items[k] = *info;
                q.n += 1;
            }
        }
        let _ = QUEUED.try_with(|c| c.set(q.n));
    });
}

/// A forked child starts with no pending signals (POSIX): forgets what the forking thread had
/// queued.
pub(crate) fn forget_queued() {
    let _ = QUEUE.try_with(|q| q.borrow_mut().n = 0);
    let _ = QUEUED.try_with(|c| c.set(0));
}

/// Called by `handoff` when an answer carries signals. Answers the value the call returns, or
/// `None` to make the same request again (a restarted call: its arguments are restored).
pub(crate) fn answered(slot: *mut Slot, op: u32) -> Option<i64> {
    // SAFETY: as in `take`.
    let ret = unsafe { (*slot).ret };
    take(slot);
    if ret != -(libc::EINTR as i64) {
        return Some(ret); // delivered when the hook returns
    }
    // SAFETY: as in `take`; the handlers may use the slot, so the request is kept aside.
    let args = unsafe { (*slot).args };
    let restart = hooks_open(deliver_all);
    // SAFETY: as in `take`.
    unsafe { (*slot).args = args };
    match op {
        OP_MUTEX_WAIT | OP_JOIN => None,
        // A condition variable or a semaphore wakes spuriously: the caller looks again.
        OP_COND_WAIT => Some(0),
        // Linux restarts these with SA_RESTART (a socket with SO_RCVTIMEO: never).
        OP_ACCEPT | OP_TIMERFD_READ | OP_SIGNALFD_READ if restart => None,
        OP_RECVFROM if restart && args[2] == 0 => None,
        // A waiting file lock (F_SETLKW, a blocking flock) too.
        OP_DISK if restart && args[0] == DISK_LOCK && args[5] & LOCK_WAIT != 0 => None,
        _ => Some(ret),
    }
}

/// Whether signals handed over to this thread wait to be delivered.
pub(crate) fn queued() -> bool {
    QUEUED.try_with(|c| c.get()).unwrap_or(0) > 0
}

/// Runs the signals queued for this thread (from `Guard::drop`, when a hooked call returns to
/// the program); keeps `errno` as the call left it, as the kernel does.
pub(crate) fn deliver_queued() {
    if QUEUED.try_with(|c| c.get()).unwrap_or(0) == 0 {
        return;
    }
    // SAFETY: __errno_location returns this thread's errno.
    let errno = unsafe { *libc::__errno_location() };
    deliver_all();
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = errno };
}

/// Delivers every queued signal in turn; answers whether all of them asked for `SA_RESTART`.
fn deliver_all() -> bool {
    if DELIVERING.try_with(|d| d.replace(true)).unwrap_or(true) {
        return false;
    }
    let mut restart = true;
    while let Some(info) = pop() {
        restart &=
            FLAGS[info.signo as usize].load(Ordering::Relaxed) & libc::SA_RESTART as u64 != 0;
        deliver(&info);
    }
    let _ = DELIVERING.try_with(|d| d.set(false));
    restart
}

fn pop() -> Option<SigInfo> {
    QUEUE
        .try_with(|q| {
            let mut q = q.borrow_mut();
            if q.n == 0 {
                return None;
            }
            let first = q.items[0];
            let n = q.n;
            q.items.copy_within(1..n, 0);
            q.n -= 1;
            let _ = QUEUED.try_with(|c| c.set(q.n));
            Some(first)
        })
        .ok()
        .flatten()
}

type Handler1 = extern "C" fn(c_int);
type Handler3 = extern "C" fn(c_int, *mut libc::siginfo_t, *mut c_void);

/// Runs `info`'s handler, or its default action (the host never sends an ignored signal).
fn deliver(info: &SigInfo) {
    let sig = info.signo;
    if !valid(sig) {
        return;
    }
    if bit(sig) & KERNEL_SIGNALS != 0 {
        raise_real(sig); // the kernel applies the program's disposition, synchronously
        return;
    }
    let h = HANDLER[sig as usize].load(Ordering::Relaxed);
    let flags = FLAGS[sig as usize].load(Ordering::Relaxed);
    match h as usize {
        libc::SIG_IGN => {}
        // Ignored by default (the host only sends these when a handler was set, e.g. before
        // an exec reset it).
        libc::SIG_DFL
            if matches!(sig, libc::SIGCHLD | libc::SIGCONT | libc::SIGURG | libc::SIGWINCH) => {}
        libc::SIG_DFL => terminate(sig),
        f => {
            if flags & libc::SA_RESETHAND as u64 != 0 {
                HANDLER[sig as usize].store(0, Ordering::Relaxed);
                tell_host(sig, SIGDISP_DEFAULT, 0);
            }
            let mut si = siginfo(info);
            // SAFETY: a zeroed ucontext_t is a valid (if empty) context to pass.
            let mut uc: libc::ucontext_t = unsafe { core::mem::zeroed() };
            let ctx = &mut uc as *mut libc::ucontext_t as *mut c_void;
            // SAFETY: the program installed `f` with these flags for `sig`.
            unsafe { call_handler(f, flags, sig, &mut si, ctx) };
        }
    }
}

/// A `siginfo_t` as Linux fills it for `info` (x86-64 layout: signo, errno, code, then the
/// union at byte 16: pid/uid for `kill`, timer id/overrun/value for timers).
pub(crate) fn mask_of_set(set: *const libc::sigset_t) -> u64 {
    mask_of(set) & !(UNBLOCKABLE | GLIBC_SIGNALS)
}

fn siginfo(info: &SigInfo) -> libc::siginfo_t {
    let mut raw = [0u32; 32];
    raw[0] = info.signo as u32;
    raw[2] = info.code as u32;
    if info.code == SI_TIMER {
        raw[4] = info.timer as u32;
        raw[5] = info.overrun as u32;
        raw[6] = info.value as u32;
        raw[7] = (info.value >> 32) as u32;
    } else if info.code == SI_USER || info.code == SI_TKILL || info.signo == libc::SIGCHLD {
        raw[4] = info.pid as u32;
        // SAFETY: getuid cannot fail.
        raw[5] = unsafe { libc::getuid() };
        if info.signo == libc::SIGCHLD {
            raw[6] = info.status as u32; // si_status; the child's times stay zero
        }
    } else if info.code == SI_QUEUE {
        raw[4] = info.pid as u32;
        // SAFETY: getuid cannot fail.
        raw[5] = unsafe { libc::getuid() };
        raw[6] = info.value as u32;
        raw[7] = (info.value >> 32) as u32;
    }
    // SAFETY: siginfo_t is 128 bytes of plain data on x86-64, as `raw` is.
    unsafe { core::mem::transmute::<[u32; 32], libc::siginfo_t>(raw) }
}

/// The default action of a terminating signal: the process dies of it, as on Linux (its
/// status says so).
fn terminate(sig: c_int) -> ! {
    let real_sigaction =
        real!(sigaction: fn(c_int, *const libc::sigaction, *mut libc::sigaction) -> c_int);
    // SAFETY: resetting the disposition, unblocking the signal and sending it to this thread.
    unsafe {
        let mut sa: libc::sigaction = core::mem::zeroed();
        sa.sa_sigaction = libc::SIG_DFL;
        real_sigaction(sig, &sa, ptr::null_mut());
        let set = bit(sig);
        let args = [libc::SIG_UNBLOCK as i64, &set as *const u64 as i64, 0, 8, 0, 0];
        sys::raw_ret(libc::SYS_rt_sigprocmask, args);
    }
    raise_real(sig);
    sys::exit_group(128 + sig)
}

/// A `SIGSEGV` that was not the counter's (see `tsc`): the program's disposition, as the
/// kernel would apply it. A handler is called with the kernel's arguments; the default action,
/// or an ignored fault (which the kernel does not let a program ignore), ends the process by
/// the signal: the kernel's default is put back and the fault re-runs, or a sent signal is
/// raised again.
///
/// # Safety
/// From the shim's kernel `SIGSEGV` handler, with its arguments.
pub(crate) unsafe fn run_fault_handler(sig: c_int, info: *mut libc::siginfo_t, ctx: *mut c_void) {
    let h = HANDLER[sig as usize].load(Ordering::Relaxed) as usize;
    let flags = FLAGS[sig as usize].load(Ordering::Relaxed);
    let sent = (*info).si_code <= 0; // SI_USER, SI_TKILL, SI_QUEUE: not a fault
    match h {
        libc::SIG_IGN if sent => {}
        libc::SIG_DFL | libc::SIG_IGN => {
            kernel_default(sig);
            if sent {
                raise_real(sig);
            }
        }
        f => {
            if flags & libc::SA_RESETHAND as u64 != 0 {
                HANDLER[sig as usize].store(0, Ordering::Relaxed);
            }
            call_handler(f, flags, sig, info, ctx);
        }
    }
}

/// Calls the program's handler `f` for `sig` as its `flags` ask: with the siginfo and context
/// (`SA_SIGINFO`) or with the signal number alone.
///
/// # Safety
/// `f` is a handler the program installed with `flags`; `info` and `ctx` are valid.
unsafe fn call_handler(
    f: usize,
    flags: u64,
    sig: c_int,
    info: *mut libc::siginfo_t,
    ctx: *mut c_void,
) {
    if flags & libc::SA_SIGINFO as u64 != 0 {
        core::mem::transmute::<usize, Handler3>(f)(sig, info, ctx);
    } else {
        core::mem::transmute::<usize, Handler1>(f)(sig);
    }
}

/// Puts the kernel's default disposition of `sig` back.
pub(crate) fn kernel_default(sig: c_int) {
    // SAFETY: an all-zero sigaction is valid; SIG_DFL is 0.
    let dfl: libc::sigaction = unsafe { core::mem::zeroed() };
    let real_sigaction =
        real!(sigaction: fn(c_int, *const libc::sigaction, *mut libc::sigaction) -> c_int);
    // SAFETY: libc's sigaction with a valid action.
    unsafe { real_sigaction(sig, &dfl, ptr::null_mut()) };
}

fn raise_real(sig: c_int) {
    // SAFETY: tgkill to this very thread; the kernel delivers before the call returns.
    unsafe {
        let pid = sys::raw_ret(libc::SYS_getpid, [0; 6]);
        let tid = sys::raw_ret(libc::SYS_gettid, [0; 6]);
        sys::raw_ret(libc::SYS_tgkill, [pid, tid, sig as i64, 0, 0, 0]);
    }
}

fn tell_host(sig: c_int, disp: i64, flags: u64) {
    let s = slot();
    s.args[0] = sig as i64;
    s.args[1] = disp;
    s.args[2] = flags as i64;
    // SAFETY: active (callers check) and this thread holds the baton.
    unsafe { handoff(OP_SIGACTION) };
}

fn mask_of(set: *const libc::sigset_t) -> u64 {
    let mut m = 0;
    for sig in 1..=NSIG as c_int {
        // SAFETY: `set` is a valid sigset_t supplied by the caller.
        if unsafe { libc::sigismember(set, sig) } == 1 {
            m |= bit(sig);
        }
    }
    m
}

fn set_of(mask: u64, set: *mut libc::sigset_t) {
    // SAFETY: `set` is a valid sigset_t supplied by the caller.
    unsafe {
        libc::sigemptyset(set);
        for sig in 1..=NSIG as c_int {
            if mask & bit(sig) != 0 && bit(sig) & GLIBC_SIGNALS == 0 {
                libc::sigaddset(set, sig);
            }
        }
    }
}

/// Whether the shim records this signal's disposition (else it goes to the kernel only).
fn virtualised(sig: c_int) -> bool {
    valid(sig) && bit(sig) & (GLIBC_SIGNALS | UNBLOCKABLE) == 0
}

unsafe fn sigaction_sim(
    sig: c_int,
    act: *const libc::sigaction,
    old: *mut libc::sigaction,
) -> c_int {
    if !old.is_null() {
        ptr::write_bytes(old, 0, 1);
        (*old).sa_sigaction = HANDLER[sig as usize].load(Ordering::Relaxed) as usize;
        (*old).sa_flags = FLAGS[sig as usize].load(Ordering::Relaxed) as c_int;
        set_of(MASK[sig as usize].load(Ordering::Relaxed), &mut (*old).sa_mask);
    }
    if act.is_null() {
        return 0;
    }
    let h = (*act).sa_sigaction;
    // SIGSYS and (while the counter is trapped) SIGSEGV stay the shim's in the kernel.
    let shims = sig == libc::SIGSYS || (sig == libc::SIGSEGV && crate::tsc::trapping());
    if bit(sig) & KERNEL_SIGNALS != 0 && !shims {
        let r = real!(sigaction: fn(c_int, *const libc::sigaction, *mut libc::sigaction) -> c_int)(
            sig,
            act,
            ptr::null_mut(),
        );
        if r != 0 {
            return r;
        }
    }
    if sig == libc::SIGCHLD {
        // The kernel keeps the default (children left for the shim's waitpid to reap), or
        // ignores SIGCHLD for real when asked (auto-reaping, as the program expects).
        let mut sa: libc::sigaction = core::mem::zeroed();
        sa.sa_sigaction = if h == libc::SIG_IGN { libc::SIG_IGN } else { libc::SIG_DFL };
        sa.sa_flags = (*act).sa_flags & libc::SA_NOCLDWAIT;
        real!(sigaction: fn(c_int, *const libc::sigaction, *mut libc::sigaction) -> c_int)(
            sig,
            &sa,
            ptr::null_mut(),
        );
    }
    HANDLER[sig as usize].store(h as u64, Ordering::Relaxed);
    FLAGS[sig as usize].store((*act).sa_flags as u64, Ordering::Relaxed);
    MASK[sig as usize].store(mask_of(&(*act).sa_mask), Ordering::Relaxed);
    let disp = match h {
        libc::SIG_DFL => SIGDISP_DEFAULT,
        libc::SIG_IGN => SIGDISP_IGNORE,
        _ => SIGDISP_HANDLER,
    };
    if sig != libc::SIGSYS {
        tell_host(sig, disp, (*act).sa_flags as u64);
    }
    0
}

#[no_mangle]
pub unsafe extern "C" fn sigaction(
    sig: c_int,
    act: *const libc::sigaction,
    old: *mut libc::sigaction,
) -> c_int {
    sigaction_hook(sig, act, old)
}

/// [`sigaction`] itself, for the shim's own callers: a call to the exported symbol may
/// reach a program's own `sigaction` (the BEAM defines `sigaction` on top of `__sigaction`).
pub(crate) unsafe fn sigaction_hook(
    sig: c_int,
    act: *const libc::sigaction,
    old: *mut libc::sigaction,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && virtualised(sig) {
            return sigaction_sim(sig, act, old);
        }
    }
    real!(sigaction: fn(c_int, *const libc::sigaction, *mut libc::sigaction) -> c_int)(
        sig, act, old,
    )
}

/// `signal` and `bsd_signal` (BSD semantics, as glibc: `SA_RESTART`) and `sysv_signal`
/// (one-shot, no masking).
pub(crate) unsafe fn signal_common(
    sig: c_int,
    h: libc::sighandler_t,
    flags: c_int,
) -> libc::sighandler_t {
    let mut sa: libc::sigaction = core::mem::zeroed();
    sa.sa_sigaction = h;
    sa.sa_flags = flags;
    libc::sigemptyset(&mut sa.sa_mask);
    if flags & libc::SA_NODEFER == 0 && valid(sig) {
        libc::sigaddset(&mut sa.sa_mask, sig);
    }
    let mut old: libc::sigaction = core::mem::zeroed();
    if sigaction_hook(sig, &sa, &mut old) != 0 {
        return libc::SIG_ERR;
    }
    old.sa_sigaction
}

#[no_mangle]
pub unsafe extern "C" fn signal(sig: c_int, h: libc::sighandler_t) -> libc::sighandler_t {
    signal_common(sig, h, libc::SA_RESTART)
}

#[no_mangle]
pub unsafe extern "C" fn bsd_signal(sig: c_int, h: libc::sighandler_t) -> libc::sighandler_t {
    signal_common(sig, h, libc::SA_RESTART)
}

#[no_mangle]
pub unsafe extern "C" fn sysv_signal(sig: c_int, h: libc::sighandler_t) -> libc::sighandler_t {
    signal_common(sig, h, libc::SA_RESETHAND | libc::SA_NODEFER)
}

/// Changes (or reads) this thread's mask in the host; answers the old mask, or `EINVAL`.
unsafe fn mask_sim(how: c_int, set: *const libc::sigset_t) -> Result<u64, c_int> {
    let s = slot();
    if set.is_null() {
        s.args[0] = -1;
        s.args[1] = 0;
    } else {
        if ![libc::SIG_BLOCK, libc::SIG_UNBLOCK, libc::SIG_SETMASK].contains(&how) {
            return Err(libc::EINVAL);
        }
        s.args[0] = how as i64;
        s.args[1] = (mask_of(set) & !(UNBLOCKABLE | GLIBC_SIGNALS)) as i64;
    }
    let r = handoff(OP_SIGMASK);
    if r < 0 {
        return Err((-r) as c_int);
    }
    let old = slot().args[1] as u64;
    let new = slot().args[2] as u64;
    set_kernel_mask(new);
    Ok(old)
}

#[no_mangle]
pub unsafe extern "C" fn pthread_sigmask(
    how: c_int,
    set: *const libc::sigset_t,
    old: *mut libc::sigset_t,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            return match mask_sim(how, set) {
                Ok(m) => {
                    if !old.is_null() {
                        set_of(m, old);
                    }
                    0
                }
                Err(e) => e,
            };
        }
    }
    real!(pthread_sigmask: fn(c_int, *const libc::sigset_t, *mut libc::sigset_t) -> c_int)(
        how, set, old,
    )
}

#[no_mangle]
pub unsafe extern "C" fn sigprocmask(
    how: c_int,
    set: *const libc::sigset_t,
    old: *mut libc::sigset_t,
) -> c_int {
    sigprocmask_hook(how, set, old)
}

/// [`sigprocmask`] itself, for the shim's own callers: a call to the exported symbol may
/// reach a program's own `sigprocmask` (the BEAM defines `sigaction` on top of `__sigaction`).
pub(crate) unsafe fn sigprocmask_hook(
    how: c_int,
    set: *const libc::sigset_t,
    old: *mut libc::sigset_t,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            return match mask_sim(how, set) {
                Ok(m) => {
                    if !old.is_null() {
                        set_of(m, old);
                    }
                    0
                }
                Err(e) => ret_errno(-(e as i64)) as c_int,
            };
        }
    }
    real!(sigprocmask: fn(c_int, *const libc::sigset_t, *mut libc::sigset_t) -> c_int)(
        how, set, old,
    )
}

#[no_mangle]
pub unsafe extern "C" fn sigpending(set: *mut libc::sigset_t) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            let s = slot();
            s.args[0] = -1;
            handoff(OP_SIGMASK);
            set_of(slot().args[3] as u64, set);
            return 0;
        }
    }
    real!(sigpending: fn(*mut libc::sigset_t) -> c_int)(set)
}

/// Waits for any signal with the mask `mask` meanwhile; -1/EINTR once one was delivered.
unsafe fn suspend(mask: u64) -> c_int {
    slot().args[0] = mask as i64;
    ret_errno(handoff(OP_SIGSUSPEND)) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn sigsuspend(set: *const libc::sigset_t) -> c_int {
    sigsuspend_hook(set)
}

/// [`sigsuspend`] itself, for the shim's own callers: a call to the exported symbol may
/// reach a program's own `sigsuspend` (the BEAM defines `sigaction` on top of `__sigaction`).
pub(crate) unsafe fn sigsuspend_hook(set: *const libc::sigset_t) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            return suspend(mask_of(set) & !(UNBLOCKABLE | GLIBC_SIGNALS));
        }
    }
    real!(sigsuspend: fn(*const libc::sigset_t) -> c_int)(set)
}

#[no_mangle]
pub unsafe extern "C" fn pause() -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            return suspend(u64::MAX); // u64::MAX: keep the thread's own mask
        }
    }
    real!(pause: fn() -> c_int)()
}

/// Takes a pending signal of `set`, waiting until `deadline`; answers it or -errno.
unsafe fn wait_sim(set: *const libc::sigset_t, deadline: u64, info: *mut libc::siginfo_t) -> i64 {
    let s = slot();
    s.args[0] = mask_of(set) as i64;
    s.args[1] = deadline as i64;
    let r = handoff(OP_SIGWAIT);
    if r > 0 && !info.is_null() {
        let got = ptr::read_unaligned(slot().data.as_ptr() as *const SigInfo);
        *info = siginfo(&got);
    }
    r
}

#[no_mangle]
pub unsafe extern "C" fn sigwait(set: *const libc::sigset_t, sig: *mut c_int) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            let r = wait_sim(set, u64::MAX, ptr::null_mut());
            if r < 0 {
                return (-r) as c_int;
            }
            *sig = r as c_int;
            return 0;
        }
    }
    real!(sigwait: fn(*const libc::sigset_t, *mut c_int) -> c_int)(set, sig)
}

#[no_mangle]
pub unsafe extern "C" fn sigwaitinfo(
    set: *const libc::sigset_t,
    info: *mut libc::siginfo_t,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            return ret_errno(wait_sim(set, u64::MAX, info)) as c_int;
        }
    }
    real!(sigwaitinfo: fn(*const libc::sigset_t, *mut libc::siginfo_t) -> c_int)(set, info)
}

#[no_mangle]
pub unsafe extern "C" fn sigtimedwait(
    set: *const libc::sigset_t,
    info: *mut libc::siginfo_t,
    timeout: *const libc::timespec,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            let deadline = if timeout.is_null() {
                u64::MAX
            } else {
                crate::time::now_ns().saturating_add(crate::time::ts_ns(&*timeout))
            };
            return ret_errno(wait_sim(set, deadline, info)) as c_int;
        }
    }
    real!(sigtimedwait: fn(
        *const libc::sigset_t, *mut libc::siginfo_t, *const libc::timespec
    ) -> c_int)(set, info, timeout)
}
