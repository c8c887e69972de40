//! Threads: every simulated thread has its own slot, and only the one
//! holding the baton runs. Anything that would block a thread in the kernel on another
//! simulated thread (a contended mutex, a condition variable, a join) must instead block in the
//! host, or the baton holder would sleep while the thread it waits for never gets to run.

use crate::prelude::*;
use crate::slot::{await_baton, notify_host, slot_at, slot_ptr, DETACHED, MY_SLOT};
use crate::time::{now_ns, ts_ns};

/// Start routine and argument of the thread being created in each slot.
static START_FN: [AtomicU64; MAX_SLOTS] = [const { AtomicU64::new(0) }; MAX_SLOTS];
static START_ARG: [AtomicU64; MAX_SLOTS] = [const { AtomicU64::new(0) }; MAX_SLOTS];
/// `pthread_t` of the thread in each slot (0 = none), for joins.
static THREAD_IDS: [AtomicU64; MAX_SLOTS] = [const { AtomicU64::new(0) }; MAX_SLOTS];

/// Records that slot `k` holds thread `t`. glibc hands an ended detached thread's
/// descriptor, and so its `pthread_t`, to a later thread, and a detached thread is never joined,
/// so its entry is still here, under a slot the host may since have given to another
/// process's thread: that entry is stale and goes, or a join or `pthread_kill` of the new
/// thread would find it first.
fn remember(k: usize, t: libc::pthread_t) {
    for id in &THREAD_IDS {
        let _ = id.compare_exchange(t, 0, Ordering::Relaxed, Ordering::Relaxed);
    }
    THREAD_IDS[k].store(t, Ordering::Relaxed);
}

/// The slot of the simulated thread `t`, if it is one.
pub(crate) fn slot_of(t: libc::pthread_t) -> Option<usize> {
    THREAD_IDS.iter().position(|x| x.load(Ordering::Relaxed) == t)
}

type StartFn = extern "C" fn(*mut c_void) -> *mut c_void;

/// Says goodbye for this thread (the host ends it) and passes its remaining calls through.
pub(crate) fn thread_goodbye() {
    if !active() {
        return;
    }
    let slot = slot_ptr();
    let _ = DETACHED.try_with(|d| d.set(true));
    crate::stacks::ended();
    // SAFETY: we hold the baton; after this store the host owns the slot again.
    unsafe {
        (*slot).op = OP_THREAD_EXIT;
        notify_host(slot);
    }
}

/// A new thread's first step, on slot `k`: take the slot, wait for the baton before running
/// any of the program's code (without spinning: the creator runs first, and on our CPU), and
/// take the signals queued for it.
pub(crate) fn enter_simulation(k: usize) {
    let slot = slot_at(k);
    let _ = MY_SLOT.try_with(|s| s.set(slot));
    await_baton(slot, 0);
    crate::signals::take(slot);
}

extern "C" fn trampoline(k: *mut c_void) -> *mut c_void {
    let k = k as usize;
    crate::stacks::learn_tid_offset();
    enter_simulation(k);
    let f = START_FN[k].load(Ordering::Relaxed) as usize;
    let arg = START_ARG[k].load(Ordering::Relaxed) as *mut c_void;
    // SAFETY: `f` is the start routine the program passed to pthread_create.
    let start = unsafe { core::mem::transmute::<usize, StartFn>(f) };
    let armed = crate::threadexit::arm();
    let ret = start(arg);
    if !armed {
        let _g = Guard::enter();
        thread_goodbye(); // else after the program's thread-exit destructors: threadexit.rs
    }
    ret
}

#[no_mangle]
pub unsafe extern "C" fn pthread_create(
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    start: StartFn,
    arg: *mut c_void,
) -> c_int {
    let real = real!(pthread_create: fn(
        *mut libc::pthread_t, *const libc::pthread_attr_t, StartFn, *mut c_void
    ) -> c_int);
    if let Some(_g) = Guard::enter() {
        if active() {
            let k = handoff(OP_THREAD_NEW);
            if k < 0 {
                return (-k) as c_int;
            }
            let k = k as usize;
            START_FN[k].store(start as usize as u64, Ordering::Relaxed);
            START_ARG[k].store(arg as u64, Ordering::Relaxed);
            let mut own = core::mem::MaybeUninit::<libc::pthread_attr_t>::zeroed();
            let stack = crate::stacks::with_arena_stack(attr, own.as_mut_ptr());
            let use_attr = if stack.is_some() { own.as_ptr() } else { attr };
            let r = real(thread, use_attr, trampoline, k as *mut c_void);
            if r != 0 {
                if let Some(s) = stack {
                    crate::stacks::unused(s);
                }
                slot().args[0] = k as i64;
                handoff(OP_THREAD_ABORT);
                return r;
            }
            if let Some(stack) = stack {
                crate::stacks::keep(stack, *thread, use_attr);
            }
            remember(k, *thread);
            return 0;
        }
    }
    real(thread, attr, start, arg)
}

#[no_mangle]
pub unsafe extern "C" fn pthread_exit(ret: *mut c_void) -> ! {
    if let Some(_g) = Guard::enter() {
        let simulated = !MY_SLOT.try_with(|s| s.get()).unwrap_or(ptr::null_mut()).is_null();
        if simulated && !crate::threadexit::armed() {
            thread_goodbye(); // else after its cleanup handlers and destructors: threadexit.rs
        }
    }
    let real = real!(pthread_exit: fn(*mut c_void) -> ());
    real(ret);
    sys::exit_group(126)
}

#[no_mangle]
pub unsafe extern "C" fn pthread_join(t: libc::pthread_t, ret: *mut *mut c_void) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            if let Some(k) = slot_of(t) {
                slot().args[0] = k as i64;
                handoff(OP_JOIN);
                THREAD_IDS[k].store(0, Ordering::Relaxed);
            }
        }
    }
    // The thread has left the simulation; the kernel finishes it promptly.
    let r = real!(pthread_join: fn(libc::pthread_t, *mut *mut c_void) -> c_int)(t, ret);
    if r == 0 {
        crate::stacks::joined(t);
    }
    r
}

#[no_mangle]
pub unsafe extern "C" fn pthread_detach(t: libc::pthread_t) -> c_int {
    let r = real!(pthread_detach: fn(libc::pthread_t) -> c_int)(t);
    if r == 0 {
        crate::stacks::detached(t);
    }
    r
}

unsafe fn lock_simulated(m: *mut libc::pthread_mutex_t) -> c_int {
    let trylock = real!(pthread_mutex_trylock: fn(*mut libc::pthread_mutex_t) -> c_int);
    loop {
        let r = trylock(m);
        if r != libc::EBUSY {
            return r;
        }
        slot().args[0] = m as i64;
        handoff(OP_MUTEX_WAIT);
    }
}

#[no_mangle]
pub unsafe extern "C" fn pthread_mutex_lock(m: *mut libc::pthread_mutex_t) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            // Every lock is a point where another thread may be scheduled first.
            handoff(OP_YIELD);
            return lock_simulated(m);
        }
    }
    real!(pthread_mutex_lock: fn(*mut libc::pthread_mutex_t) -> c_int)(m)
}

#[no_mangle]
pub unsafe extern "C" fn pthread_mutex_unlock(m: *mut libc::pthread_mutex_t) -> c_int {
    let r = real!(pthread_mutex_unlock: fn(*mut libc::pthread_mutex_t) -> c_int)(m);
    if let Some(_g) = Guard::enter() {
        if active() && r == 0 {
            slot().args[0] = m as i64;
            handoff(OP_MUTEX_UNLOCK);
        }
    }
    r
}

pub(crate) unsafe fn cond_wait_common(
    c: *mut libc::pthread_cond_t,
    m: *mut libc::pthread_mutex_t,
    deadline: u64,
) -> c_int {
    real!(pthread_mutex_unlock: fn(*mut libc::pthread_mutex_t) -> c_int)(m);
    let s = slot();
    s.args[0] = c as i64;
    s.args[1] = m as i64;
    s.args[2] = deadline as i64;
    let r = handoff(OP_COND_WAIT);
    let l = lock_simulated(m);
    if l != 0 {
        return l;
    }
    if r < 0 {
        (-r) as c_int
    } else {
        0
    }
}

#[no_mangle]
pub unsafe extern "C" fn pthread_cond_wait(
    c: *mut libc::pthread_cond_t,
    m: *mut libc::pthread_mutex_t,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            return cond_wait_common(c, m, u64::MAX);
        }
    }
    real!(pthread_cond_wait: fn(*mut libc::pthread_cond_t, *mut libc::pthread_mutex_t) -> c_int)(
        c, m,
    )
}

#[no_mangle]
pub unsafe extern "C" fn pthread_cond_timedwait(
    c: *mut libc::pthread_cond_t,
    m: *mut libc::pthread_mutex_t,
    abstime: *const libc::timespec,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            if abstime.is_null() {
                return libc::EINVAL;
            }
            return cond_wait_common(c, m, deadline_from_abs(abstime));
        }
    }
    real!(pthread_cond_timedwait: fn(
        *mut libc::pthread_cond_t, *mut libc::pthread_mutex_t, *const libc::timespec
    ) -> c_int)(c, m, abstime)
}

/// Wakes one or all simulated waiters on the condition (or semaphore, rwlock) at `addr`.
pub(crate) unsafe fn cond_signal_common(addr: *const c_void, all: bool) {
    signal_in(addr, all, false);
}

/// Wakes waiters on `addr` in this process, or (`shared`) in every process of the node: a
/// process-shared object lives in memory mapped before a fork, at the same address in each
/// (PostgreSQL's semaphores in its main shared segment). A waiter woken by an unrelated object
/// at the same address elsewhere looks again and waits again.
pub(crate) unsafe fn signal_in(addr: *const c_void, all: bool, shared: bool) {
    let s = slot();
    s.args[0] = addr as i64;
    s.args[1] = all as i64;
    s.args[2] = shared as i64;
    handoff(OP_COND_SIGNAL);
}

/// Whether glibc's `sem_t` at `sem` was made process-shared (`sem_init` with `pshared` set, or
/// `sem_open`): the word after its 64-bit value is then glibc's `FUTEX_SHARED`, which is
/// `FUTEX_PRIVATE_FLAG` (128; a private semaphore has 0 there).
unsafe fn sem_shared(sem: *const libc::sem_t) -> bool {
    (*(sem as *const u8).add(8).cast::<u32>()) == libc::FUTEX_PRIVATE_FLAG as u32
}

/// Where waits for semaphore `sem` wait: its address, or a process-shared one's key
/// (`sharedkeys`: the same in every process that maps its file).
pub(crate) unsafe fn sem_at(sem: *const libc::sem_t) -> *const c_void {
    if sem_shared(sem) {
        crate::sharedkeys::key(sem as *const c_void)
    } else {
        sem as *const c_void
    }
}

#[no_mangle]
pub unsafe extern "C" fn pthread_cond_signal(c: *mut libc::pthread_cond_t) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            cond_signal_common(c as *const c_void, false);
            return 0;
        }
    }
    real!(pthread_cond_signal: fn(*mut libc::pthread_cond_t) -> c_int)(c)
}

#[no_mangle]
pub unsafe extern "C" fn pthread_cond_broadcast(c: *mut libc::pthread_cond_t) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            cond_signal_common(c as *const c_void, true);
            return 0;
        }
    }
    real!(pthread_cond_broadcast: fn(*mut libc::pthread_cond_t) -> c_int)(c)
}

/// `syscall(2)` itself: futexes (Rust's std locks, condition variables, channels and parking
/// call `syscall(SYS_futex, …)`) wait and wake in the host; `SYS_clone`/`SYS_clone3` and
/// `SYS_exit` go to `clone`; the numbers of other hooked calls to their hooks (`rawcalls`);
/// every other number goes to libc, where the seccomp trap reports the ones that would escape.
#[no_mangle]
pub unsafe extern "C" fn syscall(
    nr: c_long,
    a1: c_long,
    a2: c_long,
    a3: c_long,
    a4: c_long,
    a5: c_long,
    a6: c_long,
) -> c_long {
    if nr == libc::SYS_clone || nr == libc::SYS_clone3 || nr == libc::SYS_exit {
        if let Some(_g) = Guard::enter() {
            if active() {
                if nr == libc::SYS_exit {
                    crate::clone::exit_thread(a1); // returns only on the main thread
                } else {
                    return crate::clone::raw(nr, a1, a2, a3, a4);
                }
            }
        }
    }
    if nr == libc::SYS_futex {
        if let Some(_g) = Guard::enter() {
            if active() {
                return futex_simulated(
                    a1 as *const AtomicU32,
                    a2 as c_int,
                    a3 as u32,
                    a4 as *const libc::timespec,
                );
            }
        }
    }
    if let Some(r) = crate::rawcalls::hooked(nr, [a1, a2, a3, a4, a5, a6]) {
        return r;
    }
    real!(syscall: fn(c_long, c_long, c_long, c_long, c_long, c_long, c_long) -> c_long)(
        nr, a1, a2, a3, a4, a5, a6,
    )
}

/// Where a futex operation on `word` waits or wakes: its address, or a shared one's key.
fn futex_at(word: *const AtomicU32, op: c_int) -> *const c_void {
    if op & libc::FUTEX_PRIVATE_FLAG == 0 {
        crate::sharedkeys::key(word as *const c_void)
    } else {
        word as *const c_void
    }
}

unsafe fn futex_simulated(
    word: *const AtomicU32,
    op: c_int,
    val: u32,
    timeout: *const libc::timespec,
) -> c_long {
    let cmd = op & libc::FUTEX_CMD_MASK;
    match cmd {
        libc::FUTEX_WAIT | libc::FUTEX_WAIT_BITSET => {
            if (*word).load(Ordering::SeqCst) != val {
                set_errno(libc::EAGAIN);
                return -1;
            }
            let deadline = if timeout.is_null() {
                u64::MAX
            } else if cmd == libc::FUTEX_WAIT {
                now_ns().saturating_add(ts_ns(&*timeout))
            } else {
                // WAIT_BITSET takes an absolute time on CLOCK_MONOTONIC, or CLOCK_REALTIME.
                let base = if op & libc::FUTEX_CLOCK_REALTIME != 0 {
                    REALTIME_BASE_NS
                } else {
                    MONOTONIC_BASE_NS
                };
                ts_ns(&*timeout).saturating_sub(base)
            };
            let s = slot();
            s.args[0] = futex_at(word, op) as i64;
            s.args[1] = deadline as i64;
            ret_errno(handoff(OP_FUTEX_WAIT)) as c_long
        }
        libc::FUTEX_WAKE | libc::FUTEX_WAKE_BITSET => {
            let s = slot();
            s.args[0] = futex_at(word, op) as i64;
            s.args[1] = val as i64;
            s.args[2] = (op & libc::FUTEX_PRIVATE_FLAG == 0) as i64;
            ret_errno(handoff(OP_FUTEX_WAKE)) as c_long
        }
        _ => unsupported(
            b"syscall(SYS_futex) with an operation the shim does not simulate",
            libc::SYS_futex,
            cmd as i64,
        ),
    }
}

// Semaphores, read-write locks and timed mutex locks block in glibc on futexes the shim does
// not see, so they too wait in the host: try the real object, and if it is taken, wait on its
// address (as a condition variable) until whoever releases it signals that address.

/// Waits on `addr` in the host until signalled or `deadline`; answers 0 or -ETIMEDOUT.
pub(crate) unsafe fn wait_on(addr: *const c_void, deadline: u64) -> i64 {
    let s = slot();
    s.args[0] = addr as i64;
    s.args[1] = 0;
    s.args[2] = deadline as i64;
    handoff(OP_COND_WAIT)
}

/// An absolute `abstime` as a virtual deadline. The waiter's clock is not visible from here;
/// the two simulated clocks are ~56 years apart, so the value itself says which one it was read
/// from.
unsafe fn deadline_from_abs(abstime: *const libc::timespec) -> u64 {
    let abs = ts_ns(&*abstime);
    let base = if abs >= REALTIME_BASE_NS { REALTIME_BASE_NS } else { MONOTONIC_BASE_NS };
    abs.saturating_sub(base)
}

/// The shared loop: `try_take` until it succeeds (0), fails otherwise, or `deadline` passes.
pub(crate) unsafe fn take_or_wait(
    addr: *const c_void,
    deadline: u64,
    busy: c_int,
    mut try_take: impl FnMut() -> c_int,
) -> c_int {
    handoff(OP_YIELD);
    loop {
        let r = try_take();
        if r != busy {
            return r;
        }
        if wait_on(addr, deadline) < 0 {
            let r = try_take();
            return if r == busy { libc::ETIMEDOUT } else { r };
        }
    }
}

/// sem_trywait reports "taken" as -1/EAGAIN; normalise to an error number.
pub(crate) unsafe fn sem_try(sem: *mut libc::sem_t) -> c_int {
    if real!(sem_trywait: fn(*mut libc::sem_t) -> c_int)(sem) == 0 {
        0
    } else {
        *libc::__errno_location()
    }
}

#[no_mangle]
pub unsafe extern "C" fn sem_wait(sem: *mut libc::sem_t) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            let r = take_or_wait(sem_at(sem), u64::MAX, libc::EAGAIN, || sem_try(sem));
            if r != 0 {
                set_errno(r);
                return -1;
            }
            return 0;
        }
    }
    real!(sem_wait: fn(*mut libc::sem_t) -> c_int)(sem)
}

#[no_mangle]
pub unsafe extern "C" fn sem_timedwait(
    sem: *mut libc::sem_t,
    abstime: *const libc::timespec,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            let deadline = deadline_from_abs(abstime);
            let r = take_or_wait(sem_at(sem), deadline, libc::EAGAIN, || sem_try(sem));
            if r != 0 {
                set_errno(r);
                return -1;
            }
            return 0;
        }
    }
    real!(sem_timedwait: fn(*mut libc::sem_t, *const libc::timespec) -> c_int)(sem, abstime)
}

#[no_mangle]
pub unsafe extern "C" fn sem_post(sem: *mut libc::sem_t) -> c_int {
    let r = real!(sem_post: fn(*mut libc::sem_t) -> c_int)(sem);
    if let Some(_g) = Guard::enter() {
        if active() && r == 0 {
            signal_in(sem_at(sem), true, sem_shared(sem));
        }
    }
    r
}

/// A read (`write` false) or write lock of `l` by `deadline` (u64::MAX: none), in the host.
pub(crate) unsafe fn rwlock_take(
    l: *mut libc::pthread_rwlock_t,
    write: bool,
    deadline: u64,
) -> c_int {
    let take = if write {
        real!(pthread_rwlock_trywrlock: fn(*mut libc::pthread_rwlock_t) -> c_int)
    } else {
        real!(pthread_rwlock_tryrdlock: fn(*mut libc::pthread_rwlock_t) -> c_int)
    };
    take_or_wait(l as *const c_void, deadline, libc::EBUSY, || take(l))
}

/// A lock of mutex `m` by `deadline`, in the host (the timed and clock locks).
pub(crate) unsafe fn mutex_take_by(m: *mut libc::pthread_mutex_t, deadline: u64) -> c_int {
    let trylock = real!(pthread_mutex_trylock: fn(*mut libc::pthread_mutex_t) -> c_int);
    take_or_wait(m as *const c_void, deadline, libc::EBUSY, || trylock(m))
}

#[no_mangle]
pub unsafe extern "C" fn pthread_rwlock_rdlock(l: *mut libc::pthread_rwlock_t) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            return rwlock_take(l, false, u64::MAX);
        }
    }
    real!(pthread_rwlock_rdlock: fn(*mut libc::pthread_rwlock_t) -> c_int)(l)
}

#[no_mangle]
pub unsafe extern "C" fn pthread_rwlock_wrlock(l: *mut libc::pthread_rwlock_t) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            return rwlock_take(l, true, u64::MAX);
        }
    }
    real!(pthread_rwlock_wrlock: fn(*mut libc::pthread_rwlock_t) -> c_int)(l)
}

#[no_mangle]
pub unsafe extern "C" fn pthread_rwlock_unlock(l: *mut libc::pthread_rwlock_t) -> c_int {
    let r = real!(pthread_rwlock_unlock: fn(*mut libc::pthread_rwlock_t) -> c_int)(l);
    if let Some(_g) = Guard::enter() {
        if active() && r == 0 {
            cond_signal_common(l as *const c_void, true);
        }
    }
    r
}

#[no_mangle]
pub unsafe extern "C" fn pthread_mutex_timedlock(
    m: *mut libc::pthread_mutex_t,
    abstime: *const libc::timespec,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            return mutex_take_by(m, deadline_from_abs(abstime));
        }
    }
    real!(pthread_mutex_timedlock: fn(*mut libc::pthread_mutex_t, *const libc::timespec) -> c_int)(
        m, abstime,
    )
}

// ---------------------------------------------------------------------------------------------
// Calls a busy wait is made of: each is a point where another thread may run, and (in the
// host) costs modelled CPU time, so a loop of them sees virtual time pass.

#[no_mangle]
pub unsafe extern "C" fn sched_yield() -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            handoff(OP_YIELD);
            return 0;
        }
    }
    sys::raw(libc::SYS_sched_yield, [0; 6]) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn pthread_yield() -> c_int {
    sched_yield()
}

#[no_mangle]
pub unsafe extern "C" fn pthread_mutex_trylock(m: *mut libc::pthread_mutex_t) -> c_int {
    let r = real!(pthread_mutex_trylock: fn(*mut libc::pthread_mutex_t) -> c_int)(m);
    if r == libc::EBUSY {
        if let Some(_g) = Guard::enter() {
            if active() {
                handoff(OP_YIELD);
            }
        }
    }
    r
}

#[no_mangle]
pub unsafe extern "C" fn pthread_spin_trylock(l: *mut libc::pthread_spinlock_t) -> c_int {
    let r = real!(pthread_spin_trylock: fn(*mut libc::pthread_spinlock_t) -> c_int)(l);
    if r == libc::EBUSY {
        if let Some(_g) = Guard::enter() {
            if active() {
                handoff(OP_YIELD);
            }
        }
    }
    r
}

/// A spin lock's holder may be a thread that is not running (only one runs at a time): spin
/// through the host, so the holder gets to run and release it.
#[no_mangle]
pub unsafe extern "C" fn pthread_spin_lock(l: *mut libc::pthread_spinlock_t) -> c_int {
    let trylock = real!(pthread_spin_trylock: fn(*mut libc::pthread_spinlock_t) -> c_int);
    loop {
        let r = trylock(l);
        if r != libc::EBUSY {
            return r;
        }
        if let Some(_g) = Guard::enter() {
            if active() {
                handoff(OP_YIELD);
                continue;
            }
        }
        core::hint::spin_loop();
    }
}

// ---------------------------------------------------------------------------------------------
// Barriers: glibc's wait on a futex the shim does not see, so the shim keeps each barrier's
// count itself (only the baton holder runs, so plain fields need no lock) and waiters wait on
// its address in the host until the last arrival signals it.

const BARRIERS_MAX: usize = 64;

/// A barrier by address (0 = free), with its count, arrivals and generation.
struct Barrier {
    addr: AtomicU64,
    count: AtomicU32,
    arrived: AtomicU32,
    generation: AtomicU32,
}

static BARRIERS: [Barrier; BARRIERS_MAX] = [const {
    Barrier {
        addr: AtomicU64::new(0),
        count: AtomicU32::new(0),
        arrived: AtomicU32::new(0),
        generation: AtomicU32::new(0),
    }
}; BARRIERS_MAX];

fn barrier_of(b: *const libc::pthread_barrier_t) -> Option<&'static Barrier> {
    BARRIERS.iter().find(|x| x.addr.load(Ordering::Relaxed) == b as u64)
}

#[no_mangle]
pub unsafe extern "C" fn pthread_barrier_init(
    b: *mut libc::pthread_barrier_t,
    attr: *const libc::pthread_barrierattr_t,
    count: c_uint,
) -> c_int {
    let r = real!(pthread_barrier_init: fn(
        *mut libc::pthread_barrier_t, *const libc::pthread_barrierattr_t, c_uint
    ) -> c_int)(b, attr, count);
    if let Some(_g) = Guard::enter() {
        if active() && r == 0 {
            let mut shared = libc::PTHREAD_PROCESS_PRIVATE;
            if !attr.is_null() {
                libc::pthread_barrierattr_getpshared(attr, &mut shared);
            }
            if shared != libc::PTHREAD_PROCESS_PRIVATE {
                unsupported(b"pthread_barrier_init(PTHREAD_PROCESS_SHARED)", -1, 0);
            }
            let free = barrier_of(b).or_else(|| barrier_of(ptr::null()));
            let Some(x) = free else {
                unsupported(b"pthread_barrier_init(): more than 64 barriers", -1, 0);
            };
            x.addr.store(b as u64, Ordering::Relaxed);
            x.count.store(count, Ordering::Relaxed);
            x.arrived.store(0, Ordering::Relaxed);
        }
    }
    r
}

#[no_mangle]
pub unsafe extern "C" fn pthread_barrier_wait(b: *mut libc::pthread_barrier_t) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            if let Some(x) = barrier_of(b) {
                // Every arrival is a point where another thread may run first.
                handoff(OP_YIELD);
                let generation = x.generation.load(Ordering::Relaxed);
                let arrived = x.arrived.load(Ordering::Relaxed) + 1;
                if arrived >= x.count.load(Ordering::Relaxed) {
                    x.arrived.store(0, Ordering::Relaxed);
                    x.generation.store(generation.wrapping_add(1), Ordering::Relaxed);
                    cond_signal_common(b as *const c_void, true);
                    return libc::PTHREAD_BARRIER_SERIAL_THREAD;
                }
                x.arrived.store(arrived, Ordering::Relaxed);
                while x.generation.load(Ordering::Relaxed) == generation {
                    wait_on(b as *const c_void, u64::MAX);
                }
                return 0;
            }
        }
    }
    real!(pthread_barrier_wait: fn(*mut libc::pthread_barrier_t) -> c_int)(b)
}

#[no_mangle]
pub unsafe extern "C" fn pthread_barrier_destroy(b: *mut libc::pthread_barrier_t) -> c_int {
    if let Some(x) = barrier_of(b) {
        if x.arrived.load(Ordering::Relaxed) != 0 {
            return libc::EBUSY;
        }
        x.addr.store(0, Ordering::Relaxed);
    }
    real!(pthread_barrier_destroy: fn(*mut libc::pthread_barrier_t) -> c_int)(b)
}
