//! glibc's fortified twins of hooked calls. A program built with `-D_FORTIFY_SOURCE` (Debian
//! builds everything so) calls `__poll_chk`, `__recv_chk`, `__read_chk`… wherever the compiler
//! knows the buffer's size but not that the length fits it; glibc's twin checks the length and
//! then makes the system call itself, which no hook sees (NSD's `__ppoll_chk` ended its run as
//! a raw call). Each twin here makes glibc's check — a length beyond the buffer is
//! `__chk_fail()`, glibc's "buffer overflow detected" abort — and then calls the hook. The
//! formatted ones (`__dprintf_chk`, `__vdprintf_chk`) are [`crate::dprintf`]'s. Every twin of a
//! hooked function in glibc 2.36 is here (`tests/fortify.rs` checks the program imports them);
//! `__fdelt_chk` (`FD_SET`, `FD_ISSET`) makes no system call and is glibc's.

use crate::prelude::*;

extern "C" {
    /// glibc's report of a fortified call's overflow: prints and aborts.
    fn __chk_fail() -> !;
}

/// glibc's check: `len` elements of `size` bytes must fit in a buffer of `cap` bytes.
fn check(len: size_t, size: size_t, cap: size_t) {
    if len > cap / size {
        // SAFETY: glibc's own failure path; it never returns.
        unsafe { __chk_fail() }
    }
}

#[no_mangle]
pub unsafe extern "C" fn __read_chk(
    fd: c_int,
    buf: *mut c_void,
    len: size_t,
    cap: size_t,
) -> ssize_t {
    check(len, 1, cap);
    crate::io::read(fd, buf, len)
}

#[no_mangle]
pub unsafe extern "C" fn __pread_chk(
    fd: c_int,
    buf: *mut c_void,
    len: size_t,
    off: libc::off_t,
    cap: size_t,
) -> ssize_t {
    check(len, 1, cap);
    crate::files::pread(fd, buf, len, off)
}

#[no_mangle]
pub unsafe extern "C" fn __pread64_chk(
    fd: c_int,
    buf: *mut c_void,
    len: size_t,
    off: libc::off64_t,
    cap: size_t,
) -> ssize_t {
    check(len, 1, cap);
    crate::files::pread64(fd, buf, len, off)
}

#[no_mangle]
pub unsafe extern "C" fn __poll_chk(
    fds: *mut libc::pollfd,
    n: libc::nfds_t,
    timeout: c_int,
    cap: size_t,
) -> c_int {
    check(n as size_t, core::mem::size_of::<libc::pollfd>(), cap);
    crate::poll::poll(fds, n, timeout)
}

#[no_mangle]
pub unsafe extern "C" fn __ppoll_chk(
    fds: *mut libc::pollfd,
    n: libc::nfds_t,
    ts: *const libc::timespec,
    sigmask: *const libc::sigset_t,
    cap: size_t,
) -> c_int {
    check(n as size_t, core::mem::size_of::<libc::pollfd>(), cap);
    crate::poll::ppoll(fds, n, ts, sigmask)
}

#[no_mangle]
pub unsafe extern "C" fn __recv_chk(
    fd: c_int,
    buf: *mut c_void,
    len: size_t,
    cap: size_t,
    flags: c_int,
) -> ssize_t {
    check(len, 1, cap);
    crate::sockets::recv(fd, buf, len, flags)
}

#[no_mangle]
pub unsafe extern "C" fn __recvfrom_chk(
    fd: c_int,
    buf: *mut c_void,
    len: size_t,
    cap: size_t,
    flags: c_int,
    addr: *mut sockaddr,
    alen: *mut socklen_t,
) -> ssize_t {
    check(len, 1, cap);
    crate::sockets::recvfrom(fd, buf, len, flags, addr, alen)
}

#[no_mangle]
pub unsafe extern "C" fn __readlink_chk(
    path: *const c_char,
    buf: *mut c_char,
    len: size_t,
    cap: size_t,
) -> ssize_t {
    check(len, 1, cap);
    crate::diskcalls::readlink(path, buf, len)
}

#[no_mangle]
pub unsafe extern "C" fn __getgroups_chk(
    size: c_int,
    list: *mut libc::gid_t,
    cap: size_t,
) -> c_int {
    if size < 0 {
        set_errno(libc::EINVAL);
        return -1;
    }
    check(size as size_t, core::mem::size_of::<libc::gid_t>(), cap);
    crate::creds::getgroups(size, list)
}

#[no_mangle]
pub unsafe extern "C" fn __gethostname_chk(name: *mut c_char, len: size_t, cap: size_t) -> c_int {
    check(len, 1, cap);
    crate::machine::gethostname(name, len)
}
