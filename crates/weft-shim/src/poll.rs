//! `poll`, `ppoll`, `select` and `pselect`: simulated descriptors wait in the host, the others
//! are polled for real without blocking; also the shared wait loop `epoll` uses.

use crate::prelude::*;
use crate::time::{now_ns, ts_ns};

thread_local! {
    /// The epoll set the thread's next host poll waits for (0: a poll or select), which a
    /// change of that set by another thread ends early (`epoll::touch`).
    pub(crate) static EPOLL_TAG: core::cell::Cell<i64> = const { core::cell::Cell::new(0) };
}

/// Asks the host to wait on `slot().polls[..count]` until one is ready or `deadline` (absolute
/// virtual ns, u64::MAX = never); `write`: the wait is a blocking write's, for room (the host
/// names it so). Answers the number of ready entries.
fn poll_host(count: usize, deadline: u64, write: bool) -> i64 {
    let s = slot();
    s.args[0] = count as i64;
    s.args[1] = deadline as i64;
    s.args[4] = write as i64;
    s.args[5] = EPOLL_TAG.with(|t| t.get());
    // SAFETY: callers check `active()` and hold the guard.
    unsafe { handoff(OP_POLL) }
}

/// Waits in the host until the simulated `fd` is writable (or in error), for a blocking write
/// that found no room; answers 0, or -errno (a signal interrupted the wait).
///
/// # Safety
/// Active, inside a hook (the guard held).
pub(crate) unsafe fn await_room(fd: c_int) -> i64 {
    let s = slot();
    s.polls[0] = PollEntry { fd, events: libc::POLLOUT, revents: 0 };
    s.args[2] = 0; // no real descriptors to look at again
    s.args[3] = 0;
    poll_host(1, u64::MAX, true).min(0)
}

pub(crate) fn deadline_after_ms(ms: c_int) -> u64 {
    if ms < 0 {
        u64::MAX
    } else {
        now_ns().saturating_add(ms as u64 * 1_000_000)
    }
}

fn deadline_after_ts(ts: *const libc::timespec) -> u64 {
    if ts.is_null() {
        u64::MAX
    } else {
        // SAFETY: non-null pointer supplied by the caller as a timespec.
        now_ns().saturating_add(ts_ns(unsafe { &*ts }))
    }
}

/// Polls descriptors the shim does not simulate (pipes, eventfds, files…) without blocking;
/// answers how many are ready.
unsafe fn real_poll_now(fds: &mut [libc::pollfd]) -> usize {
    if fds.is_empty() {
        return 0;
    }
    let ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    let args = [fds.as_mut_ptr() as i64, fds.len() as i64, &ts as *const _ as i64, 0, 8, 0];
    let r = sys::raw_ret(libc::SYS_ppoll, args);
    r.max(0) as usize
}

/// Waits in the host for the simulated entries in `slot().polls[..count]` until one is ready
/// or `deadline`, while also watching real descriptors through `check_real` (called before
/// every hand-off; answers how many are ready). Only simulated threads can make a real
/// descriptor of this process ready (a pipe, an eventfd), so the host wakes a thread that has
/// real descriptors whenever another thread of its process has run, and it looks again.
/// Answers the total ready, or -errno. A signal the host handed over with an answer (its
/// handler runs when the hook returns) ends a wait that found nothing with `EINTR`, as on
/// Linux (`interruptible`; a `read` waiting here does not end so): looking again instead left
/// a self-pipe's handler unrun (Python's `signal.set_wakeup_fd`: multiprocessing's forkserver
/// never saw its children end).
pub(crate) unsafe fn poll_loop(
    count: usize,
    deadline: u64,
    has_real: bool,
    interruptible: bool,
    mut check_real: impl FnMut() -> usize,
) -> i64 {
    let mut again = false;
    loop {
        let real = if has_real { check_real() } else { 0 };
        slot().args[2] = has_real as i64;
        slot().args[3] = (again && real == 0) as i64;
        again = true;
        let r = poll_host(count, if real > 0 { now_ns() } else { deadline }, false);
        if r < 0 {
            return r;
        }
        let total = r as usize + real;
        if total > 0 || !has_real || now_ns() >= deadline {
            return total as i64;
        }
        if interruptible && crate::signals::queued() {
            return -(libc::EINTR as i64);
        }
    }
}

/// Before a blocking `read`/`write` of a real descriptor (a pipe between the process's threads
/// or to a child): waits in the host, as a poll would, until the kernel call cannot block, so
/// the thread never sleeps in the kernel holding the baton. Non-blocking descriptors and
/// regular files (always ready) cost one non-blocking poll.
pub(crate) unsafe fn await_real(fd: c_int, events: i16) {
    let mut p = [libc::pollfd { fd, events, revents: 0 }];
    if fd < 0 || real_poll_now(&mut p) > 0 {
        return;
    }
    let fl = sys::raw(libc::SYS_fcntl, [fd as i64, libc::F_GETFL as i64, 0, 0, 0, 0]);
    if fl < 0 || fl & libc::O_NONBLOCK as i64 != 0 {
        return;
    }
    poll_loop(0, u64::MAX, true, false, || real_poll_now(&mut p));
}

/// What the host is asked to watch for: `POLLRDNORM` and `POLLWRNORM` (varnish polls a
/// connecting socket for `POLLWRNORM`) are `POLLIN` and `POLLOUT` on sockets, pipes and the
/// other simulated descriptors, as on Linux.
pub(crate) fn norm_in(events: i16) -> i16 {
    let mut ev = events;
    if ev & libc::POLLRDNORM != 0 {
        ev |= libc::POLLIN;
    }
    if ev & libc::POLLWRNORM != 0 {
        ev |= libc::POLLOUT;
    }
    ev
}

/// What the program is answered: the `*NORM` bits beside `POLLIN`/`POLLOUT`, and only the
/// conditions it asked for, besides those poll always reports.
pub(crate) fn norm_out(asked: i16, got: i16) -> i16 {
    let mut re = got;
    if re & libc::POLLIN != 0 {
        re |= libc::POLLRDNORM;
    }
    if re & libc::POLLOUT != 0 {
        re |= libc::POLLWRNORM;
    }
    re & (asked | libc::POLLERR | libc::POLLHUP | libc::POLLNVAL)
}

unsafe fn poll_common(fds: *mut libc::pollfd, n: libc::nfds_t, deadline: u64) -> c_int {
    let n = n as usize;
    if n > POLL_MAX {
        set_errno(libc::EINVAL);
        return -1;
    }
    let s = slot();
    let mut real = [libc::pollfd { fd: -1, events: 0, revents: 0 }; POLL_MAX];
    let mut real_at = [0usize; POLL_MAX];
    let mut nreal = 0;
    for i in 0..n {
        let p = &*fds.add(i);
        crate::execfds::refuse_stale(p.fd, b"poll()");
        let sim = fdtable::host_polled(p.fd);
        let fd = if sim { p.fd } else { -1 };
        s.polls[i] = PollEntry { fd, events: norm_in(p.events), revents: 0 };
        if !sim && p.fd >= 0 {
            real[nreal] = libc::pollfd { fd: p.fd, events: p.events, revents: 0 };
            real_at[nreal] = i;
            nreal += 1;
        }
    }
    let r = poll_loop(n, deadline, nreal > 0, true, || real_poll_now(&mut real[..nreal]));
    if r < 0 {
        return ret_errno(r) as c_int;
    }
    let s = slot();
    for i in 0..n {
        let p = &mut *fds.add(i);
        p.revents = norm_out(p.events, s.polls[i].revents);
    }
    for (rp, &i) in real[..nreal].iter().zip(&real_at[..nreal]) {
        (*fds.add(i)).revents = rp.revents;
    }
    (0..n).filter(|&i| (*fds.add(i)).revents != 0).count() as c_int
}

#[no_mangle]
pub unsafe extern "C" fn poll(fds: *mut libc::pollfd, n: libc::nfds_t, timeout: c_int) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            return poll_common(fds, n, deadline_after_ms(timeout));
        }
    }
    let ts = libc::timespec {
        tv_sec: (timeout / 1000) as i64,
        tv_nsec: (timeout % 1000) as i64 * 1_000_000,
    };
    let tsp = if timeout < 0 { ptr::null() } else { &ts as *const _ };
    sys::raw(libc::SYS_ppoll, [fds as i64, n as i64, tsp as i64, 0, 8, 0]) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn ppoll(
    fds: *mut libc::pollfd,
    n: libc::nfds_t,
    ts: *const libc::timespec,
    sigmask: *const libc::sigset_t,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            return poll_common(fds, n, deadline_after_ts(ts));
        }
    }
    sys::raw(libc::SYS_ppoll, [fds as i64, n as i64, ts as i64, sigmask as i64, 8, 0]) as c_int
}

unsafe fn select_common(
    nfds: c_int,
    r: *mut libc::fd_set,
    w: *mut libc::fd_set,
    e: *mut libc::fd_set,
    deadline: u64,
) -> c_int {
    let s = slot();
    // Entries carry -1 for descriptors the shim does not simulate, so keep the real numbers
    // to fill the caller's sets from the answers; those are also polled for real.
    let mut fdnums = [0i32; POLL_MAX];
    let mut real = [libc::pollfd { fd: -1, events: 0, revents: 0 }; POLL_MAX];
    let mut nreal = 0;
    let mut count = 0;
    for fd in 0..nfds.clamp(0, libc::FD_SETSIZE as c_int) {
        let mut ev: i16 = 0;
        if !r.is_null() && libc::FD_ISSET(fd, r) {
            ev |= libc::POLLIN;
        }
        if !w.is_null() && libc::FD_ISSET(fd, w) {
            ev |= libc::POLLOUT;
        }
        if ev != 0 {
            if count == POLL_MAX {
                set_errno(libc::EINVAL);
                return -1;
            }
            crate::execfds::refuse_stale(fd, b"select()");
            let sim = fdtable::host_polled(fd);
            s.polls[count] = PollEntry { fd: if sim { fd } else { -1 }, events: ev, revents: 0 };
            fdnums[count] = fd;
            if !sim {
                real[nreal] = libc::pollfd { fd, events: ev, revents: 0 };
                nreal += 1;
            }
            count += 1;
        }
    }
    let ret = poll_loop(count, deadline, nreal > 0, true, || real_poll_now(&mut real[..nreal]));
    if ret < 0 {
        return ret_errno(ret) as c_int;
    }
    let s = slot();
    for z in [r, w, e] {
        if !z.is_null() {
            libc::FD_ZERO(z);
        }
    }
    let mut bits = 0;
    let mut set_bits = |fd: c_int, events: i16, re: i16| {
        if !r.is_null()
            && re & (libc::POLLIN | libc::POLLERR | libc::POLLHUP) != 0
            && events & libc::POLLIN != 0
        {
            libc::FD_SET(fd, r);
            bits += 1;
        }
        if !w.is_null() && re & libc::POLLOUT != 0 {
            libc::FD_SET(fd, w);
            bits += 1;
        }
    };
    for (entry, &fd) in s.polls[..count].iter().zip(&fdnums[..count]) {
        if entry.fd >= 0 {
            set_bits(fd, entry.events, entry.revents);
        }
    }
    for rp in &real[..nreal] {
        set_bits(rp.fd, rp.events, rp.revents);
    }
    bits
}

#[no_mangle]
pub unsafe extern "C" fn select(
    nfds: c_int,
    r: *mut libc::fd_set,
    w: *mut libc::fd_set,
    e: *mut libc::fd_set,
    tv: *mut libc::timeval,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            let deadline = if tv.is_null() {
                u64::MAX
            } else {
                let d = ((*tv).tv_sec.max(0) as u64) * 1_000_000_000
                    + ((*tv).tv_usec.max(0) as u64) * 1000;
                now_ns().saturating_add(d)
            };
            let n = select_common(nfds, r, w, e, deadline);
            if !tv.is_null() && n >= 0 {
                // Linux reports the time not slept; we report it all slept or none left.
                (*tv).tv_sec = 0;
                (*tv).tv_usec = 0;
            }
            return n;
        }
    }
    let ts;
    let tsp = if tv.is_null() {
        ptr::null()
    } else {
        ts = libc::timespec { tv_sec: (*tv).tv_sec, tv_nsec: (*tv).tv_usec * 1000 };
        &ts as *const libc::timespec
    };
    sys::raw(libc::SYS_pselect6, [nfds as i64, r as i64, w as i64, e as i64, tsp as i64, 0])
        as c_int
}

#[no_mangle]
pub unsafe extern "C" fn pselect(
    nfds: c_int,
    r: *mut libc::fd_set,
    w: *mut libc::fd_set,
    e: *mut libc::fd_set,
    ts: *const libc::timespec,
    sigmask: *const libc::sigset_t,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            return select_common(nfds, r, w, e, deadline_after_ts(ts));
        }
    }
    let data: [u64; 2] = [sigmask as u64, 8];
    let dp = if sigmask.is_null() { ptr::null() } else { data.as_ptr() };
    sys::raw(libc::SYS_pselect6, [nfds as i64, r as i64, w as i64, e as i64, ts as i64, dp as i64])
        as c_int
}
