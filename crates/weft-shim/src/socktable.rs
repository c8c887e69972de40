//! The simulated machine's socket tables: `/proc/net/{tcp,tcp6,udp,udp6}` (also under
//! `/proc/self/net` and `/proc/<pid>/net`) list the node's simulated sockets in the kernel's
//! format, and a `/proc/<pid>/fd/<n>` link to one names its inode there (`socket:[N]`), so
//! `netstat`, `lsof` and `ss -p` see which process listens where. The machine has no socket
//! diagnostics module: `socket(AF_NETLINK, …, NETLINK_SOCK_DIAG)` fails with
//! `EPROTONOSUPPORT`, as on a kernel built without it, and `ss` reads the tables instead. The
//! real placeholder sockets are never bound, so the kernel's own tables and netlink answers
//! had said no port was open (Galera's rsync state transfer waited for its daemon's port for
//! ever).

use crate::inetaddr::v6_bytes;
use crate::prelude::*;
use crate::text::Text;

/// Whether `socket(domain, _, proto)` asks for the socket diagnostics the machine lacks.
pub(crate) fn refused(domain: c_int, proto: c_int) -> bool {
    domain == libc::AF_NETLINK && proto == libc::NETLINK_SOCK_DIAG
}

/// The `OP_SOCKETS` table `p` names (`/proc/net/tcp` and the rest), if it names one.
unsafe fn table_of(p: &[u8]) -> Option<i64> {
    let net = match crate::procpids::pid_path(p) {
        Some((_, rest)) => rest,
        None => p.strip_prefix(b"/proc")?,
    };
    match net.strip_prefix(b"/net/")? {
        b"tcp" => Some(NET_TCP),
        b"tcp6" => Some(NET_TCP6),
        b"udp" => Some(NET_UDP),
        b"udp6" => Some(NET_UDP6),
        _ => None,
    }
}

/// An in-memory file holding the table `p` names, or None (not such a path, or no memfd).
pub(crate) unsafe fn open_table(p: &[u8]) -> Option<c_int> {
    let table = table_of(p)?;
    slot().args[0] = table;
    let n = (handoff(OP_SOCKETS).max(0) as usize).min(DATA_MAX / NET_RECORD);
    let fd = libc::memfd_create(c"weft-net".as_ptr(), libc::MFD_CLOEXEC);
    if fd < 0 {
        return None;
    }
    fdtable::forget(fd);
    // Raw writes: no hand-off, so the answer stays in the slot while the rows are written.
    let put = |line: &[u8]| {
        sys::raw_ret(
            libc::SYS_write,
            [fd as i64, line.as_ptr() as i64, line.len() as i64, 0, 0, 0],
        );
    };
    let mut line = [0u8; 256];
    let len = header(table, &mut line);
    put(&line[..len]);
    for (k, r) in slot().data[..n * NET_RECORD].chunks_exact(NET_RECORD).enumerate() {
        let len = row(table, k, r.try_into().unwrap(), &mut line);
        put(&line[..len]);
    }
    libc::lseek(fd, 0, libc::SEEK_SET);
    Some(fd)
}

/// The table's first line, as Linux writes it (the IPv4 ones padded to a fixed width).
fn header(table: i64, out: &mut [u8]) -> usize {
    let head = b"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode";
    let head6 = b"  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode";
    let mut t = Text::new(out);
    match table {
        NET_TCP => padded(t.put(head), 149),
        NET_UDP => padded(t.put(b" ").put(head).put(b" ref pointer drops"), 127),
        NET_TCP6 => t.put(head6).put(b"\n").len(),
        _ => t.put(head6).put(b" ref pointer drops\n").len(),
    }
}

/// Pads the line to `width` columns with spaces and ends it, as the kernel's `seq_pad` does.
fn padded(t: &mut Text, width: usize) -> usize {
    while t.len() < width {
        t.put(b" ");
    }
    t.put(b"\n").len()
}

/// Row `k` of the table from its `OP_SOCKETS` record `r`, as the kernel formats it.
fn row(table: i64, k: usize, r: &[u8; NET_RECORD], out: &mut [u8]) -> usize {
    let word = |at: usize| u32::from_ne_bytes(r[at..at + 4].try_into().unwrap());
    let port = |at: usize| u16::from_ne_bytes([r[at], r[at + 1]]) as u64;
    let (state, inode) = (r[16], word(8) as u64);
    let (v6, udp) = (matches!(table, NET_TCP6 | NET_UDP6), matches!(table, NET_UDP | NET_UDP6));
    let mut t = Text::new(out);
    t.num_in(k as u64, if udp { 5 } else { 4 }).put(b": ");
    address(&mut t, word(0), v6).put(b":").hex(port(12), 4).put(b" ");
    address(&mut t, word(4), v6).put(b":").hex(port(14), 4).put(b" ");
    t.hex(state as u64, 2).put(b" 00000000:00000000 00:00000000 00000000     0        0 ");
    t.num(inode);
    if udp {
        t.put(b" 2 0000000000000000 0");
    } else if state == 0x0a {
        t.put(b" 1 0000000000000000 100 0 0 10 0");
    } else {
        t.put(b" 1 0000000000000000 20 4 0 10 -1");
    }
    match table {
        NET_TCP => padded(&mut t, 149),
        NET_UDP => padded(&mut t, 127),
        _ => t.put(b"\n").len(),
    }
}

/// An address as the tables print it: the bytes in memory order, each 32-bit word as the
/// machine reads it (little-endian here), in hexadecimal.
fn address<'a, 'b>(t: &'a mut Text<'b>, ip: u32, v6: bool) -> &'a mut Text<'b> {
    if !v6 {
        // A slot carries the address as a number; `LOOPBACK6` on an IPv4 socket is not one.
        let bytes = if ip == LOOPBACK6 { [0; 4] } else { ip.to_be_bytes() };
        return t.hex(u32::from_ne_bytes(bytes) as u64, 8);
    }
    for w in v6_bytes(ip).chunks_exact(4) {
        t.hex(u32::from_ne_bytes(w.try_into().unwrap()) as u64, 8);
    }
    t
}

/// After a `readlink` of `path` wrote `n` bytes to `buf` (of `len`): a `/proc/<pid>/fd/<n>`
/// (or `/proc/self/fd/<n>`) link to a simulated socket names the socket's inode in the tables
/// instead of its placeholder's. Answers the length.
pub(crate) unsafe fn socket_link(
    path: *const c_char,
    buf: *mut u8,
    len: size_t,
    n: ssize_t,
) -> ssize_t {
    let got = core::slice::from_raw_parts(buf, n.max(0) as usize);
    if !got.starts_with(b"socket:[") {
        return n;
    }
    let Some(inode) = inode_at(path) else { return n };
    let mut link = [0u8; 32];
    let mut t = Text::new(&mut link);
    t.put(b"socket:[").num(inode).put(b"]");
    let m = t.len().min(len);
    ptr::copy_nonoverlapping(link.as_ptr(), buf, m);
    m as ssize_t
}

/// After a `stat` (following links) of `path` answered `r` into `st`: a socket reached
/// through `/proc/<pid>/fd/<n>` has the inode the tables show (`lsof` matches them so).
pub(crate) unsafe fn socket_stat(path: *const c_char, r: c_int, st: *mut libc::stat) {
    if r == 0 && !st.is_null() && (*st).st_mode & libc::S_IFMT == libc::S_IFSOCK {
        if let Some(inode) = inode_at(path) {
            (*st).st_ino = inode;
        }
    }
}

/// [`socket_stat`] for `statx`.
pub(crate) unsafe fn socket_statx(path: *const c_char, r: c_int, stx: *mut libc::statx) {
    if r == 0 && !stx.is_null() && u32::from((*stx).stx_mode) & libc::S_IFMT == libc::S_IFSOCK {
        if let Some(inode) = inode_at(path) {
            (*stx).stx_ino = inode;
        }
    }
}

/// The inode of the simulated socket a `/proc/<pid>/fd/<n>` path reaches, if it reaches one.
unsafe fn inode_at(path: *const c_char) -> Option<u64> {
    if path.is_null() {
        return None;
    }
    let (pid, fd) = crate::procpids::fd_path(core::ffi::CStr::from_ptr(path).to_bytes())?;
    let _g = Guard::enter()?;
    if !active() {
        return None;
    }
    slot().args[0] = pid;
    slot().args[1] = fd;
    let inode = handoff(OP_SOCK_INODE);
    (inode > 0).then_some(inode as u64)
}
