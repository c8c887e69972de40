//! Randomness: `getrandom`, `getentropy`, the `arc4random` family, the names `mkstemp`,
//! `mkdtemp` and their variants make, C++'s `std::random_device`, and the bytes behind an opened `/dev/urandom` or `/dev/random` come from
//! this process's SplitMix64 stream, seeded by the host at hello; so do the kernel's
//! `AT_RANDOM` bytes and the stack-protector canary glibc took from them.

use crate::prelude::*;

/// SplitMix64 state of this process's random stream (seeded by the host at hello).
pub(crate) static RNG: AtomicU64 = AtomicU64::new(0);

pub(crate) fn next_random() -> u64 {
    mix(RNG.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed))
}

/// SplitMix64's output function.
pub(crate) fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The kernel fills 16 `AT_RANDOM` bytes anew at every exec, and glibc makes the
/// stack-protector canary from the first 8 (low byte cleared). A canary left in a stale stack
/// slot goes out with whatever the program sends from there (corosync's merge-detect messages
/// carry 4 such bytes in a field it never sets), so every run differed. Both are replaced by
/// values derived from the host's seed (the process's stream is not consumed). The pointer
/// guard glibc took from the other 8 bytes stays: pointers were mangled with it already.
///
/// # Safety
/// Only from the library constructor: no function with a stack-protector check may be live
/// below it with the old canary (glibc 2.36's loader has none there).
pub(crate) unsafe fn settle_at_random() {
    let a = mix(RNG.load(Ordering::Relaxed) ^ 0xA7_4A4D_0000_0019);
    let b = mix(a);
    let at = libc::getauxval(libc::AT_RANDOM) as *mut u8;
    if !at.is_null() {
        ptr::copy_nonoverlapping(a.to_le_bytes().as_ptr(), at, 8);
        ptr::copy_nonoverlapping(b.to_le_bytes().as_ptr(), at.add(8), 8);
    }
    // glibc's x86-64 thread header keeps the canary at %fs:0x28; new threads copy it.
    core::arch::asm!("mov qword ptr fs:[0x28], {}", in(reg) a & !0xff, options(nostack));
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

/// glibc's `arc4random*` make the `getrandom` system call themselves, which the seccomp trap
/// catches and serves: a signal and two symbol-table searches per call. unbound draws its
/// 65,536-entry port table with `arc4random_uniform` at start: seconds of CPU under the trap,
/// which a loaded machine stretched past the spin detector's window (a nondeterministic
/// "spins without an intercepted call"). Served here, a call costs a few instructions and,
/// like the trap it replaces, no hand-off.
#[no_mangle]
pub unsafe extern "C" fn arc4random() -> u32 {
    draw32().unwrap_or_else(|| real!(arc4random: fn() -> u32)())
}

/// 32 bits of this process's stream when a program's own call is simulated (None: pass it on).
fn draw32() -> Option<u32> {
    let _g = Guard::enter()?;
    active().then(|| next_random() as u32)
}

#[no_mangle]
pub unsafe extern "C" fn arc4random_buf(buf: *mut c_void, len: size_t) {
    if let Some(_g) = Guard::enter() {
        if active() {
            return fill_random(buf as *mut u8, len);
        }
    }
    real!(arc4random_buf: fn(*mut c_void, size_t) -> ())(buf, len)
}

/// Uniform in `0..upper` (0 for `upper` < 2), by rejecting the draws below `2^32 mod upper`.
#[no_mangle]
pub unsafe extern "C" fn arc4random_uniform(upper: u32) -> u32 {
    if let Some(_g) = Guard::enter() {
        if active() {
            if upper < 2 {
                return 0;
            }
            let min = upper.wrapping_neg() % upper;
            loop {
                let r = next_random() as u32;
                if r >= min {
                    return r % upper;
                }
            }
        }
    }
    real!(arc4random_uniform: fn(u32) -> u32)(upper)
}

/// `std::random_device`'s draw (libstdc++'s `_M_getval`, which its inline `operator()` calls):
/// on x86 libstdc++ answers from the `RDSEED` or `RDRAND` instruction by default, which no
/// hook or trap sees, so every C++ program seeded by a `random_device` differed from run to
/// run (OpenDHT's node ids). Under weft each draw comes from the process's stream, whatever
/// source the device was opened on.
#[no_mangle]
pub unsafe extern "C" fn _ZNSt13random_device9_M_getvalEv(device: *mut c_void) -> c_uint {
    draw32().unwrap_or_else(|| {
        real!(_ZNSt13random_device9_M_getvalEv: fn(*mut c_void) -> c_uint)(device)
    })
}

/// The same draw for a device opened through the pre-C++11 string ABI.
#[no_mangle]
pub unsafe extern "C" fn _ZNSt13random_device16_M_getval_pretr1Ev(device: *mut c_void) -> c_uint {
    let real = real!(_ZNSt13random_device16_M_getval_pretr1Ev: fn(*mut c_void) -> c_uint);
    draw32().unwrap_or_else(|| real(device))
}

/// Bytes of deterministic randomness behind an opened `/dev/urandom` or `/dev/random`.
const RANDOM_FILE_BYTES: usize = 1 << 16;

pub(crate) unsafe fn is_random_device(path: *const c_char) -> bool {
    if path.is_null() {
        return false;
    }
    let p = core::ffi::CStr::from_ptr(path).to_bytes();
    p == b"/dev/urandom" || p == b"/dev/random"
}

/// An in-memory file holding the next `RANDOM_FILE_BYTES` of the process's random stream, so
/// that every way of reading it (read, stdio, mmap) sees deterministic bytes. A `read` that
/// reaches its end refills it ([`refill_at_end`]): a random device never ends.
pub(crate) unsafe fn random_memfd() -> c_int {
    let fd = libc::memfd_create(c"weft-random".as_ptr(), libc::MFD_CLOEXEC);
    if fd < 0 {
        return fd;
    }
    fdtable::forget(fd);
    fill_memfd(fd);
    fd
}

/// Whether real descriptor `fd` is one of [`random_memfd`]'s files (also one inherited
/// across `exec` or `dup`ed): an unlinked regular file whose link names it.
unsafe fn is_random_memfd(fd: c_int) -> bool {
    let mut st: libc::stat = core::mem::zeroed();
    if libc::fstat(fd, &mut st) != 0
        || st.st_mode & libc::S_IFMT != libc::S_IFREG
        || st.st_nlink != 0
    {
        return false;
    }
    let mut path = [0u8; 32];
    crate::text::Text::new(&mut path[..31]).put(b"/proc/self/fd/").num(fd as u64);
    let mut link = [0u8; 32];
    let got = libc::readlink(path.as_ptr().cast(), link.as_mut_ptr().cast(), link.len());
    got >= 18 && link.starts_with(b"/memfd:weft-random")
}

/// After a `read` of `fd` answered end of file: when `fd` is a random device's file, refills
/// it with the next bytes of the stream and answers `true` (read again).
pub(crate) unsafe fn refill_at_end(fd: c_int) -> bool {
    // The calls below are the shim's own: no hook may record or schedule them.
    let _g = Guard::enter();
    if !is_random_memfd(fd) {
        return false;
    }
    libc::ftruncate(fd, 0);
    libc::lseek(fd, 0, libc::SEEK_SET);
    fill_memfd(fd);
    true
}

unsafe fn fill_memfd(fd: c_int) {
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
}

/// A random device `FILE`'s read: the memfd's bytes, refilled at its end. No hand-off, as
/// glibc's own read of the memfd had none.
unsafe extern "C" fn cookie_read(cookie: *mut c_void, buf: *mut c_char, len: size_t) -> ssize_t {
    let fd = cookie as usize as c_int;
    let read = || sys::raw(libc::SYS_read, [fd as i64, buf as i64, len as i64, 0, 0, 0]);
    let r = read();
    if r == 0 && len > 0 && refill_at_end(fd) {
        return read() as ssize_t;
    }
    r as ssize_t
}

/// `fopen` of a random device: a `FILE` that reads with [`cookie_read`] (glibc's own reads
/// would reach the end of the memfd).
pub(crate) unsafe fn fopen_random(mode: *const c_char) -> *mut libc::FILE {
    let fd = random_memfd();
    if fd < 0 {
        return ptr::null_mut();
    }
    let f = crate::diskstdio::cookie_file(fd, mode, cookie_read);
    if f.is_null() {
        libc::close(fd);
    }
    f
}

/// Random bytes for the SIGSYS handler's emulation of libc-internal `getrandom`.
pub(crate) unsafe fn random_for_trap(buf: *mut u8, len: usize) {
    fill_random(buf, len)
}

/// `mkstemp`, `mkdtemp` and their variants: glibc draws the name's `XXXXXX` from the real
/// clock and a stack address (not `getrandom`), so under weft the six characters come from
/// this process's random stream instead, and the file or directory is made through the hooks
/// (so the host sees it; libqb names its shared-memory folders so, and a warning naming one
/// differed from run to run). `make` makes the thing named, answering -1/`EEXIST` to try
/// another name. `None`: not under weft (the caller runs glibc's own). `template` is the
/// caller's writable, NUL-terminated template, as for glibc.
unsafe fn temp_name(
    template: *mut c_char,
    suffix: c_int,
    mut make: impl FnMut(*mut c_char) -> c_int,
) -> Option<c_int> {
    {
        let _g = Guard::enter()?;
        if !active() {
            return None;
        }
    }
    const LETTERS: &[u8; 62] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let len = if template.is_null() { 0 } else { libc::strlen(template) };
    let suffix = suffix.max(0) as usize;
    let name = template as *mut u8;
    let xs = len.checked_sub(suffix + 6).map(|at| name.add(at));
    let Some(xs) = xs.filter(|&x| (0..6).all(|i| *x.add(i) == b'X')) else {
        set_errno(libc::EINVAL);
        return Some(-1);
    };
    for _ in 0..100 {
        let mut r = next_random();
        for i in 0..6 {
            *xs.add(i) = LETTERS[(r % 62) as usize];
            r /= 62;
        }
        let made = make(template);
        if made >= 0 || *libc::__errno_location() != libc::EEXIST {
            return Some(made);
        }
    }
    Some(-1)
}

/// A file made by `mkstemp` and its variants, opened through the `open` hook.
unsafe fn temp_file(template: *mut c_char, suffix: c_int, flags: c_int) -> Option<c_int> {
    let flags = (flags & !libc::O_ACCMODE) | libc::O_RDWR | libc::O_CREAT | libc::O_EXCL;
    temp_name(template, suffix, |t| crate::files::open(t, flags, 0o600))
}

#[no_mangle]
pub unsafe extern "C" fn mkdtemp(template: *mut c_char) -> *mut c_char {
    match temp_name(template, 0, |t| crate::diskstat::mkdir(t, 0o700)) {
        Some(r) if r >= 0 => template,
        Some(_) => ptr::null_mut(),
        None => real!(mkdtemp: fn(*mut c_char) -> *mut c_char)(template),
    }
}

#[no_mangle]
pub unsafe extern "C" fn mkstemp(template: *mut c_char) -> c_int {
    temp_file(template, 0, 0).unwrap_or_else(|| real!(mkstemp: fn(*mut c_char) -> c_int)(template))
}

#[no_mangle]
pub unsafe extern "C" fn mkstemp64(template: *mut c_char) -> c_int {
    temp_file(template, 0, 0)
        .unwrap_or_else(|| real!(mkstemp64: fn(*mut c_char) -> c_int)(template))
}

#[no_mangle]
pub unsafe extern "C" fn mkostemp(template: *mut c_char, flags: c_int) -> c_int {
    temp_file(template, 0, flags)
        .unwrap_or_else(|| real!(mkostemp: fn(*mut c_char, c_int) -> c_int)(template, flags))
}

#[no_mangle]
pub unsafe extern "C" fn mkostemp64(template: *mut c_char, flags: c_int) -> c_int {
    temp_file(template, 0, flags)
        .unwrap_or_else(|| real!(mkostemp64: fn(*mut c_char, c_int) -> c_int)(template, flags))
}

#[no_mangle]
pub unsafe extern "C" fn mkstemps(template: *mut c_char, suffix: c_int) -> c_int {
    temp_file(template, suffix, 0)
        .unwrap_or_else(|| real!(mkstemps: fn(*mut c_char, c_int) -> c_int)(template, suffix))
}

#[no_mangle]
pub unsafe extern "C" fn mkstemps64(template: *mut c_char, suffix: c_int) -> c_int {
    temp_file(template, suffix, 0)
        .unwrap_or_else(|| real!(mkstemps64: fn(*mut c_char, c_int) -> c_int)(template, suffix))
}

#[no_mangle]
pub unsafe extern "C" fn mkostemps(template: *mut c_char, suffix: c_int, flags: c_int) -> c_int {
    temp_file(template, suffix, flags).unwrap_or_else(|| {
        real!(mkostemps: fn(*mut c_char, c_int, c_int) -> c_int)(template, suffix, flags)
    })
}

#[no_mangle]
pub unsafe extern "C" fn mkostemps64(template: *mut c_char, suffix: c_int, flags: c_int) -> c_int {
    temp_file(template, suffix, flags).unwrap_or_else(|| {
        real!(mkostemps64: fn(*mut c_char, c_int, c_int) -> c_int)(template, suffix, flags)
    })
}
