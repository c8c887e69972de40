//! Files under the node's data directories, on the host's simulated disk. The host names the
//! directories in `WEFT_DATA_DIRS` (absolute, `:`-separated, read once); a path at or under one
//! of them (after joining the working directory and resolving `.`, `..` and `//` lexically), or
//! relative to a directory descriptor opened there, is served by the host's disk model through
//! `OP_DISK`. A descriptor for such a file holds its number with a real `/dev/null`; the host
//! keeps its offset and flags ([`FdKind::Disk`]).
//!
//! This module owns path classification, the requests to the host, and the helpers the
//! `open`/`read`/`write`/`rename`/`unlink`/`fcntl` hooks call (each expects the guard held and
//! the state active), and hooks `lseek`. The metadata calls are in [`crate::diskstat`],
//! listings in [`crate::disklist`], the other calls (refused by name, or trivially served) in
//! [`crate::diskcalls`].

use crate::diskcalls::refuse;
use crate::prelude::*;
use core::cell::UnsafeCell;

/// The longest path handled (longer ones in a data directory are refused).
const PATH_MAX: usize = 4096;

/// The directories, `:`-separated, as read from the environment (`DIRS_LEN` bytes).
struct Dirs(UnsafeCell<[u8; PATH_MAX]>);
// SAFETY: written once, before DIRS_STATE is published as known; only read afterwards.
unsafe impl Sync for Dirs {}
static DIRS: Dirs = Dirs(UnsafeCell::new([0; PATH_MAX]));
static DIRS_LEN: AtomicU32 = AtomicU32::new(0);
/// 0: not read yet; 1: read.
static DIRS_STATE: AtomicU32 = AtomicU32::new(0);

fn dirs() -> &'static [u8] {
    if DIRS_STATE.load(Ordering::Acquire) == 0 {
        // SAFETY: getenv with a NUL-terminated name; the answer is NUL-terminated or null.
        let p = unsafe { libc::getenv(ENV_DATA_DIRS.as_ptr().cast()) };
        if !p.is_null() {
            // SAFETY: as above.
            let v = unsafe { core::ffi::CStr::from_ptr(p) }.to_bytes();
            let n = v.len().min(PATH_MAX);
            // SAFETY: only the thread holding the baton runs hooks; nobody reads DIRS yet.
            unsafe { (&mut *DIRS.0.get())[..n].copy_from_slice(&v[..n]) };
            DIRS_LEN.store(n as u32, Ordering::Relaxed);
        }
        DIRS_STATE.store(1, Ordering::Release);
    }
    let n = DIRS_LEN.load(Ordering::Relaxed) as usize;
    // SAFETY: written once above, before the state was published.
    unsafe { &(&*DIRS.0.get())[..n] }
}

/// The text of the `WEFT_DATA_DIRS=…` entry an exec'd image must inherit (empty: none).
pub(crate) fn env_value() -> &'static [u8] {
    dirs()
}

/// An absolute, normalised path.
pub(crate) struct Path {
    buf: [u8; PATH_MAX],
    len: usize,
}

impl Path {
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// Where a path argument leads.
#[allow(clippy::large_enum_variant)] // no allocation in hooks: the path lives on the stack
pub(crate) enum Where {
    /// A real file: the call runs natively.
    Real,
    /// Under a data directory: absolute and normalised.
    Data(Path),
    /// Relative to a disk directory descriptor (the host resolves it).
    Relative,
}

/// Appends the components of `p` to `out`, resolving `.`, `..` and empty components.
fn push_components(out: &mut Path, p: &[u8]) -> bool {
    for comp in p.split(|&b| b == b'/') {
        match comp {
            b"" | b"." => {}
            b".." => {
                let cut = out.bytes().iter().rposition(|&b| b == b'/').unwrap_or(0);
                out.len = cut;
            }
            c => {
                if out.len + 1 + c.len() >= PATH_MAX {
                    return false;
                }
                out.buf[out.len] = b'/';
                out.buf[out.len + 1..out.len + 1 + c.len()].copy_from_slice(c);
                out.len += 1 + c.len();
            }
        }
    }
    true
}

/// True when `p` is one of the data directories or under one.
fn in_data_dir(p: &[u8]) -> bool {
    dirs().split(|&b| b == b':').filter(|d| !d.is_empty()).any(|d| {
        p.len() >= d.len() && &p[..d.len()] == d && (p.len() == d.len() || p[d.len()] == b'/')
    })
}

/// Where `path` (relative to `dirfd`) leads.
pub(crate) fn classify(dirfd: c_int, path: *const c_char) -> Where {
    if path.is_null() || dirs().is_empty() {
        return Where::Real;
    }
    // SAFETY: a NUL-terminated path from the caller.
    let p = unsafe { core::ffi::CStr::from_ptr(path) }.to_bytes();
    let mut out = Path { buf: [0; PATH_MAX], len: 0 };
    if !p.starts_with(b"/") {
        if dirfd != libc::AT_FDCWD {
            return if fdtable::kind(dirfd) == FdKind::Disk {
                Where::Relative
            } else {
                Where::Real
            };
        }
        // SAFETY: getcwd writes at most PATH_MAX bytes into the buffer.
        if unsafe { libc::getcwd(out.buf.as_mut_ptr().cast(), PATH_MAX) }.is_null() {
            return Where::Real;
        }
        let cwd_len = out.buf.iter().position(|&b| b == 0).unwrap_or(0);
        let mut cwd = [0u8; PATH_MAX];
        cwd[..cwd_len].copy_from_slice(&out.buf[..cwd_len]);
        out.len = 0;
        if !push_components(&mut out, &cwd[..cwd_len]) {
            return Where::Real;
        }
    }
    if !push_components(&mut out, p) {
        return if in_data_dir(p) { too_long() } else { Where::Real };
    }
    if out.len == 0 {
        out.buf[0] = b'/';
        out.len = 1;
    }
    if in_data_dir(out.bytes()) {
        Where::Data(out)
    } else {
        Where::Real
    }
}

fn too_long() -> ! {
    unsupported(b"a data-directory path longer than 4096 bytes", -1, 0)
}

/// Puts `w`'s path (or the caller's relative `raw` one) into the slot's data at `at`; answers
/// the end and the dirfd the host resolves it against.
fn put(s: &mut Slot, at: usize, w: &Where, dirfd: c_int, raw: *const c_char) -> (usize, i64) {
    let (bytes, fd): (&[u8], i64) = match w {
        Where::Data(p) => (p.bytes(), libc::AT_FDCWD as i64),
        // SAFETY: a NUL-terminated path from the caller.
        _ => (unsafe { core::ffi::CStr::from_ptr(raw) }.to_bytes(), dirfd as i64),
    };
    let n = bytes.len().min(DATA_MAX - at - 1);
    s.data[at..at + n].copy_from_slice(&bytes[..n]);
    s.data[at + n] = 0;
    (at + n + 1, fd)
}

/// One disk request with `kind` and `args[1..]`; answers libc's convention (-1 + errno).
pub(crate) fn request(kind: i64, args: [i64; 4]) -> i64 {
    ret_errno(request_raw(kind, args))
}

/// [`request`]'s answer as the host gave it (`-errno`, or a value such as `TOUCHED`), errno
/// untouched. `args[5]` is left as the caller set it.
pub(crate) fn request_raw(kind: i64, args: [i64; 4]) -> i64 {
    let s = slot();
    s.args[0] = kind;
    s.args[1..5].copy_from_slice(&args);
    // SAFETY: callers hold the guard and the state is active.
    unsafe { handoff(OP_DISK) }
}

/// A path request: the path (or the relative one) in `data`, its dirfd in `args[1]`.
pub(crate) fn path_request(
    kind: i64,
    w: &Where,
    dirfd: c_int,
    raw: *const c_char,
    more: [i64; 3],
) -> i64 {
    let s = slot();
    let (end, fd) = put(s, 0, w, dirfd, raw);
    s.len = end as u32;
    request(kind, [fd, more[0], more[1], more[2]])
}

/// `open` of a data-directory path: `None` when `path` is real.
pub(crate) fn try_open(dirfd: c_int, path: *const c_char, flags: c_int) -> Option<c_int> {
    let w = classify(dirfd, path);
    if let Where::Real = w {
        return None;
    }
    let cloexec = flags & libc::O_CLOEXEC;
    let open = real!(open: fn(*const c_char, c_int, c_uint) -> c_int);
    // SAFETY: libc's open with a NUL-terminated literal path.
    let fd = unsafe { open(c"/dev/null".as_ptr(), libc::O_RDONLY | cloexec, 0) };
    if fd < 0 {
        return Some(fd);
    }
    if !fdtable::fits(fd) {
        unsupported(b"open: a data-directory file beyond the shim's descriptor table", -1, 0);
    }
    Some(open_answered(fd, flags, &w, dirfd, path))
}

fn open_answered(fd: c_int, flags: c_int, w: &Where, dirfd: c_int, path: *const c_char) -> c_int {
    let s = slot();
    let (end, at) = put(s, 0, w, dirfd, path);
    s.len = end as u32;
    let r = request(DISK_OPEN, [fd as i64, flags as i64, at, 0]);
    if r < 0 {
        // SAFETY: errno is this thread's; the placeholder is ours to close.
        let e = unsafe { *libc::__errno_location() };
        let close = real!(close: fn(c_int) -> c_int);
        // SAFETY: closing the placeholder this call opened.
        unsafe { close(fd) };
        set_errno(e);
        return -1;
    }
    fdtable::open_disk(fd);
    fd
}

/// `read`/`pread` (`off` < 0: at the descriptor's offset) of a disk descriptor.
pub(crate) fn read(fd: c_int, buf: *mut c_void, len: usize, off: i64) -> ssize_t {
    read_as(fd, buf, len, off, 0)
}

/// A read as [`read`]; `page_in` = 1 for the page-in of a mapping ([`crate::diskmmap`]), on
/// which the host draws no latent sector error (that would be a `SIGBUS` at access).
pub(crate) fn read_as(fd: c_int, buf: *mut c_void, len: usize, off: i64, page_in: i64) -> ssize_t {
    let mut done = 0usize;
    while done < len || len == 0 {
        let want = (len - done).min(DATA_MAX);
        let at = if off < 0 { -1 } else { off + done as i64 };
        let r = request(DISK_READ, [fd as i64, at, want as i64, page_in]);
        if r < 0 {
            return if done > 0 { done as ssize_t } else { -1 };
        }
        let n = r as usize;
        // SAFETY: the caller's buffer holds `len` bytes; n <= want <= len - done.
        unsafe { ptr::copy_nonoverlapping(slot().data.as_ptr(), (buf as *mut u8).add(done), n) };
        done += n;
        if n < want || len == 0 {
            break;
        }
    }
    done as ssize_t
}

/// `write`/`pwrite` of the bytes of `iov` to a disk descriptor: one write call on the disk,
/// sent in parts of at most `DATA_MAX` bytes.
pub(crate) fn write(fd: c_int, iov: &[libc::iovec], off: i64) -> ssize_t {
    let total: usize = iov.iter().map(|v| v.iov_len).sum();
    if total == 0 {
        return 0;
    }
    let mut sent = 0usize;
    loop {
        let s = slot();
        // SAFETY: `iov` describes the caller's readable buffers.
        let n = unsafe { crate::io::gather(iov, sent, &mut s.data) };
        sent += n;
        s.len = n as u32;
        let more = sent < total;
        let r = request(DISK_WRITE, [fd as i64, off, more as i64, 0]);
        if r < 0 || !more {
            return r as ssize_t;
        }
    }
}

/// `readv`/`preadv` of a disk descriptor: each buffer in turn, until a short read.
pub(crate) fn readv(fd: c_int, iov: &[libc::iovec], off: i64) -> ssize_t {
    let mut done = 0i64;
    for v in iov {
        let at = if off < 0 { -1 } else { off + done };
        let r = read(fd, v.iov_base, v.iov_len, at);
        if r < 0 {
            return if done > 0 { done as ssize_t } else { -1 };
        }
        done += r as i64;
        if (r as usize) < v.iov_len {
            break;
        }
    }
    done as ssize_t
}

pub(crate) fn fsync(fd: c_int, data_only: bool) -> c_int {
    request(DISK_FSYNC, [fd as i64, data_only as i64, 0, 0]) as c_int
}

pub(crate) fn ftruncate(fd: c_int, len: i64) -> c_int {
    request(DISK_TRUNCATE, [fd as i64, len, 0, 0]) as c_int
}

/// `rename`/`renameat`/`renameat2`: `None` when both paths are real; `EXDEV` when only one is
/// in a data directory (they are on different file systems).
pub(crate) fn try_rename(
    d1: c_int,
    from: *const c_char,
    d2: c_int,
    to: *const c_char,
    flags: c_uint,
) -> Option<c_int> {
    two_paths(DISK_RENAME, (d1, from), (d2, to), flags as i64, || None)
}

/// `link`/`linkat`: as [`try_rename`]; `AT_EMPTY_PATH` (a name for an open descriptor) is
/// refused by name, unknown flags are `EINVAL`.
pub(crate) fn try_link(
    d1: c_int,
    from: *const c_char,
    d2: c_int,
    to: *const c_char,
    flags: c_int,
) -> Option<c_int> {
    two_paths(DISK_LINK, (d1, from), (d2, to), flags as i64, || {
        if flags & libc::AT_EMPTY_PATH != 0 {
            refuse(b"linkat(AT_EMPTY_PATH) in a data directory is not modelled")
        }
        (flags & !libc::AT_SYMLINK_FOLLOW != 0).then(|| {
            set_errno(libc::EINVAL);
            -1
        })
    })
}

/// A call naming two paths (`op`: rename, link): `None` when both are real; `EXDEV` when only
/// one is in a data directory; else `check`'s early answer (bad flags), or the host's.
fn two_paths(
    op: i64,
    (d1, from): (c_int, *const c_char),
    (d2, to): (c_int, *const c_char),
    flags: i64,
    check: impl FnOnce() -> Option<c_int>,
) -> Option<c_int> {
    let (a, b) = (classify(d1, from), classify(d2, to));
    match (&a, &b) {
        (Where::Real, Where::Real) => None,
        (Where::Real, _) | (_, Where::Real) => {
            set_errno(libc::EXDEV);
            Some(-1)
        }
        _ => check().or_else(|| {
            let s = slot();
            let (end, fd1) = put(s, 0, &a, d1, from);
            let (end, fd2) = put(s, end, &b, d2, to);
            s.len = end as u32;
            Some(request(op, [fd1, fd2, flags, 0]) as c_int)
        }),
    }
}

/// `unlink`/`unlinkat`: `None` when the path is real.
pub(crate) fn try_unlink(dirfd: c_int, path: *const c_char, flags: c_int) -> Option<c_int> {
    let w = classify(dirfd, path);
    if let Where::Real = w {
        return None;
    }
    Some(path_request(DISK_UNLINK, &w, dirfd, path, [flags as i64, 0, 0]) as c_int)
}

#[no_mangle]
pub unsafe extern "C" fn lseek(fd: c_int, off: libc::off_t, whence: c_int) -> libc::off_t {
    if fdtable::kind(fd) == FdKind::Disk {
        if let Some(_g) = Guard::enter() {
            if active() {
                return lseek_disk(fd, off, whence);
            }
        }
    }
    real!(lseek: fn(c_int, libc::off_t, c_int) -> libc::off_t)(fd, off, whence)
}

pub(crate) fn lseek_disk(fd: c_int, off: i64, whence: c_int) -> i64 {
    request(DISK_SEEK, [fd as i64, off, whence as i64, 0])
}

#[no_mangle]
pub unsafe extern "C" fn lseek64(fd: c_int, off: libc::off64_t, whence: c_int) -> libc::off64_t {
    lseek(fd, off, whence)
}

/// `fcntl` on a disk descriptor: `None` for the commands the placeholder answers natively
/// (descriptor flags, duplication).
pub(crate) fn fcntl(fd: c_int, cmd: c_int, arg: c_ulong) -> Option<c_int> {
    match cmd {
        libc::F_GETFD | libc::F_SETFD | libc::F_DUPFD | libc::F_DUPFD_CLOEXEC => None,
        libc::F_GETFL => Some(request(DISK_GETFL, [fd as i64, 0, 0, 0]) as c_int),
        libc::F_SETFL => {
            let now = request(DISK_GETFL, [fd as i64, 0, 0, 0]);
            if now >= 0 && (now as c_ulong ^ arg) & libc::O_APPEND as c_ulong != 0 {
                refuse(b"fcntl(F_SETFL) changing O_APPEND of a data-directory file");
            }
            Some(now.min(0) as c_int)
        }
        libc::F_SETLK
        | libc::F_SETLKW
        | libc::F_OFD_SETLK
        | libc::F_OFD_SETLKW
        | libc::F_GETLK
        | libc::F_OFD_GETLK => Some(crate::disklock::record_lock(fd, cmd, arg as *mut libc::flock)),
        _ => refuse(b"fcntl command on a data-directory file that is not modelled"),
    }
}

/// Runs `f` with the reentrancy guard held when the shim is active: the answer of a hook that
/// serves a call from the disk model, `None` when the call is real (`f` says so, or the shim is
/// not simulating).
pub(crate) fn disk_path<R>(f: impl FnOnce() -> Option<R>) -> Option<R> {
    let _g = Guard::enter()?;
    if active() {
        f()
    } else {
        None
    }
}

/// Runs `f` when `fd` is a file of the simulated disk (and the shim is active).
pub(crate) fn disk_io<R>(fd: c_int, f: impl FnOnce(c_int) -> R) -> Option<R> {
    if fdtable::kind(fd) != FdKind::Disk {
        return None;
    }
    disk_path(|| Some(f(fd)))
}
