//! The waits glibc offers on a named clock (`pthread_cond_clockwait`, `pthread_mutex_clocklock`,
//! `pthread_rwlock_clock*lock`, `sem_clockwait`), the timed read-write locks, and
//! `pthread_once`, served as their untimed and `*timedwait` siblings in `threads` are: the
//! wait happens in the host, in virtual time. libstdc++'s `condition_variable::wait_until` on
//! the steady clock is `pthread_cond_clockwait`; left to glibc, MariaDB's thread pool waited on
//! a real futex with a virtual deadline long past, so it spun, or blocked holding the baton. A
//! `pthread_once` whose initialiser runs on another simulated thread waited on a futex the host
//! never saw (OpenSSL's `CRYPTO_THREAD_run_once` in MariaDB's connection set-up).

use crate::prelude::*;
use crate::threads::{
    cond_signal_common, cond_wait_common, mutex_take_by, rwlock_take, sem_at, sem_try,
    take_or_wait, wait_on,
};
use crate::time::ts_ns;
use core::sync::atomic::AtomicI32;

type Cond = libc::pthread_cond_t;
type Mutex = libc::pthread_mutex_t;
type RwLock = libc::pthread_rwlock_t;
type Ts = libc::timespec;

/// `abstime` on `clock` as a virtual deadline; None for a clock these calls refuse (`EINVAL`).
unsafe fn deadline_on(clock: libc::clockid_t, abstime: *const Ts) -> Option<u64> {
    if abstime.is_null() {
        return None;
    }
    let base = match clock {
        libc::CLOCK_REALTIME => REALTIME_BASE_NS,
        libc::CLOCK_MONOTONIC => MONOTONIC_BASE_NS,
        _ => return None,
    };
    Some(ts_ns(&*abstime).saturating_sub(base))
}

#[no_mangle]
pub unsafe extern "C" fn pthread_cond_clockwait(
    c: *mut Cond,
    m: *mut Mutex,
    clock: libc::clockid_t,
    abstime: *const Ts,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            let Some(deadline) = deadline_on(clock, abstime) else { return libc::EINVAL };
            return cond_wait_common(c, m, deadline);
        }
    }
    real!(pthread_cond_clockwait: fn(*mut Cond, *mut Mutex, libc::clockid_t, *const Ts) -> c_int)(
        c, m, clock, abstime,
    )
}

#[no_mangle]
pub unsafe extern "C" fn pthread_mutex_clocklock(
    m: *mut Mutex,
    clock: libc::clockid_t,
    abstime: *const Ts,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            let Some(deadline) = deadline_on(clock, abstime) else { return libc::EINVAL };
            return mutex_take_by(m, deadline);
        }
    }
    real!(pthread_mutex_clocklock: fn(*mut Mutex, libc::clockid_t, *const Ts) -> c_int)(
        m, clock, abstime,
    )
}

/// A timed rwlock (`$write`: a write lock), whose `abstime` glibc reads on `CLOCK_REALTIME`.
macro_rules! timed_rwlock {
    ($name:ident, $write:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $name(l: *mut RwLock, abstime: *const Ts) -> c_int {
            if let Some(_g) = Guard::enter() {
                if active() {
                    let Some(d) = deadline_on(libc::CLOCK_REALTIME, abstime) else {
                        return libc::EINVAL;
                    };
                    return rwlock_take(l, $write, d);
                }
            }
            real!($name: fn(*mut RwLock, *const Ts) -> c_int)(l, abstime)
        }
    };
}
timed_rwlock!(pthread_rwlock_timedrdlock, false);
timed_rwlock!(pthread_rwlock_timedwrlock, true);

/// An rwlock on a named clock (`$write`: a write lock).
macro_rules! clock_rwlock {
    ($name:ident, $write:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            l: *mut RwLock,
            clock: libc::clockid_t,
            abstime: *const Ts,
        ) -> c_int {
            if let Some(_g) = Guard::enter() {
                if active() {
                    let Some(d) = deadline_on(clock, abstime) else { return libc::EINVAL };
                    return rwlock_take(l, $write, d);
                }
            }
            real!($name: fn(*mut RwLock, libc::clockid_t, *const Ts) -> c_int)(l, clock, abstime)
        }
    };
}
clock_rwlock!(pthread_rwlock_clockrdlock, false);
clock_rwlock!(pthread_rwlock_clockwrlock, true);

#[no_mangle]
pub unsafe extern "C" fn sem_clockwait(
    sem: *mut libc::sem_t,
    clock: libc::clockid_t,
    abstime: *const Ts,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            let r = match deadline_on(clock, abstime) {
                Some(d) => take_or_wait(sem_at(sem), d, libc::EAGAIN, || sem_try(sem)),
                None => libc::EINVAL,
            };
            if r != 0 {
                set_errno(r);
                return -1;
            }
            return 0;
        }
    }
    real!(sem_clockwait: fn(*mut libc::sem_t, libc::clockid_t, *const Ts) -> c_int)(
        sem, clock, abstime,
    )
}

/// `pthread_once_t` states, as glibc keeps them (so a control glibc finished before the shim
/// took over reads as done).
const ONCE_IN_PROGRESS: i32 = 1;
const ONCE_DONE: i32 = 2;

/// The first caller runs `init`; the others wait in the host until it is done.
#[no_mangle]
pub unsafe extern "C" fn pthread_once(
    once: *mut libc::pthread_once_t,
    init: extern "C" fn(),
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            let state = &*(once as *const AtomicI32);
            loop {
                match state.compare_exchange(
                    0,
                    ONCE_IN_PROGRESS,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                ) {
                    Ok(_) => break,
                    Err(ONCE_DONE) => return 0,
                    // Another thread runs the initialiser (one simulated thread runs at a time,
                    // so its signal cannot come between this look and the wait).
                    Err(_) => {
                        wait_on(once as *const c_void, u64::MAX);
                    }
                }
            }
            drop(_g);
            init();
            state.store(ONCE_DONE, Ordering::Release);
            if let Some(_g) = Guard::enter() {
                cond_signal_common(once as *const c_void, true);
            }
            return 0;
        }
    }
    real!(pthread_once: fn(*mut libc::pthread_once_t, extern "C" fn()) -> c_int)(once, init)
}
