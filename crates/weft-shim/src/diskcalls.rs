//! The other calls on data-directory paths and descriptors: refused by name where the disk
//! model has no answer (`mmap`, `rmdir`, links, `fallocate`, `sync_file_range`, `flock`,
//! `preadv2`/`pwritev2`, `fstatfs`, `fdopen`, `chdir`/`fchdir`), or served from it (`truncate`,
//! `readlink`, `sync`/`syncfs`, and `fchmod`/`fchown`, which change nothing that is modelled).

use crate::datadir::{classify, ftruncate, request, try_open, Where};
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
        if active() && !crate::datadir::env_value().is_empty() {
            request(DISK_SYNC, [0; 4]);
        }
    }
    real!(sync: fn() -> ())()
}
