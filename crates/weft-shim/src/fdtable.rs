//! The descriptor table: the one place that knows what an fd of this process is — a simulated
//! UDP socket, a simulated stream, a process-local object in the host (pipe end, eventfd,
//! socketpair end), an epoll instance, a recorded regular file, a file of the simulated disk
//! (under a data directory), or something real the shim
//! does not simulate — and the state the shim keeps for it (the non-blocking
//! flag and `SO_RCVTIMEO`). Indexed by fd number up to [`FD_MAX`]; a descriptor beyond it is
//! never simulated.
//!
//! Each socket or epoll instance is an object with a number; `dup` and friends make another
//! descriptor refer to the same object, and what Linux keeps per open file description or per
//! socket (`O_NONBLOCK`, `SO_RCVTIMEO`) is then set on every copy at once.

use core::ffi::c_int;
use core::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};

/// Descriptors numbered at or above this are never simulated.
pub(crate) const FD_MAX: usize = 4096;

const SIM: u8 = 1;
const NONBLOCK: u8 = 2;
const EPOLL: u8 = 4;
const FILE: u8 = 8;
const STREAM: u8 = 16;
/// Another descriptor may refer to the same object (it was duplicated).
const SHARED: u8 = 32;
/// A process-local object kept by the host (with `SIM`).
const LOCAL: u8 = 64;
/// A timerfd whose timer the host keeps (without `SIM`); with `STREAM`, a signalfd.
const TIMERFD: u8 = 128;
/// An epoll instance, timerfd or signalfd the image before an `exec` left open: its state
/// stayed there (no object has both flags otherwise).
const STALE: u8 = EPOLL | TIMERFD;

/// Per-fd flags (indexed by fd).
static FDS: [AtomicU8; FD_MAX] = [const { AtomicU8::new(0) }; FD_MAX];
/// SO_RCVTIMEO of simulated sockets, ns (0 = none).
static RCVTIMEO: [AtomicU64; FD_MAX] = [const { AtomicU64::new(0) }; FD_MAX];
/// The `F_SETOWN` owner of simulated descriptors (0 = none).
static OWNER: [core::sync::atomic::AtomicI32; FD_MAX] =
    [const { core::sync::atomic::AtomicI32::new(0) }; FD_MAX];
/// The object each socket or epoll descriptor refers to (0 = none).
static OBJ: [AtomicU32; FD_MAX] = [const { AtomicU32::new(0) }; FD_MAX];
/// The next object number.
static NEXT_OBJ: AtomicU32 = AtomicU32::new(1);

/// What an fd refers to, as far as the shim is concerned.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum FdKind {
    /// Not simulated: passed to the kernel (pipes, eventfds, unrecorded files, closed fds).
    Real,
    /// A simulated UDP socket.
    SimUdp,
    /// A simulated TCP-like stream (listening or connected).
    SimStream,
    /// A pipe end, an eventfd or a socketpair end kept by the host: a byte stream (an eventfd
    /// reads and writes 8-byte counts), not an IP socket.
    SimLocal,
    /// An epoll instance whose interest list of simulated sockets the shim keeps.
    Epoll,
    /// A regular file whose operations are recorded in the trace.
    File,
    /// A file or directory under a data directory, on the host's simulated disk (a real
    /// `/dev/null` holds the number).
    Disk,
    /// A timerfd whose timer the host keeps (a real, never armed timerfd holds the number).
    Timerfd,
    /// A signalfd whose mask the host keeps (a real one with an empty mask holds the number).
    Signalfd,
    /// An epoll instance, timerfd or signalfd left open across `exec`: the number is open (for
    /// real too), but what it was stayed with the old image ([`crate::execfds`]); only closing
    /// it is simulated.
    Stale,
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

fn new_obj(fd: c_int) {
    OBJ[fd as usize].store(NEXT_OBJ.fetch_add(1, Ordering::Relaxed), Ordering::Relaxed);
}

/// Calls `f` on `fd` and on every other descriptor referring to its object.
fn each_copy(fd: c_int, f: impl Fn(usize)) {
    if !fits(fd) {
        return;
    }
    if flags(fd) & SHARED == 0 {
        return f(fd as usize);
    }
    let obj = OBJ[fd as usize].load(Ordering::Relaxed);
    for i in 0..FD_MAX {
        if OBJ[i].load(Ordering::Relaxed) == obj && FDS[i].load(Ordering::Relaxed) != 0 {
            f(i);
        }
    }
}

/// True when `fd` has a row in the table.
pub(crate) fn fits(fd: c_int) -> bool {
    fd >= 0 && (fd as usize) < FD_MAX
}

/// What `fd` is.
pub(crate) fn kind(fd: c_int) -> FdKind {
    let f = flags(fd);
    if f & STALE == STALE {
        FdKind::Stale
    } else if f & SIM != 0 {
        if f & LOCAL != 0 {
            FdKind::SimLocal
        } else if f & STREAM != 0 {
            FdKind::SimStream
        } else {
            FdKind::SimUdp
        }
    } else if f & EPOLL != 0 {
        FdKind::Epoll
    } else if f & FILE != 0 && f & LOCAL != 0 {
        FdKind::Disk
    } else if f & FILE != 0 {
        FdKind::File
    } else if f & TIMERFD != 0 {
        if f & STREAM != 0 {
            FdKind::Signalfd
        } else {
            FdKind::Timerfd
        }
    } else {
        FdKind::Real
    }
}

/// True when the host simulates `fd` (a socket or a process-local object).
pub(crate) fn is_sim(fd: c_int) -> bool {
    flags(fd) & SIM != 0
}

/// True when `fd` is a simulated IP socket (UDP or stream), which the socket calls serve.
pub(crate) fn is_inet(fd: c_int) -> bool {
    flags(fd) & (SIM | LOCAL) == SIM
}

/// True when `fd` is read and written as a byte stream (a stream socket or a local object).
pub(crate) fn is_bytes(fd: c_int) -> bool {
    matches!(kind(fd), FdKind::SimStream | FdKind::SimLocal)
}

/// True when the host answers for `fd` in poll/select/epoll (a simulated object or timerfd).
pub(crate) fn host_polled(fd: c_int) -> bool {
    flags(fd) & (SIM | TIMERFD) != 0
}

/// Records a new timerfd at `fd` (callers check [`fits`]).
pub(crate) fn open_timerfd(fd: c_int, nonblock: bool) {
    set_flags(fd, TIMERFD | if nonblock { NONBLOCK } else { 0 });
}

/// Records a new signalfd at `fd` (callers check [`fits`]).
pub(crate) fn open_signalfd(fd: c_int, nonblock: bool) {
    set_flags(fd, TIMERFD | STREAM | if nonblock { NONBLOCK } else { 0 });
}

/// True when the simulated socket (or timerfd, signalfd) `fd` is non-blocking.
pub(crate) fn nonblocking(fd: c_int) -> bool {
    flags(fd) & NONBLOCK != 0
}

/// Sets or clears the non-blocking flag of `fd` and its copies (`fcntl(F_SETFL)`, `FIONBIO`).
pub(crate) fn set_nonblocking(fd: c_int, on: bool) {
    each_copy(fd, |i| {
        let f = FDS[i].load(Ordering::Relaxed) & !NONBLOCK;
        FDS[i].store(f | if on { NONBLOCK } else { 0 }, Ordering::Relaxed);
    });
}

/// Records a new simulated socket at `fd` (callers check [`fits`]); no receive timeout.
pub(crate) fn open_socket(fd: c_int, stream: bool, nonblock: bool) {
    let nb = if nonblock { NONBLOCK } else { 0 };
    set_flags(fd, SIM | nb | if stream { STREAM } else { 0 });
    RCVTIMEO[fd as usize].store(0, Ordering::Relaxed);
    OWNER[fd as usize].store(0, Ordering::Relaxed);
    new_obj(fd);
}

/// Records a new process-local object at `fd` (callers check [`fits`]); no receive timeout.
pub(crate) fn open_local(fd: c_int, nonblock: bool) {
    set_flags(fd, SIM | LOCAL | if nonblock { NONBLOCK } else { 0 });
    RCVTIMEO[fd as usize].store(0, Ordering::Relaxed);
    OWNER[fd as usize].store(0, Ordering::Relaxed);
    new_obj(fd);
}

/// Records a new epoll instance at `fd` (callers check [`fits`]).
pub(crate) fn open_epoll(fd: c_int) {
    set_flags(fd, EPOLL);
    new_obj(fd);
}

/// Marks `fd` as left open across `exec` with state the new image does not have (callers
/// check [`fits`]).
pub(crate) fn open_stale(fd: c_int) {
    set_flags(fd, STALE);
    OBJ[fd as usize].store(0, Ordering::Relaxed);
}

/// The object `fd` refers to (0: none).
pub(crate) fn obj(fd: c_int) -> u32 {
    if fits(fd) {
        OBJ[fd as usize].load(Ordering::Relaxed)
    } else {
        0
    }
}

/// Records `new` (forgotten already, and in the table) as a copy of `old` (`dup` and
/// friends): the same kind, object and options.
pub(crate) fn dup(old: c_int, new: c_int) {
    if !fits(old) || !fits(new) {
        return;
    }
    let f = flags(old) | SHARED;
    set_flags(old, f);
    set_flags(new, f);
    OBJ[new as usize].store(obj(old), Ordering::Relaxed);
    RCVTIMEO[new as usize].store(rcvtimeo_ns(old), Ordering::Relaxed);
}

/// How many descriptors refer to the object `fd` refers to (1 when it was never duplicated).
pub(crate) fn copies(fd: c_int) -> usize {
    let n = core::cell::Cell::new(0);
    each_copy(fd, |_| n.set(n.get() + 1));
    n.get()
}

/// Records a newly opened `fd`: a recorded regular file when `record`, else real (a reused fd
/// number, closed behind the shim's back, starts afresh).
pub(crate) fn open_file(fd: c_int, record: bool) {
    set_flags(fd, if record { FILE } else { 0 });
}

/// Records a newly opened `fd` as a file of the simulated disk (callers check [`fits`]).
pub(crate) fn open_disk(fd: c_int) {
    set_flags(fd, FILE | LOCAL);
    new_obj(fd);
}

/// Forgets `fd` (it is being closed or reused); answers what it was.
pub(crate) fn forget(fd: c_int) -> FdKind {
    let k = kind(fd);
    set_flags(fd, 0);
    if fits(fd) {
        OBJ[fd as usize].store(0, Ordering::Relaxed);
    }
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

/// Sets `SO_RCVTIMEO` of `fd`'s socket in ns (0 = none).
pub(crate) fn set_rcvtimeo_ns(fd: c_int, ns: u64) {
    each_copy(fd, |i| RCVTIMEO[i].store(ns, Ordering::Relaxed));
}

/// The `F_SETOWN` owner of `fd` (0 = none): kept, never used, since no simulated descriptor
/// raises `SIGIO`.
pub(crate) fn owner(fd: c_int) -> i32 {
    if fits(fd) {
        OWNER[fd as usize].load(Ordering::Relaxed)
    } else {
        0
    }
}

/// Sets the `F_SETOWN` owner of `fd` and its copies.
pub(crate) fn set_owner(fd: c_int, pid: i32) {
    each_copy(fd, |i| OWNER[i].store(pid, Ordering::Relaxed));
}

/// What the table keeps for one descriptor, as `exec` carries it into the new image
/// ([`crate::execfds`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Row {
    pub(crate) flags: u8,
    pub(crate) obj: u32,
    pub(crate) rcvtimeo_ns: u64,
    pub(crate) owner: i32,
}

/// The row of `fd`, or `None` when it has none (a real or closed descriptor).
pub(crate) fn row(fd: c_int) -> Option<Row> {
    let f = flags(fd);
    (f != 0).then(|| Row { flags: f, obj: obj(fd), rcvtimeo_ns: rcvtimeo_ns(fd), owner: owner(fd) })
}

/// Puts back the row `fd` had in the image before `exec` (callers check [`fits`]); objects
/// made later get higher numbers than any restored one.
pub(crate) fn restore(fd: c_int, row: Row) {
    set_flags(fd, row.flags);
    let i = fd as usize;
    OBJ[i].store(row.obj, Ordering::Relaxed);
    RCVTIMEO[i].store(row.rcvtimeo_ns, Ordering::Relaxed);
    OWNER[i].store(row.owner, Ordering::Relaxed);
    NEXT_OBJ.fetch_max(row.obj.saturating_add(1), Ordering::Relaxed);
}
