//! Each node's own `/tmp`. Temporary names repeat from run to run (the shim draws them from
//! the seeded random stream, and Python's `tempfile` seeds itself from it), so on the shared
//! `/tmp` a name the run before left behind was taken: `tempfile.mkdtemp` moved on to the next
//! name, and every run of one seed made a different trace (Python's multiprocessing puts its
//! forkserver's socket in such a directory; the JVM keeps `/tmp/hsperfdata_*`). As `/run` is
//! (`crate::privrun`), `/tmp` is an overlay in the node's mount namespace: the machine's files
//! below (the shim and the hosts file weft wrote there), the node's changes in a fresh tmpfs
//! above, gone with the node's processes. The run's folder, bound at
//! [`crate::workdir::VIEW_DIR`] under `/tmp` before, is bound again inside the overlay (an
//! overlay's lower layer shows no mounts) and the working directory entered again. Best
//! effort, only with that view: where the kernel refuses, the machine's `/tmp` is used.

use crate::privrun::{hold_at, mount_private, Layer};
use crate::workdir::View;

/// Where the view is held open while the overlay is mounted.
const VIEW_FD: i32 = 1019;
const TMP: Layer = Layer {
    dir: c"/tmp",
    upper: c"/tmp/.weft-upper",
    work: c"/tmp/.weft-work",
    tmpfs_mode: c"mode=1777",
    mode: 0o1777,
    options: [
        c"lowerdir=/proc/self/fd/1020,upperdir=/tmp/.weft-upper,workdir=/tmp/.weft-work",
        c"lowerdir=/proc/self/fd/1020,upperdir=/tmp/.weft-upper,workdir=/tmp/.weft-work,userxattr",
    ],
};

/// Between fork and exec, after `view` was bound and entered: the node's own `/tmp`, with the
/// view bound in it again. True when the node has its own.
///
/// # Safety
/// Between fork and exec: open/dup2/close/mount/umount2/chdir are async-signal-safe, and
/// `view`'s paths were built before the fork.
pub(crate) unsafe fn mount_private_tmp(view: &View) -> bool {
    if !hold_at(&view.at, VIEW_FD) {
        return false;
    }
    let ok = mount_private(&TMP) && rebind(view);
    libc::close(VIEW_FD);
    ok
}

/// Binds the view held at [`VIEW_FD`] at its place inside the new `/tmp` and enters the
/// working directory again; else takes the overlay and its tmpfs away again.
unsafe fn rebind(view: &View) -> bool {
    let from = c"/proc/self/fd/1019".as_ptr();
    if libc::mount(from, view.at.as_ptr(), std::ptr::null(), libc::MS_BIND, std::ptr::null()) == 0
        && libc::chdir(view.cwd.as_ptr()) == 0
    {
        return true;
    }
    libc::umount2(view.at.as_ptr(), libc::MNT_DETACH);
    libc::umount2(TMP.dir.as_ptr(), libc::MNT_DETACH);
    libc::umount2(TMP.dir.as_ptr(), libc::MNT_DETACH);
    libc::chdir(view.cwd.as_ptr());
    false
}
