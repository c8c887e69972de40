//! Simulated files in `/proc` and `/sys`, opened as in-memory files: a process's own memory
//! figures (`/proc/self/…` and `/proc/<pid>/…` files `stat`, `statm`, `smaps` and
//! `smaps_rollup` describe a process that uses no memory; its `cgroup` is the root one), and the
//! system-wide files of the simulated machine ([`crate::machine::file`]). The real figures (resident pages, private dirty pages) change from run to run
//! with the kernel's timing and would leak into what a program reports (Redis's `INFO memory`
//! and its fork copy-on-write log lines), breaking replay. The pid weft gives a process is not
//! the kernel's, so `/proc/<that pid>` would name some other process anyway.

use crate::prelude::*;

/// What process file `p` reads as under weft, if it is one of the files above.
fn own_content(p: &[u8]) -> Option<&'static [u8]> {
    let rest = p.strip_prefix(b"/proc/")?;
    let slash = rest.iter().position(|&b| b == b'/')?;
    let (who, file) = (&rest[..slash], &rest[slash + 1..]);
    let pid = !who.is_empty() && who.iter().all(u8::is_ascii_digit);
    if who != b"self" && !pid {
        return None;
    }
    match file {
        b"stat" => Some(STAT),
        b"statm" => Some(b"0 0 0 0 0 0 0\n"),
        b"smaps" | b"smaps_rollup" => Some(b""),
        // The root cgroup: no CPU quota for Rust's `available_parallelism` to find.
        b"cgroup" => Some(b"0::/\n"),
        _ => None,
    }
}

/// pid, comm, state, then 49 zero fields (vsize and rss among them).
const STAT: &[u8] = b"1 (weft) R 0 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 0 0 0 0 0 0 0 0 0 \
0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n";

/// An in-memory file with the simulated content of `path`, or None (not such a file, or the
/// memfd could not be made: the caller opens the real one).
pub(crate) unsafe fn open_simulated(path: *const c_char) -> Option<c_int> {
    if path.is_null() {
        return None;
    }
    let p = core::ffi::CStr::from_ptr(path).to_bytes();
    let mut buf = [0u8; 512];
    let bytes = match own_content(p) {
        Some(b) => b,
        None => {
            let n = crate::machine::file(p, &mut buf)?;
            &buf[..n]
        }
    };
    let fd = libc::memfd_create(c"weft-proc".as_ptr(), libc::MFD_CLOEXEC);
    if fd < 0 {
        return None;
    }
    fdtable::forget(fd);
    if !bytes.is_empty() {
        libc::write(fd, bytes.as_ptr().cast(), bytes.len());
    }
    libc::lseek(fd, 0, libc::SEEK_SET);
    Some(fd)
}
