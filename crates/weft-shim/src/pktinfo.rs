//! The control message a received datagram carries when the program asked for it:
//! `IP_PKTINFO` (IPv4) and `IPV6_RECVPKTINFO` (IPv6) name the address the datagram was sent to
//! and the interface it came in on. dnsmasq in its default wildcard mode drops every query
//! whose `recvmsg` brings none (it answers from the address the query reached). In a node's
//! namespace every address is on `lo` (interface 1); the host says which address the sender
//! named. The options stay on the placeholder socket, which the program set them on; the shim
//! reads them back from there.

use crate::inetaddr::sockopt;
use crate::prelude::*;

/// The interface every simulated address is on (`lo` in the node's namespace).
const LO_INDEX: c_int = 1;

/// Fills `m`'s control buffer for a datagram sent to `dst` (as the host answered it) and
/// received on simulated socket `fd` (IPv6 when `v6`), and sets `msg_controllen` and
/// `MSG_CTRUNC` as Linux would.
pub(crate) unsafe fn fill(fd: c_int, m: &mut libc::msghdr, dst: u32, v6: bool) {
    let room = if m.msg_control.is_null() { 0 } else { m.msg_controllen };
    m.msg_controllen = 0;
    let wanted = if v6 {
        sockopt(fd, libc::IPPROTO_IPV6, libc::IPV6_RECVPKTINFO) != 0
    } else {
        sockopt(fd, libc::IPPROTO_IP, libc::IP_PKTINFO) != 0
    };
    if !wanted {
        return;
    }
    let size = if v6 { size_of::<libc::in6_pktinfo>() } else { size_of::<libc::in_pktinfo>() };
    let space = libc::CMSG_SPACE(size as u32) as usize;
    if room < space {
        m.msg_flags |= libc::MSG_CTRUNC;
        return;
    }
    ptr::write_bytes(m.msg_control as *mut u8, 0, space);
    let c = m.msg_control as *mut libc::cmsghdr;
    (*c).cmsg_len = libc::CMSG_LEN(size as u32) as usize;
    if v6 {
        (*c).cmsg_level = libc::IPPROTO_IPV6;
        (*c).cmsg_type = libc::IPV6_PKTINFO;
        let pi = libc::CMSG_DATA(c) as *mut libc::in6_pktinfo;
        (*pi).ipi6_addr.s6_addr = crate::inetaddr::v6_bytes(dst);
        (*pi).ipi6_ifindex = LO_INDEX as u32;
    } else {
        (*c).cmsg_level = libc::IPPROTO_IP;
        (*c).cmsg_type = libc::IP_PKTINFO;
        let pi = libc::CMSG_DATA(c) as *mut libc::in_pktinfo;
        (*pi).ipi_ifindex = LO_INDEX;
        (*pi).ipi_spec_dst.s_addr = dst.to_be();
        (*pi).ipi_addr.s_addr = dst.to_be();
    }
    m.msg_controllen = space;
}
