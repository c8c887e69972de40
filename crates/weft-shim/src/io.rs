//! The generic descriptor calls — `read`, `write`, `close`, `fcntl`, `ioctl` — dispatched by
//! what the descriptor table says an fd is; and `io_uring`, which cannot be simulated.

use crate::epoll::forget_epoll;
use crate::files::{record_file, record_io};
use crate::prelude::*;
use crate::sockets::{recv_common, send_common};

#[no_mangle]
pub unsafe extern "C" fn read(fd: c_int, buf: *mut c_void, len: size_t) -> ssize_t {
    if let Some(_g) = Guard::enter() {
        if active() && fdtable::is_sim(fd) {
            let iov = [libc::iovec { iov_base: buf, iov_len: len }];
            return recv_common(fd, &iov, 0, ptr::null_mut(), ptr::null_mut(), None);
        }
        if active() && fdtable::kind(fd) == FdKind::Real {
            crate::poll::await_real(fd, libc::POLLIN);
        }
    }
    let r = real!(read: fn(c_int, *mut c_void, size_t) -> ssize_t)(fd, buf, len);
    record_io(FILE_READ, fd, -1, len, r as i64);
    r
}

#[no_mangle]
pub unsafe extern "C" fn write(fd: c_int, buf: *const c_void, len: size_t) -> ssize_t {
    if let Some(_g) = Guard::enter() {
        if active() && fdtable::is_sim(fd) {
            let iov = [libc::iovec { iov_base: buf as *mut c_void, iov_len: len }];
            return send_common(fd, &iov, ptr::null(), 0);
        }
        if active() && fdtable::kind(fd) == FdKind::Real && fd > 2 {
            crate::poll::await_real(fd, libc::POLLOUT);
        }
    }
    let r = real!(write: fn(c_int, *const c_void, size_t) -> ssize_t)(fd, buf, len);
    record_io(FILE_WRITE, fd, -1, len, r as i64);
    r
}

#[no_mangle]
pub unsafe extern "C" fn close(fd: c_int) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            match fdtable::forget(fd) {
                FdKind::SimUdp | FdKind::SimStream => {
                    slot().args[0] = fd as i64;
                    handoff(OP_CLOSE);
                }
                FdKind::File => record_file(FILE_CLOSE, fd, 0, 0, 0, ptr::null(), ptr::null()),
                FdKind::Epoll => forget_epoll(fd),
                FdKind::Real => {}
            }
        }
    }
    real!(close: fn(c_int) -> c_int)(fd)
}

#[no_mangle]
pub unsafe extern "C" fn fcntl(fd: c_int, cmd: c_int, arg: c_ulong) -> c_int {
    let r = real!(fcntl: fn(c_int, c_int, c_ulong) -> c_int)(fd, cmd, arg);
    if r >= 0 && cmd == libc::F_SETFL && fdtable::is_sim(fd) {
        fdtable::set_nonblocking(fd, arg as c_int & libc::O_NONBLOCK != 0);
    }
    r
}

#[no_mangle]
pub unsafe extern "C" fn fcntl64(fd: c_int, cmd: c_int, arg: c_ulong) -> c_int {
    fcntl(fd, cmd, arg)
}

#[no_mangle]
pub unsafe extern "C" fn ioctl(fd: c_int, req: c_ulong, arg: *mut c_void) -> c_int {
    let r = real!(ioctl: fn(c_int, c_ulong, *mut c_void) -> c_int)(fd, req, arg);
    if r >= 0 && req == libc::FIONBIO && fdtable::is_sim(fd) && !arg.is_null() {
        fdtable::set_nonblocking(fd, *(arg as *const c_int) != 0);
    }
    r
}
#[no_mangle]
pub unsafe extern "C" fn io_uring_setup(_entries: c_uint, _params: *mut c_void) -> c_long {
    unsupported(b"io_uring_setup: io_uring is not simulated", libc::SYS_io_uring_setup, 0)
}
