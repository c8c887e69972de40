//! `sendfile` (and `sendfile64`, and `syscall(SYS_sendfile)`) when either end is something the
//! shim simulates: a socket, pipe or socketpair as the destination, or a data-directory file at
//! either end. The kernel would copy into the never-used placeholder socket (or read a
//! placeholder file), so the copy is made here instead: the file is read with the `pread`
//! hook and the bytes are written with the `write` hook, a chunk at a time, with Linux's
//! answers — the bytes sent, short when a non-blocking destination fills (then `EAGAIN` if
//! nothing fit), `*offset` moved and the file offset kept, or, without `offset`, the file
//! offset moved by what was sent. lighttpd serves every static file of more than a few
//! kilobytes this way; a client got the headers and no body. Between two real descriptors the
//! kernel's `sendfile` runs as before.

use crate::prelude::*;

#[no_mangle]
pub unsafe extern "C" fn sendfile(
    out: c_int,
    input: c_int,
    offset: *mut libc::off_t,
    count: size_t,
) -> ssize_t {
    let served = match Guard::enter() {
        Some(_g) => active() && (fdtable::is_sim(out) || on_disk(out) || on_disk(input)),
        None => false,
    };
    if !served {
        return real!(sendfile: fn(c_int, c_int, *mut libc::off_t, size_t) -> ssize_t)(
            out, input, offset, count,
        );
    }
    copy(out, input, offset, count)
}

#[no_mangle]
pub unsafe extern "C" fn sendfile64(
    out: c_int,
    input: c_int,
    offset: *mut libc::off64_t,
    count: size_t,
) -> ssize_t {
    sendfile(out, input, offset, count)
}

fn on_disk(fd: c_int) -> bool {
    fdtable::kind(fd) == FdKind::Disk
}

/// Copies up to `count` bytes of `input` from `*offset` (or its file offset) to `out` through
/// the hooks (no guard is held: each hook takes its own). A socket or pipe as `input` (Linux
/// splices from one since 5.12) gives what it has, and keeps what the destination did not take.
unsafe fn copy(out: c_int, input: c_int, offset: *mut libc::off_t, count: size_t) -> ssize_t {
    if !fdtable::is_sim(input) {
        return crate::splice::from_file(out, ptr::null_mut(), input, offset, count);
    }
    if !offset.is_null() {
        set_errno(libc::ESPIPE);
        return -1;
    }
    crate::splice::from_stream(out, ptr::null_mut(), input, count, false, false)
}
