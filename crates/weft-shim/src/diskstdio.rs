//! stdio on descriptors the shim serves: data-directory files, and simulated pipes, sockets
//! and socketpairs. glibc's `fopen` opens with its internal `open` and its `FILE` reads and
//! writes with its internal `read`/`write`, which no hook sees, so such a `FILE` is made with
//! `fopencookie` instead: its read, write, seek and close functions are the shim's own hooks
//! on the descriptor, so every byte stdio moves goes to the host (its disk model, or the pipe
//! or stream) at the moment glibc flushes it, as it would reach the kernel. That holds for
//! `fopen` of a data-directory path, `fdopen` of a served descriptor, and stdin, stdout and
//! stderr of an image exec'd with a simulated one there (`popen`, a shell pipeline).
//! `fileno` of such a `FILE` answers its descriptor (so `fsync(fileno(f))` syncs it); the
//! table of those `FILE`s is this module's.

use crate::prelude::*;

/// glibc's `cookie_io_functions_t`.
#[repr(C)]
pub(crate) struct CookieIo {
    pub(crate) read: Option<unsafe extern "C" fn(*mut c_void, *mut c_char, size_t) -> ssize_t>,
    pub(crate) write: Option<unsafe extern "C" fn(*mut c_void, *const c_char, size_t) -> ssize_t>,
    pub(crate) seek: Option<unsafe extern "C" fn(*mut c_void, *mut i64, c_int) -> c_int>,
    pub(crate) close: Option<unsafe extern "C" fn(*mut c_void) -> c_int>,
}

extern "C" {
    pub(crate) fn fopencookie(
        cookie: *mut c_void,
        mode: *const c_char,
        io: CookieIo,
    ) -> *mut libc::FILE;
}

/// The most data-directory `FILE`s open at once in one process.
const FILES: usize = 64;
/// The open data-directory `FILE`s (null: a free entry) and their descriptors.
static FILE_PTRS: [AtomicPtr<libc::FILE>; FILES] =
    [const { AtomicPtr::new(ptr::null_mut()) }; FILES];
static FILE_FDS: [AtomicU32; FILES] = [const { AtomicU32::new(0) }; FILES];

fn fd_of(cookie: *mut c_void) -> c_int {
    cookie as usize as c_int
}

unsafe extern "C" fn cookie_read(cookie: *mut c_void, buf: *mut c_char, len: size_t) -> ssize_t {
    crate::io::read(fd_of(cookie), buf.cast(), len)
}

unsafe extern "C" fn cookie_write(cookie: *mut c_void, buf: *const c_char, len: size_t) -> ssize_t {
    // A cookie's write answers 0 on error (glibc's contract), never -1.
    crate::io::write(fd_of(cookie), buf.cast(), len).max(0)
}

unsafe extern "C" fn cookie_seek(cookie: *mut c_void, pos: *mut i64, whence: c_int) -> c_int {
    let r = crate::datadir::lseek(fd_of(cookie), *pos, whence);
    if r < 0 {
        return -1;
    }
    *pos = r;
    0
}

unsafe extern "C" fn cookie_close(cookie: *mut c_void) -> c_int {
    let fd = fd_of(cookie);
    for (p, f) in FILE_PTRS.iter().zip(&FILE_FDS) {
        if !p.load(Ordering::Relaxed).is_null() && f.load(Ordering::Relaxed) == fd as u32 {
            p.store(ptr::null_mut(), Ordering::Relaxed);
            break;
        }
    }
    crate::io::close(fd)
}

/// A `FILE` for disk descriptor `fd` (which it then owns), opened with `mode`; null with
/// errno on failure (`fd` stays open then, as with `fdopen`).
pub(crate) unsafe fn disk_file(fd: c_int, mode: *const c_char) -> *mut libc::FILE {
    cookie_file(fd, mode, cookie_read)
}

/// The read function of a `FILE` the shim serves: `(descriptor as pointer, buffer, length)`.
pub(crate) type CookieRead = unsafe extern "C" fn(*mut c_void, *mut c_char, size_t) -> ssize_t;

/// A `FILE` for `fd` whose reads are `read`'s and whose writes, seeks and close are the shim's
/// hooks (a random device's file reads with [`crate::random`]'s, which never ends).
pub(crate) unsafe fn cookie_file(
    fd: c_int,
    mode: *const c_char,
    read: CookieRead,
) -> *mut libc::FILE {
    served_file(fd, mode, read, true)
}

/// A `FILE` for the simulated pipe, socket or socketpair `fd` (which it then owns): as
/// [`cookie_file`], without seeking (`ESPIPE`, as on a pipe).
pub(crate) unsafe fn stream_file(fd: c_int, mode: *const c_char) -> *mut libc::FILE {
    served_file(fd, mode, cookie_read, false)
}

unsafe fn served_file(
    fd: c_int,
    mode: *const c_char,
    read: CookieRead,
    seekable: bool,
) -> *mut libc::FILE {
    let Some(free) = FILE_PTRS.iter().position(|p| p.load(Ordering::Relaxed).is_null()) else {
        unsupported(b"more than 64 stdio streams the shim serves open at once", -1, 0);
    };
    let io = CookieIo {
        read: Some(read),
        write: Some(cookie_write),
        seek: if seekable { Some(cookie_seek) } else { None },
        close: Some(cookie_close),
    };
    let f = fopencookie(fd as usize as *mut c_void, mode, io);
    if !f.is_null() {
        FILE_FDS[free].store(fd as u32, Ordering::Relaxed);
        FILE_PTRS[free].store(f, Ordering::Relaxed);
    }
    f
}

/// The `open` flags of an `fopen` mode (`r`, `w`, `a`, each with `+`; `x` exclusive, `e`
/// close-on-exec; `b`, `m`, `c` and a `,ccs=` suffix change nothing here). `None`: invalid.
fn mode_flags(mode: &[u8]) -> Option<c_int> {
    let mut flags = match mode.first()? {
        b'r' => 0,
        b'w' => libc::O_CREAT | libc::O_TRUNC,
        b'a' => libc::O_CREAT | libc::O_APPEND,
        _ => return None,
    };
    let mut plus = false;
    for &c in mode[1..].iter().take_while(|&&c| c != b',') {
        match c {
            b'+' => plus = true,
            b'x' => flags |= libc::O_EXCL,
            b'e' => flags |= libc::O_CLOEXEC,
            _ => {}
        }
    }
    let access = match (plus, mode[0]) {
        (true, _) => libc::O_RDWR,
        (false, b'r') => libc::O_RDONLY,
        (false, _) => libc::O_WRONLY,
    };
    Some(flags | access)
}

/// `fopen` of a data-directory path (the caller holds the guard): `None` when the path is
/// real; otherwise the stream, or null with errno.
pub(crate) unsafe fn try_fopen(
    path: *const c_char,
    mode: *const c_char,
) -> Option<*mut libc::FILE> {
    if matches!(crate::datadir::classify(libc::AT_FDCWD, path), crate::datadir::Where::Real) {
        return None;
    }
    let m = if mode.is_null() { &[][..] } else { core::ffi::CStr::from_ptr(mode).to_bytes() };
    let Some(flags) = mode_flags(m) else {
        set_errno(libc::EINVAL);
        return Some(ptr::null_mut());
    };
    let fd = crate::datadir::try_open(libc::AT_FDCWD, path, flags)?;
    if fd < 0 {
        return Some(ptr::null_mut());
    }
    let f = disk_file(fd, mode);
    if f.is_null() {
        let e = *libc::__errno_location();
        crate::io::forget_fd(fd);
        real!(close: fn(c_int) -> c_int)(fd);
        set_errno(e);
    }
    Some(f)
}

/// The descriptor of a data-directory stream, or `None`.
fn disk_fileno(f: *mut libc::FILE) -> Option<c_int> {
    if f.is_null() {
        return None;
    }
    let i = FILE_PTRS.iter().position(|p| p.load(Ordering::Relaxed) == f)?;
    Some(FILE_FDS[i].load(Ordering::Relaxed) as c_int)
}

#[no_mangle]
pub unsafe extern "C" fn fileno(f: *mut libc::FILE) -> c_int {
    if let Some(fd) = disk_fileno(f) {
        return fd;
    }
    real!(fileno: fn(*mut libc::FILE) -> c_int)(f)
}

#[no_mangle]
pub unsafe extern "C" fn fileno_unlocked(f: *mut libc::FILE) -> c_int {
    if let Some(fd) = disk_fileno(f) {
        return fd;
    }
    real!(fileno_unlocked: fn(*mut libc::FILE) -> c_int)(f)
}

#[no_mangle]
pub unsafe extern "C" fn fdopen(fd: c_int, mode: *const c_char) -> *mut libc::FILE {
    if fdtable::kind(fd) == FdKind::Disk && active() {
        return disk_file(fd, mode);
    }
    if fdtable::is_bytes(fd) && active() {
        return stream_file(fd, mode);
    }
    real!(fdopen: fn(c_int, *const c_char) -> *mut libc::FILE)(fd, mode)
}

extern "C" {
    static mut stdin: *mut libc::FILE;
    static mut stdout: *mut libc::FILE;
    static mut stderr: *mut libc::FILE;
}

/// Makes stdin, stdout or stderr (`fd` 0, 1 or 2) a `FILE` the shim serves when `fd` is a
/// simulated descriptor or a data-directory file (stdout fully buffered, as on a pipe; stderr
/// unbuffered), since glibc's own would read and write the placeholder: in an image exec'd with
/// one there (from the library constructor), and after `dup2` puts one there. Once served, a stream stays served (its reads
/// and writes go through the hooks, whatever `fd` is later). What glibc's own stream had
/// buffered and not flushed moves to the new one, so it reaches `fd` as it would natively.
///
/// # Safety
/// Active; the program is not using the stream in another thread, and this is not inside the
/// allocator's own initialisation (making the `FILE` allocates).
pub(crate) unsafe fn serve_std_stream(fd: c_int) {
    let (stream, mode) = match fd {
        0 => (&raw mut stdin, c"r"),
        1 => (&raw mut stdout, c"w"),
        2 => (&raw mut stderr, c"w"),
        _ => return,
    };
    if disk_fileno(*stream).is_some() {
        return;
    }
    let f = match fdtable::kind(fd) {
        FdKind::Disk => disk_file(fd, mode.as_ptr()),
        _ if fdtable::is_bytes(fd) => stream_file(fd, mode.as_ptr()),
        _ => return,
    };
    if f.is_null() {
        unsupported(b"stdio: cannot serve a simulated stdin, stdout or stderr", -1, 0);
    }
    if fd == 2 {
        libc::setvbuf(f, ptr::null_mut(), libc::_IONBF, 0);
    }
    move_pending(*stream, f);
    *stream = f;
}

/// Moves what glibc's stream `from` has buffered for writing into `to`. glibc's `struct
/// _IO_FILE` (public, stable ABI) keeps the buffered bytes between `_IO_write_base` (offset 32)
/// and `_IO_write_ptr` (offset 40).
unsafe fn move_pending(from: *mut libc::FILE, to: *mut libc::FILE) {
    if from.is_null() {
        return;
    }
    let base = from.cast::<u8>().add(32).cast::<*mut u8>();
    let at = from.cast::<u8>().add(40).cast::<*mut u8>();
    if !(*base).is_null() && *at > *base {
        libc::fwrite((*base).cast(), 1, (*at).offset_from(*base) as usize, to);
        *at = *base;
    }
}

/// Flushes every `FILE` the shim serves (at exit, while their writes still reach the host).
pub(crate) fn flush_served() {
    for p in &FILE_PTRS {
        let f = p.load(Ordering::Relaxed);
        if !f.is_null() {
            // SAFETY: an open stream of this table (closing one takes it out first).
            unsafe { libc::fflush(f) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::mode_flags;

    #[test]
    fn fopen_modes_map_to_open_flags() {
        use libc::*;
        assert_eq!(mode_flags(b"r"), Some(O_RDONLY));
        assert_eq!(mode_flags(b"rb+"), Some(O_RDWR));
        assert_eq!(mode_flags(b"w"), Some(O_WRONLY | O_CREAT | O_TRUNC));
        assert_eq!(mode_flags(b"we"), Some(O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC));
        assert_eq!(mode_flags(b"a+"), Some(O_RDWR | O_CREAT | O_APPEND));
        assert_eq!(mode_flags(b"wx"), Some(O_WRONLY | O_CREAT | O_TRUNC | O_EXCL));
        assert_eq!(mode_flags(b"r,ccs=UTF-8"), Some(O_RDONLY));
        assert_eq!(mode_flags(b"q"), None);
        assert_eq!(mode_flags(b""), None);
    }
}
