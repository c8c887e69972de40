//! Starting one simulated process: pipes for its output, the shared region at a fixed fd,
//! `LD_PRELOAD`, one CPU, no address-space randomisation, and (where the kernel lets us) its
//! own user and network namespaces so an escaped system call cannot reach a real network.

use crate::config::{Launch, Limits};
use crate::idmap::{enter_namespaces, IdMaps};
use crate::proto::{ENV_FD, ENV_SLOT};
use crate::workdir::View;
use std::cell::Cell;
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
    /// Program, arguments, environment, working directory and limits of the node.
    pub(crate) launch: &'a Launch,
    pub(crate) shim: &'a Path,
    pub(crate) region_fd: i32,
    pub(crate) slot: usize,
    pub(crate) cpu: Option<usize>,
    pub(crate) netns: bool,
    /// Map every user and group in the namespace (weft runs as root and `users = all`).
    pub(crate) all_users: bool,
    /// The node's simulated address (host byte order), given to `lo` in its namespace.
    pub(crate) ip: u32,
    /// The run's hosts file, bound over `/etc/hosts` in the node's mount namespace.
    pub(crate) hosts: Option<&'a std::ffi::CString>,
    /// The padded loader cache (`ldcache`), bound over `/etc/ld.so.cache` there.
    pub(crate) ld_cache: Option<&'a std::ffi::CString>,
}

fn env_name(bytes: &[u8]) -> &str {
    std::str::from_utf8(&bytes[..bytes.len() - 1]).expect("ascii env name")
}

/// The limits every node starts with, whatever weft's own are: programs size themselves by
/// them (Redis lowers `maxclients` and logs it under a low `RLIMIT_NOFILE`; the stack limit
/// places every mapping and sizes each thread's stack), so inherited ones would make one run
/// differ from machine to machine. Linux's usual defaults, (resource, soft, hard), but for
/// the descriptors' hard limit: 16,384, under what machines commonly allow (so no privilege is
/// needed to set it) and over what servers raise their soft limit to (Redis: 10,032).
const NODE_LIMITS: [(libc::__rlimit_resource_t, u64, u64); 9] = [
    (libc::RLIMIT_NOFILE, 1024, 16_384),
    (libc::RLIMIT_STACK, 8 << 20, libc::RLIM_INFINITY),
    (libc::RLIMIT_CORE, 0, libc::RLIM_INFINITY),
    (libc::RLIMIT_MEMLOCK, 8 << 20, 8 << 20),
    (libc::RLIMIT_AS, libc::RLIM_INFINITY, libc::RLIM_INFINITY),
    (libc::RLIMIT_DATA, libc::RLIM_INFINITY, libc::RLIM_INFINITY),
    (libc::RLIMIT_FSIZE, libc::RLIM_INFINITY, libc::RLIM_INFINITY),
    (libc::RLIMIT_CPU, libc::RLIM_INFINITY, libc::RLIM_INFINITY),
    (libc::RLIMIT_MSGQUEUE, 819_200, 819_200),
];

/// Between fork and exec: [`NODE_LIMITS`], then the node's memory (`RLIMIT_DATA`) and
/// CPU-time (`RLIMIT_CPU`: SIGXCPU at the limit, SIGKILL two seconds later) limits. Where a
/// hard limit may not be raised (weft without `CAP_SYS_RESOURCE`, under a lower one), the
/// machine's hard limit stays and the soft one is capped by it.
fn set_limits(limits: &Limits) -> io::Result<()> {
    let set = |resource, soft: u64, hard: u64| {
        let r = libc::rlimit { rlim_cur: soft, rlim_max: hard };
        // SAFETY: setrlimit with a valid struct is async-signal-safe.
        if unsafe { libc::setrlimit(resource, &r) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    };
    for (resource, soft, hard) in NODE_LIMITS {
        if set(resource, soft, hard).is_err() {
            let mut now = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
            // SAFETY: getrlimit into a local struct is async-signal-safe.
            unsafe { libc::getrlimit(resource, &mut now) };
            set(resource, soft.min(now.rlim_max), now.rlim_max)?;
        }
    }
    if limits.memory_bytes > 0 {
        set(libc::RLIMIT_DATA, limits.memory_bytes, limits.memory_bytes)?;
    }
    if limits.cpu_secs > 0 {
        set(libc::RLIMIT_CPU, limits.cpu_secs, limits.cpu_secs + 2)?;
    }
    Ok(())
}

/// Between fork and exec, after the standard streams and the region are in place: what else
/// a process inherits from whoever started weft, put as a process started by init has it, so
/// that a run does not depend on the launcher. Every other descriptor is closed at the exec
/// (a shell, a CI runner or a test harness leaves some open without close-on-exec, and each
/// one shifts the numbers the program's own `open`s and `socket`s get); every signal a
/// launcher ignored is back to its default (ignored dispositions survive `exec`); the umask
/// is 022 (file modes the program creates and reads back); the process leads a session and
/// process group of its own, as a service manager starts a daemon (weft's own may be led from
/// outside the run's pid namespace, where the kernel names it 0 and nothing can join it).
fn fresh_process_state() {
    // SAFETY: close_range, fcntl, sigaction, umask and setsid are async-signal-safe system calls
    // on plain integers and a zeroed local struct.
    unsafe {
        let cloexec = libc::CLOSE_RANGE_CLOEXEC as libc::c_int;
        let below = libc::syscall(libc::SYS_close_range, 3u32, CHILD_REGION_FD as u32 - 1, cloexec);
        let above =
            libc::syscall(libc::SYS_close_range, CHILD_REGION_FD as u32 + 1, u32::MAX, cloexec);
        if below != 0 || above != 0 {
            // Kernels before 5.11: one descriptor at a time, up to the limit just set.
            for fd in (3..NODE_LIMITS[0].1 as i32).filter(|&fd| fd != CHILD_REGION_FD) {
                libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
            }
        }
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        for sig in 1..65 {
            if sig != libc::SIGKILL && sig != libc::SIGSTOP {
                libc::sigaction(sig, &dfl, std::ptr::null_mut());
            }
        }
        libc::umask(0o022);
        libc::setsid();
    }
}

/// What the kernel said about the last process reaped by [`reap`] on this thread.
#[derive(Clone, Copy)]
struct Usage {
    pid: libc::pid_t,
    /// Peak resident set, KiB.
    max_rss_kib: u64,
    cpu_micros: u64,
}

thread_local! {
    /// The host reaps a process and judges its end on the same thread, right after.
    static LAST_REAPED: Cell<Option<Usage>> = const { Cell::new(None) };
}

/// `waitpid(pid, status, flags)` that also keeps the process's resource usage for
/// [`over_limit`]: answers what waitpid answers.
pub(crate) fn reap(pid: libc::pid_t, status: &mut i32, flags: i32) -> libc::pid_t {
    // SAFETY: an all-zero rusage is valid; wait4 on our own child fills it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; `status` is a valid out pointer.
    let r = unsafe { libc::wait4(pid, status, flags, &mut usage) };
    if r == pid {
        let micros = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
        LAST_REAPED.set(Some(Usage {
            pid,
            max_rss_kib: usage.ru_maxrss as u64,
            cpu_micros: micros(usage.ru_utime) + micros(usage.ru_stime),
        }));
    }
    r
}

/// Why process `pid`, just reaped with wait status `status` after ending badly, ran into one
/// of `limits`, if it did: killed by SIGXCPU or with its CPU time used up, or ended (by a
/// signal or a failing exit: a failed allocation) with its peak resident memory at three
/// quarters of its memory limit or more (the kernel's allocation failure itself is not
/// reported, so this is the sign that is left).
pub(crate) fn over_limit(pid: libc::pid_t, status: i32, limits: &Limits) -> Option<String> {
    let usage = LAST_REAPED.get().filter(|u| u.pid == pid)?;
    let signal = libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status));
    let cpu_used = limits.cpu_secs > 0 && usage.cpu_micros >= limits.cpu_secs * 1_000_000;
    if signal == Some(libc::SIGXCPU) || cpu_used {
        return Some(format!("used up its CPU-time limit of {}s", limits.cpu_secs));
    }
    let rss = usage.max_rss_kib.saturating_mul(1024);
    if limits.memory_bytes > 0 && rss.saturating_mul(4) >= limits.memory_bytes.saturating_mul(3) {
        let how = match signal {
            Some(sig) => format!("was killed by {}", signal_name(sig)),
            None => format!("exited with status {}", libc::WEXITSTATUS(status)),
        };
        return Some(format!(
            "{how} at its memory limit ({} MiB resident, limit {} MiB)",
            rss >> 20,
            limits.memory_bytes >> 20
        ));
    }
    None
}

fn signal_name(sig: i32) -> String {
    match sig {
        libc::SIGSEGV => "SIGSEGV".into(),
        libc::SIGBUS => "SIGBUS".into(),
        libc::SIGABRT => "SIGABRT".into(),
        libc::SIGKILL => "SIGKILL".into(),
        _ => format!("signal {sig}"),
    }
}

/// Whether a process started as simulated ones are (user and network namespaces, the id
/// maps), then `then`, runs /bin/true.
fn probe(then: impl FnMut() -> io::Result<()> + Send + Sync + 'static) -> bool {
    let mut then = then;
    let mut cmd = Command::new("/bin/true");
    cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    let maps = IdMaps::new(false);
    // SAFETY: the closure calls only async-signal-safe functions on data built before fork.
    unsafe {
        cmd.pre_exec(move || {
            enter_namespaces(&maps)?;
            then()
        });
    }
    cmd.status().map(|s| s.success()).unwrap_or(false)
}

/// Whether processes can get their own user and network namespaces here: probed once.
pub fn netns_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| probe(|| Ok(())))
}

/// Whether a process started as simulated ones are can make `view`'s bind (the probe binds
/// `/` itself at the view folder and so has no working directory to enter).
pub(crate) fn probe_view(view: &View) -> bool {
    let view = view.clone();
    probe(move || bind_view(&view, false))
}

/// Between fork and exec, in the new user namespace: a mount namespace of the process's own
/// (nothing propagates back), the real run folder bound at the view folder, (`enter`) the
/// node's working directory entered through it, so `getcwd` names the view, and a fresh
/// `/dev/shm`.
fn bind_view(view: &View, enter: bool) -> io::Result<()> {
    let err = || Err(io::Error::last_os_error());
    own_mounts()?;
    // SAFETY: mount/chdir are async-signal-safe; every path is NUL-terminated and was built
    // before the fork.
    unsafe {
        let (real, at) = (view.real.as_ptr(), view.at.as_ptr());
        if libc::mount(real, at, std::ptr::null(), libc::MS_BIND, std::ptr::null()) != 0 {
            return err();
        }
        if enter && libc::chdir(view.cwd.as_ptr()) != 0 {
            return err();
        }
        // The node's own /dev/shm (POSIX shared memory and semaphores are files there): what a
        // run leaves is gone with its last process, and two runs' same names cannot meet.
        // Best effort: without it the machine's /dev/shm is used.
        let (tmpfs, shm) = (c"tmpfs".as_ptr(), c"/dev/shm".as_ptr());
        let flags = libc::MS_NOSUID | libc::MS_NODEV;
        libc::mount(tmpfs, shm, tmpfs, flags, c"mode=1777".as_ptr().cast());
    }
    Ok(())
}

/// Between fork and exec, in the new user namespace: a mount namespace of the process's own,
/// private from the root down (nothing propagates back).
fn own_mounts() -> io::Result<()> {
    // SAFETY: unshare and mount are async-signal-safe; the path is a constant.
    unsafe {
        if libc::unshare(libc::CLONE_NEWNS) != 0 {
            return Err(io::Error::last_os_error());
        }
        let private = libc::MS_REC | libc::MS_PRIVATE;
        let root = c"/".as_ptr();
        if libc::mount(std::ptr::null(), root, std::ptr::null(), private, std::ptr::null()) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Whether a process started as simulated ones are gets its own `/run` (`privrun`).
pub(crate) fn probe_private_run() -> bool {
    probe(|| {
        own_mounts()?;
        match crate::privrun::mount_private_run() {
            true => Ok(()),
            false => Err(io::Error::other("no private /run")),
        }
    })
}

/// A netlink RTM_NEWADDR request giving `lo` (ifindex 1) the address `ip`/32, built before
/// fork. With it, glibc's getaddrinfo(AI_ADDRCONFIG) — the default for NULL hints — sees a
/// configured IPv4 address in the otherwise empty namespace, as it would on a real host.
fn add_address_request(ip: u32) -> [u8; 40] {
    let mut m = [0u8; 40];
    let flags = (libc::NLM_F_REQUEST | libc::NLM_F_CREATE | libc::NLM_F_REPLACE) as u16;
    m[0..4].copy_from_slice(&40u32.to_ne_bytes()); // nlmsg_len
    m[4..6].copy_from_slice(&libc::RTM_NEWADDR.to_ne_bytes()); // nlmsg_type
    m[6..8].copy_from_slice(&flags.to_ne_bytes()); // nlmsg_flags
    m[8..12].copy_from_slice(&1u32.to_ne_bytes()); // nlmsg_seq
    m[16] = libc::AF_INET as u8; // ifa_family
    m[17] = 32; // ifa_prefixlen
    m[19] = libc::RT_SCOPE_HOST; // ifa_scope
    m[20..24].copy_from_slice(&1u32.to_ne_bytes()); // ifa_index: lo
    for (at, kind) in [(24, libc::IFA_LOCAL), (32, libc::IFA_ADDRESS)] {
        m[at..at + 2].copy_from_slice(&8u16.to_ne_bytes());
        m[at + 2..at + 4].copy_from_slice(&kind.to_ne_bytes());
        m[at + 4..at + 8].copy_from_slice(&ip.to_be_bytes());
    }
    m
}

/// Between fork and exec, inside the new namespace: `lo` up, with the node's address. Best
/// effort: a failure only means getaddrinfo(AI_ADDRCONFIG) may find no IPv4 address.
fn configure_loopback(request: &[u8; 40]) {
    // SAFETY: socket/ioctl/sendto/close with local, initialised buffers; all async-signal-safe.
    unsafe {
        let s = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if s >= 0 {
            let mut ifr: libc::ifreq = std::mem::zeroed();
            for (i, b) in b"lo\0".iter().enumerate() {
                ifr.ifr_name[i] = *b as libc::c_char;
            }
            ifr.ifr_ifru.ifru_flags = (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            libc::ioctl(s, libc::SIOCSIFFLAGS, &ifr);
            libc::close(s);
        }
        let nl = libc::socket(libc::AF_NETLINK, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0);
        if nl >= 0 {
            let mut to: libc::sockaddr_nl = std::mem::zeroed();
            to.nl_family = libc::AF_NETLINK as libc::sa_family_t;
            libc::sendto(
                nl,
                request.as_ptr().cast(),
                request.len(),
                0,
                &to as *const libc::sockaddr_nl as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            );
            libc::close(nl);
        }
    }
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

/// The search path every process gets.
const PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// The environment every process starts from, the same wherever and by whom weft was
/// started (weft's own environment — its locale, terminal, home, cargo's variables — would
/// otherwise change what a program does: glibc reads `LANG` at `setlocale`, for one):
/// `PATH`, `HOME` and `PWD` naming the node's working directory as the process sees it, and
/// `TZ=UTC0` (unset, glibc reads the real machine's `/etc/localtime` with a call the shim
/// cannot see, and log lines' local times would follow it). The group's `env` is added on top.
fn base_env(launch: &Launch) -> [(&'static str, String); 4] {
    let cwd = match (&launch.view, &launch.cwd) {
        (Some(v), _) => v.cwd.to_string_lossy().into_owned(),
        (None, Some(dir)) => dir.to_string_lossy().into_owned(),
        (None, None) => std::env::current_dir()
            .map(|d| d.to_string_lossy().into_owned())
            .unwrap_or_else(|_| "/".into()),
    };
    [("PATH", PATH.to_string()), ("HOME", cwd.clone()), ("PWD", cwd), ("TZ", "UTC0".into())]
}

/// `LD_PRELOAD`: the shim first (the first preloaded library's definitions win, so its hooks
/// are the ones the program calls), then the libraries the group's `env` preloads, in order.
fn preload(shim: &Path, env: &[(String, String)]) -> std::ffi::OsString {
    let mut list = shim.as_os_str().to_owned();
    let asked = env.iter().rev().find(|(k, _)| k == "LD_PRELOAD").map(|(_, v)| v.as_str());
    for lib in asked.unwrap_or("").split([':', ' ']).filter(|l| !l.is_empty()) {
        list.push(":");
        list.push(lib);
    }
    list
}

pub(crate) fn spawn(spec: &SpawnSpec<'_>) -> io::Result<Spawned> {
    let (read, write) = pipe()?;
    let write2 = write.try_clone()?;
    let launch = spec.launch;
    let mut cmd = Command::new(&launch.program);
    cmd.args(&launch.args)
        .env_clear()
        .envs(base_env(launch))
        .envs(launch.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::from(write))
        .stderr(Stdio::from(write2))
        .env("LD_PRELOAD", preload(spec.shim, &launch.env))
        .env(env_name(ENV_FD), CHILD_REGION_FD.to_string())
        .env(env_name(ENV_SLOT), spec.slot.to_string());
    let maps = IdMaps::new(spec.all_users);
    let address = add_address_request(spec.ip);
    let region_fd = spec.region_fd;
    let cpu = spec.cpu;
    if let Some(dir) = &launch.cwd {
        cmd.current_dir(dir);
    }
    let netns = spec.netns;
    let view = launch.view.clone().filter(|_| netns);
    let hosts = spec.hosts.cloned();
    let ld_cache = spec.ld_cache.cloned();
    let limits = launch.limits;
    // SAFETY: the closure runs between fork and exec and calls only async-signal-safe
    // functions (unshare, mount, chdir, open/write/close, sched_setaffinity, personality, prctl, dup2,
    // setrlimit) on data prepared before the fork.
    unsafe {
        cmd.pre_exec(move || {
            if netns {
                enter_namespaces(&maps)?;
                configure_loopback(&address);
            }
            match &view {
                Some(view) => {
                    bind_view(view, true)?;
                    crate::privtmp::mount_private_tmp(view);
                    crate::privvartmp::bind(view);
                }
                None if netns => own_mounts()?,
                None => {}
            }
            if netns {
                crate::privrun::mount_private_run();
                if let Some(file) = &ld_cache {
                    crate::ldcache::bind(file);
                }
                if let Some(file) = &hosts {
                    crate::hostsfile::bind(file);
                }
            }
            if let Some(cpu) = cpu {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(cpu, &mut set);
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
            }
            libc::personality(libc::ADDR_NO_RANDOMIZE as libc::c_ulong);
            set_limits(&limits)?;
            // If the host thread dies (a weft bug), its processes die with it.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::dup2(region_fd, CHILD_REGION_FD) < 0 {
                return Err(io::Error::last_os_error());
            }
            fresh_process_state();
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
