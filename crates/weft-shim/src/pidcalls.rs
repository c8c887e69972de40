//! Calls that name a process by pid for its scheduling, priority, limits and CPU affinity
//! (`setpriority`/`getpriority`, `sched_setscheduler`/`getscheduler`/`setparam`/`getparam`,
//! `sched_setaffinity`, `prlimit`). A program passes the pid `getpid` answered, the virtual one:
//! the kernel does not know it (`ESRCH`), or, since nodes share the kernel's pid space, it is
//! some other process's. The process's own virtual pid means itself (0, as the kernel takes
//! it); any other process is refused by name (exit 4): the kernel's pids are not the run's.
//! Priorities by process group or user would reach real processes outside the run (the
//! node's program is in weft's own process group): the caller's own group is answered as the
//! caller itself while it is alone in it (corosync sets `PRIO_PGRP` of its own group when it
//! cannot have `SCHED_RR`); other groups and users are refused too.

use crate::prelude::*;

/// The pid to hand the kernel for `pid`: 0 for the process itself; `None` for any other.
pub(crate) fn own(pid: libc::pid_t) -> Option<libc::pid_t> {
    let me = crate::slot::VPID.load(Ordering::Relaxed) as libc::pid_t;
    (pid == 0 || pid == me).then_some(0)
}

/// `pid` as the kernel should see it, or the end of the run naming `call`. 0 needs no
/// translation, and a call made inside another hook (or with no host) is the kernel's.
fn own_or_refuse(pid: libc::pid_t, call: &'static [u8]) -> libc::pid_t {
    if pid == 0 {
        return 0;
    }
    let Some(_g) = Guard::enter() else { return pid };
    if !active() {
        return pid;
    }
    match own(pid) {
        Some(p) => p,
        None => unsupported(call, -1, pid as i64),
    }
}

/// True when the process group `who` names (0: the caller's, as the kernel takes it; or the
/// caller's own group's id, virtual as `getpgrp` answers it, or real) holds the caller alone, in a native
/// run too: it has no child process (none could share the group), and it leads its group, for
/// real (after `setsid`/`setpgid`) or as a node's own program, which a service manager or a
/// shell would have started as its group's leader (for real it is in weft's group).
fn own_group_alone(who: libc::id_t) -> bool {
    // SAFETY: system calls on integers and a local siginfo the kernel fills.
    unsafe {
        let pgid = sys::raw(libc::SYS_getpgid, [0; 6]);
        let named = who == 0 || i64::from(who) == pgid;
        if !named
            && who as libc::pid_t != crate::groups::virtual_id(pgid as libc::pid_t, b"setpriority")
        {
            return false;
        }
        let leads = pgid == sys::raw(libc::SYS_getpid, [0; 6]);
        let node_program = crate::slot::PPID.load(Ordering::Relaxed) == 1;
        let mut info: libc::siginfo_t = core::mem::zeroed();
        let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
        let info = &mut info as *mut libc::siginfo_t as i64;
        let childless =
            sys::raw_ret(libc::SYS_waitid, [libc::P_ALL as i64, 0, info, flags as i64, 0, 0])
                == -(libc::ECHILD as i64);
        (leads || node_program) && childless
    }
}

/// `(which, who)` as the kernel should see them, or the end of the run naming the call. The
/// caller's own process, and its own process group while that is the caller alone
/// ([`own_group_alone`]: then it is `PRIO_PROCESS` of itself, whose nice value is all the
/// group's), are answered; any other process or group, and a user (every process of weft's
/// user on the machine, for real), are refused. A `which` Linux does not know is its `EINVAL`.
fn who_or_refuse(
    which: c_int,
    who: libc::id_t,
    call: &'static [u8],
    group: &'static [u8],
    user: &'static [u8],
) -> (c_int, libc::id_t) {
    let process = libc::PRIO_PROCESS as c_int;
    if which == process {
        return (which, own_or_refuse(who as libc::pid_t, call) as libc::id_t);
    }
    if which != libc::PRIO_PGRP as c_int && which != libc::PRIO_USER as c_int {
        return (which, who);
    }
    let Some(_g) = Guard::enter() else { return (which, who) };
    if !active() {
        return (which, who);
    }
    if which == libc::PRIO_PGRP as c_int && own_group_alone(who) {
        return (process, 0);
    }
    unsupported(if which == libc::PRIO_USER as c_int { user } else { group }, -1, which as i64)
}

#[no_mangle]
pub unsafe extern "C" fn setpriority(which: c_int, who: libc::id_t, prio: c_int) -> c_int {
    let (which, who) = who_or_refuse(
        which,
        who,
        b"setpriority() of another process is not simulated",
        b"setpriority() of a process group with other processes in it is not simulated",
        b"setpriority() of a user is not simulated",
    );
    real!(setpriority: fn(c_int, libc::id_t, c_int) -> c_int)(which, who, prio)
}

#[no_mangle]
pub unsafe extern "C" fn getpriority(which: c_int, who: libc::id_t) -> c_int {
    let (which, who) = who_or_refuse(
        which,
        who,
        b"getpriority() of another process is not simulated",
        b"getpriority() of a process group with other processes in it is not simulated",
        b"getpriority() of a user is not simulated",
    );
    real!(getpriority: fn(c_int, libc::id_t) -> c_int)(which, who)
}

#[no_mangle]
pub unsafe extern "C" fn sched_setscheduler(
    pid: libc::pid_t,
    policy: c_int,
    param: *const libc::sched_param,
) -> c_int {
    let pid = own_or_refuse(pid, b"sched_setscheduler() of another process is not simulated");
    real!(sched_setscheduler: fn(libc::pid_t, c_int, *const libc::sched_param) -> c_int)(
        pid, policy, param,
    )
}

#[no_mangle]
pub unsafe extern "C" fn sched_getscheduler(pid: libc::pid_t) -> c_int {
    let pid = own_or_refuse(pid, b"sched_getscheduler() of another process is not simulated");
    real!(sched_getscheduler: fn(libc::pid_t) -> c_int)(pid)
}

#[no_mangle]
pub unsafe extern "C" fn sched_setparam(
    pid: libc::pid_t,
    param: *const libc::sched_param,
) -> c_int {
    let pid = own_or_refuse(pid, b"sched_setparam() of another process is not simulated");
    real!(sched_setparam: fn(libc::pid_t, *const libc::sched_param) -> c_int)(pid, param)
}

#[no_mangle]
pub unsafe extern "C" fn sched_getparam(pid: libc::pid_t, param: *mut libc::sched_param) -> c_int {
    let pid = own_or_refuse(pid, b"sched_getparam() of another process is not simulated");
    real!(sched_getparam: fn(libc::pid_t, *mut libc::sched_param) -> c_int)(pid, param)
}

#[no_mangle]
pub unsafe extern "C" fn sched_setaffinity(
    pid: libc::pid_t,
    size: size_t,
    mask: *const libc::cpu_set_t,
) -> c_int {
    let pid = own_or_refuse(pid, b"sched_setaffinity() of another process is not simulated");
    real!(sched_setaffinity: fn(libc::pid_t, size_t, *const libc::cpu_set_t) -> c_int)(
        pid, size, mask,
    )
}

#[no_mangle]
pub unsafe extern "C" fn prlimit(
    pid: libc::pid_t,
    res: c_int,
    new: *const libc::rlimit,
    old: *mut libc::rlimit,
) -> c_int {
    let pid = own_or_refuse(pid, b"prlimit() of another process is not simulated");
    real!(prlimit: fn(libc::pid_t, c_int, *const libc::rlimit, *mut libc::rlimit) -> c_int)(
        pid, res, new, old,
    )
}

#[no_mangle]
pub unsafe extern "C" fn prlimit64(
    pid: libc::pid_t,
    res: c_int,
    new: *const libc::rlimit64,
    old: *mut libc::rlimit64,
) -> c_int {
    let pid = own_or_refuse(pid, b"prlimit64() of another process is not simulated");
    real!(prlimit64: fn(libc::pid_t, c_int, *const libc::rlimit64, *mut libc::rlimit64) -> c_int)(
        pid, res, new, old,
    )
}
