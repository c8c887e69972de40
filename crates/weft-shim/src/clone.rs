//! Threads and processes made without `pthread_create` or `fork`: glibc's `clone()` wrapper
//! and `syscall(SYS_clone)` / `syscall(SYS_clone3)`. A `clone()` thread (it shares memory,
//! descriptors, filesystem and signal handlers, and has no TLS of its own) becomes a simulated
//! thread: it is started with `pthread_create` on a slot the host assigns, runs the program's
//! function there, and honours the tid flags (`CLONE_PARENT_SETTID`, `CLONE_CHILD_SETTID`,
//! `CLONE_CHILD_CLEARTID`, the last with a wake of a simulated futex). A `clone()` with only
//! `SIGCHLD` is a simulated fork whose child runs the function and exits with its result.
//! Everything else is reported as unsupported, by name: a raw `clone`/`clone3` system call
//! returns into code the shim cannot run on another thread's behalf. Raw `syscall`
//! instructions are the seccomp filter's (see `sys`).

use crate::prelude::*;
use crate::slot::{await_baton, slot_at, MY_SLOT};

type CloneFn = extern "C" fn(*mut c_void) -> c_int;

/// What the thread started in each slot by `clone()` runs, and where its tid goes at exit.
static FN: [AtomicU64; MAX_SLOTS] = [const { AtomicU64::new(0) }; MAX_SLOTS];
static ARG: [AtomicU64; MAX_SLOTS] = [const { AtomicU64::new(0) }; MAX_SLOTS];
static CLEAR_TID: [AtomicU64; MAX_SLOTS] = [const { AtomicU64::new(0) }; MAX_SLOTS];

/// The flags a `clone()` thread must have: it is then what `pthread_create` makes, but for
/// its stack and its TLS (the shim gives it its own of both).
const THREAD: c_int =
    libc::CLONE_VM | libc::CLONE_FS | libc::CLONE_FILES | libc::CLONE_SIGHAND | libc::CLONE_THREAD;
/// The flags it may have on top of those.
const THREAD_EXTRA: c_int = libc::CLONE_SYSVSEM
    | libc::CLONE_PARENT_SETTID
    | libc::CLONE_CHILD_SETTID
    | libc::CLONE_CHILD_CLEARTID
    | libc::CLONE_DETACHED
    | libc::CLONE_IO;

/// The tid a simulated thread on slot `k` sees (as `gettid` answers it).
fn virtual_tid(k: usize) -> libc::pid_t {
    10_000 + k as libc::pid_t
}

extern "C" fn trampoline(k: *mut c_void) -> *mut c_void {
    let k = k as usize;
    let mine = slot_at(k);
    let _ = MY_SLOT.try_with(|s| s.set(mine));
    await_baton(mine, 0);
    crate::signals::take(mine);
    let f = FN[k].load(Ordering::Relaxed) as usize;
    let arg = ARG[k].load(Ordering::Relaxed) as *mut c_void;
    // SAFETY: `f` is the function the program passed to clone().
    let f = unsafe { core::mem::transmute::<usize, CloneFn>(f) };
    f(arg);
    let _g = Guard::enter();
    // SAFETY: this thread holds the baton (it runs).
    unsafe { clear_tid(k) };
    crate::threads::thread_goodbye();
    ptr::null_mut()
}

/// What the kernel does for `CLONE_CHILD_CLEARTID` at the end of the thread on slot `k`, on
/// the simulated futex (once).
///
/// # Safety
/// Active, on the thread holding the baton.
unsafe fn clear_tid(k: usize) {
    let ctid = CLEAR_TID[k].swap(0, Ordering::Relaxed) as *const AtomicU32;
    if !ctid.is_null() {
        // SAFETY: the program passed this word for the thread's life.
        (*ctid).store(0, Ordering::SeqCst);
        let s = slot();
        s.args[0] = ctid as i64;
        s.args[1] = 1;
        handoff(OP_FUTEX_WAKE);
    }
}

/// `syscall(SYS_exit, status)` on a simulated thread other than the main one (how raw-thread
/// code often ends a `clone()` thread): the host is told the thread ends, then it does.
///
/// # Safety
/// Active, inside a hook, on the thread holding the baton.
pub(crate) unsafe fn exit_thread(status: c_long) {
    let mine = MY_SLOT.try_with(|s| s.get()).unwrap_or(ptr::null_mut());
    if mine.is_null() {
        return; // the main thread: as the kernel does, the process goes on without it
    }
    if let Some(k) = (0..MAX_SLOTS).find(|&k| slot_at(k) == mine) {
        clear_tid(k);
    }
    crate::threads::thread_goodbye();
    loop {
        sys::raw_ret(libc::SYS_exit, [status, 0, 0, 0, 0, 0]);
    }
}

/// A `clone()` thread as a simulated thread; answers its tid or -1 with errno.
///
/// # Safety
/// Active, inside a hook, on the thread holding the baton; the pointers as clone() takes them.
unsafe fn thread(
    f: CloneFn,
    flags: c_int,
    arg: *mut c_void,
    ptid: *mut libc::pid_t,
    ctid: *mut libc::pid_t,
) -> c_int {
    let k = handoff(OP_THREAD_NEW);
    if k < 0 {
        return ret_errno(k) as c_int;
    }
    let k = k as usize;
    let tid = virtual_tid(k);
    FN[k].store(f as usize as u64, Ordering::Relaxed);
    ARG[k].store(arg as u64, Ordering::Relaxed);
    let clear = if flags & libc::CLONE_CHILD_CLEARTID != 0 { ctid } else { ptr::null_mut() };
    CLEAR_TID[k].store(clear as u64, Ordering::Relaxed);
    if flags & libc::CLONE_PARENT_SETTID != 0 {
        *ptid = tid;
    }
    if flags & libc::CLONE_CHILD_SETTID != 0 {
        *ctid = tid;
    }
    let mut attr: libc::pthread_attr_t = core::mem::zeroed();
    libc::pthread_attr_init(&mut attr);
    libc::pthread_attr_setdetachstate(&mut attr, libc::PTHREAD_CREATE_DETACHED);
    let create = real!(pthread_create: fn(
        *mut libc::pthread_t, *const libc::pthread_attr_t,
        extern "C" fn(*mut c_void) -> *mut c_void, *mut c_void
    ) -> c_int);
    let mut t: libc::pthread_t = 0;
    let r = create(&mut t, &attr, trampoline, k as *mut c_void);
    libc::pthread_attr_destroy(&mut attr);
    if r != 0 {
        slot().args[0] = k as i64;
        handoff(OP_THREAD_ABORT);
        set_errno(r);
        return -1;
    }
    tid
}

/// glibc's `clone(fn, stack, flags, arg, ptid, tls, ctid)`; the last three are variadic and
/// read only when a flag says they were passed (x86-64 passes them as fixed arguments).
#[no_mangle]
pub unsafe extern "C" fn clone(
    f: CloneFn,
    stack: *mut c_void,
    flags: c_int,
    arg: *mut c_void,
    ptid: *mut libc::pid_t,
    tls: *mut c_void,
    ctid: *mut libc::pid_t,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            if flags & THREAD == THREAD && flags & !(THREAD | THREAD_EXTRA) == 0 {
                return thread(f, flags, arg, ptid, ctid);
            }
            if flags == libc::SIGCHLD {
                let pid = crate::exec::fork_simulated();
                if pid != 0 {
                    return pid;
                }
                drop(_g);
                crate::process::_exit(f(arg));
            }
            unsupported(
                b"clone(): only threads (CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|\
                  CLONE_THREAD, no CLONE_SETTLS) and plain SIGCHLD forks are simulated",
                libc::SYS_clone,
                flags as i64,
            );
        }
    }
    real!(clone: fn(
        CloneFn, *mut c_void, c_int, *mut c_void, *mut libc::pid_t, *mut c_void,
        *mut libc::pid_t
    ) -> c_int)(f, stack, flags, arg, ptid, tls, ctid)
}

/// `syscall(SYS_clone, …)` / `syscall(SYS_clone3, …)` from the program. A `SYS_clone` with
/// only `SIGCHLD` and no stack is `fork`; any other returns on a new thread or process into
/// the middle of libc's `syscall()`, which the shim cannot follow: reported.
///
/// # Safety
/// Active, inside a hook, on the thread holding the baton.
pub(crate) unsafe fn raw(nr: c_long, a1: c_long, a2: c_long) -> c_long {
    if nr == libc::SYS_clone && a1 == libc::SIGCHLD as c_long && a2 == 0 {
        return crate::exec::fork_simulated() as c_long;
    }
    if nr == libc::SYS_clone3 {
        unsupported(
            b"syscall(SYS_clone3): a thread or process made by a raw clone3 system call is not \
              simulated (use pthread_create or fork)",
            nr,
            0,
        );
    }
    unsupported(
        b"syscall(SYS_clone): a thread or process made by a raw clone system call is not \
          simulated (use pthread_create or fork)",
        nr,
        a1,
    )
}
