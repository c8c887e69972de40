//! Pipes, eventfds and socketpairs between the process's threads: created natively (real
//! descriptors hold the numbers, and answer calls the shim does not hook, such as `fstat`),
//! but their bytes and counts live in the host, so a thread waiting on one blocks there until
//! another thread makes it ready. Reads, writes, polls, closes and copies go through the
//! descriptor calls like a socket's. Only `AF_UNIX` `SOCK_STREAM` socketpairs are simulated;
//! other kinds, and descriptors beyond the table, stay real.

use crate::io::{forget_fd, read, write};
use crate::prelude::*;

/// Records the new pair `a`, `b` (already created natively) with the host as `op`.
unsafe fn open_pair(op: u32, a: c_int, b: c_int, nonblock: bool) {
    if !fdtable::fits(a) || !fdtable::fits(b) {
        return;
    }
    forget_fd(a);
    forget_fd(b);
    fdtable::open_local(a, nonblock);
    fdtable::open_local(b, nonblock);
    slot().args[0] = a as i64;
    slot().args[1] = b as i64;
    handoff(op);
}

#[no_mangle]
pub unsafe extern "C" fn pipe(fds: *mut c_int) -> c_int {
    pipe2(fds, 0)
}

#[no_mangle]
pub unsafe extern "C" fn pipe2(fds: *mut c_int, flags: c_int) -> c_int {
    let r = real!(pipe2: fn(*mut c_int, c_int) -> c_int)(fds, flags);
    if r == 0 {
        if let Some(_g) = Guard::enter() {
            if active() {
                open_pair(OP_PIPE, *fds, *fds.add(1), flags & libc::O_NONBLOCK != 0);
            }
        }
    }
    r
}

#[no_mangle]
pub unsafe extern "C" fn socketpair(
    domain: c_int,
    ty: c_int,
    proto: c_int,
    sv: *mut c_int,
) -> c_int {
    let r = real!(socketpair: fn(c_int, c_int, c_int, *mut c_int) -> c_int)(domain, ty, proto, sv);
    let base = ty & !(libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC);
    if r == 0 && domain == libc::AF_UNIX && base == libc::SOCK_STREAM {
        if let Some(_g) = Guard::enter() {
            if active() {
                open_pair(OP_SOCKETPAIR, *sv, *sv.add(1), ty & libc::SOCK_NONBLOCK != 0);
            }
        }
    }
    r
}

#[no_mangle]
pub unsafe extern "C" fn eventfd(initval: c_uint, flags: c_int) -> c_int {
    let fd = real!(eventfd: fn(c_uint, c_int) -> c_int)(0, flags);
    if fd >= 0 && fdtable::fits(fd) {
        if let Some(_g) = Guard::enter() {
            if active() {
                forget_fd(fd);
                fdtable::open_local(fd, flags & libc::EFD_NONBLOCK != 0);
                let s = slot();
                s.args[0] = fd as i64;
                s.args[1] = initval as i64;
                s.args[2] = (flags & libc::EFD_SEMAPHORE != 0) as i64;
                handoff(OP_EVENTFD);
            }
        }
    }
    fd
}

/// glibc's `eventfd_read` calls its internal `read`, which the hooks do not see.
#[no_mangle]
pub unsafe extern "C" fn eventfd_read(fd: c_int, value: *mut u64) -> c_int {
    if read(fd, value.cast(), 8) == 8 {
        0
    } else {
        -1
    }
}

/// glibc's `eventfd_write` calls its internal `write`, which the hooks do not see.
#[no_mangle]
pub unsafe extern "C" fn eventfd_write(fd: c_int, value: u64) -> c_int {
    if write(fd, (&value as *const u64).cast(), 8) == 8 {
        0
    } else {
        -1
    }
}
