//! Starting one simulated process: pipes for its output, the shared region at a fixed fd,
//! `LD_PRELOAD`, one CPU, no address-space randomisation, and (where the kernel lets us) its
//! own user and network namespaces so an escaped system call cannot reach a real network.

use crate::proto::{ENV_FD, ENV_SLOT};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The fd number at which a child finds the shared region (the shim closes it after mapping,
/// so the program's own fd numbers are what they would be natively).
pub(crate) const CHILD_REGION_FD: i32 = 1021;

pub(crate) struct Spawned {
    pub(crate) pid: libc::pid_t,
    /// Read end of the pipe carrying the child's stdout and stderr (non-blocking).
    pub(crate) out: OwnedFd,
}

pub(crate) struct SpawnSpec<'a> {
    pub(crate) program: &'a Path,
    pub(crate) args: &'a [String],
    pub(crate) shim: &'a Path,
    pub(crate) region_fd: i32,
    pub(crate) slot: usize,
    pub(crate) cpu: Option<usize>,
    pub(crate) netns: bool,
}

fn env_name(bytes: &[u8]) -> &str {
    std::str::from_utf8(&bytes[..bytes.len() - 1]).expect("ascii env name")
}

/// Whether processes can get their own user and network namespaces here: probed once by
/// starting /bin/true exactly as a simulated process is started (unshare, then the id maps).
pub fn netns_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        let mut cmd = Command::new("/bin/true");
        cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        let maps = IdMaps::new();
        // SAFETY: the closure calls only async-signal-safe functions on data built before fork.
        unsafe {
            cmd.pre_exec(move || enter_namespaces(&maps));
        }
        cmd.status().map(|s| s.success()).unwrap_or(false)
    })
}

/// `/proc/self/{uid,gid}_map` contents mapping the caller's ids to themselves, built before a
/// fork (nothing between fork and exec may allocate).
struct IdMaps {
    uid: Vec<u8>,
    gid: Vec<u8>,
}

impl IdMaps {
    fn new() -> IdMaps {
        // SAFETY: getuid/getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        IdMaps {
            uid: format!("0 {uid} 1\n").into_bytes(),
            gid: format!("0 {gid} 1\n").into_bytes(),
        }
    }
}

/// Between fork and exec: a new user and network namespace, ids mapped to the caller's.
fn enter_namespaces(maps: &IdMaps) -> io::Result<()> {
    // SAFETY: unshare is async-signal-safe; failure is reported.
    if unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) } != 0 {
        return Err(io::Error::last_os_error());
    }
    write_proc_file(b"/proc/self/setgroups\0", b"deny")?;
    write_proc_file(b"/proc/self/uid_map\0", &maps.uid)?;
    write_proc_file(b"/proc/self/gid_map\0", &maps.gid)
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two fds on success.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both fds are fresh and owned by us.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Writes `data` to the file at NUL-terminated `path` with raw calls (used between fork and
/// exec, where only async-signal-safe functions may run).
fn write_proc_file(path: &[u8], data: &[u8]) -> io::Result<()> {
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

pub(crate) fn spawn(spec: &SpawnSpec<'_>) -> io::Result<Spawned> {
    let (read, write) = pipe()?;
    let write2 = write.try_clone()?;
    let mut cmd = Command::new(spec.program);
    cmd.args(spec.args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(write))
        .stderr(Stdio::from(write2))
        .env("LD_PRELOAD", spec.shim)
        .env(env_name(ENV_FD), CHILD_REGION_FD.to_string())
        .env(env_name(ENV_SLOT), spec.slot.to_string());
    let maps = IdMaps::new();
    let region_fd = spec.region_fd;
    let cpu = spec.cpu;
    let netns = spec.netns;
    // SAFETY: the closure runs between fork and exec and calls only async-signal-safe
    // functions (unshare, open/write/close, sched_setaffinity, personality, prctl, dup2) on
    // data prepared before the fork.
    unsafe {
        cmd.pre_exec(move || {
            if netns {
                enter_namespaces(&maps)?;
            }
            if let Some(cpu) = cpu {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(cpu, &mut set);
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
            }
            libc::personality(libc::ADDR_NO_RANDOMIZE as libc::c_ulong);
            // If the host thread dies (a weft bug), its processes die with it.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::dup2(region_fd, CHILD_REGION_FD) < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd.spawn()?;
    let pid = child.id() as libc::pid_t;
    drop(child); // reaped with waitpid by the host, never by std
                 // SAFETY: setting O_NONBLOCK on our own pipe end.
    unsafe {
        let fl = libc::fcntl(read.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(read.as_raw_fd(), libc::F_SETFL, fl | libc::O_NONBLOCK);
    }
    Ok(Spawned { pid, out: read })
}
