//! weft-shim is the `LD_PRELOAD` library that makes an unmodified, dynamically linked Linux
//! program deterministic under weft-host. It interposes libc's public entry points for time,
//! randomness, sleeping and polling, UDP sockets and TCP-like streams, threads (creation,
//! mutexes, condition variables), process identity, and (for the record) file operations, and
//! forwards every call that blocks, sends or receives to the host over a shared-memory slot
//! with a futex hand-off. Calls that
//! only read (the clocks, random bytes) never leave the process: virtual time is read from a
//! page the host updates, and random bytes come from a per-process stream the host seeds.
//! Raw system calls that would bypass the hooks are trapped with a seccomp filter and reported
//! to the host as unsupported, never silently run.
//!
//! Rules this file keeps, because it runs inside someone else's process: no allocation and no
//! panics in hooks (a panic in an `extern "C"` function aborts, it cannot unwind into C), a
//! `const` thread-local reentrancy guard, lazy initialisation (hooks can run before the
//! library constructor), and diagnostics through raw `write(2)` only. Without the host's
//! environment variables every hook passes straight through to libc.

#![allow(clippy::missing_safety_doc)] // every export is a libc entry point with libc's contract
#![deny(clippy::undocumented_unsafe_blocks)]

#[path = "proto.rs"]
mod proto;
mod sys;

use core::ffi::{c_char, c_int, c_long, c_uint, c_ulong, c_void};
use core::ptr;
use core::sync::atomic::{AtomicI64, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, Ordering};
use libc::{size_t, sockaddr, socklen_t, ssize_t};
use proto::*;

// ---------------------------------------------------------------------------------------------
// State

const STATE_UNINIT: u32 = 0;
const STATE_INITIALISING: u32 = 1;
const STATE_ACTIVE: u32 = 2;
const STATE_PASSTHROUGH: u32 = 3;

static STATE: AtomicU32 = AtomicU32::new(STATE_UNINIT);
static HEADER: AtomicPtr<Header> = AtomicPtr::new(ptr::null_mut());
/// The main thread's slot; other simulated threads find theirs in `MY_SLOT`.
static SLOT: AtomicPtr<Slot> = AtomicPtr::new(ptr::null_mut());
/// Start of the shared region (slots of new threads are found from it).
static BASE: AtomicPtr<u8> = AtomicPtr::new(ptr::null_mut());
/// SplitMix64 state of this process's random stream (seeded by the host at hello).
static RNG: AtomicU64 = AtomicU64::new(0);
/// The virtual pid the host assigned (0 until hello).
static VPID: AtomicI64 = AtomicI64::new(0);
/// Calls served locally since the last hand-off.
static LOCAL_CALLS: AtomicU32 = AtomicU32::new(0);

const FD_MAX: usize = 4096;
const FD_SIM: u8 = 1;
const FD_NONBLOCK: u8 = 2;
const FD_EPOLL: u8 = 4;
const FD_FILE: u8 = 8;
const FD_STREAM: u8 = 16;
/// Per-fd flags of simulated descriptors (indexed by fd).
static FDS: [AtomicU8; FD_MAX] = [const { AtomicU8::new(0) }; FD_MAX];
/// SO_RCVTIMEO of simulated sockets, ns (0 = none).
static RCVTIMEO: [AtomicU64; FD_MAX] = [const { AtomicU64::new(0) }; FD_MAX];

thread_local! {
    /// Set while this thread is inside a hook: nested hooked calls pass straight through.
    static IN_HOOK: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
    /// The slot of a thread created under the shim (null: the main thread's `SLOT`).
    static MY_SLOT: core::cell::Cell<*mut Slot> = const { core::cell::Cell::new(ptr::null_mut()) };
    /// Set once this thread has said goodbye to the host: its remaining calls pass through.
    static DETACHED: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
}

/// This thread's slot.
fn slot_ptr() -> *mut Slot {
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
struct Guard;

impl Guard {
    /// `None` when the thread is already inside a hook (or its TLS is gone).
    fn enter() -> Option<Guard> {
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
    fn drop(&mut self) {
        let _ = IN_HOOK.try_with(|g| g.set(false));
    }
}

fn fd_flags(fd: c_int) -> u8 {
    if fd >= 0 && (fd as usize) < FD_MAX {
        FDS[fd as usize].load(Ordering::Relaxed)
    } else {
        0
    }
}

fn set_fd_flags(fd: c_int, flags: u8) {
    if fd >= 0 && (fd as usize) < FD_MAX {
        FDS[fd as usize].store(flags, Ordering::Relaxed);
    }
}

fn is_sim(fd: c_int) -> bool {
    fd_flags(fd) & FD_SIM != 0
}

/// Writes a diagnostic line to stderr with a raw system call (no stdio, no allocation).
fn diag(msg: &[u8]) {
    // SAFETY: writing a valid byte slice to fd 2; the result is deliberately ignored.
    unsafe {
        libc::write(2, msg.as_ptr().cast(), msg.len());
    }
}

/// True when hooks should simulate; initialises on first use.
fn active() -> bool {
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
    // SAFETY: the mapping stays; the fd is ours to close so the program never sees it.
    unsafe { libc::close(fd as c_int) };
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

    let _g = Guard::enter();
    // SAFETY: active, slot mapped; hello is the first request of this process.
    unsafe {
        let s = &mut *slot_ptr;
        s.args[0] = libc::getpid() as i64;
        handoff(OP_HELLO);
        RNG.store(s.args[0] as u64, Ordering::Relaxed);
        VPID.store(s.args[1], Ordering::Relaxed);
    }
}

extern "C" {
    static mut stdout: *mut libc::FILE;
}

/// Library constructor (runs before `main`; hooks may already have initialised us).
extern "C" fn weft_ctor() {
    let _ = active();
}

/// Library destructor: tells the host this process is exiting, then passes through.
extern "C" fn weft_dtor() {
    announce_exit(-1);
}

#[used]
#[link_section = ".init_array"]
static INIT_ARRAY: extern "C" fn() = weft_ctor;
#[used]
#[link_section = ".fini_array"]
static FINI_ARRAY: extern "C" fn() = weft_dtor;

fn announce_exit(status: i64) {
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

/// Hands the baton to the host without waiting for it back (waking the host only if it
/// sleeps: see the protocol in proto.rs).
unsafe fn notify_host(slot: *mut Slot) {
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
fn await_baton(slot: *mut Slot, spin: u32) {
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
unsafe fn handoff(op: u32) -> i64 {
    let slot = slot_ptr();
    (*slot).op = op;
    notify_host(slot);
    await_baton(slot, spin_budget());
    LOCAL_CALLS.store(0, Ordering::Relaxed);
    (*slot).ret
}

fn slot() -> &'static mut Slot {
    // SAFETY: only called when active (slot mapped for the life of the process) and by the
    // thread holding the baton, so no other reference to the slot is live.
    unsafe { &mut *slot_ptr() }
}

/// Counts a call served locally; every LOCAL_CALLS_MAX of them hands off (`OP_SPIN`).
fn local_call() {
    if LOCAL_CALLS.fetch_add(1, Ordering::Relaxed) + 1 >= LOCAL_CALLS_MAX {
        // SAFETY: active (callers check) and we hold the baton.
        unsafe { handoff(OP_SPIN) };
    }
}

fn now_ns() -> u64 {
    // SAFETY: header mapped while active.
    unsafe { (*HEADER.load(Ordering::Acquire)).now_ns.load(Ordering::Acquire) }
}

fn set_errno(e: c_int) {
    // SAFETY: __errno_location returns this thread's errno.
    unsafe { *libc::__errno_location() = e };
}

/// Converts a `-errno` answer into libc's `-1` + errno convention.
fn ret_errno(r: i64) -> i64 {
    if r < 0 {
        set_errno((-r) as c_int);
        -1
    } else {
        r
    }
}

fn next_random() -> u64 {
    let mut z =
        RNG.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Fills `len` bytes at `buf` from this process's random stream.
unsafe fn fill_random(buf: *mut u8, len: usize) {
    let mut i = 0;
    while i < len {
        let w = next_random().to_le_bytes();
        let n = (len - i).min(8);
        ptr::copy_nonoverlapping(w.as_ptr(), buf.add(i), n);
        i += n;
    }
}

// ---------------------------------------------------------------------------------------------
// Real functions (dlsym(RTLD_NEXT), cached)

macro_rules! real {
    ($name:ident : fn($($t:ty),*) -> $r:ty) => {{
        static CACHE: AtomicPtr<c_void> = AtomicPtr::new(ptr::null_mut());
        let mut p = CACHE.load(Ordering::Relaxed);
        if p.is_null() {
            let name = concat!(stringify!($name), "\0");
            // SAFETY: the name is a NUL-terminated literal; dlsym does not call our hooks.
            p = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr().cast()) };
            CACHE.store(p, Ordering::Relaxed);
        }
        if p.is_null() {
            diag(concat!("weft-shim: no next symbol for ", stringify!($name), "\n").as_bytes());
            sys::exit_group(127);
        }
        // SAFETY: p is libc's implementation of the symbol, whose C signature this matches.
        unsafe { core::mem::transmute::<*mut c_void, unsafe extern "C" fn($($t),*) -> $r>(p) }
    }};
}

// ---------------------------------------------------------------------------------------------
// Time

fn split_ns(ns: u64) -> (i64, i64) {
    ((ns / 1_000_000_000) as i64, (ns % 1_000_000_000) as i64)
}

fn clock_value(clock: libc::clockid_t) -> Option<u64> {
    let now = now_ns();
    match clock {
        libc::CLOCK_REALTIME | libc::CLOCK_REALTIME_COARSE | libc::CLOCK_TAI => {
            Some(REALTIME_BASE_NS + now)
        }
        libc::CLOCK_MONOTONIC
        | libc::CLOCK_MONOTONIC_RAW
        | libc::CLOCK_MONOTONIC_COARSE
        | libc::CLOCK_BOOTTIME => Some(MONOTONIC_BASE_NS + now),
        // CPU time is virtual too: a simulated thread's CPU time is its share of virtual time.
        libc::CLOCK_PROCESS_CPUTIME_ID | libc::CLOCK_THREAD_CPUTIME_ID => Some(now),
        _ => None,
    }
}

#[no_mangle]
pub unsafe extern "C" fn clock_gettime(clock: libc::clockid_t, tp: *mut libc::timespec) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            let Some(ns) = clock_value(clock) else {
                set_errno(libc::EINVAL);
                return -1;
            };
            if tp.is_null() {
                set_errno(libc::EFAULT);
                return -1;
            }
            let (s, n) = split_ns(ns);
            (*tp).tv_sec = s;
            (*tp).tv_nsec = n;
            local_call();
            return 0;
        }
    }
    real!(clock_gettime: fn(libc::clockid_t, *mut libc::timespec) -> c_int)(clock, tp)
}

#[no_mangle]
pub unsafe extern "C" fn gettimeofday(tv: *mut libc::timeval, tz: *mut c_void) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            if !tv.is_null() {
                let (s, n) = split_ns(REALTIME_BASE_NS + now_ns());
                (*tv).tv_sec = s;
                (*tv).tv_usec = n / 1000;
            }
            if !tz.is_null() {
                ptr::write_bytes(tz as *mut u8, 0, 8);
            }
            local_call();
            return 0;
        }
    }
    real!(gettimeofday: fn(*mut libc::timeval, *mut c_void) -> c_int)(tv, tz)
}

#[no_mangle]
pub unsafe extern "C" fn time(t: *mut libc::time_t) -> libc::time_t {
    if let Some(_g) = Guard::enter() {
        if active() {
            let s = ((REALTIME_BASE_NS + now_ns()) / 1_000_000_000) as libc::time_t;
            if !t.is_null() {
                *t = s;
            }
            local_call();
            return s;
        }
    }
    real!(time: fn(*mut libc::time_t) -> libc::time_t)(t)
}

#[no_mangle]
pub unsafe extern "C" fn timespec_get(ts: *mut libc::timespec, base: c_int) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            if base != 1 || ts.is_null() {
                return 0; // TIME_UTC is the only base
            }
            let (s, n) = split_ns(REALTIME_BASE_NS + now_ns());
            (*ts).tv_sec = s;
            (*ts).tv_nsec = n;
            local_call();
            return base;
        }
    }
    real!(timespec_get: fn(*mut libc::timespec, c_int) -> c_int)(ts, base)
}

#[no_mangle]
pub unsafe extern "C" fn clock() -> libc::clock_t {
    if let Some(_g) = Guard::enter() {
        if active() {
            local_call();
            return (now_ns() / 1000) as libc::clock_t; // CLOCKS_PER_SEC = 1_000_000
        }
    }
    real!(clock: fn() -> libc::clock_t)()
}

// ---------------------------------------------------------------------------------------------
// Randomness

#[no_mangle]
pub unsafe extern "C" fn getrandom(buf: *mut c_void, len: size_t, flags: c_uint) -> ssize_t {
    if let Some(_g) = Guard::enter() {
        if active() {
            fill_random(buf as *mut u8, len);
            local_call();
            return len as ssize_t;
        }
    }
    sys::raw(libc::SYS_getrandom, [buf as i64, len as i64, flags as i64, 0, 0, 0]) as ssize_t
}

#[no_mangle]
pub unsafe extern "C" fn getentropy(buf: *mut c_void, len: size_t) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            if len > 256 {
                set_errno(libc::EIO);
                return -1;
            }
            fill_random(buf as *mut u8, len);
            local_call();
            return 0;
        }
    }
    real!(getentropy: fn(*mut c_void, size_t) -> c_int)(buf, len)
}

/// Bytes of deterministic randomness behind an opened `/dev/urandom` or `/dev/random`.
const RANDOM_FILE_BYTES: usize = 1 << 16;

unsafe fn is_random_device(path: *const c_char) -> bool {
    if path.is_null() {
        return false;
    }
    let p = core::ffi::CStr::from_ptr(path).to_bytes();
    p == b"/dev/urandom" || p == b"/dev/random"
}

/// An in-memory file holding the next `RANDOM_FILE_BYTES` of the process's random stream, so
/// that every way of reading it (read, stdio, mmap) sees deterministic bytes.
unsafe fn random_memfd() -> c_int {
    let fd = libc::memfd_create(c"weft-random".as_ptr(), libc::MFD_CLOEXEC);
    if fd < 0 {
        return fd;
    }
    set_fd_flags(fd, 0);
    let mut chunk = [0u8; 4096];
    let mut written = 0;
    while written < RANDOM_FILE_BYTES {
        fill_random(chunk.as_mut_ptr(), chunk.len());
        let n = libc::write(fd, chunk.as_ptr().cast(), chunk.len());
        if n <= 0 {
            break;
        }
        written += n as usize;
    }
    libc::lseek(fd, 0, libc::SEEK_SET);
    fd
}

#[no_mangle]
pub unsafe extern "C" fn open(path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && is_random_device(path) {
            return random_memfd();
        }
    }
    let fd = real!(open: fn(*const c_char, c_int, c_uint) -> c_int)(path, flags, mode);
    after_open(path, flags, fd)
}

#[no_mangle]
pub unsafe extern "C" fn open64(path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && is_random_device(path) {
            return random_memfd();
        }
    }
    let fd = real!(open64: fn(*const c_char, c_int, c_uint) -> c_int)(path, flags, mode);
    after_open(path, flags, fd)
}

#[no_mangle]
pub unsafe extern "C" fn openat(
    dir: c_int,
    path: *const c_char,
    flags: c_int,
    mode: c_uint,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && is_random_device(path) {
            return random_memfd();
        }
    }
    let fd =
        real!(openat: fn(c_int, *const c_char, c_int, c_uint) -> c_int)(dir, path, flags, mode);
    after_open(path, flags, fd)
}

#[no_mangle]
pub unsafe extern "C" fn openat64(
    dir: c_int,
    path: *const c_char,
    flags: c_int,
    mode: c_uint,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && is_random_device(path) {
            return random_memfd();
        }
    }
    let fd =
        real!(openat64: fn(c_int, *const c_char, c_int, c_uint) -> c_int)(dir, path, flags, mode);
    after_open(path, flags, fd)
}

unsafe fn fopen_random(mode: *const c_char) -> *mut libc::FILE {
    let fd = random_memfd();
    if fd < 0 {
        return ptr::null_mut();
    }
    libc::fdopen(fd, mode)
}

#[no_mangle]
pub unsafe extern "C" fn fopen(path: *const c_char, mode: *const c_char) -> *mut libc::FILE {
    if let Some(_g) = Guard::enter() {
        if active() && is_random_device(path) {
            return fopen_random(mode);
        }
    }
    real!(fopen: fn(*const c_char, *const c_char) -> *mut libc::FILE)(path, mode)
}

#[no_mangle]
pub unsafe extern "C" fn fopen64(path: *const c_char, mode: *const c_char) -> *mut libc::FILE {
    if let Some(_g) = Guard::enter() {
        if active() && is_random_device(path) {
            return fopen_random(mode);
        }
    }
    real!(fopen64: fn(*const c_char, *const c_char) -> *mut libc::FILE)(path, mode)
}

// ---------------------------------------------------------------------------------------------
// Sleeping

/// Blocks this simulated thread until virtual time `deadline` (ns since the run start).
fn sleep_until(deadline: u64) {
    slot().args[0] = deadline as i64;
    // SAFETY: callers check `active()` and hold the guard.
    unsafe { handoff(OP_SLEEP) };
}

fn ts_ns(ts: &libc::timespec) -> u64 {
    (ts.tv_sec.max(0) as u64).saturating_mul(1_000_000_000).saturating_add(ts.tv_nsec.max(0) as u64)
}

#[no_mangle]
pub unsafe extern "C" fn nanosleep(req: *const libc::timespec, rem: *mut libc::timespec) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            if req.is_null() || (*req).tv_nsec < 0 || (*req).tv_nsec >= 1_000_000_000 {
                set_errno(libc::EINVAL);
                return -1;
            }
            sleep_until(now_ns().saturating_add(ts_ns(&*req)));
            if !rem.is_null() {
                (*rem).tv_sec = 0;
                (*rem).tv_nsec = 0;
            }
            return 0;
        }
    }
    sys::raw(libc::SYS_nanosleep, [req as i64, rem as i64, 0, 0, 0, 0]) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn clock_nanosleep(
    clock: libc::clockid_t,
    flags: c_int,
    req: *const libc::timespec,
    rem: *mut libc::timespec,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            if req.is_null() {
                return libc::EFAULT;
            }
            let d = ts_ns(&*req);
            let deadline = if flags & libc::TIMER_ABSTIME != 0 {
                let Some(clock_now) = clock_value(clock) else { return libc::EINVAL };
                now_ns().saturating_add(d.saturating_sub(clock_now))
            } else {
                now_ns().saturating_add(d)
            };
            sleep_until(deadline);
            if !rem.is_null() && flags & libc::TIMER_ABSTIME == 0 {
                (*rem).tv_sec = 0;
                (*rem).tv_nsec = 0;
            }
            return 0;
        }
    }
    // clock_nanosleep returns the error number instead of setting errno.
    let r = sys::raw_ret(
        libc::SYS_clock_nanosleep,
        [clock as i64, flags as i64, req as i64, rem as i64, 0, 0],
    );
    if r < 0 {
        (-r) as c_int
    } else {
        0
    }
}

#[no_mangle]
pub unsafe extern "C" fn usleep(us: libc::useconds_t) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            sleep_until(now_ns().saturating_add(us as u64 * 1000));
            return 0;
        }
    }
    real!(usleep: fn(libc::useconds_t) -> c_int)(us)
}

#[no_mangle]
pub unsafe extern "C" fn sleep(s: c_uint) -> c_uint {
    if let Some(_g) = Guard::enter() {
        if active() {
            sleep_until(now_ns().saturating_add(s as u64 * 1_000_000_000));
            return 0;
        }
    }
    real!(sleep: fn(c_uint) -> c_uint)(s)
}

// ---------------------------------------------------------------------------------------------
// Polling

/// Asks the host to wait on `slot().polls[..count]` until one is ready or `deadline` (absolute
/// virtual ns, u64::MAX = never). Answers the number of ready entries.
fn poll_host(count: usize, deadline: u64) -> i64 {
    let s = slot();
    s.args[0] = count as i64;
    s.args[1] = deadline as i64;
    // SAFETY: callers check `active()` and hold the guard.
    unsafe { handoff(OP_POLL) }
}

fn deadline_after_ms(ms: c_int) -> u64 {
    if ms < 0 {
        u64::MAX
    } else {
        now_ns().saturating_add(ms as u64 * 1_000_000)
    }
}

fn deadline_after_ts(ts: *const libc::timespec) -> u64 {
    if ts.is_null() {
        u64::MAX
    } else {
        // SAFETY: non-null pointer supplied by the caller as a timespec.
        now_ns().saturating_add(ts_ns(unsafe { &*ts }))
    }
}

/// Polls descriptors the shim does not simulate (pipes, eventfds, files…) without blocking;
/// answers how many are ready.
unsafe fn real_poll_now(fds: &mut [libc::pollfd]) -> usize {
    if fds.is_empty() {
        return 0;
    }
    let ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    let args = [fds.as_mut_ptr() as i64, fds.len() as i64, &ts as *const _ as i64, 0, 8, 0];
    let r = sys::raw_ret(libc::SYS_ppoll, args);
    r.max(0) as usize
}

/// Waits in the host for the simulated entries in `slot().polls[..count]` until one is ready
/// or `deadline`, while also watching real descriptors through `check_real` (called before
/// every hand-off; answers how many are ready). Only simulated threads can make a real
/// descriptor of this process ready (a pipe, an eventfd), so the host wakes a thread that has
/// real descriptors whenever another thread of its process has run, and it looks again.
/// Answers the total ready, or -errno.
unsafe fn poll_loop(
    count: usize,
    deadline: u64,
    has_real: bool,
    mut check_real: impl FnMut() -> usize,
) -> i64 {
    loop {
        let real = if has_real { check_real() } else { 0 };
        slot().args[2] = has_real as i64;
        let r = poll_host(count, if real > 0 { now_ns() } else { deadline });
        if r < 0 {
            return r;
        }
        let total = r as usize + real;
        if total > 0 || !has_real || now_ns() >= deadline {
            return total as i64;
        }
    }
}

unsafe fn poll_common(fds: *mut libc::pollfd, n: libc::nfds_t, deadline: u64) -> c_int {
    let n = n as usize;
    if n > POLL_MAX {
        set_errno(libc::EINVAL);
        return -1;
    }
    let s = slot();
    let mut real = [libc::pollfd { fd: -1, events: 0, revents: 0 }; POLL_MAX];
    let mut real_at = [0usize; POLL_MAX];
    let mut nreal = 0;
    for i in 0..n {
        let p = &*fds.add(i);
        let sim = is_sim(p.fd);
        s.polls[i] = PollEntry { fd: if sim { p.fd } else { -1 }, events: p.events, revents: 0 };
        if !sim && p.fd >= 0 {
            real[nreal] = libc::pollfd { fd: p.fd, events: p.events, revents: 0 };
            real_at[nreal] = i;
            nreal += 1;
        }
    }
    let r = poll_loop(n, deadline, nreal > 0, || real_poll_now(&mut real[..nreal]));
    if r < 0 {
        return ret_errno(r) as c_int;
    }
    let s = slot();
    for i in 0..n {
        (*fds.add(i)).revents = s.polls[i].revents;
    }
    for (rp, &i) in real[..nreal].iter().zip(&real_at[..nreal]) {
        (*fds.add(i)).revents = rp.revents;
    }
    (0..n).filter(|&i| (*fds.add(i)).revents != 0).count() as c_int
}

#[no_mangle]
pub unsafe extern "C" fn poll(fds: *mut libc::pollfd, n: libc::nfds_t, timeout: c_int) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            return poll_common(fds, n, deadline_after_ms(timeout));
        }
    }
    let ts = libc::timespec {
        tv_sec: (timeout / 1000) as i64,
        tv_nsec: (timeout % 1000) as i64 * 1_000_000,
    };
    let tsp = if timeout < 0 { ptr::null() } else { &ts as *const _ };
    sys::raw(libc::SYS_ppoll, [fds as i64, n as i64, tsp as i64, 0, 8, 0]) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn ppoll(
    fds: *mut libc::pollfd,
    n: libc::nfds_t,
    ts: *const libc::timespec,
    sigmask: *const libc::sigset_t,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            return poll_common(fds, n, deadline_after_ts(ts));
        }
    }
    sys::raw(libc::SYS_ppoll, [fds as i64, n as i64, ts as i64, sigmask as i64, 8, 0]) as c_int
}

unsafe fn select_common(
    nfds: c_int,
    r: *mut libc::fd_set,
    w: *mut libc::fd_set,
    e: *mut libc::fd_set,
    deadline: u64,
) -> c_int {
    let s = slot();
    // Entries carry -1 for descriptors the shim does not simulate, so keep the real numbers
    // to fill the caller's sets from the answers; those are also polled for real.
    let mut fdnums = [0i32; POLL_MAX];
    let mut real = [libc::pollfd { fd: -1, events: 0, revents: 0 }; POLL_MAX];
    let mut nreal = 0;
    let mut count = 0;
    for fd in 0..nfds.clamp(0, libc::FD_SETSIZE as c_int) {
        let mut ev: i16 = 0;
        if !r.is_null() && libc::FD_ISSET(fd, r) {
            ev |= libc::POLLIN;
        }
        if !w.is_null() && libc::FD_ISSET(fd, w) {
            ev |= libc::POLLOUT;
        }
        if ev != 0 {
            if count == POLL_MAX {
                set_errno(libc::EINVAL);
                return -1;
            }
            let sim = is_sim(fd);
            s.polls[count] = PollEntry { fd: if sim { fd } else { -1 }, events: ev, revents: 0 };
            fdnums[count] = fd;
            if !sim {
                real[nreal] = libc::pollfd { fd, events: ev, revents: 0 };
                nreal += 1;
            }
            count += 1;
        }
    }
    let ret = poll_loop(count, deadline, nreal > 0, || real_poll_now(&mut real[..nreal]));
    if ret < 0 {
        return ret_errno(ret) as c_int;
    }
    let s = slot();
    for z in [r, w, e] {
        if !z.is_null() {
            libc::FD_ZERO(z);
        }
    }
    let mut bits = 0;
    let mut set_bits = |fd: c_int, events: i16, re: i16| {
        if !r.is_null()
            && re & (libc::POLLIN | libc::POLLERR | libc::POLLHUP) != 0
            && events & libc::POLLIN != 0
        {
            libc::FD_SET(fd, r);
            bits += 1;
        }
        if !w.is_null() && re & libc::POLLOUT != 0 {
            libc::FD_SET(fd, w);
            bits += 1;
        }
    };
    for (entry, &fd) in s.polls[..count].iter().zip(&fdnums[..count]) {
        if entry.fd >= 0 {
            set_bits(fd, entry.events, entry.revents);
        }
    }
    for rp in &real[..nreal] {
        set_bits(rp.fd, rp.events, rp.revents);
    }
    bits
}

#[no_mangle]
pub unsafe extern "C" fn select(
    nfds: c_int,
    r: *mut libc::fd_set,
    w: *mut libc::fd_set,
    e: *mut libc::fd_set,
    tv: *mut libc::timeval,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            let deadline = if tv.is_null() {
                u64::MAX
            } else {
                let d = ((*tv).tv_sec.max(0) as u64) * 1_000_000_000
                    + ((*tv).tv_usec.max(0) as u64) * 1000;
                now_ns().saturating_add(d)
            };
            let n = select_common(nfds, r, w, e, deadline);
            if !tv.is_null() && n >= 0 {
                // Linux reports the time not slept; we report it all slept or none left.
                (*tv).tv_sec = 0;
                (*tv).tv_usec = 0;
            }
            return n;
        }
    }
    let ts;
    let tsp = if tv.is_null() {
        ptr::null()
    } else {
        ts = libc::timespec { tv_sec: (*tv).tv_sec, tv_nsec: (*tv).tv_usec * 1000 };
        &ts as *const libc::timespec
    };
    sys::raw(libc::SYS_pselect6, [nfds as i64, r as i64, w as i64, e as i64, tsp as i64, 0])
        as c_int
}

#[no_mangle]
pub unsafe extern "C" fn pselect(
    nfds: c_int,
    r: *mut libc::fd_set,
    w: *mut libc::fd_set,
    e: *mut libc::fd_set,
    ts: *const libc::timespec,
    sigmask: *const libc::sigset_t,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            return select_common(nfds, r, w, e, deadline_after_ts(ts));
        }
    }
    let data: [u64; 2] = [sigmask as u64, 8];
    let dp = if sigmask.is_null() { ptr::null() } else { data.as_ptr() };
    sys::raw(libc::SYS_pselect6, [nfds as i64, r as i64, w as i64, e as i64, ts as i64, dp as i64])
        as c_int
}

// epoll: interest lists of simulated sockets are kept here; waits become host polls.

const EPOLL_MAX: usize = 16;
const EPOLL_ENTRIES: usize = 64;

struct EpollSet {
    fd: AtomicI64,
    /// Descriptors the shim does not simulate, registered in the real epoll instance.
    real: AtomicI64,
    fds: [AtomicI64; EPOLL_ENTRIES],
    events: [AtomicU32; EPOLL_ENTRIES],
    data: [AtomicU64; EPOLL_ENTRIES],
}

static EPOLLS: [EpollSet; EPOLL_MAX] = [const {
    EpollSet {
        fd: AtomicI64::new(-1),
        real: AtomicI64::new(0),
        fds: [const { AtomicI64::new(-1) }; EPOLL_ENTRIES],
        events: [const { AtomicU32::new(0) }; EPOLL_ENTRIES],
        data: [const { AtomicU64::new(0) }; EPOLL_ENTRIES],
    }
}; EPOLL_MAX];

fn epoll_set(epfd: c_int) -> Option<&'static EpollSet> {
    EPOLLS.iter().find(|e| e.fd.load(Ordering::Relaxed) == epfd as i64)
}

fn register_epoll(fd: c_int) {
    if fd < 0 {
        return;
    }
    if let Some(e) = EPOLLS.iter().find(|e| e.fd.load(Ordering::Relaxed) < 0) {
        for f in &e.fds {
            f.store(-1, Ordering::Relaxed);
        }
        e.fd.store(fd as i64, Ordering::Relaxed);
        e.real.store(0, Ordering::Relaxed);
        set_fd_flags(fd, FD_EPOLL);
    }
}

#[no_mangle]
pub unsafe extern "C" fn epoll_create(size: c_int) -> c_int {
    let fd = real!(epoll_create: fn(c_int) -> c_int)(size);
    if let Some(_g) = Guard::enter() {
        if active() {
            register_epoll(fd);
        }
    }
    fd
}

#[no_mangle]
pub unsafe extern "C" fn epoll_create1(flags: c_int) -> c_int {
    let fd = real!(epoll_create1: fn(c_int) -> c_int)(flags);
    if let Some(_g) = Guard::enter() {
        if active() {
            register_epoll(fd);
        }
    }
    fd
}

#[no_mangle]
pub unsafe extern "C" fn epoll_ctl(
    epfd: c_int,
    op: c_int,
    fd: c_int,
    ev: *mut libc::epoll_event,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && is_sim(fd) {
            let Some(set) = epoll_set(epfd) else {
                set_errno(libc::EBADF);
                return -1;
            };
            let pos = set.fds.iter().position(|f| f.load(Ordering::Relaxed) == fd as i64);
            match op {
                libc::EPOLL_CTL_ADD => {
                    if pos.is_some() {
                        set_errno(libc::EEXIST);
                        return -1;
                    }
                    let Some(free) = set.fds.iter().position(|f| f.load(Ordering::Relaxed) < 0)
                    else {
                        set_errno(libc::ENOSPC);
                        return -1;
                    };
                    set.fds[free].store(fd as i64, Ordering::Relaxed);
                    set.events[free].store((*ev).events, Ordering::Relaxed);
                    set.data[free].store((*ev).u64, Ordering::Relaxed);
                }
                libc::EPOLL_CTL_MOD | libc::EPOLL_CTL_DEL => {
                    let Some(i) = pos else {
                        set_errno(libc::ENOENT);
                        return -1;
                    };
                    if op == libc::EPOLL_CTL_DEL {
                        set.fds[i].store(-1, Ordering::Relaxed);
                    } else {
                        set.events[i].store((*ev).events, Ordering::Relaxed);
                        set.data[i].store((*ev).u64, Ordering::Relaxed);
                    }
                }
                _ => {
                    set_errno(libc::EINVAL);
                    return -1;
                }
            }
            return 0;
        }
    }
    let r = real!(epoll_ctl: fn(c_int, c_int, c_int, *mut libc::epoll_event) -> c_int)(
        epfd, op, fd, ev,
    );
    if r == 0 {
        if let Some(set) = epoll_set(epfd) {
            match op {
                libc::EPOLL_CTL_ADD => set.real.fetch_add(1, Ordering::Relaxed),
                libc::EPOLL_CTL_DEL => set.real.fetch_sub(1, Ordering::Relaxed),
                _ => 0,
            };
        }
    }
    r
}

unsafe fn epoll_common(
    epfd: c_int,
    out: *mut libc::epoll_event,
    max: c_int,
    deadline: u64,
) -> c_int {
    let Some(set) = epoll_set(epfd) else {
        set_errno(libc::EBADF);
        return -1;
    };
    if max <= 0 {
        set_errno(libc::EINVAL);
        return -1;
    }
    let s = slot();
    let mut idx = [0usize; EPOLL_ENTRIES];
    let mut n = 0;
    for i in 0..EPOLL_ENTRIES {
        let fd = set.fds[i].load(Ordering::Relaxed);
        if fd >= 0 {
            let ev = set.events[i].load(Ordering::Relaxed);
            s.polls[n] = PollEntry { fd: fd as i32, events: (ev & 0xffff) as i16, revents: 0 };
            idx[n] = i;
            n += 1;
        }
    }
    // Real descriptors live in the real epoll instance: ask it without blocking; their events
    // come first in `out`, the simulated ones after.
    let has_real = set.real.load(Ordering::Relaxed) > 0;
    let mut k = 0;
    let r = poll_loop(n, deadline, has_real, || {
        let args = [epfd as i64, out as i64, max as i64, 0, 0, 0];
        k = sys::raw_ret(libc::SYS_epoll_wait, args).max(0) as usize;
        k
    });
    if r < 0 {
        return ret_errno(r) as c_int;
    }
    let s = slot();
    for (entry, &i) in s.polls[..n].iter().zip(&idx[..n]) {
        if entry.revents != 0 && k < max as usize {
            let e = &mut *out.add(k);
            e.events = entry.revents as u16 as u32;
            e.u64 = set.data[i].load(Ordering::Relaxed);
            if set.events[i].load(Ordering::Relaxed) & libc::EPOLLONESHOT as u32 != 0 {
                set.events[i].store(0, Ordering::Relaxed);
            }
            k += 1;
        }
    }
    k as c_int
}

#[no_mangle]
pub unsafe extern "C" fn epoll_wait(
    epfd: c_int,
    ev: *mut libc::epoll_event,
    max: c_int,
    timeout: c_int,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            return epoll_common(epfd, ev, max, deadline_after_ms(timeout));
        }
    }
    sys::raw(libc::SYS_epoll_wait, [epfd as i64, ev as i64, max as i64, timeout as i64, 0, 0])
        as c_int
}

#[no_mangle]
pub unsafe extern "C" fn epoll_pwait(
    epfd: c_int,
    ev: *mut libc::epoll_event,
    max: c_int,
    timeout: c_int,
    sigmask: *const libc::sigset_t,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            return epoll_common(epfd, ev, max, deadline_after_ms(timeout));
        }
    }
    sys::raw(
        libc::SYS_epoll_pwait,
        [epfd as i64, ev as i64, max as i64, timeout as i64, sigmask as i64, 8],
    ) as c_int
}

// ---------------------------------------------------------------------------------------------
// UDP sockets

/// Reports an unsupported call to the host, which ends the run; then exits.
fn unsupported(what: &[u8], nr: i64, addr: i64) -> ! {
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

/// Reads an IPv4 socket address into the slot. Answers `-errno` on a bad address.
unsafe fn put_addr(addr: *const sockaddr, len: socklen_t) -> i64 {
    if addr.is_null() || (len as usize) < core::mem::size_of::<libc::sockaddr_in>() {
        return -(libc::EINVAL as i64);
    }
    let a = &*(addr as *const libc::sockaddr_in);
    if a.sin_family as c_int != libc::AF_INET {
        return -(libc::EAFNOSUPPORT as i64);
    }
    let s = slot();
    s.addr_ip = u32::from_be(a.sin_addr.s_addr);
    s.addr_port = u16::from_be(a.sin_port);
    0
}

/// Writes the slot's address to a caller's `sockaddr` (truncating like the kernel does).
unsafe fn get_addr(addr: *mut sockaddr, len: *mut socklen_t) {
    if addr.is_null() || len.is_null() {
        return;
    }
    let s = slot();
    let mut a: libc::sockaddr_in = core::mem::zeroed();
    a.sin_family = libc::AF_INET as libc::sa_family_t;
    a.sin_port = s.addr_port.to_be();
    a.sin_addr.s_addr = s.addr_ip.to_be();
    let n = (*len as usize).min(core::mem::size_of::<libc::sockaddr_in>());
    ptr::copy_nonoverlapping(&a as *const _ as *const u8, addr as *mut u8, n);
    *len = core::mem::size_of::<libc::sockaddr_in>() as socklen_t;
}

#[no_mangle]
pub unsafe extern "C" fn socket(domain: c_int, ty: c_int, proto: c_int) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && (domain == libc::AF_INET || domain == libc::AF_INET6) {
            let base = ty & !(libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC);
            if domain == libc::AF_INET6 {
                unsupported(b"socket(AF_INET6): IPv6 is not simulated yet", libc::SYS_socket, 0);
            }
            if base != libc::SOCK_DGRAM && base != libc::SOCK_STREAM {
                unsupported(
                    b"socket(AF_INET): only SOCK_DGRAM and SOCK_STREAM are simulated",
                    libc::SYS_socket,
                    0,
                );
            }
            let stream = base == libc::SOCK_STREAM;
            // A real (never used) socket of the same type holds the fd number, so unhooked
            // calls such as getsockopt(TCP_NODELAY) still see a socket.
            let fd = sys::raw(libc::SYS_socket, [domain as i64, ty as i64, proto as i64, 0, 0, 0]);
            if fd < 0 {
                return -1;
            }
            let fd = fd as c_int;
            if fd as usize >= FD_MAX {
                unsupported(b"socket: fd number beyond the shim's table", libc::SYS_socket, 0);
            }
            let nb = if ty & libc::SOCK_NONBLOCK != 0 { FD_NONBLOCK } else { 0 };
            set_fd_flags(fd, FD_SIM | nb | if stream { FD_STREAM } else { 0 });
            RCVTIMEO[fd as usize].store(0, Ordering::Relaxed);
            slot().args[0] = fd as i64;
            slot().args[1] = stream as i64;
            handoff(OP_SOCKET);
            return fd;
        }
    }
    sys::raw(libc::SYS_socket, [domain as i64, ty as i64, proto as i64, 0, 0, 0]) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn bind(fd: c_int, addr: *const sockaddr, len: socklen_t) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && is_sim(fd) {
            let e = put_addr(addr, len);
            if e < 0 {
                return ret_errno(e) as c_int;
            }
            slot().args[0] = fd as i64;
            return ret_errno(handoff(OP_BIND)) as c_int;
        }
    }
    sys::raw(libc::SYS_bind, [fd as i64, addr as i64, len as i64, 0, 0, 0]) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn connect(fd: c_int, addr: *const sockaddr, len: socklen_t) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && is_sim(fd) {
            let e = put_addr(addr, len);
            if e < 0 {
                return ret_errno(e) as c_int;
            }
            slot().args[0] = fd as i64;
            slot().args[1] = (fd_flags(fd) & FD_NONBLOCK != 0) as i64;
            return ret_errno(handoff(OP_CONNECT)) as c_int;
        }
        if active() {
            let fam = if addr.is_null() { 0 } else { (*addr).sa_family as c_int };
            if fam == libc::AF_INET || fam == libc::AF_INET6 {
                unsupported(
                    b"connect() on a socket the shim does not simulate",
                    libc::SYS_connect,
                    0,
                );
            }
        }
    }
    sys::raw(libc::SYS_connect, [fd as i64, addr as i64, len as i64, 0, 0, 0]) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn listen(fd: c_int, backlog: c_int) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && is_sim(fd) {
            slot().args[0] = fd as i64;
            slot().args[1] = backlog as i64;
            return ret_errno(handoff(OP_LISTEN)) as c_int;
        }
    }
    real!(listen: fn(c_int, c_int) -> c_int)(fd, backlog)
}

unsafe fn accept_common(
    fd: c_int,
    addr: *mut sockaddr,
    len: *mut socklen_t,
    flags: c_int,
) -> c_int {
    let args = [libc::AF_INET as i64, (libc::SOCK_STREAM | libc::SOCK_CLOEXEC) as i64, 0, 0, 0, 0];
    let newfd = sys::raw(libc::SYS_socket, args);
    if newfd < 0 {
        return -1;
    }
    let newfd = newfd as c_int;
    if newfd as usize >= FD_MAX {
        unsupported(b"accept: fd number beyond the shim's table", -1, 0);
    }
    let s = slot();
    s.args[0] = fd as i64;
    s.args[1] = newfd as i64;
    s.args[2] = (fd_flags(fd) & FD_NONBLOCK != 0) as i64;
    let r = handoff(OP_ACCEPT);
    if r < 0 {
        real!(close: fn(c_int) -> c_int)(newfd);
        return ret_errno(r) as c_int;
    }
    if flags & libc::SOCK_CLOEXEC == 0 {
        real!(fcntl: fn(c_int, c_int, c_ulong) -> c_int)(newfd, libc::F_SETFD, 0);
    }
    let nb = if flags & libc::SOCK_NONBLOCK != 0 { FD_NONBLOCK } else { 0 };
    set_fd_flags(newfd, FD_SIM | FD_STREAM | nb);
    RCVTIMEO[newfd as usize].store(0, Ordering::Relaxed);
    get_addr(addr, len);
    newfd
}

#[no_mangle]
pub unsafe extern "C" fn accept(fd: c_int, addr: *mut sockaddr, len: *mut socklen_t) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && is_sim(fd) {
            return accept_common(fd, addr, len, 0);
        }
    }
    real!(accept: fn(c_int, *mut sockaddr, *mut socklen_t) -> c_int)(fd, addr, len)
}

#[no_mangle]
pub unsafe extern "C" fn accept4(
    fd: c_int,
    addr: *mut sockaddr,
    len: *mut socklen_t,
    flags: c_int,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && is_sim(fd) {
            return accept_common(fd, addr, len, flags);
        }
    }
    real!(accept4: fn(c_int, *mut sockaddr, *mut socklen_t, c_int) -> c_int)(fd, addr, len, flags)
}

#[no_mangle]
pub unsafe extern "C" fn shutdown(fd: c_int, how: c_int) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && is_sim(fd) {
            slot().args[0] = fd as i64;
            slot().args[1] = how as i64;
            return ret_errno(handoff(OP_SHUTDOWN)) as c_int;
        }
    }
    real!(shutdown: fn(c_int, c_int) -> c_int)(fd, how)
}

#[no_mangle]
pub unsafe extern "C" fn getpeername(fd: c_int, addr: *mut sockaddr, len: *mut socklen_t) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && is_sim(fd) {
            slot().args[0] = fd as i64;
            let r = handoff(OP_GETPEERNAME);
            if r < 0 {
                return ret_errno(r) as c_int;
            }
            get_addr(addr, len);
            return 0;
        }
    }
    real!(getpeername: fn(c_int, *mut sockaddr, *mut socklen_t) -> c_int)(fd, addr, len)
}

#[no_mangle]
pub unsafe extern "C" fn getsockopt(
    fd: c_int,
    level: c_int,
    name: c_int,
    val: *mut c_void,
    len: *mut socklen_t,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && is_sim(fd) && level == libc::SOL_SOCKET && name == libc::SO_ERROR {
            if val.is_null() || len.is_null() || (*len as usize) < core::mem::size_of::<c_int>() {
                set_errno(libc::EINVAL);
                return -1;
            }
            slot().args[0] = fd as i64;
            let r = handoff(OP_SOCKERR);
            *(val as *mut c_int) = r as c_int;
            *len = core::mem::size_of::<c_int>() as socklen_t;
            return 0;
        }
    }
    real!(getsockopt: fn(c_int, c_int, c_int, *mut c_void, *mut socklen_t) -> c_int)(
        fd, level, name, val, len,
    )
}

#[no_mangle]
pub unsafe extern "C" fn getsockname(fd: c_int, addr: *mut sockaddr, len: *mut socklen_t) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && is_sim(fd) {
            slot().args[0] = fd as i64;
            let r = handoff(OP_GETSOCKNAME);
            if r < 0 {
                return ret_errno(r) as c_int;
            }
            get_addr(addr, len);
            return 0;
        }
    }
    real!(getsockname: fn(c_int, *mut sockaddr, *mut socklen_t) -> c_int)(fd, addr, len)
}

/// Sends `len` bytes gathered from `iov` to `addr` (or the connected peer when null).
unsafe fn send_common(
    fd: c_int,
    iov: &[libc::iovec],
    addr: *const sockaddr,
    alen: socklen_t,
) -> ssize_t {
    if fd_flags(fd) & FD_STREAM != 0 {
        return send_stream(fd, iov);
    }
    let s = slot();
    let mut n = 0usize;
    for v in iov {
        if n + v.iov_len > DATA_MAX {
            set_errno(libc::EMSGSIZE);
            return -1;
        }
        ptr::copy_nonoverlapping(v.iov_base as *const u8, s.data.as_mut_ptr().add(n), v.iov_len);
        n += v.iov_len;
    }
    if addr.is_null() {
        s.addr_ip = 0;
        s.addr_port = 0;
    } else {
        let e = put_addr(addr, alen);
        if e < 0 {
            return ret_errno(e) as ssize_t;
        }
    }
    s.len = n as u32;
    s.args[0] = fd as i64;
    ret_errno(handoff(OP_SENDTO)) as ssize_t
}

/// Sends all of `iov` on a stream, in hand-offs of at most `DATA_MAX` bytes (a stream has no
/// message boundaries; the host never blocks a send). Answers the bytes sent, or -1/errno if
/// nothing was.
unsafe fn send_stream(fd: c_int, iov: &[libc::iovec]) -> ssize_t {
    let mut sent = 0usize;
    let mut n = 0usize;
    let flush = |n: usize| {
        let s = slot();
        s.len = n as u32;
        s.args[0] = fd as i64;
        handoff(OP_SENDTO)
    };
    for v in iov {
        let mut off = 0;
        while off < v.iov_len {
            let k = (v.iov_len - off).min(DATA_MAX - n);
            let src = (v.iov_base as *const u8).add(off);
            ptr::copy_nonoverlapping(src, slot().data.as_mut_ptr().add(n), k);
            n += k;
            off += k;
            if n == DATA_MAX {
                let r = flush(n);
                if r < 0 {
                    return if sent == 0 { ret_errno(r) as ssize_t } else { sent as ssize_t };
                }
                sent += n;
                n = 0;
            }
        }
    }
    if n > 0 || sent == 0 {
        let r = flush(n);
        if r < 0 {
            return if sent == 0 { ret_errno(r) as ssize_t } else { sent as ssize_t };
        }
        sent += n;
    }
    sent as ssize_t
}

/// Receives one datagram into `iov`; answers its full length, or -1/errno.
unsafe fn recv_common(
    fd: c_int,
    iov: &[libc::iovec],
    flags: c_int,
    addr: *mut sockaddr,
    alen: *mut socklen_t,
    truncated: Option<&mut bool>,
) -> ssize_t {
    let s = slot();
    let cap: usize = iov.iter().map(|v| v.iov_len).sum();
    let nonblock = fd_flags(fd) & FD_NONBLOCK != 0 || flags & libc::MSG_DONTWAIT != 0;
    s.args[0] = fd as i64;
    s.args[1] = nonblock as i64;
    let t = RCVTIMEO[fd as usize].load(Ordering::Relaxed);
    s.args[2] = if t == 0 { 0 } else { now_ns().saturating_add(t) as i64 };
    s.args[3] = cap as i64;
    s.args[4] = (flags & libc::MSG_PEEK != 0) as i64;
    let r = handoff(OP_RECVFROM);
    if r < 0 {
        return ret_errno(r) as ssize_t;
    }
    let len = s.len as usize;
    let mut copied = 0;
    for v in iov {
        let n = (len - copied).min(v.iov_len);
        ptr::copy_nonoverlapping(s.data.as_ptr().add(copied), v.iov_base as *mut u8, n);
        copied += n;
        if copied == len {
            break;
        }
    }
    if let Some(t) = truncated {
        *t = copied < len;
    }
    get_addr(addr, alen);
    if flags & libc::MSG_TRUNC != 0 {
        len as ssize_t
    } else {
        copied as ssize_t
    }
}

#[no_mangle]
pub unsafe extern "C" fn sendto(
    fd: c_int,
    buf: *const c_void,
    len: size_t,
    flags: c_int,
    addr: *const sockaddr,
    alen: socklen_t,
) -> ssize_t {
    if let Some(_g) = Guard::enter() {
        if active() && is_sim(fd) {
            let iov = [libc::iovec { iov_base: buf as *mut c_void, iov_len: len }];
            return send_common(fd, &iov, addr, alen);
        }
    }
    sys::raw(
        libc::SYS_sendto,
        [fd as i64, buf as i64, len as i64, flags as i64, addr as i64, alen as i64],
    ) as ssize_t
}

#[no_mangle]
pub unsafe extern "C" fn send(fd: c_int, buf: *const c_void, len: size_t, flags: c_int) -> ssize_t {
    sendto(fd, buf, len, flags, ptr::null(), 0)
}

#[no_mangle]
pub unsafe extern "C" fn sendmsg(fd: c_int, msg: *const libc::msghdr, flags: c_int) -> ssize_t {
    if let Some(_g) = Guard::enter() {
        if active() && is_sim(fd) {
            let m = &*msg;
            let iov = if m.msg_iovlen == 0 {
                &[][..]
            } else {
                core::slice::from_raw_parts(m.msg_iov, m.msg_iovlen)
            };
            return send_common(fd, iov, m.msg_name as *const sockaddr, m.msg_namelen);
        }
    }
    sys::raw(libc::SYS_sendmsg, [fd as i64, msg as i64, flags as i64, 0, 0, 0]) as ssize_t
}

#[no_mangle]
pub unsafe extern "C" fn recvfrom(
    fd: c_int,
    buf: *mut c_void,
    len: size_t,
    flags: c_int,
    addr: *mut sockaddr,
    alen: *mut socklen_t,
) -> ssize_t {
    if let Some(_g) = Guard::enter() {
        if active() && is_sim(fd) {
            let iov = [libc::iovec { iov_base: buf, iov_len: len }];
            return recv_common(fd, &iov, flags, addr, alen, None);
        }
    }
    sys::raw(
        libc::SYS_recvfrom,
        [fd as i64, buf as i64, len as i64, flags as i64, addr as i64, alen as i64],
    ) as ssize_t
}

#[no_mangle]
pub unsafe extern "C" fn recv(fd: c_int, buf: *mut c_void, len: size_t, flags: c_int) -> ssize_t {
    recvfrom(fd, buf, len, flags, ptr::null_mut(), ptr::null_mut())
}

#[no_mangle]
pub unsafe extern "C" fn recvmsg(fd: c_int, msg: *mut libc::msghdr, flags: c_int) -> ssize_t {
    if let Some(_g) = Guard::enter() {
        if active() && is_sim(fd) {
            let m = &mut *msg;
            let iov = if m.msg_iovlen == 0 {
                &[][..]
            } else {
                core::slice::from_raw_parts(m.msg_iov, m.msg_iovlen)
            };
            let mut trunc = false;
            let mut alen = m.msg_namelen;
            let r = recv_common(
                fd,
                iov,
                flags,
                m.msg_name as *mut sockaddr,
                &mut alen,
                Some(&mut trunc),
            );
            if r >= 0 {
                m.msg_namelen = if m.msg_name.is_null() { 0 } else { alen };
                m.msg_controllen = 0;
                m.msg_flags = if trunc { libc::MSG_TRUNC } else { 0 };
            }
            return r;
        }
    }
    sys::raw(libc::SYS_recvmsg, [fd as i64, msg as i64, flags as i64, 0, 0, 0]) as ssize_t
}

#[no_mangle]
pub unsafe extern "C" fn sendmmsg(
    fd: c_int,
    msgs: *mut libc::mmsghdr,
    n: c_uint,
    flags: c_int,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && is_sim(fd) {
            let mut sent = 0;
            for i in 0..n as usize {
                let m = &mut *msgs.add(i);
                let h = &m.msg_hdr;
                let iov = if h.msg_iovlen == 0 {
                    &[][..]
                } else {
                    core::slice::from_raw_parts(h.msg_iov, h.msg_iovlen)
                };
                let r = send_common(fd, iov, h.msg_name as *const sockaddr, h.msg_namelen);
                if r < 0 {
                    return if sent == 0 { -1 } else { sent };
                }
                m.msg_len = r as c_uint;
                sent += 1;
            }
            return sent;
        }
    }
    sys::raw(libc::SYS_sendmmsg, [fd as i64, msgs as i64, n as i64, flags as i64, 0, 0]) as c_int
}

/// Like Linux: blocks (per the socket and `flags`) for every message, unless
/// `MSG_WAITFORONE`, after which the rest are taken only if already queued. The `timeout`
/// argument (checked by Linux only between datagrams) is ignored.
#[no_mangle]
pub unsafe extern "C" fn recvmmsg(
    fd: c_int,
    msgs: *mut libc::mmsghdr,
    n: c_uint,
    flags: c_int,
    timeout: *mut libc::timespec,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && is_sim(fd) {
            let mut got = 0;
            let mut f = flags & !libc::MSG_WAITFORONE;
            for i in 0..n as usize {
                let m = &mut *msgs.add(i);
                let h = &mut m.msg_hdr;
                let iov = if h.msg_iovlen == 0 {
                    &[][..]
                } else {
                    core::slice::from_raw_parts(h.msg_iov, h.msg_iovlen)
                };
                let mut trunc = false;
                let mut alen = h.msg_namelen;
                let r = recv_common(
                    fd,
                    iov,
                    f,
                    h.msg_name as *mut sockaddr,
                    &mut alen,
                    Some(&mut trunc),
                );
                if r < 0 {
                    return if got == 0 { -1 } else { got };
                }
                h.msg_namelen = if h.msg_name.is_null() { 0 } else { alen };
                h.msg_controllen = 0;
                h.msg_flags = if trunc { libc::MSG_TRUNC } else { 0 };
                m.msg_len = r as c_uint;
                got += 1;
                if flags & libc::MSG_WAITFORONE != 0 {
                    f |= libc::MSG_DONTWAIT;
                }
            }
            return got;
        }
    }
    let args = [fd as i64, msgs as i64, n as i64, flags as i64, timeout as i64, 0];
    sys::raw(libc::SYS_recvmmsg, args) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn read(fd: c_int, buf: *mut c_void, len: size_t) -> ssize_t {
    if let Some(_g) = Guard::enter() {
        if active() && is_sim(fd) {
            let iov = [libc::iovec { iov_base: buf, iov_len: len }];
            return recv_common(fd, &iov, 0, ptr::null_mut(), ptr::null_mut(), None);
        }
    }
    let r = real!(read: fn(c_int, *mut c_void, size_t) -> ssize_t)(fd, buf, len);
    record_io(FILE_READ, fd, -1, len, r as i64);
    r
}

#[no_mangle]
pub unsafe extern "C" fn write(fd: c_int, buf: *const c_void, len: size_t) -> ssize_t {
    if let Some(_g) = Guard::enter() {
        if active() && is_sim(fd) {
            let iov = [libc::iovec { iov_base: buf as *mut c_void, iov_len: len }];
            return send_common(fd, &iov, ptr::null(), 0);
        }
    }
    let r = real!(write: fn(c_int, *const c_void, size_t) -> ssize_t)(fd, buf, len);
    record_io(FILE_WRITE, fd, -1, len, r as i64);
    r
}

#[no_mangle]
pub unsafe extern "C" fn close(fd: c_int) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            let flags = fd_flags(fd);
            if flags & FD_SIM != 0 {
                slot().args[0] = fd as i64;
                handoff(OP_CLOSE);
            }
            if flags & FD_FILE != 0 {
                record_file(FILE_CLOSE, fd, 0, 0, 0, ptr::null(), ptr::null());
            }
            if flags & FD_EPOLL != 0 {
                if let Some(e) = epoll_set(fd) {
                    e.fd.store(-1, Ordering::Relaxed);
                }
            }
            set_fd_flags(fd, 0);
        }
    }
    real!(close: fn(c_int) -> c_int)(fd)
}

#[no_mangle]
pub unsafe extern "C" fn fcntl(fd: c_int, cmd: c_int, arg: c_ulong) -> c_int {
    let r = real!(fcntl: fn(c_int, c_int, c_ulong) -> c_int)(fd, cmd, arg);
    if r >= 0 && cmd == libc::F_SETFL && is_sim(fd) {
        let f = fd_flags(fd) & !FD_NONBLOCK;
        set_fd_flags(fd, f | if arg as c_int & libc::O_NONBLOCK != 0 { FD_NONBLOCK } else { 0 });
    }
    r
}

#[no_mangle]
pub unsafe extern "C" fn fcntl64(fd: c_int, cmd: c_int, arg: c_ulong) -> c_int {
    fcntl(fd, cmd, arg)
}

#[no_mangle]
pub unsafe extern "C" fn ioctl(fd: c_int, req: c_ulong, arg: *mut c_void) -> c_int {
    let r = real!(ioctl: fn(c_int, c_ulong, *mut c_void) -> c_int)(fd, req, arg);
    if r >= 0 && req == libc::FIONBIO && is_sim(fd) && !arg.is_null() {
        let f = fd_flags(fd) & !FD_NONBLOCK;
        set_fd_flags(fd, f | if *(arg as *const c_int) != 0 { FD_NONBLOCK } else { 0 });
    }
    r
}

#[no_mangle]
pub unsafe extern "C" fn setsockopt(
    fd: c_int,
    level: c_int,
    name: c_int,
    val: *const c_void,
    len: socklen_t,
) -> c_int {
    if is_sim(fd) && level == libc::SOL_SOCKET && name == libc::SO_RCVTIMEO && !val.is_null() {
        if (len as usize) < core::mem::size_of::<libc::timeval>() {
            set_errno(libc::EINVAL);
            return -1;
        }
        let tv = &*(val as *const libc::timeval);
        let ns = (tv.tv_sec.max(0) as u64) * 1_000_000_000 + (tv.tv_usec.max(0) as u64) * 1000;
        RCVTIMEO[fd as usize].store(ns, Ordering::Relaxed);
        return 0;
    }
    real!(setsockopt: fn(c_int, c_int, c_int, *const c_void, socklen_t) -> c_int)(
        fd, level, name, val, len,
    )
}

// ---------------------------------------------------------------------------------------------
// Process lifetime and calls that cannot be simulated

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

include!("threads.rs");
include!("files.rs");

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

#[no_mangle]
pub unsafe extern "C" fn alarm(seconds: c_uint) -> c_uint {
    if seconds > 0 && active() {
        unsupported(
            b"alarm(): real-time signals from timers are not simulated yet",
            libc::SYS_alarm,
            0,
        );
    }
    real!(alarm: fn(c_uint) -> c_uint)(seconds)
}

#[no_mangle]
pub unsafe extern "C" fn setitimer(
    which: c_int,
    new: *const libc::itimerval,
    old: *mut libc::itimerval,
) -> c_int {
    let arms = !new.is_null() && ((*new).it_value.tv_sec != 0 || (*new).it_value.tv_usec != 0);
    if arms && active() {
        unsupported(b"setitimer(): interval timers are not simulated yet", libc::SYS_setitimer, 0);
    }
    real!(setitimer: fn(c_int, *const libc::itimerval, *mut libc::itimerval) -> c_int)(
        which, new, old,
    )
}

#[no_mangle]
pub unsafe extern "C" fn timer_create(
    clock: libc::clockid_t,
    ev: *mut libc::sigevent,
    id: *mut libc::timer_t,
) -> c_int {
    if active() {
        unsupported(
            b"timer_create(): POSIX timers are not simulated yet",
            libc::SYS_timer_create,
            0,
        );
    }
    real!(timer_create: fn(libc::clockid_t, *mut libc::sigevent, *mut libc::timer_t) -> c_int)(
        clock, ev, id,
    )
}

#[no_mangle]
pub unsafe extern "C" fn timerfd_create(clock: c_int, flags: c_int) -> c_int {
    if active() {
        unsupported(
            b"timerfd_create(): timer fds are not simulated yet",
            libc::SYS_timerfd_create,
            0,
        );
    }
    real!(timerfd_create: fn(c_int, c_int) -> c_int)(clock, flags)
}

#[no_mangle]
pub unsafe extern "C" fn io_uring_setup(_entries: c_uint, _params: *mut c_void) -> c_long {
    unsupported(b"io_uring_setup: io_uring is not simulated", libc::SYS_io_uring_setup, 0)
}

/// Called by the SIGSYS handler in `sys` for a trapped system call that is not emulated.
pub(crate) fn report_escape(nr: i64, addr: i64, what: &[u8]) -> ! {
    unsupported(what, nr, addr)
}

/// Random bytes for the SIGSYS handler's emulation of libc-internal `getrandom`.
pub(crate) unsafe fn random_for_trap(buf: *mut u8, len: usize) {
    fill_random(buf, len)
}
