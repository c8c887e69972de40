//! Signal delivery in virtual time: the one place where a signal the host raised for this
//! process (a child's exit, a `kill` from another process of the node) reaches the program.
//!
//! The host marks signals pending for a process and hands them over with the answer to one of
//! its threads (`Slot::signals`); the shim runs them when that thread's outermost hooked call
//! returns (`Guard` drop), so a handler runs at the same point of the program in every run.
//! `SIGCHLD` is virtual: the program's handler is kept here, the kernel's disposition stays
//! default (ignored), so the real `SIGCHLD` of a child's exit, which arrives at a wall-clock
//! moment, is never seen; the host raises the virtual one when it sees the child end. Any
//! other signal is raised for real on the calling thread (`tgkill`), where the kernel runs its
//! handler, or its default action, before the call returns.
//!
//! Not modelled: per-thread signal masks (a pending signal goes to the next thread of the
//! process the host answers), `siginfo` contents beyond the signal number and `CLD_EXITED`.

use crate::prelude::*;
use core::cell::UnsafeCell;

/// Signals delivered by the host and not yet run (bit `1 << signo`).
static PENDING: AtomicU64 = AtomicU64::new(0);

/// The program's disposition of each virtual signal (only `SIGCHLD`).
struct Actions(UnsafeCell<libc::sigaction>);

// SAFETY: written only by the thread holding the baton (one simulated thread runs at a time),
// read by the same discipline.
unsafe impl Sync for Actions {}

// SAFETY: all-zero is a valid sigaction (SIG_DFL, empty mask, no flags).
static SIGCHLD_ACTION: Actions = Actions(UnsafeCell::new(unsafe { core::mem::zeroed() }));

pub(crate) fn add_pending(bits: u64) {
    PENDING.fetch_or(bits, Ordering::AcqRel);
}

/// A forked child starts with no pending signals (POSIX).
pub(crate) fn forget_pending() {
    PENDING.store(0, Ordering::Release);
}

fn is_handler(h: libc::sighandler_t) -> bool {
    h != libc::SIG_DFL && h != libc::SIG_IGN && h != libc::SIG_ERR
}

/// Runs every pending signal, lowest number first. Called as a hooked call returns.
pub(crate) fn deliver_pending() {
    if PENDING.load(Ordering::Acquire) == 0 {
        return;
    }
    let bits = PENDING.swap(0, Ordering::AcqRel);
    // SAFETY: errno of this thread, saved around handlers as the kernel's delivery does.
    let saved = unsafe { *libc::__errno_location() };
    for sig in 1..64 {
        if bits & (1u64 << sig) != 0 {
            // SAFETY: delivering outside any hook, on the thread that holds the baton.
            unsafe { deliver(sig) };
        }
    }
    set_errno(saved);
}

unsafe fn deliver(sig: c_int) {
    if sig != libc::SIGCHLD {
        let pid = sys::raw(libc::SYS_getpid, [0; 6]);
        let tid = sys::raw(libc::SYS_gettid, [0; 6]);
        sys::raw(libc::SYS_tgkill, [pid, tid, sig as i64, 0, 0, 0]);
        return;
    }
    let act = &mut *SIGCHLD_ACTION.0.get();
    let h = act.sa_sigaction;
    if !is_handler(h) {
        return;
    }
    let flags = act.sa_flags;
    if flags & libc::SA_RESETHAND != 0 {
        act.sa_sigaction = libc::SIG_DFL;
    }
    if flags & libc::SA_SIGINFO != 0 {
        let mut info: libc::siginfo_t = core::mem::zeroed();
        info.si_signo = sig;
        info.si_code = libc::CLD_EXITED;
        let f: extern "C" fn(c_int, *mut libc::siginfo_t, *mut c_void) = core::mem::transmute(h);
        f(sig, &mut info, ptr::null_mut());
    } else {
        let f: extern "C" fn(c_int) = core::mem::transmute(h);
        f(sig);
    }
}

/// Sets the virtual disposition of `sig` (callers checked it is virtual) and tells the host.
unsafe fn set_virtual(sig: c_int, act: *const libc::sigaction, old: *mut libc::sigaction) {
    let cur = &mut *SIGCHLD_ACTION.0.get();
    if !old.is_null() {
        *old = *cur;
    }
    if act.is_null() {
        return;
    }
    *cur = *act;
    // The kernel keeps the default (SIGCHLD ignored, children left to be reaped), or ignores
    // it for real when asked (auto-reaping, as the program expects).
    let mut real: libc::sigaction = core::mem::zeroed();
    real.sa_sigaction =
        if cur.sa_sigaction == libc::SIG_IGN { libc::SIG_IGN } else { libc::SIG_DFL };
    real!(sigaction: fn(c_int, *const libc::sigaction, *mut libc::sigaction) -> c_int)(
        sig,
        &real,
        ptr::null_mut(),
    );
    let s = slot();
    s.args[0] = sig as i64;
    s.args[1] = is_handler(cur.sa_sigaction) as i64;
    handoff(OP_SIGNAL_HANDLER);
}

#[no_mangle]
pub unsafe extern "C" fn sigaction(
    sig: c_int,
    act: *const libc::sigaction,
    old: *mut libc::sigaction,
) -> c_int {
    if sig == libc::SIGCHLD {
        if let Some(_g) = Guard::enter() {
            if active() {
                set_virtual(sig, act, old);
                return 0;
            }
        }
    }
    real!(sigaction: fn(c_int, *const libc::sigaction, *mut libc::sigaction) -> c_int)(
        sig, act, old,
    )
}

#[no_mangle]
pub unsafe extern "C" fn signal(sig: c_int, handler: libc::sighandler_t) -> libc::sighandler_t {
    if sig == libc::SIGCHLD {
        if let Some(_g) = Guard::enter() {
            if active() {
                // glibc's signal() has BSD semantics: SA_RESTART, the handler stays.
                let mut act: libc::sigaction = core::mem::zeroed();
                act.sa_sigaction = handler;
                act.sa_flags = libc::SA_RESTART;
                let mut old: libc::sigaction = core::mem::zeroed();
                set_virtual(sig, &act, &mut old);
                return old.sa_sigaction;
            }
        }
    }
    real!(signal: fn(c_int, libc::sighandler_t) -> libc::sighandler_t)(sig, handler)
}
