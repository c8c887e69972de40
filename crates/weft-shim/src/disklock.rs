//! Advisory locks on data-directory files: `fcntl` record locks (`F_SETLK`, `F_SETLKW`,
//! `F_GETLK` and their `F_OFD_*` forms) and `flock`, kept by the host between the node's
//! processes (its `disklocks`). The shim turns the caller's `struct flock` into a byte range
//! (`l_whence` against the descriptor's offset or the file's size) and waits, when asked to,
//! by asking again each time the host says a lock of the file went.

use crate::datadir::{request, request_raw};
use crate::prelude::*;

/// The request's answer, looking again while the host says a lock went (`TOUCHED`).
fn ask(fd: c_int, mode: i64, start: u64, end: u64, flags: i64) -> i64 {
    loop {
        slot().args[5] = flags;
        let r = request_raw(DISK_LOCK, [fd as i64, mode, start as i64, end as i64]);
        if r != TOUCHED {
            return r;
        }
    }
}

/// `[start, end)` of `f` on disk descriptor `fd`, or the errno.
fn range(fd: c_int, f: &libc::flock) -> Result<(u64, u64), c_int> {
    let base = match f.l_whence as c_int {
        libc::SEEK_SET => 0,
        libc::SEEK_CUR => request(DISK_SEEK, [fd as i64, 0, libc::SEEK_CUR as i64, 0]),
        libc::SEEK_END => {
            // SAFETY: an all-zero `stat` is valid; fstat_disk fills it.
            let mut st: libc::stat = unsafe { core::mem::zeroed() };
            // SAFETY: fd is a disk descriptor, st is ours.
            if unsafe { crate::diskstat::fstat_disk(fd, &mut st) } < 0 {
                return Err(libc::EBADF);
            }
            st.st_size
        }
        _ => return Err(libc::EINVAL),
    };
    if base < 0 {
        return Err(libc::EBADF);
    }
    let start = base.checked_add(f.l_start).ok_or(libc::EOVERFLOW)?;
    let (start, end) = match f.l_len {
        0 => (start, i64::MAX),
        n if n > 0 => (start, start.checked_add(n).ok_or(libc::EOVERFLOW)?),
        n => (start + n, start),
    };
    if start < 0 {
        return Err(libc::EINVAL);
    }
    let end = if end == i64::MAX { u64::MAX } else { end as u64 };
    Ok((start as u64, end))
}

/// `fcntl(fd, cmd, fl)` for a lock command on a disk descriptor.
pub(crate) fn record_lock(fd: c_int, cmd: c_int, fl: *mut libc::flock) -> c_int {
    if fl.is_null() {
        set_errno(libc::EFAULT);
        return -1;
    }
    // SAFETY: the caller's `struct flock`.
    let f = unsafe { &mut *fl };
    let ofd = matches!(cmd, libc::F_OFD_SETLK | libc::F_OFD_SETLKW | libc::F_OFD_GETLK);
    let mode = match f.l_type as c_int {
        libc::F_UNLCK => 0,
        libc::F_RDLCK => 1,
        libc::F_WRLCK => 2,
        _ => return ret_errno(-(libc::EINVAL as i64)) as c_int,
    };
    if ofd && f.l_pid != 0 {
        return ret_errno(-(libc::EINVAL as i64)) as c_int;
    }
    let (start, end) = match range(fd, f) {
        Ok(r) => r,
        Err(e) => return ret_errno(-(e as i64)) as c_int,
    };
    let query = matches!(cmd, libc::F_GETLK | libc::F_OFD_GETLK);
    let wait = matches!(cmd, libc::F_SETLKW | libc::F_OFD_SETLKW);
    let flags = if ofd { LOCK_OFD } else { 0 }
        | if wait { LOCK_WAIT } else { 0 }
        | if query { LOCK_QUERY } else { 0 };
    if query && mode == 0 {
        return ret_errno(-(libc::EINVAL as i64)) as c_int;
    }
    let r = ask(fd, mode, start, end, flags);
    if r < 0 || !query {
        return ret_errno(r) as c_int;
    }
    let s = slot();
    if s.args[1] == 0 {
        f.l_type = libc::F_UNLCK as i16;
        return 0;
    }
    f.l_type = if s.args[1] == 1 { libc::F_RDLCK } else { libc::F_WRLCK } as i16;
    f.l_whence = libc::SEEK_SET as i16;
    f.l_start = s.args[2];
    f.l_len = s.args[3];
    f.l_pid = s.args[4] as libc::pid_t;
    0
}

/// `flock(fd, op)` on a disk descriptor: a whole-file lock of its open file description.
pub(crate) fn flock(fd: c_int, op: c_int) -> c_int {
    let mode = match op & !libc::LOCK_NB {
        libc::LOCK_UN => 0,
        libc::LOCK_SH => 1,
        libc::LOCK_EX => 2,
        _ => return ret_errno(-(libc::EINVAL as i64)) as c_int,
    };
    let wait = if op & libc::LOCK_NB == 0 { LOCK_WAIT } else { 0 };
    let r = ask(fd, mode, 0, u64::MAX, LOCK_FLOCK | wait);
    ret_errno(r) as c_int
}
