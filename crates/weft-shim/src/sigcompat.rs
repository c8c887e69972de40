//! glibc's older signal entry points — BSD masks (`sigblock`, `sigsetmask`, `siggetmask`,
//! `sigpause`), System V dispositions (`sighold`, `sigrelse`, `sigignore`, `sigset`),
//! `siginterrupt` and the aliases (`__sigaction`, `__sigsuspend`, `__sysv_signal`, `gsignal`,
//! `ssignal`) — on the simulated signal state. glibc implements each with its own internal
//! calls, which no hook sees: dash's `wait` builtin unblocks SIGCHLD with `sigsetmask(0)`,
//! so the host still counted SIGCHLD blocked, never delivered it, and the shell slept in
//! `sigsuspend` for good. Each is written here with the hooked public calls, which pass
//! through to libc when the shim is not active.

use crate::prelude::*;
// The shim's own entry points, never the exported symbols, which a program may define over
// glibc's (the BEAM's `sigaction` calls `__sigaction`: through the symbol, that looped).
use crate::signals::{sigaction_hook as sigaction, signal_common};
use crate::signals::{sigprocmask_hook as sigprocmask, sigsuspend_hook as sigsuspend};
use crate::sigsend::raise_hook as raise;

/// glibc's `SIG_HOLD` (System V): "add to the mask" as a disposition.
const SIG_HOLD: libc::sighandler_t = 2;

/// A BSD mask (bit `sig - 1` for signals 1 to 32) as a `sigset_t`.
unsafe fn set_of_bsd(mask: c_int) -> libc::sigset_t {
    let mut set: libc::sigset_t = core::mem::zeroed();
    libc::sigemptyset(&mut set);
    for sig in 1..=32 {
        if mask as u32 & (1u32 << (sig - 1)) != 0 {
            libc::sigaddset(&mut set, sig);
        }
    }
    set
}

/// The BSD mask of a `sigset_t` (signals 1 to 32).
unsafe fn bsd_of_set(set: &libc::sigset_t) -> c_int {
    (1..=32).filter(|&s| libc::sigismember(set, s) == 1).fold(0u32, |m, s| m | 1 << (s - 1))
        as c_int
}

/// `sigprocmask(how, mask)` for a BSD mask: the old one, or -1.
unsafe fn bsd_mask(how: c_int, mask: c_int) -> c_int {
    let set = set_of_bsd(mask);
    let mut old: libc::sigset_t = core::mem::zeroed();
    if sigprocmask(how, &set, &mut old) < 0 {
        return -1;
    }
    bsd_of_set(&old)
}

#[no_mangle]
pub unsafe extern "C" fn sigblock(mask: c_int) -> c_int {
    bsd_mask(libc::SIG_BLOCK, mask)
}

#[no_mangle]
pub unsafe extern "C" fn sigsetmask(mask: c_int) -> c_int {
    bsd_mask(libc::SIG_SETMASK, mask)
}

#[no_mangle]
pub unsafe extern "C" fn siggetmask() -> c_int {
    bsd_mask(libc::SIG_BLOCK, 0)
}

/// Blocks or unblocks one signal; the mask before in `old`.
unsafe fn one(how: c_int, sig: c_int, old: &mut libc::sigset_t) -> c_int {
    let mut set: libc::sigset_t = core::mem::zeroed();
    libc::sigemptyset(&mut set);
    if libc::sigaddset(&mut set, sig) < 0 {
        return -1;
    }
    sigprocmask(how, &set, old)
}

#[no_mangle]
pub unsafe extern "C" fn sighold(sig: c_int) -> c_int {
    one(libc::SIG_BLOCK, sig, &mut core::mem::zeroed())
}

#[no_mangle]
pub unsafe extern "C" fn sigrelse(sig: c_int) -> c_int {
    one(libc::SIG_UNBLOCK, sig, &mut core::mem::zeroed())
}

#[no_mangle]
pub unsafe extern "C" fn sigignore(sig: c_int) -> c_int {
    let mut sa: libc::sigaction = core::mem::zeroed();
    sa.sa_sigaction = libc::SIG_IGN;
    sigaction(sig, &sa, ptr::null_mut())
}

/// System V `sigset`: `SIG_HOLD` blocks `sig`; another disposition is set and `sig` is
/// unblocked. Answers `SIG_HOLD` if `sig` was blocked, else the disposition before.
#[no_mangle]
pub unsafe extern "C" fn sigset(sig: c_int, disp: libc::sighandler_t) -> libc::sighandler_t {
    let mut before: libc::sigaction = core::mem::zeroed();
    let mut old: libc::sigset_t = core::mem::zeroed();
    if disp == SIG_HOLD {
        if sigaction(sig, ptr::null(), &mut before) < 0 || one(libc::SIG_BLOCK, sig, &mut old) < 0 {
            return libc::SIG_ERR;
        }
    } else {
        let mut sa: libc::sigaction = core::mem::zeroed();
        sa.sa_sigaction = disp;
        if sigaction(sig, &sa, &mut before) < 0 || one(libc::SIG_UNBLOCK, sig, &mut old) < 0 {
            return libc::SIG_ERR;
        }
    }
    if libc::sigismember(&old, sig) == 1 {
        SIG_HOLD
    } else {
        before.sa_sigaction
    }
}

/// `__sigpause`: waits for a signal with the mask the thread has less `sig` (`is_sig`, the XSI
/// form) or with the BSD mask `sig_or_mask`.
#[no_mangle]
pub unsafe extern "C" fn __sigpause(sig_or_mask: c_int, is_sig: c_int) -> c_int {
    let mut set: libc::sigset_t = core::mem::zeroed();
    if is_sig != 0 {
        if sigprocmask(libc::SIG_BLOCK, ptr::null(), &mut set) < 0
            || libc::sigdelset(&mut set, sig_or_mask) < 0
        {
            return -1;
        }
    } else {
        set = set_of_bsd(sig_or_mask);
    }
    sigsuspend(&set)
}

#[no_mangle]
pub unsafe extern "C" fn sigpause(mask: c_int) -> c_int {
    __sigpause(mask, 0)
}

#[no_mangle]
pub unsafe extern "C" fn __xpg_sigpause(sig: c_int) -> c_int {
    __sigpause(sig, 1)
}

#[no_mangle]
pub unsafe extern "C" fn __sigsuspend(set: *const libc::sigset_t) -> c_int {
    sigsuspend(set)
}

#[no_mangle]
pub unsafe extern "C" fn __sigaction(
    sig: c_int,
    act: *const libc::sigaction,
    old: *mut libc::sigaction,
) -> c_int {
    sigaction(sig, act, old)
}

/// `siginterrupt(sig, 1)`: `sig` interrupts blocking calls (no `SA_RESTART`); 0 restarts them.
#[no_mangle]
pub unsafe extern "C" fn siginterrupt(sig: c_int, interrupt: c_int) -> c_int {
    let mut sa: libc::sigaction = core::mem::zeroed();
    if sigaction(sig, ptr::null(), &mut sa) < 0 {
        return -1;
    }
    if interrupt != 0 {
        sa.sa_flags &= !libc::SA_RESTART;
    } else {
        sa.sa_flags |= libc::SA_RESTART;
    }
    sigaction(sig, &sa, ptr::null_mut())
}

#[no_mangle]
pub unsafe extern "C" fn __sysv_signal(sig: c_int, h: libc::sighandler_t) -> libc::sighandler_t {
    signal_common(sig, h, libc::SA_RESETHAND | libc::SA_NODEFER)
}

#[no_mangle]
pub unsafe extern "C" fn ssignal(sig: c_int, h: libc::sighandler_t) -> libc::sighandler_t {
    signal_common(sig, h, libc::SA_RESTART)
}

#[no_mangle]
pub unsafe extern "C" fn gsignal(sig: c_int) -> c_int {
    raise(sig)
}
