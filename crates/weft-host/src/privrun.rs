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

/// Where the machine's directory is held open while the overlay is mounted over it.
const LOWER_FD: i32 = 1020;
const TMPFS: &std::ffi::CStr = c"tmpfs";
const OVERLAY: &std::ffi::CStr = c"overlay";

/// A directory a node gets its own copy of: the machine's below, a fresh tmpfs above.
pub(crate) struct Layer {
    pub(crate) dir: &'static std::ffi::CStr,
    pub(crate) upper: &'static std::ffi::CStr,
    pub(crate) work: &'static std::ffi::CStr,
    /// The tmpfs's mode option; the upper directory's mode (the merged directory's own).
    pub(crate) tmpfs_mode: &'static std::ffi::CStr,
    pub(crate) mode: libc::mode_t,
    /// The overlay's options: in a user namespace the kernel wants `userxattr` (5.11 and later).
    pub(crate) options: [&'static std::ffi::CStr; 2],
}

/// `/run`.
const RUN: Layer = Layer {
    dir: c"/run",
    upper: c"/run/.weft-upper",
    work: c"/run/.weft-work",
    tmpfs_mode: c"mode=755",
    mode: 0o755,
    options: [
        c"lowerdir=/proc/self/fd/1020,upperdir=/run/.weft-upper,workdir=/run/.weft-work",
        c"lowerdir=/proc/self/fd/1020,upperdir=/run/.weft-upper,workdir=/run/.weft-work,userxattr",
    ],
};

/// Between fork and exec, in the node's new mount namespace: mounts the overlay on `/run`,
/// or leaves the machine's `/run` as it was. True when the node has its own.
pub(crate) fn mount_private_run() -> bool {
    // SAFETY: only constant NUL-terminated paths.
    unsafe { mount_private(&RUN) }
}

/// Mounts `layer`'s overlay on its directory, or leaves the machine's as it was (true: done).
///
/// # Safety
/// Between fork and exec: open/dup2/close/mount/mkdir/chmod/umount2 are async-signal-safe.
pub(crate) unsafe fn mount_private(layer: &Layer) -> bool {
    if !hold_at(layer.dir, LOWER_FD) {
        return false;
    }
    let ok = overlay(layer);
    libc::close(LOWER_FD);
    ok
}

/// Opens directory `dir` (`O_PATH`) as descriptor `at`, to name it by `/proc/self/fd/<at>`
/// once something is mounted over it (true: held).
///
/// # Safety
/// Between fork and exec: open/dup2/close are async-signal-safe.
pub(crate) unsafe fn hold_at(dir: &std::ffi::CStr, at: i32) -> bool {
    let fd = libc::open(dir.as_ptr(), libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC);
    if fd < 0 {
        return false;
    }
    if fd != at && libc::dup2(fd, at) < 0 {
        libc::close(fd);
        return false;
    }
    if fd != at {
        libc::close(fd);
    }
    true
}

/// The tmpfs (holding the overlay's upper and work directories), then the overlay on it.
unsafe fn overlay(layer: &Layer) -> bool {
    let dir = layer.dir.as_ptr();
    let flags = libc::MS_NOSUID | libc::MS_NODEV;
    let mode = layer.tmpfs_mode.as_ptr().cast();
    if libc::mount(TMPFS.as_ptr(), dir, TMPFS.as_ptr(), flags, mode) != 0 {
        return false;
    }
    let (upper, work) = (layer.upper.as_ptr(), layer.work.as_ptr());
    // chmod: mkdir's mode passes through the umask (a sticky /tmp would lose its bits).
    if libc::mkdir(upper, 0o755) != 0
        || libc::chmod(upper, layer.mode) != 0
        || libc::mkdir(work, 0o755) != 0
    {
        libc::umount2(dir, libc::MNT_DETACH);
        return false;
    }
    for options in layer.options {
        let data = options.as_ptr().cast();
        if libc::mount(OVERLAY.as_ptr(), dir, OVERLAY.as_ptr(), flags, data) == 0 {
            return true;
        }
    }
    libc::umount2(dir, libc::MNT_DETACH);
    false
}

/// Whether nodes get their own `/run` here: probed once by starting /bin/true as a node's
/// process is started, then mounting the overlay.
pub(crate) fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(crate::spawn::probe_private_run)
}
