//! `syscall(2)` with the number of a call the shim hooks (time, identity, randomness, sleeping;
//! descriptor, socket, file and mapping calls): the call goes to the hook, as if the program
//! had called the libc function of that name.
//! Libraries make some of their calls this way — libuv (bind9's `named` and `dig`, Node.js)
//! closes and duplicates descriptors and sends and receives datagram batches with
//! `syscall(SYS_close)`, `SYS_dup3`, `SYS_sendmmsg`/`SYS_recvmmsg`; Python lists directories
//! with `SYS_getdents64`, absl maps memory with `SYS_mmap`. Passed to libc, a socket call on a
//! simulated descriptor was caught by the seccomp trap (exit 4), but a `close` or `dup3`, which
//! the trap cannot tell from the shim's own, reached the kernel unseen: the host never heard of
//! the close, so a peer never saw end-of-file. Both conventions answer -1 and `errno` on
//! failure, so a hook's answer is the system call's.

use crate::prelude::*;
use libc::{sockaddr, socklen_t};

/// The hook's answer for system call `nr` with arguments `a`, or `None` when the shim hooks no
/// call of that number (then libc makes it). `syscall(2)` itself serves futexes, `clone` and
/// `exit` before asking.
pub(crate) unsafe fn hooked(nr: c_long, a: [c_long; 6]) -> Option<c_long> {
    clock_and_identity_call(nr, a)
        .or_else(|| process_call(nr, a))
        .or_else(|| descriptor_call(nr, a))
}

/// Calls that name a process by pid, answered as their hooks answer: passed to the kernel, a
/// virtual pid names whatever real process has that number. Only under weft.
unsafe fn process_call(nr: c_long, a: [c_long; 6]) -> Option<c_long> {
    use crate::{groups as g, pidcalls as pc};
    if !active() {
        return None;
    }
    let pid = a[0] as libc::pid_t;
    let r = match nr {
        libc::SYS_getpgid => g::getpgid(pid) as c_long,
        libc::SYS_getpgrp => g::getpgrp() as c_long,
        libc::SYS_getsid => g::getsid(pid) as c_long,
        libc::SYS_setsid => g::setsid() as c_long,
        libc::SYS_setpgid => g::setpgid(pid, a[1] as _) as c_long,
        libc::SYS_setpriority => pc::setpriority(a[0] as _, a[1] as _, a[2] as _) as c_long,
        // The system call answers 20 - nice (1 to 40), so -1 is never a priority.
        libc::SYS_getpriority => {
            set_errno(0);
            let nice = pc::getpriority(a[0] as _, a[1] as _);
            if nice == -1 && *libc::__errno_location() != 0 {
                -1
            } else {
                20 - nice as c_long
            }
        }
        libc::SYS_sched_setscheduler => {
            pc::sched_setscheduler(pid, a[1] as _, a[2] as *const _) as c_long
        }
        libc::SYS_sched_getscheduler => pc::sched_getscheduler(pid) as c_long,
        libc::SYS_sched_setparam => pc::sched_setparam(pid, a[1] as *const _) as c_long,
        libc::SYS_sched_getparam => pc::sched_getparam(pid, a[1] as *mut _) as c_long,
        libc::SYS_sched_setaffinity => {
            pc::sched_setaffinity(pid, a[1] as usize, a[2] as *const _) as c_long
        }
        libc::SYS_prlimit64 => {
            pc::prlimit64(pid, a[1] as _, a[2] as *const _, a[3] as *mut _) as c_long
        }
        _ => return None,
    };
    Some(r)
}

/// Time, identity, randomness, sleeping, signals and capabilities, answered as their hooks answer
/// (nginx reads its thread id with `syscall(SYS_gettid)`; the kernel's answer differs from run
/// to run). Only under weft.
unsafe fn clock_and_identity_call(nr: c_long, a: [c_long; 6]) -> Option<c_long> {
    if !active() {
        return None;
    }
    let p = |i: usize| a[i] as *mut c_void;
    let r = match nr {
        libc::SYS_gettid => crate::process::gettid() as c_long,
        libc::SYS_getpid => crate::process::getpid() as c_long,
        libc::SYS_getppid => crate::process::getppid() as c_long,
        libc::SYS_getuid => crate::creds::getuid() as c_long,
        libc::SYS_geteuid => crate::creds::geteuid() as c_long,
        libc::SYS_getgid => crate::creds::getgid() as c_long,
        libc::SYS_getegid => crate::creds::getegid() as c_long,
        libc::SYS_clock_gettime => crate::time::clock_gettime(a[0] as _, p(1).cast()) as c_long,
        libc::SYS_gettimeofday => crate::time::gettimeofday(p(0).cast(), p(1)) as c_long,
        libc::SYS_time => crate::time::time(p(0).cast()) as c_long,
        libc::SYS_getrandom => crate::random::getrandom(p(0), a[1] as usize, a[2] as _) as c_long,
        libc::SYS_nanosleep => crate::time::nanosleep(p(0).cast(), p(1).cast()) as c_long,
        libc::SYS_clock_nanosleep => {
            // The function answers an error number; the system call, -1 and errno.
            match crate::time::clock_nanosleep(a[0] as _, a[1] as _, p(2).cast(), p(3).cast()) {
                0 => 0,
                e => {
                    set_errno(e);
                    -1
                }
            }
        }
        // Signals name virtual pids: the kernel would signal whatever real process has the
        // number.
        libc::SYS_kill => crate::process::kill(a[0] as _, a[1] as _) as c_long,
        libc::SYS_tgkill => crate::sigsend::tgkill(a[0] as _, a[1] as _, a[2] as _) as c_long,
        libc::SYS_tkill => {
            crate::sigsend::tgkill(crate::process::getpid(), a[0] as _, a[1] as _) as c_long
        }
        libc::SYS_sched_yield => crate::threads::sched_yield() as c_long,
        libc::SYS_capget => crate::creds::capget(p(0), p(1)) as c_long,
        libc::SYS_capset => crate::creds::capset(p(0), p(1)) as c_long,
        _ => return None,
    };
    Some(r)
}

/// Descriptors, files and mappings; then sockets and the local objects.
unsafe fn descriptor_call(nr: c_long, a: [c_long; 6]) -> Option<c_long> {
    let p = |i: usize| a[i] as *mut c_void;
    let i = |k: usize| a[k] as c_int;
    let u = |k: usize| a[k] as usize;
    let r = match nr {
        libc::SYS_read => crate::io::read(i(0), p(1), u(2)) as c_long,
        libc::SYS_write => crate::io::write(i(0), p(1), u(2)) as c_long,
        libc::SYS_readv => crate::io::readv(i(0), p(1).cast(), i(2)) as c_long,
        libc::SYS_writev => crate::io::writev(i(0), p(1).cast(), i(2)) as c_long,
        libc::SYS_pread64 => crate::files::pread64(i(0), p(1), u(2), a[3]) as c_long,
        libc::SYS_pwrite64 => crate::files::pwrite64(i(0), p(1), u(2), a[3]) as c_long,
        libc::SYS_lseek => crate::datadir::lseek(i(0), a[1], i(2)) as c_long,
        libc::SYS_sendfile => crate::sendfile::sendfile(i(0), i(1), p(2).cast(), u(3)) as c_long,
        libc::SYS_splice => {
            crate::splice::splice(i(0), p(1).cast(), i(2), p(3).cast(), u(4), a[5] as _) as c_long
        }
        libc::SYS_tee => crate::splice::tee(i(0), i(1), u(2), a[3] as _) as c_long,
        libc::SYS_vmsplice => crate::splice::vmsplice(i(0), p(1).cast(), u(2), a[3] as _) as c_long,
        libc::SYS_copy_file_range => {
            crate::splice::copy_file_range(i(0), p(1).cast(), i(2), p(3).cast(), u(4), a[5] as _)
                as c_long
        }
        libc::SYS_close => crate::io::close(i(0)) as c_long,
        libc::SYS_dup => crate::io::dup(i(0)) as c_long,
        libc::SYS_dup2 => crate::io::dup2(i(0), i(1)) as c_long,
        libc::SYS_dup3 => crate::io::dup3(i(0), i(1), i(2)) as c_long,
        libc::SYS_fcntl => crate::io::fcntl(i(0), i(1), a[2] as c_ulong) as c_long,
        libc::SYS_ioctl => crate::io::ioctl(i(0), a[1] as c_ulong, p(2)) as c_long,
        libc::SYS_fsync => crate::files::fsync(i(0)) as c_long,
        libc::SYS_fdatasync => crate::files::fdatasync(i(0)) as c_long,
        libc::SYS_ftruncate => crate::files::ftruncate(i(0), a[1]) as c_long,
        libc::SYS_open => crate::files::open(p(0).cast(), i(1), a[2] as c_uint) as c_long,
        libc::SYS_openat => crate::files::openat(i(0), p(1).cast(), i(2), a[3] as c_uint) as c_long,
        libc::SYS_fstat => crate::diskstat::fstat(i(0), p(1).cast()) as c_long,
        libc::SYS_newfstatat => {
            crate::diskstat::fstatat(i(0), p(1).cast(), p(2).cast(), i(3)) as c_long
        }
        libc::SYS_statx => {
            crate::diskstat::statx(i(0), p(1).cast(), i(2), a[3] as c_uint, p(4).cast()) as c_long
        }
        libc::SYS_getdents64 => crate::disklist::getdents64(i(0), p(1), u(2)) as c_long,
        libc::SYS_mmap => crate::diskmmap::mmap(p(0), u(1), i(2), i(3), i(4), a[5]) as c_long,
        libc::SYS_munmap => crate::diskmmap::munmap(p(0), u(1)) as c_long,
        _ => return socket_call(nr, a).or_else(|| local_call(nr, a)),
    };
    Some(r)
}

/// The socket calls among them.
unsafe fn socket_call(nr: c_long, a: [c_long; 6]) -> Option<c_long> {
    use crate::sockets as s;
    let p = |i: usize| a[i] as *mut c_void;
    let i = |k: usize| a[k] as c_int;
    let sa = |k: usize| a[k] as *mut sockaddr;
    let len = |k: usize| a[k] as *mut socklen_t;
    let r = match nr {
        libc::SYS_socket => s::socket(i(0), i(1), i(2)) as c_long,
        libc::SYS_bind => s::bind(i(0), sa(1), a[2] as socklen_t) as c_long,
        libc::SYS_connect => s::connect(i(0), sa(1), a[2] as socklen_t) as c_long,
        libc::SYS_listen => s::listen(i(0), i(1)) as c_long,
        libc::SYS_accept => s::accept(i(0), sa(1), len(2)) as c_long,
        libc::SYS_accept4 => s::accept4(i(0), sa(1), len(2), i(3)) as c_long,
        libc::SYS_shutdown => s::shutdown(i(0), i(1)) as c_long,
        libc::SYS_getsockname => s::getsockname(i(0), sa(1), len(2)) as c_long,
        libc::SYS_getpeername => s::getpeername(i(0), sa(1), len(2)) as c_long,
        libc::SYS_getsockopt => s::getsockopt(i(0), i(1), i(2), p(3), len(4)) as c_long,
        libc::SYS_setsockopt => s::setsockopt(i(0), i(1), i(2), p(3), a[4] as socklen_t) as c_long,
        libc::SYS_sendto => {
            s::sendto(i(0), p(1), a[2] as usize, i(3), sa(4), a[5] as socklen_t) as c_long
        }
        libc::SYS_recvfrom => s::recvfrom(i(0), p(1), a[2] as usize, i(3), sa(4), len(5)) as c_long,
        libc::SYS_sendmsg => s::sendmsg(i(0), p(1).cast(), i(2)) as c_long,
        libc::SYS_recvmsg => s::recvmsg(i(0), p(1).cast(), i(2)) as c_long,
        libc::SYS_sendmmsg => s::sendmmsg(i(0), p(1).cast(), a[2] as c_uint, i(3)) as c_long,
        libc::SYS_recvmmsg => {
            s::recvmmsg(i(0), p(1).cast(), a[2] as c_uint, i(3), p(4).cast()) as c_long
        }
        _ => return None,
    };
    Some(r)
}

/// Pipes, socketpairs, eventfds, polling and epoll.
unsafe fn local_call(nr: c_long, a: [c_long; 6]) -> Option<c_long> {
    let p = |i: usize| a[i] as *mut c_void;
    let i = |k: usize| a[k] as c_int;
    let r = match nr {
        libc::SYS_pipe => crate::local::pipe(p(0).cast()) as c_long,
        libc::SYS_pipe2 => crate::local::pipe2(p(0).cast(), i(1)) as c_long,
        libc::SYS_socketpair => crate::local::socketpair(i(0), i(1), i(2), p(3).cast()) as c_long,
        libc::SYS_eventfd2 => crate::local::eventfd(a[0] as c_uint, i(1)) as c_long,
        libc::SYS_eventfd => crate::local::eventfd(a[0] as c_uint, 0) as c_long,
        libc::SYS_poll => crate::poll::poll(p(0).cast(), a[1] as libc::nfds_t, i(2)) as c_long,
        libc::SYS_ppoll => {
            crate::poll::ppoll(p(0).cast(), a[1] as libc::nfds_t, p(2).cast(), p(3).cast())
                as c_long
        }
        libc::SYS_epoll_create1 => crate::epoll::epoll_create1(i(0)) as c_long,
        libc::SYS_epoll_ctl => crate::epoll::epoll_ctl(i(0), i(1), i(2), p(3).cast()) as c_long,
        libc::SYS_epoll_wait => crate::epoll::epoll_wait(i(0), p(1).cast(), i(2), i(3)) as c_long,
        libc::SYS_epoll_pwait => {
            crate::epoll::epoll_pwait(i(0), p(1).cast(), i(2), i(3), p(4).cast()) as c_long
        }
        _ => return None,
    };
    Some(r)
}
