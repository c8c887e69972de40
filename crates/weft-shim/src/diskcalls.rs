//! The other calls on data-directory paths and descriptors: refused by name where the disk
//! model has no answer (`symlink`, `preadv2`/`pwritev2`, `fchdir`,
//! `fallocate` modes other than 0 and `FALLOC_FL_KEEP_SIZE`), or served from it (`truncate`,
//! `fallocate`/`posix_fallocate` as a growth of the size, `flock` (the host's lock),
//! `readlink`, `sync`/`syncfs`, `sync_file_range` (which promises nothing durable), the
//! `statfs`/`statvfs` family (a fixed ext4 file system: free space is not modelled), `chdir`
//! (into an empty real stand-in at the directory's path), hard links
//! (`link`/`linkat`, a second name on the disk model), `rmdir` (as `unlinkat` with
//! `AT_REMOVEDIR`), and
//! `fchmod`/`fchown`, which change nothing that is modelled). Mappings are
//! [`crate::diskmmap`]'s.

use crate::datadir::{classify, disk_io, disk_path, ftruncate, request, try_link, try_open, Where};
use crate::diskstat::try_access;
use crate::prelude::*;

/// Refuses `what` on a data-directory path or descriptor, by name.
pub(crate) fn refuse(what: &[u8]) -> ! {
    unsupported(what, -1, 0)
}

/// True when `path` is under a data directory (for the calls refused there).
pub(crate) fn is_data(dirfd: c_int, path: *const c_char) -> bool {
    !matches!(classify(dirfd, path), Where::Real)
}

/// `rmdir` in a data directory: the disk model's, as `unlinkat(AT_REMOVEDIR)`.
#[no_mangle]
pub unsafe extern "C" fn rmdir(path: *const c_char) -> c_int {
    let unlink = || crate::datadir::try_unlink(libc::AT_FDCWD, path, libc::AT_REMOVEDIR);
    if let Some(r) = disk_path(unlink) {
        return r;
    }
    real!(rmdir: fn(*const c_char) -> c_int)(path)
}

#[no_mangle]
pub unsafe extern "C" fn link(from: *const c_char, to: *const c_char) -> c_int {
    if let Some(r) = disk_path(|| try_link(libc::AT_FDCWD, from, libc::AT_FDCWD, to, 0)) {
        return r;
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
    if let Some(r) = disk_path(|| try_link(d1, from, d2, to, flags)) {
        return r;
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
            if let Some(r) = crate::procpids::self_link(path, buf.cast(), len) {
                return r;
            }
        }
    }
    let n = crate::procpids::real_path(path, -1, |path| {
        real!(readlink: fn(*const c_char, *mut c_char, size_t) -> ssize_t)(path, buf, len)
    });
    crate::socktable::socket_link(path, buf.cast(), len, n)
}

/// `readlinkat`: an absolute path, or one relative to the working directory, is [`readlink`]'s
/// (so `/proc/self/fd/N` of a simulated socket names its virtual inode); relative to a
/// directory descriptor, no data-directory entry is a symbolic link, and the rest is real.
#[no_mangle]
pub unsafe extern "C" fn readlinkat(
    dirfd: c_int,
    path: *const c_char,
    buf: *mut c_char,
    len: size_t,
) -> ssize_t {
    if dirfd == libc::AT_FDCWD || (!path.is_null() && *path == b'/' as c_char) {
        return readlink(path, buf, len);
    }
    if let Some(_g) = Guard::enter() {
        if active() {
            if let Some(r) = try_access(dirfd, path, libc::F_OK) {
                if r == 0 {
                    set_errno(libc::EINVAL);
                }
                return -1;
            }
        }
    }
    real!(readlinkat: fn(c_int, *const c_char, *mut c_char, size_t) -> ssize_t)(
        dirfd, path, buf, len,
    )
}

/// `chdir` into a directory of the simulated disk: the model's directory must exist, and the
/// process then works in an empty real stand-in at the same path (made as needed), so paths
/// relative to it reach the model through the hooks (which resolve them against `getcwd`) and
/// real ones beside it (`../x`) resolve as they would. The stand-in stays empty: listings
/// and every call on a path under it are the model's.
#[no_mangle]
pub unsafe extern "C" fn chdir(path: *const c_char) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            if let Where::Data(p) = classify(libc::AT_FDCWD, path) {
                return chdir_data(path, p.bytes());
            }
        }
    }
    real!(chdir: fn(*const c_char) -> c_int)(path)
}

/// [`chdir`] into the model's directory `path`, whose absolute form is `abs`.
unsafe fn chdir_data(path: *const c_char, abs: &[u8]) -> c_int {
    let mut st: libc::stat = core::mem::zeroed();
    match crate::diskstat::try_stat(libc::AT_FDCWD, path, &mut st, 0) {
        Some(0) => {}
        Some(r) => return r,
        None => return real!(chdir: fn(*const c_char) -> c_int)(path),
    }
    if st.st_mode & libc::S_IFMT != libc::S_IFDIR {
        set_errno(libc::ENOTDIR);
        return -1;
    }
    let mut buf = [0u8; 4097];
    if abs.len() >= buf.len() {
        set_errno(libc::ENAMETOOLONG);
        return -1;
    }
    buf[..abs.len()].copy_from_slice(abs);
    let at = buf.as_ptr() as i64;
    for k in 1..=abs.len() {
        if k == abs.len() || abs[k] == b'/' {
            let was = buf[k];
            buf[k] = 0;
            sys::raw(libc::SYS_mkdir, [at, 0o755, 0, 0, 0, 0]);
            buf[k] = was;
        }
    }
    ret_errno(sys::raw_ret(libc::SYS_chdir, [at, 0, 0, 0, 0, 0])) as c_int
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

refused_on_disk_fd!(preadv2(iov: *const libc::iovec, n: c_int, off: libc::off_t, f: c_int) -> ssize_t,
    b"preadv2 on a data-directory file is not modelled");
refused_on_disk_fd!(pwritev2(iov: *const libc::iovec, n: c_int, off: libc::off_t, f: c_int) -> ssize_t,
    b"pwritev2 on a data-directory file is not modelled");

/// What `statfs` tells of the simulated disk: an ext4 file system of 64 GiB, half free, with
/// 4 KiB blocks (free space is not modelled: `disk.enospc` injects its end).
fn fill_statfs(buf: &mut libc::statfs) {
    // SAFETY: all-zero is a valid `statfs`.
    *buf = unsafe { core::mem::zeroed() };
    buf.f_type = 0xEF53;
    buf.f_bsize = 4096;
    buf.f_frsize = 4096;
    buf.f_blocks = 1 << 24;
    buf.f_bfree = 1 << 23;
    buf.f_bavail = 1 << 23;
    buf.f_files = 1 << 22;
    buf.f_ffree = 1 << 21;
    buf.f_namelen = 255;
}

/// What `statvfs` tells of the simulated disk, the same as [`fill_statfs`].
fn fill_statvfs(buf: &mut libc::statvfs) {
    // SAFETY: all-zero is a valid `statfs`.
    let mut fs: libc::statfs = unsafe { core::mem::zeroed() };
    fill_statfs(&mut fs);
    // SAFETY: all-zero is a valid `statvfs`.
    *buf = unsafe { core::mem::zeroed() };
    buf.f_bsize = fs.f_bsize as _;
    buf.f_frsize = fs.f_frsize as _;
    buf.f_blocks = fs.f_blocks;
    buf.f_bfree = fs.f_bfree;
    buf.f_bavail = fs.f_bavail;
    buf.f_files = fs.f_files;
    buf.f_ffree = fs.f_ffree;
    buf.f_favail = fs.f_ffree;
    buf.f_fsid = 0xd15c;
    buf.f_namemax = 255;
    buf.f_flag = libc::ST_RELATIME as _;
}

/// True when `fd` is a disk descriptor and the simulation answers for it.
fn on_disk(fd: c_int) -> bool {
    fdtable::kind(fd) == FdKind::Disk && active()
}

/// The simulated answer for a path under a data directory: `fill` runs and 0 when it exists,
/// else -1 with errno (`None`: a real path, or the simulation does not answer).
unsafe fn at_disk(path: *const c_char, fill: impl FnOnce()) -> Option<c_int> {
    let r = disk_path(|| try_access(libc::AT_FDCWD, path, 0))?;
    if r == 0 {
        fill();
    }
    Some(r)
}

#[no_mangle]
pub unsafe extern "C" fn fstatfs(fd: c_int, buf: *mut libc::statfs) -> c_int {
    if on_disk(fd) {
        fill_statfs(&mut *buf);
        return 0;
    }
    real!(fstatfs: fn(c_int, *mut libc::statfs) -> c_int)(fd, buf)
}

#[no_mangle]
pub unsafe extern "C" fn fstatfs64(fd: c_int, buf: *mut libc::statfs) -> c_int {
    fstatfs(fd, buf)
}

#[no_mangle]
pub unsafe extern "C" fn statfs(path: *const c_char, buf: *mut libc::statfs) -> c_int {
    let real = || real!(statfs: fn(*const c_char, *mut libc::statfs) -> c_int)(path, buf);
    at_disk(path, || fill_statfs(&mut *buf)).unwrap_or_else(real)
}

#[no_mangle]
pub unsafe extern "C" fn statfs64(path: *const c_char, buf: *mut libc::statfs) -> c_int {
    statfs(path, buf)
}

#[no_mangle]
pub unsafe extern "C" fn fstatvfs(fd: c_int, buf: *mut libc::statvfs) -> c_int {
    if on_disk(fd) {
        fill_statvfs(&mut *buf);
        return 0;
    }
    real!(fstatvfs: fn(c_int, *mut libc::statvfs) -> c_int)(fd, buf)
}

#[no_mangle]
pub unsafe extern "C" fn fstatvfs64(fd: c_int, buf: *mut libc::statvfs) -> c_int {
    fstatvfs(fd, buf)
}

#[no_mangle]
pub unsafe extern "C" fn statvfs(path: *const c_char, buf: *mut libc::statvfs) -> c_int {
    let real = || real!(statvfs: fn(*const c_char, *mut libc::statvfs) -> c_int)(path, buf);
    at_disk(path, || fill_statvfs(&mut *buf)).unwrap_or_else(real)
}

#[no_mangle]
pub unsafe extern "C" fn statvfs64(path: *const c_char, buf: *mut libc::statvfs) -> c_int {
    statvfs(path, buf)
}

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
    crate::creds::chown_with(uid, gid, || {
        real!(fchown: fn(c_int, libc::uid_t, libc::gid_t) -> c_int)(fd, uid, gid)
    })
}

#[no_mangle]
pub unsafe extern "C" fn syncfs(fd: c_int) -> c_int {
    if let Some(r) = disk_io(fd, |_| request(DISK_SYNC, [0; 4]) as c_int) {
        return r;
    }
    real!(syncfs: fn(c_int) -> c_int)(fd)
}

/// `sync`: the node's disk too, when it has data directories.
#[no_mangle]
pub unsafe extern "C" fn sync() {
    if let Some(_g) = Guard::enter() {
        if active() && !crate::datadir::env_value().is_empty() {
            request(DISK_SYNC, [0; 4]);
        }
    }
    real!(sync: fn() -> ())()
}

/// `fallocate` on a disk descriptor: the disk model reserves no blocks (it never predicts
/// `ENOSPC` from a reservation), so mode 0 is a growth of the file to `off + len` when it is
/// shorter — a truncate on the model, with its crash semantics — and `FALLOC_FL_KEEP_SIZE`
/// changes nothing; the other modes (punching holes, zeroing, collapsing ranges) are refused by
/// name. Answers 0 or an errno (`posix_fallocate`'s convention).
fn allocate(fd: c_int, mode: c_int, off: i64, len: i64) -> c_int {
    if off < 0 || len <= 0 {
        return libc::EINVAL;
    }
    if mode == libc::FALLOC_FL_KEEP_SIZE {
        return 0;
    }
    if mode != 0 {
        refuse(b"fallocate with a mode other than 0 or FALLOC_FL_KEEP_SIZE on a data-directory file is not modelled");
    }
    // SAFETY: an all-zero `stat` is a valid value; fstat_disk fills it.
    let mut st: libc::stat = unsafe { core::mem::zeroed() };
    // SAFETY: fd is a disk descriptor and st is ours.
    if unsafe { crate::diskstat::fstat_disk(fd, &mut st) } < 0 {
        // SAFETY: errno is this thread's.
        return unsafe { *libc::__errno_location() };
    }
    let Some(end) = off.checked_add(len) else { return libc::EFBIG };
    if end > st.st_size && ftruncate(fd, end) < 0 {
        // SAFETY: as above.
        return unsafe { *libc::__errno_location() };
    }
    0
}

/// `fallocate`'s convention: 0, or -1 with errno.
fn fallocate_ret(e: c_int) -> c_int {
    if e == 0 {
        return 0;
    }
    set_errno(e);
    -1
}

#[no_mangle]
pub unsafe extern "C" fn fallocate(
    fd: c_int,
    mode: c_int,
    off: libc::off_t,
    len: libc::off_t,
) -> c_int {
    if let Some(r) = disk_io(fd, |fd| fallocate_ret(allocate(fd, mode, off, len))) {
        return r;
    }
    real!(fallocate: fn(c_int, c_int, libc::off_t, libc::off_t) -> c_int)(fd, mode, off, len)
}

#[no_mangle]
pub unsafe extern "C" fn fallocate64(
    fd: c_int,
    mode: c_int,
    off: libc::off64_t,
    len: libc::off64_t,
) -> c_int {
    fallocate(fd, mode, off, len)
}

#[no_mangle]
pub unsafe extern "C" fn posix_fallocate(fd: c_int, off: libc::off_t, len: libc::off_t) -> c_int {
    if let Some(r) = disk_io(fd, |fd| allocate(fd, 0, off, len)) {
        return r;
    }
    real!(posix_fallocate: fn(c_int, libc::off_t, libc::off_t) -> c_int)(fd, off, len)
}

#[no_mangle]
pub unsafe extern "C" fn posix_fallocate64(
    fd: c_int,
    off: libc::off64_t,
    len: libc::off64_t,
) -> c_int {
    posix_fallocate(fd, off, len)
}

/// `flock` on a disk descriptor: the host's lock of the open file description
/// (`crate::disklock`).
#[no_mangle]
pub unsafe extern "C" fn flock(fd: c_int, op: c_int) -> c_int {
    if let Some(r) = disk_io(fd, |fd| crate::disklock::flock(fd, op)) {
        return r;
    }
    real!(flock: fn(c_int, c_int) -> c_int)(fd, op)
}

/// `sync_file_range` on a disk descriptor: Linux's call starts (and with the `WAIT` flags waits
/// for) writeback of the range, but it writes no metadata and flushes no device cache, and its
/// manual page says it gives no durability guarantee. So it is checked as the kernel checks it
/// (`EINVAL` for unknown flags, a negative offset or length, or a range past the largest
/// offset; `ESPIPE` is not reachable: a data-directory descriptor is a file or a directory)
/// and answers 0, changing nothing: under `fsync` and `posix` the range stays as unsynced as it
/// was, and a crash may lose it.
#[no_mangle]
pub unsafe extern "C" fn sync_file_range(
    fd: c_int,
    off: libc::off64_t,
    n: libc::off64_t,
    flags: c_uint,
) -> c_int {
    let check = |_fd: c_int| {
        let known = libc::SYNC_FILE_RANGE_WAIT_BEFORE
            | libc::SYNC_FILE_RANGE_WRITE
            | libc::SYNC_FILE_RANGE_WAIT_AFTER;
        if flags & !known != 0 || off < 0 || n < 0 || off.checked_add(n).is_none() {
            set_errno(libc::EINVAL);
            return -1;
        }
        0
    };
    if let Some(r) = disk_io(fd, check) {
        return r;
    }
    real!(sync_file_range: fn(c_int, libc::off64_t, libc::off64_t, c_uint) -> c_int)(
        fd, off, n, flags,
    )
}
