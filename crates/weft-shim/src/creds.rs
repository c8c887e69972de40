//! Credentials inside weft's user namespace. A process runs as root of its own user namespace,
//! where the kernel denies `setgroups(2)` (an unprivileged namespace must, before its group map
//! is written). Daemons started as root drop privileges with `setgroups` and exit when it fails
//! (memcached: "failed to drop supplementary groups"). Inside the namespace only one group is
//! mapped, so the supplementary list carries no privilege to drop: a refused `setgroups` there
//! answers success, and changes nothing the simulation depends on. Everywhere else (and for any
//! other error) the kernel's answer stands.

use crate::prelude::*;

/// True when this process's user namespace denies setgroups.
fn setgroups_denied() -> bool {
    let mut buf = [0u8; 8];
    // SAFETY: NUL-terminated path; a plain read into a local buffer.
    unsafe {
        let fd = sys::raw(libc::SYS_open, [c"/proc/self/setgroups".as_ptr() as i64, 0, 0, 0, 0, 0]);
        if fd < 0 {
            return false;
        }
        let n = sys::raw(libc::SYS_read, [fd, buf.as_mut_ptr() as i64, buf.len() as i64, 0, 0, 0]);
        sys::raw(libc::SYS_close, [fd, 0, 0, 0, 0, 0]);
        n >= 4 && &buf[..4] == b"deny"
    }
}

#[no_mangle]
pub unsafe extern "C" fn setgroups(size: size_t, list: *const libc::gid_t) -> c_int {
    let r = real!(setgroups: fn(size_t, *const libc::gid_t) -> c_int)(size, list);
    if r != 0 && active() && *libc::__errno_location() == libc::EPERM && setgroups_denied() {
        return 0;
    }
    r
}
