//! The metadata calls on data-directory paths and descriptors, served from the host's disk
//! model: the `stat` family (`stat`, `lstat`, `fstat`, `fstatat`, their `64` forms, the
//! pre-2.33 `__xstat` entry points, `statx`), `access`/`faccessat` and `mkdir`/`mkdirat`.
//! Modes, owners and times are not modelled: files report 0644, directories 0755, the caller's
//! ids and the start of virtual time. The real calls' answers pass through `filetimes`.

use crate::datadir::{classify, disk_io, disk_path, path_request, request, Where};
use crate::filetimes::Looked;
use crate::prelude::*;

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

/// A real `stat` answer `r` in `st`, its times from the run settled (see `filetimes`).
///
/// # Safety
/// `st` points to a `struct stat`, filled when `r` is 0.
unsafe fn real_times(r: c_int, st: *mut libc::stat, what: Looked) -> c_int {
    if r == 0 {
        crate::filetimes::settle_stat(st, what);
    }
    r
}

/// What `fstatat(dirfd, path, flags)` looked at: the descriptor itself for an empty path.
unsafe fn looked(dirfd: c_int, path: *const c_char, flags: c_int) -> Looked {
    if (path.is_null() || *path == 0) && flags & libc::AT_EMPTY_PATH != 0 {
        Looked::Fd(dirfd)
    } else {
        Looked::At(dirfd, path, flags)
    }
}

#[no_mangle]
pub unsafe extern "C" fn stat(path: *const c_char, st: *mut libc::stat) -> c_int {
    if let Some(r) = disk_path(|| try_stat(libc::AT_FDCWD, path, st, 0)) {
        return r;
    }
    let r = crate::procpids::real_path(path, -1, |path| {
        real!(stat: fn(*const c_char, *mut libc::stat) -> c_int)(path, st)
    });
    crate::socktable::socket_stat(path, r, st);
    real_times(r, st, Looked::At(libc::AT_FDCWD, path, 0))
}

#[no_mangle]
pub unsafe extern "C" fn stat64(path: *const c_char, st: *mut libc::stat) -> c_int {
    stat(path, st)
}

#[no_mangle]
pub unsafe extern "C" fn lstat(path: *const c_char, st: *mut libc::stat) -> c_int {
    if let Some(r) = disk_path(|| try_stat(libc::AT_FDCWD, path, st, libc::AT_SYMLINK_NOFOLLOW)) {
        return r;
    }
    let r = crate::procpids::real_path(path, -1, |path| {
        real!(lstat: fn(*const c_char, *mut libc::stat) -> c_int)(path, st)
    });
    real_times(r, st, Looked::At(libc::AT_FDCWD, path, libc::AT_SYMLINK_NOFOLLOW))
}

#[no_mangle]
pub unsafe extern "C" fn lstat64(path: *const c_char, st: *mut libc::stat) -> c_int {
    lstat(path, st)
}

#[no_mangle]
pub unsafe extern "C" fn fstat(fd: c_int, st: *mut libc::stat) -> c_int {
    if let Some(r) = disk_io(fd, |fd| fstat_disk(fd, st)) {
        return r;
    }
    let r = real!(fstat: fn(c_int, *mut libc::stat) -> c_int)(fd, st);
    real_times(r, st, Looked::Fd(fd))
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
    if let Some(r) = disk_path(|| try_stat(dirfd, path, st, flags)) {
        return r;
    }
    let r = crate::procpids::real_path(path, -1, |path| {
        real!(fstatat: fn(c_int, *const c_char, *mut libc::stat, c_int) -> c_int)(
            dirfd, path, st, flags,
        )
    });
    if flags & libc::AT_SYMLINK_NOFOLLOW == 0 {
        crate::socktable::socket_stat(path, r, st);
    }
    real_times(r, st, looked(dirfd, path, flags))
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
    let served = disk_path(|| {
        let mut st: libc::stat = core::mem::zeroed();
        let r = try_stat(dirfd, path, &mut st, flags)?;
        if r == 0 {
            fill_statx(stx, &st);
        }
        Some(r)
    });
    if let Some(r) = served {
        return r;
    }
    let r = crate::procpids::real_path(path, -1, |path| {
        real!(statx: fn(c_int, *const c_char, c_int, c_uint, *mut libc::statx) -> c_int)(
            dirfd, path, flags, mask, stx,
        )
    });
    if flags & libc::AT_SYMLINK_NOFOLLOW == 0 {
        crate::socktable::socket_statx(path, r, stx);
    }
    if r == 0 {
        crate::filetimes::settle_statx(stx, looked(dirfd, path, flags));
    }
    r
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
pub(crate) fn try_access(dirfd: c_int, path: *const c_char, mode: c_int) -> Option<c_int> {
    let w = classify(dirfd, path);
    if let Where::Real = w {
        return None;
    }
    Some(path_request(DISK_ACCESS, &w, dirfd, path, [mode as i64, 0, 0]) as c_int)
}

#[no_mangle]
pub unsafe extern "C" fn access(path: *const c_char, mode: c_int) -> c_int {
    if let Some(r) = disk_path(|| try_access(libc::AT_FDCWD, path, mode)) {
        return r;
    }
    crate::procpids::real_path(path, -1, |path| {
        real!(access: fn(*const c_char, c_int) -> c_int)(path, mode)
    })
}

#[no_mangle]
pub unsafe extern "C" fn faccessat(
    dirfd: c_int,
    path: *const c_char,
    mode: c_int,
    flags: c_int,
) -> c_int {
    if let Some(r) = disk_path(|| try_access(dirfd, path, mode)) {
        return r;
    }
    crate::procpids::real_path(path, -1, |path| {
        real!(faccessat: fn(c_int, *const c_char, c_int, c_int) -> c_int)(dirfd, path, mode, flags)
    })
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
    if let Some(r) = disk_path(|| try_mkdir(libc::AT_FDCWD, path)) {
        return r;
    }
    real!(mkdir: fn(*const c_char, libc::mode_t) -> c_int)(path, mode)
}

#[no_mangle]
pub unsafe extern "C" fn mkdirat(dirfd: c_int, path: *const c_char, mode: libc::mode_t) -> c_int {
    if let Some(r) = disk_path(|| try_mkdir(dirfd, path)) {
        return r;
    }
    real!(mkdirat: fn(c_int, *const c_char, libc::mode_t) -> c_int)(dirfd, path, mode)
}
