//! Virtual time: the clocks (`clock_gettime` and friends) read the page the host writes, with
//! no hand-off; the sleeps (`nanosleep`, `clock_nanosleep`, `usleep`, `sleep`) block the
//! thread in the host until a virtual deadline; `getrusage` reports virtual CPU time.

use crate::prelude::*;
use crate::slot::HEADER;

/// Virtual time now, ns since the run start.
pub(crate) fn now_ns() -> u64 {
    // SAFETY: header mapped while active.
    unsafe { (*HEADER.load(Ordering::Acquire)).now_ns.load(Ordering::Acquire) }
}

fn split_ns(ns: u64) -> (i64, i64) {
    ((ns / 1_000_000_000) as i64, (ns % 1_000_000_000) as i64)
}

pub(crate) fn clock_value(clock: libc::clockid_t) -> Option<u64> {
    let now = now_ns();
    match clock {
        libc::CLOCK_REALTIME | libc::CLOCK_REALTIME_COARSE | libc::CLOCK_TAI => {
            Some(REALTIME_BASE_NS + now)
        }
        libc::CLOCK_MONOTONIC
        | libc::CLOCK_MONOTONIC_RAW
        | libc::CLOCK_MONOTONIC_COARSE
        | libc::CLOCK_BOOTTIME => Some(MONOTONIC_BASE_NS + now),
        // CPU time is virtual too: a simulated thread's CPU time is its share of virtual time.
        // Negative ids are the CPU clocks `pthread_getcpuclockid`/`clock_getcpuclockid` make.
        libc::CLOCK_PROCESS_CPUTIME_ID | libc::CLOCK_THREAD_CPUTIME_ID => Some(now),
        c if c < 0 => Some(now),
        _ => None,
    }
}

#[no_mangle]
pub unsafe extern "C" fn clock_gettime(clock: libc::clockid_t, tp: *mut libc::timespec) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            let Some(ns) = clock_value(clock) else {
                set_errno(libc::EINVAL);
                return -1;
            };
            if tp.is_null() {
                set_errno(libc::EFAULT);
                return -1;
            }
            let (s, n) = split_ns(ns);
            (*tp).tv_sec = s;
            (*tp).tv_nsec = n;
            local_call();
            return 0;
        }
    }
    real!(clock_gettime: fn(libc::clockid_t, *mut libc::timespec) -> c_int)(clock, tp)
}

#[no_mangle]
pub unsafe extern "C" fn gettimeofday(tv: *mut libc::timeval, tz: *mut c_void) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            if !tv.is_null() {
                let (s, n) = split_ns(REALTIME_BASE_NS + now_ns());
                (*tv).tv_sec = s;
                (*tv).tv_usec = n / 1000;
            }
            if !tz.is_null() {
                ptr::write_bytes(tz as *mut u8, 0, 8);
            }
            local_call();
            return 0;
        }
    }
    real!(gettimeofday: fn(*mut libc::timeval, *mut c_void) -> c_int)(tv, tz)
}

#[no_mangle]
pub unsafe extern "C" fn time(t: *mut libc::time_t) -> libc::time_t {
    if let Some(_g) = Guard::enter() {
        if active() {
            let s = ((REALTIME_BASE_NS + now_ns()) / 1_000_000_000) as libc::time_t;
            if !t.is_null() {
                *t = s;
            }
            local_call();
            return s;
        }
    }
    real!(time: fn(*mut libc::time_t) -> libc::time_t)(t)
}

#[no_mangle]
pub unsafe extern "C" fn timespec_get(ts: *mut libc::timespec, base: c_int) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            if base != 1 || ts.is_null() {
                return 0; // TIME_UTC is the only base
            }
            let (s, n) = split_ns(REALTIME_BASE_NS + now_ns());
            (*ts).tv_sec = s;
            (*ts).tv_nsec = n;
            local_call();
            return base;
        }
    }
    real!(timespec_get: fn(*mut libc::timespec, c_int) -> c_int)(ts, base)
}

/// `struct timeb`, for `ftime`.
#[repr(C)]
pub struct TimeB {
    time: libc::time_t,
    millitm: u16,
    timezone: i16,
    dstflag: i16,
}

/// `ftime`: glibc reads the clock with an internal call no hook sees (the real time, different
/// in every run).
#[no_mangle]
pub unsafe extern "C" fn ftime(tp: *mut TimeB) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            let (s, n) = split_ns(REALTIME_BASE_NS + now_ns());
            *tp = TimeB { time: s, millitm: (n / 1_000_000) as u16, timezone: 0, dstflag: 0 };
            local_call();
            return 0;
        }
    }
    real!(ftime: fn(*mut TimeB) -> c_int)(tp)
}

/// C11 `thrd_sleep`: 0, -1 when a signal interrupted it (`rem` then holds the time left), or
/// -2; glibc's sleeps through an internal `clock_nanosleep`, which the seccomp trap catches.
#[no_mangle]
pub unsafe extern "C" fn thrd_sleep(req: *const libc::timespec, rem: *mut libc::timespec) -> c_int {
    match nanosleep_hook(req, rem) {
        0 => 0,
        _ if *libc::__errno_location() == libc::EINTR => -1,
        _ => -2,
    }
}

#[no_mangle]
pub unsafe extern "C" fn clock() -> libc::clock_t {
    if let Some(_g) = Guard::enter() {
        if active() {
            local_call();
            return (now_ns() / 1000) as libc::clock_t; // CLOCKS_PER_SEC = 1_000_000
        }
    }
    real!(clock: fn() -> libc::clock_t)()
}

/// `times(2)` in virtual terms, as `clock` and `getrusage` answer: the elapsed ticks (100 a
/// second) since the virtual boot, and user time = virtual time so far, the rest 0. glibc's
/// `times` is the system call's, which answered real ticks (MariaDB calibrates its timers
/// against it in a loop of about a thousand calls).
#[no_mangle]
pub unsafe extern "C" fn times(buf: *mut libc::tms) -> libc::clock_t {
    if let Some(_g) = Guard::enter() {
        if active() {
            local_call();
            let ticks = (now_ns() / 10_000_000) as libc::clock_t;
            if !buf.is_null() {
                *buf = libc::tms { tms_utime: ticks, tms_stime: 0, tms_cutime: 0, tms_cstime: 0 };
            }
            return ((MONOTONIC_BASE_NS + now_ns()) / 10_000_000) as libc::clock_t;
        }
    }
    real!(times: fn(*mut libc::tms) -> libc::clock_t)(buf)
}

/// Resource usage in virtual terms, like the CPU-time clocks: a process's (or thread's) user
/// time is virtual time so far, everything else (system time, children, memory and I/O
/// counters) is 0. The real figures differ from run to run and would leak into what a program
/// reports (Redis's `INFO cpu`).
#[no_mangle]
pub unsafe extern "C" fn getrusage(who: c_int, usage: *mut libc::rusage) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            local_call();
            if usage.is_null() {
                set_errno(libc::EFAULT);
                return -1;
            }
            // SAFETY: the caller's rusage; all-zero is a valid value of it.
            *usage = core::mem::zeroed();
            if who == libc::RUSAGE_SELF || who == libc::RUSAGE_THREAD {
                let us = now_ns() / 1000;
                (*usage).ru_utime = libc::timeval {
                    tv_sec: (us / 1_000_000) as libc::time_t,
                    tv_usec: (us % 1_000_000) as libc::suseconds_t,
                };
            }
            return 0;
        }
    }
    real!(getrusage: fn(c_int, *mut libc::rusage) -> c_int)(who, usage)
}

/// Blocks this simulated thread until virtual time `deadline` (ns since the run start).
/// Answers 0, or -EINTR when a signal handler ran first.
fn sleep_until(deadline: u64) -> i64 {
    slot().args[0] = deadline as i64;
    // SAFETY: callers check `active()` and hold the guard.
    unsafe { handoff(OP_SLEEP) }
}

/// What is left of a sleep until `deadline` that a signal interrupted.
fn left_of(deadline: u64) -> libc::timespec {
    let (s, n) = split_ns(deadline.saturating_sub(now_ns()));
    libc::timespec { tv_sec: s, tv_nsec: n }
}

pub(crate) fn ts_ns(ts: &libc::timespec) -> u64 {
    (ts.tv_sec.max(0) as u64).saturating_mul(1_000_000_000).saturating_add(ts.tv_nsec.max(0) as u64)
}

#[no_mangle]
pub unsafe extern "C" fn nanosleep(req: *const libc::timespec, rem: *mut libc::timespec) -> c_int {
    nanosleep_hook(req, rem)
}

/// [`nanosleep`] itself, for the shim's own callers (`thrd_sleep`): the exported symbol may be
/// a program's own.
unsafe fn nanosleep_hook(req: *const libc::timespec, rem: *mut libc::timespec) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            if req.is_null() || (*req).tv_nsec < 0 || (*req).tv_nsec >= 1_000_000_000 {
                set_errno(libc::EINVAL);
                return -1;
            }
            let deadline = now_ns().saturating_add(ts_ns(&*req));
            let r = sleep_until(deadline);
            if !rem.is_null() {
                *rem = if r < 0 {
                    left_of(deadline)
                } else {
                    libc::timespec { tv_sec: 0, tv_nsec: 0 }
                };
            }
            return ret_errno(r) as c_int;
        }
    }
    sys::raw(libc::SYS_nanosleep, [req as i64, rem as i64, 0, 0, 0, 0]) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn clock_nanosleep(
    clock: libc::clockid_t,
    flags: c_int,
    req: *const libc::timespec,
    rem: *mut libc::timespec,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            if req.is_null() {
                return libc::EFAULT;
            }
            let d = ts_ns(&*req);
            let deadline = if flags & libc::TIMER_ABSTIME != 0 {
                let Some(clock_now) = clock_value(clock) else { return libc::EINVAL };
                now_ns().saturating_add(d.saturating_sub(clock_now))
            } else {
                now_ns().saturating_add(d)
            };
            let r = sleep_until(deadline);
            if !rem.is_null() && flags & libc::TIMER_ABSTIME == 0 {
                *rem = if r < 0 {
                    left_of(deadline)
                } else {
                    libc::timespec { tv_sec: 0, tv_nsec: 0 }
                };
            }
            return (-r) as c_int;
        }
    }
    // clock_nanosleep returns the error number instead of setting errno.
    let r = sys::raw_ret(
        libc::SYS_clock_nanosleep,
        [clock as i64, flags as i64, req as i64, rem as i64, 0, 0],
    );
    if r < 0 {
        (-r) as c_int
    } else {
        0
    }
}

#[no_mangle]
pub unsafe extern "C" fn usleep(us: libc::useconds_t) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            return ret_errno(sleep_until(now_ns().saturating_add(us as u64 * 1000))) as c_int;
        }
    }
    real!(usleep: fn(libc::useconds_t) -> c_int)(us)
}

#[no_mangle]
pub unsafe extern "C" fn sleep(s: c_uint) -> c_uint {
    if let Some(_g) = Guard::enter() {
        if active() {
            let deadline = now_ns().saturating_add(s as u64 * 1_000_000_000);
            if sleep_until(deadline) < 0 {
                // Linux rounds the seconds left to the nearest.
                let left = deadline.saturating_sub(now_ns());
                return ((left + 500_000_000) / 1_000_000_000) as c_uint;
            }
            return 0;
        }
    }
    real!(sleep: fn(c_uint) -> c_uint)(s)
}
