//! `signalfd`: a descriptor that reads pending signals of its mask instead of running their
//! handlers (the signals are normally blocked). The host keeps its mask and answers reads and
//! readiness (poll/select/epoll) from the signals pending for the process and its threads.

use crate::prelude::*;

/// Bytes of one `struct signalfd_siginfo`.
const RECORD: usize = 128;

#[no_mangle]
pub unsafe extern "C" fn signalfd(fd: c_int, mask: *const libc::sigset_t, flags: c_int) -> c_int {
    let real = real!(signalfd: fn(c_int, *const libc::sigset_t, c_int) -> c_int);
    if let Some(_g) = Guard::enter() {
        if active() {
            crate::execfds::refuse_stale(fd, b"signalfd()");
            if mask.is_null() {
                return ret_errno(-(libc::EFAULT as i64)) as c_int;
            }
            let set = crate::signals::mask_of_set(mask);
            let fd = if fd == -1 {
                // A real signalfd with an empty mask holds the number; it never becomes ready.
                let mut empty: libc::sigset_t = core::mem::zeroed();
                libc::sigemptyset(&mut empty);
                let fd = real(-1, &empty, flags);
                if fd < 0 {
                    return fd;
                }
                if !fdtable::fits(fd) {
                    unsupported(b"signalfd(): descriptor number too high", -1, fd as i64);
                }
                fdtable::open_signalfd(fd, flags & libc::SFD_NONBLOCK != 0);
                fd
            } else if fdtable::kind(fd) == FdKind::Signalfd {
                fd
            } else {
                return ret_errno(-(libc::EINVAL as i64)) as c_int;
            };
            let s = slot();
            s.args[0] = fd as i64;
            s.args[1] = set as i64;
            s.args[2] = 0;
            handoff(OP_SIGNALFD);
            return fd;
        }
    }
    real(fd, mask, flags)
}

/// The host forgets signalfd `fd` (it is being closed).
pub(crate) unsafe fn signalfd_close(fd: c_int) {
    let s = slot();
    s.args[0] = fd as i64;
    s.args[2] = 1;
    handoff(OP_SIGNALFD);
}

/// `read` on a signalfd: one `signalfd_siginfo` per pending signal of its mask, as many as fit.
pub(crate) unsafe fn signalfd_read(fd: c_int, buf: *mut c_void, len: size_t) -> ssize_t {
    if len < RECORD {
        return ret_errno(-(libc::EINVAL as i64)) as ssize_t;
    }
    let s = slot();
    s.args[0] = fd as i64;
    s.args[1] = fdtable::nonblocking(fd) as i64;
    s.args[2] = (len / RECORD).min(SIG_BATCH) as i64;
    let r = handoff(OP_SIGNALFD_READ);
    if r < 0 {
        return ret_errno(r) as ssize_t;
    }
    let n = r as usize;
    for i in 0..n {
        let info = ptr::read_unaligned((slot().data.as_ptr() as *const SigInfo).add(i));
        ptr::write_unaligned((buf as *mut u8).add(i * RECORD) as *mut [u32; 32], record(&info));
    }
    (n * RECORD) as ssize_t
}

/// A `struct signalfd_siginfo` (signo, errno, code, pid, uid, fd, tid, band, overrun, trapno,
/// status, int, ptr, …) for `info`.
fn record(info: &SigInfo) -> [u32; 32] {
    let mut r = [0u32; 32];
    r[0] = info.signo as u32;
    r[2] = info.code as u32;
    if info.code == SI_USER || info.code == SI_TKILL || info.signo == libc::SIGCHLD {
        r[3] = info.pid as u32;
        // SAFETY: getuid cannot fail.
        r[4] = unsafe { libc::getuid() };
    }
    if info.signo == libc::SIGCHLD {
        r[10] = info.status as u32; // ssi_status
    }
    if info.code == SI_TIMER {
        r[6] = info.timer as u32;
        r[8] = info.overrun as u32;
        r[11] = info.value as u32;
        r[12] = info.value as u32;
        r[13] = (info.value >> 32) as u32;
    }
    r
}
