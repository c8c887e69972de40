//! Files under the node's data directories, on the host's simulated disk. The host names the
//! directories in `WEFT_DATA_DIRS` (absolute, `:`-separated, read once); a path at or under one
//! of them (after joining the working directory and resolving `.`, `..` and `//` lexically), or
//! relative to a directory descriptor opened there, is served by the host's disk model through
//! `OP_DISK`. A descriptor for such a file holds its number with a real `/dev/null`; the host
//! keeps its offset and flags ([`FdKind::Disk`]).
//!
//! This module has the helpers the hooks call (each expects the guard held and the state
//! active) and the hooks of calls weft did not intercept before: `lseek`, the `stat` family,
//! `statx`, `access`, `mkdir`, directory listing (`opendir`/`readdir`/`getdents64`), `mmap`
//! (refused on a data-directory file), and the calls that are refused there by name.

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
    fn bytes(&self) -> &[u8] {
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
fn request(kind: i64, args: [i64; 4]) -> i64 {
    let s = slot();
    s.args[0] = kind;
    s.args[1..5].copy_from_slice(&args);
    // SAFETY: callers hold the guard and the state is active.
    ret_errno(unsafe { handoff(OP_DISK) })
}

/// A path request: the path (or the relative one) in `data`, its dirfd in `args[1]`.
fn path_request(kind: i64, w: &Where, dirfd: c_int, raw: *const c_char, more: [i64; 3]) -> i64 {
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
    let mut done = 0usize;
    while done < len || len == 0 {
        let want = (len - done).min(DATA_MAX);
        let at = if off < 0 { -1 } else { off + done as i64 };
        let r = request(DISK_READ, [fd as i64, at, want as i64, 0]);
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
    let (mut v, mut in_v, mut sent) = (0usize, 0usize, 0usize);
    loop {
        let s = slot();
        let mut n = 0;
        while n < DATA_MAX && v < iov.len() {
            let take = (iov[v].iov_len - in_v).min(DATA_MAX - n);
            // SAFETY: iov[v] describes `iov_len` readable bytes of the caller's.
            let src = unsafe { (iov[v].iov_base as *const u8).add(in_v) };
            // SAFETY: take <= DATA_MAX - n: within the slot's data.
            unsafe { ptr::copy_nonoverlapping(src, s.data.as_mut_ptr().add(n), take) };
            n += take;
            in_v += take;
            if in_v == iov[v].iov_len {
                v += 1;
                in_v = 0;
            }
        }
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
    let (a, b) = (classify(d1, from), classify(d2, to));
    match (&a, &b) {
        (Where::Real, Where::Real) => None,
        (Where::Real, _) | (_, Where::Real) => {
            set_errno(libc::EXDEV);
            Some(-1)
        }
        _ => {
            let s = slot();
            let (end, fd1) = put(s, 0, &a, d1, from);
            let (end, fd2) = put(s, end, &b, d2, to);
            s.len = end as u32;
            Some(request(DISK_RENAME, [fd1, fd2, flags as i64, 0]) as c_int)
        }
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

/// The facts `stat` reports of a disk path or descriptor: mode, size, inode, links.
struct Facts {
    mode: u32,
    size: i64,
    ino: u64,
    nlink: u64,
}

/// Asks the host for the facts: of `fd` (`by_fd`), or of `w` relative to `dirfd`.
fn facts(w: &Where, dirfd: c_int, path: *const c_char, flags: c_int, by_fd: bool) -> Option<Facts> {
    let s = slot();
    if by_fd {
        s.data[0] = 0;
        s.len = 1;
        if request(DISK_STAT, [dirfd as i64, flags as i64, 1, 0]) < 0 {
            return None;
        }
    } else if path_request(DISK_STAT, w, dirfd, path, [flags as i64, 0, 0]) < 0 {
        return None;
    }
    let s = slot();
    Some(Facts {
        mode: s.args[1] as u32,
        size: s.args[2],
        ino: s.args[3] as u64,
        nlink: s.args[4] as u64,
    })
}

/// What every disk file's timestamps read: the start of virtual time (not modelled).
const EPOCH_S: i64 = (REALTIME_BASE_NS / 1_000_000_000) as i64;
const DEV: u64 = 0xd15c;

/// # Safety
/// `st` points to a writable `struct stat`.
unsafe fn fill_stat(st: *mut libc::stat, f: &Facts) {
    ptr::write_bytes(st, 0, 1);
    let st = &mut *st;
    st.st_dev = DEV;
    st.st_ino = f.ino;
    st.st_nlink = f.nlink;
    st.st_mode = f.mode;
    st.st_uid = libc::getuid();
    st.st_gid = libc::getgid();
    st.st_size = f.size;
    st.st_blksize = 4096;
    st.st_blocks = (f.size + 511) / 512;
    st.st_atime = EPOCH_S;
    st.st_mtime = EPOCH_S;
    st.st_ctime = EPOCH_S;
}

/// `fstatat` semantics for every `stat` variant: `None` when the call is real.
///
/// # Safety
/// `st` points to a writable `struct stat`.
pub(crate) unsafe fn try_stat(
    dirfd: c_int,
    path: *const c_char,
    st: *mut libc::stat,
    flags: c_int,
) -> Option<c_int> {
    let empty = path.is_null() || *path == 0;
    let by_fd = empty && flags & libc::AT_EMPTY_PATH != 0 && fdtable::kind(dirfd) == FdKind::Disk;
    let w = if by_fd { Where::Relative } else { classify(dirfd, path) };
    if let Where::Real = w {
        return None;
    }
    Some(match facts(&w, dirfd, path, flags, by_fd) {
        Some(f) => {
            fill_stat(st, &f);
            0
        }
        None => -1,
    })
}

/// `fstat` of a disk descriptor.
///
/// # Safety
/// `st` points to a writable `struct stat`.
pub(crate) unsafe fn fstat_disk(fd: c_int, st: *mut libc::stat) -> c_int {
    match facts(&Where::Relative, fd, ptr::null(), 0, true) {
        Some(f) => {
            fill_stat(st, &f);
            0
        }
        None => -1,
    }
}

#[no_mangle]
pub unsafe extern "C" fn stat(path: *const c_char, st: *mut libc::stat) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            if let Some(r) = try_stat(libc::AT_FDCWD, path, st, 0) {
                return r;
            }
        }
    }
    real!(stat: fn(*const c_char, *mut libc::stat) -> c_int)(path, st)
}

#[no_mangle]
pub unsafe extern "C" fn stat64(path: *const c_char, st: *mut libc::stat) -> c_int {
    stat(path, st)
}

#[no_mangle]
pub unsafe extern "C" fn lstat(path: *const c_char, st: *mut libc::stat) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            if let Some(r) = try_stat(libc::AT_FDCWD, path, st, libc::AT_SYMLINK_NOFOLLOW) {
                return r;
            }
        }
    }
    real!(lstat: fn(*const c_char, *mut libc::stat) -> c_int)(path, st)
}

#[no_mangle]
pub unsafe extern "C" fn lstat64(path: *const c_char, st: *mut libc::stat) -> c_int {
    lstat(path, st)
}

#[no_mangle]
pub unsafe extern "C" fn fstat(fd: c_int, st: *mut libc::stat) -> c_int {
    if fdtable::kind(fd) == FdKind::Disk {
        if let Some(_g) = Guard::enter() {
            if active() {
                return fstat_disk(fd, st);
            }
        }
    }
    real!(fstat: fn(c_int, *mut libc::stat) -> c_int)(fd, st)
}

#[no_mangle]
pub unsafe extern "C" fn fstat64(fd: c_int, st: *mut libc::stat) -> c_int {
    fstat(fd, st)
}

#[no_mangle]
pub unsafe extern "C" fn fstatat(
    dirfd: c_int,
    path: *const c_char,
    st: *mut libc::stat,
    flags: c_int,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            if let Some(r) = try_stat(dirfd, path, st, flags) {
                return r;
            }
        }
    }
    real!(fstatat: fn(c_int, *const c_char, *mut libc::stat, c_int) -> c_int)(
        dirfd, path, st, flags,
    )
}

#[no_mangle]
pub unsafe extern "C" fn fstatat64(
    dirfd: c_int,
    path: *const c_char,
    st: *mut libc::stat,
    flags: c_int,
) -> c_int {
    fstatat(dirfd, path, st, flags)
}

// The pre-2.33 glibc entry points older binaries call.
#[no_mangle]
pub unsafe extern "C" fn __xstat(_v: c_int, path: *const c_char, st: *mut libc::stat) -> c_int {
    stat(path, st)
}
#[no_mangle]
pub unsafe extern "C" fn __xstat64(_v: c_int, path: *const c_char, st: *mut libc::stat) -> c_int {
    stat(path, st)
}
#[no_mangle]
pub unsafe extern "C" fn __lxstat(_v: c_int, path: *const c_char, st: *mut libc::stat) -> c_int {
    lstat(path, st)
}
#[no_mangle]
pub unsafe extern "C" fn __lxstat64(_v: c_int, path: *const c_char, st: *mut libc::stat) -> c_int {
    lstat(path, st)
}
#[no_mangle]
pub unsafe extern "C" fn __fxstat(_v: c_int, fd: c_int, st: *mut libc::stat) -> c_int {
    fstat(fd, st)
}
#[no_mangle]
pub unsafe extern "C" fn __fxstat64(_v: c_int, fd: c_int, st: *mut libc::stat) -> c_int {
    fstat(fd, st)
}
#[no_mangle]
pub unsafe extern "C" fn __fxstatat(
    _v: c_int,
    dirfd: c_int,
    path: *const c_char,
    st: *mut libc::stat,
    flags: c_int,
) -> c_int {
    fstatat(dirfd, path, st, flags)
}
#[no_mangle]
pub unsafe extern "C" fn __fxstatat64(
    _v: c_int,
    dirfd: c_int,
    path: *const c_char,
    st: *mut libc::stat,
    flags: c_int,
) -> c_int {
    fstatat(dirfd, path, st, flags)
}

#[no_mangle]
pub unsafe extern "C" fn statx(
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mask: c_uint,
    stx: *mut libc::statx,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            let mut st: libc::stat = core::mem::zeroed();
            if let Some(r) = try_stat(dirfd, path, &mut st, flags) {
                if r == 0 {
                    fill_statx(stx, &st);
                }
                return r;
            }
        }
    }
    real!(statx: fn(c_int, *const c_char, c_int, c_uint, *mut libc::statx) -> c_int)(
        dirfd, path, flags, mask, stx,
    )
}

unsafe fn fill_statx(stx: *mut libc::statx, st: &libc::stat) {
    ptr::write_bytes(stx, 0, 1);
    let x = &mut *stx;
    x.stx_mask = libc::STATX_BASIC_STATS;
    x.stx_blksize = st.st_blksize as u32;
    x.stx_nlink = st.st_nlink as u32;
    x.stx_uid = st.st_uid;
    x.stx_gid = st.st_gid;
    x.stx_mode = st.st_mode as u16;
    x.stx_ino = st.st_ino;
    x.stx_size = st.st_size as u64;
    x.stx_blocks = st.st_blocks as u64;
    for t in [&mut x.stx_atime, &mut x.stx_mtime, &mut x.stx_ctime] {
        t.tv_sec = EPOCH_S;
    }
    x.stx_dev_major = (DEV >> 8) as u32;
    x.stx_dev_minor = (DEV & 0xff) as u32;
}

/// `faccessat` semantics: `None` when the path is real.
fn try_access(dirfd: c_int, path: *const c_char, mode: c_int) -> Option<c_int> {
    let w = classify(dirfd, path);
    if let Where::Real = w {
        return None;
    }
    Some(path_request(DISK_ACCESS, &w, dirfd, path, [mode as i64, 0, 0]) as c_int)
}

#[no_mangle]
pub unsafe extern "C" fn access(path: *const c_char, mode: c_int) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            if let Some(r) = try_access(libc::AT_FDCWD, path, mode) {
                return r;
            }
        }
    }
    real!(access: fn(*const c_char, c_int) -> c_int)(path, mode)
}

#[no_mangle]
pub unsafe extern "C" fn faccessat(
    dirfd: c_int,
    path: *const c_char,
    mode: c_int,
    flags: c_int,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            if let Some(r) = try_access(dirfd, path, mode) {
                return r;
            }
        }
    }
    real!(faccessat: fn(c_int, *const c_char, c_int, c_int) -> c_int)(dirfd, path, mode, flags)
}

fn try_mkdir(dirfd: c_int, path: *const c_char) -> Option<c_int> {
    let w = classify(dirfd, path);
    if let Where::Real = w {
        return None;
    }
    Some(path_request(DISK_MKDIR, &w, dirfd, path, [0, 0, 0]) as c_int)
}

#[no_mangle]
pub unsafe extern "C" fn mkdir(path: *const c_char, mode: libc::mode_t) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            if let Some(r) = try_mkdir(libc::AT_FDCWD, path) {
                return r;
            }
        }
    }
    real!(mkdir: fn(*const c_char, libc::mode_t) -> c_int)(path, mode)
}

#[no_mangle]
pub unsafe extern "C" fn mkdirat(dirfd: c_int, path: *const c_char, mode: libc::mode_t) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            if let Some(r) = try_mkdir(dirfd, path) {
                return r;
            }
        }
    }
    real!(mkdirat: fn(c_int, *const c_char, libc::mode_t) -> c_int)(dirfd, path, mode)
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

/// Refuses `what` on a data-directory path or descriptor, by name.
fn refuse(what: &[u8]) -> ! {
    unsupported(what, -1, 0)
}

/// True when `path` is under a data directory (for the calls refused there).
fn is_data(dirfd: c_int, path: *const c_char) -> bool {
    !matches!(classify(dirfd, path), Where::Real)
}

#[no_mangle]
pub unsafe extern "C" fn mmap(
    addr: *mut c_void,
    len: size_t,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    off: libc::off_t,
) -> *mut c_void {
    if fd >= 0 && fdtable::kind(fd) == FdKind::Disk && active() {
        refuse(b"mmap of a data-directory file: mappings of simulated files are not modelled");
    }
    real!(mmap: fn(*mut c_void, size_t, c_int, c_int, c_int, libc::off_t) -> *mut c_void)(
        addr, len, prot, flags, fd, off,
    )
}

#[no_mangle]
pub unsafe extern "C" fn mmap64(
    addr: *mut c_void,
    len: size_t,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    off: libc::off64_t,
) -> *mut c_void {
    mmap(addr, len, prot, flags, fd, off)
}

#[no_mangle]
pub unsafe extern "C" fn rmdir(path: *const c_char) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && is_data(libc::AT_FDCWD, path) {
            refuse(b"rmdir in a data directory: removing directories is not modelled");
        }
    }
    real!(rmdir: fn(*const c_char) -> c_int)(path)
}

#[no_mangle]
pub unsafe extern "C" fn link(from: *const c_char, to: *const c_char) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && (is_data(libc::AT_FDCWD, from) || is_data(libc::AT_FDCWD, to)) {
            refuse(b"link in a data directory: hard links are not modelled");
        }
    }
    real!(link: fn(*const c_char, *const c_char) -> c_int)(from, to)
}

#[no_mangle]
pub unsafe extern "C" fn linkat(
    d1: c_int,
    from: *const c_char,
    d2: c_int,
    to: *const c_char,
    flags: c_int,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && (is_data(d1, from) || is_data(d2, to)) {
            refuse(b"linkat in a data directory: hard links are not modelled");
        }
    }
    real!(linkat: fn(c_int, *const c_char, c_int, *const c_char, c_int) -> c_int)(
        d1, from, d2, to, flags,
    )
}

#[no_mangle]
pub unsafe extern "C" fn symlink(target: *const c_char, path: *const c_char) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && is_data(libc::AT_FDCWD, path) {
            refuse(b"symlink in a data directory: symbolic links are not modelled");
        }
    }
    real!(symlink: fn(*const c_char, *const c_char) -> c_int)(target, path)
}

#[no_mangle]
pub unsafe extern "C" fn readlink(path: *const c_char, buf: *mut c_char, len: size_t) -> ssize_t {
    if let Some(_g) = Guard::enter() {
        if active() {
            // No data-directory entry is a symbolic link: EINVAL if it exists.
            if let Some(r) = try_access(libc::AT_FDCWD, path, libc::F_OK) {
                if r == 0 {
                    set_errno(libc::EINVAL);
                }
                return -1;
            }
        }
    }
    real!(readlink: fn(*const c_char, *mut c_char, size_t) -> ssize_t)(path, buf, len)
}

#[no_mangle]
pub unsafe extern "C" fn chdir(path: *const c_char) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && is_data(libc::AT_FDCWD, path) {
            refuse(b"chdir into a data directory is not modelled");
        }
    }
    real!(chdir: fn(*const c_char) -> c_int)(path)
}

#[no_mangle]
pub unsafe extern "C" fn truncate(path: *const c_char, len: libc::off_t) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            if let Some(fd) = try_open(libc::AT_FDCWD, path, libc::O_WRONLY | libc::O_CLOEXEC) {
                if fd < 0 {
                    return -1;
                }
                let r = ftruncate(fd, len);
                crate::io::forget_fd(fd);
                real!(close: fn(c_int) -> c_int)(fd);
                return r;
            }
        }
    }
    real!(truncate: fn(*const c_char, libc::off_t) -> c_int)(path, len)
}

#[no_mangle]
pub unsafe extern "C" fn truncate64(path: *const c_char, len: libc::off64_t) -> c_int {
    truncate(path, len)
}

/// Calls refused on a disk descriptor, by name.
macro_rules! refused_on_disk_fd {
    ($name:ident ( $($a:ident : $t:ty),* ) -> $r:ty, $msg:literal) => {
        #[no_mangle]
        pub unsafe extern "C" fn $name(fd: c_int, $($a: $t),*) -> $r {
            if fdtable::kind(fd) == FdKind::Disk && active() {
                refuse($msg);
            }
            real!($name: fn(c_int, $($t),*) -> $r)(fd, $($a),*)
        }
    };
}

refused_on_disk_fd!(fallocate(mode: c_int, off: libc::off_t, len: libc::off_t) -> c_int,
    b"fallocate on a data-directory file is not modelled");
refused_on_disk_fd!(fallocate64(mode: c_int, off: libc::off64_t, len: libc::off64_t) -> c_int,
    b"fallocate on a data-directory file is not modelled");
refused_on_disk_fd!(posix_fallocate(off: libc::off_t, len: libc::off_t) -> c_int,
    b"posix_fallocate on a data-directory file is not modelled");
refused_on_disk_fd!(posix_fallocate64(off: libc::off64_t, len: libc::off64_t) -> c_int,
    b"posix_fallocate on a data-directory file is not modelled");
refused_on_disk_fd!(sync_file_range(off: libc::off64_t, n: libc::off64_t, flags: c_uint) -> c_int,
    b"sync_file_range on a data-directory file is not modelled");
refused_on_disk_fd!(flock(op: c_int) -> c_int,
    b"flock on a data-directory file is not modelled");
refused_on_disk_fd!(preadv2(iov: *const libc::iovec, n: c_int, off: libc::off_t, f: c_int) -> ssize_t,
    b"preadv2 on a data-directory file is not modelled");
refused_on_disk_fd!(pwritev2(iov: *const libc::iovec, n: c_int, off: libc::off_t, f: c_int) -> ssize_t,
    b"pwritev2 on a data-directory file is not modelled");
refused_on_disk_fd!(fstatfs(buf: *mut libc::statfs) -> c_int,
    b"fstatfs on a data-directory file is not modelled");
refused_on_disk_fd!(fdopen(mode: *const c_char) -> *mut libc::FILE,
    b"fdopen of a data-directory file: stdio on simulated files is not modelled");

#[no_mangle]
pub unsafe extern "C" fn fchdir(fd: c_int) -> c_int {
    if fdtable::kind(fd) == FdKind::Disk && active() {
        refuse(b"fchdir into a data directory is not modelled");
    }
    real!(fchdir: fn(c_int) -> c_int)(fd)
}

/// Permissions and owners are not modelled: changing them on a disk descriptor succeeds and
/// changes nothing (`stat` keeps reporting 0644 / 0755 and the caller's ids).
#[no_mangle]
pub unsafe extern "C" fn fchmod(fd: c_int, mode: libc::mode_t) -> c_int {
    if fdtable::kind(fd) == FdKind::Disk && active() {
        return 0;
    }
    real!(fchmod: fn(c_int, libc::mode_t) -> c_int)(fd, mode)
}

#[no_mangle]
pub unsafe extern "C" fn fchown(fd: c_int, uid: libc::uid_t, gid: libc::gid_t) -> c_int {
    if fdtable::kind(fd) == FdKind::Disk && active() {
        return 0;
    }
    real!(fchown: fn(c_int, libc::uid_t, libc::gid_t) -> c_int)(fd, uid, gid)
}

#[no_mangle]
pub unsafe extern "C" fn syncfs(fd: c_int) -> c_int {
    if fdtable::kind(fd) == FdKind::Disk {
        if let Some(_g) = Guard::enter() {
            if active() {
                return request(DISK_SYNC, [0; 4]) as c_int;
            }
        }
    }
    real!(syncfs: fn(c_int) -> c_int)(fd)
}

/// `sync`: the node's disk too, when it has data directories.
#[no_mangle]
pub unsafe extern "C" fn sync() {
    if let Some(_g) = Guard::enter() {
        if active() && !dirs().is_empty() {
            request(DISK_SYNC, [0; 4]);
        }
    }
    real!(sync: fn() -> ())()
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
        libc::F_SETLK | libc::F_SETLKW | libc::F_OFD_SETLK | libc::F_OFD_SETLKW => {
            Some(request(DISK_LOCK, [fd as i64, 0, 0, 0]) as c_int)
        }
        libc::F_GETLK | libc::F_OFD_GETLK => {
            let r = request(DISK_LOCK, [fd as i64, 0, 0, 0]) as c_int;
            if r == 0 && arg != 0 {
                // SAFETY: F_GETLK's argument is the caller's `struct flock`.
                unsafe { (*(arg as *mut libc::flock)).l_type = libc::F_UNLCK as i16 };
            }
            Some(r)
        }
        _ => refuse(b"fcntl command on a data-directory file that is not modelled"),
    }
}

// Directory listings.

const HANDLES: usize = 16;
const LIST_BUF: usize = 8192;

/// One `DIR` of a disk directory: its descriptor and the records read ahead.
#[repr(C, align(8))]
struct DirHandle {
    buf: [u8; LIST_BUF],
    fd: c_int,
    used: bool,
    len: usize,
    pos: usize,
}

struct Handles(UnsafeCell<[DirHandle; HANDLES]>);
// SAFETY: only the thread holding the baton runs program code, so one thread at a time.
unsafe impl Sync for Handles {}
static DIRP: Handles = Handles(UnsafeCell::new(
    [const { DirHandle { buf: [0; LIST_BUF], fd: -1, used: false, len: 0, pos: 0 } }; HANDLES],
));

/// The handle `dirp` is, if it is one of ours.
fn ours(dirp: *mut libc::DIR) -> Option<&'static mut DirHandle> {
    let base = DIRP.0.get() as usize;
    let at = dirp as usize;
    let size = core::mem::size_of::<DirHandle>();
    if at < base || at >= base + HANDLES * size || !(at - base).is_multiple_of(size) {
        return None;
    }
    // SAFETY: `at` is the address of handle (at - base) / size in the pool.
    Some(unsafe { &mut (*DIRP.0.get())[(at - base) / size] })
}

fn new_handle(fd: c_int) -> *mut libc::DIR {
    // SAFETY: one thread at a time (see `Handles`).
    let pool = unsafe { &mut *DIRP.0.get() };
    let Some(h) = pool.iter_mut().find(|h| !h.used) else {
        refuse(b"more than 16 data-directory listings open at once");
    };
    h.used = true;
    h.fd = fd;
    h.len = 0;
    h.pos = 0;
    (h as *mut DirHandle).cast()
}

#[no_mangle]
pub unsafe extern "C" fn opendir(path: *const c_char) -> *mut libc::DIR {
    if let Some(_g) = Guard::enter() {
        if active() {
            let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC;
            if let Some(fd) = try_open(libc::AT_FDCWD, path, flags) {
                return if fd < 0 { ptr::null_mut() } else { new_handle(fd) };
            }
        }
    }
    real!(opendir: fn(*const c_char) -> *mut libc::DIR)(path)
}

#[no_mangle]
pub unsafe extern "C" fn fdopendir(fd: c_int) -> *mut libc::DIR {
    if fdtable::kind(fd) == FdKind::Disk {
        if let Some(_g) = Guard::enter() {
            if active() {
                return new_handle(fd);
            }
        }
    }
    real!(fdopendir: fn(c_int) -> *mut libc::DIR)(fd)
}

/// The next record of `h` (reading more from the host when its buffer is used up).
fn next_record(h: &mut DirHandle) -> *mut c_void {
    if h.pos >= h.len {
        let r = request(DISK_LIST, [h.fd as i64, LIST_BUF as i64, 0, 0]);
        if r <= 0 {
            return ptr::null_mut();
        }
        h.len = r as usize;
        h.pos = 0;
        h.buf[..h.len].copy_from_slice(&slot().data[..h.len]);
    }
    let at = h.pos;
    let reclen = u16::from_ne_bytes([h.buf[at + 16], h.buf[at + 17]]) as usize;
    h.pos += reclen.max(24);
    h.buf[at..].as_mut_ptr().cast()
}

#[no_mangle]
pub unsafe extern "C" fn readdir(dirp: *mut libc::DIR) -> *mut libc::dirent {
    if let Some(h) = ours(dirp) {
        if let Some(_g) = Guard::enter() {
            if active() {
                return next_record(h).cast();
            }
        }
    }
    real!(readdir: fn(*mut libc::DIR) -> *mut libc::dirent)(dirp)
}

#[no_mangle]
pub unsafe extern "C" fn readdir64(dirp: *mut libc::DIR) -> *mut libc::dirent64 {
    if let Some(h) = ours(dirp) {
        if let Some(_g) = Guard::enter() {
            if active() {
                return next_record(h).cast();
            }
        }
    }
    real!(readdir64: fn(*mut libc::DIR) -> *mut libc::dirent64)(dirp)
}

#[no_mangle]
pub unsafe extern "C" fn closedir(dirp: *mut libc::DIR) -> c_int {
    if let Some(h) = ours(dirp) {
        let fd = h.fd;
        h.used = false;
        if let Some(_g) = Guard::enter() {
            if active() {
                crate::io::forget_fd(fd);
            }
        }
        return real!(close: fn(c_int) -> c_int)(fd);
    }
    real!(closedir: fn(*mut libc::DIR) -> c_int)(dirp)
}

#[no_mangle]
pub unsafe extern "C" fn dirfd(dirp: *mut libc::DIR) -> c_int {
    if let Some(h) = ours(dirp) {
        return h.fd;
    }
    real!(dirfd: fn(*mut libc::DIR) -> c_int)(dirp)
}

#[no_mangle]
pub unsafe extern "C" fn rewinddir(dirp: *mut libc::DIR) {
    if let Some(h) = ours(dirp) {
        if let Some(_g) = Guard::enter() {
            if active() {
                lseek_disk(h.fd, 0, libc::SEEK_SET);
                h.len = 0;
                h.pos = 0;
            }
        }
        return;
    }
    real!(rewinddir: fn(*mut libc::DIR) -> ())(dirp)
}

#[no_mangle]
pub unsafe extern "C" fn telldir(dirp: *mut libc::DIR) -> c_long {
    if ours(dirp).is_some() {
        refuse(b"telldir on a data-directory listing is not modelled");
    }
    real!(telldir: fn(*mut libc::DIR) -> c_long)(dirp)
}

#[no_mangle]
pub unsafe extern "C" fn seekdir(dirp: *mut libc::DIR, at: c_long) {
    if ours(dirp).is_some() {
        refuse(b"seekdir on a data-directory listing is not modelled");
    }
    real!(seekdir: fn(*mut libc::DIR, c_long) -> ())(dirp, at)
}

#[no_mangle]
pub unsafe extern "C" fn readdir_r(
    dirp: *mut libc::DIR,
    entry: *mut libc::dirent,
    result: *mut *mut libc::dirent,
) -> c_int {
    if ours(dirp).is_some() {
        refuse(b"readdir_r on a data-directory listing is not modelled");
    }
    real!(readdir_r: fn(*mut libc::DIR, *mut libc::dirent, *mut *mut libc::dirent) -> c_int)(
        dirp, entry, result,
    )
}

#[no_mangle]
pub unsafe extern "C" fn scandir(
    path: *const c_char,
    list: *mut c_void,
    filter: *const c_void,
    cmp: *const c_void,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && is_data(libc::AT_FDCWD, path) {
            refuse(b"scandir of a data directory is not modelled (use opendir/readdir)");
        }
    }
    real!(scandir: fn(*const c_char, *mut c_void, *const c_void, *const c_void) -> c_int)(
        path, list, filter, cmp,
    )
}

#[no_mangle]
pub unsafe extern "C" fn getdents64(fd: c_int, buf: *mut c_void, len: size_t) -> ssize_t {
    if fdtable::kind(fd) == FdKind::Disk {
        if let Some(_g) = Guard::enter() {
            if active() {
                let cap = len.min(DATA_MAX);
                let r = request(DISK_LIST, [fd as i64, cap as i64, 0, 0]);
                if r > 0 {
                    // SAFETY: r <= cap <= len bytes of the caller's buffer.
                    ptr::copy_nonoverlapping(slot().data.as_ptr(), buf as *mut u8, r as usize);
                }
                return r as ssize_t;
            }
        }
    }
    real!(getdents64: fn(c_int, *mut c_void, size_t) -> ssize_t)(fd, buf, len)
}
