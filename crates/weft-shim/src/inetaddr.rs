//! Socket addresses between a program and the host. IPv4 `sockaddr_in` pass as they are. An
//! IPv6 socket (`AF_INET6`) lives on the same simulated network, where a node has one IPv6
//! address, its loopback `::1` ([`LOOPBACK6`] to the host): `::ffff:a.b.c.d` is IPv4 traffic
//! to `a.b.c.d` (refused on an `IPV6_V6ONLY` socket), `::1` and `::` (as a destination) stay
//! on the node, and any other IPv6 address is unreachable, as on a host with no IPv6 route.
//! Addresses shown to the program are IPv6 on an IPv6 socket (`::ffff:…` for IPv4 peers).
//! Which family a socket has is read from the placeholder socket that holds its number, so
//! it follows `dup` and `fork` with it.

use crate::prelude::*;

/// What an address is for: the errors differ between naming a local end and reaching a peer.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Use {
    Bind,
    Reach,
}

/// An `int` socket option of `fd`'s placeholder (0 when it cannot be read).
pub(crate) fn sockopt(fd: c_int, level: c_int, name: c_int) -> c_int {
    let mut v: c_int = 0;
    let mut len = core::mem::size_of::<c_int>() as socklen_t;
    let p = [&mut v as *mut c_int as i64, &mut len as *mut socklen_t as i64];
    let args = [fd as i64, level as i64, name as i64, p[0], p[1], 0];
    // SAFETY: getsockopt writes at most `len` bytes into the local `v`.
    if unsafe { sys::raw_ret(libc::SYS_getsockopt, args) } != 0 {
        return 0;
    }
    v
}

/// Whether `fd`'s placeholder is an IPv6 socket.
pub(crate) fn is_v6(fd: c_int) -> bool {
    sockopt(fd, libc::SOL_SOCKET, libc::SO_DOMAIN) == libc::AF_INET6
}

/// The address spaces (`SPACE_*` bits) `fd` takes part in.
pub(crate) fn spaces(fd: c_int) -> i64 {
    if !is_v6(fd) {
        return SPACE_V4 as i64;
    }
    if sockopt(fd, libc::IPPROTO_IPV6, libc::IPV6_V6ONLY) != 0 {
        SPACE_V6 as i64
    } else {
        (SPACE_V4 | SPACE_V6) as i64
    }
}

/// Reads `addr` (for `fd`'s family) into the slot. Answers `-errno` on a bad address.
pub(crate) unsafe fn put(fd: c_int, addr: *const sockaddr, len: socklen_t, used: Use) -> i64 {
    if addr.is_null() {
        return -(libc::EINVAL as i64);
    }
    let family = (*addr).sa_family as c_int;
    match (is_v6(fd), family) {
        (false, libc::AF_INET) => put_v4(addr, len),
        (true, libc::AF_INET6) => put_v6(fd, addr, len, used),
        (true, _) if used == Use::Bind => -(libc::EINVAL as i64),
        _ => -(libc::EAFNOSUPPORT as i64),
    }
}

unsafe fn put_v4(addr: *const sockaddr, len: socklen_t) -> i64 {
    if (len as usize) < core::mem::size_of::<libc::sockaddr_in>() {
        return -(libc::EINVAL as i64);
    }
    let a = &*(addr as *const libc::sockaddr_in);
    let ip = u32::from_be(a.sin_addr.s_addr);
    // 0.0.0.1 is not the IPv6 loopback for an IPv4 socket: make it an address of no node.
    set(if ip == LOOPBACK6 { u32::MAX } else { ip }, u16::from_be(a.sin_port));
    0
}

unsafe fn put_v6(fd: c_int, addr: *const sockaddr, len: socklen_t, used: Use) -> i64 {
    if (len as usize) < core::mem::size_of::<libc::sockaddr_in6>() {
        return -(libc::EINVAL as i64);
    }
    let a = &*(addr as *const libc::sockaddr_in6);
    let b = a.sin6_addr.s6_addr;
    let port = u16::from_be(a.sin6_port);
    let mapped = b[..10].iter().all(|&x| x == 0) && b[10] == 0xff && b[11] == 0xff;
    let ip = if b == [0; 16] {
        if used == Use::Bind {
            0
        } else {
            LOOPBACK6
        }
    } else if b[..15].iter().all(|&x| x == 0) && b[15] == 1 {
        LOOPBACK6
    } else if mapped {
        if spaces(fd) & SPACE_V4 as i64 == 0 {
            return -(if used == Use::Bind { libc::EINVAL } else { libc::ENETUNREACH } as i64);
        }
        u32::from_be_bytes([b[12], b[13], b[14], b[15]])
    } else {
        return -(if used == Use::Bind { libc::EADDRNOTAVAIL } else { libc::ENETUNREACH } as i64);
    };
    set(ip, port);
    0
}

fn set(ip: u32, port: u16) {
    let s = slot();
    s.addr_ip = ip;
    s.addr_port = port;
}

/// Writes the slot's address to a caller's `sockaddr` in `fd`'s family (truncating like the
/// kernel does).
/// An address (as a slot carries it) as an IPv6 socket shows it: `::` for 0, `::1`, or IPv4
/// as `::ffff:a.b.c.d`.
pub(crate) fn v6_bytes(ip: u32) -> [u8; 16] {
    match ip {
        0 => [0; 16],
        LOOPBACK6 => [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
        ip => {
            let [p, q, r, t] = ip.to_be_bytes();
            [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, p, q, r, t]
        }
    }
}

pub(crate) unsafe fn get(fd: c_int, addr: *mut sockaddr, len: *mut socklen_t) {
    if addr.is_null() || len.is_null() {
        return;
    }
    let s = slot();
    if is_v6(fd) {
        let mut a: libc::sockaddr_in6 = core::mem::zeroed();
        a.sin6_family = libc::AF_INET6 as libc::sa_family_t;
        a.sin6_port = s.addr_port.to_be();
        a.sin6_addr.s6_addr = v6_bytes(s.addr_ip);
        copy_out(&a, addr, len);
    } else {
        let mut a: libc::sockaddr_in = core::mem::zeroed();
        a.sin_family = libc::AF_INET as libc::sa_family_t;
        a.sin_port = s.addr_port.to_be();
        a.sin_addr.s_addr = s.addr_ip.to_be();
        copy_out(&a, addr, len);
    }
}

unsafe fn copy_out<T>(a: &T, addr: *mut sockaddr, len: *mut socklen_t) {
    let size = core::mem::size_of::<T>();
    let n = (*len as usize).min(size);
    ptr::copy_nonoverlapping(a as *const T as *const u8, addr as *mut u8, n);
    *len = size as socklen_t;
}
