//! Where a process's mappings land. The kernel places an `mmap` without a fixed address in
//! the highest free gap below the libraries, so where it lands depends on what is mapped
//! above it: the kernel's version (newer ones align large anonymous mappings to huge pages),
//! and the size of every library loaded before, this one included. Allocators look at those
//! addresses: jemalloc trims each new chunk to its alignment and merges extents only where
//! the kernel happened to place them side by side, so how many mutex operations (scheduling
//! points under weft) a `malloc` makes changed with the machine and with the shim's own size,
//! and a recorded run of Redis replayed with another trace hash on another machine.
//!
//! So every mapping a program asks for through libc's `mmap`, `mmap64` or `mremap` (the
//! program's own calls and its allocator's; glibc's internal ones, thread stacks and its own
//! `malloc`'s large chunks, do not pass here) is placed by this module, the same way on every
//! machine: top-down first fit, like the kernel, but in an arena of its own,
//! `[ARENA_LO, ARENA_HI)`, far below anything the kernel places, and by a table that only the
//! process's own calls change. A hint is honoured where it is free, as the kernel does. The
//! placement is made with `MAP_FIXED_NOREPLACE`, so nothing already mapped is ever replaced.
//! It is on from the first call, before the library constructor and without the host too:
//! a decision that depended on when the shim started would be one more thing that varies.
//!
//! The table holds the arena's occupied ranges, coalesced, in address order, with no
//! allocation; a `fork`ed child inherits it with the memory. A process with more separate
//! ranges than it holds is ended as unsupported under the host (an untracked range would
//! make later placements depend on what the kernel did); without a host the range just goes
//! untracked.

use crate::prelude::*;
use core::cell::{Cell, UnsafeCell};
use core::sync::atomic::AtomicBool;

/// The arena: 16 TiB up to 126 TiB, below the 128 TiB the kernel starts its own placement
/// under (the stack, then the libraries, growing down from there).
const ARENA_LO: usize = 0x1000_0000_0000;
const ARENA_HI: usize = 0x7e00_0000_0000;
pub(crate) const PAGE: usize = 4096;
/// Occupied ranges the table holds at once (16 bytes each).
const CAP: usize = 16384;

struct Table(UnsafeCell<[(usize, usize); CAP]>);
// SAFETY: every access holds LOCK.
unsafe impl Sync for Table {}
static TABLE: Table = Table(UnsafeCell::new([(0, 0); CAP]));
static LEN: AtomicU32 = AtomicU32::new(0);
static LOCK: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// This thread holds LOCK (a signal handler that maps while it does goes to the kernel).
    static HELD: Cell<bool> = const { Cell::new(false) };
}

/// The table, locked for the closure's length; None when this thread already holds it.
fn locked<R>(f: impl FnOnce(&mut Ranges) -> R) -> Option<R> {
    if HELD.with(|h| h.get()) {
        return None;
    }
    while LOCK.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
        core::hint::spin_loop();
    }
    HELD.with(|h| h.set(true));
    // SAFETY: LOCK is held; LEN <= CAP.
    let all = unsafe { &mut *TABLE.0.get() };
    let mut r = Ranges { all, len: LEN.load(Ordering::Relaxed) as usize };
    let out = f(&mut r);
    LEN.store(r.len as u32, Ordering::Relaxed);
    HELD.with(|h| h.set(false));
    LOCK.store(false, Ordering::Release);
    Some(out)
}

/// The arena's occupied ranges `[start, end)`: sorted, disjoint, not touching.
struct Ranges {
    all: &'static mut [(usize, usize); CAP],
    len: usize,
}

impl Ranges {
    /// The highest `len`-byte gap (first fit from the top, as the kernel searches).
    fn place(&self, len: usize) -> Option<usize> {
        let mut hi = ARENA_HI;
        for &(start, end) in self.all[..self.len].iter().rev() {
            if hi - end >= len {
                return Some(hi - len);
            }
            hi = start;
        }
        (hi - ARENA_LO >= len).then(|| hi - len)
    }

    /// Marks `[start, end)` occupied (the part inside the arena). False when the table is full.
    fn add(&mut self, start: usize, end: usize) -> bool {
        let (start, end) = (start.max(ARENA_LO), end.min(ARENA_HI));
        if start >= end {
            return true;
        }
        // Ranges that overlap or touch the new one merge into it.
        let first = self.all[..self.len].partition_point(|r| r.1 < start);
        let last = self.all[..self.len].partition_point(|r| r.0 <= end);
        if first == last {
            if self.len == CAP {
                return false;
            }
            self.all.copy_within(first..self.len, first + 1);
            self.all[first] = (start, end);
            self.len += 1;
            return true;
        }
        let merged = (start.min(self.all[first].0), end.max(self.all[last - 1].1));
        self.all[first] = merged;
        self.all.copy_within(last..self.len, first + 1);
        self.len -= last - first - 1;
        true
    }

    /// Marks `[start, end)` free. False when a split would overflow the table.
    fn remove(&mut self, start: usize, end: usize) -> bool {
        let (start, end) = (start.max(ARENA_LO), end.min(ARENA_HI));
        if start >= end {
            return true;
        }
        let first = self.all[..self.len].partition_point(|r| r.1 <= start);
        let last = self.all[..self.len].partition_point(|r| r.0 < end);
        if first == last {
            return true;
        }
        let (left, right) = ((self.all[first].0, start), (end, self.all[last - 1].1));
        let kept: [(usize, usize); 2] = [left, right];
        let keep = kept.iter().filter(|r| r.0 < r.1).count();
        if self.len - (last - first) + keep > CAP {
            return false;
        }
        self.all.copy_within(last..self.len, first + keep);
        self.len = self.len - (last - first) + keep;
        for (k, r) in (first..).zip(kept.iter().filter(|r| r.0 < r.1)) {
            self.all[k] = *r;
        }
        true
    }
}

/// `n` rounded up to whole pages (x86-64's 4 KiB: the shim is built for nothing else).
pub(crate) fn round_up(n: usize) -> usize {
    n.div_ceil(PAGE) * PAGE
}

/// The mmap system call itself (the shim's stub: never trapped, never hooked).
fn sys_mmap(addr: usize, len: usize, prot: c_int, flags: c_int, fd: c_int, off: i64) -> i64 {
    let a = [addr as i64, len as i64, prot as i64, flags as i64, fd as i64, off];
    // SAFETY: the caller's own mmap arguments, at most with a fixed address the table holds free.
    unsafe { sys::raw_ret(libc::SYS_mmap, a) }
}

fn sys_munmap(addr: usize, len: usize) -> i64 {
    // SAFETY: the caller's own munmap arguments, or a reservation of this module's.
    unsafe { sys::raw_ret(libc::SYS_munmap, [addr as i64, len as i64, 0, 0, 0, 0]) }
}

fn ok(r: i64) -> bool {
    !(-4095..0).contains(&r)
}

/// The table cannot hold one more range: under the host the run ends as unsupported, naming
/// call `nr` (exit 4); without one the mapping stays untracked.
fn table_full(nr: i64) {
    if !active() {
        return;
    }
    let what: &[u8] = match nr {
        libc::SYS_munmap => b"munmap: more separate mappings than weft's placement table holds",
        libc::SYS_mremap => b"mremap: more separate mappings than weft's placement table holds",
        _ => b"mmap: more separate mappings than weft's placement table holds",
    };
    unsupported(what, nr, 0);
}

/// Marks the mapping a call answered (`r`: an address or `-errno`) occupied.
fn hold(t: &mut Ranges, r: i64, size: usize, nr: i64) {
    if ok(r) && !t.add(r as usize, r as usize + size) {
        table_full(nr);
    }
}

/// `mmap` as the kernel would answer it, placed deterministically (see the module doc).
/// Answers the address or `-errno`.
pub(crate) fn map(addr: usize, len: usize, prot: c_int, flags: c_int, fd: c_int, off: i64) -> i64 {
    let fixed = flags & (libc::MAP_FIXED | libc::MAP_FIXED_NOREPLACE) != 0;
    // MAP_32BIT and huge pages have placement rules of their own: the kernel keeps them.
    let own = flags & (libc::MAP_32BIT | libc::MAP_HUGETLB) != 0;
    if len == 0 || own {
        return sys_mmap(addr, len, prot, flags, fd, off);
    }
    let size = round_up(len);
    let placed = locked(|t| {
        if fixed {
            let r = sys_mmap(addr, len, prot, flags, fd, off);
            hold(t, r, size, libc::SYS_mmap);
            return Some(r);
        }
        place_free(t, addr, size, prot, flags, fd, off)
    });
    placed.flatten().unwrap_or_else(|| sys_mmap(addr, len, prot, flags, fd, off))
}

/// A non-fixed mapping: at the hint if it is free, else in the highest free gap. None: the
/// kernel places it (the arena is full, or a table that cannot grow without a host).
fn place_free(
    t: &mut Ranges,
    hint: usize,
    size: usize,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    off: i64,
) -> Option<i64> {
    let noreplace = flags | libc::MAP_FIXED_NOREPLACE;
    let hint = hint & !(PAGE - 1);
    let mut at = if hint != 0 { Some(hint) } else { t.place(size) };
    // Something the table does not know (mapped before the shim loaded) is marked and
    // passed over; a bound keeps a kernel without MAP_FIXED_NOREPLACE from looping.
    for _ in 0..64 {
        let cand = at?;
        let r = sys_mmap(cand, size, prot, noreplace, fd, off);
        if r != -(libc::EEXIST as i64) {
            hold(t, r, size, libc::SYS_mmap);
            return Some(r);
        }
        if (ARENA_LO..ARENA_HI).contains(&cand) && !t.add(cand, cand + size) {
            table_full(libc::SYS_mmap);
            return None;
        }
        at = t.place(size);
    }
    None
}

/// `munmap`, keeping the table. Answers 0 or `-errno`.
pub(crate) fn unmap(addr: usize, len: usize) -> i64 {
    let r = locked(|t| {
        let r = sys_munmap(addr, len);
        if r == 0 && !t.remove(addr, addr.saturating_add(round_up(len))) {
            table_full(libc::SYS_munmap);
        }
        r
    });
    r.unwrap_or_else(|| sys_munmap(addr, len))
}

/// `mremap`, keeping the table; a move (`MREMAP_MAYMOVE` without `MREMAP_FIXED`) that cannot
/// grow in place goes to the highest free gap. Answers the address or `-errno`.
pub(crate) fn remap(old: usize, old_len: usize, new_len: usize, flags: c_int, new: usize) -> i64 {
    let go = |flags: c_int, new: usize| {
        let a = [old as i64, old_len as i64, new_len as i64, flags as i64, new as i64, 0];
        // SAFETY: the caller's own mremap arguments, at most with a target the table holds free.
        unsafe { sys::raw_ret(libc::SYS_mremap, a) }
    };
    let r = locked(|t| {
        let moves = flags & libc::MREMAP_MAYMOVE != 0 && flags & libc::MREMAP_FIXED == 0;
        let keep_old = flags & libc::MREMAP_DONTUNMAP != 0;
        let size = round_up(new_len);
        let r = if !moves {
            go(flags, new)
        } else {
            let in_place = if keep_old {
                -(libc::ENOMEM as i64)
            } else {
                go(flags & !libc::MREMAP_MAYMOVE, 0)
            };
            if ok(in_place) {
                in_place
            } else {
                let fixed = |at| go(flags | libc::MREMAP_FIXED, at);
                move_to_gap(t, size, fixed).unwrap_or_else(|| go(flags, new))
            }
        };
        if ok(r) && !keep_old && !t.remove(old, old + round_up(old_len)) {
            table_full(libc::SYS_mremap);
        }
        hold(t, r, size, libc::SYS_mremap);
        r
    });
    r.unwrap_or_else(|| go(flags, new))
}

/// A move into the highest free gap, made by `go(at)`; None when no gap is free. A move
/// that fails gives its reservation back.
fn move_to_gap(t: &mut Ranges, size: usize, go: impl Fn(usize) -> i64) -> Option<i64> {
    let at = reserve(t, size)?;
    let r = go(at);
    if !ok(r) {
        release(t, at, size);
    }
    Some(r)
}

/// Gives back a reservation that a failed move did not use.
fn release(t: &mut Ranges, at: usize, size: usize) {
    sys_munmap(at, size); // the PROT_NONE mapping `reserve` just made
    t.remove(at, at + size);
}

/// A free gap of `size` bytes, held by a `PROT_NONE` mapping for `MREMAP_FIXED` to replace
/// (so a range the table wrongly thought free is never unmapped under a program).
fn reserve(t: &mut Ranges, size: usize) -> Option<usize> {
    let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE;
    let r = place_free(t, 0, size, libc::PROT_NONE, flags, -1, 0)?;
    ok(r).then_some(r as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Ranges {
        let all = Box::leak(Box::new([(0usize, 0usize); CAP]));
        Ranges { all, len: 0 }
    }

    #[test]
    fn places_top_down_and_reuses_freed_gaps() {
        let mut t = table();
        let a = t.place(PAGE).unwrap();
        assert_eq!(a, ARENA_HI - PAGE);
        assert!(t.add(a, a + PAGE));
        let b = t.place(2 * PAGE).unwrap();
        assert_eq!(b, a - 2 * PAGE);
        assert!(t.add(b, b + 2 * PAGE));
        assert_eq!(t.len, 1, "touching ranges coalesce");
        assert!(t.remove(b + PAGE, b + 2 * PAGE));
        assert_eq!(t.len, 2, "a hole splits the range");
        assert_eq!(t.place(PAGE), Some(b + PAGE), "the hole is the highest gap that fits");
        assert_eq!(t.place(2 * PAGE), Some(b - 2 * PAGE), "a bigger one goes below");
    }

    #[test]
    fn add_merges_overlaps_and_remove_trims() {
        let mut t = table();
        let base = ARENA_LO + 100 * PAGE;
        assert!(t.add(base, base + PAGE));
        assert!(t.add(base + 4 * PAGE, base + 5 * PAGE));
        assert!(t.add(base + 8 * PAGE, base + 9 * PAGE));
        assert!(t.add(base + PAGE / 2, base + 8 * PAGE));
        assert_eq!(&t.all[..t.len], &[(base, base + 9 * PAGE)]);
        assert!(t.remove(base, base + 2 * PAGE));
        assert!(t.remove(base + 8 * PAGE, base + 20 * PAGE));
        assert_eq!(&t.all[..t.len], &[(base + 2 * PAGE, base + 8 * PAGE)]);
        assert!(t.add(0, 10), "outside the arena: nothing to hold");
        assert_eq!(t.len, 1);
    }
}
