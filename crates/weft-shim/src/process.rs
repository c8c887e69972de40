//! Process lifetime and identity: `_exit`, virtual pids (`getpid`, `gettid`, `getppid`), `kill`
//! (of the process itself: mapped back to its real pid; of another process of the node: in the
//! host), and waiting for children (`wait`, `waitpid`, `wait3`, `wait4`, `waitid`) in virtual
//! time. Creating and replacing processes is in `exec`.

use crate::prelude::*;
use crate::slot::{announce_exit, BASE, MY_SLOT, PPID, VPID};

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

// Process identity: real pids differ from run to run (and leak into output and seeds), so a
// process sees the virtual pid the host gave it, its parent is 1, and kill() maps it back.

#[no_mangle]
pub unsafe extern "C" fn getpid() -> libc::pid_t {
    if let Some(_g) = Guard::enter() {
        // active() first: a library's constructor may ask before any hook set the shim up.
        let v = if active() { VPID.load(Ordering::Relaxed) } else { 0 };
        if v > 0 {
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
        let v = if active() { VPID.load(Ordering::Relaxed) } else { 0 };
        if v > 0 {
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

/// The parent's virtual pid as of the process's start (1 for a node's own program; a child
/// whose parent ended keeps answering its parent's pid).
#[no_mangle]
pub unsafe extern "C" fn getppid() -> libc::pid_t {
    if let Some(_g) = Guard::enter() {
        if active() && VPID.load(Ordering::Relaxed) > 0 {
            return PPID.load(Ordering::Relaxed) as libc::pid_t;
        }
    }
    real!(getppid: fn() -> libc::pid_t)()
}

#[no_mangle]
pub unsafe extern "C" fn kill(pid: libc::pid_t, sig: c_int) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            // Virtual pids, virtual signals: the host finds the target and delivers.
            return crate::sigsend::send(pid as i64, sig, SIGTO_PROCESS);
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

/// `killpg(pgrp, sig)` is `kill(-pgrp, sig)`; glibc's own makes that call inside libc,
/// where the hook above would not see it.
#[no_mangle]
pub unsafe extern "C" fn killpg(pgrp: libc::pid_t, sig: c_int) -> c_int {
    if pgrp < 0 {
        set_errno(libc::EINVAL);
        return -1;
    }
    kill(-pgrp, sig)
}

/// Waits in the host for a child matching `pid` (a virtual pid; -1, 0 or a group: any) to
/// end, then reaps it for real, which no longer blocks. Answers its virtual pid, 0
/// (`WNOHANG`, none ended yet) or -1 with errno.
pub(crate) unsafe fn wait_child(
    pid: libc::pid_t,
    status: *mut c_int,
    options: c_int,
    ru: *mut libc::rusage,
) -> libc::pid_t {
    loop {
        let s = slot();
        s.args[0] = if pid > 0 { pid as i64 } else { -1 };
        s.args[1] = (options & libc::WNOHANG != 0) as i64;
        s.args[2] = 0;
        let r = handoff(OP_WAIT);
        if r <= 0 {
            return ret_errno(r) as libc::pid_t;
        }
        let real = slot().args[1];
        let got =
            sys::raw(libc::SYS_wait4, [real, status as i64, libc::__WALL as i64, ru as i64, 0, 0]);
        if got == real {
            return r as libc::pid_t;
        }
        // The kernel reaped it already (SIGCHLD ignored): as on Linux, wait for the others.
    }
}

#[no_mangle]
pub unsafe extern "C" fn wait4(
    pid: libc::pid_t,
    status: *mut c_int,
    options: c_int,
    ru: *mut libc::rusage,
) -> libc::pid_t {
    if let Some(_g) = Guard::enter() {
        if active() {
            return wait_child(pid, status, options, ru);
        }
    }
    sys::raw(libc::SYS_wait4, [pid as i64, status as i64, options as i64, ru as i64, 0, 0])
        as libc::pid_t
}

#[no_mangle]
pub unsafe extern "C" fn waitpid(
    pid: libc::pid_t,
    status: *mut c_int,
    options: c_int,
) -> libc::pid_t {
    wait4(pid, status, options, ptr::null_mut())
}

#[no_mangle]
pub unsafe extern "C" fn wait(status: *mut c_int) -> libc::pid_t {
    wait4(-1, status, 0, ptr::null_mut())
}

#[no_mangle]
pub unsafe extern "C" fn wait3(
    status: *mut c_int,
    options: c_int,
    ru: *mut libc::rusage,
) -> libc::pid_t {
    wait4(-1, status, options, ru)
}

/// Byte offset of `si_pid` in `siginfo_t` (x86-64: after signo, errno, code and padding).
const SI_PID_OFFSET: usize = 16;

#[no_mangle]
pub unsafe extern "C" fn waitid(
    idtype: libc::idtype_t,
    id: libc::id_t,
    info: *mut libc::siginfo_t,
    options: c_int,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            return waitid_child(idtype, id, info, options);
        }
    }
    sys::raw(libc::SYS_waitid, [idtype as i64, id as i64, info as i64, options as i64, 0, 0])
        as c_int
}

unsafe fn waitid_child(
    idtype: libc::idtype_t,
    id: libc::id_t,
    info: *mut libc::siginfo_t,
    options: c_int,
) -> c_int {
    if options & libc::WEXITED == 0 || idtype == libc::P_PIDFD {
        unsupported(
            b"waitid(): only WEXITED waits for a pid or any child are simulated",
            libc::SYS_waitid,
            0,
        );
    }
    let nohang = options & libc::WNOHANG != 0;
    loop {
        let s = slot();
        s.args[0] = if idtype == libc::P_PID { id as i64 } else { -1 };
        s.args[1] = nohang as i64;
        s.args[2] = (options & libc::WNOWAIT != 0) as i64;
        let r = handoff(OP_WAIT);
        if r < 0 {
            return ret_errno(r) as c_int;
        }
        if r == 0 {
            // WNOHANG and nothing ended: Linux zeroes si_pid.
            if !info.is_null() {
                *(info as *mut u8).add(SI_PID_OFFSET).cast::<i32>() = 0;
            }
            return 0;
        }
        let real = slot().args[1];
        let o = (options & (libc::WEXITED | libc::WNOWAIT)) as i64;
        let got = sys::raw(libc::SYS_waitid, [libc::P_PID as i64, real, info as i64, o, 0, 0]);
        if got == 0 {
            if !info.is_null() {
                *(info as *mut u8).add(SI_PID_OFFSET).cast::<i32>() = r as i32;
            }
            return 0;
        }
    }
}
