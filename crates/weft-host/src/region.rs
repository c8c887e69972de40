//! The shared-memory region the host and every shim share: a memfd, mapped once here and
//! inherited by each child at a fixed fd number.

use crate::proto::{slot_offset, Header, Slot, MAGIC, MAX_SLOTS, REGION_SIZE, TURN_IDLE};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::Ordering;

pub(crate) struct Region {
    base: *mut u8,
    fd: OwnedFd,
}

// SAFETY: the region is plain shared memory; all cross-process fields are atomics or are only
// touched by whichever side holds the baton.
unsafe impl Send for Region {}

impl Region {
    pub(crate) fn new() -> io::Result<Region> {
        // SAFETY: memfd_create with a NUL-terminated name; the result is checked.
        let raw = unsafe { libc::memfd_create(c"weft-region".as_ptr(), libc::MFD_CLOEXEC) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a fresh fd we own.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: sizing our own memfd.
        if unsafe { libc::ftruncate(fd.as_raw_fd(), REGION_SIZE as libc::off_t) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: mapping REGION_SIZE bytes of the memfd just sized; checked for failure.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                REGION_SIZE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let region = Region { base: base as *mut u8, fd };
        // SAFETY: the mapping is fresh (zeroed) and large enough for the header.
        unsafe { (*(region.base as *mut Header)).magic = MAGIC };
        Ok(region)
    }

    pub(crate) fn fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }

    pub(crate) fn header(&self) -> &Header {
        // SAFETY: the header lives at offset 0 for the life of the mapping.
        unsafe { &*(self.base as *const Header) }
    }

    /// How long processes may spin waiting for an answer (`Header::spin`).
    pub(crate) fn set_spin(&self, iterations: u32) {
        self.header().spin.store(iterations, Ordering::Release);
    }

    pub(crate) fn set_now(&self, ns: u64) {
        self.header().now_ns.store(ns, Ordering::Release);
    }

    /// Raw pointer to slot `i`. Callers touch non-atomic fields only while the slot's thread
    /// is waiting for the baton (turn != TURN_THREAD) or not started.
    pub(crate) fn slot(&self, i: usize) -> *mut Slot {
        assert!(i < MAX_SLOTS, "slot {i} out of range");
        // SAFETY: slot_offset(i) + size_of::<Slot>() <= REGION_SIZE for i < MAX_SLOTS.
        unsafe { self.base.add(slot_offset(i)) as *mut Slot }
    }

    /// Resets slot `i` for a new process.
    pub(crate) fn reset_slot(&self, i: usize) {
        let s = self.slot(i);
        // SAFETY: no process uses slot `i` while it is being reset.
        unsafe {
            (*s).turn.store(TURN_IDLE, Ordering::Release);
            (*s).op = 0;
            (*s).ret = 0;
            (*s).len = 0;
            (*s).nsig = 0;
        }
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: unmapping our own mapping; nothing borrows it past the Region.
        unsafe { libc::munmap(self.base as *mut libc::c_void, REGION_SIZE) };
    }
}
