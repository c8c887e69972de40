//! epoll: interest lists of simulated sockets are kept here; waits become host polls (real
//! descriptors stay registered in the real epoll instance and are asked without blocking).
//! A wait watches the list as it was when it began, so a change another thread makes while
//! one waits (`epoll_ctl` adding a descriptor, or re-arming an `EPOLLONESHOT` one, as Erlang's
//! VM does for every event) wakes the waiter to look again (`OP_EPOLL_TOUCH`), as Linux's
//! waiter sees the change: before, it slept on until its deadline.

use crate::poll::{deadline_after_ms, poll_loop};
use crate::prelude::*;

const EPOLL_MAX: usize = 16;
const EPOLL_ENTRIES: usize = 64;

struct EpollSet {
    /// The epoll object (in the descriptor table) this set belongs to; -1 = free.
    obj: AtomicI64,
    /// Descriptors the shim does not simulate, registered in the real epoll instance.
    real: AtomicI64,
    fds: [AtomicI64; EPOLL_ENTRIES],
    events: [AtomicU32; EPOLL_ENTRIES],
    data: [AtomicU64; EPOLL_ENTRIES],
    /// `EPOLLET` entries: the event bits that may be reported (an edge is pending). Reporting
    /// a bit disarms it; reading, writing, accepting or connecting on the descriptor re-arms
    /// the bits that call can change (see [`rearm`]).
    armed: [AtomicU32; EPOLL_ENTRIES],
    /// `EPOLLET` entries: the read generation (plus one; 0: none) the host gave with the last
    /// report of the read side, which a new write into the object moves on.
    seen: [AtomicU64; EPOLL_ENTRIES],
    /// Threads of this process waiting on the set now.
    waiting: AtomicU32,
}

static EPOLLS: [EpollSet; EPOLL_MAX] = [const {
    EpollSet {
        obj: AtomicI64::new(-1),
        real: AtomicI64::new(0),
        fds: [const { AtomicI64::new(-1) }; EPOLL_ENTRIES],
        events: [const { AtomicU32::new(0) }; EPOLL_ENTRIES],
        data: [const { AtomicU64::new(0) }; EPOLL_ENTRIES],
        armed: [const { AtomicU32::new(0) }; EPOLL_ENTRIES],
        seen: [const { AtomicU64::new(0) }; EPOLL_ENTRIES],
        waiting: AtomicU32::new(0),
    }
}; EPOLL_MAX];

/// The host's name for `set`'s waits in this process (its index plus one).
fn tag(set: &EpollSet) -> i64 {
    EPOLLS.iter().position(|e| core::ptr::eq(e, set)).map_or(0, |i| i as i64 + 1)
}

/// After a change of `set`: wakes this process's threads waiting on it, to look again.
unsafe fn touch(set: &EpollSet) {
    if set.waiting.load(Ordering::Relaxed) > 0 {
        slot().args[0] = tag(set);
        handoff(OP_EPOLL_TOUCH);
    }
}

/// Readiness bits a read-side call (read, recv, accept) can change.
pub(crate) const READ_SIDE: u32 =
    (libc::EPOLLIN | libc::EPOLLRDNORM | libc::EPOLLRDHUP | libc::EPOLLPRI) as u32;
/// Readiness bits a write-side call (write, send, connect) can change.
pub(crate) const WRITE_SIDE: u32 = (libc::EPOLLOUT | libc::EPOLLWRNORM) as u32;

/// Edge-triggered emulation: `fd` was just read from or written to, so its readiness may have
/// changed and the next wait may report `bits` again. Linux reports a new edge when data
/// arrives or space frees up; re-arming on every call the program makes on the descriptor
/// reports at least every edge Linux would (at worst one more, which an edge-triggered program
/// answers with a read that finds nothing), and never loses one: a program that drained a
/// descriptor (`EAGAIN`) always made such a call.
pub(crate) fn rearm(fd: c_int, bits: u32) {
    for set in EPOLLS.iter().filter(|e| e.obj.load(Ordering::Relaxed) >= 0) {
        for (i, f) in set.fds.iter().enumerate() {
            if f.load(Ordering::Relaxed) == fd as i64 {
                set.armed[i].fetch_or(bits, Ordering::Relaxed);
            }
        }
    }
}

/// The interest list of the epoll instance `epfd` refers to (any copy of it).
fn epoll_set(epfd: c_int) -> Option<&'static EpollSet> {
    if fdtable::kind(epfd) != FdKind::Epoll {
        return None;
    }
    let obj = fdtable::obj(epfd) as i64;
    EPOLLS.iter().find(|e| e.obj.load(Ordering::Relaxed) == obj)
}

/// Forgets the interest list of the epoll instance `fd` (its last descriptor is being closed).
pub(crate) fn forget_epoll(fd: c_int) {
    if let Some(e) = epoll_set(fd) {
        e.obj.store(-1, Ordering::Relaxed);
    }
}

/// Takes `fd` out of every interest list: its last descriptor is being closed, which on Linux
/// removes it from every epoll set (a closed descriptor left in one made nginx's workers'
/// `epoll_wait(-1)` return 0 events, over and over).
pub(crate) fn forget_member(fd: c_int) {
    for set in EPOLLS.iter().filter(|e| e.obj.load(Ordering::Relaxed) >= 0) {
        for f in &set.fds {
            if f.load(Ordering::Relaxed) == fd as i64 {
                f.store(-1, Ordering::Relaxed);
            }
        }
    }
}

fn register_epoll(fd: c_int) {
    if !fdtable::fits(fd) {
        return;
    }
    if let Some(e) = EPOLLS.iter().find(|e| e.obj.load(Ordering::Relaxed) < 0) {
        for f in &e.fds {
            f.store(-1, Ordering::Relaxed);
        }
        fdtable::open_epoll(fd);
        e.obj.store(fdtable::obj(fd) as i64, Ordering::Relaxed);
        e.real.store(0, Ordering::Relaxed);
    }
}

#[no_mangle]
pub unsafe extern "C" fn epoll_create(size: c_int) -> c_int {
    let fd = real!(epoll_create: fn(c_int) -> c_int)(size);
    if let Some(_g) = Guard::enter() {
        if active() {
            register_epoll(fd);
        }
    }
    fd
}

#[no_mangle]
pub unsafe extern "C" fn epoll_create1(flags: c_int) -> c_int {
    let fd = real!(epoll_create1: fn(c_int) -> c_int)(flags);
    if let Some(_g) = Guard::enter() {
        if active() {
            register_epoll(fd);
        }
    }
    fd
}

#[no_mangle]
pub unsafe extern "C" fn epoll_ctl(
    epfd: c_int,
    op: c_int,
    fd: c_int,
    ev: *mut libc::epoll_event,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            crate::execfds::refuse_stale(epfd, b"epoll_ctl()");
            crate::execfds::refuse_stale(fd, b"epoll_ctl()");
        }
        if active() && fdtable::host_polled(fd) {
            let Some(set) = epoll_set(epfd) else {
                set_errno(libc::EBADF);
                return -1;
            };
            let pos = set.fds.iter().position(|f| f.load(Ordering::Relaxed) == fd as i64);
            match op {
                libc::EPOLL_CTL_ADD => {
                    if pos.is_some() {
                        set_errno(libc::EEXIST);
                        return -1;
                    }
                    let Some(free) = set.fds.iter().position(|f| f.load(Ordering::Relaxed) < 0)
                    else {
                        set_errno(libc::ENOSPC);
                        return -1;
                    };
                    set.fds[free].store(fd as i64, Ordering::Relaxed);
                    set.events[free].store((*ev).events, Ordering::Relaxed);
                    set.data[free].store((*ev).u64, Ordering::Relaxed);
                    set.armed[free].store(u32::MAX, Ordering::Relaxed);
                    set.seen[free].store(0, Ordering::Relaxed);
                }
                libc::EPOLL_CTL_MOD | libc::EPOLL_CTL_DEL => {
                    let Some(i) = pos else {
                        set_errno(libc::ENOENT);
                        return -1;
                    };
                    if op == libc::EPOLL_CTL_DEL {
                        set.fds[i].store(-1, Ordering::Relaxed);
                    } else {
                        set.events[i].store((*ev).events, Ordering::Relaxed);
                        set.data[i].store((*ev).u64, Ordering::Relaxed);
                        set.armed[i].store(u32::MAX, Ordering::Relaxed);
                        set.seen[i].store(0, Ordering::Relaxed);
                    }
                }
                _ => {
                    set_errno(libc::EINVAL);
                    return -1;
                }
            }
            touch(set);
            return 0;
        }
    }
    let r = real!(epoll_ctl: fn(c_int, c_int, c_int, *mut libc::epoll_event) -> c_int)(
        epfd, op, fd, ev,
    );
    if r == 0 {
        if let Some(set) = epoll_set(epfd) {
            match op {
                libc::EPOLL_CTL_ADD => set.real.fetch_add(1, Ordering::Relaxed),
                libc::EPOLL_CTL_DEL => set.real.fetch_sub(1, Ordering::Relaxed),
                _ => 0,
            };
        }
    }
    r
}

/// The entries of `set` a wait asks the host about, as `slot().polls[..n]`: `idx[k]` is entry
/// `k`'s index in the set, and `data` carries its read edge (see `crate::proto::OP_POLL`): an
/// edge-triggered entry whose read side was reported and not read since asks for it again,
/// but only a write into the object since that report (a new edge on Linux, which wakes an
/// `EPOLLET` waiter on every write: mio's waker, an eventfd tokio never reads) makes it count.
unsafe fn ask(set: &EpollSet, idx: &mut [usize; EPOLL_ENTRIES]) -> usize {
    let s = slot();
    let mut n = 0;
    for i in 0..EPOLL_ENTRIES {
        let fd = set.fds[i].load(Ordering::Relaxed);
        let mut ev = set.events[i].load(Ordering::Relaxed);
        let mut after = 0u64;
        if ev & libc::EPOLLET as u32 != 0 {
            // Only pending edges can end the wait (a level that was reported stays quiet).
            let armed = set.armed[i].load(Ordering::Relaxed);
            let seen = set.seen[i].load(Ordering::Relaxed);
            let again = if seen != 0 { READ_SIDE } else { 0 };
            ev &= armed | again | !0xffff;
            if ev & READ_SIDE & !armed != 0 {
                after = seen;
            }
            if ev & 0xffff == 0 {
                continue;
            }
        }
        if fd >= 0 {
            let events = crate::poll::norm_in((ev & 0xffff) as u16 as i16);
            s.polls[n] = PollEntry { fd: fd as i32, events, revents: 0 };
            s.data[n * 8..n * 8 + 8].copy_from_slice(&after.to_le_bytes());
            idx[n] = i;
            n += 1;
        }
    }
    n
}

unsafe fn epoll_common(
    epfd: c_int,
    out: *mut libc::epoll_event,
    max: c_int,
    deadline: u64,
) -> c_int {
    let Some(set) = epoll_set(epfd) else {
        set_errno(libc::EBADF);
        return -1;
    };
    if max <= 0 {
        set_errno(libc::EINVAL);
        return -1;
    }
    let mut idx = [0usize; EPOLL_ENTRIES];
    let n = ask(set, &mut idx);
    // Real descriptors live in the real epoll instance: ask it without blocking; their events
    // come first in `out`, the simulated ones after.
    let has_real = set.real.load(Ordering::Relaxed) > 0;
    let mut k = 0;
    set.waiting.fetch_add(1, Ordering::Relaxed);
    crate::poll::EPOLL_TAG.with(|t| t.set(tag(set)));
    let r = poll_loop(n, deadline, has_real, true, || {
        let args = [epfd as i64, out as i64, max as i64, 0, 0, 0];
        k = sys::raw_ret(libc::SYS_epoll_wait, args).max(0) as usize;
        k
    });
    crate::poll::EPOLL_TAG.with(|t| t.set(0));
    set.waiting.fetch_sub(1, Ordering::Relaxed);
    if r == TOUCHED {
        // The list changed while this thread waited (also with real descriptors in it, whose
        // loop would otherwise wait again on the old list): look at the new one.
        return epoll_common(epfd, out, max, deadline);
    }
    if r < 0 {
        return ret_errno(r) as c_int;
    }
    let k = report(set, &idx[..n], out, max as usize, k);
    if k == 0 && crate::time::now_ns() < deadline {
        // Woken only by descriptors that are gone: wait on for the others.
        return epoll_common(epfd, out, max, deadline);
    }
    k as c_int
}

/// Puts the host's answer for the entries `idx` of `set` into `out` after the `k` real events
/// already there (at most `max` in all); answers the total. An edge-triggered entry's edges
/// are spent only by a report.
unsafe fn report(
    set: &EpollSet,
    idx: &[usize],
    out: *mut libc::epoll_event,
    max: usize,
    mut k: usize,
) -> usize {
    let s = slot();
    for (j, (entry, &i)) in s.polls[..idx.len()].iter().zip(idx).enumerate() {
        let asked = set.events[i].load(Ordering::Relaxed) as u16 as i16;
        let mut revents = crate::poll::norm_out(asked, entry.revents) as u16 as u32;
        if set.fds[i].load(Ordering::Relaxed) != entry.fd as i64 {
            continue; // taken out of the list (or replaced) while this thread waited
        }
        if revents & libc::POLLNVAL as u32 != 0 {
            // No longer open (closed behind the shim's back): Linux would have dropped it.
            set.fds[i].store(-1, Ordering::Relaxed);
            continue;
        }
        if k >= max {
            break;
        }
        let generation = u64::from_le_bytes(s.data[j * 8..j * 8 + 8].try_into().unwrap_or([0; 8]));
        let edge = set.events[i].load(Ordering::Relaxed) & libc::EPOLLET as u32 != 0;
        if edge {
            // A read side asked for (armed, or after a report: the host counted it only after
            // a new write) that is ready is a new edge.
            let asked_now = entry.events as u16 as u32 & READ_SIDE;
            set.armed[i].fetch_or(revents & asked_now, Ordering::Relaxed);
            // An error or hang-up is reported whether or not its edge was armed.
            let always = (libc::EPOLLERR | libc::EPOLLHUP) as u32;
            revents &= set.armed[i].fetch_and(!revents, Ordering::Relaxed) | always;
        }
        if revents != 0 {
            if edge && revents & READ_SIDE != 0 {
                set.seen[i].store(generation, Ordering::Relaxed);
            }
            let e = &mut *out.add(k);
            e.events = revents;
            e.u64 = set.data[i].load(Ordering::Relaxed);
            if set.events[i].load(Ordering::Relaxed) & libc::EPOLLONESHOT as u32 != 0 {
                set.events[i].store(0, Ordering::Relaxed);
            }
            k += 1;
        }
    }
    k
}

#[no_mangle]
pub unsafe extern "C" fn epoll_wait(
    epfd: c_int,
    ev: *mut libc::epoll_event,
    max: c_int,
    timeout: c_int,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            crate::execfds::refuse_stale(epfd, b"epoll_wait()");
            return epoll_common(epfd, ev, max, deadline_after_ms(timeout));
        }
    }
    sys::raw(libc::SYS_epoll_wait, [epfd as i64, ev as i64, max as i64, timeout as i64, 0, 0])
        as c_int
}

#[no_mangle]
pub unsafe extern "C" fn epoll_pwait(
    epfd: c_int,
    ev: *mut libc::epoll_event,
    max: c_int,
    timeout: c_int,
    sigmask: *const libc::sigset_t,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            crate::execfds::refuse_stale(epfd, b"epoll_pwait()");
            return epoll_common(epfd, ev, max, deadline_after_ms(timeout));
        }
    }
    sys::raw(
        libc::SYS_epoll_pwait,
        [epfd as i64, ev as i64, max as i64, timeout as i64, sigmask as i64, 8],
    ) as c_int
}
