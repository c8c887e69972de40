//! The descriptor table: the one place that knows what an fd of this process is — a simulated
//! UDP socket, a simulated stream, an epoll instance, a recorded regular file, or something
//! real the shim does not simulate — and the per-descriptor state the shim keeps for it (the
//! non-blocking flag and `SO_RCVTIMEO`). Indexed by fd number up to [`FD_MAX`]; a descriptor
//! beyond it is never simulated.

use core::ffi::c_int;
use core::sync::atomic::{AtomicU64, AtomicU8, Ordering};

/// Descriptors numbered at or above this are never simulated.
pub(crate) const FD_MAX: usize = 4096;

const SIM: u8 = 1;
const NONBLOCK: u8 = 2;
const EPOLL: u8 = 4;
const FILE: u8 = 8;
const STREAM: u8 = 16;

/// Per-fd flags (indexed by fd).
static FDS: [AtomicU8; FD_MAX] = [const { AtomicU8::new(0) }; FD_MAX];
/// SO_RCVTIMEO of simulated sockets, ns (0 = none).
static RCVTIMEO: [AtomicU64; FD_MAX] = [const { AtomicU64::new(0) }; FD_MAX];

/// What an fd refers to, as far as the shim is concerned.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum FdKind {
    /// Not simulated: passed to the kernel (pipes, eventfds, unrecorded files, closed fds).
    Real,
    /// A simulated UDP socket.
    SimUdp,
    /// A simulated TCP-like stream (listening or connected).
    SimStream,
    /// An epoll instance whose interest list of simulated sockets the shim keeps.
    Epoll,
    /// A regular file whose operations are recorded in the trace.
    File,
}

fn flags(fd: c_int) -> u8 {
    if fits(fd) {
        FDS[fd as usize].load(Ordering::Relaxed)
    } else {
        0
    }
}

fn set_flags(fd: c_int, f: u8) {
    if fits(fd) {
        FDS[fd as usize].store(f, Ordering::Relaxed);
    }
}

/// True when `fd` has a row in the table.
pub(crate) fn fits(fd: c_int) -> bool {
    fd >= 0 && (fd as usize) < FD_MAX
}

/// What `fd` is.
pub(crate) fn kind(fd: c_int) -> FdKind {
    let f = flags(fd);
    if f & SIM != 0 {
        if f & STREAM != 0 {
            FdKind::SimStream
        } else {
            FdKind::SimUdp
        }
    } else if f & EPOLL != 0 {
        FdKind::Epoll
    } else if f & FILE != 0 {
        FdKind::File
    } else {
        FdKind::Real
    }
}

/// True when `fd` is a simulated socket (UDP or stream).
pub(crate) fn is_sim(fd: c_int) -> bool {
    flags(fd) & SIM != 0
}

/// True when the simulated socket `fd` is non-blocking.
pub(crate) fn nonblocking(fd: c_int) -> bool {
    flags(fd) & NONBLOCK != 0
}

/// Sets or clears the non-blocking flag of `fd` (`fcntl(F_SETFL)`, `FIONBIO`).
pub(crate) fn set_nonblocking(fd: c_int, on: bool) {
    let f = flags(fd) & !NONBLOCK;
    set_flags(fd, f | if on { NONBLOCK } else { 0 });
}

/// Records a new simulated socket at `fd` (callers check [`fits`]); no receive timeout.
pub(crate) fn open_socket(fd: c_int, stream: bool, nonblock: bool) {
    let nb = if nonblock { NONBLOCK } else { 0 };
    set_flags(fd, SIM | nb | if stream { STREAM } else { 0 });
    RCVTIMEO[fd as usize].store(0, Ordering::Relaxed);
}

/// Records a new epoll instance at `fd`.
pub(crate) fn open_epoll(fd: c_int) {
    set_flags(fd, EPOLL);
}

/// Records a newly opened `fd`: a recorded regular file when `record`, else real (a reused fd
/// number, closed behind the shim's back, starts afresh).
pub(crate) fn open_file(fd: c_int, record: bool) {
    set_flags(fd, if record { FILE } else { 0 });
}

/// Forgets `fd` (it is being closed or reused); answers what it was.
pub(crate) fn forget(fd: c_int) -> FdKind {
    let k = kind(fd);
    set_flags(fd, 0);
    k
}

/// `SO_RCVTIMEO` of `fd` in ns (0 = none).
pub(crate) fn rcvtimeo_ns(fd: c_int) -> u64 {
    if fits(fd) {
        RCVTIMEO[fd as usize].load(Ordering::Relaxed)
    } else {
        0
    }
}

/// Sets `SO_RCVTIMEO` of `fd` in ns (0 = none).
pub(crate) fn set_rcvtimeo_ns(fd: c_int, ns: u64) {
    if fits(fd) {
        RCVTIMEO[fd as usize].store(ns, Ordering::Relaxed);
    }
}
