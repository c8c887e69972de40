//! Descriptors passed over a real socket (`SCM_RIGHTS` on a named `AF_UNIX` socket or a
//! datagram socketpair, which the shim leaves to the kernel) between a node's processes:
//! Python's multiprocessing forkserver hands each new child's pipes to its server so. The
//! kernel carries the real descriptors (the placeholders of simulated ones) with the bytes;
//! the host must learn what they are. The sender registers the batch with the host (`OP_PASS`,
//! carried) and sends a marker after the program's descriptors: a memfd holding the batch's
//! number. The receiver reads with a control buffer of its own, finds the marker last among
//! the descriptors that came, closes it, adopts the others as the batch's (`OP_ADOPT`), and
//! copies the control messages into the caller's buffer as the kernel would have (what does
//! not fit is closed, `MSG_CTRUNC`). Before, a simulated pipe arrived as its bare placeholder:
//! the receiver wrote into a real pipe nobody read, and the sender's own pipe saw its last
//! reader go once the sender closed its copy (`EPIPE`: Python's `BrokenPipeError`).

use crate::passfds::{adopt, drop_batch, stage, MAX_FDS};
use crate::prelude::*;

/// The marker's memfd name, and what `/proc/self/fd/N` names it.
const NAME: &[u8] = b"weft-pass\0";
const LINK: &[u8] = b"/memfd:weft-pass (deleted)";
/// Room for the program's control messages plus the marker (8-aligned).
const CTL_WORDS: usize = 512;
/// The largest control buffer of the program's that is translated (the rest: the marker).
const CTL_PROGRAM: usize = CTL_WORDS * 8 - 32;

/// The descriptors of `m`'s `SCM_RIGHTS` messages, in order (the kernel joins them into one).
unsafe fn rights(m: &libc::msghdr, out: &mut [c_int; MAX_FDS]) -> usize {
    let mut n = 0;
    if m.msg_control.is_null() || m.msg_controllen < core::mem::size_of::<libc::cmsghdr>() {
        return 0;
    }
    let mut c = libc::CMSG_FIRSTHDR(m);
    while !c.is_null() {
        if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_RIGHTS {
            let len = ((*c).cmsg_len as usize).saturating_sub(libc::CMSG_LEN(0) as usize) / 4;
            let data = libc::CMSG_DATA(c) as *const c_int;
            for i in 0..len.min(MAX_FDS - n) {
                out[n] = ptr::read_unaligned(data.add(i));
                n += 1;
            }
        }
        c = libc::CMSG_NXTHDR(m, c);
    }
    n
}

/// A new marker holding `batch` (close-on-exec), or -errno.
unsafe fn marker(batch: u64) -> i64 {
    let fd = sys::raw_ret(libc::SYS_memfd_create, [NAME.as_ptr() as i64, 1, 0, 0, 0, 0]);
    if fd >= 0 {
        let b = batch.to_le_bytes();
        sys::raw_ret(libc::SYS_pwrite64, [fd, b.as_ptr() as i64, 8, 0, 0, 0]);
    }
    fd
}

/// `sendmsg` on real socket `fd`: None when it passes no simulated descriptor (the caller
/// sends it as asked), else the answer of sending it with the marker.
pub(crate) unsafe fn send(fd: c_int, msg: *const libc::msghdr, flags: c_int) -> Option<ssize_t> {
    let m = &*msg;
    let mut fds = [0; MAX_FDS];
    let n = rights(m, &mut fds);
    if !fds[..n].iter().any(|&f| fdtable::kind(f) != FdKind::Real) {
        return None;
    }
    if m.msg_controllen > CTL_PROGRAM || n == MAX_FDS {
        unsupported(
            b"sendmsg(): passing simulated descriptors with this many control messages over a \
              real socket is not simulated",
            libc::SYS_sendmsg,
            fd as i64,
        );
    }
    let batch = stage(fd, &fds[..n], true);
    let mark = marker(batch);
    if mark < 0 {
        drop_batch(fd, batch);
        return Some(ret_errno(mark) as ssize_t);
    }
    let mut ctl = [0u64; CTL_WORDS];
    let base = ctl.as_mut_ptr() as *mut u8;
    ptr::copy_nonoverlapping(m.msg_control as *const u8, base, m.msg_controllen);
    let at = (m.msg_controllen + 7) & !7;
    let c = base.add(at) as *mut libc::cmsghdr;
    (*c).cmsg_level = libc::SOL_SOCKET;
    (*c).cmsg_type = libc::SCM_RIGHTS;
    (*c).cmsg_len = libc::CMSG_LEN(4) as usize;
    ptr::write_unaligned(libc::CMSG_DATA(c) as *mut c_int, mark as c_int);
    let mut with = *m;
    with.msg_control = base as *mut c_void;
    with.msg_controllen = at + libc::CMSG_SPACE(4) as usize;
    let r = sys::raw_ret(
        libc::SYS_sendmsg,
        [fd as i64, &with as *const _ as i64, flags as i64, 0, 0, 0],
    );
    sys::raw_ret(libc::SYS_close, [mark, 0, 0, 0, 0, 0]);
    if r < 0 {
        drop_batch(fd, batch);
    }
    Some(ret_errno(r) as ssize_t)
}

/// The batch number in `fd` if it is a marker (closing it), else 0.
unsafe fn take_marker(fd: c_int) -> u64 {
    let mut path = *b"/proc/self/fd/\0\0\0\0\0\0\0\0\0\0\0\0";
    let mut digits = [0u8; 10];
    let (mut v, mut k) = (fd as u32, 0);
    loop {
        digits[k] = b'0' + (v % 10) as u8;
        k += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    for i in 0..k {
        path[14 + i] = digits[k - 1 - i];
    }
    let mut link = [0u8; 64];
    let len = sys::raw_ret(
        libc::SYS_readlink,
        [path.as_ptr() as i64, link.as_mut_ptr() as i64, 64, 0, 0, 0],
    );
    if len != LINK.len() as i64 || &link[..LINK.len()] != LINK {
        return 0;
    }
    let mut b = [0u8; 8];
    sys::raw_ret(libc::SYS_pread64, [fd as i64, b.as_mut_ptr() as i64, 8, 0, 0, 0]);
    sys::raw_ret(libc::SYS_close, [fd as i64, 0, 0, 0, 0, 0]);
    u64::from_le_bytes(b)
}

/// `recvmsg` on real socket `fd` (the caller holds the guard, the shim active): answers the
/// count, or -errno (not set in `errno`).
pub(crate) unsafe fn recv(fd: c_int, msg: *mut libc::msghdr, flags: c_int) -> i64 {
    let m = &mut *msg;
    let raw = |h: *mut libc::msghdr| {
        sys::raw_ret(libc::SYS_recvmsg, [fd as i64, h as i64, flags as i64, 0, 0, 0])
    };
    if flags & libc::MSG_PEEK != 0 || m.msg_controllen > CTL_PROGRAM {
        return raw(msg);
    }
    let mut ctl = [0u64; CTL_WORDS];
    let mut own = *m;
    own.msg_control = ctl.as_mut_ptr() as *mut c_void;
    own.msg_controllen = CTL_WORDS * 8;
    let r = raw(&mut own);
    if r >= 0 {
        m.msg_namelen = own.msg_namelen;
        m.msg_flags = own.msg_flags & !libc::MSG_CTRUNC;
        deliver(&own, m);
    }
    r
}

/// Copies the control messages of `own` into the program's `m` as the kernel would have,
/// taking the marker out of the descriptors and adopting the batch it names.
unsafe fn deliver(own: &libc::msghdr, m: &mut libc::msghdr) {
    let room = if m.msg_control.is_null() { 0 } else { m.msg_controllen };
    let (mut used, mut trunc) = (0usize, own.msg_flags & libc::MSG_CTRUNC != 0);
    let head = libc::CMSG_LEN(0) as usize;
    let mut c = if own.msg_controllen < head { ptr::null_mut() } else { libc::CMSG_FIRSTHDR(own) };
    while !c.is_null() {
        let len = ((*c).cmsg_len as usize).saturating_sub(head);
        let dst = (m.msg_control as *mut u8).add(used);
        if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_RIGHTS {
            let fds = core::slice::from_raw_parts_mut(libc::CMSG_DATA(c) as *mut c_int, len / 4);
            let fit = (room.saturating_sub(used).saturating_sub(head) / 4).min(fds.len());
            let n = fds.len();
            let batch = if n > 0 { take_marker(fds[n - 1]) } else { 0 };
            let fds = if batch != 0 { &fds[..n - 1] } else { &fds[..] };
            let fit = fit.min(fds.len());
            trunc |= fit < fds.len();
            adopt_or_close(batch, fds, fit);
            if fit > 0 {
                ptr::copy_nonoverlapping(c as *const u8, dst, head);
                (*(dst as *mut libc::cmsghdr)).cmsg_len = libc::CMSG_LEN(fit as u32 * 4) as usize;
                ptr::copy_nonoverlapping(fds.as_ptr() as *const u8, dst.add(head), fit * 4);
                used += (libc::CMSG_SPACE(fit as u32 * 4) as usize).min(room - used);
            }
        } else if used + head + len <= room {
            ptr::copy_nonoverlapping(c as *const u8, dst, head + len);
            used += (libc::CMSG_SPACE(len as u32) as usize).min(room - used);
        } else {
            trunc = true;
        }
        c = libc::CMSG_NXTHDR(own, c);
    }
    m.msg_controllen = used;
    if trunc {
        m.msg_flags |= libc::MSG_CTRUNC;
    }
}

/// The first `keep` of `fds` go to the program: as batch `batch`'s when a marker named one,
/// else as they are; the others are closed.
unsafe fn adopt_or_close(batch: u64, fds: &[c_int], keep: usize) {
    if batch == 0 {
        for &f in &fds[keep..] {
            sys::raw_ret(libc::SYS_close, [f as i64, 0, 0, 0, 0, 0]);
        }
    } else if adopt(batch, fds, keep) == -(libc::EXDEV as i64) {
        unsupported(
            b"recvmsg(): descriptors passed from another node over a real socket are not \
              simulated",
            libc::SYS_recvmsg,
            fd_of(fds),
        );
    }
}

fn fd_of(fds: &[c_int]) -> i64 {
    fds.first().map_or(-1, |&f| f as i64)
}
