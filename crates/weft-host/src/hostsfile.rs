//! Node names resolve. Each node's host name is `n<id>` (`uname`, `gethostname`), and programs
//! look it up: Erlang's `-sname`, Java's `getLocalHost`, squid's check of its own name, a
//! daemon that advertises the address its name has. The machine's `/etc/hosts` knows none of
//! them, so in each node's mount namespace a copy of it with one line per node of the run
//! (`127.1.0.1 n0`, …: the address other nodes reach it at) is bound over `/etc/hosts`.
//! The copy is written once per content to the temp directory, as the shim is
//! (`crate::by_content`).

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;

/// The hosts file for a run of `cfg`'s nodes: the machine's, then the nodes' names.
fn content(cfg: &crate::HostConfig) -> String {
    let mut text = std::fs::read_to_string("/etc/hosts").unwrap_or_default();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("# weft: the nodes of this run\n");
    for node in 0..cfg.nodes {
        let ip = crate::host::format_ip(cfg.node_ip(node));
        text.push_str(&format!("{ip} n{node}\n"));
    }
    text
}

/// Writes (or finds) the hosts file for `cfg`'s nodes; its path, or `None` when the temp
/// directory cannot hold it (then the machine's `/etc/hosts` is used).
pub(crate) fn prepare(cfg: &crate::HostConfig) -> Option<CString> {
    let path = crate::by_content("weft-hosts-", "", content(cfg).as_bytes()).ok()?;
    CString::new(path.as_os_str().as_bytes()).ok()
}

/// Between fork and exec, in the node's mount namespace: binds `file` over `/etc/hosts`.
/// Best effort: a failure leaves the machine's.
pub(crate) fn bind(file: &CString) {
    // SAFETY: mount is an async-signal-safe system call on NUL-terminated paths.
    unsafe {
        let flags = libc::MS_BIND;
        libc::mount(
            file.as_ptr(),
            c"/etc/hosts".as_ptr(),
            std::ptr::null(),
            flags,
            std::ptr::null(),
        );
    }
}
