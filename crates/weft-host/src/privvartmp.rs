//! Each node's own `/var/tmp`. Daemons keep state there under names made of their pid (FRR's
//! `bgpd` its `/var/tmp/frr/bgpd.<pid>` directory); virtual pids repeat from run to run, so a
//! directory a crashed daemon left in the machine's `/var/tmp` met the next run of the same
//! seed ("File exists") and the two runs differed. Unlike `/tmp`, `/var/tmp` survives a
//! reboot, so a node's is a folder of the run's (`var-tmp/nID` beside its working directory):
//! empty when the run starts, kept across the node's crashes and restarts, left for inspection
//! after the run. Bound over the machine's in the node's mount namespace, through the view of
//! the run's folder ([`crate::workdir::View`]); best effort, as `/tmp` is: where the kernel
//! refuses, the machine's `/var/tmp` is used.

use crate::workdir::View;

/// Node `node`'s `/var/tmp` in the run folder `run` (real or as the view shows it).
pub(crate) fn folder(run: &std::path::Path, node: u32) -> std::path::PathBuf {
    run.join("var-tmp").join(format!("n{node}"))
}

/// Between fork and exec, after the view was bound (and bound again inside the node's `/tmp`):
/// binds the node's folder over `/var/tmp`. True when the node has its own.
///
/// # Safety
/// Between fork and exec: mount is async-signal-safe and `view`'s paths were built before
/// the fork.
pub(crate) unsafe fn bind(view: &View) -> bool {
    let (from, to) = (view.var_tmp.as_ptr(), c"/var/tmp".as_ptr());
    libc::mount(from, to, std::ptr::null(), libc::MS_BIND, std::ptr::null()) == 0
}
