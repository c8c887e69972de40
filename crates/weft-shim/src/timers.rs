//! Timers in virtual time: `alarm`, `setitimer`/`getitimer` (`ITIMER_REAL`), POSIX timers
//! (`timer_create` with `SIGEV_SIGNAL` or `SIGEV_NONE`, `timer_settime`/`gettime`/
//! `getoverrun`/`delete`) and timerfds (`timerfd_create`/`settime`/`gettime`, `read`, and
//! readiness in poll/select/epoll). The host keeps every timer and fires it at its virtual
//! deadline; this module converts the calls' times (relative, or absolute on a clock) into
//! virtual deadlines and back. Timers on CPU-time clocks run in virtual time, as those clocks
//! read it; `SIGEV_THREAD_ID` sends to the thread named. `ITIMER_VIRTUAL`/`ITIMER_PROF` and
//! `SIGEV_THREAD` are reported as unsupported.

use crate::prelude::*;
use crate::time::{clock_value, now_ns, ts_ns};

const NS: u64 = 1_000_000_000;

/// The clock of each POSIX timer (by id) and timerfd (by fd), for absolute settings.
static TIMER_CLOCK: [AtomicU32; 256] = [const { AtomicU32::new(0) }; 256];
static TIMERFD_CLOCK: [AtomicU32; fdtable::FD_MAX] = [const { AtomicU32::new(0) }; fdtable::FD_MAX];

fn tv_ns(tv: &libc::timeval) -> u64 {
    (tv.tv_sec.max(0) as u64).saturating_mul(NS).saturating_add(tv.tv_usec.max(0) as u64 * 1000)
}

fn ns_tv(ns: u64) -> libc::timeval {
    libc::timeval { tv_sec: (ns / NS) as i64, tv_usec: ((ns % NS) / 1000) as i64 }
}

fn ns_ts(ns: u64) -> libc::timespec {
    libc::timespec { tv_sec: (ns / NS) as i64, tv_nsec: (ns % NS) as i64 }
}

/// A clock timers may run on: the simulated wall and monotonic clocks, and the CPU-time
/// clocks, which read virtual time (`crate::time::clock_value`), so a timer on one fires at
/// the virtual time its clock reaches the setting.
fn timer_clock(clock: libc::clockid_t) -> bool {
    clock < 0
        || matches!(
            clock,
            libc::CLOCK_REALTIME
                | libc::CLOCK_TAI
                | libc::CLOCK_MONOTONIC
                | libc::CLOCK_BOOTTIME
                | libc::CLOCK_REALTIME_ALARM
                | libc::CLOCK_BOOTTIME_ALARM
                | libc::CLOCK_PROCESS_CPUTIME_ID
                | libc::CLOCK_THREAD_CPUTIME_ID
        )
}

/// The virtual deadline of a setting `value` (absolute on `clock` when `abs`); 0 = disarm.
fn deadline_of(value: u64, abs: bool, clock: libc::clockid_t) -> u64 {
    if value == 0 {
        return 0;
    }
    let now = now_ns();
    if abs {
        let base = match clock {
            libc::CLOCK_REALTIME_ALARM => clock_value(libc::CLOCK_REALTIME),
            libc::CLOCK_BOOTTIME_ALARM => clock_value(libc::CLOCK_BOOTTIME),
            c => clock_value(c),
        };
        let clock_now = base.unwrap_or(now);
        now.saturating_add(value.saturating_sub(clock_now)).max(now).max(1)
    } else {
        now.saturating_add(value)
    }
}

/// Arms timer `id`; answers the old (time left, interval) or -errno.
fn set(id: i64, deadline: u64, interval: u64) -> Result<(u64, u64), i64> {
    let s = slot();
    s.args[0] = id;
    s.args[1] = deadline as i64;
    s.args[2] = interval as i64;
    // SAFETY: callers check `active()` and hold the guard.
    let r = unsafe { handoff(OP_TIMER_SET) };
    if r < 0 {
        return Err(r);
    }
    Ok((slot().args[1] as u64, slot().args[2] as u64))
}

/// Timer `id` now: (time left, interval, overruns) or -errno.
fn get(id: i64) -> Result<(u64, u64, i64), i64> {
    slot().args[0] = id;
    // SAFETY: callers check `active()` and hold the guard.
    let r = unsafe { handoff(OP_TIMER_GET) };
    if r < 0 {
        return Err(r);
    }
    let s = slot();
    Ok((s.args[1] as u64, s.args[2] as u64, s.args[3]))
}

#[no_mangle]
pub unsafe extern "C" fn alarm(seconds: c_uint) -> c_uint {
    if let Some(_g) = Guard::enter() {
        if active() {
            let at = if seconds == 0 { 0 } else { now_ns().saturating_add(seconds as u64 * NS) };
            let (left, _) = set(TIMER_ID_ITIMER_REAL, at, 0).unwrap_or((0, 0));
            // As Linux: the seconds left, rounded to the nearest, and at least 1 if armed.
            return if left == 0 { 0 } else { ((left + NS / 2) / NS).max(1) as c_uint };
        }
    }
    real!(alarm: fn(c_uint) -> c_uint)(seconds)
}

/// `ualarm`: `ITIMER_REAL` in microseconds, answering the microseconds that were left. glibc
/// arms it with an internal `setitimer` no hook sees (a real SIGALRM, which never reaches the
/// program under the shim).
#[no_mangle]
pub unsafe extern "C" fn ualarm(
    value: libc::useconds_t,
    interval: libc::useconds_t,
) -> libc::useconds_t {
    let tv = |us: libc::useconds_t| libc::timeval {
        tv_sec: (us / 1_000_000) as libc::time_t,
        tv_usec: (us % 1_000_000) as libc::suseconds_t,
    };
    let new = libc::itimerval { it_value: tv(value), it_interval: tv(interval) };
    let mut old: libc::itimerval = core::mem::zeroed();
    if setitimer_hook(libc::ITIMER_REAL, &new, &mut old) < 0 {
        return libc::useconds_t::MAX; // (useconds_t) -1, as glibc answers
    }
    (old.it_value.tv_sec as libc::useconds_t) * 1_000_000 + old.it_value.tv_usec as libc::useconds_t
}

#[no_mangle]
pub unsafe extern "C" fn setitimer(
    which: c_int,
    new: *const libc::itimerval,
    old: *mut libc::itimerval,
) -> c_int {
    setitimer_hook(which, new, old)
}

/// [`setitimer`] itself, for the shim's own callers: a call to the exported symbol may reach a
/// program's own `setitimer` (as the BEAM's `sigaction` over `__sigaction` was reached).
unsafe fn setitimer_hook(
    which: c_int,
    new: *const libc::itimerval,
    old: *mut libc::itimerval,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            if which != libc::ITIMER_REAL {
                unsupported(
                    b"setitimer(): ITIMER_VIRTUAL/ITIMER_PROF (CPU-time timers) are not simulated",
                    libc::SYS_setitimer,
                    which as i64,
                );
            }
            if new.is_null() {
                return ret_errno(-(libc::EFAULT as i64)) as c_int;
            }
            let at = now_ns().saturating_add(tv_ns(&(*new).it_value));
            let at = if tv_ns(&(*new).it_value) == 0 { 0 } else { at };
            return match set(TIMER_ID_ITIMER_REAL, at, tv_ns(&(*new).it_interval)) {
                Ok((left, interval)) => {
                    if !old.is_null() {
                        *old =
                            libc::itimerval { it_value: ns_tv(left), it_interval: ns_tv(interval) };
                    }
                    0
                }
                Err(e) => ret_errno(e) as c_int,
            };
        }
    }
    real!(setitimer: fn(c_int, *const libc::itimerval, *mut libc::itimerval) -> c_int)(
        which, new, old,
    )
}

#[no_mangle]
pub unsafe extern "C" fn getitimer(which: c_int, cur: *mut libc::itimerval) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && which == libc::ITIMER_REAL {
            return match get(TIMER_ID_ITIMER_REAL) {
                Ok((left, interval, _)) => {
                    *cur = libc::itimerval { it_value: ns_tv(left), it_interval: ns_tv(interval) };
                    0
                }
                Err(e) => ret_errno(e) as c_int,
            };
        }
    }
    real!(getitimer: fn(c_int, *mut libc::itimerval) -> c_int)(which, cur)
}

#[no_mangle]
pub unsafe extern "C" fn timer_create(
    clock: libc::clockid_t,
    ev: *mut libc::sigevent,
    id: *mut libc::timer_t,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            if !timer_clock(clock) {
                unsupported(
                    b"timer_create(): timers on this clock are not simulated",
                    libc::SYS_timer_create,
                    clock as i64,
                );
            }
            let (notify, sig, value) = if ev.is_null() {
                (libc::SIGEV_SIGNAL, libc::SIGALRM, None)
            } else {
                ((*ev).sigev_notify, (*ev).sigev_signo, Some((*ev).sigev_value.sival_ptr as u64))
            };
            let thread = notify == libc::SIGEV_THREAD_ID;
            if notify != libc::SIGEV_SIGNAL && notify != libc::SIGEV_NONE && !thread {
                unsupported(
                    b"timer_create(): SIGEV_THREAD notification is not simulated",
                    libc::SYS_timer_create,
                    notify as i64,
                );
            }
            // SIGEV_THREAD_ID: the thread (of this process) the signal goes to.
            let to = if thread {
                crate::sigsend::slot_of_tid((*ev).sigev_notify_thread_id)
            } else {
                None
            };
            if (notify != libc::SIGEV_NONE && !(1..=64).contains(&sig)) || (thread && to.is_none())
            {
                return ret_errno(-(libc::EINVAL as i64)) as c_int;
            }
            let s = slot();
            s.args[0] = TIMER_KIND_POSIX;
            s.args[1] = sig as i64;
            s.args[3] = to.map_or(-1, |k| k as i64);
            s.args[4] = (notify == libc::SIGEV_NONE) as i64;
            // With no sigevent, the value is the timer's id (set once it is known: the host
            // puts `args[2]` = -1 for "its own id").
            s.args[2] = value.map_or(-1, |v| v as i64);
            let r = handoff(OP_TIMER_CREATE);
            if r < 0 {
                return ret_errno(r) as c_int;
            }
            if (r as usize) < TIMER_CLOCK.len() {
                TIMER_CLOCK[r as usize].store(clock as u32, Ordering::Relaxed);
            }
            *id = r as usize as libc::timer_t;
            return 0;
        }
    }
    real!(timer_create: fn(libc::clockid_t, *mut libc::sigevent, *mut libc::timer_t) -> c_int)(
        clock, ev, id,
    )
}

fn clock_of_timer(id: i64) -> libc::clockid_t {
    TIMER_CLOCK.get(id as usize).map_or(libc::CLOCK_MONOTONIC, |c| c.load(Ordering::Relaxed) as i32)
}

/// Shared by `timer_settime` and `timerfd_settime`: arms `id` from an itimerspec.
unsafe fn settime(
    id: i64,
    clock: libc::clockid_t,
    abs: bool,
    new: *const libc::itimerspec,
    old: *mut libc::itimerspec,
) -> i64 {
    if new.is_null() {
        return -(libc::EFAULT as i64);
    }
    let v = &(*new).it_value;
    if v.tv_nsec < 0 || v.tv_nsec >= NS as i64 || (*new).it_interval.tv_nsec >= NS as i64 {
        return -(libc::EINVAL as i64);
    }
    let at = deadline_of(ts_ns(v), abs, clock);
    match set(id, at, ts_ns(&(*new).it_interval)) {
        Ok((left, interval)) => {
            if !old.is_null() {
                *old = libc::itimerspec { it_value: ns_ts(left), it_interval: ns_ts(interval) };
            }
            0
        }
        Err(e) => e,
    }
}

unsafe fn gettime(id: i64, cur: *mut libc::itimerspec) -> i64 {
    match get(id) {
        Ok((left, interval, _)) => {
            *cur = libc::itimerspec { it_value: ns_ts(left), it_interval: ns_ts(interval) };
            0
        }
        Err(e) => e,
    }
}

#[no_mangle]
pub unsafe extern "C" fn timer_settime(
    t: libc::timer_t,
    flags: c_int,
    new: *const libc::itimerspec,
    old: *mut libc::itimerspec,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            let id = t as usize as i64;
            let abs = flags & libc::TIMER_ABSTIME != 0;
            return ret_errno(settime(id, clock_of_timer(id), abs, new, old)) as c_int;
        }
    }
    real!(timer_settime: fn(
        libc::timer_t, c_int, *const libc::itimerspec, *mut libc::itimerspec
    ) -> c_int)(t, flags, new, old)
}

#[no_mangle]
pub unsafe extern "C" fn timer_gettime(t: libc::timer_t, cur: *mut libc::itimerspec) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            return ret_errno(gettime(t as usize as i64, cur)) as c_int;
        }
    }
    real!(timer_gettime: fn(libc::timer_t, *mut libc::itimerspec) -> c_int)(t, cur)
}

#[no_mangle]
pub unsafe extern "C" fn timer_getoverrun(t: libc::timer_t) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            return match get(t as usize as i64) {
                Ok((_, _, overrun)) => overrun as c_int,
                Err(e) => ret_errno(e) as c_int,
            };
        }
    }
    real!(timer_getoverrun: fn(libc::timer_t) -> c_int)(t)
}

#[no_mangle]
pub unsafe extern "C" fn timer_delete(t: libc::timer_t) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            slot().args[0] = t as usize as i64;
            return ret_errno(handoff(OP_TIMER_DELETE)) as c_int;
        }
    }
    real!(timer_delete: fn(libc::timer_t) -> c_int)(t)
}

#[no_mangle]
pub unsafe extern "C" fn timerfd_create(clock: c_int, flags: c_int) -> c_int {
    // A real, never armed timerfd holds the number (fstat, fcntl and close see a timerfd).
    let fd = real!(timerfd_create: fn(c_int, c_int) -> c_int)(clock, flags);
    if let Some(_g) = Guard::enter() {
        if active() && fd >= 0 {
            if !fdtable::fits(fd) {
                unsupported(b"timerfd_create(): descriptor number too high", -1, fd as i64);
            }
            let s = slot();
            s.args[0] = TIMER_KIND_FD;
            s.args[3] = fd as i64;
            handoff(OP_TIMER_CREATE);
            TIMERFD_CLOCK[fd as usize].store(clock as u32, Ordering::Relaxed);
            fdtable::open_timerfd(fd, flags & libc::TFD_NONBLOCK != 0);
        }
    }
    fd
}

fn timerfd_id(fd: c_int) -> Option<i64> {
    (fdtable::kind(fd) == FdKind::Timerfd).then_some(TIMERFD_ID_BASE + fd as i64)
}

#[no_mangle]
pub unsafe extern "C" fn timerfd_settime(
    fd: c_int,
    flags: c_int,
    new: *const libc::itimerspec,
    old: *mut libc::itimerspec,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            crate::execfds::refuse_stale(fd, b"timerfd_settime()");
            let Some(id) = timerfd_id(fd) else { return ret_errno(-(libc::EBADF as i64)) as c_int };
            let clock = TIMERFD_CLOCK[fd as usize].load(Ordering::Relaxed) as libc::clockid_t;
            let abs = flags & libc::TFD_TIMER_ABSTIME != 0;
            return ret_errno(settime(id, clock, abs, new, old)) as c_int;
        }
    }
    real!(timerfd_settime: fn(c_int, c_int, *const libc::itimerspec, *mut libc::itimerspec) -> c_int)(
        fd, flags, new, old,
    )
}

#[no_mangle]
pub unsafe extern "C" fn timerfd_gettime(fd: c_int, cur: *mut libc::itimerspec) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            crate::execfds::refuse_stale(fd, b"timerfd_gettime()");
            let Some(id) = timerfd_id(fd) else { return ret_errno(-(libc::EBADF as i64)) as c_int };
            return ret_errno(gettime(id, cur)) as c_int;
        }
    }
    real!(timerfd_gettime: fn(c_int, *mut libc::itimerspec) -> c_int)(fd, cur)
}

/// `read` on a timerfd: the expirations since the last read, as 8 bytes.
pub(crate) unsafe fn timerfd_read(fd: c_int, buf: *mut c_void, len: size_t) -> ssize_t {
    if len < 8 {
        return ret_errno(-(libc::EINVAL as i64)) as ssize_t;
    }
    let s = slot();
    s.args[0] = fd as i64;
    s.args[1] = fdtable::nonblocking(fd) as i64;
    let r = handoff(OP_TIMERFD_READ);
    if r < 0 {
        return ret_errno(r) as ssize_t;
    }
    ptr::write_unaligned(buf as *mut u64, r as u64);
    8
}
