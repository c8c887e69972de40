//! Listing data directories: `opendir`/`fdopendir`/`readdir`/`readdir64`/`rewinddir`/
//! `closedir`/`dirfd` on a pool of `DIR` handles the shim owns (no allocation in hooks), and
//! `getdents64`, both reading `linux_dirent64` records the host builds from its disk model;
//! the same calls on `/proc` itself list the node's processes ([`crate::procpids::list`]);
//! `readdir_r` and `readdir64_r` read the same records ([`crate::scandir`] lists through
//! these handles too); `telldir`/`seekdir` positions count records from the start.

use crate::datadir::{disk_io, disk_path, lseek_disk, request, try_open};
use crate::diskcalls::refuse;
use crate::prelude::*;
use core::cell::UnsafeCell;

const HANDLES: usize = 16;
const LIST_BUF: usize = 8192;

/// One `DIR` of a disk directory: its descriptor and the records read ahead.
#[repr(C, align(8))]
struct DirHandle {
    buf: [u8; LIST_BUF],
    fd: c_int,
    used: bool,
    /// A listing of `/proc` itself ([`crate::procpids::list`]), not of a data directory.
    proc: bool,
    len: usize,
    pos: usize,
    /// Records handed out since the start (or a rewind): what `telldir` answers.
    read: usize,
}

struct Handles(UnsafeCell<[DirHandle; HANDLES]>);
// SAFETY: only the thread holding the baton runs program code, so one thread at a time.
unsafe impl Sync for Handles {}
static DIRP: Handles = Handles(UnsafeCell::new(
    [const {
        DirHandle { buf: [0; LIST_BUF], fd: -1, used: false, proc: false, len: 0, pos: 0, read: 0 }
    }; HANDLES],
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
    new_listing(fd, false)
}

fn new_listing(fd: c_int, proc: bool) -> *mut libc::DIR {
    // SAFETY: one thread at a time (see `Handles`).
    let pool = unsafe { &mut *DIRP.0.get() };
    let Some(h) = pool.iter_mut().find(|h| !h.used) else {
        refuse(b"more than 16 data-directory listings open at once");
    };
    h.used = true;
    h.proc = proc;
    h.fd = fd;
    h.len = 0;
    h.pos = 0;
    h.read = 0;
    (h as *mut DirHandle).cast()
}

/// A listing the shim owns of `path` (from `dirfd`) if it is a data directory or `/proc`
/// itself: the handle, or null with errno set; None for any other directory. The caller holds
/// the guard and the run is active.
///
/// # Safety
/// `path` is null or a NUL-terminated string.
pub(crate) unsafe fn open_ours(dirfd: c_int, path: *const c_char) -> Option<*mut libc::DIR> {
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC;
    if let Some(fd) = try_open(dirfd, path, flags) {
        return Some(if fd < 0 { ptr::null_mut() } else { new_handle(fd) });
    }
    let absolute = !path.is_null() && *path == b'/' as c_char;
    if (dirfd == libc::AT_FDCWD || absolute) && crate::procpids::is_proc_root_path(path) {
        let fd = sys::raw(libc::SYS_open, [path as i64, flags as i64, 0, 0, 0, 0]);
        return Some(if fd < 0 { ptr::null_mut() } else { new_listing(fd as c_int, true) });
    }
    None
}

#[no_mangle]
pub unsafe extern "C" fn opendir(path: *const c_char) -> *mut libc::DIR {
    if let Some(_g) = Guard::enter() {
        if active() {
            if let Some(dirp) = open_ours(libc::AT_FDCWD, path) {
                return dirp;
            }
        }
    }
    crate::procpids::real_path(path, ptr::null_mut(), |path| {
        real!(opendir: fn(*const c_char) -> *mut libc::DIR)(path)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fdopendir(fd: c_int) -> *mut libc::DIR {
    if let Some(r) = disk_io(fd, new_handle) {
        return r;
    }
    if let Some(_g) = Guard::enter() {
        if active() && crate::procpids::is_proc_root(fd) {
            return new_listing(fd, true);
        }
    }
    real!(fdopendir: fn(c_int) -> *mut libc::DIR)(fd)
}

/// The next record of `h` (reading more from the host when its buffer is used up).
fn next_record(h: &mut DirHandle) -> *mut c_void {
    if h.pos >= h.len {
        let r = if h.proc {
            // SAFETY: `h.fd` is open on `/proc`; the caller holds the guard.
            unsafe { crate::procpids::list(h.fd, &mut h.buf) as i64 }
        } else {
            let r = request(DISK_LIST, [h.fd as i64, LIST_BUF as i64, 0, 0]);
            if r > 0 {
                h.buf[..r as usize].copy_from_slice(&slot().data[..r as usize]);
            }
            r
        };
        if r <= 0 {
            return ptr::null_mut();
        }
        h.len = r as usize;
        h.pos = 0;
    }
    let at = h.pos;
    let reclen = u16::from_ne_bytes([h.buf[at + 16], h.buf[at + 17]]) as usize;
    h.pos += reclen.max(24);
    h.read += 1;
    h.buf[at..].as_mut_ptr().cast()
}

#[no_mangle]
pub unsafe extern "C" fn readdir(dirp: *mut libc::DIR) -> *mut libc::dirent {
    if let Some(r) = ours(dirp).and_then(|h| disk_path(|| Some(next_record(h).cast()))) {
        return r;
    }
    real!(readdir: fn(*mut libc::DIR) -> *mut libc::dirent)(dirp)
}

#[no_mangle]
pub unsafe extern "C" fn readdir64(dirp: *mut libc::DIR) -> *mut libc::dirent64 {
    if let Some(r) = ours(dirp).and_then(|h| disk_path(|| Some(next_record(h).cast()))) {
        return r;
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

/// Back to the first record of `h`. The caller holds the guard.
fn rewind(h: &mut DirHandle) {
    if h.proc {
        // SAFETY: `h.fd` is open on `/proc`.
        unsafe { sys::raw(libc::SYS_lseek, [h.fd as i64, 0, libc::SEEK_SET as i64, 0, 0, 0]) };
    } else {
        lseek_disk(h.fd, 0, libc::SEEK_SET);
    }
    h.len = 0;
    h.pos = 0;
    h.read = 0;
}

#[no_mangle]
pub unsafe extern "C" fn rewinddir(dirp: *mut libc::DIR) {
    if let Some(h) = ours(dirp) {
        if let Some(_g) = Guard::enter() {
            if active() {
                rewind(h);
            }
        }
        return;
    }
    real!(rewinddir: fn(*mut libc::DIR) -> ())(dirp)
}

/// On one of ours, a position is the number of records read before it (listings are made
/// afresh from the model, in its order, so counting again from the start finds it).
#[no_mangle]
pub unsafe extern "C" fn telldir(dirp: *mut libc::DIR) -> c_long {
    if let Some(h) = ours(dirp) {
        return h.read as c_long;
    }
    real!(telldir: fn(*mut libc::DIR) -> c_long)(dirp)
}

#[no_mangle]
pub unsafe extern "C" fn seekdir(dirp: *mut libc::DIR, at: c_long) {
    if let Some(h) = ours(dirp) {
        if let Some(_g) = Guard::enter() {
            if active() {
                rewind(h);
                while (h.read as c_long) < at && !next_record(h).is_null() {}
            }
        }
        return;
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
        return next_into(dirp, entry.cast(), result.cast());
    }
    real!(readdir_r: fn(*mut libc::DIR, *mut libc::dirent, *mut *mut libc::dirent) -> c_int)(
        dirp, entry, result,
    )
}

#[no_mangle]
pub unsafe extern "C" fn readdir64_r(
    dirp: *mut libc::DIR,
    entry: *mut libc::dirent64,
    result: *mut *mut libc::dirent64,
) -> c_int {
    if ours(dirp).is_some() {
        return next_into(dirp, entry.cast(), result.cast());
    }
    real!(readdir64_r: fn(*mut libc::DIR, *mut libc::dirent64, *mut *mut libc::dirent64) -> c_int)(
        dirp, entry, result,
    )
}

/// `readdir_r` on one of ours: the next record copied into `entry` (at most a `dirent`'s
/// size), `*result` set to it, or to null at the end.
unsafe fn next_into(dirp: *mut libc::DIR, entry: *mut u8, result: *mut *mut u8) -> c_int {
    let e = readdir64(dirp);
    if e.is_null() {
        *result = ptr::null_mut();
        return 0;
    }
    let len = ((*e).d_reclen as usize).min(core::mem::size_of::<libc::dirent64>());
    ptr::copy_nonoverlapping(e.cast::<u8>(), entry, len);
    *result = entry;
    0
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
    if let Some(_g) = Guard::enter() {
        if active() && crate::procpids::is_proc_root(fd) {
            // SAFETY: `len` bytes of the caller's buffer.
            let out = core::slice::from_raw_parts_mut(buf as *mut u8, len);
            return crate::procpids::list(fd, out) as ssize_t;
        }
    }
    real!(getdents64: fn(c_int, *mut c_void, size_t) -> ssize_t)(fd, buf, len)
}
