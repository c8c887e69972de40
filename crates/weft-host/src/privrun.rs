//! Each node's own `/run`. Daemons keep their pid files, locks and sockets there under fixed
//! names (`/run/exim4/exim.pid`, corosync's lock), so nodes of one program on the shared
//! directory found each other's ("Another Corosync instance is already running"), and what a
//! run left there changed the next run (exim removed its stale pid file, a trace event the run
//! before did not have). In its mount namespace each node gets an overlay on `/run`: the
//! machine's files below (sockets of real daemons, package directories with their owners),
//! the node's changes in a fresh tmpfs above, gone with the node's processes, as `/run` is
//! emptied at boot. `/var/run` is a link to it on Debian. Best effort, like `/dev/shm`: where
//! the kernel refuses the overlay, the machine's `/run` is used ([`available`] says which).

use std::sync::OnceLock;

/// Where the machine's `/run` is held open while the overlay is mounted over it.
const LOWER_FD: i32 = 1020;
const TMPFS: &std::ffi::CStr = c"tmpfs";
const OVERLAY: &std::ffi::CStr = c"overlay";
const RUN: &std::ffi::CStr = c"/run";
const UPPER: &std::ffi::CStr = c"/run/.weft-upper";
const WORK: &std::ffi::CStr = c"/run/.weft-work";
/// The overlay's options: in a user namespace the kernel wants `userxattr` (5.11 and later).
const OPTIONS: [&std::ffi::CStr; 2] = [
    c"lowerdir=/proc/self/fd/1020,upperdir=/run/.weft-upper,workdir=/run/.weft-work",
    c"lowerdir=/proc/self/fd/1020,upperdir=/run/.weft-upper,workdir=/run/.weft-work,userxattr",
];

/// Between fork and exec, in the node's new mount namespace: mounts the overlay on `/run`,
/// or leaves the machine's `/run` as it was. True when the node has its own.
pub(crate) fn mount_private_run() -> bool {
    // SAFETY: open/dup2/close/mount/mkdir/umount2 are async-signal-safe system calls on
    // constant NUL-terminated strings.
    unsafe {
        let fd = libc::open(RUN.as_ptr(), libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC);
        if fd < 0 {
            return false;
        }
        if fd != LOWER_FD && libc::dup2(fd, LOWER_FD) < 0 {
            libc::close(fd);
            return false;
        }
        if fd != LOWER_FD {
            libc::close(fd);
        }
        let ok = overlay();
        libc::close(LOWER_FD);
        ok
    }
}

/// The tmpfs (holding the overlay's upper and work directories), then the overlay on it.
unsafe fn overlay() -> bool {
    let flags = libc::MS_NOSUID | libc::MS_NODEV;
    let mode = c"mode=755".as_ptr().cast();
    if libc::mount(TMPFS.as_ptr(), RUN.as_ptr(), TMPFS.as_ptr(), flags, mode) != 0 {
        return false;
    }
    if libc::mkdir(UPPER.as_ptr(), 0o755) != 0 || libc::mkdir(WORK.as_ptr(), 0o755) != 0 {
        libc::umount2(RUN.as_ptr(), libc::MNT_DETACH);
        return false;
    }
    for options in OPTIONS {
        let data = options.as_ptr().cast();
        if libc::mount(OVERLAY.as_ptr(), RUN.as_ptr(), OVERLAY.as_ptr(), flags, data) == 0 {
            return true;
        }
    }
    libc::umount2(RUN.as_ptr(), libc::MNT_DETACH);
    false
}

/// Whether nodes get their own `/run` here: probed once by starting /bin/true as a node's
/// process is started, then mounting the overlay.
pub(crate) fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(crate::spawn::probe_private_run)
}
