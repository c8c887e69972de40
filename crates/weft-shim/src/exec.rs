//! Creating and replacing processes: `fork` and `vfork` (the child is a simulated process on
//! the node, on a slot the host assigns), the `exec` family (the new image keeps the shim:
//! `LD_PRELOAD`, the region fd and the slot are passed on, and it says hello on the same
//! slot), and `system` and `posix_spawn*` built from those two (`popen` is [`crate::popen`]'s).

use crate::prelude::*;
use crate::process::wait_child;
use crate::slot::{become_child, slot_ptr, BASE, REGION};

extern "C" {
    static environ: *const *const c_char;
}

/// Forks a simulated child: announce, fork for real, report. The child answers 0 once the host
/// knows it; the parent the child's virtual pid (or -1 with errno).
///
/// # Safety
/// Active, inside a hook (the guard held), on the thread holding the baton.
pub(crate) unsafe fn fork_simulated() -> libc::pid_t {
    fork_simulated_by(real!(fork: fn() -> libc::pid_t))
}

/// [`fork_simulated`] with `real_fork` (libc's `fork`, or `_Fork`, which skips the `atfork`
/// handlers) making the real child.
///
/// # Safety
/// As [`fork_simulated`].
unsafe fn fork_simulated_by(real_fork: unsafe extern "C" fn() -> libc::pid_t) -> libc::pid_t {
    let r = handoff(OP_FORK);
    if r < 0 {
        return ret_errno(r) as libc::pid_t;
    }
    let k = r as usize;
    SIMULATED_FORK.store(true, Ordering::Relaxed);
    let pid = real_fork();
    SIMULATED_FORK.store(false, Ordering::Relaxed);
    if pid == 0 {
        become_child(k);
        return 0;
    }
    let errno = *libc::__errno_location();
    let s = slot();
    s.args[0] = if pid < 0 { -(errno as i64) } else { pid as i64 };
    s.args[1] = k as i64;
    let v = handoff(OP_FORKED);
    if pid < 0 {
        set_errno(errno);
        return -1;
    }
    v as libc::pid_t
}

/// True while the shim itself forks: a fork whose `atfork` handlers run with this false was
/// made by libc's `fork` reached without its symbol (glibc's own callers, e.g. sunrpc's
/// `_openchild`, or a `dlsym` on libc's handle), and its child would run unseen.
static SIMULATED_FORK: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

/// Registers the `atfork` handlers that catch forks the hooks did not see (once per image).
pub(crate) fn watch_unseen_forks() {
    // SAFETY: registering plain functions; they only read atomics and end the run.
    unsafe { libc::pthread_atfork(None, Some(unseen_fork_parent), Some(unseen_fork_child)) };
}

/// In the parent of an unseen fork: the run ends as unsupported, naming the call.
extern "C" fn unseen_fork_parent() {
    if !SIMULATED_FORK.load(Ordering::Relaxed) && active() {
        unsupported(
            b"fork(): a fork made inside glibc, not through the fork symbol (e.g. sunrpc), is not simulated",
            libc::SYS_clone,
            0,
        );
    }
}

/// In the child of an unseen fork: leaves at once, before running any of the program's code.
extern "C" fn unseen_fork_child() {
    if !SIMULATED_FORK.load(Ordering::Relaxed) && active() {
        sys::exit_group(127);
    }
}

#[no_mangle]
pub unsafe extern "C" fn fork() -> libc::pid_t {
    if let Some(_g) = Guard::enter() {
        if active() {
            return fork_simulated();
        }
    }
    real!(fork: fn() -> libc::pid_t)()
}

/// glibc's `_Fork` (a fork without the `atfork` handlers), as `fork`.
#[no_mangle]
pub unsafe extern "C" fn _Fork() -> libc::pid_t {
    if let Some(_g) = Guard::enter() {
        if active() {
            return fork_simulated_by(real!(_Fork: fn() -> libc::pid_t));
        }
    }
    real!(_Fork: fn() -> libc::pid_t)()
}

/// `daemon` as glibc makes it, from a simulated fork (glibc's own calls its internal fork,
/// which no hook sees): the parent exits 0, the child starts a session, moves to `/` unless
/// `nochdir` and puts `/dev/null` on 0, 1 and 2 unless `noclose`.
#[no_mangle]
pub unsafe extern "C" fn daemon(nochdir: c_int, noclose: c_int) -> c_int {
    {
        let Some(_g) = Guard::enter() else {
            return real!(daemon: fn(c_int, c_int) -> c_int)(nochdir, noclose);
        };
        if !active() {
            drop(_g);
            return real!(daemon: fn(c_int, c_int) -> c_int)(nochdir, noclose);
        }
        match fork_simulated() {
            -1 => return -1,
            0 => {}
            _ => {
                drop(_g);
                crate::process::_exit(0);
            }
        }
    }
    if libc::setsid() < 0 {
        return -1;
    }
    if nochdir == 0 && libc::chdir(c"/".as_ptr()) < 0 {
        return -1;
    }
    if noclose == 0 {
        let fd = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if fd < 0 {
            return -1;
        }
        for target in 0..3 {
            libc::dup2(fd, target);
        }
        if fd > 2 {
            libc::close(fd);
        }
    }
    0
}

/// `forkpty` as glibc makes it (`openpty`, fork, `login_tty` in the child), from a simulated
/// fork; the terminal is a real one.
#[no_mangle]
pub unsafe extern "C" fn forkpty(
    amaster: *mut c_int,
    name: *mut c_char,
    termp: *const libc::termios,
    winp: *const libc::winsize,
) -> libc::pid_t {
    let pass = || {
        let real = real!(forkpty: fn(
            *mut c_int, *mut c_char, *const libc::termios, *const libc::winsize
        ) -> libc::pid_t);
        real(amaster, name, termp, winp)
    };
    let (mut master, mut slave) = (-1, -1);
    {
        let Some(_g) = Guard::enter() else { return pass() };
        if !active() {
            drop(_g);
            return pass();
        }
        if libc::openpty(&mut master, &mut slave, name, termp, winp) < 0 {
            return -1;
        }
        match fork_simulated() {
            -1 => {
                libc::close(master);
                libc::close(slave);
                return -1;
            }
            0 => {}
            pid => {
                libc::close(slave);
                *amaster = master;
                return pid;
            }
        }
    }
    libc::close(master);
    if libc::login_tty(slave) < 0 {
        crate::process::_exit(1);
    }
    0
}

/// As `fork`: the child gets a copy of the memory instead of sharing it until it execs or
/// exits, which a correct `vfork` caller cannot tell apart.
#[no_mangle]
pub unsafe extern "C" fn vfork() -> libc::pid_t {
    fork()
}

/// Index of the calling thread's slot.
fn my_slot_index() -> usize {
    let base = BASE.load(Ordering::Acquire) as usize;
    let mine = slot_ptr() as usize;
    (0..MAX_SLOTS).find(|&k| base + slot_offset(k) == mine).unwrap_or(0)
}

/// Writes `name=value` (decimal) into `buf` at `*at`, NUL-terminated; answers its start.
fn put_var(buf: &mut [u8], at: &mut usize, name: &[u8], value: u64) -> *const c_char {
    let start = *at;
    let name = &name[..name.len() - 1]; // without the NUL
    let mut t = crate::text::Text::new(&mut buf[start..]);
    t.put(name).put(b"=").num(value).put(b"\0");
    *at += t.len();
    buf[start..].as_ptr().cast()
}

unsafe fn starts_with(entry: *const c_char, prefix: &[u8]) -> bool {
    prefix.iter().enumerate().all(|(i, &b)| *entry.add(i) as u8 == b)
}

const ENV_MAX: usize = 4096;

/// The value of the last `name=` entry (`name` with its `=`) of the environment `e`, or null.
unsafe fn env_value(mut e: *const *const c_char, name: &[u8]) -> *const c_char {
    let mut found = ptr::null();
    while !e.is_null() && !(*e).is_null() {
        if starts_with(*e, name) {
            found = (*e).add(name.len());
        }
        e = e.add(1);
    }
    found
}

/// Appends the program's environment `e` to `env[..n]` but the entries the shim writes itself
/// (the data directories' and `LD_PRELOAD` only when it does); answers the new count.
unsafe fn copy_env(
    env: &mut [*const c_char; ENV_MAX],
    mut n: usize,
    mut e: *const *const c_char,
    own_dirs: bool,
    own_preload: bool,
) -> usize {
    while !e.is_null() && !(*e).is_null() {
        let entry = *e;
        let ours = starts_with(entry, b"WEFT_SHM_FD=")
            || starts_with(entry, b"WEFT_CREDS=")
            || starts_with(entry, b"WEFT_FDS=")
            || starts_with(entry, b"WEFT_SLOT=")
            || (own_dirs && starts_with(entry, b"WEFT_DATA_DIRS="))
            || (own_preload && starts_with(entry, b"LD_PRELOAD="));
        if !ours {
            if n + 1 >= ENV_MAX {
                unsupported(b"execve(): more than 4096 environment variables", -1, 0);
            }
            env[n] = entry;
            n += 1;
        }
        e = e.add(1);
    }
    n
}

/// `execve` keeping the shim: the environment gets `LD_PRELOAD` (the shim first, then what the
/// program's environment preloads: [`crate::preload`]), the region fd and this thread's slot,
/// and the region fd survives the exec. Answers -1 with errno when the exec fails (the process
/// goes on as before).
unsafe fn exec_simulated(
    path: *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    let region = REGION.load(Ordering::Relaxed) as c_int;
    if region < 0 || libc::fcntl(region, libc::F_SETFD, 0) != 0 {
        unsupported(
            b"execve(): the program closed the shim's region descriptor, so the new image \
              cannot rejoin the simulation",
            libc::SYS_execve,
            0,
        );
    }
    if !crate::slot::is_region(region) {
        unsupported(
            b"execve(): the program put another descriptor at the shim's region number (a \
              dup2 with no descriptor free to move the region to), so the new image cannot \
              rejoin the simulation",
            libc::SYS_execve,
            0,
        );
    }
    // What the shim knows of each descriptor goes with the image (`crate::execfds`).
    let mut fds = [0u8; crate::execfds::ENV_LEN];
    let carry_fds = crate::execfds::env_entry(&mut fds);
    let mut vars = [0u8; 128];
    let mut at = 0;
    let mut env: [*const c_char; ENV_MAX] = [ptr::null(); ENV_MAX];
    let mut n = 0;
    env[n] = put_var(&mut vars, &mut at, ENV_FD, region as u64);
    n += 1;
    env[n] = put_var(&mut vars, &mut at, ENV_SLOT, my_slot_index() as u64);
    n += 1;
    let e = if envp.is_null() { environ } else { envp };
    let mut preload_buf = [0u8; crate::preload::ENV_LEN];
    let preload = crate::preload::entry(&mut preload_buf, env_value(e, b"LD_PRELOAD="));
    if let Some(entry) = preload {
        env[n] = entry;
        n += 1;
    }
    // The data directories go with the image even if the program cleared its environment.
    let mut dirs = [0u8; 4200];
    let value = crate::datadir::env_value();
    if !value.is_empty() {
        let name = b"WEFT_DATA_DIRS=";
        dirs[..name.len()].copy_from_slice(name);
        dirs[name.len()..name.len() + value.len()].copy_from_slice(value);
        env[n] = dirs.as_ptr().cast();
        n += 1;
    }
    // The ids the shim keeps (`crate::creds`) go with the image, as the kernel's would.
    let mut creds = [0u8; crate::creds::ENV_LEN];
    if crate::creds::env_entry(&mut creds) {
        env[n] = creds.as_ptr().cast();
        n += 1;
    }
    if carry_fds {
        env[n] = fds.as_ptr().cast();
        n += 1;
    }
    n = copy_env(&mut env, n, e, !value.is_empty(), preload.is_some());
    env[n] = ptr::null();
    crate::tsc::across_exec(false);
    let r = sys::raw(libc::SYS_execve, [path as i64, argv as i64, env.as_ptr() as i64, 0, 0, 0]);
    let errno = *libc::__errno_location();
    crate::tsc::across_exec(true);
    libc::fcntl(region, libc::F_SETFD, libc::FD_CLOEXEC);
    set_errno(errno);
    r as c_int
}

#[no_mangle]
pub unsafe extern "C" fn execve(
    path: *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            return exec_simulated(path, argv, envp);
        }
    }
    sys::raw(libc::SYS_execve, [path as i64, argv as i64, envp as i64, 0, 0, 0]) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn execv(path: *const c_char, argv: *const *const c_char) -> c_int {
    execve(path, argv, environ)
}

/// Tries `file` in every directory of `PATH` (or the default path), as glibc's `execvpe` does
/// (without its `ENOEXEC` retry through `/bin/sh`).
unsafe fn exec_search(
    file: *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    if file.is_null() || *file == 0 {
        set_errno(libc::ENOENT);
        return -1;
    }
    if !libc::strchr(file, b'/' as c_int).is_null() {
        return execve(file, argv, envp);
    }
    let mut buf = [0u8; 4096];
    let mut eacces = false;
    let found = each_in_path(file, &mut buf, |candidate| {
        execve(candidate, argv, envp);
        let e = *libc::__errno_location();
        eacces |= e == libc::EACCES;
        !matches!(e, libc::ENOENT | libc::ENOTDIR | libc::EACCES | libc::ESTALE | libc::ENODEV)
    });
    if !found {
        set_errno(if eacces { libc::EACCES } else { libc::ENOENT });
    }
    -1
}

/// Calls `f` with `dir/file` for each directory of `PATH` until it answers true; answers
/// whether it did.
unsafe fn each_in_path(
    file: *const c_char,
    buf: &mut [u8; 4096],
    mut f: impl FnMut(*const c_char) -> bool,
) -> bool {
    let path = libc::getenv(c"PATH".as_ptr());
    let path: *const c_char = if path.is_null() { c"/bin:/usr/bin".as_ptr() } else { path };
    let flen = libc::strlen(file);
    let mut p = path;
    loop {
        let end = libc::strchrnul(p, b':' as c_int);
        let dlen = end.offset_from(p) as usize;
        if dlen + flen + 2 <= buf.len() {
            let at = if dlen == 0 {
                buf[0] = b'.';
                1
            } else {
                core::ptr::copy_nonoverlapping(p.cast::<u8>(), buf.as_mut_ptr(), dlen);
                dlen
            };
            buf[at] = b'/';
            core::ptr::copy_nonoverlapping(file.cast::<u8>(), buf[at + 1..].as_mut_ptr(), flen);
            buf[at + 1 + flen] = 0;
            if f(buf.as_ptr().cast()) {
                return true;
            }
        }
        if *end == 0 {
            return false;
        }
        p = end.add(1);
    }
}

#[no_mangle]
pub unsafe extern "C" fn execvp(file: *const c_char, argv: *const *const c_char) -> c_int {
    exec_search(file, argv, environ)
}

#[no_mangle]
pub unsafe extern "C" fn execvpe(
    file: *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    exec_search(file, argv, envp)
}

/// The variadic `execl*`: on x86-64 a variadic call passes its pointer arguments exactly as a
/// call with that many fixed ones does, so these take up to `LIST_MAX` and stop at the NULL.
const LIST_MAX: usize = 24;

type P = *const c_char;

unsafe fn collect(list: [P; LIST_MAX], argv: &mut [P; LIST_MAX + 1]) -> Option<usize> {
    let n = list.iter().position(|p| p.is_null())?;
    argv[..n].copy_from_slice(&list[..n]);
    argv[n] = ptr::null();
    Some(n)
}

fn too_many() -> ! {
    unsupported(b"execl(): more than 23 arguments", libc::SYS_execve, 0)
}

/// How an `execl*` finds its program and environment.
#[derive(Clone, Copy)]
enum ListExec {
    /// `execl`: a path, this process's environment.
    Path,
    /// `execlp`: searched on `PATH`, this process's environment.
    Search,
    /// `execle`: a path, the environment after the NULL that ends the arguments.
    Env,
}

/// The one body of the three: the arguments up to their NULL become `argv`.
unsafe fn exec_list(target: P, list: [P; LIST_MAX], how: ListExec) -> c_int {
    let mut argv = [ptr::null(); LIST_MAX + 1];
    let Some(n) = collect(list, &mut argv) else { too_many() };
    match how {
        ListExec::Path => execve(target, argv.as_ptr(), environ),
        ListExec::Search => exec_search(target, argv.as_ptr(), environ),
        ListExec::Env => {
            if n + 1 >= LIST_MAX {
                too_many();
            }
            execve(target, argv.as_ptr(), list[n + 1] as *const *const c_char)
        }
    }
}

/// Defines a variadic `execl*` as a function of `LIST_MAX` pointer arguments after the first.
macro_rules! exec_list_fn {
    ($name:ident, $how:expr) => {
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $name(
            target: P,
            a0: P,
            a1: P,
            a2: P,
            a3: P,
            a4: P,
            a5: P,
            a6: P,
            a7: P,
            a8: P,
            a9: P,
            a10: P,
            a11: P,
            a12: P,
            a13: P,
            a14: P,
            a15: P,
            a16: P,
            a17: P,
            a18: P,
            a19: P,
            a20: P,
            a21: P,
            a22: P,
            a23: P,
        ) -> c_int {
            let list = [
                a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17,
                a18, a19, a20, a21, a22, a23,
            ];
            exec_list(target, list, $how)
        }
    };
}

exec_list_fn!(execl, ListExec::Path);
exec_list_fn!(execlp, ListExec::Search);
exec_list_fn!(execle, ListExec::Env);

/// `system`: `/bin/sh -c cmd` in a simulated child, waited for in virtual time.
#[no_mangle]
pub unsafe extern "C" fn system(cmd: *const c_char) -> c_int {
    let pid = {
        let Some(_g) = Guard::enter() else {
            return real!(system: fn(*const c_char) -> c_int)(cmd);
        };
        if !active() {
            drop(_g);
            return real!(system: fn(*const c_char) -> c_int)(cmd);
        }
        if cmd.is_null() {
            return 1; // a shell is available
        }
        fork_simulated()
    };
    if pid == 0 {
        let argv = [c"sh".as_ptr(), c"-c".as_ptr(), cmd, ptr::null()];
        execve(c"/bin/sh".as_ptr(), argv.as_ptr(), environ);
        crate::process::_exit(127);
    }
    if pid < 0 {
        return -1;
    }
    wait_status(pid)
}

/// Waits (in virtual time, through signals) for child `pid` to end: its status, or -1 with
/// errno (`system`, `pclose`).
pub(crate) unsafe fn wait_status(pid: libc::pid_t) -> c_int {
    let mut status = 0;
    loop {
        if waitpid_hooked(pid, &mut status) == pid {
            return status;
        }
        if *libc::__errno_location() != libc::EINTR {
            return -1;
        }
    }
}

unsafe fn waitpid_hooked(pid: libc::pid_t, status: &mut c_int) -> libc::pid_t {
    let Some(_g) = Guard::enter() else { return -1 };
    wait_child(pid, status, 0, ptr::null_mut())
}

/// glibc's `posix_spawn_file_actions_t` (2.36): the actions array and its length.
#[repr(C)]
struct FileActions {
    allocated: c_int,
    used: c_int,
    actions: *const u8,
}

/// glibc's `struct __spawn_action`: a tag, then a union at offset 8; 32 bytes each.
const ACTION_SIZE: usize = 32;
const DO_CLOSE: c_int = 0;
const DO_DUP2: c_int = 1;
const DO_OPEN: c_int = 2;
const DO_CHDIR: c_int = 3;
const DO_FCHDIR: c_int = 4;
const DO_CLOSEFROM: c_int = 5;

/// In the child: runs the file actions through the hooks (so the host sees simulated sockets
/// closed). Answers false on the first that fails (errno set).
unsafe fn apply_file_actions(fa: *const c_void) -> bool {
    if fa.is_null() {
        return true;
    }
    let fa = &*(fa as *const FileActions);
    for i in 0..fa.used.max(0) as usize {
        let a = fa.actions.add(i * ACTION_SIZE);
        let int = |off: usize| *(a.add(off) as *const c_int);
        let ptr_at = |off: usize| *(a.add(off) as *const *const c_char);
        let ok = match int(0) {
            DO_CLOSE => {
                libc::close(int(8));
                true
            }
            DO_DUP2 if int(8) == int(12) => libc::fcntl(int(8), libc::F_SETFD, 0) == 0,
            DO_DUP2 => {
                crate::io::make_room_at(int(8), int(12));
                libc::dup2(int(8), int(12)) >= 0
            }
            DO_OPEN => {
                let fd = libc::open(ptr_at(16), int(24), int(28) as libc::mode_t);
                if fd >= 0 && fd != int(8) {
                    crate::io::make_room_at(fd, int(8));
                    let r = libc::dup2(fd, int(8));
                    libc::close(fd);
                    r >= 0
                } else {
                    fd >= 0
                }
            }
            DO_CHDIR => libc::chdir(ptr_at(8)) == 0,
            DO_FCHDIR => libc::fchdir(int(8)) == 0,
            DO_CLOSEFROM => {
                for fd in int(8)..crate::fdtable::FD_MAX as c_int {
                    if fd != REGION.load(Ordering::Relaxed) as c_int {
                        libc::close(fd);
                    }
                }
                true
            }
            _ => unsupported(b"posix_spawn(): an unknown file action", -1, 0),
        };
        if !ok {
            return false;
        }
    }
    true
}

/// In the child: the attributes `posix_spawn` honours (signal mask, defaults, group, session).
unsafe fn apply_attrs(attr: *const libc::posix_spawnattr_t) -> bool {
    if attr.is_null() {
        return true;
    }
    let mut flags: libc::c_short = 0;
    libc::posix_spawnattr_getflags(attr, &mut flags);
    let flags = flags as c_int;
    if flags & libc::POSIX_SPAWN_SETSIGMASK != 0 {
        let mut set: libc::sigset_t = core::mem::zeroed();
        libc::posix_spawnattr_getsigmask(attr, &mut set);
        libc::sigprocmask(libc::SIG_SETMASK, &set, ptr::null_mut());
    }
    if flags & libc::POSIX_SPAWN_SETSIGDEF != 0 {
        let mut set: libc::sigset_t = core::mem::zeroed();
        libc::posix_spawnattr_getsigdefault(attr, &mut set);
        for sig in 1..65 {
            if libc::sigismember(&set, sig) == 1 {
                libc::signal(sig, libc::SIG_DFL);
            }
        }
    }
    if flags & libc::POSIX_SPAWN_SETPGROUP != 0 {
        let mut pg: libc::pid_t = 0;
        libc::posix_spawnattr_getpgroup(attr, &mut pg);
        if libc::setpgid(0, pg) != 0 {
            return false;
        }
    }
    if flags & libc::POSIX_SPAWN_SETSID as c_int != 0 && libc::setsid() < 0 {
        return false;
    }
    true
}

/// `posix_spawn` / `posix_spawnp` as fork + actions + exec in a simulated child. An exec that
/// cannot work (no such file, not executable) is found before forking and answered as glibc
/// does; a later failure ends the child with status 127.
unsafe fn spawn(
    pid: *mut libc::pid_t,
    path: *const c_char,
    actions: *const c_void,
    attr: *const c_void,
    argv: *const *mut c_char,
    envp: *const *mut c_char,
    search: bool,
) -> Option<c_int> {
    let mut buf = [0u8; 4096];
    let target: *const c_char = if search && libc::strchr(path, b'/' as c_int).is_null() {
        let found = each_in_path(path, &mut buf, |c| libc::access(c, libc::X_OK) == 0);
        if !found {
            return Some(libc::ENOENT);
        }
        buf.as_ptr().cast()
    } else {
        path
    };
    if libc::access(target, libc::X_OK) != 0 {
        return Some(*libc::__errno_location());
    }
    let child = {
        let _g = Guard::enter()?;
        if !active() {
            return None;
        }
        fork_simulated()
    };
    if child < 0 {
        return Some(*libc::__errno_location());
    }
    if child == 0 {
        if apply_attrs(attr.cast()) && apply_file_actions(actions) {
            let env = if envp.is_null() { environ } else { envp.cast() };
            execve(target, argv.cast(), env);
        }
        crate::process::_exit(127);
    }
    if !pid.is_null() {
        *pid = child;
    }
    Some(0)
}

#[no_mangle]
pub unsafe extern "C" fn posix_spawn(
    pid: *mut libc::pid_t,
    path: *const c_char,
    actions: *const c_void,
    attr: *const c_void,
    argv: *const *mut c_char,
    envp: *const *mut c_char,
) -> c_int {
    if active() {
        if let Some(r) = spawn(pid, path, actions, attr, argv, envp, false) {
            return r;
        }
    }
    real!(posix_spawn: fn(
        *mut libc::pid_t, *const c_char, *const c_void, *const c_void,
        *const *mut c_char, *const *mut c_char
    ) -> c_int)(pid, path, actions, attr, argv, envp)
}

#[no_mangle]
pub unsafe extern "C" fn posix_spawnp(
    pid: *mut libc::pid_t,
    file: *const c_char,
    actions: *const c_void,
    attr: *const c_void,
    argv: *const *mut c_char,
    envp: *const *mut c_char,
) -> c_int {
    if active() {
        if let Some(r) = spawn(pid, file, actions, attr, argv, envp, true) {
            return r;
        }
    }
    real!(posix_spawnp: fn(
        *mut libc::pid_t, *const c_char, *const c_void, *const c_void,
        *const *mut c_char, *const *mut c_char
    ) -> c_int)(pid, file, actions, attr, argv, envp)
}
