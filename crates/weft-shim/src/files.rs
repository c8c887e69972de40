//! Files: the `open`/`fopen` family (a random device opens as a memfd of the process's random
//! stream, a process's own `/proc` memory files as simulated ones: `procfs`); files under the
//! node's data directories, served from the host's simulated disk ([`crate::datadir`]); and
//! every other file operation, which runs natively, each one on
//! a regular file opened through the hooks reported to the host, which puts it in the trace and
//! treats it as a scheduling point. Paths under /dev, /proc and /sys are
//! not recorded. Calls glibc makes internally (stdio's fopen/fwrite/fflush) are not seen, so
//! stdio on a data-directory file gets a stream of the shim's own ([`crate::diskstdio`]).

use crate::datadir::{disk_io, disk_path};
use crate::prelude::*;
use crate::procfs::open_simulated;
use crate::random::{fopen_random, is_random_device, random_memfd};

/// What an `open` of `path` is under the shim when it is not a real file: a random device (a
/// memfd of the process's random stream), a process's own `/proc` memory file, or a file under
/// a data directory (on the node's simulated disk). `None`: open the real file.
unsafe fn simulated_open(dir: c_int, path: *const c_char, flags: c_int) -> Option<c_int> {
    let _g = Guard::enter()?;
    if !active() {
        return None;
    }
    if is_random_device(path) {
        return Some(random_memfd());
    }
    open_simulated(path).or_else(|| crate::datadir::try_open(dir, path, flags))
}

/// `fopen`'s counterpart of [`simulated_open`]; a data-directory file gets a stream whose
/// reads and writes go through the disk hooks ([`crate::diskstdio`]).
unsafe fn simulated_fopen(path: *const c_char, mode: *const c_char) -> Option<*mut libc::FILE> {
    let _g = Guard::enter()?;
    if !active() {
        return None;
    }
    if is_random_device(path) {
        return Some(fopen_random(mode));
    }
    if let Some(fd) = open_simulated(path) {
        return Some(if fd < 0 { ptr::null_mut() } else { libc::fdopen(fd, mode) });
    }
    crate::diskstdio::try_fopen(path, mode)
}

#[no_mangle]
pub unsafe extern "C" fn open(path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
    if let Some(fd) = simulated_open(libc::AT_FDCWD, path, flags) {
        return fd;
    }
    let fd = crate::procpids::real_path(path, -1, |path| {
        real!(open: fn(*const c_char, c_int, c_uint) -> c_int)(path, flags, mode)
    });
    after_open(path, flags, fd)
}

#[no_mangle]
pub unsafe extern "C" fn open64(path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
    if let Some(fd) = simulated_open(libc::AT_FDCWD, path, flags) {
        return fd;
    }
    let fd = crate::procpids::real_path(path, -1, |path| {
        real!(open64: fn(*const c_char, c_int, c_uint) -> c_int)(path, flags, mode)
    });
    after_open(path, flags, fd)
}

#[no_mangle]
pub unsafe extern "C" fn openat(
    dir: c_int,
    path: *const c_char,
    flags: c_int,
    mode: c_uint,
) -> c_int {
    if let Some(fd) = simulated_open(dir, path, flags) {
        return fd;
    }
    let fd = crate::procpids::real_path(path, -1, |path| {
        real!(openat: fn(c_int, *const c_char, c_int, c_uint) -> c_int)(dir, path, flags, mode)
    });
    after_open(path, flags, fd)
}

#[no_mangle]
pub unsafe extern "C" fn openat64(
    dir: c_int,
    path: *const c_char,
    flags: c_int,
    mode: c_uint,
) -> c_int {
    if let Some(fd) = simulated_open(dir, path, flags) {
        return fd;
    }
    let fd = crate::procpids::real_path(path, -1, |path| {
        real!(openat64: fn(c_int, *const c_char, c_int, c_uint) -> c_int)(dir, path, flags, mode)
    });
    after_open(path, flags, fd)
}

#[no_mangle]
pub unsafe extern "C" fn fopen(path: *const c_char, mode: *const c_char) -> *mut libc::FILE {
    if let Some(file) = simulated_fopen(path, mode) {
        return file;
    }
    crate::procpids::real_path(path, ptr::null_mut(), |path| {
        real!(fopen: fn(*const c_char, *const c_char) -> *mut libc::FILE)(path, mode)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fopen64(path: *const c_char, mode: *const c_char) -> *mut libc::FILE {
    if let Some(file) = simulated_fopen(path, mode) {
        return file;
    }
    crate::procpids::real_path(path, ptr::null_mut(), |path| {
        real!(fopen64: fn(*const c_char, *const c_char) -> *mut libc::FILE)(path, mode)
    })
}

fn recordable(path: *const c_char) -> bool {
    if path.is_null() {
        return false;
    }
    // SAFETY: a NUL-terminated path from the caller.
    let p = unsafe { core::ffi::CStr::from_ptr(path) }.to_bytes();
    !(p.starts_with(b"/dev/") || p.starts_with(b"/proc/") || p.starts_with(b"/sys/"))
}

/// Copies NUL-terminated `path` into the slot's data at `at`; answers the new end.
fn put_path(s: &mut Slot, at: usize, path: *const c_char) -> usize {
    if path.is_null() {
        return at;
    }
    // SAFETY: a NUL-terminated path from the caller.
    let p = unsafe { core::ffi::CStr::from_ptr(path) }.to_bytes();
    let n = p.len().min(DATA_MAX - at - 1);
    s.data[at..at + n].copy_from_slice(&p[..n]);
    s.data[at + n] = 0;
    at + n + 1
}

/// Reports one file operation (already done natively) to the host. The caller's errno is
/// left as the native call set it.
pub(crate) fn record_file(
    kind: i64,
    fd: c_int,
    offset: i64,
    len: i64,
    result: i64,
    path: *const c_char,
    path2: *const c_char,
) {
    // SAFETY: __errno_location is this thread's errno.
    let errno = unsafe { *libc::__errno_location() };
    let s = slot();
    s.args[0] = kind;
    s.args[1] = fd as i64;
    s.args[2] = offset;
    s.args[3] = len;
    s.args[4] = if result < 0 { -(errno as i64) } else { result };
    let end = put_path(s, 0, path);
    let end = put_path(s, end, path2);
    s.len = end as u32;
    // SAFETY: callers check `active()` and hold the guard.
    unsafe { handoff(OP_FILE) };
    // SAFETY: as above; restored so recording cannot change what the caller sees.
    unsafe { *libc::__errno_location() = errno };
}

/// After a native open: remember and report regular files.
fn after_open(path: *const c_char, flags: c_int, fd: c_int) -> c_int {
    if let Some(_g) = Guard::enter() {
        let record = recordable(path);
        if active() && fd >= 0 {
            // A reused fd number (closed behind our back, e.g. by fclose) starts afresh.
            fdtable::open_file(fd, record);
        }
        if active() && record {
            record_file(FILE_OPEN, fd, flags as i64, 0, fd as i64, path, ptr::null());
        }
    }
    fd
}

/// After a native read/write-like call on `fd`: report it if `fd` is a recorded file.
pub(crate) fn record_io(kind: i64, fd: c_int, offset: i64, len: usize, result: i64) {
    if fdtable::kind(fd) != FdKind::File {
        return;
    }
    if let Some(_g) = Guard::enter() {
        if active() {
            record_file(kind, fd, offset, len as i64, result, ptr::null(), ptr::null());
        }
    }
}

/// After a native path operation: report it.
fn record_path(kind: i64, result: c_int, path: *const c_char, path2: *const c_char) {
    if let Some(_g) = Guard::enter() {
        if active() && recordable(path) {
            record_file(kind, -1, 0, 0, result as i64, path, path2);
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn creat(path: *const c_char, mode: libc::mode_t) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            let flags = libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC;
            if let Some(fd) = crate::datadir::try_open(libc::AT_FDCWD, path, flags) {
                return fd;
            }
        }
    }
    let fd = real!(creat: fn(*const c_char, libc::mode_t) -> c_int)(path, mode);
    after_open(path, libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC, fd)
}

#[no_mangle]
pub unsafe extern "C" fn pread(
    fd: c_int,
    buf: *mut c_void,
    len: size_t,
    off: libc::off_t,
) -> ssize_t {
    if let Some(r) =
        disk_io(fd, |fd| if off < 0 { einval() } else { crate::datadir::read(fd, buf, len, off) })
    {
        return r;
    }
    let r = real!(pread: fn(c_int, *mut c_void, size_t, libc::off_t) -> ssize_t)(fd, buf, len, off);
    record_io(FILE_READ, fd, off, len, r as i64);
    r
}

#[no_mangle]
pub unsafe extern "C" fn pread64(
    fd: c_int,
    buf: *mut c_void,
    len: size_t,
    off: libc::off64_t,
) -> ssize_t {
    if let Some(r) =
        disk_io(fd, |fd| if off < 0 { einval() } else { crate::datadir::read(fd, buf, len, off) })
    {
        return r;
    }
    let r =
        real!(pread64: fn(c_int, *mut c_void, size_t, libc::off64_t) -> ssize_t)(fd, buf, len, off);
    record_io(FILE_READ, fd, off, len, r as i64);
    r
}

#[no_mangle]
pub unsafe extern "C" fn pwrite(
    fd: c_int,
    buf: *const c_void,
    len: size_t,
    off: libc::off_t,
) -> ssize_t {
    if let Some(r) = disk_io(fd, |fd| {
        let iov = [libc::iovec { iov_base: buf as *mut c_void, iov_len: len }];
        if off < 0 {
            einval()
        } else {
            crate::datadir::write(fd, &iov, off)
        }
    }) {
        return r;
    }
    let r =
        real!(pwrite: fn(c_int, *const c_void, size_t, libc::off_t) -> ssize_t)(fd, buf, len, off);
    record_io(FILE_WRITE, fd, off, len, r as i64);
    r
}

#[no_mangle]
pub unsafe extern "C" fn pwrite64(
    fd: c_int,
    buf: *const c_void,
    len: size_t,
    off: libc::off64_t,
) -> ssize_t {
    if let Some(r) = disk_io(fd, |fd| {
        let iov = [libc::iovec { iov_base: buf as *mut c_void, iov_len: len }];
        if off < 0 {
            einval()
        } else {
            crate::datadir::write(fd, &iov, off)
        }
    }) {
        return r;
    }
    let r = real!(pwrite64: fn(c_int, *const c_void, size_t, libc::off64_t) -> ssize_t)(
        fd, buf, len, off,
    );
    record_io(FILE_WRITE, fd, off, len, r as i64);
    r
}

#[no_mangle]
pub unsafe extern "C" fn fsync(fd: c_int) -> c_int {
    if let Some(r) = disk_io(fd, |fd| crate::datadir::fsync(fd, false)) {
        return r;
    }
    let r = real!(fsync: fn(c_int) -> c_int)(fd);
    record_io(FILE_FSYNC, fd, 0, 0, r as i64);
    r
}

#[no_mangle]
pub unsafe extern "C" fn fdatasync(fd: c_int) -> c_int {
    if let Some(r) = disk_io(fd, |fd| crate::datadir::fsync(fd, true)) {
        return r;
    }
    let r = real!(fdatasync: fn(c_int) -> c_int)(fd);
    record_io(FILE_FDATASYNC, fd, 0, 0, r as i64);
    r
}

#[no_mangle]
pub unsafe extern "C" fn ftruncate(fd: c_int, len: libc::off_t) -> c_int {
    if let Some(r) = disk_io(fd, |fd| crate::datadir::ftruncate(fd, len)) {
        return r;
    }
    let r = real!(ftruncate: fn(c_int, libc::off_t) -> c_int)(fd, len);
    record_io(FILE_TRUNCATE, fd, len, 0, r as i64);
    r
}

#[no_mangle]
pub unsafe extern "C" fn ftruncate64(fd: c_int, len: libc::off64_t) -> c_int {
    if let Some(r) = disk_io(fd, |fd| crate::datadir::ftruncate(fd, len)) {
        return r;
    }
    let r = real!(ftruncate64: fn(c_int, libc::off64_t) -> c_int)(fd, len);
    record_io(FILE_TRUNCATE, fd, len, 0, r as i64);
    r
}

#[no_mangle]
pub unsafe extern "C" fn rename(from: *const c_char, to: *const c_char) -> c_int {
    if let Some(r) =
        disk_path(|| crate::datadir::try_rename(libc::AT_FDCWD, from, libc::AT_FDCWD, to, 0))
    {
        return r;
    }
    let r = real!(rename: fn(*const c_char, *const c_char) -> c_int)(from, to);
    record_path(FILE_RENAME, r, from, to);
    r
}

#[no_mangle]
pub unsafe extern "C" fn renameat(
    fd1: c_int,
    from: *const c_char,
    fd2: c_int,
    to: *const c_char,
) -> c_int {
    if let Some(r) = disk_path(|| crate::datadir::try_rename(fd1, from, fd2, to, 0)) {
        return r;
    }
    let r = real!(renameat: fn(c_int, *const c_char, c_int, *const c_char) -> c_int)(
        fd1, from, fd2, to,
    );
    record_path(FILE_RENAME, r, from, to);
    r
}

#[no_mangle]
pub unsafe extern "C" fn unlink(path: *const c_char) -> c_int {
    if let Some(r) = disk_path(|| crate::datadir::try_unlink(libc::AT_FDCWD, path, 0)) {
        return r;
    }
    let r = real!(unlink: fn(*const c_char) -> c_int)(path);
    record_path(FILE_UNLINK, r, path, ptr::null());
    r
}

#[no_mangle]
pub unsafe extern "C" fn unlinkat(dir: c_int, path: *const c_char, flags: c_int) -> c_int {
    if let Some(r) = disk_path(|| crate::datadir::try_unlink(dir, path, flags)) {
        return r;
    }
    let r = real!(unlinkat: fn(c_int, *const c_char, c_int) -> c_int)(dir, path, flags);
    record_path(FILE_UNLINK, r, path, ptr::null());
    r
}

#[no_mangle]
pub unsafe extern "C" fn renameat2(
    fd1: c_int,
    from: *const c_char,
    fd2: c_int,
    to: *const c_char,
    flags: c_uint,
) -> c_int {
    if let Some(r) = disk_path(|| crate::datadir::try_rename(fd1, from, fd2, to, flags)) {
        return r;
    }
    let r = real!(renameat2: fn(c_int, *const c_char, c_int, *const c_char, c_uint) -> c_int)(
        fd1, from, fd2, to, flags,
    );
    record_path(FILE_RENAME, r, from, to);
    r
}

fn einval() -> ssize_t {
    ret_errno(-(libc::EINVAL as i64)) as ssize_t
}

/// `preadv`/`pwritev` argument checks (a valid vector, a non-negative offset), then `io`.
///
/// # Safety
/// `iov` points to `n` iovecs, as the caller of `preadv`/`pwritev` promised.
unsafe fn at_offset(
    iov: *const libc::iovec,
    n: c_int,
    off: libc::off_t,
    io: impl FnOnce(&[libc::iovec]) -> ssize_t,
) -> ssize_t {
    match crate::io::iovecs(iov, n) {
        Some(v) if off >= 0 => io(v),
        _ => einval(),
    }
}

// The fortified entry points (`_FORTIFY_SOURCE`): the same calls, with a checked buffer.
#[no_mangle]
pub unsafe extern "C" fn __open_2(path: *const c_char, flags: c_int) -> c_int {
    open(path, flags, 0)
}

#[no_mangle]
pub unsafe extern "C" fn __open64_2(path: *const c_char, flags: c_int) -> c_int {
    open64(path, flags, 0)
}

#[no_mangle]
pub unsafe extern "C" fn __openat_2(dir: c_int, path: *const c_char, flags: c_int) -> c_int {
    openat(dir, path, flags, 0)
}

#[no_mangle]
pub unsafe extern "C" fn __openat64_2(dir: c_int, path: *const c_char, flags: c_int) -> c_int {
    openat64(dir, path, flags, 0)
}

#[no_mangle]
pub unsafe extern "C" fn preadv(
    fd: c_int,
    iov: *const libc::iovec,
    n: c_int,
    off: libc::off_t,
) -> ssize_t {
    if let Some(r) = disk_io(fd, |fd| at_offset(iov, n, off, |v| crate::datadir::readv(fd, v, off)))
    {
        return r;
    }
    real!(preadv: fn(c_int, *const libc::iovec, c_int, libc::off_t) -> ssize_t)(fd, iov, n, off)
}

#[no_mangle]
pub unsafe extern "C" fn preadv64(
    fd: c_int,
    iov: *const libc::iovec,
    n: c_int,
    off: libc::off64_t,
) -> ssize_t {
    preadv(fd, iov, n, off)
}

#[no_mangle]
pub unsafe extern "C" fn pwritev(
    fd: c_int,
    iov: *const libc::iovec,
    n: c_int,
    off: libc::off_t,
) -> ssize_t {
    if let Some(r) = disk_io(fd, |fd| at_offset(iov, n, off, |v| crate::datadir::write(fd, v, off)))
    {
        return r;
    }
    real!(pwritev: fn(c_int, *const libc::iovec, c_int, libc::off_t) -> ssize_t)(fd, iov, n, off)
}

#[no_mangle]
pub unsafe extern "C" fn pwritev64(
    fd: c_int,
    iov: *const libc::iovec,
    n: c_int,
    off: libc::off64_t,
) -> ssize_t {
    pwritev(fd, iov, n, off)
}
