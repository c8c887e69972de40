//! Where a process-shared wait waits. A process-shared semaphore or futex in memory mapped
//! before a fork sits at one address in every process, and the host matches waits and wakes
//! by address. One in a file mapped by unrelated processes (`sem_open`'s `/dev/shm/sem.NAME`,
//! libqb's ring buffers that corosync's tools read) sits at a different address in each, so a
//! post in one never reached a waiter in another. The kernel keys a shared futex by the file
//! and offset behind the address; so does this: every shared mapping of a file is noted
//! (start, end, device, inode, offset), and a shared object in one waits and wakes under a key
//! made of its file and offset, tagged with the top bit (never a user-space address). glibc's
//! own mappings (`sem_open` maps with its internal `mmap`) are not seen: for an address in no
//! noted mapping, `/proc/self/maps` says. Anonymous shared memory and System V segments keep
//! the address (the same after a fork).

use crate::prelude::*;
use core::sync::atomic::AtomicBool;

/// Shared file mappings noted per process (more are not keyed: their objects keep the address).
const MAX: usize = 256;
/// Each entry: start, end, device, inode, file offset of `start` (start 0: free).
static MAPS: [[AtomicU64; 5]; MAX] = [const { [const { AtomicU64::new(0) }; 5] }; MAX];
static LOCK: AtomicBool = AtomicBool::new(false);

fn locked<T>(f: impl FnOnce() -> T) -> T {
    while LOCK.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
        core::hint::spin_loop();
    }
    let r = f();
    LOCK.store(false, Ordering::Release);
    r
}

/// After a successful `mmap` at `p`: notes a shared mapping of file `fd` (and forgets what it
/// replaced).
pub(crate) fn mapped(p: usize, len: usize, flags: c_int, fd: c_int, off: i64) {
    forget(p, p.saturating_add(len));
    if flags & (libc::MAP_SHARED | libc::MAP_SHARED_VALIDATE) == 0 {
        return;
    }
    // SAFETY: fstat into a local struct.
    let mut st: libc::stat = unsafe { core::mem::zeroed() };
    if flags & libc::MAP_ANONYMOUS == 0 && fd >= 0 {
        let args = [fd as i64, &mut st as *mut libc::stat as i64, 0, 0, 0, 0];
        // SAFETY: a raw fstat with a valid out-pointer.
        if unsafe { sys::raw(libc::SYS_fstat, args) } != 0 {
            return;
        }
    }
    // Anonymous shared memory is noted too (inode 0: it keeps the address), so its objects
    // need no look in /proc.
    let row = [p as u64, p.saturating_add(len) as u64, st.st_dev, st.st_ino, off as u64];
    locked(|| {
        if let Some(e) = MAPS.iter().find(|e| e[0].load(Ordering::Relaxed) == 0) {
            for (cell, v) in e.iter().zip(row) {
                cell.store(v, Ordering::Relaxed);
            }
        }
    });
}

/// After `munmap`, `mremap` or a fixed mapping over `[start, end)`: forgets the notes there.
pub(crate) fn forget(start: usize, end: usize) {
    locked(|| {
        for e in MAPS.iter() {
            let (s, t) = (e[0].load(Ordering::Relaxed), e[1].load(Ordering::Relaxed));
            if s != 0 && (s as usize) < end && (t as usize) > start {
                e[0].store(0, Ordering::Relaxed);
            }
        }
    });
}

/// The key a process-shared object at `addr` waits and wakes under.
pub(crate) fn key(addr: *const c_void) -> *const c_void {
    let a = addr as u64;
    let hit = locked(|| {
        MAPS.iter().find_map(|e| {
            let s = e[0].load(Ordering::Relaxed);
            let inside = s != 0 && s <= a && a < e[1].load(Ordering::Relaxed);
            inside.then(|| {
                let at = e[4].load(Ordering::Relaxed).wrapping_add(a - s);
                [e[2].load(Ordering::Relaxed), e[3].load(Ordering::Relaxed), at]
            })
        })
    });
    let Some([dev, ino, at]) = hit.or_else(|| from_proc_maps(a)) else { return addr };
    if ino == 0 {
        return addr;
    }
    let mut h = dev.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ ino;
    h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9) ^ at;
    (h | 1 << 63) as *const c_void
}

/// The device, inode and file offset behind address `a`, from `/proc/self/maps` (`None`: not
/// in a mapping of a file there, or unreadable).
fn from_proc_maps(a: u64) -> Option<[u64; 3]> {
    let mut buf = [0u8; 4096];
    let mut line = [0u8; 512];
    let (mut n, mut found) = (0usize, None);
    // SAFETY: raw open/read/close of a constant path into local buffers.
    unsafe {
        let path = c"/proc/self/maps".as_ptr() as i64;
        let fd = sys::raw(
            libc::SYS_openat,
            [libc::AT_FDCWD as i64, path, libc::O_RDONLY as i64 | libc::O_CLOEXEC as i64, 0, 0, 0],
        );
        if fd < 0 {
            return None;
        }
        'read: loop {
            let got =
                sys::raw(libc::SYS_read, [fd, buf.as_mut_ptr() as i64, buf.len() as i64, 0, 0, 0]);
            if got <= 0 {
                break;
            }
            for &b in &buf[..got as usize] {
                if b != b'\n' {
                    if n < line.len() {
                        line[n] = b;
                        n += 1;
                    }
                    continue;
                }
                found = parse_line(&line[..n], a);
                n = 0;
                if found.is_some() {
                    break 'read;
                }
            }
        }
        sys::raw(libc::SYS_close, [fd, 0, 0, 0, 0, 0]);
    }
    found
}

/// One line of `/proc/self/maps` (`start-end perms offset major:minor inode path`): the
/// device, inode and file offset of `a` if it lies in a shared mapping of a file there.
fn parse_line(line: &[u8], a: u64) -> Option<[u64; 3]> {
    let mut fields = line.split(|&b| b == b' ').filter(|f| !f.is_empty());
    let range = fields.next()?;
    let dash = range.iter().position(|&b| b == b'-')?;
    let (start, end) = (hex(&range[..dash])?, hex(&range[dash + 1..])?);
    let perms = fields.next()?;
    if !(start <= a && a < end) || perms.get(3) != Some(&b's') {
        return None;
    }
    let off = hex(fields.next()?)?;
    let dev = fields.next()?;
    let colon = dev.iter().position(|&b| b == b':')?;
    let (major, minor) = (hex(&dev[..colon])?, hex(&dev[colon + 1..])?);
    let ino = fields
        .next()?
        .iter()
        .try_fold(0u64, |v, &b| b.is_ascii_digit().then(|| v * 10 + u64::from(b - b'0')))?;
    // The kernel's encoding of a device number (as `stat`'s `st_dev` gives it).
    let dev = libc::makedev(major as u32, minor as u32);
    Some([dev, ino, off.wrapping_add(a - start)])
}

fn hex(s: &[u8]) -> Option<u64> {
    s.iter().try_fold(0u64, |v, &b| (b as char).to_digit(16).map(|d| v << 4 | u64::from(d)))
}
