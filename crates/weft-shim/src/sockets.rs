//! Sockets (IPv4 and IPv6 UDP and TCP-like streams): creation, connect/listen/accept, the
//! send and receive families, and the socket options the shim answers (addresses are
//! [`crate::inetaddr`]'s). A real (never used)
//! socket holds each simulated fd number.

use crate::inetaddr::{self, Use};
use crate::prelude::*;
use crate::time::now_ns;

/// The socket's `SO_REUSEADDR` / `SO_REUSEPORT` as `REUSE_*` bits, read from the real socket
/// that holds its fd number (`setsockopt` passes them through to it).
unsafe fn reuse_options(fd: c_int) -> i64 {
    let get = |name: c_int| {
        let mut v: c_int = 0;
        let mut len = core::mem::size_of::<c_int>() as socklen_t;
        let p = [&mut v as *mut c_int as i64, &mut len as *mut socklen_t as i64];
        let args = [fd as i64, libc::SOL_SOCKET as i64, name as i64, p[0], p[1], 0];
        sys::raw_ret(libc::SYS_getsockopt, args) == 0 && v != 0
    };
    let addr = if get(libc::SO_REUSEADDR) { REUSE_ADDR } else { 0 };
    let port = if get(libc::SO_REUSEPORT) { REUSE_PORT } else { 0 };
    (addr | port) as i64
}

/// Ends the run for an IP socket of a type the network model has no place for, naming the
/// type and protocol asked (keepalived's VRRP socket is `SOCK_RAW` protocol 112, ping's
/// `SOCK_RAW` protocol 1): the user learns which feature of the program met it.
fn refuse_socket_type(domain: c_int, base: c_int, proto: c_int) -> ! {
    let mut buf = [0u8; 160];
    let mut t = crate::text::Text::new(&mut buf);
    t.put(if domain == libc::AF_INET { b"socket(AF_INET, " } else { b"socket(AF_INET6, " });
    match base {
        libc::SOCK_RAW => t.put(b"SOCK_RAW"),
        libc::SOCK_SEQPACKET => t.put(b"SOCK_SEQPACKET"),
        _ => t.put(b"type ").num(base as u64),
    };
    t.put(b", protocol ").num(proto as u64);
    t.put(b"): only SOCK_DGRAM and SOCK_STREAM are simulated (raw IP is not)");
    let n = t.len();
    unsupported(&buf[..n], libc::SYS_socket, 0)
}

#[no_mangle]
pub unsafe extern "C" fn socket(domain: c_int, ty: c_int, proto: c_int) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && (domain == libc::AF_INET || domain == libc::AF_INET6) {
            let base = ty & !(libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC);
            if base != libc::SOCK_DGRAM && base != libc::SOCK_STREAM {
                refuse_socket_type(domain, base, proto);
            }
            let stream = base == libc::SOCK_STREAM;
            // A real (never used) socket of the same type holds the fd number, so unhooked
            // calls such as getsockopt(TCP_NODELAY) still see a socket.
            let fd = sys::raw(libc::SYS_socket, [domain as i64, ty as i64, proto as i64, 0, 0, 0]);
            if fd < 0 {
                return -1;
            }
            let fd = fd as c_int;
            if !fdtable::fits(fd) {
                unsupported(b"socket: fd number beyond the shim's table", libc::SYS_socket, 0);
            }
            fdtable::open_socket(fd, stream, ty & libc::SOCK_NONBLOCK != 0);
            slot().args[0] = fd as i64;
            slot().args[1] = stream as i64;
            slot().args[2] = inetaddr::spaces(fd);
            handoff(OP_SOCKET);
            return fd;
        }
        if active() && crate::socktable::refused(domain, proto) {
            set_errno(libc::EPROTONOSUPPORT);
            return -1;
        }
        if active() && domain == libc::AF_PACKET {
            // Link-layer frames: the simulated network has none, so a real packet socket in
            // the node's namespace would send into nothing and never receive (keepalived's
            // gratuitous ARP channel).
            unsupported(
                b"socket(AF_PACKET): link-layer sockets are not simulated",
                libc::SYS_socket,
                0,
            );
        }
    }
    sys::raw(libc::SYS_socket, [domain as i64, ty as i64, proto as i64, 0, 0, 0]) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn bind(fd: c_int, addr: *const sockaddr, len: socklen_t) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && fdtable::is_inet(fd) {
            let e = inetaddr::put(fd, addr, len, Use::Bind);
            if e < 0 {
                return ret_errno(e) as c_int;
            }
            slot().args[0] = fd as i64;
            slot().args[1] = reuse_options(fd);
            slot().args[2] = inetaddr::spaces(fd);
            return ret_errno(handoff(OP_BIND)) as c_int;
        }
    }
    sys::raw(libc::SYS_bind, [fd as i64, addr as i64, len as i64, 0, 0, 0]) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn connect(fd: c_int, addr: *const sockaddr, len: socklen_t) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && fdtable::is_inet(fd) {
            let e = inetaddr::put(fd, addr, len, Use::Reach);
            if e < 0 {
                return ret_errno(e) as c_int;
            }
            slot().args[0] = fd as i64;
            slot().args[1] = fdtable::nonblocking(fd) as i64;
            slot().args[2] = inetaddr::spaces(fd);
            crate::epoll::rearm(fd, crate::epoll::WRITE_SIDE);
            return ret_errno(handoff(OP_CONNECT)) as c_int;
        }
        if active() {
            let fam = if addr.is_null() { 0 } else { (*addr).sa_family as c_int };
            if fam == libc::AF_INET || fam == libc::AF_INET6 {
                unsupported(
                    b"connect() on a socket the shim does not simulate",
                    libc::SYS_connect,
                    0,
                );
            }
        }
    }
    sys::raw(libc::SYS_connect, [fd as i64, addr as i64, len as i64, 0, 0, 0]) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn listen(fd: c_int, backlog: c_int) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && fdtable::is_inet(fd) {
            slot().args[0] = fd as i64;
            slot().args[1] = backlog as i64;
            slot().args[2] = reuse_options(fd);
            return ret_errno(handoff(OP_LISTEN)) as c_int;
        }
    }
    real!(listen: fn(c_int, c_int) -> c_int)(fd, backlog)
}

unsafe fn accept_common(
    fd: c_int,
    addr: *mut sockaddr,
    len: *mut socklen_t,
    flags: c_int,
) -> c_int {
    crate::epoll::rearm(fd, crate::epoll::READ_SIDE);
    let domain = if inetaddr::is_v6(fd) { libc::AF_INET6 } else { libc::AF_INET };
    let args = [domain as i64, (libc::SOCK_STREAM | libc::SOCK_CLOEXEC) as i64, 0, 0, 0, 0];
    let newfd = sys::raw(libc::SYS_socket, args);
    if newfd < 0 {
        return -1;
    }
    let newfd = newfd as c_int;
    if !fdtable::fits(newfd) {
        unsupported(b"accept: fd number beyond the shim's table", -1, 0);
    }
    let s = slot();
    s.args[0] = fd as i64;
    s.args[1] = newfd as i64;
    s.args[2] = fdtable::nonblocking(fd) as i64;
    let r = handoff(OP_ACCEPT);
    if r < 0 {
        real!(close: fn(c_int) -> c_int)(newfd);
        return ret_errno(r) as c_int;
    }
    if flags & libc::SOCK_CLOEXEC == 0 {
        real!(fcntl: fn(c_int, c_int, c_ulong) -> c_int)(newfd, libc::F_SETFD, 0);
    }
    fdtable::open_socket(newfd, true, flags & libc::SOCK_NONBLOCK != 0);
    inetaddr::get(newfd, addr, len);
    newfd
}

#[no_mangle]
pub unsafe extern "C" fn accept(fd: c_int, addr: *mut sockaddr, len: *mut socklen_t) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && fdtable::is_inet(fd) {
            return accept_common(fd, addr, len, 0);
        }
        await_real_recv(fd, 0);
    }
    real!(accept: fn(c_int, *mut sockaddr, *mut socklen_t) -> c_int)(fd, addr, len)
}

#[no_mangle]
pub unsafe extern "C" fn accept4(
    fd: c_int,
    addr: *mut sockaddr,
    len: *mut socklen_t,
    flags: c_int,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && fdtable::is_inet(fd) {
            return accept_common(fd, addr, len, flags);
        }
        await_real_recv(fd, 0);
    }
    real!(accept4: fn(c_int, *mut sockaddr, *mut socklen_t, c_int) -> c_int)(fd, addr, len, flags)
}

#[no_mangle]
pub unsafe extern "C" fn shutdown(fd: c_int, how: c_int) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && fdtable::is_sim(fd) {
            slot().args[0] = fd as i64;
            slot().args[1] = how as i64;
            return ret_errno(handoff(OP_SHUTDOWN)) as c_int;
        }
    }
    real!(shutdown: fn(c_int, c_int) -> c_int)(fd, how)
}

#[no_mangle]
pub unsafe extern "C" fn getpeername(fd: c_int, addr: *mut sockaddr, len: *mut socklen_t) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && fdtable::is_inet(fd) {
            slot().args[0] = fd as i64;
            let r = handoff(OP_GETPEERNAME);
            if r < 0 {
                return ret_errno(r) as c_int;
            }
            inetaddr::get(fd, addr, len);
            return 0;
        }
    }
    real!(getpeername: fn(c_int, *mut sockaddr, *mut socklen_t) -> c_int)(fd, addr, len)
}

#[no_mangle]
pub unsafe extern "C" fn getsockopt(
    fd: c_int,
    level: c_int,
    name: c_int,
    val: *mut c_void,
    len: *mut socklen_t,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && fdtable::is_inet(fd) && level == libc::SOL_SOCKET && name == libc::SO_ERROR {
            if val.is_null() || len.is_null() || (*len as usize) < core::mem::size_of::<c_int>() {
                set_errno(libc::EINVAL);
                return -1;
            }
            slot().args[0] = fd as i64;
            let r = handoff(OP_SOCKERR);
            *(val as *mut c_int) = r as c_int;
            *len = core::mem::size_of::<c_int>() as socklen_t;
            return 0;
        }
    }
    let r = real!(getsockopt: fn(c_int, c_int, c_int, *mut c_void, *mut socklen_t) -> c_int)(
        fd, level, name, val, len,
    );
    if r == 0 && level == libc::SOL_SOCKET && name == libc::SO_PEERCRED {
        virtual_peer(val, len);
    }
    r
}

/// `SO_PEERCRED` of a real `AF_UNIX` socket names the peer's real pid (libqb, which reads the
/// `SCM_CREDENTIALS` form, puts it in its shared-memory names, so they differed from run to
/// run): a peer of the run is named by its virtual pid instead, as `getpid` answers there; a
/// peer outside the run keeps the real one. (The credentials are read unaligned-safe: `val`
/// may point into a control message.)
unsafe fn virtual_peer(val: *mut c_void, len: *mut socklen_t) {
    if val.is_null() || len.is_null() || (*len as usize) < core::mem::size_of::<libc::ucred>() {
        return;
    }
    let Some(_g) = Guard::enter() else { return };
    if !active() {
        return;
    }
    let cred = val as *mut libc::ucred;
    let mut c = ptr::read_unaligned(cred);
    slot().args[0] = c.pid as i64;
    let v = handoff(OP_VIRTUAL_PID);
    if v > 0 {
        c.pid = v as libc::pid_t;
        ptr::write_unaligned(cred, c);
    }
}

#[no_mangle]
pub unsafe extern "C" fn getsockname(fd: c_int, addr: *mut sockaddr, len: *mut socklen_t) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && fdtable::is_inet(fd) {
            slot().args[0] = fd as i64;
            let r = handoff(OP_GETSOCKNAME);
            if r < 0 {
                return ret_errno(r) as c_int;
            }
            inetaddr::get(fd, addr, len);
            return 0;
        }
    }
    real!(getsockname: fn(c_int, *mut sockaddr, *mut socklen_t) -> c_int)(fd, addr, len)
}

/// Sends `len` bytes gathered from `iov` to `addr` (or the connected peer when null).
pub(crate) unsafe fn send_common(
    fd: c_int,
    iov: &[libc::iovec],
    flags: c_int,
    addr: *const sockaddr,
    alen: socklen_t,
) -> ssize_t {
    crate::epoll::rearm(fd, crate::epoll::WRITE_SIDE);
    if fdtable::kind(fd) == FdKind::SimLocal && !addr.is_null() {
        set_errno(libc::EISCONN);
        return -1;
    }
    if fdtable::is_bytes(fd) {
        let nonblock = fdtable::nonblocking(fd) || flags & libc::MSG_DONTWAIT != 0;
        let r = send_stream(fd, iov, nonblock);
        if r < 0 && *libc::__errno_location() == libc::EPIPE && flags & libc::MSG_NOSIGNAL == 0 {
            // As Linux: SIGPIPE to the writing thread (delivered as the call returns; a
            // program that ignores it just sees EPIPE).
            crate::sigsend::send(0, libc::SIGPIPE, SIGTO_SELF);
            set_errno(libc::EPIPE);
        }
        return r;
    }
    let s = slot();
    let mut n = 0usize;
    for v in iov {
        if n + v.iov_len > DATA_MAX {
            set_errno(libc::EMSGSIZE);
            return -1;
        }
        ptr::copy_nonoverlapping(v.iov_base as *const u8, s.data.as_mut_ptr().add(n), v.iov_len);
        n += v.iov_len;
    }
    if addr.is_null() {
        s.addr_ip = 0;
        s.addr_port = 0;
    } else {
        let e = inetaddr::put(fd, addr, alen, Use::Reach);
        if e < 0 {
            return ret_errno(e) as ssize_t;
        }
    }
    s.len = n as u32;
    s.args[0] = fd as i64;
    ret_errno(handoff(OP_SENDTO)) as ssize_t
}

/// Sends `iov` on a stream, in hand-offs of at most `DATA_MAX` bytes (a stream has no message
/// boundaries). The host takes what fits in the connection's window: a blocking send waits for
/// `POLLOUT` and goes on until all is sent, a non-blocking one answers what was taken (or
/// `EAGAIN`). Answers the bytes sent, or -1/errno if nothing was.
unsafe fn send_stream(fd: c_int, iov: &[libc::iovec], nonblock: bool) -> ssize_t {
    let total: usize = iov.iter().map(|v| v.iov_len).sum();
    let mut sent = 0usize;
    loop {
        let s = slot();
        let n = crate::io::gather(iov, sent, &mut s.data);
        s.len = n as u32;
        s.args[0] = fd as i64;
        let mut r = handoff(OP_SENDTO);
        if r == -(libc::EAGAIN as i64) && !nonblock {
            r = crate::poll::await_room(fd);
            if r >= 0 {
                continue;
            }
        }
        if r < 0 {
            return if sent == 0 { ret_errno(r) as ssize_t } else { sent as ssize_t };
        }
        sent += r as usize;
        if sent >= total || (nonblock && (r as usize) < n) {
            return sent as ssize_t;
        }
    }
}

thread_local! {
    /// Set while `recvmsg` reads: it takes passed descriptors itself (`passfds::deliver`).
    static WANT_RIGHTS: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
}

/// Receives one datagram into `iov`; answers its full length, or -1/errno.
pub(crate) unsafe fn recv_common(
    fd: c_int,
    iov: &[libc::iovec],
    flags: c_int,
    addr: *mut sockaddr,
    alen: *mut socklen_t,
    truncated: Option<&mut bool>,
) -> ssize_t {
    crate::epoll::rearm(fd, crate::epoll::READ_SIDE);
    let s = slot();
    let cap: usize = iov.iter().map(|v| v.iov_len).sum();
    let nonblock = fdtable::nonblocking(fd) || flags & libc::MSG_DONTWAIT != 0;
    s.args[0] = fd as i64;
    s.args[1] = nonblock as i64;
    let t = fdtable::rcvtimeo_ns(fd);
    s.args[2] = if t == 0 { 0 } else { now_ns().saturating_add(t) as i64 };
    s.args[3] = cap as i64;
    s.args[4] = (flags & libc::MSG_PEEK != 0) as i64;
    s.args[5] = 0; // the answer's batch of passed descriptors, if any (`passfds`)
    let r = handoff(OP_RECVFROM);
    if r < 0 {
        return ret_errno(r) as ssize_t;
    }
    let batch = if fdtable::kind(fd) == FdKind::SimLocal { s.args[5] } else { 0 };
    let len = s.len as usize;
    let mut copied = 0;
    for v in iov {
        let n = (len - copied).min(v.iov_len);
        ptr::copy_nonoverlapping(s.data.as_ptr().add(copied), v.iov_base as *mut u8, n);
        copied += n;
        if copied == len {
            break;
        }
    }
    if batch > 0 {
        crate::passfds::took(fd, batch as u64);
        if !WANT_RIGHTS.with(|w| w.get()) {
            crate::passfds::discard();
        }
    }
    if let Some(t) = truncated {
        *t = copied < len;
    }
    if fdtable::kind(fd) == FdKind::SimLocal {
        // An unnamed AF_UNIX peer (a socketpair, a pipe): Linux reports no address.
        if !alen.is_null() {
            *alen = 0;
        }
    } else {
        inetaddr::get(fd, addr, alen);
    }
    if flags & libc::MSG_TRUNC != 0 {
        len as ssize_t
    } else {
        copied as ssize_t
    }
}

#[no_mangle]
pub unsafe extern "C" fn sendto(
    fd: c_int,
    buf: *const c_void,
    len: size_t,
    flags: c_int,
    addr: *const sockaddr,
    alen: socklen_t,
) -> ssize_t {
    if let Some(_g) = Guard::enter() {
        if active() && fdtable::is_sim(fd) {
            let iov = [libc::iovec { iov_base: buf as *mut c_void, iov_len: len }];
            return send_common(fd, &iov, flags, addr, alen);
        }
    }
    sys::raw(
        libc::SYS_sendto,
        [fd as i64, buf as i64, len as i64, flags as i64, addr as i64, alen as i64],
    ) as ssize_t
}

#[no_mangle]
pub unsafe extern "C" fn send(fd: c_int, buf: *const c_void, len: size_t, flags: c_int) -> ssize_t {
    sendto(fd, buf, len, flags, ptr::null(), 0)
}

/// Socket-level control messages (`SCM_RIGHTS` descriptors, `SCM_CREDENTIALS`) are not
/// carried by simulated IP sockets (socketpairs carry descriptors: `passfds`): dropping them
/// would be a silent divergence, so the run ends, naming the call. IP-level ones
/// (`IP_PKTINFO` and the like: a node has one address) are ignored.
unsafe fn refuse_passed_descriptors(m: &libc::msghdr) {
    if m.msg_control.is_null() || m.msg_controllen < core::mem::size_of::<libc::cmsghdr>() {
        return;
    }
    let mut c = libc::CMSG_FIRSTHDR(m);
    while !c.is_null() {
        if (*c).cmsg_level == libc::SOL_SOCKET {
            unsupported(
                b"sendmsg(): passing descriptors or credentials (SCM_RIGHTS, SCM_CREDENTIALS) \
                  over a simulated socket is not simulated",
                libc::SYS_sendmsg,
                0,
            );
        }
        c = libc::CMSG_NXTHDR(m, c);
    }
}

#[no_mangle]
pub unsafe extern "C" fn sendmsg(fd: c_int, msg: *const libc::msghdr, flags: c_int) -> ssize_t {
    if let Some(_g) = Guard::enter() {
        if active() && fdtable::is_sim(fd) {
            let m = &*msg;
            let iov = if m.msg_iovlen == 0 {
                &[][..]
            } else {
                core::slice::from_raw_parts(m.msg_iov, m.msg_iovlen)
            };
            if fdtable::kind(fd) == FdKind::SimLocal {
                let mut fds = [0; 253];
                if let Some(n) = crate::passfds::rights(m, &mut fds) {
                    return crate::passfds::send(fd, iov, flags, &fds[..n]);
                }
            }
            refuse_passed_descriptors(m);
            return send_common(fd, iov, flags, m.msg_name as *const sockaddr, m.msg_namelen);
        }
        if active() && !msg.is_null() {
            if let Some(r) = crate::passreal::send(fd, msg, flags) {
                return r;
            }
        }
    }
    sys::raw(libc::SYS_sendmsg, [fd as i64, msg as i64, flags as i64, 0, 0, 0]) as ssize_t
}

#[no_mangle]
pub unsafe extern "C" fn recvfrom(
    fd: c_int,
    buf: *mut c_void,
    len: size_t,
    flags: c_int,
    addr: *mut sockaddr,
    alen: *mut socklen_t,
) -> ssize_t {
    if let Some(_g) = Guard::enter() {
        if active() && fdtable::is_sim(fd) {
            let iov = [libc::iovec { iov_base: buf, iov_len: len }];
            return recv_common(fd, &iov, flags, addr, alen, None);
        }
        await_real_recv(fd, flags);
    }
    sys::raw(
        libc::SYS_recvfrom,
        [fd as i64, buf as i64, len as i64, flags as i64, addr as i64, alen as i64],
    ) as ssize_t
}

#[no_mangle]
pub unsafe extern "C" fn recv(fd: c_int, buf: *mut c_void, len: size_t, flags: c_int) -> ssize_t {
    recvfrom(fd, buf, len, flags, ptr::null_mut(), ptr::null_mut())
}

/// The control messages of what `fd` just received (the slot still holds the host's answer):
/// a datagram's packet information when asked for, else none.
unsafe fn control(fd: c_int, m: &mut libc::msghdr) {
    if fdtable::kind(fd) == FdKind::SimUdp {
        crate::pktinfo::fill(fd, m, slot().args[5] as u32, inetaddr::is_v6(fd));
    } else {
        m.msg_controllen = 0;
    }
}

#[no_mangle]
pub unsafe extern "C" fn recvmsg(fd: c_int, msg: *mut libc::msghdr, flags: c_int) -> ssize_t {
    if let Some(_g) = Guard::enter() {
        if active() && fdtable::is_sim(fd) {
            let m = &mut *msg;
            let iov = if m.msg_iovlen == 0 {
                &[][..]
            } else {
                core::slice::from_raw_parts(m.msg_iov, m.msg_iovlen)
            };
            let mut trunc = false;
            let mut alen = m.msg_namelen;
            WANT_RIGHTS.with(|w| w.set(true));
            let r = recv_common(
                fd,
                iov,
                flags,
                m.msg_name as *mut sockaddr,
                &mut alen,
                Some(&mut trunc),
            );
            WANT_RIGHTS.with(|w| w.set(false));
            let took = crate::passfds::taken();
            if r >= 0 {
                m.msg_namelen = if m.msg_name.is_null() { 0 } else { alen };
                m.msg_flags = if trunc { libc::MSG_TRUNC } else { 0 };
                if took {
                    crate::passfds::deliver(m, flags);
                } else {
                    control(fd, m);
                }
            }
            return r;
        }
    }
    let mut got = None;
    if let Some(_g) = Guard::enter() {
        await_real_recv(fd, flags);
        if active() && !msg.is_null() {
            // Descriptors may come with it (`passreal`).
            got = Some(crate::passreal::recv(fd, msg, flags));
        }
    }
    let r = got.unwrap_or_else(|| {
        sys::raw_ret(libc::SYS_recvmsg, [fd as i64, msg as i64, flags as i64, 0, 0, 0])
    });
    if r >= 0 && !msg.is_null() {
        virtual_creds(&*msg);
    }
    ret_errno(r) as ssize_t
}

/// Before a blocking receive or `accept` on a real socket (an `AF_UNIX` kind the shim leaves
/// real): waits in the host until it cannot block, as `read` does, so the thread never sleeps
/// in the kernel holding the baton while the sender (or connecting process) waits for it.
unsafe fn await_real_recv(fd: c_int, flags: c_int) {
    if active() && fdtable::kind(fd) == FdKind::Real && flags & libc::MSG_DONTWAIT == 0 {
        crate::poll::await_real(fd, libc::POLLIN);
    }
}

/// `SCM_CREDENTIALS` received on a real `AF_UNIX` socket name the sender's pid as
/// [`virtual_peer`] does.
unsafe fn virtual_creds(m: &libc::msghdr) {
    if m.msg_control.is_null() || m.msg_controllen < core::mem::size_of::<libc::cmsghdr>() {
        return;
    }
    let mut c = libc::CMSG_FIRSTHDR(m);
    while !c.is_null() {
        if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_CREDENTIALS {
            let mut len = core::mem::size_of::<libc::ucred>() as socklen_t;
            virtual_peer(libc::CMSG_DATA(c) as *mut c_void, &mut len);
        }
        c = libc::CMSG_NXTHDR(m, c);
    }
}

#[no_mangle]
pub unsafe extern "C" fn sendmmsg(
    fd: c_int,
    msgs: *mut libc::mmsghdr,
    n: c_uint,
    flags: c_int,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && fdtable::is_sim(fd) {
            let mut sent = 0;
            for i in 0..n as usize {
                let m = &mut *msgs.add(i);
                let h = &m.msg_hdr;
                let iov = if h.msg_iovlen == 0 {
                    &[][..]
                } else {
                    core::slice::from_raw_parts(h.msg_iov, h.msg_iovlen)
                };
                let r = send_common(fd, iov, flags, h.msg_name as *const sockaddr, h.msg_namelen);
                if r < 0 {
                    return if sent == 0 { -1 } else { sent };
                }
                m.msg_len = r as c_uint;
                sent += 1;
            }
            return sent;
        }
    }
    sys::raw(libc::SYS_sendmmsg, [fd as i64, msgs as i64, n as i64, flags as i64, 0, 0]) as c_int
}

/// Like Linux: blocks (per the socket and `flags`) for every message, unless
/// `MSG_WAITFORONE`, after which the rest are taken only if already queued. The `timeout`
/// argument (checked by Linux only between datagrams) is ignored.
#[no_mangle]
pub unsafe extern "C" fn recvmmsg(
    fd: c_int,
    msgs: *mut libc::mmsghdr,
    n: c_uint,
    flags: c_int,
    timeout: *mut libc::timespec,
) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() && fdtable::is_sim(fd) {
            let mut got = 0;
            let mut f = flags & !libc::MSG_WAITFORONE;
            for i in 0..n as usize {
                let m = &mut *msgs.add(i);
                let h = &mut m.msg_hdr;
                let iov = if h.msg_iovlen == 0 {
                    &[][..]
                } else {
                    core::slice::from_raw_parts(h.msg_iov, h.msg_iovlen)
                };
                let mut trunc = false;
                let mut alen = h.msg_namelen;
                let r = recv_common(
                    fd,
                    iov,
                    f,
                    h.msg_name as *mut sockaddr,
                    &mut alen,
                    Some(&mut trunc),
                );
                if r < 0 {
                    return if got == 0 { -1 } else { got };
                }
                h.msg_namelen = if h.msg_name.is_null() { 0 } else { alen };
                h.msg_flags = if trunc { libc::MSG_TRUNC } else { 0 };
                control(fd, h);
                m.msg_len = r as c_uint;
                got += 1;
                if flags & libc::MSG_WAITFORONE != 0 {
                    f |= libc::MSG_DONTWAIT;
                }
            }
            return got;
        }
    }
    let args = [fd as i64, msgs as i64, n as i64, flags as i64, timeout as i64, 0];
    sys::raw(libc::SYS_recvmmsg, args) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn setsockopt(
    fd: c_int,
    level: c_int,
    name: c_int,
    val: *const c_void,
    len: socklen_t,
) -> c_int {
    if fdtable::is_sim(fd)
        && level == libc::SOL_SOCKET
        && name == libc::SO_RCVTIMEO
        && !val.is_null()
    {
        if (len as usize) < core::mem::size_of::<libc::timeval>() {
            set_errno(libc::EINVAL);
            return -1;
        }
        let tv = &*(val as *const libc::timeval);
        let ns = (tv.tv_sec.max(0) as u64) * 1_000_000_000 + (tv.tv_usec.max(0) as u64) * 1000;
        fdtable::set_rcvtimeo_ns(fd, ns);
        return 0;
    }
    real!(setsockopt: fn(c_int, c_int, c_int, *const c_void, socklen_t) -> c_int)(
        fd, level, name, val, len,
    )
}
