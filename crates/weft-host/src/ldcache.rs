//! The loader's cache (`/etc/ld.so.cache`) at a size that is the same on every machine. The
//! dynamic loader maps the whole cache while it places a program's libraries, and the kernel
//! places each mapping below the ones before: the cache's size, which is the number of
//! libraries the machine has installed, moved every library, and so every address glibc's
//! allocator hands out. Redis's interleaving depends on such addresses, and installing
//! unrelated packages (pacemaker, kea) moved the Redis goldens' traces. Each node's mount
//! namespace gets the machine's cache padded with zeros to a fixed size (the loader reads the
//! entries its header counts and ignores what follows), bound over `/etc/ld.so.cache` like the
//! hosts file. The libraries it finds are the machine's; only where they are mapped no longer
//! depends on how many others there are.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::sync::OnceLock;

/// The padded size: larger than any machine's cache we know of (42 KiB on a lean Debian, a few
/// hundred on a desktop); a larger one is padded to the next multiple.
const SIZE: usize = 1 << 20;
const CACHE: &str = "/etc/ld.so.cache";

/// The padded copy of the machine's cache (written once per content to the temp directory),
/// or `None` if the machine has no cache or the copy cannot be written (the machine's is then
/// used).
pub(crate) fn prepare() -> Option<CString> {
    static PADDED: OnceLock<Option<CString>> = OnceLock::new();
    PADDED
        .get_or_init(|| {
            let mut bytes = std::fs::read(CACHE).ok()?;
            bytes.resize(bytes.len().div_ceil(SIZE).max(1) * SIZE, 0);
            let path = crate::by_content("weft-ld.so.cache-", "", &bytes).ok()?;
            CString::new(path.as_os_str().as_bytes()).ok()
        })
        .clone()
}

/// Between fork and exec, in the node's mount namespace: binds `file` over the machine's
/// cache. Best effort: a failure leaves the machine's.
pub(crate) fn bind(file: &CString) {
    // SAFETY: mount is an async-signal-safe system call on NUL-terminated paths.
    unsafe {
        let to = c"/etc/ld.so.cache".as_ptr();
        libc::mount(file.as_ptr(), to, std::ptr::null(), libc::MS_BIND, std::ptr::null());
    }
}
