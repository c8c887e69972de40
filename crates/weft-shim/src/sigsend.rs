//! Sending signals: `raise`, `pthread_kill`, `tgkill`, `sigqueue` and `pthread_sigqueue` (and
//! `kill`'s path, [`send`]) name their target by virtual pid or thread and go through the host,
//! which picks the receiving thread and queues the signal (`signals` delivers it). The kernel's
//! versions would have gone to whatever real process or thread has that number.

use crate::prelude::*;
use crate::signals::{bit, valid, GLIBC_SIGNALS, MAIN_THREAD};

/// Sends `sig` through the host (`to` = SIGTO_*); libc's convention.
pub(crate) unsafe fn send(target: i64, sig: c_int, to: i64) -> c_int {
    send_value(target, sig, to, None)
}

/// [`send`], with `sigqueue`'s value (`SI_QUEUE`) when given.
unsafe fn send_value(target: i64, sig: c_int, to: i64, value: Option<u64>) -> c_int {
    if sig != 0 && !valid(sig) {
        set_errno(libc::EINVAL);
        return -1;
    }
    if bit(sig.max(1)) & GLIBC_SIGNALS != 0 && sig != 0 {
        unsupported(b"kill(): glibc's internal signals 32/33 are not simulated", -1, 0);
    }
    let s = slot();
    s.args[0] = target;
    s.args[1] = sig as i64;
    s.args[2] = to;
    s.args[3] = value.is_some() as i64;
    s.args[4] = value.unwrap_or(0) as i64;
    ret_errno(handoff(OP_KILL)) as c_int
}

/// `sigqueue`: a signal with a value (`si_code` `SI_QUEUE`) to a process by virtual pid; the
/// kernel's would have gone to whatever real process has that number.
#[no_mangle]
pub unsafe extern "C" fn sigqueue(pid: libc::pid_t, sig: c_int, value: libc::sigval) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            let v = Some(value.sival_ptr as u64);
            return if pid <= 0 {
                ret_errno(-(libc::ESRCH as i64)) as c_int // no process has that number
            } else {
                send_value(pid as i64, sig, SIGTO_PROCESS, v)
            };
        }
    }
    real!(sigqueue: fn(libc::pid_t, c_int, libc::sigval) -> c_int)(pid, sig, value)
}

/// `pthread_sigqueue`: [`sigqueue`] to a thread of this process.
#[no_mangle]
pub unsafe extern "C" fn pthread_sigqueue(
    t: libc::pthread_t,
    sig: c_int,
    value: libc::sigval,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            let v = Some(value.sival_ptr as u64);
            let r = match thread_target(t) {
                Some((k, to)) => send_value(k, sig, to, v),
                None => ret_errno(-(libc::ESRCH as i64)) as c_int,
            };
            return if r < 0 { *libc::__errno_location() } else { 0 };
        }
    }
    real!(pthread_sigqueue: fn(libc::pthread_t, c_int, libc::sigval) -> c_int)(t, sig, value)
}

/// Where a signal to the thread `t` of this process goes: (target, SIGTO_*).
unsafe fn thread_target(t: libc::pthread_t) -> Option<(i64, i64)> {
    if t == libc::pthread_self() {
        Some((0, SIGTO_SELF))
    } else if t == MAIN_THREAD.load(Ordering::Relaxed) {
        Some((crate::slot::main_slot_index() as i64, SIGTO_THREAD))
    } else {
        crate::threads::slot_of(t).map(|k| (k as i64, SIGTO_THREAD))
    }
}

#[no_mangle]
pub unsafe extern "C" fn raise(sig: c_int) -> c_int {
    raise_hook(sig)
}

/// [`raise`] itself, for the shim's own callers: a call to the exported symbol may
/// reach a program's own `raise` (the BEAM defines `sigaction` on top of `__sigaction`).
pub(crate) unsafe fn raise_hook(sig: c_int) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            return send(0, sig, SIGTO_SELF);
        }
    }
    real!(raise: fn(c_int) -> c_int)(sig)
}

#[no_mangle]
pub unsafe extern "C" fn pthread_kill(t: libc::pthread_t, sig: c_int) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            let r = match thread_target(t) {
                Some((k, to)) => send(k, sig, to),
                None => ret_errno(-(libc::ESRCH as i64)) as c_int,
            };
            return if r < 0 { *libc::__errno_location() } else { 0 };
        }
    }
    real!(pthread_kill: fn(libc::pthread_t, c_int) -> c_int)(t, sig)
}

/// The slot of this process's thread whose virtual id (`gettid`) is `tid`.
pub(crate) fn slot_of_tid(tid: libc::pid_t) -> Option<usize> {
    if tid == crate::slot::VPID.load(Ordering::Relaxed) as libc::pid_t {
        return Some(crate::slot::main_slot_index());
    }
    (10_000..10_000 + MAX_SLOTS as libc::pid_t).contains(&tid).then_some((tid - 10_000) as usize)
}

/// `tgkill` on the virtual ids `getpid`/`gettid` answer (only within this process).
#[no_mangle]
pub unsafe extern "C" fn tgkill(tgid: libc::pid_t, tid: libc::pid_t, sig: c_int) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            let me = crate::slot::VPID.load(Ordering::Relaxed) as libc::pid_t;
            return match slot_of_tid(tid) {
                Some(k) if tgid == me => send(k as i64, sig, SIGTO_THREAD),
                _ => ret_errno(-(libc::ESRCH as i64)) as c_int,
            };
        }
    }
    real!(tgkill: fn(libc::pid_t, libc::pid_t, c_int) -> c_int)(tgid, tid, sig)
}
