//! `splice`, `tee`, `vmsplice` and `copy_file_range` when an end is something the shim
//! simulates (a pipe, socketpair or stream socket kept by the host, or a data-directory file).
//! The kernel would move bytes between the placeholders that hold those numbers — an empty
//! pipe, a never-connected socket, `/dev/null` — so it answered `EINVAL` or copied nothing,
//! silently: `cp` copies with `copy_file_range`, HAProxy and proxies move a socket's bytes into
//! a pipe with `splice`. Here the bytes go through the hooks instead, with Linux's answers.
//!
//! Bytes are never lost: from a pipe or socket the input is first *peeked*, what the output
//! takes is written, and exactly that much is then taken from the input (the host keeps a
//! simulated pipe's bytes, so it can peek one as it peeks a socket). A file input is read at its
//! offset, which moves by what was written. Between two real descriptors the kernel runs the
//! call as before.

use crate::prelude::*;

/// Bytes moved per step (on the caller's stack; one `write` each).
const CHUNK: usize = 16 * 1024;

/// True when the shim answers a call on `fds`: active, outside another hook, and one of them
/// simulated or on the simulated disk.
fn served(fds: &[c_int]) -> bool {
    let Some(_g) = Guard::enter() else { return false };
    active() && fds.iter().any(|&fd| fdtable::is_sim(fd) || fdtable::kind(fd) == FdKind::Disk)
}

/// Whether `fd` is a pipe end: its real descriptor is a FIFO (a simulated pipe's placeholder
/// is a real pipe, a socketpair's a socket, a data-directory file's `/dev/null`).
unsafe fn is_pipe(fd: c_int) -> bool {
    let mut st: libc::stat = core::mem::zeroed();
    let r = sys::raw_ret(libc::SYS_fstat, [fd as i64, &mut st as *mut _ as i64, 0, 0, 0, 0]);
    r == 0 && st.st_mode & libc::S_IFMT == libc::S_IFIFO
}

fn fail(e: c_int) -> ssize_t {
    set_errno(e);
    -1
}

/// Peeks (`peek`) or takes up to `buf.len()` bytes of the simulated pipe, socketpair or stream
/// `fd`, through the host as a `recv` would.
unsafe fn take(fd: c_int, buf: &mut [u8], peek: bool, nonblock: bool) -> ssize_t {
    let Some(_g) = Guard::enter() else { return fail(libc::EINVAL) };
    let iov = [libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() }];
    let flags =
        if peek { libc::MSG_PEEK } else { 0 } | if nonblock { libc::MSG_DONTWAIT } else { 0 };
    crate::sockets::recv_common(fd, &iov, flags, ptr::null_mut(), ptr::null_mut(), None)
}

/// Writes `buf` to `out`, at `*off` (moved by what was written) when `off` is given.
unsafe fn put(out: c_int, off: *mut i64, buf: &[u8]) -> ssize_t {
    if off.is_null() {
        return crate::io::write(out, buf.as_ptr().cast(), buf.len());
    }
    let w = crate::files::pwrite64(out, buf.as_ptr().cast(), buf.len(), *off);
    if w > 0 {
        *off += w as i64;
    }
    w
}

/// Whether `fd` could take a write now (a zero-timeout `poll` through the hook).
unsafe fn writable(fd: c_int) -> bool {
    let mut p = libc::pollfd { fd, events: libc::POLLOUT, revents: 0 };
    crate::poll::poll(&mut p, 1, 0) == 1 && p.revents & libc::POLLOUT != 0
}

/// Moves up to `count` bytes from the pipe or stream `input` to `out` (at `out_off` when
/// given), taking from `input` only what `out` took (none with `keep`: `tee`). One step, as
/// Linux moves what is there rather than waiting for `count`.
pub(crate) unsafe fn from_stream(
    out: c_int,
    out_off: *mut i64,
    input: c_int,
    count: usize,
    nonblock: bool,
    keep: bool,
) -> ssize_t {
    if nonblock && is_pipe(out) && !writable(out) {
        return fail(libc::EAGAIN);
    }
    let mut buf = [0u8; CHUNK];
    let want = count.min(CHUNK);
    let simulated = fdtable::is_sim(input);
    let got = if simulated {
        take(input, &mut buf[..want], true, nonblock)
    } else {
        crate::io::read(input, buf.as_mut_ptr().cast(), want)
    };
    if got <= 0 {
        return got;
    }
    let w = put(out, out_off, &buf[..got as usize]);
    if !simulated && w < got {
        unsupported(b"splice from a real pipe into a descriptor that took only part of it", -1, 0);
    }
    if w <= 0 {
        return w;
    }
    if simulated && !keep {
        take(input, &mut buf[..w as usize], false, true);
    }
    w
}

/// Copies up to `count` bytes of the file `input` from `*in_off` (or its file offset, which
/// then moves) to `out` (at `*out_off` when given), a chunk at a time, stopping at the file's
/// end or when `out` takes less than a chunk.
pub(crate) unsafe fn from_file(
    out: c_int,
    out_off: *mut i64,
    input: c_int,
    in_off: *mut i64,
    count: usize,
) -> ssize_t {
    let start =
        if in_off.is_null() { crate::datadir::lseek64(input, 0, libc::SEEK_CUR) } else { *in_off };
    if start < 0 {
        return -1;
    }
    let mut buf = [0u8; CHUNK];
    let mut moved = 0usize;
    while moved < count {
        let want = (count - moved).min(CHUNK);
        let at = start + moved as i64;
        let got = crate::files::pread64(input, buf.as_mut_ptr().cast(), want, at);
        let w = if got > 0 { put(out, out_off, &buf[..got as usize]) } else { got };
        if w <= 0 {
            if w < 0 && moved == 0 {
                return -1;
            }
            break;
        }
        moved += w as usize;
        if w < got {
            break;
        }
    }
    let end = start + moved as i64;
    if in_off.is_null() {
        crate::datadir::lseek64(input, end, libc::SEEK_SET);
    } else {
        *in_off = end;
    }
    moved as ssize_t
}

#[no_mangle]
pub unsafe extern "C" fn splice(
    input: c_int,
    in_off: *mut libc::loff_t,
    out: c_int,
    out_off: *mut libc::loff_t,
    len: size_t,
    flags: c_uint,
) -> ssize_t {
    if !served(&[input, out]) {
        return real!(splice: fn(c_int, *mut libc::loff_t, c_int, *mut libc::loff_t, size_t, c_uint) -> ssize_t)(
            input, in_off, out, out_off, len, flags,
        );
    }
    let (in_pipe, out_pipe) = (is_pipe(input), is_pipe(out));
    if !in_pipe && !out_pipe {
        return fail(libc::EINVAL);
    }
    if (in_pipe && !in_off.is_null()) || (out_pipe && !out_off.is_null()) {
        return fail(libc::ESPIPE);
    }
    let nonblock = flags & libc::SPLICE_F_NONBLOCK != 0;
    let stream = in_pipe || matches!(fdtable::kind(input), FdKind::SimStream | FdKind::SimLocal);
    if stream {
        return from_stream(out, out_off, input, len, nonblock, false);
    }
    if fdtable::kind(input) == FdKind::SimUdp {
        return fail(libc::EINVAL);
    }
    from_file(out, out_off, input, in_off, len)
}

#[no_mangle]
pub unsafe extern "C" fn tee(input: c_int, out: c_int, len: size_t, flags: c_uint) -> ssize_t {
    if !served(&[input, out]) {
        return real!(tee: fn(c_int, c_int, size_t, c_uint) -> ssize_t)(input, out, len, flags);
    }
    if !is_pipe(input) || !is_pipe(out) {
        return fail(libc::EINVAL);
    }
    if !fdtable::is_sim(input) {
        unsupported(b"tee from a real pipe into a simulated one is not simulated", -1, 0);
    }
    from_stream(out, ptr::null_mut(), input, len, flags & libc::SPLICE_F_NONBLOCK != 0, true)
}

/// `vmsplice` into a simulated pipe is a `writev`, out of one a `readv` (which end `fd` is,
/// its placeholder pipe end's access mode says).
#[no_mangle]
pub unsafe extern "C" fn vmsplice(
    fd: c_int,
    iov: *const libc::iovec,
    n: libc::size_t,
    flags: c_uint,
) -> ssize_t {
    if !served(&[fd]) {
        return real!(vmsplice: fn(c_int, *const libc::iovec, libc::size_t, c_uint) -> ssize_t)(
            fd, iov, n, flags,
        );
    }
    if !is_pipe(fd) {
        return fail(libc::EBADF);
    }
    let mode = sys::raw_ret(libc::SYS_fcntl, [fd as i64, libc::F_GETFL as i64, 0, 0, 0, 0]);
    if mode as c_int & libc::O_ACCMODE == libc::O_WRONLY {
        crate::io::writev(fd, iov, n as c_int)
    } else {
        crate::io::readv(fd, iov, n as c_int)
    }
}

/// `copy_file_range` with a data-directory file at either end: read and written through the
/// hooks (the simulated disk has no reflinks: a copy is its reads and writes). Linux's answers
/// for the rest: a pipe or socket is `EINVAL`, flags are `EINVAL`, an `O_APPEND` output `EBADF`.
#[no_mangle]
pub unsafe extern "C" fn copy_file_range(
    input: c_int,
    in_off: *mut libc::loff_t,
    out: c_int,
    out_off: *mut libc::loff_t,
    len: size_t,
    flags: c_uint,
) -> ssize_t {
    if !served(&[input, out]) {
        return real!(copy_file_range: fn(c_int, *mut libc::loff_t, c_int, *mut libc::loff_t, size_t, c_uint) -> ssize_t)(
            input, in_off, out, out_off, len, flags,
        );
    }
    if flags != 0
        || fdtable::is_sim(input)
        || fdtable::is_sim(out)
        || is_pipe(input)
        || is_pipe(out)
    {
        return fail(libc::EINVAL);
    }
    if crate::io::fcntl(out, libc::F_GETFL, 0) & libc::O_APPEND != 0 {
        return fail(libc::EBADF);
    }
    let mut at =
        if out_off.is_null() { crate::datadir::lseek64(out, 0, libc::SEEK_CUR) } else { *out_off };
    if at < 0 {
        return -1;
    }
    let moved = from_file(out, &mut at, input, in_off, len);
    if moved > 0 && out_off.is_null() {
        crate::datadir::lseek64(out, at, libc::SEEK_SET);
    } else if moved > 0 {
        *out_off = at;
    }
    moved
}
