//! Times of real files (outside data directories) that changed during the run, as `stat`,
//! `fstat`, `statx` and their kin report them. The kernel stamps a change with the machine's
//! real time, which differs from run to run (an HTTP server's `Last-Modified` of a file made
//! during the run did). A time from before the run is the file's own and stays. A later one
//! means the file changed since weft last looked; whoever changed it (a hooked `write`, stdio
//! inside libc, a mapping, another process), the modification time is set, for real, to the
//! virtual time of that look, and reported. Virtual time (2026-01-01 onwards) lies before any
//! real time of the run, so the next real change is told apart from the stamp whatever the
//! kernel's clock granularity: whether a file changed between two looks is the run's own
//! doing, the same in every run. The access time made during the run reads as the modification
//! time (reads leave no trace, as under `noatime`); the change time likewise, since setting the
//! modification time changes it; a birth time from the run is not reported (`statx` leaves
//! `STATX_BTIME` out of its mask). A file weft may not stamp (another owner, read-only, a
//! pipe) reads as changed at every look.

use crate::prelude::*;

/// The machine's real time the run began, in ns since the epoch (0: no host said).
pub(crate) static RUN_START_NS: AtomicI64 = AtomicI64::new(0);

/// What a looked-at file is, to stamp it: a descriptor, or a path relative to a directory.
#[derive(Clone, Copy)]
pub(crate) enum Looked {
    Fd(c_int),
    At(c_int, *const c_char, c_int),
}

/// True when real time `(s, ns)` is from the run (at or after its start).
fn from_run(s: i64, ns: i64) -> bool {
    let start = RUN_START_NS.load(Ordering::Relaxed);
    start > 0 && s.saturating_mul(1_000_000_000).saturating_add(ns) >= start
}

/// The virtual wall time now.
fn virtual_now() -> libc::timespec {
    let ns = REALTIME_BASE_NS + crate::time::now_ns();
    libc::timespec { tv_sec: (ns / 1_000_000_000) as i64, tv_nsec: (ns % 1_000_000_000) as i64 }
}

/// Sets `what`'s modification time to `at`, for real (its access time stays).
unsafe fn stamp(what: Looked, at: libc::timespec) {
    let times = [libc::timespec { tv_sec: 0, tv_nsec: libc::UTIME_OMIT }, at];
    let t = times.as_ptr() as i64;
    match what {
        Looked::Fd(fd) => sys::raw_ret(libc::SYS_utimensat, [fd as i64, 0, t, 0, 0, 0]),
        Looked::At(dir, path, flags) => {
            let nofollow = (flags & libc::AT_SYMLINK_NOFOLLOW) as i64;
            sys::raw_ret(libc::SYS_utimensat, [dir as i64, path as i64, t, nofollow, 0, 0])
        }
    };
}

/// The modification time to report for `what`, whose kernel time is `(s, ns)`: itself when
/// from before the run (or stamped by weft), else now, stamped.
unsafe fn settled(what: Looked, s: i64, ns: i64) -> (i64, i64) {
    if !from_run(s, ns) {
        return (s, ns);
    }
    let now = virtual_now();
    stamp(what, now);
    (now.tv_sec, now.tv_nsec)
}

/// Rewrites the times of a real `stat` answer of `what` (see the module's paragraph).
///
/// # Safety
/// `st` points to a `struct stat` the kernel filled.
pub(crate) unsafe fn settle_stat(st: *mut libc::stat, what: Looked) {
    let Some(_g) = Guard::enter() else { return };
    if !active() {
        return;
    }
    let st = &mut *st;
    (st.st_mtime, st.st_mtime_nsec) = settled(what, st.st_mtime, st.st_mtime_nsec);
    if from_run(st.st_atime, st.st_atime_nsec) {
        (st.st_atime, st.st_atime_nsec) = (st.st_mtime, st.st_mtime_nsec);
    }
    if from_run(st.st_ctime, st.st_ctime_nsec) {
        (st.st_ctime, st.st_ctime_nsec) = (st.st_mtime, st.st_mtime_nsec);
    }
}

/// Rewrites the times of a real `statx` answer of `what`, as [`settle_stat`].
///
/// # Safety
/// `stx` points to a `struct statx` the kernel filled.
pub(crate) unsafe fn settle_statx(stx: *mut libc::statx, what: Looked) {
    let Some(_g) = Guard::enter() else { return };
    if !active() {
        return;
    }
    let x = &mut *stx;
    let m = &mut x.stx_mtime;
    let (s, ns) = settled(what, m.tv_sec, m.tv_nsec as i64);
    (m.tv_sec, m.tv_nsec) = (s, ns as u32);
    let m = x.stx_mtime;
    for t in [&mut x.stx_atime, &mut x.stx_ctime] {
        if from_run(t.tv_sec, t.tv_nsec as i64) {
            *t = m;
        }
    }
    if from_run(x.stx_btime.tv_sec, x.stx_btime.tv_nsec as i64) {
        x.stx_mask &= !libc::STATX_BTIME;
        x.stx_btime = core::mem::zeroed();
    }
}
