//! Process lifetime and identity: `_exit`, virtual pids (`getpid`, `gettid`, `getppid`, and
//! `kill` mapping them back), and the calls that would create or replace a process (`fork`,
//! `vfork`, `posix_spawn*`, `system`, `popen`, `exec*`), which are reported as unsupported.

use crate::prelude::*;
use crate::slot::{announce_exit, BASE, MY_SLOT, VPID};

#[no_mangle]
pub unsafe extern "C" fn _exit(status: c_int) -> ! {
    announce_exit(status as i64);
    sys::exit_group(status)
}

#[no_mangle]
pub unsafe extern "C" fn _Exit(status: c_int) -> ! {
    announce_exit(status as i64);
    sys::exit_group(status)
}

#[no_mangle]
pub unsafe extern "C" fn fork() -> libc::pid_t {
    if let Some(_g) = Guard::enter() {
        if active() {
            unsupported(b"fork(): child processes are not simulated yet", libc::SYS_fork, 0);
        }
    }
    real!(fork: fn() -> libc::pid_t)()
}
// Process identity: real pids differ from run to run (and leak into output and seeds), so a
// process sees the virtual pid the host gave it, its parent is 1, and kill() maps it back.

#[no_mangle]
pub unsafe extern "C" fn getpid() -> libc::pid_t {
    if let Some(_g) = Guard::enter() {
        let v = VPID.load(Ordering::Relaxed);
        if v > 0 && active() {
            return v as libc::pid_t;
        }
    }
    real!(getpid: fn() -> libc::pid_t)()
}

/// Thread ids: the main thread's is the virtual pid (as on Linux), every other simulated
/// thread's is `10000 + its slot`, the same in every run.
#[no_mangle]
pub unsafe extern "C" fn gettid() -> libc::pid_t {
    if let Some(_g) = Guard::enter() {
        let v = VPID.load(Ordering::Relaxed);
        if v > 0 && active() {
            let mine = MY_SLOT.try_with(|s| s.get()).unwrap_or(ptr::null_mut());
            if mine.is_null() {
                return v as libc::pid_t;
            }
            let base = BASE.load(Ordering::Acquire) as usize;
            let k = (0..MAX_SLOTS).find(|&k| base + slot_offset(k) == mine as usize).unwrap_or(0);
            return 10_000 + k as libc::pid_t;
        }
    }
    real!(gettid: fn() -> libc::pid_t)()
}

#[no_mangle]
pub unsafe extern "C" fn getppid() -> libc::pid_t {
    if let Some(_g) = Guard::enter() {
        if VPID.load(Ordering::Relaxed) > 0 && active() {
            return 1;
        }
    }
    real!(getppid: fn() -> libc::pid_t)()
}

#[no_mangle]
pub unsafe extern "C" fn kill(pid: libc::pid_t, sig: c_int) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            // Virtual pids, virtual signals: the host finds the target and delivers.
            return crate::signals::send(pid as i64, sig, SIGTO_PROCESS);
        }
    }
    let v = VPID.load(Ordering::Relaxed);
    let pid = if v > 0 && (pid as i64 == v || pid as i64 == -v) {
        let real = real!(getpid: fn() -> libc::pid_t)();
        if pid < 0 {
            -real
        } else {
            real
        }
    } else {
        pid
    };
    real!(kill: fn(libc::pid_t, c_int) -> c_int)(pid, sig)
}

#[no_mangle]
pub unsafe extern "C" fn vfork() -> libc::pid_t {
    if active() {
        unsupported(b"vfork(): child processes are not simulated yet", libc::SYS_vfork, 0);
    }
    real!(fork: fn() -> libc::pid_t)()
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
        unsupported(b"posix_spawn(): child processes are not simulated yet", -1, 0);
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
        unsupported(b"posix_spawnp(): child processes are not simulated yet", -1, 0);
    }
    real!(posix_spawnp: fn(
        *mut libc::pid_t, *const c_char, *const c_void, *const c_void,
        *const *mut c_char, *const *mut c_char
    ) -> c_int)(pid, file, actions, attr, argv, envp)
}

#[no_mangle]
pub unsafe extern "C" fn system(cmd: *const c_char) -> c_int {
    if active() {
        unsupported(b"system(): child processes are not simulated yet", -1, 0);
    }
    real!(system: fn(*const c_char) -> c_int)(cmd)
}

#[no_mangle]
pub unsafe extern "C" fn popen(cmd: *const c_char, mode: *const c_char) -> *mut libc::FILE {
    if active() {
        unsupported(b"popen(): child processes are not simulated yet", -1, 0);
    }
    real!(popen: fn(*const c_char, *const c_char) -> *mut libc::FILE)(cmd, mode)
}

#[no_mangle]
pub unsafe extern "C" fn execve(
    path: *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    if active() {
        unsupported(b"execve(): replacing the program is not simulated yet", libc::SYS_execve, 0);
    }
    real!(execve: fn(*const c_char, *const *const c_char, *const *const c_char) -> c_int)(
        path, argv, envp,
    )
}

#[no_mangle]
pub unsafe extern "C" fn execv(path: *const c_char, argv: *const *const c_char) -> c_int {
    if active() {
        unsupported(b"execv(): replacing the program is not simulated yet", libc::SYS_execve, 0);
    }
    real!(execv: fn(*const c_char, *const *const c_char) -> c_int)(path, argv)
}

#[no_mangle]
pub unsafe extern "C" fn execvp(file: *const c_char, argv: *const *const c_char) -> c_int {
    if active() {
        unsupported(b"execvp(): replacing the program is not simulated yet", libc::SYS_execve, 0);
    }
    real!(execvp: fn(*const c_char, *const *const c_char) -> c_int)(file, argv)
}
