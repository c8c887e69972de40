//! Timers that deliver signals or wake fds (`alarm`, `setitimer`, `timer_create`,
//! `timerfd_create`): not simulated yet, so arming one is reported as unsupported.

use crate::prelude::*;

#[no_mangle]
pub unsafe extern "C" fn alarm(seconds: c_uint) -> c_uint {
    if seconds > 0 && active() {
        unsupported(
            b"alarm(): real-time signals from timers are not simulated yet",
            libc::SYS_alarm,
            0,
        );
    }
    real!(alarm: fn(c_uint) -> c_uint)(seconds)
}

#[no_mangle]
pub unsafe extern "C" fn setitimer(
    which: c_int,
    new: *const libc::itimerval,
    old: *mut libc::itimerval,
) -> c_int {
    let arms = !new.is_null() && ((*new).it_value.tv_sec != 0 || (*new).it_value.tv_usec != 0);
    if arms && active() {
        unsupported(b"setitimer(): interval timers are not simulated yet", libc::SYS_setitimer, 0);
    }
    real!(setitimer: fn(c_int, *const libc::itimerval, *mut libc::itimerval) -> c_int)(
        which, new, old,
    )
}

#[no_mangle]
pub unsafe extern "C" fn timer_create(
    clock: libc::clockid_t,
    ev: *mut libc::sigevent,
    id: *mut libc::timer_t,
) -> c_int {
    if active() {
        unsupported(
            b"timer_create(): POSIX timers are not simulated yet",
            libc::SYS_timer_create,
            0,
        );
    }
    real!(timer_create: fn(libc::clockid_t, *mut libc::sigevent, *mut libc::timer_t) -> c_int)(
        clock, ev, id,
    )
}

#[no_mangle]
pub unsafe extern "C" fn timerfd_create(clock: c_int, flags: c_int) -> c_int {
    if active() {
        unsupported(
            b"timerfd_create(): timer fds are not simulated yet",
            libc::SYS_timerfd_create,
            0,
        );
    }
    real!(timerfd_create: fn(c_int, c_int) -> c_int)(clock, flags)
}
