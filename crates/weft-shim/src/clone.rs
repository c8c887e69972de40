//! Threads and processes made without `pthread_create` or `fork`: glibc's `clone()` wrapper
//! and `syscall(SYS_clone)` / `syscall(SYS_clone3)`. A `clone()` thread (it shares memory,
//! descriptors, filesystem and signal handlers, and has no TLS of its own) becomes a simulated
//! thread: it is started with `pthread_create` on a slot the host assigns, runs the program's
//! function there, and honours the tid flags (`CLONE_PARENT_SETTID`, `CLONE_CHILD_SETTID`,
//! `CLONE_CHILD_CLEARTID`, the last with a wake of a simulated futex). A `clone()` with only
//! `SIGCHLD` is a simulated fork whose child runs the function and exits with its result.
//! A fork-like raw call (`clone`/`clone3` without `CLONE_VM`, `fork`, `vfork`), through
//! `syscall(2)` or a `syscall` instruction of the program's own (which the seccomp filter in
//! `sys` traps into [`trapped`]), is a simulated fork too. Everything else is reported as
//! unsupported, by name: a raw thread returns into code the shim cannot run on another
//! thread's behalf.

use crate::prelude::*;
use crate::slot::{slot_at, MY_SLOT};

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
    crate::threads::enter_simulation(k);
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
        s.args[2] = 0; // the kernel's wake of a thread id is a private one
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

/// A fork-like request (a `clone`/`clone3` without `CLONE_VM`, or `fork`/`vfork`), checked:
/// what the simulated fork must do on top of forking.
struct ForkLike {
    /// `CLONE_PARENT_SETTID`: where the parent gets the child's (virtual) pid.
    ptid: *mut libc::pid_t,
    /// `CLONE_CHILD_SETTID`: where the child gets its own.
    set_ctid: *mut libc::pid_t,
    /// `CLONE_CHILD_CLEARTID`: cleared (and woken) by the kernel at the child's end.
    clear_ctid: *mut libc::pid_t,
    /// The child's stack pointer, or 0 for the parent's (copied) stack.
    stack: u64,
}

/// What a process-making call asks for.
enum Request {
    Fork(ForkLike),
    /// Shares memory: a thread (or a `CLONE_VM` vfork), which only `clone()` can make.
    Thread,
    Refused(&'static [u8]),
}

/// The flags a fork-like `clone` may have besides its exit signal, which must be `SIGCHLD`:
/// the tid flags (done by the shim, with virtual ids), `CLONE_VFORK` (a fork, as the `vfork`
/// hook does) and two the kernel ignores for a process.
const FORK_EXTRA: u64 = (libc::CLONE_PARENT_SETTID
    | libc::CLONE_CHILD_SETTID
    | libc::CLONE_CHILD_CLEARTID
    | libc::CLONE_VFORK
    | libc::CLONE_IO
    | libc::CLONE_DETACHED) as u64;

/// Classifies `clone(flags, stack, ptid, ctid, tls)` (or `clone3`'s fields as the same).
fn request(flags: u64, exit_signal: u64, stack: u64, ptid: u64, ctid: u64) -> Request {
    if flags & libc::CLONE_VM as u64 != 0 {
        return Request::Thread;
    }
    if exit_signal != libc::SIGCHLD as u64 {
        return Request::Refused(b"a process made by a raw clone with an exit signal other than SIGCHLD is not simulated");
    }
    if flags & !FORK_EXTRA != 0 {
        return Request::Refused(b"a process made by a raw clone sharing state with its parent (CLONE_FILES, CLONE_FS, CLONE_SETTLS, namespaces, pidfd, ...) is not simulated");
    }
    let has = |f: c_int| flags & f as u64 != 0;
    let ptr = |on: bool, p: u64| if on { p as *mut libc::pid_t } else { ptr::null_mut() };
    Request::Fork(ForkLike {
        ptid: ptr(has(libc::CLONE_PARENT_SETTID), ptid),
        set_ctid: ptr(has(libc::CLONE_CHILD_SETTID), ctid),
        clear_ctid: ptr(has(libc::CLONE_CHILD_CLEARTID), ctid),
        stack,
    })
}

/// `clone3(args, size)` as a [`Request`]; its stack is the top of the area it gives.
///
/// # Safety
/// `args` is the program's pointer, read as the kernel would (at most `size` bytes).
unsafe fn request3(args: *const u64, size: u64) -> Request {
    // flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
    // set_tid_size, cgroup: clone_args of Linux 5.7+, 88 bytes; 64 is the first version.
    if args.is_null() || !(64..=4096).contains(&size) {
        return Request::Refused(
            b"a raw clone3 with an argument block the shim cannot read is not simulated",
        );
    }
    let mut f = [0u64; 11];
    let n = (size as usize / 8).min(11);
    ptr::copy_nonoverlapping(args, f.as_mut_ptr(), n);
    if f[8] != 0 || f[9] != 0 || f[10] != 0 {
        return Request::Refused(b"a raw clone3 with set_tid or a cgroup is not simulated");
    }
    let stack = if f[5] == 0 { 0 } else { f[5] + f[6] };
    request(f[0], f[4], stack, f[3], f[2])
}

/// Forks a simulated child for a fork-like raw call; answers 0 in the child and the child's
/// virtual pid in the parent, or `-errno`. The child is made by the shim's own stub with only
/// `SIGCHLD` (and `CLONE_CHILD_CLEARTID`, which is about the child's own memory), on a copy of
/// the parent's stack; the caller moves it to its stack.
///
/// # Safety
/// Active, on the thread holding the baton; the pointers as the program passed them.
unsafe fn fork_like(f: &ForkLike) -> i64 {
    let r = handoff(OP_FORK);
    if r < 0 {
        return r;
    }
    let k = r as usize;
    let mut flags = libc::SIGCHLD as i64;
    if !f.clear_ctid.is_null() {
        flags |= libc::CLONE_CHILD_CLEARTID as i64;
    }
    let pid = sys::raw_ret(libc::SYS_clone, [flags, 0, 0, f.clear_ctid as i64, 0, 0]);
    if pid == 0 {
        crate::slot::become_child(k);
        if !f.set_ctid.is_null() {
            *f.set_ctid = crate::slot::VPID.load(Ordering::Relaxed) as libc::pid_t;
        }
        return 0;
    }
    let s = slot();
    s.args[0] = pid;
    s.args[1] = k as i64;
    let v = handoff(OP_FORKED);
    if pid < 0 {
        return pid;
    }
    if !f.ptid.is_null() {
        *f.ptid = v as libc::pid_t;
    }
    v
}

/// A process-making system call the seccomp filter trapped (a `syscall` instruction of the
/// program's own, or libc's `syscall()` for `SYS_fork`/`SYS_vfork`): a fork-like one is
/// simulated here, in the SIGSYS handler, by answering in the saved registers (0 and the new
/// stack in the child, the virtual pid in the parent). Returns false for the rest, which the
/// handler reports; a fork-like one with flags the shim cannot follow is reported here.
///
/// # Safety
/// In the SIGSYS handler, with the context the kernel passed.
pub(crate) unsafe fn trapped(nr: c_long, uc: &mut libc::ucontext_t) -> bool {
    let g = &mut uc.uc_mcontext.gregs;
    let reg = |r: c_int| g[r as usize] as u64;
    let (a1, a2, a3, a4) =
        (reg(libc::REG_RDI), reg(libc::REG_RSI), reg(libc::REG_RDX), reg(libc::REG_R10));
    let req = match nr {
        libc::SYS_fork | libc::SYS_vfork => request(0, libc::SIGCHLD as u64, 0, 0, 0),
        libc::SYS_clone => request(a1 & !0xff, a1 & 0xff, a2, a3, a4),
        libc::SYS_clone3 => request3(a1 as *const u64, a2),
        _ => return false,
    };
    let f = match req {
        Request::Fork(f) => f,
        Request::Thread => return false,
        Request::Refused(why) => unsupported(why, nr, 0),
    };
    let _g = Guard::enter();
    if !active() {
        return false;
    }
    let r = fork_like(&f);
    let g = &mut uc.uc_mcontext.gregs;
    g[libc::REG_RAX as usize] = r;
    if r == 0 && f.stack != 0 {
        g[libc::REG_RSP as usize] = f.stack as i64;
    }
    true
}

/// `syscall(SYS_clone, …)` / `syscall(SYS_clone3, …)` from the program. One without
/// `CLONE_VM` and without a stack of its own is a fork (see [`fork_like`]); any other returns
/// on a new thread or stack into the middle of libc's `syscall()`, which the shim cannot
/// follow: reported.
///
/// # Safety
/// Active, inside a hook, on the thread holding the baton.
pub(crate) unsafe fn raw(nr: c_long, a1: c_long, a2: c_long, a3: c_long, a4: c_long) -> c_long {
    let (a1, a2, a3, a4) = (a1 as u64, a2 as u64, a3 as u64, a4 as u64);
    let req = if nr == libc::SYS_clone3 {
        request3(a1 as *const u64, a2)
    } else {
        request(a1 & !0xff, a1 & 0xff, a2, a3, a4)
    };
    match req {
        Request::Fork(f) if f.stack == 0 => return ret_errno(fork_like(&f)),
        Request::Refused(why) => unsupported(why, nr, a1 as i64),
        _ => {}
    }
    if nr == libc::SYS_clone3 {
        unsupported(
            b"syscall(SYS_clone3): a thread made by a raw clone3 system call (or a process on a \
              stack of its own) is not simulated (use pthread_create or fork)",
            nr,
            0,
        );
    }
    unsupported(
        b"syscall(SYS_clone): a thread made by a raw clone system call (or a process on a \
          stack of its own) is not simulated (use pthread_create or fork)",
        nr,
        a1 as i64,
    )
}
