//! The user namespace a simulated process starts in, and who maps its ids. A process may
//! write its own namespace's maps only as one line naming its own user, with `setgroups`
//! denied: a node is then root of a namespace in which every other user is unmapped, so
//! files owned by those users refuse root's access (`EACCES`) and a daemon's privilege drop
//! has to be kept by the shim (`weft-shim/src/creds.rs`). When weft itself runs as root, a
//! helper process left in weft's namespace writes an identity map of every id instead (which
//! only a writer with `CAP_SETUID` over weft's namespace may do): files of every user behave as
//! they do for root on the machine, and `setuid`, `setgroups` and `chown` are the kernel's.
//! Without that privilege, or if the helper's write fails, the one-line map is written as
//! before.

use std::io;

/// Everything the child needs between fork and exec, built before the fork (nothing there
/// may allocate).
pub(crate) struct IdMaps {
    uid: Vec<u8>,
    gid: Vec<u8>,
    /// Whether weft runs as root, so that a helper may map every id.
    full: bool,
}

/// Every id mapped to itself (4294967295 ids: all but `(uid_t)-1`).
const IDENTITY: &[u8] = b"0 0 4294967295\n";

impl IdMaps {
    /// Maps for a process: every id when `all` is asked for and weft runs as root.
    pub(crate) fn new(all: bool) -> IdMaps {
        // SAFETY: getuid/getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        IdMaps {
            uid: format!("0 {uid} 1\n").into_bytes(),
            gid: format!("0 {gid} 1\n").into_bytes(),
            full: all && can_map_all(),
        }
    }
}

/// Whether weft runs as root, so that a helper left in its namespace may map every id.
pub(crate) fn can_map_all() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Between fork and exec: new user, network and IPC namespaces, ids mapped by a helper when
/// weft is root (every id), else by the process itself (its own id alone).
pub(crate) fn enter_namespaces(maps: &IdMaps) -> io::Result<()> {
    let helped = if maps.full { enter_fully_mapped() } else { Helped::No };
    match helped {
        Helped::Mapped => return Ok(()),
        Helped::Unshared => {}
        Helped::No => {
            // SAFETY: unshare is async-signal-safe; failure is reported.
            if unsafe { libc::unshare(NAMESPACES) } != 0 {
                return Err(io::Error::last_os_error());
            }
        }
    }
    write_proc_file(b"/proc/self/setgroups\0", b"deny")?;
    write_proc_file(b"/proc/self/uid_map\0", &maps.uid)?;
    write_proc_file(b"/proc/self/gid_map\0", &maps.gid)
}

/// A user namespace, a network namespace and an IPC namespace (System V shared memory,
/// semaphores and message queues of the node's own: ids from 0 in every run, gone with the
/// node's last process, never another run's).
const NAMESPACES: libc::c_int = libc::CLONE_NEWUSER | libc::CLONE_NEWNET | libc::CLONE_NEWIPC;

/// How far the helper got.
enum Helped {
    /// The namespaces exist and every id is mapped.
    Mapped,
    /// The namespaces exist, nothing is mapped.
    Unshared,
    /// Nothing was done.
    No,
}

/// Forks a helper that stays in weft's namespace, unshares, and lets the helper write the
/// identity maps into `/proc/<pid>/`.
fn enter_fully_mapped() -> Helped {
    let mut fds = [0; 2];
    // SAFETY: pipe2/fork/unshare/write/close/waitpid are async-signal-safe; the helper only
    // reads, writes files and calls _exit.
    unsafe {
        if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            return Helped::No;
        }
        let me = libc::getpid();
        let helper = libc::fork();
        if helper == 0 {
            libc::close(fds[1]);
            libc::_exit(map_from_outside(fds[0], me));
        }
        libc::close(fds[0]);
        let unshared = helper > 0 && libc::unshare(NAMESPACES) == 0;
        let go: u8 = if unshared { b'1' } else { b'0' };
        libc::write(fds[1], (&go as *const u8).cast(), 1);
        libc::close(fds[1]);
        if helper < 0 {
            return Helped::No;
        }
        let mut status = 0;
        while libc::waitpid(helper, &mut status, 0) < 0 {
            if *libc::__errno_location() != libc::EINTR {
                status = 1 << 8;
                break;
            }
        }
        match (unshared, libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
            (true, true) => Helped::Mapped,
            (true, false) => Helped::Unshared,
            (false, _) => Helped::No,
        }
    }
}

/// In the helper: waits for the go-ahead on `from`, then writes the identity maps of `pid`'s
/// new namespace. Its exit status: 0 when both maps were written.
fn map_from_outside(from: libc::c_int, pid: libc::pid_t) -> libc::c_int {
    let mut go = 0u8;
    // SAFETY: a one-byte read into a local.
    let n = unsafe { libc::read(from, (&mut go as *mut u8).cast(), 1) };
    if n != 1 || go != b'1' {
        return 1;
    }
    let mut path = [0u8; 32];
    for (file, at) in [(&b"uid_map"[..], 0), (&b"gid_map"[..], 1)] {
        let len = proc_path(&mut path, pid, file);
        if write_proc_file(&path[..len], IDENTITY).is_err() {
            return 2 + at;
        }
    }
    0
}

/// Writes `/proc/<pid>/<file>\0` into `out` without allocating; returns its length with the
/// NUL.
fn proc_path(out: &mut [u8; 32], pid: libc::pid_t, file: &[u8]) -> usize {
    let mut digits = [0u8; 10];
    let (mut n, mut v) = (0, pid as u32);
    loop {
        digits[n] = b'0' + (v % 10) as u8;
        n += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let mut len = 0;
    let mut put = |b: u8| {
        out[len] = b;
        len += 1;
    };
    b"/proc/".iter().for_each(|&b| put(b));
    digits[..n].iter().rev().for_each(|&b| put(b));
    put(b'/');
    file.iter().for_each(|&b| put(b));
    put(0);
    len
}

/// Writes `data` to the NUL-terminated `path` in one write.
pub(crate) fn write_proc_file(path: &[u8], data: &[u8]) -> io::Result<()> {
    // SAFETY: NUL-terminated path; open/write/close are async-signal-safe.
    unsafe {
        let fd = libc::open(path.as_ptr().cast(), libc::O_WRONLY);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = libc::write(fd, data.as_ptr().cast(), data.len());
        libc::close(fd);
        if n != data.len() as isize {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_paths_are_built_without_allocating() {
        let mut out = [0u8; 32];
        let len = proc_path(&mut out, 4_000_123, b"uid_map");
        assert_eq!(&out[..len], b"/proc/4000123/uid_map\0");
        let len = proc_path(&mut out, 7, b"gid_map");
        assert_eq!(&out[..len], b"/proc/7/gid_map\0");
    }
}
