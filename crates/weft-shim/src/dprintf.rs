//! `dprintf` and `vdprintf` on descriptors the shim serves. glibc formats them into a
//! temporary `FILE` on the descriptor that writes with its internal `write`, which no hook
//! sees, so on a simulated pipe or socket (or a data-directory file) the bytes would go to the
//! real placeholder. There they are printed through a `FILE` of the shim's own for that
//! descriptor number instead: unbuffered, so each call writes once, at once, through the
//! `write` hook (as glibc's does). `dprintf` is variadic, which stable Rust cannot define, so
//! it is a naked trampoline: it keeps the caller's argument registers, asks [`target`] where
//! the call goes, and jumps there with the same arguments — to glibc's `fprintf` with the
//! served `FILE` in place of the descriptor, or to glibc's own `dprintf`. The fortified
//! `__dprintf_chk` and `__vdprintf_chk` (`-D_FORTIFY_SOURCE`) go the same way, to glibc's
//! `__fprintf_chk`/`__vfprintf_chk` with the same flag.

use crate::diskstdio::{fopencookie, CookieIo};
use crate::prelude::*;

/// Served `FILE`s by descriptor number, made at the first formatted write to it (never closed:
/// a `FILE` writes to whatever its number is when it writes).
static FILES: [AtomicPtr<libc::FILE>; fdtable::FD_MAX] =
    [const { AtomicPtr::new(ptr::null_mut()) }; fdtable::FD_MAX];

extern "C" {
    fn vfprintf(f: *mut libc::FILE, fmt: *const c_char, ap: *mut c_void) -> c_int;
    fn __vfprintf_chk(
        f: *mut libc::FILE,
        flag: c_int,
        fmt: *const c_char,
        ap: *mut c_void,
    ) -> c_int;
}

unsafe extern "C" fn write_fd(cookie: *mut c_void, buf: *const c_char, len: size_t) -> ssize_t {
    // A cookie's write answers 0 on error (glibc's contract), never -1.
    crate::io::write(cookie as usize as c_int, buf.cast(), len).max(0)
}

/// The served `FILE` for `fd`, or `None` when glibc's own formatted write reaches it.
fn served(fd: c_int) -> Option<*mut libc::FILE> {
    let kind = fdtable::kind(fd);
    if !(fdtable::is_bytes(fd) || kind == FdKind::Disk) || !active() {
        return None;
    }
    let cached = FILES[fd as usize].load(Ordering::Relaxed);
    if !cached.is_null() {
        return Some(cached);
    }
    let io = CookieIo { read: None, write: Some(write_fd), seek: None, close: None };
    // SAFETY: a write-only cookie stream whose cookie is the descriptor number.
    let f = unsafe { fopencookie(fd as usize as *mut c_void, c"w".as_ptr(), io) };
    if f.is_null() {
        unsupported(b"dprintf(): cannot make a stream for a simulated descriptor", -1, 0);
    }
    // SAFETY: a fresh stream, not used yet.
    unsafe { libc::setvbuf(f, ptr::null_mut(), libc::_IONBF, 0) };
    FILES[fd as usize].store(f, Ordering::Relaxed);
    Some(f)
}

/// Where a `dprintf(fd, …)` goes: `(function, its first argument)`, returned in `rax:rdx`.
#[repr(C)]
struct Target {
    func: usize,
    first: usize,
}

extern "C" fn target(fd: c_int) -> Target {
    match served(fd) {
        Some(f) => Target {
            func: real!(fprintf: fn(*mut libc::FILE, *const c_char) -> c_int) as usize,
            first: f as usize,
        },
        None => Target {
            func: real!(dprintf: fn(c_int, *const c_char) -> c_int) as usize,
            first: fd as usize,
        },
    }
}

/// `int NAME(int fd, …)`: saves the argument registers (the six integer ones, `al`'s count of
/// vector ones and `xmm0`–`xmm7`), calls `$target` with `fd`, puts them back with the answer's
/// first argument in `rdi`, and jumps to the answer's function with the caller's stack as it
/// was (arguments beyond the registers included).
macro_rules! trampoline {
    ($(#[$doc:meta])* $name:ident, $target:ident) => {
        $(#[$doc])*
        #[unsafe(naked)]
        #[no_mangle]
        pub unsafe extern "C" fn $name() {
            core::arch::naked_asm!(
                // Entry: rsp = 8 mod 16; 184 bytes keep it 16-aligned for movaps and the call.
                "sub rsp, 184",
                "movaps [rsp], xmm0",
                "movaps [rsp + 16], xmm1",
                "movaps [rsp + 32], xmm2",
                "movaps [rsp + 48], xmm3",
                "movaps [rsp + 64], xmm4",
                "movaps [rsp + 80], xmm5",
                "movaps [rsp + 96], xmm6",
                "movaps [rsp + 112], xmm7",
                "mov [rsp + 128], rdi",
                "mov [rsp + 136], rsi",
                "mov [rsp + 144], rdx",
                "mov [rsp + 152], rcx",
                "mov [rsp + 160], r8",
                "mov [rsp + 168], r9",
                "mov [rsp + 176], rax",
                "call {target}",
                "mov r10, rax",
                "mov rdi, rdx",
                "movaps xmm0, [rsp]",
                "movaps xmm1, [rsp + 16]",
                "movaps xmm2, [rsp + 32]",
                "movaps xmm3, [rsp + 48]",
                "movaps xmm4, [rsp + 64]",
                "movaps xmm5, [rsp + 80]",
                "movaps xmm6, [rsp + 96]",
                "movaps xmm7, [rsp + 112]",
                "mov rsi, [rsp + 136]",
                "mov rdx, [rsp + 144]",
                "mov rcx, [rsp + 152]",
                "mov r8, [rsp + 160]",
                "mov r9, [rsp + 168]",
                "mov rax, [rsp + 176]",
                "add rsp, 184",
                "jmp r10",
                target = sym $target,
            )
        }
    };
}

trampoline!(
    /// `int dprintf(int fd, const char *fmt, ...)`, to [`target`].
    dprintf,
    target
);

/// Where a fortified `__dprintf_chk(fd, flag, …)` goes: glibc's `__fprintf_chk` with the served
/// `FILE` (the same `flag`, so its checks are made), or glibc's own `__dprintf_chk`.
extern "C" fn target_chk(fd: c_int) -> Target {
    match served(fd) {
        Some(f) => Target {
            func: real!(__fprintf_chk: fn(*mut libc::FILE, c_int, *const c_char) -> c_int) as usize,
            first: f as usize,
        },
        None => Target {
            func: real!(__dprintf_chk: fn(c_int, c_int, *const c_char) -> c_int) as usize,
            first: fd as usize,
        },
    }
}

trampoline!(
    /// `int __dprintf_chk(int fd, int flag, const char *fmt, ...)` (`dprintf` under
    /// `_FORTIFY_SOURCE`), to [`target_chk`].
    __dprintf_chk,
    target_chk
);

#[no_mangle]
pub unsafe extern "C" fn vdprintf(fd: c_int, fmt: *const c_char, ap: *mut c_void) -> c_int {
    match served(fd) {
        Some(f) => vfprintf(f, fmt, ap),
        None => real!(vdprintf: fn(c_int, *const c_char, *mut c_void) -> c_int)(fd, fmt, ap),
    }
}

#[no_mangle]
pub unsafe extern "C" fn __vdprintf_chk(
    fd: c_int,
    flag: c_int,
    fmt: *const c_char,
    ap: *mut c_void,
) -> c_int {
    match served(fd) {
        Some(f) => __vfprintf_chk(f, flag, fmt, ap),
        None => real!(__vdprintf_chk: fn(c_int, c_int, *const c_char, *mut c_void) -> c_int)(
            fd, flag, fmt, ap,
        ),
    }
}
