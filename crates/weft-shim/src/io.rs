//! The generic descriptor calls — `read`, `write`, `readv`, `writev`, `close`,
//! `close_range`/`closefrom`, `dup`/`dup2`/`dup3`, `fcntl`,
//! `ioctl` — dispatched by what the descriptor table says an fd is (a file of the simulated
//! disk goes to [`crate::datadir`]); and `io_uring_setup`, which the simulated machine's
//! kernel does not have (`ENOSYS`).

use crate::epoll::forget_epoll;
use crate::files::{record_file, record_io};
use crate::prelude::*;
use crate::sockets::{recv_common, send_common};

#[no_mangle]
pub unsafe extern "C" fn read(fd: c_int, buf: *mut c_void, len: size_t) -> ssize_t {
    if let Some(_g) = Guard::enter() {
        if active() {
            crate::execfds::refuse_stale(fd, b"read()");
        }
        if active() && fdtable::kind(fd) == FdKind::Disk {
            return crate::datadir::read(fd, buf, len, -1);
        }
        if active() && fdtable::kind(fd) == FdKind::Timerfd {
            return crate::timers::timerfd_read(fd, buf, len);
        }
        if active() && fdtable::kind(fd) == FdKind::Signalfd {
            return crate::sigfd::signalfd_read(fd, buf, len);
        }
        if active() && fdtable::is_sim(fd) {
            let iov = [libc::iovec { iov_base: buf, iov_len: len }];
            return recv_common(fd, &iov, 0, ptr::null_mut(), ptr::null_mut(), None);
        }
        if active() && fdtable::kind(fd) == FdKind::Real {
            crate::poll::await_real(fd, libc::POLLIN);
        }
    }
    let mut r = real!(read: fn(c_int, *mut c_void, size_t) -> ssize_t)(fd, buf, len);
    if r == 0 && len > 0 && active() && crate::random::refill_at_end(fd) {
        r = real!(read: fn(c_int, *mut c_void, size_t) -> ssize_t)(fd, buf, len);
    }
    record_io(FILE_READ, fd, -1, len, r as i64);
    r
}

#[no_mangle]
pub unsafe extern "C" fn write(fd: c_int, buf: *const c_void, len: size_t) -> ssize_t {
    if let Some(_g) = Guard::enter() {
        if active() {
            crate::execfds::refuse_stale(fd, b"write()");
        }
        if active() && fdtable::kind(fd) == FdKind::Disk {
            let iov = [libc::iovec { iov_base: buf as *mut c_void, iov_len: len }];
            return crate::datadir::write(fd, &iov, -1);
        }
        if active() && fdtable::is_sim(fd) {
            let iov = [libc::iovec { iov_base: buf as *mut c_void, iov_len: len }];
            return send_common(fd, &iov, 0, ptr::null(), 0);
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
pub unsafe extern "C" fn readv(fd: c_int, iov: *const libc::iovec, n: c_int) -> ssize_t {
    if let Some(_g) = Guard::enter() {
        if active() {
            crate::execfds::refuse_stale(fd, b"readv()");
        }
        if active() && fdtable::kind(fd) == FdKind::Disk {
            let Some(iov) = iovecs(iov, n) else {
                return ret_errno(-(libc::EINVAL as i64)) as ssize_t;
            };
            return crate::datadir::readv(fd, iov, -1);
        }
        if active() && fdtable::is_sim(fd) {
            let Some(iov) = iovecs(iov, n) else {
                return ret_errno(-(libc::EINVAL as i64)) as ssize_t;
            };
            return recv_common(fd, iov, 0, ptr::null_mut(), ptr::null_mut(), None);
        }
    }
    real!(readv: fn(c_int, *const libc::iovec, c_int) -> ssize_t)(fd, iov, n)
}

#[no_mangle]
pub unsafe extern "C" fn writev(fd: c_int, iov: *const libc::iovec, n: c_int) -> ssize_t {
    if let Some(_g) = Guard::enter() {
        if active() {
            crate::execfds::refuse_stale(fd, b"writev()");
        }
        if active() && fdtable::kind(fd) == FdKind::Disk {
            let Some(iov) = iovecs(iov, n) else {
                return ret_errno(-(libc::EINVAL as i64)) as ssize_t;
            };
            return crate::datadir::write(fd, iov, -1);
        }
        if active() && fdtable::is_sim(fd) {
            let Some(iov) = iovecs(iov, n) else {
                return ret_errno(-(libc::EINVAL as i64)) as ssize_t;
            };
            return send_common(fd, iov, 0, ptr::null(), 0);
        }
    }
    real!(writev: fn(c_int, *const libc::iovec, c_int) -> ssize_t)(fd, iov, n)
}

/// The caller's `iov[..n]` (`None`: a count Linux refuses).
pub(crate) unsafe fn iovecs<'a>(iov: *const libc::iovec, n: c_int) -> Option<&'a [libc::iovec]> {
    match n {
        0 => Some(&[]),
        1..=1024 => Some(core::slice::from_raw_parts(iov, n as usize)),
        _ => None,
    }
}

/// Copies the bytes of `iov` from offset `from` into `buf`, as many as fit; answers how many.
pub(crate) unsafe fn gather(iov: &[libc::iovec], from: usize, buf: &mut [u8]) -> usize {
    let (mut skip, mut n) = (from, 0);
    for v in iov {
        if skip >= v.iov_len {
            skip -= v.iov_len;
            continue;
        }
        let k = (v.iov_len - skip).min(buf.len() - n);
        ptr::copy_nonoverlapping((v.iov_base as *const u8).add(skip), buf[n..].as_mut_ptr(), k);
        n += k;
        skip = 0;
        if n == buf.len() {
            break;
        }
    }
    n
}

#[no_mangle]
pub unsafe extern "C" fn close(fd: c_int) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            if fd == region_fd() {
                // Natively there is no such descriptor; closing it would cut the next exec'd
                // image off the simulation (programs close "every" fd before an exec).
                set_errno(libc::EBADF);
                return -1;
            }
            forget_fd(fd);
        }
    }
    real!(close: fn(c_int) -> c_int)(fd)
}

/// The shim's region descriptor while active (-1 otherwise).
fn region_fd() -> c_int {
    crate::slot::REGION.load(Ordering::Relaxed) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn close_range(first: c_uint, last: c_uint, flags: c_int) -> c_int {
    close_range_served(first, last, flags)
}

#[no_mangle]
pub unsafe extern "C" fn closefrom(low: c_int) {
    close_range_served(low.max(0) as c_uint, c_uint::MAX, 0);
}

/// `close_range` (also when trapped as a raw system call): the host hears of every simulated
/// descriptor it closes, and the region descriptor is left open, as [`close`] leaves it.
/// Answers 0, or -1 with errno.
pub(crate) unsafe fn close_range_served(first: c_uint, last: c_uint, flags: c_int) -> c_int {
    let region = region_fd();
    let call = |a: c_uint, b: c_uint| {
        sys::raw(libc::SYS_close_range, [i64::from(a), i64::from(b), i64::from(flags), 0, 0, 0])
    };
    if first > last || region < 0 || !(first..=last).contains(&(region as c_uint)) {
        let r = call(first, last);
        if r == 0 {
            forget_range(first, last, flags);
        }
        return r as c_int;
    }
    let region = region as c_uint;
    if region > first {
        if call(first, region - 1) < 0 {
            return -1;
        }
        forget_range(first, region - 1, flags);
    }
    if region < last {
        if call(region + 1, last) < 0 {
            return -1;
        }
        forget_range(region + 1, last, flags);
    }
    0
}

/// The shim's side of `close_range` having closed `first..=last` (nothing when it only marked
/// them close-on-exec); the region descriptor is never among them.
unsafe fn forget_range(first: c_uint, last: c_uint, flags: c_int) {
    if flags & libc::CLOSE_RANGE_CLOEXEC as c_int != 0 {
        return;
    }
    let Some(_g) = Guard::enter() else { return };
    if !active() {
        return;
    }
    let end = last.min(fdtable::FD_MAX as c_uint - 1);
    for fd in first..=end {
        let fd = fd as c_int;
        if fd != region_fd() && fdtable::kind(fd) != FdKind::Real {
            forget_fd(fd);
        }
    }
}

/// The shim's side of closing `fd` (the caller closes it natively, or the kernel already has,
/// as `dup2` does to its target): the host hears of a socket descriptor, a recorded file's
/// close is recorded, and an epoll instance's interest list goes with its last descriptor.
pub(crate) unsafe fn forget_fd(fd: c_int) {
    let last = fdtable::copies(fd) <= 1;
    if fdtable::kind(fd) == FdKind::Epoll && last {
        forget_epoll(fd);
    }
    if last && fdtable::kind(fd) != FdKind::Real {
        crate::epoll::forget_member(fd);
    }
    match fdtable::forget(fd) {
        FdKind::SimUdp | FdKind::SimStream | FdKind::SimLocal | FdKind::Disk => {
            slot().args[0] = fd as i64;
            handoff(OP_CLOSE);
        }
        FdKind::File => record_file(FILE_CLOSE, fd, 0, 0, 0, ptr::null(), ptr::null()),
        FdKind::Timerfd => {
            slot().args[0] = TIMERFD_ID_BASE + fd as i64;
            handoff(OP_TIMER_DELETE);
        }
        FdKind::Signalfd => crate::sigfd::signalfd_close(fd),
        // A stale descriptor's object was forgotten for the host at the exec.
        FdKind::Epoll | FdKind::Real | FdKind::Stale => {}
    }
}

/// After a native `dup`-like call made `new` a copy of `old`: `new` now refers to the same
/// simulated socket or epoll instance (whatever `new` was before is forgotten). A copy of a
/// file or of a real descriptor is real.
unsafe fn after_dup(old: c_int, new: c_int) -> c_int {
    if new < 0 || new == old {
        return new;
    }
    forget_fd(new);
    match fdtable::kind(old) {
        FdKind::SimUdp | FdKind::SimStream | FdKind::SimLocal | FdKind::Epoll | FdKind::Disk
            if !fdtable::fits(new) =>
        {
            unsupported(b"dup: fd number beyond the shim's table", libc::SYS_dup, 0)
        }
        FdKind::SimUdp | FdKind::SimStream | FdKind::SimLocal | FdKind::Disk => {
            fdtable::dup(old, new);
            slot().args[0] = old as i64;
            slot().args[1] = new as i64;
            handoff(OP_DUP);
            if new <= 2 {
                // A child about to run its own code on a pipe as stdout (no exec between).
                crate::diskstdio::serve_std_stream(new);
            }
        }
        FdKind::Epoll => fdtable::dup(old, new),
        FdKind::Timerfd | FdKind::Signalfd => unsupported(
            b"dup of a timerfd or signalfd: their copies are not simulated yet",
            libc::SYS_dup,
            0,
        ),
        FdKind::Stale => crate::execfds::refuse_stale(old, b"dup()"),
        FdKind::File | FdKind::Real => {}
    }
    new
}

#[no_mangle]
pub unsafe extern "C" fn dup(fd: c_int) -> c_int {
    let r = real!(dup: fn(c_int) -> c_int)(fd);
    if let Some(_g) = Guard::enter() {
        if active() {
            return after_dup(fd, r);
        }
    }
    r
}

/// Before a `dup2`/`dup3` of `old` onto `new`: where `new` is the shim's region descriptor
/// (GlusterFS's runner child puts descriptors at fixed numbers before its exec), the region
/// moves to the lowest free number from 512 (else from 3), so the program gets the number it
/// asked for, as natively, and the next exec'd image still finds the region (the exec names
/// its number in `WEFT_SHM_FD`). With no number free, the `dup2` takes the region's place and
/// the next exec says so by name ([`crate::exec`], exit 4).
pub(crate) unsafe fn make_room_at(old: c_int, new: c_int) {
    let Some(_g) = Guard::enter() else { return };
    let region = region_fd();
    if !active() || region < 0 || new != region || old == new {
        return;
    }
    for low in [512, 3] {
        let args = [i64::from(region), i64::from(libc::F_DUPFD_CLOEXEC), low, 0, 0, 0];
        let moved = sys::raw(libc::SYS_fcntl, args);
        if moved >= 0 {
            crate::slot::REGION.store(moved, Ordering::Relaxed);
            return;
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn dup2(old: c_int, new: c_int) -> c_int {
    make_room_at(old, new);
    let r = real!(dup2: fn(c_int, c_int) -> c_int)(old, new);
    if let Some(_g) = Guard::enter() {
        if active() {
            return after_dup(old, r);
        }
    }
    r
}

#[no_mangle]
pub unsafe extern "C" fn dup3(old: c_int, new: c_int, flags: c_int) -> c_int {
    make_room_at(old, new);
    let r = real!(dup3: fn(c_int, c_int, c_int) -> c_int)(old, new, flags);
    if let Some(_g) = Guard::enter() {
        if active() {
            return after_dup(old, r);
        }
    }
    r
}

#[no_mangle]
pub unsafe extern "C" fn fcntl(fd: c_int, cmd: c_int, arg: c_ulong) -> c_int {
    if fdtable::kind(fd) == FdKind::Disk {
        if let Some(_g) = Guard::enter() {
            if active() {
                if let Some(r) = crate::datadir::fcntl(fd, cmd, arg) {
                    return r;
                }
            }
        }
    }
    if fdtable::is_sim(fd) && active() {
        if let Some(r) = owner_fcntl(fd, cmd, arg) {
            return r;
        }
    }
    let r = real!(fcntl: fn(c_int, c_int, c_ulong) -> c_int)(fd, cmd, arg);
    if r >= 0 && (cmd == libc::F_DUPFD || cmd == libc::F_DUPFD_CLOEXEC) {
        if let Some(_g) = Guard::enter() {
            if active() {
                return after_dup(fd, r);
            }
        }
    }
    if r >= 0 && cmd == libc::F_SETFL && fdtable::host_polled(fd) {
        fdtable::set_nonblocking(fd, arg as c_int & libc::O_NONBLOCK != 0);
    }
    r
}

/// `F_SETOWN`/`F_GETOWN` (and their `_EX` forms, `F_SETSIG`) on a simulated descriptor: the
/// kernel would look up a virtual pid it does not know (`ESRCH`: nginx's master gives each
/// worker's channel to the worker). The owner is kept and answered; no simulated descriptor
/// raises `SIGIO` (README).
unsafe fn owner_fcntl(fd: c_int, cmd: c_int, arg: c_ulong) -> Option<c_int> {
    /// `<fcntl.h>`'s `F_SETOWN_EX`, `F_GETOWN_EX`, `F_OWNER_PID`, `F_OWNER_PGRP` and
    /// `struct f_owner_ex`, which the libc crate lacks.
    const SETOWN_EX: c_int = 15;
    const GETOWN_EX: c_int = 16;
    const OWNER_PID: c_int = 1;
    const OWNER_PGRP: c_int = 2;
    #[repr(C)]
    struct OwnerEx {
        kind: c_int,
        pid: libc::pid_t,
    }
    let ex = arg as *mut OwnerEx;
    match cmd {
        libc::F_SETOWN => fdtable::set_owner(fd, arg as c_int),
        libc::F_GETOWN => return Some(fdtable::owner(fd)),
        SETOWN_EX if !ex.is_null() => {
            let pid = (*ex).pid;
            fdtable::set_owner(fd, if (*ex).kind == OWNER_PGRP { -pid } else { pid });
        }
        GETOWN_EX if !ex.is_null() => {
            let owner = fdtable::owner(fd);
            (*ex).kind = if owner < 0 { OWNER_PGRP } else { OWNER_PID };
            (*ex).pid = owner.abs();
        }
        10 => {} // F_SETSIG: the signal SIGIO would be
        _ => return None,
    }
    Some(0)
}

#[no_mangle]
pub unsafe extern "C" fn fcntl64(fd: c_int, cmd: c_int, arg: c_ulong) -> c_int {
    fcntl(fd, cmd, arg)
}

#[no_mangle]
pub unsafe extern "C" fn ioctl(fd: c_int, req: c_ulong, arg: *mut c_void) -> c_int {
    if fdtable::kind(fd) == FdKind::Disk && active() {
        if req == libc::FIONREAD {
            unsupported(b"ioctl(FIONREAD) on a data-directory file is not modelled", -1, 0);
        }
        // The modelled file system has no ioctls: what a regular file answers for one it
        // does not know.
        set_errno(libc::ENOTTY);
        return -1;
    }
    let r = real!(ioctl: fn(c_int, c_ulong, *mut c_void) -> c_int)(fd, req, arg);
    if r >= 0 && req == libc::FIONBIO && fdtable::host_polled(fd) && !arg.is_null() {
        fdtable::set_nonblocking(fd, *(arg as *const c_int) != 0);
    }
    r
}

/// The simulated machine's kernel has no io_uring (see `sys`'s trap): `ENOSYS`.
#[no_mangle]
pub unsafe extern "C" fn io_uring_setup(_entries: c_uint, _params: *mut c_void) -> c_long {
    set_errno(libc::ENOSYS);
    -1
}
