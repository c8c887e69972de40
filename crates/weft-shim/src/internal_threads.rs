//! Calls whose threads glibc creates from inside libc (C11 `thrd_create`, POSIX AIO,
//! `getaddrinfo_a`, `mq_notify` with `SIGEV_THREAD`): glibc calls its internal
//! `pthread_create`, which no `pthread_create` hook sees, from the `clone()` call site the
//! seccomp filter must let through for ordinary threads. Such a thread would run unseen, so
//! under the shim each of these calls is refused by name (the run ends as unsupported, exit 4)
//! before any thread exists; outside a simulation they pass through.

use crate::prelude::*;

/// Ends the run as unsupported, naming `what`, when the calling process is simulated.
fn refuse_if_active(what: &[u8]) {
    if let Some(_g) = Guard::enter() {
        if active() {
            unsupported(what, -1, 0);
        }
    }
}

macro_rules! refused_hook {
    ($name:ident ( $($arg:ident : $t:ty),* ) -> $r:ty) => {
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $t),*) -> $r {
            refuse_if_active(concat!(
                stringify!($name),
                "(): creates a thread inside glibc (its internal pthread_create), which weft cannot simulate"
            ).as_bytes());
            real!($name: fn($($t),*) -> $r)($($arg),*)
        }
    };
}

refused_hook!(thrd_create(thr: *mut c_ulong, func: *mut c_void, arg: *mut c_void) -> c_int);
refused_hook!(aio_read(cb: *mut c_void) -> c_int);
refused_hook!(aio_write(cb: *mut c_void) -> c_int);
refused_hook!(aio_fsync(op: c_int, cb: *mut c_void) -> c_int);
refused_hook!(aio_read64(cb: *mut c_void) -> c_int);
refused_hook!(aio_write64(cb: *mut c_void) -> c_int);
refused_hook!(aio_fsync64(op: c_int, cb: *mut c_void) -> c_int);
refused_hook!(lio_listio(mode: c_int, list: *const *mut c_void, n: c_int, ev: *mut c_void) -> c_int);
refused_hook!(lio_listio64(mode: c_int, list: *const *mut c_void, n: c_int, ev: *mut c_void) -> c_int);
refused_hook!(getaddrinfo_a(mode: c_int, list: *mut *mut c_void, n: c_int, ev: *mut c_void) -> c_int);

/// `mq_notify` makes a helper thread only for `SIGEV_THREAD`; other notifications pass through.
#[no_mangle]
pub unsafe extern "C" fn mq_notify(mq: c_int, ev: *const libc::sigevent) -> c_int {
    if !ev.is_null() && (*ev).sigev_notify == libc::SIGEV_THREAD {
        refuse_if_active(b"mq_notify(SIGEV_THREAD): creates a thread inside glibc (its internal pthread_create), which weft cannot simulate");
    }
    real!(mq_notify: fn(c_int, *const libc::sigevent) -> c_int)(mq, ev)
}
