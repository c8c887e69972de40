//! `popen` and `pclose`: a shell child (`/bin/sh -c cmd`, a simulated fork and exec) with its
//! stdout or stdin on a simulated pipe, whose other end the caller reads or writes as a `FILE`
//! the shim serves; `pclose` closes it and waits for the child in virtual time. As glibc's,
//! the child closes the pipes of earlier `popen` streams, and `e` in the mode makes the
//! caller's end close-on-exec.

use crate::exec::{fork_simulated, wait_status};
use crate::prelude::*;
use core::sync::atomic::AtomicI32;

extern "C" {
    static environ: *const *const c_char;
}

/// The most `popen` streams open at once.
const STREAMS: usize = 64;
/// The open `popen` streams (null: a free entry) and their children.
static FILES: [AtomicPtr<libc::FILE>; STREAMS] =
    [const { AtomicPtr::new(ptr::null_mut()) }; STREAMS];
static PIDS: [AtomicI32; STREAMS] = [const { AtomicI32::new(0) }; STREAMS];

#[no_mangle]
pub unsafe extern "C" fn popen(cmd: *const c_char, mode: *const c_char) -> *mut libc::FILE {
    if !active() {
        return real!(popen: fn(*const c_char, *const c_char) -> *mut libc::FILE)(cmd, mode);
    }
    let m = if mode.is_null() { &[][..] } else { core::ffi::CStr::from_ptr(mode).to_bytes() };
    let reading = match m.first() {
        Some(b'r') => true,
        Some(b'w') => false,
        _ => {
            set_errno(libc::EINVAL);
            return ptr::null_mut();
        }
    };
    let Some(free) = FILES.iter().position(|f| f.load(Ordering::Relaxed).is_null()) else {
        unsupported(b"popen(): more than 64 popen streams open at once", -1, 0);
    };
    let mut p = [-1; 2];
    if libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC) < 0 {
        return ptr::null_mut();
    }
    // The caller's end, the child's end, and where the child's end goes.
    let (mine, theirs, target) = if reading { (p[0], p[1], 1) } else { (p[1], p[0], 0) };
    let pid = {
        let Some(_g) = Guard::enter() else { return ptr::null_mut() };
        fork_simulated()
    };
    if pid == 0 {
        shell_child(cmd, theirs, target);
    }
    libc::close(theirs);
    if pid < 0 {
        libc::close(mine);
        return ptr::null_mut();
    }
    if !m[1..].contains(&b'e') {
        libc::fcntl(mine, libc::F_SETFD, 0);
    }
    let f = crate::diskstdio::stream_file(mine, if reading { c"r" } else { c"w" }.as_ptr());
    if f.is_null() {
        libc::close(mine);
        return f;
    }
    PIDS[free].store(pid, Ordering::Relaxed);
    FILES[free].store(f, Ordering::Relaxed);
    f
}

/// In `popen`'s child: `theirs` becomes `target` (stdout or stdin), earlier streams' pipes
/// close, and the shell runs `cmd` (status 127 if it cannot).
unsafe fn shell_child(cmd: *const c_char, theirs: c_int, target: c_int) -> ! {
    for f in &FILES {
        let f = f.load(Ordering::Relaxed);
        if !f.is_null() {
            libc::close(libc::fileno(f));
        }
    }
    if theirs == target {
        libc::fcntl(target, libc::F_SETFD, 0);
    } else {
        libc::dup2(theirs, target);
    }
    let argv = [c"sh".as_ptr(), c"-c".as_ptr(), cmd, ptr::null()];
    libc::execve(c"/bin/sh".as_ptr(), argv.as_ptr(), environ);
    crate::process::_exit(127)
}

#[no_mangle]
pub unsafe extern "C" fn pclose(f: *mut libc::FILE) -> c_int {
    let found = (!f.is_null()).then(|| FILES.iter().position(|p| p.load(Ordering::Relaxed) == f));
    let Some(Some(i)) = found else {
        return real!(pclose: fn(*mut libc::FILE) -> c_int)(f);
    };
    let pid = PIDS[i].load(Ordering::Relaxed);
    FILES[i].store(ptr::null_mut(), Ordering::Relaxed);
    libc::fclose(f);
    wait_status(pid)
}
