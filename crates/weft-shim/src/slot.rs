//! The hand-off: this process's state (uninitialised, active, passing through), the mapping of
//! the host's region, each thread's slot and its reentrancy guard, the library constructor and
//! destructor, the baton protocol (`handoff`, `await_baton`, `notify_host`), errno helpers, the
//! report of an unsupported call, and raw diagnostics. Every other module talks to the host
//! only through `handoff` on the calling thread's slot.

use crate::prelude::*;
use crate::random::RNG;

const STATE_UNINIT: u32 = 0;
const STATE_INITIALISING: u32 = 1;
const STATE_ACTIVE: u32 = 2;
const STATE_PASSTHROUGH: u32 = 3;

static STATE: AtomicU32 = AtomicU32::new(STATE_UNINIT);
pub(crate) static HEADER: AtomicPtr<Header> = AtomicPtr::new(ptr::null_mut());
/// The main thread's slot; other simulated threads find theirs in `MY_SLOT`.
static SLOT: AtomicPtr<Slot> = AtomicPtr::new(ptr::null_mut());
/// Start of the shared region (slots of new threads are found from it).
pub(crate) static BASE: AtomicPtr<u8> = AtomicPtr::new(ptr::null_mut());
/// The virtual pid the host assigned (0 until hello).
pub(crate) static VPID: AtomicI64 = AtomicI64::new(0);
/// The parent's virtual pid, as the host answered at hello (1 for a node's own program).
pub(crate) static PPID: AtomicI64 = AtomicI64::new(0);
/// The fd the region was inherited at (kept open, close-on-exec, for an `exec`).
pub(crate) static REGION: AtomicI64 = AtomicI64::new(-1);
/// The region's inode, which tells it from a descriptor the program put at its number.
static REGION_INODE: AtomicU64 = AtomicU64::new(0);
/// Calls served locally since the last hand-off.
static LOCAL_CALLS: AtomicU32 = AtomicU32::new(0);

thread_local! {
    /// Set while this thread is inside a hook: nested hooked calls pass straight through.
    static IN_HOOK: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
    /// The slot of a thread created under the shim (null: the main thread's `SLOT`).
    pub(crate) static MY_SLOT: core::cell::Cell<*mut Slot> = const { core::cell::Cell::new(ptr::null_mut()) };
    /// Set once this thread has said goodbye to the host: its remaining calls pass through.
    pub(crate) static DETACHED: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
}

/// This thread's slot.
pub(crate) fn slot_ptr() -> *mut Slot {
    let mine = MY_SLOT.try_with(|s| s.get()).unwrap_or(ptr::null_mut());
    if mine.is_null() {
        SLOT.load(Ordering::Acquire)
    } else {
        mine
    }
}

fn detached() -> bool {
    DETACHED.try_with(|d| d.get()).unwrap_or(true)
}

/// Marks this thread as inside a hook for its lifetime.
pub(crate) struct Guard;

impl Guard {
    /// `None` when the thread is already inside a hook (or its TLS is gone).
    pub(crate) fn enter() -> Option<Guard> {
        IN_HOOK
            .try_with(|g| {
                if g.get() {
                    None
                } else {
                    g.set(true);
                    Some(Guard)
                }
            })
            .ok()
            .flatten()
    }
}

impl Drop for Guard {
    /// Leaving the outermost hook is where signals handed over meanwhile are delivered.
    fn drop(&mut self) {
        let _ = IN_HOOK.try_with(|g| g.set(false));
        crate::signals::deliver_queued();
    }
}

/// Runs `f` (a signal handler) with hooks live again, from inside a hook.
pub(crate) fn hooks_open<R>(f: impl FnOnce() -> R) -> R {
    let was = IN_HOOK.try_with(|g| g.replace(false)).unwrap_or(false);
    let r = f();
    let _ = IN_HOOK.try_with(|g| g.set(was));
    r
}

/// Writes a diagnostic line to stderr with a raw system call (no stdio, no allocation).
pub(crate) fn diag(msg: &[u8]) {
    // SAFETY: writing a valid byte slice to fd 2; the result is deliberately ignored.
    unsafe {
        libc::write(2, msg.as_ptr().cast(), msg.len());
    }
}

/// True when hooks should simulate; initialises on first use.
pub(crate) fn active() -> bool {
    match STATE.load(Ordering::Acquire) {
        STATE_ACTIVE => !detached(),
        STATE_PASSTHROUGH | STATE_INITIALISING => false,
        _ => {
            init();
            STATE.load(Ordering::Acquire) == STATE_ACTIVE
        }
    }
}

/// Reads an unsigned decimal environment variable (libc `getenv`: no allocation).
fn env_number(name: &[u8]) -> Option<u64> {
    // SAFETY: `name` is NUL-terminated; getenv returns NULL or a NUL-terminated string.
    let p = unsafe { libc::getenv(name.as_ptr().cast()) };
    if p.is_null() {
        return None;
    }
    let mut v: u64 = 0;
    let mut i = 0;
    loop {
        // SAFETY: reading within the NUL-terminated string returned by getenv.
        let c = unsafe { *p.add(i) } as u8;
        if c == 0 {
            break;
        }
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((c - b'0') as u64)?;
        i += 1;
    }
    (i > 0).then_some(v)
}

/// The inode `fd` refers to, or None if it is not open.
fn inode(fd: c_int) -> Option<u64> {
    // SAFETY: a stat is plain integers.
    let mut st: libc::stat = unsafe { core::mem::zeroed() };
    let args = [i64::from(fd), &mut st as *mut libc::stat as i64, 0, 0, 0, 0];
    // SAFETY: fstat writes one stat (raw: no hook of the shim's own sees it).
    (unsafe { crate::sys::raw_ret(libc::SYS_fstat, args) } == 0).then_some(st.st_ino)
}

/// Whether `fd` still refers to the host's region (a `dup2` onto its number that found no
/// free descriptor to move the region to replaces it).
pub(crate) fn is_region(fd: c_int) -> bool {
    inode(fd).is_some_and(|i| i == REGION_INODE.load(Ordering::Relaxed))
}

fn init() {
    if STATE
        .compare_exchange(STATE_UNINIT, STATE_INITIALISING, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        return;
    }
    let (Some(fd), Some(slot)) = (env_number(ENV_FD), env_number(ENV_SLOT)) else {
        STATE.store(STATE_PASSTHROUGH, Ordering::Release);
        return;
    };
    if slot as usize >= MAX_SLOTS {
        diag(b"weft-shim: slot out of range; passing through\n");
        STATE.store(STATE_PASSTHROUGH, Ordering::Release);
        return;
    }
    // SAFETY: mapping the host's region from the inherited fd; checked for failure below.
    let base = unsafe {
        libc::mmap(
            ptr::null_mut(),
            REGION_SIZE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd as c_int,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        diag(b"weft-shim: cannot map the host's region; passing through\n");
        STATE.store(STATE_PASSTHROUGH, Ordering::Release);
        return;
    }
    // The fd stays open (high up, so the program's own fd numbers are as they would be
    // natively), close-on-exec except across an exec the shim makes (`process::execve`).
    // SAFETY: setting a descriptor flag on the inherited fd.
    unsafe { libc::fcntl(fd as c_int, libc::F_SETFD, libc::FD_CLOEXEC) };
    REGION.store(fd as i64, Ordering::Relaxed);
    REGION_INODE.store(inode(fd as c_int).unwrap_or(0), Ordering::Relaxed);
    // SAFETY: the image is starting; nothing has exec'd yet.
    unsafe { crate::preload::init() };
    let header = base as *mut Header;
    // SAFETY: the region starts with a Header the host initialised before spawning us.
    if unsafe { (*header).magic } != MAGIC {
        diag(b"weft-shim: bad region magic; passing through\n");
        STATE.store(STATE_PASSTHROUGH, Ordering::Release);
        return;
    }
    // SAFETY: slot_offset(slot) + size_of::<Slot>() <= REGION_SIZE since slot < MAX_SLOTS.
    let slot_ptr = unsafe { (base as *mut u8).add(slot_offset(slot as usize)) } as *mut Slot;
    HEADER.store(header, Ordering::Release);
    BASE.store(base as *mut u8, Ordering::Release);
    SLOT.store(slot_ptr, Ordering::Release);
    STATE.store(STATE_ACTIVE, Ordering::Release);

    // Line-buffer stdout so the host can stamp each line with the virtual time it was
    // written at (a pipe would otherwise make stdout fully buffered).
    // SAFETY: `stdout` is glibc's FILE*; setvbuf before any output on it is allowed.
    unsafe {
        libc::setvbuf(stdout, ptr::null_mut(), libc::_IOLBF, 0);
    }
    sys::install_escape_trap();
    crate::tsc::install();
    crate::signals::isolate();
    crate::exec::watch_unseen_forks();

    let _g = Guard::enter();
    // SAFETY: active, slot mapped; hello is the first request of this process. An exec'd
    // image then takes back the descriptors the old one left it, before the program runs.
    unsafe {
        hello(slot_ptr);
        crate::execfds::restore();
    }
}

/// Says hello on `slot` (the first request of a process or exec'd image) and keeps what the
/// host answers: the random seed, the virtual pid, the parent's, the node and the real time
/// the run began.
unsafe fn hello(slot: *mut Slot) {
    let s = &mut *slot;
    s.args[0] = sys::raw(libc::SYS_getpid, [0; 6]);
    handoff(OP_HELLO);
    RNG.store(s.args[0] as u64, Ordering::Relaxed);
    VPID.store(s.args[1], Ordering::Relaxed);
    PPID.store(s.args[2], Ordering::Relaxed);
    crate::machine::NODE.store(s.args[3] as u64, Ordering::Relaxed);
    crate::filetimes::RUN_START_NS.store(s.args[4], Ordering::Relaxed);
}

/// In a child just forked by the shim: the forking thread becomes the child's main thread on
/// slot `k` (announced by `OP_FORK`), and says hello there.
///
/// # Safety
/// Only in the child, right after `fork` returned 0, with the region mapped.
pub(crate) unsafe fn become_child(k: usize) {
    let slot = slot_at(k);
    SLOT.store(slot, Ordering::Release);
    let _ = MY_SLOT.try_with(|s| s.set(ptr::null_mut()));
    LOCAL_CALLS.store(0, Ordering::Relaxed);
    crate::signals::forget_queued();
    hello(slot);
}

extern "C" {
    static mut stdout: *mut libc::FILE;
}

/// Library constructor (runs before `main`; hooks may already have initialised us).
extern "C" fn weft_ctor() {
    if active() {
        for fd in 0..3 {
            // SAFETY: active; constructors run before the program's code, on one thread.
            unsafe { crate::diskstdio::serve_std_stream(fd) };
        }
        // SAFETY: the library constructor, before the program's code (see the function).
        unsafe { crate::random::settle_at_random() };
    }
    crate::creds::init();
}

/// Library destructor: flushes the `FILE`s the shim serves while their writes still reach the
/// host (glibc flushes every stream only after the destructors), tells the host this process
/// is exiting, then passes through.
extern "C" fn weft_dtor() {
    if STATE.load(Ordering::Acquire) == STATE_ACTIVE {
        crate::diskstdio::flush_served();
    }
    announce_exit(-1);
}

#[used]
#[link_section = ".init_array"]
static INIT_ARRAY: extern "C" fn() = weft_ctor;
#[used]
#[link_section = ".fini_array"]
static FINI_ARRAY: extern "C" fn() = weft_dtor;

pub(crate) fn announce_exit(status: i64) {
    if STATE.load(Ordering::Acquire) != STATE_ACTIVE {
        return;
    }
    STATE.store(STATE_PASSTHROUGH, Ordering::Release);
    let slot = slot_ptr();
    // SAFETY: slot mapped while the state was active; we do not wait for an answer.
    unsafe {
        (*slot).op = OP_EXIT;
        (*slot).args[0] = status;
        notify_host(slot);
    }
}

/// The index of the main thread's slot.
pub(crate) fn main_slot_index() -> usize {
    let base = BASE.load(Ordering::Acquire) as usize;
    let main = SLOT.load(Ordering::Acquire) as usize;
    (0..MAX_SLOTS).find(|&k| base + slot_offset(k) == main).unwrap_or(0)
}

/// The slot with index `k` (the main thread has 0).
pub(crate) fn slot_at(k: usize) -> *mut Slot {
    // SAFETY: k < MAX_SLOTS (checked by callers) and the region is mapped while active.
    unsafe { BASE.load(Ordering::Acquire).add(slot_offset(k)) as *mut Slot }
}

/// Hands the baton to the host without waiting for it back (waking the host only if it
/// sleeps: see the protocol in proto.rs).
pub(crate) unsafe fn notify_host(slot: *mut Slot) {
    let turn = &(*slot).turn;
    if turn.swap(TURN_HOST, Ordering::AcqRel) & TURN_SLEEPING != 0 {
        sys::futex_wake(turn);
    }
}

/// How long to spin for the host's answer (`Header::spin`; 0 before the header is mapped).
fn spin_budget() -> u32 {
    let h = HEADER.load(Ordering::Acquire);
    if h.is_null() {
        return 0;
    }
    // SAFETY: the header stays mapped for the life of the process once published.
    unsafe { (*h).spin.load(Ordering::Relaxed) }
}

/// Waits until this thread's turn word holds `TURN_THREAD`: spins up to `spin` iterations
/// (less if the host parks us), then sleeps in FUTEX_WAIT after announcing it with
/// `TURN_SLEEPING`, first waking the thread the host passed the turn to, if it asks (see
/// proto.rs).
pub(crate) fn await_baton(slot: *mut Slot, spin: u32) {
    // SAFETY: the slot lives in the shared mapping for the life of the process.
    let turn = unsafe { &(*slot).turn };
    for _ in 0..spin {
        let v = turn.load(Ordering::Acquire);
        if v & !TURN_FLAGS == TURN_THREAD {
            return;
        }
        if v & TURN_SLEEPING != 0 {
            break; // parked: another thread runs next, on this CPU
        }
        core::hint::spin_loop();
    }
    loop {
        let v = turn.load(Ordering::Acquire);
        if v & !TURN_FLAGS == TURN_THREAD {
            return;
        }
        if v & TURN_PASS != 0 {
            // SAFETY: as above; the host wrote `pass_to` before publishing TURN_PASS.
            let k = unsafe { (*slot).pass_to.load(Ordering::Relaxed) } as usize;
            if k < MAX_SLOTS {
                // SAFETY: slot `k` lies in the mapped region (k < MAX_SLOTS).
                sys::futex_wake(unsafe { &(*slot_at(k)).turn });
            }
            let _ = turn.compare_exchange(v, v & !TURN_PASS, Ordering::AcqRel, Ordering::Acquire);
            continue;
        }
        if v & TURN_SLEEPING == 0
            && turn
                .compare_exchange(v, v | TURN_SLEEPING, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
        {
            continue; // the word changed: look again
        }
        sys::futex_wait(turn, v | TURN_SLEEPING);
    }
}

/// One round trip: request `op` (fields already filled), wait for the answer, return `ret`.
///
/// # Safety
/// The state must be active; only the thread holding the baton calls this.
pub(crate) unsafe fn handoff(op: u32) -> i64 {
    let slot = slot_ptr();
    loop {
        (*slot).op = op;
        // Plain load and store, not a locked swap: only the baton holder touches the count.
        (*slot).local_calls = LOCAL_CALLS.load(Ordering::Relaxed);
        LOCAL_CALLS.store(0, Ordering::Relaxed);
        notify_host(slot);
        await_baton(slot, spin_budget());
        if (*slot).nsig == 0 {
            return (*slot).ret;
        }
        // Signals came with the answer: queued, or run now if they interrupted the call.
        if let Some(ret) = crate::signals::answered(slot, op) {
            return ret;
        }
    }
}

pub(crate) fn slot() -> &'static mut Slot {
    // SAFETY: only called when active (slot mapped for the life of the process) and by the
    // thread holding the baton, so no other reference to the slot is live.
    unsafe { &mut *slot_ptr() }
}

/// Counts a call served locally; every LOCAL_CALLS_MAX of them hands off (`OP_SPIN`).
pub(crate) fn local_call() {
    // Only the baton holder counts, so no locked read-modify-write is needed.
    let n = LOCAL_CALLS.load(Ordering::Relaxed) + 1;
    LOCAL_CALLS.store(n, Ordering::Relaxed);
    if n >= LOCAL_CALLS_MAX {
        // SAFETY: active (callers check) and we hold the baton.
        unsafe { handoff(OP_SPIN) };
    }
}

pub(crate) fn set_errno(e: c_int) {
    // SAFETY: __errno_location returns this thread's errno.
    unsafe { *libc::__errno_location() = e };
}

/// Converts a `-errno` answer into libc's `-1` + errno convention.
pub(crate) fn ret_errno(r: i64) -> i64 {
    if r < 0 {
        set_errno((-r) as c_int);
        -1
    } else {
        r
    }
}
/// Reports an unsupported call to the host, which ends the run; then exits.
pub(crate) fn unsupported(what: &[u8], nr: i64, addr: i64) -> ! {
    if STATE.load(Ordering::Acquire) == STATE_ACTIVE {
        STATE.store(STATE_PASSTHROUGH, Ordering::Release);
        let slot = slot_ptr();
        // SAFETY: slot mapped; we hold the baton (the calling thread is the running one).
        unsafe {
            let n = what.len().min(DATA_MAX);
            (&mut (*slot).data)[..n].copy_from_slice(&what[..n]);
            (*slot).len = n as u32;
            (*slot).args[0] = nr;
            (*slot).args[1] = addr;
            (*slot).op = OP_UNSUPPORTED;
            notify_host(slot);
        }
    } else {
        diag(b"weft-shim: unsupported call: ");
        diag(what);
        diag(b"\n");
    }
    sys::exit_group(125)
}

/// Called by the SIGSYS handler in `sys` for a trapped system call that is not emulated.
pub(crate) fn report_escape(nr: i64, addr: i64, what: &[u8]) -> ! {
    unsupported(what, nr, addr)
}
