//! Mappings of data-directory files. The disk model has no pages a process could share, so
//! `mmap` of a simulated file is served two ways:
//!
//! - `MAP_PRIVATE` (any protection): an anonymous mapping holding a copy of the file's bytes,
//!   read through the disk hooks when the mapping is made (a page-in on which the host draws
//!   `disk.corrupt_read` like any read, but no latent sector error: that would be a `SIGBUS`
//!   at access, which is not modelled). Linux leaves unspecified whether later changes of the
//!   file show through, so a private copy is one of the allowed behaviours. Bytes past the end
//!   of the file read as zeros (beyond the file's last page Linux raises `SIGBUS`, which is
//!   not modelled for copies).
//! - `MAP_SHARED` (any protection): a mapping of the real backing file the host keeps alike
//!   with the model while the file is mapped on the node (`DISK_MAP` answers its path; see
//!   the host's `diskmap`), so stores, `write`s and truncations are seen by every mapping as
//!   in one page cache, and the host takes the stores into the model before it next serves
//!   the file, at `msync` (`DISK_MSYNC`) and when the mapping ends. The backing file is opened
//!   read-only when the descriptor was, so a writable mapping or `mprotect(PROT_WRITE)` of it
//!   fails with `EACCES` as on Linux; past the end of the file is `SIGBUS`, as on Linux.
//!
//! `mremap` of a mapped data file, and `madvise` advice that would drop or zero pages of a
//! private copy (`MADV_DONTNEED`, `MADV_FREE`, `MADV_REMOVE`, …), are refused by name: a copy
//! would not re-read the file.
//!
//! The process's mapped files are kept in a fixed table (no allocation); a `fork`ed child
//! inherits it with the memory, and the host copies the parent's shared mappings for it.

use crate::datadir::{read_as, request};
use crate::diskcalls::refuse;
use crate::prelude::*;
use crate::vmspace::{self, round_up};
use core::cell::UnsafeCell;

/// The most mapped copies a process holds at once (LevelDB maps up to 1,000 tables).
const MAX_MAPS: usize = 4096;

/// A mapped copy: `[start, end)` (page-aligned), and the host's token for a shared mapping
/// (0: private). A shared mapping split by a partial `munmap` is several entries, one token.
#[derive(Clone, Copy)]
struct Map {
    start: usize,
    end: usize,
    token: i64,
}

struct Maps(UnsafeCell<[Map; MAX_MAPS]>);
// SAFETY: only the thread holding the baton runs hooks, and it holds the reentrancy guard.
unsafe impl Sync for Maps {}
static MAPS: Maps = Maps(UnsafeCell::new([Map { start: 0, end: 0, token: 0 }; MAX_MAPS]));
/// How many entries of `MAPS` are in use (0: `munmap` and friends pass straight through).
static COUNT: AtomicU32 = AtomicU32::new(0);

/// The entries in use. Callers hold the guard (see `Maps`).
fn maps() -> &'static mut [Map] {
    let n = COUNT.load(Ordering::Relaxed) as usize;
    // SAFETY: see `Maps`; n <= MAX_MAPS.
    unsafe { &mut (&mut *MAPS.0.get())[..n] }
}

fn push(m: Map) -> bool {
    let n = COUNT.load(Ordering::Relaxed) as usize;
    if n == MAX_MAPS {
        return false;
    }
    // SAFETY: see `Maps`; n < MAX_MAPS.
    unsafe { (&mut *MAPS.0.get())[n] = m };
    COUNT.store(n as u32 + 1, Ordering::Relaxed);
    true
}

fn remove(k: usize) {
    let all = maps();
    let last = all.len() - 1;
    all[k] = all[last];
    COUNT.store(last as u32, Ordering::Relaxed);
}

/// True when `[start, end)` overlaps a mapped copy for which `pick` holds.
fn overlaps(start: usize, end: usize, pick: impl Fn(&Map) -> bool) -> bool {
    maps().iter().any(|m| m.start < end && start < m.end && pick(m))
}

/// `[start, end)` is no longer mapped (`munmap`, or a `MAP_FIXED` mapping over it): trims,
/// splits or drops the copies there; a shared mapping whose last piece goes ends on the host.
fn forget(start: usize, end: usize) {
    let mut k = 0;
    while k < maps().len() {
        let m = maps()[k];
        if m.end <= start || end <= m.start {
            k += 1;
            continue;
        }
        let (left, right) = (m.start < start, end < m.end);
        let all = maps();
        match (left, right) {
            (true, true) => {
                all[k].end = start;
                if !push(Map { start: end, ..m }) {
                    refuse(b"munmap splitting a mapped data-directory file: too many mappings");
                }
            }
            (true, false) => all[k].end = start,
            (false, true) => all[k].start = end,
            (false, false) => {
                remove(k);
                if m.token > 0 && !maps().iter().any(|o| o.token == m.token) {
                    request(DISK_UNMAP, [m.token, 0, 0, 0]);
                }
                continue;
            }
        }
        k += 1;
    }
}

/// An address answered as `mmap` answers it: the address, or `MAP_FAILED` (-1) with errno.
fn as_address(r: i64) -> *mut c_void {
    ret_errno(r) as *mut c_void
}

fn failed(e: c_int) -> *mut c_void {
    set_errno(e);
    libc::MAP_FAILED
}

/// The flags an anonymous copy can take over from a file mapping's.
const KEPT: c_int = libc::MAP_FIXED
    | libc::MAP_FIXED_NOREPLACE
    | libc::MAP_NORESERVE
    | libc::MAP_POPULATE
    | libc::MAP_LOCKED
    | libc::MAP_32BIT
    | libc::MAP_NONBLOCK;
/// Flags Linux ignores on a file mapping.
const IGNORED: c_int = libc::MAP_DENYWRITE | libc::MAP_EXECUTABLE | libc::MAP_FILE;

/// `mmap` of disk descriptor `fd` (the guard held, the shim active).
fn map_disk(
    addr: *mut c_void,
    len: usize,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    off: i64,
) -> *mut c_void {
    let shared = match flags & libc::MAP_TYPE {
        libc::MAP_SHARED | libc::MAP_SHARED_VALIDATE => true,
        libc::MAP_PRIVATE => false,
        _ => return failed(libc::EINVAL),
    };
    if len == 0
        || off < 0
        || !(off as usize).is_multiple_of(vmspace::PAGE)
        || len > isize::MAX as usize
    {
        return failed(libc::EINVAL);
    }
    if flags & !(libc::MAP_TYPE | KEPT | IGNORED) != 0 {
        refuse(b"mmap of a data-directory file with flags that are not modelled");
    }
    // SAFETY: an all-zero `stat` is a valid value; fstat_disk fills it.
    let mut st: libc::stat = unsafe { core::mem::zeroed() };
    // SAFETY: fd is a disk descriptor and st is ours.
    if unsafe { crate::diskstat::fstat_disk(fd, &mut st) } < 0 {
        return libc::MAP_FAILED;
    }
    if st.st_mode & libc::S_IFMT == libc::S_IFDIR {
        return failed(libc::ENODEV);
    }
    let mode = request(DISK_GETFL, [fd as i64, 0, 0, 0]);
    if mode < 0 {
        return libc::MAP_FAILED;
    }
    let mode = mode as c_int & libc::O_ACCMODE;
    if mode == libc::O_WRONLY || (shared && prot & libc::PROT_WRITE != 0 && mode == libc::O_RDONLY)
    {
        return failed(libc::EACCES);
    }
    let read_only = mode == libc::O_RDONLY;
    if shared {
        return map_shared(addr, len, prot, flags & KEPT, fd, off, read_only);
    }
    let p = copy(addr, len, prot, flags & KEPT, fd, off, st.st_size);
    if p != libc::MAP_FAILED {
        record(Map { start: p as usize, end: 0, token: 0 }, len);
    }
    p
}

/// A shared mapping of `fd`'s file: the host's backing file mapped `MAP_SHARED`.
fn map_shared(
    addr: *mut c_void,
    len: usize,
    prot: c_int,
    kept: c_int,
    fd: c_int,
    off: i64,
    read_only: bool,
) -> *mut c_void {
    let token =
        request(DISK_MAP, [fd as i64, off, len as i64, (prot & libc::PROT_WRITE != 0) as i64]);
    if token <= 0 {
        refuse(b"mmap(MAP_SHARED) of a data-directory file: the host did not record it");
    }
    let access = if read_only { libc::O_RDONLY } else { libc::O_RDWR };
    let path = slot().data.as_ptr() as i64;
    let flags = (access | libc::O_CLOEXEC) as i64;
    // SAFETY: a raw open of the NUL-terminated path the host wrote into the slot.
    let backing =
        unsafe { sys::raw_ret(libc::SYS_openat, [libc::AT_FDCWD as i64, path, flags, 0, 0, 0]) };
    if backing < 0 {
        request(DISK_UNMAP, [token, 0, 0, 0]);
        return failed(-backing as c_int);
    }
    let bfd = backing as c_int;
    let p = as_address(vmspace::map(addr as usize, len, prot, kept | libc::MAP_SHARED, bfd, off));
    if p != libc::MAP_FAILED {
        crate::sharedkeys::mapped(p as usize, round_up(len), libc::MAP_SHARED, bfd, off);
    }
    // SAFETY: closing the descriptor opened above; the mapping keeps the file.
    unsafe { sys::raw(libc::SYS_close, [backing, 0, 0, 0, 0, 0]) };
    if p == libc::MAP_FAILED {
        // SAFETY: errno is this thread's.
        let e = unsafe { *libc::__errno_location() };
        request(DISK_UNMAP, [token, 0, 0, 0]);
        return failed(e);
    }
    record(Map { start: p as usize, end: 0, token }, len);
    p
}

/// An anonymous mapping holding the bytes of `fd`'s file from `off` (zeros past `size`),
/// with protection `prot`.
fn copy(
    addr: *mut c_void,
    len: usize,
    prot: c_int,
    kept: c_int,
    fd: c_int,
    off: i64,
    size: i64,
) -> *mut c_void {
    let rw = libc::PROT_READ | libc::PROT_WRITE;
    let flags = kept | libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
    let p = as_address(vmspace::map(addr as usize, len, rw, flags, -1, 0));
    if p == libc::MAP_FAILED {
        return p;
    }
    let want = (size - off).clamp(0, len as i64) as usize;
    if want > 0 && read_as(fd, p, want, off, 1) < 0 {
        // SAFETY: errno is this thread's; the mapping is the one just made.
        let e = unsafe { *libc::__errno_location() };
        // SAFETY: as above.
        unsafe { munmap(p, len) };
        return failed(e);
    }
    let mprotect = real!(mprotect: fn(*mut c_void, size_t, c_int) -> c_int);
    // SAFETY: the mapping just made.
    if prot != rw && unsafe { mprotect(p, len, prot) } < 0 {
        // SAFETY: errno is this thread's; the mapping is the one just made.
        let e = unsafe { *libc::__errno_location() };
        // SAFETY: as above.
        unsafe { munmap(p, len) };
        return failed(e);
    }
    p
}

/// Remembers the mapped file `m` (made at `m.start`, `len` bytes).
fn record(m: Map, len: usize) {
    let (start, end) = (m.start, m.start + round_up(len));
    forget(start, end);
    if !push(Map { end, ..m }) {
        refuse(b"mmap of a data-directory file: more than 4096 mapped copies in one process");
    }
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
    if fd >= 0 && flags & libc::MAP_ANONYMOUS == 0 {
        if let Some(p) = crate::datadir::disk_io(fd, |fd| map_disk(addr, len, prot, flags, fd, off))
        {
            return p;
        }
    }
    let p = as_address(vmspace::map(addr as usize, len, prot, flags, fd, off));
    if p != libc::MAP_FAILED {
        crate::sharedkeys::mapped(p as usize, round_up(len), flags, fd, off);
    }
    if p != libc::MAP_FAILED && flags & libc::MAP_FIXED != 0 && COUNT.load(Ordering::Relaxed) > 0 {
        if let Some(_g) = Guard::enter() {
            if active() {
                forget(p as usize, p as usize + round_up(len));
            }
        }
    }
    p
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
pub unsafe extern "C" fn munmap(addr: *mut c_void, len: size_t) -> c_int {
    let r = ret_errno(vmspace::unmap(addr as usize, len)) as c_int;
    if r == 0 {
        let start = addr as usize;
        crate::sharedkeys::forget(start, start.saturating_add(round_up(len)));
    }
    if r == 0 && COUNT.load(Ordering::Relaxed) > 0 {
        if let Some(_g) = Guard::enter() {
            if active() {
                let start = addr as usize;
                forget(start, start.saturating_add(round_up(len)));
            }
        }
    }
    r
}

/// `mprotect`: a shared mapping of a data file that becomes writable is told to the host,
/// which then compares its backing file with the model (see the host's `diskmap`).
#[no_mangle]
pub unsafe extern "C" fn mprotect(addr: *mut c_void, len: size_t, prot: c_int) -> c_int {
    let r = real!(mprotect: fn(*mut c_void, size_t, c_int) -> c_int)(addr, len, prot);
    if r != 0 || prot & libc::PROT_WRITE == 0 || COUNT.load(Ordering::Relaxed) == 0 {
        return r;
    }
    let Some(_g) = Guard::enter() else { return r };
    if !active() {
        return r;
    }
    tell_shared(addr as usize, len, DISK_WRITABLE, 0);
    r
}

/// Sends `kind` (with `arg`) to the host once for each shared mapping overlapping
/// `[start, start + len)` (a mapping split by a partial `munmap` is several entries, one
/// token).
fn tell_shared(start: usize, len: usize, kind: i64, arg: i64) {
    let end = start.saturating_add(len);
    let hit = |m: &Map| m.token > 0 && m.start < end && start < m.end;
    let all = maps();
    for (k, m) in all.iter().enumerate() {
        if hit(m) && !all[..k].iter().any(|o| hit(o) && o.token == m.token) {
            request(kind, [m.token, arg, 0, 0]);
        }
    }
}

/// `mremap` (its optional fifth argument, the new address, read as a fixed one).
#[no_mangle]
pub unsafe extern "C" fn mremap(
    old: *mut c_void,
    old_len: size_t,
    new_len: size_t,
    flags: c_int,
    new_addr: *mut c_void,
) -> *mut c_void {
    if COUNT.load(Ordering::Relaxed) > 0 {
        if let Some(_g) = Guard::enter() {
            let start = old as usize;
            if active() && overlaps(start, start.saturating_add(old_len.max(1)), |_| true) {
                refuse(b"mremap of a mapped data-directory file is not modelled");
            }
        }
    }
    let p = as_address(vmspace::remap(old as usize, old_len, new_len, flags, new_addr as usize));
    if p != libc::MAP_FAILED {
        let start = old as usize;
        crate::sharedkeys::forget(start, start.saturating_add(round_up(old_len.max(1))));
    }
    p
}

/// Advice that keeps a mapping's contents (hints, fork and dump behaviour, paging out).
fn keeps_contents(advice: c_int) -> bool {
    matches!(
        advice,
        libc::MADV_NORMAL
            | libc::MADV_RANDOM
            | libc::MADV_SEQUENTIAL
            | libc::MADV_WILLNEED
            | libc::MADV_DONTFORK
            | libc::MADV_DOFORK
            | libc::MADV_MERGEABLE
            | libc::MADV_UNMERGEABLE
            | libc::MADV_HUGEPAGE
            | libc::MADV_NOHUGEPAGE
            | libc::MADV_DONTDUMP
            | libc::MADV_DODUMP
            | libc::MADV_KEEPONFORK
            | 20 // MADV_COLD
            | 21 // MADV_PAGEOUT
            | 22 // MADV_POPULATE_READ
    )
}

#[no_mangle]
pub unsafe extern "C" fn madvise(addr: *mut c_void, len: size_t, advice: c_int) -> c_int {
    if !keeps_contents(advice) && COUNT.load(Ordering::Relaxed) > 0 {
        if let Some(_g) = Guard::enter() {
            let start = addr as usize;
            if active() && overlaps(start, start.saturating_add(len), |m| m.token == 0) {
                refuse(b"madvise that drops or zeroes pages of a private mapping of a data-directory file is not modelled");
            }
        }
    }
    real!(madvise: fn(*mut c_void, size_t, c_int) -> c_int)(addr, len, advice)
}

/// `msync`: the stores of shared mappings of data files in the range reach the model (with
/// `MS_SYNC`, durably), once per mapping.
#[no_mangle]
pub unsafe extern "C" fn msync(addr: *mut c_void, len: size_t, flags: c_int) -> c_int {
    let r = real!(msync: fn(*mut c_void, size_t, c_int) -> c_int)(addr, len, flags);
    if r != 0 || COUNT.load(Ordering::Relaxed) == 0 {
        return r;
    }
    let Some(_g) = Guard::enter() else { return r };
    if !active() {
        return r;
    }
    tell_shared(addr as usize, len, DISK_MSYNC, (flags & libc::MS_SYNC != 0) as i64);
    r
}
