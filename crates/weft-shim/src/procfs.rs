//! Simulated files in `/proc` and `/sys`, opened as in-memory files: a process's memory
//! figures (`/proc/self/…` and `/proc/<pid>/…` files `statm`, `smaps` and `smaps_rollup`
//! describe a process that uses no memory, `stat` and `status` its virtual ids: [`crate::procpids`]; its
//! `cgroup` is the root one), and the
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
        b"statm" => Some(b"0 0 0 0 0 0 0\n"),
        b"smaps" | b"smaps_rollup" => Some(b""),
        // The root cgroup: no CPU quota for Rust's `available_parallelism` to find.
        b"cgroup" => Some(b"0::/\n"),
        _ => None,
    }
}

/// An in-memory file with the simulated content of `path` (-1 and `ENOENT` for the `stat` of
/// a pid no process of the node has), or None (not such a file, or the memfd could not be
/// made: the caller opens the real one).
pub(crate) unsafe fn open_simulated(path: *const c_char) -> Option<c_int> {
    if path.is_null() {
        return None;
    }
    let p = core::ffi::CStr::from_ptr(path).to_bytes();
    if let Some(fd) = crate::socktable::open_table(p) {
        return Some(fd);
    }
    let mut buf = [0u8; 4096];
    let bytes = if let Some(file) = crate::procpids::id_file_content(p, &mut buf) {
        let Some(n) = file else {
            set_errno(libc::ENOENT); // no process of the node has that pid
            return Some(-1);
        };
        &buf[..n]
    } else if let Some(b) = own_content(p) {
        if crate::procpids::names_no_process(p) {
            set_errno(libc::ENOENT);
            return Some(-1);
        }
        b
    } else {
        let n = crate::machine::file(p, &mut buf)?;
        &buf[..n]
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
