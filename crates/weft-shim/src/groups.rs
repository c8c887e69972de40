//! Process groups and sessions in the run's virtual pids: `getpgrp`, `getpgid`, `getsid`,
//! `setsid` and `setpgid`. The kernel's ids are real pids, which differ from run to run and leak into
//! output and names (a daemon that logs its session, a supervisor that keys its children by
//! group). A group or session is named by its leader's virtual pid; a node's program leads
//! its own session and group for real, as a service manager starts a daemon. A pid the program passes is virtual: the
//! caller's own, or another process of its node (another node's is `ESRCH`, as a process on
//! another machine would be).

use crate::prelude::*;

/// The kernel's pid for virtual pid `pid` (0 and the caller's own: 0, as the kernel takes
/// it), or `None` when no process of the node has it.
unsafe fn real_pid(pid: libc::pid_t) -> Option<libc::pid_t> {
    if crate::pidcalls::own(pid).is_some() {
        return Some(0);
    }
    if pid < 0 {
        return None;
    }
    slot().args[0] = pid as i64;
    let r = handoff(OP_REAL_PID);
    (r > 0).then_some(r as libc::pid_t)
}

/// The virtual name of the kernel's group or session id `real`; the run ends naming `call`
/// when it is none of the run's (a group led outside the run: a node's program leads its own
/// session and group, so only a process that left them by hand can be in one).
pub(crate) unsafe fn virtual_id(real: libc::pid_t, call: &'static [u8]) -> libc::pid_t {
    if i64::from(real) == sys::raw(libc::SYS_getpid, [0; 6]) {
        return crate::slot::VPID.load(Ordering::Relaxed) as libc::pid_t;
    }
    slot().args[0] = real as i64;
    let v = handoff(OP_VIRTUAL_PID);
    if v <= 0 {
        unsupported(call, -1, real as i64);
    }
    v as libc::pid_t
}

/// `getpgid`/`getsid` (`nr`) of virtual pid `pid`, answered in virtual pids.
unsafe fn id_of(pid: libc::pid_t, nr: i64, call: &'static [u8]) -> libc::pid_t {
    let Some(real) = real_pid(pid) else {
        return ret_errno(-libc::ESRCH as i64) as libc::pid_t;
    };
    let got = sys::raw_ret(nr, [real as i64, 0, 0, 0, 0, 0]);
    if got < 0 {
        return ret_errno(got) as libc::pid_t;
    }
    virtual_id(got as libc::pid_t, call)
}

/// True when the simulation answers these calls (not inside another hook, a host present).
fn simulated() -> Option<Guard> {
    let g = Guard::enter()?;
    active().then_some(g)
}

#[no_mangle]
pub unsafe extern "C" fn getpgid(pid: libc::pid_t) -> libc::pid_t {
    if let Some(_g) = simulated() {
        return id_of(pid, libc::SYS_getpgid, b"getpgid");
    }
    real!(getpgid: fn(libc::pid_t) -> libc::pid_t)(pid)
}

#[no_mangle]
pub unsafe extern "C" fn __getpgid(pid: libc::pid_t) -> libc::pid_t {
    getpgid(pid)
}

#[no_mangle]
pub unsafe extern "C" fn getpgrp() -> libc::pid_t {
    if let Some(_g) = simulated() {
        return id_of(0, libc::SYS_getpgid, b"getpgrp");
    }
    real!(getpgrp: fn() -> libc::pid_t)()
}

#[no_mangle]
pub unsafe extern "C" fn getsid(pid: libc::pid_t) -> libc::pid_t {
    if let Some(_g) = simulated() {
        return id_of(pid, libc::SYS_getsid, b"getsid");
    }
    real!(getsid: fn(libc::pid_t) -> libc::pid_t)(pid)
}

/// `setsid` answers the new session's id: the caller's virtual pid.
#[no_mangle]
pub unsafe extern "C" fn setsid() -> libc::pid_t {
    let r = real!(setsid: fn() -> libc::pid_t)();
    match simulated() {
        Some(_g) if r > 0 => crate::slot::VPID.load(Ordering::Relaxed) as libc::pid_t,
        _ => r,
    }
}

/// The kernel's group id for `setpgid(pid, pgid)` of the process whose virtual pid is
/// `target`: 0 (as the kernel takes it) for a group of its own, else the real id of the group
/// virtual pid `pgid` leads, or the errno the kernel gives when no process of the node leads
/// one by that name.
unsafe fn real_group(target: libc::pid_t, pgid: libc::pid_t) -> Result<i64, c_int> {
    if pgid < 0 {
        return Err(libc::EINVAL);
    }
    if pgid == 0 || pgid == target {
        return Ok(0);
    }
    let leader = real_pid(pgid).ok_or(libc::EPERM)?;
    let group = sys::raw_ret(libc::SYS_getpgid, [leader as i64, 0, 0, 0, 0, 0]);
    if group < 0 || virtual_id(group as libc::pid_t, b"setpgid") != pgid {
        return Err(libc::EPERM);
    }
    Ok(group)
}

/// `setpgid(pid, pgid)` in virtual pids: a process of another node, or a group no process of
/// the node leads, is refused as the kernel refuses them (`ESRCH`, `EPERM`).
#[no_mangle]
pub unsafe extern "C" fn setpgid(pid: libc::pid_t, pgid: libc::pid_t) -> c_int {
    if let Some(_g) = simulated() {
        let Some(real) = real_pid(pid) else {
            return ret_errno(-libc::ESRCH as i64) as c_int;
        };
        let me = crate::slot::VPID.load(Ordering::Relaxed) as libc::pid_t;
        let target = if pid == 0 { me } else { pid };
        let group = match real_group(target, pgid) {
            Ok(g) => g,
            Err(e) => return ret_errno(-e as i64) as c_int,
        };
        let r = sys::raw_ret(libc::SYS_setpgid, [real as i64, group, 0, 0, 0, 0]);
        return ret_errno(r) as c_int;
    }
    real!(setpgid: fn(libc::pid_t, libc::pid_t) -> c_int)(pid, pgid)
}
