//! Thread stacks in the shim's own arena. glibc maps a new thread's stack (and, at its top,
//! the thread's descriptor and TLS) with an internal `mmap` the shim's hooks never see, so
//! the kernel placed it, and newer kernels align large anonymous mappings to huge pages:
//! where a thread's TLS lands — and so what an allocator seeded from its address does —
//! would depend on the kernel. `pthread_create` of a simulated thread without a stack of the
//! program's own gets one from [`crate::vmspace`] instead: the size and guard the attributes
//! (or glibc's defaults) ask for, placed like every other mapping.
//!
//! A stack is given back when its thread is joined, or, for a detached thread that has said
//! goodbye to the host, at the next `pthread_create`, after waiting for the kernel to clear
//! the thread's tid (`CLONE_CHILD_CLEARTID`, the word glibc keeps in its descriptor: found by
//! the first thread, which looks for its own tid there). Both points are simulated steps, so
//! where the next stack lands never depends on real timing. A joinable thread never joined
//! keeps its stack, as under glibc.

use crate::prelude::*;
use core::sync::atomic::{AtomicBool, AtomicUsize};

extern "C" {
    fn pthread_attr_getstackaddr(
        attr: *const libc::pthread_attr_t,
        addr: *mut *mut c_void,
    ) -> c_int;
    fn pthread_getattr_default_np(attr: *mut libc::pthread_attr_t) -> c_int;
    fn pthread_attr_getdetachstate(attr: *const libc::pthread_attr_t, state: *mut c_int) -> c_int;
}

/// One stack the shim mapped: where, how long (guard included), whose (`pthread_t`), and
/// whether its thread is detached (then freed once its tid word reads 0).
#[derive(Clone, Copy)]
struct Stack {
    base: usize,
    len: usize,
    thread: libc::pthread_t,
    detached: bool,
    /// The thread said goodbye to the host: it runs no more simulated code.
    ended: bool,
}

const NONE: Stack = Stack { base: 0, len: 0, thread: 0, detached: false, ended: false };

/// The stacks by slot, behind a spin lock (only the baton holder calls in, so it is never
/// contended but by a thread the host has not started yet).
struct Table(core::cell::UnsafeCell<[Stack; MAX_SLOTS]>);
// SAFETY: every access goes through `with_table`, which holds LOCK.
unsafe impl Sync for Table {}
static STACKS: Table = Table(core::cell::UnsafeCell::new([NONE; MAX_SLOTS]));
static LOCK: AtomicBool = AtomicBool::new(false);
/// Offset of the tid word in glibc's thread descriptor (0: not found yet).
static TID_OFFSET: AtomicUsize = AtomicUsize::new(0);

fn with_table<R>(f: impl FnOnce(&mut [Stack; MAX_SLOTS]) -> R) -> R {
    while LOCK.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
        core::hint::spin_loop();
    }
    // SAFETY: LOCK is held.
    let out = f(unsafe { &mut *STACKS.0.get() });
    LOCK.store(false, Ordering::Release);
    out
}

/// Attributes for `pthread_create`: `attr` (or the defaults) with a stack from the arena, in
/// `out`. None: leave the stack to glibc (the program gave one, or the arena could not).
pub(crate) unsafe fn with_arena_stack(
    attr: *const libc::pthread_attr_t,
    out: *mut libc::pthread_attr_t,
) -> Option<(usize, usize)> {
    sweep();
    if with_table(|t| t.iter().all(|s| s.base != 0)) {
        return None;
    }
    let mut own: *mut c_void = ptr::null_mut();
    if !attr.is_null() && (pthread_attr_getstackaddr(attr, &mut own) != 0 || !own.is_null()) {
        return None;
    }
    if attr.is_null() {
        if pthread_getattr_default_np(out) != 0 {
            return None;
        }
    } else {
        // A bitwise copy: glibc's attributes are plain data but for an affinity set, which
        // the copy only borrows (never destroyed, so never freed twice).
        ptr::copy_nonoverlapping(attr, out, 1);
    }
    let (mut size, mut guard) = (0usize, 0usize);
    libc::pthread_attr_getstacksize(out, &mut size);
    libc::pthread_attr_getguardsize(out, &mut guard);
    let (size, guard) = (crate::vmspace::round_up(size), crate::vmspace::round_up(guard));
    let prot = libc::PROT_READ | libc::PROT_WRITE;
    let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK;
    let base = crate::vmspace::map(0, size + guard, prot, flags, -1, 0);
    if base < 0 {
        return None;
    }
    let base = base as usize;
    if guard > 0 {
        libc::mprotect(base as *mut c_void, guard, libc::PROT_NONE);
    }
    libc::pthread_attr_setstack(out, (base + guard) as *mut c_void, size);
    Some((base, size + guard))
}

/// Keeps the stack `(base, len)` of the new thread `thread`; `attr` says if it was created
/// detached.
pub(crate) unsafe fn keep(
    (base, len): (usize, usize),
    thread: libc::pthread_t,
    attr: *const libc::pthread_attr_t,
) {
    let mut state = 0;
    pthread_attr_getdetachstate(attr, &mut state);
    let detached = state == libc::PTHREAD_CREATE_DETACHED;
    with_table(|t| {
        if let Some(s) = t.iter_mut().find(|s| s.base == 0) {
            *s = Stack { base, len, thread, detached, ended: false };
        }
    });
}

/// A stack mapped for a thread that glibc then failed to create.
pub(crate) fn unused((base, len): (usize, usize)) {
    crate::vmspace::unmap(base, len);
}

/// A thread that was joined: its stack is free now.
pub(crate) fn joined(thread: libc::pthread_t) {
    take(|s| s.thread == thread);
}

/// A thread detached after its creation: freed once it has ended.
pub(crate) fn detached(thread: libc::pthread_t) {
    with_table(|t| t.iter_mut().filter(|s| s.thread == thread).for_each(|s| s.detached = true));
}

/// The calling thread has said goodbye to the host.
pub(crate) fn ended() {
    // SAFETY: pthread_self has no preconditions.
    let me = unsafe { libc::pthread_self() };
    with_table(|t| t.iter_mut().filter(|s| s.thread == me).for_each(|s| s.ended = true));
}

/// Frees the stacks of detached threads that have said goodbye. Which ones is decided by the
/// simulation alone (a goodbye is a simulated step), never by how far the kernel has got
/// with a thread's end: for each, this waits for the kernel to clear its tid word first.
pub(crate) fn sweep() {
    let off = TID_OFFSET.load(Ordering::Relaxed);
    if off == 0 {
        return;
    }
    take(|s| s.detached && s.ended && gone((s.thread as usize + off) as *const i32));
}

/// Waits (at most about 10 s of real time, then keeps the stack) until the kernel has
/// cleared the tid word at `tid`, as `pthread_join` does.
fn gone(tid: *const i32) -> bool {
    let wait = libc::timespec { tv_sec: 0, tv_nsec: 10_000_000 };
    for _ in 0..1000 {
        // SAFETY: `tid` is in a stack this module mapped and has not freed.
        let now = unsafe { tid.read_volatile() };
        if now == 0 {
            return true;
        }
        let a = [tid as i64, libc::FUTEX_WAIT as i64, now as i64, &wait as *const _ as i64, 0, 0];
        // SAFETY: a futex wait on that word with a relative timeout.
        unsafe { sys::raw_ret(libc::SYS_futex, a) };
    }
    false
}

fn take(which: impl Fn(&Stack) -> bool) {
    with_table(|t| {
        for s in t.iter_mut().filter(|s| s.base != 0 && which(s)) {
            crate::vmspace::unmap(s.base, s.len);
            *s = NONE;
        }
    });
}

/// In a new thread: finds where glibc keeps this thread's tid in its descriptor (once).
pub(crate) fn learn_tid_offset() {
    if TID_OFFSET.load(Ordering::Relaxed) != 0 {
        return;
    }
    // SAFETY: gettid has no arguments; the descriptor is readable for its first KiB.
    unsafe {
        let tid = sys::raw_ret(libc::SYS_gettid, [0; 6]) as i32;
        let me = libc::pthread_self() as usize;
        let found = (0..1024).step_by(4).find(|o| ((me + o) as *const i32).read() == tid);
        if let Some(o) = found.filter(|&o| o > 0) {
            TID_OFFSET.store(o, Ordering::Relaxed);
        }
    }
}

/// The guard below a stack of this module's, if `thread` has one: `(base, len)` minus the
/// stack itself.
fn guard_of(thread: libc::pthread_t, attr: *const libc::pthread_attr_t) -> Option<usize> {
    let (mut addr, mut size): (*mut c_void, usize) = (ptr::null_mut(), 0);
    // SAFETY: `attr` was filled by pthread_getattr_np.
    unsafe { libc::pthread_attr_getstack(attr, &mut addr, &mut size) };
    with_table(|t| t.iter().find(|s| s.base != 0 && s.thread == thread).map(|s| s.len - size))
        .filter(|_| !addr.is_null())
}

/// glibc reports a guard of 0 for a stack it did not map, and Rust's std refuses to start a
/// thread without one ("there is no guard page"): a stack of this module's reports the guard
/// it has.
#[no_mangle]
pub unsafe extern "C" fn pthread_getattr_np(
    thread: libc::pthread_t,
    attr: *mut libc::pthread_attr_t,
) -> c_int {
    let real = real!(pthread_getattr_np: fn(libc::pthread_t, *mut libc::pthread_attr_t) -> c_int);
    let r = real(thread, attr);
    if r == 0 {
        if let Some(guard) = guard_of(thread, attr) {
            libc::pthread_attr_setguardsize(attr, guard);
        }
    }
    r
}
