//! Descriptors passed over a simulated socketpair (`SCM_RIGHTS`), between a node's processes:
//! nginx's master gives each worker the others' channels, Erlang's VM gives its helper process
//! the pipes of each program it starts. The kernel carries the descriptors: the sender sends
//! the real ones (the placeholders of simulated ones) over the real socketpair that holds the
//! simulated one's numbers, with the number the host gave the batch; the host carries what
//! they are (`crate::proto::OP_PASS`, `OP_ADOPT`), with the bytes they were sent with. The
//! receiver's read that takes those bytes takes the batch's descriptors from the kernel
//! (skipping those of batches whose send failed), and `recvmsg` hands them to the program as
//! Linux does (as many as its control buffer holds, the rest closed: `MSG_CTRUNC`); a plain
//! `read` closes them, as Linux discards them.

use crate::prelude::*;
use core::cell::RefCell;

/// Linux's `SCM_MAX_FD`.
pub(crate) const MAX_FDS: usize = 253;
/// Control buffer for that many (CMSG_SPACE(253 * 4) = 1032 bytes), 8-aligned.
pub(crate) type Control = [u64; 130];

/// The batch the last read took: its number (0: none) and its real descriptors.
struct Taken {
    batch: u64,
    fds: [c_int; MAX_FDS],
    n: usize,
}

thread_local! {
    /// What the last read took, until the caller hands it on ([`deliver`], [`discard`]).
    static TAKEN: RefCell<Taken> = const { RefCell::new(Taken { batch: 0, fds: [0; MAX_FDS], n: 0 }) };
}

/// Whether the last read took a batch not handed on yet.
pub(crate) fn taken() -> bool {
    TAKEN.with(|t| t.borrow().batch != 0)
}

/// What the last read took, leaving nothing.
fn take() -> Taken {
    TAKEN.with(|t| {
        core::mem::replace(&mut *t.borrow_mut(), Taken { batch: 0, fds: [0; MAX_FDS], n: 0 })
    })
}

/// The descriptors an `SCM_RIGHTS` message of `m` passes; `None` without one. Credentials
/// and other socket-level messages end the run, naming the call.
pub(crate) unsafe fn rights(m: &libc::msghdr, out: &mut [c_int; MAX_FDS]) -> Option<usize> {
    if m.msg_control.is_null() || m.msg_controllen < core::mem::size_of::<libc::cmsghdr>() {
        return None;
    }
    let (mut n, mut found) = (0, false);
    let mut c = libc::CMSG_FIRSTHDR(m);
    while !c.is_null() {
        if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_RIGHTS {
            found = true;
            let len = ((*c).cmsg_len as usize).saturating_sub(libc::CMSG_LEN(0) as usize) / 4;
            let data = libc::CMSG_DATA(c) as *const c_int;
            for i in 0..len.min(MAX_FDS - n) {
                out[n] = ptr::read_unaligned(data.add(i));
                n += 1;
            }
        } else if (*c).cmsg_level == libc::SOL_SOCKET {
            unsupported(
                b"sendmsg(): passing credentials (SCM_CREDENTIALS) over a simulated socket is \
                  not simulated",
                libc::SYS_sendmsg,
                0,
            );
        }
        c = libc::CMSG_NXTHDR(m, c);
    }
    found.then_some(n)
}

/// `sendmsg` with `SCM_RIGHTS` on simulated socketpair end `fd`: the bytes of `iov` with the
/// descriptors `fds`.
pub(crate) unsafe fn send(fd: c_int, iov: &[libc::iovec], flags: c_int, fds: &[c_int]) -> ssize_t {
    let batch = stage(fd, fds, false);
    let sent = real_send(fd, batch, fds);
    let r = if sent < 0 {
        set_errno(-sent as c_int);
        -1
    } else {
        crate::sockets::send_common(fd, iov, flags, ptr::null(), 0)
    };
    if r <= 0 {
        drop_batch(fd, 0);
    }
    r
}

/// Checks that `fds` can be passed, and gives them to the host as a batch sent on `fd`
/// (`carried`: the kernel carries its number, see `crate::passreal`); answers its number.
pub(crate) unsafe fn stage(fd: c_int, fds: &[c_int], carried: bool) -> u64 {
    for &f in fds {
        if matches!(
            fdtable::kind(f),
            FdKind::Epoll | FdKind::Timerfd | FdKind::Signalfd | FdKind::Stale
        ) {
            unsupported(
                b"sendmsg(): passing an epoll instance, timerfd or signalfd is not simulated",
                libc::SYS_sendmsg,
                f as i64,
            );
        }
    }
    let s = slot();
    s.args[0] = fd as i64;
    s.args[1] = fds.len() as i64;
    s.args[2] = carried as i64;
    for (i, f) in fds.iter().enumerate() {
        s.data[i * 4..i * 4 + 4].copy_from_slice(&f.to_le_bytes());
    }
    handoff(OP_PASS) as u64
}

/// The send of batch `batch` (0: the one staged on `fd`) failed: the host drops it.
pub(crate) unsafe fn drop_batch(fd: c_int, batch: u64) {
    let s = slot();
    s.args[0] = fd as i64;
    s.args[1] = -1;
    s.args[3] = batch as i64;
    handoff(OP_PASS);
}

/// Sends `batch`'s number with the real descriptors `fds` over the real socketpair at `fd`.
unsafe fn real_send(fd: c_int, batch: u64, fds: &[c_int]) -> i64 {
    let mut ctl: Control = [0; 130];
    let mut word = batch;
    let mut iov = libc::iovec { iov_base: &mut word as *mut u64 as *mut c_void, iov_len: 8 };
    let mut m: libc::msghdr = core::mem::zeroed();
    m.msg_iov = &mut iov;
    m.msg_iovlen = 1;
    m.msg_control = ctl.as_mut_ptr() as *mut c_void;
    m.msg_controllen = libc::CMSG_SPACE((fds.len() * 4) as u32) as usize;
    let c = libc::CMSG_FIRSTHDR(&m);
    (*c).cmsg_level = libc::SOL_SOCKET;
    (*c).cmsg_type = libc::SCM_RIGHTS;
    (*c).cmsg_len = libc::CMSG_LEN((fds.len() * 4) as u32) as usize;
    ptr::copy_nonoverlapping(fds.as_ptr(), libc::CMSG_DATA(c) as *mut c_int, fds.len());
    let flags = (libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL) as i64;
    sys::raw(libc::SYS_sendmsg, [fd as i64, &m as *const _ as i64, flags, 0, 0, 0])
}

/// A read of `fd` took batch `batch`: takes its real descriptors from the kernel (closing
/// those of earlier batches whose send failed), kept until [`deliver`] or [`discard`].
pub(crate) unsafe fn took(fd: c_int, batch: u64) {
    loop {
        let mut got = [0; MAX_FDS];
        let (word, n) = real_recv(fd, &mut got);
        if word == batch {
            TAKEN.with(|t| *t.borrow_mut() = Taken { batch, fds: got, n });
            return;
        }
        for &f in &got[..n] {
            sys::raw(libc::SYS_close, [f as i64, 0, 0, 0, 0, 0]);
        }
        if word == 0 || word > batch {
            unsupported(
                b"recvmsg(): descriptors passed over a socketpair went missing",
                libc::SYS_recvmsg,
                batch as i64,
            );
        }
    }
}

/// One marker from the real socketpair at `fd`: its batch number (0: none) and descriptors.
unsafe fn real_recv(fd: c_int, out: &mut [c_int; MAX_FDS]) -> (u64, usize) {
    let mut ctl: Control = [0; 130];
    let mut word = 0u64;
    let mut iov = libc::iovec { iov_base: &mut word as *mut u64 as *mut c_void, iov_len: 8 };
    let mut m: libc::msghdr = core::mem::zeroed();
    m.msg_iov = &mut iov;
    m.msg_iovlen = 1;
    m.msg_control = ctl.as_mut_ptr() as *mut c_void;
    m.msg_controllen = core::mem::size_of::<Control>();
    let flags = (libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC) as i64;
    if sys::raw(libc::SYS_recvmsg, [fd as i64, &mut m as *mut _ as i64, flags, 0, 0, 0]) != 8 {
        return (0, 0);
    }
    (word, rights(&m, out).unwrap_or(0))
}

/// Hands the descriptors the last read took to `recvmsg`'s caller: as many as its control
/// buffer holds (the rest closed, `MSG_CTRUNC`), close-on-exec as `flags` ask.
pub(crate) unsafe fn deliver(m: &mut libc::msghdr, flags: c_int) {
    let t = take();
    let (fds, n) = (t.fds, t.n);
    let room = m.msg_controllen.saturating_sub(libc::CMSG_LEN(0) as usize) / 4;
    let keep = if m.msg_control.is_null() { 0 } else { n.min(room) };
    if keep < n {
        m.msg_flags |= libc::MSG_CTRUNC;
    }
    if keep > 0 {
        let c = m.msg_control as *mut libc::cmsghdr;
        (*c).cmsg_level = libc::SOL_SOCKET;
        (*c).cmsg_type = libc::SCM_RIGHTS;
        (*c).cmsg_len = libc::CMSG_LEN((keep * 4) as u32) as usize;
        ptr::copy_nonoverlapping(fds.as_ptr(), libc::CMSG_DATA(c) as *mut c_int, keep);
        m.msg_controllen = libc::CMSG_SPACE((keep * 4) as u32) as usize;
        if flags & libc::MSG_CMSG_CLOEXEC == 0 {
            for &f in &fds[..keep] {
                sys::raw(libc::SYS_fcntl, [f as i64, libc::F_SETFD as i64, 0, 0, 0, 0]);
            }
        }
    } else {
        m.msg_controllen = 0;
    }
    adopt(t.batch, &fds[..n], keep);
}

/// The caller takes no descriptors (a plain `read` or `recv`): they are closed.
pub(crate) unsafe fn discard() {
    let t = take();
    adopt(t.batch, &t.fds[..t.n], 0);
}

/// Tells the host which of batch `batch`'s `fds` the process keeps (the first `keep`), closes the others for
/// real, and records the kept ones as what the host says they are; answers the host's answer
/// (-errno: the kept ones stay real).
pub(crate) unsafe fn adopt(batch: u64, fds: &[c_int], keep: usize) -> i64 {
    let s = slot();
    s.args[0] = batch as i64;
    s.args[1] = fds.len() as i64;
    for (i, &f) in fds.iter().enumerate() {
        let at = if i < keep { f } else { -1 };
        s.data[i * 4..i * 4 + 4].copy_from_slice(&at.to_le_bytes());
    }
    let r = handoff(OP_ADOPT);
    let kinds: [u8; MAX_FDS] = core::array::from_fn(|i| if r < 0 { 0 } else { slot().data[i] });
    for (i, &f) in fds.iter().enumerate() {
        if i >= keep {
            sys::raw(libc::SYS_close, [f as i64, 0, 0, 0, 0, 0]);
            continue;
        }
        let fl = sys::raw(libc::SYS_fcntl, [f as i64, libc::F_GETFL as i64, 0, 0, 0, 0]);
        let nb = fl >= 0 && fl & libc::O_NONBLOCK as i64 != 0;
        fdtable::forget(f);
        match kinds[i] {
            1 => fdtable::open_socket(f, false, nb),
            2 => fdtable::open_socket(f, true, nb),
            3 => fdtable::open_local(f, nb),
            4 => fdtable::open_disk(f),
            _ => {}
        }
    }
    r
}
