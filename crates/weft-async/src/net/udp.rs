//! `UdpSocket`: datagrams over weft's network (each may be dropped, duplicated or delayed).

use super::{node_addr, node_of, NetState, ToSocketAddr, UdpSlot, Wire};
use crate::rt::{try_with_state, with_state};
use std::io;
use std::net::SocketAddr;
use std::task::Poll;

/// A bound datagram socket, like `tokio::net::UdpSocket`.
#[derive(Debug)]
pub struct UdpSocket {
    port: u16,
    local: SocketAddr,
}

pub(super) fn bind_port(net: &mut NetState, port: u16) -> io::Result<u16> {
    let port = if port == 0 { net.ephemeral() } else { port };
    if net.udp.contains_key(&port) {
        return Err(io::Error::new(io::ErrorKind::AddrInUse, format!("udp port {port} in use")));
    }
    net.udp.insert(port, UdpSlot::default());
    Ok(port)
}

impl UdpSocket {
    /// Binds `addr` (port 0: an ephemeral port). The address's IP must be this node's.
    pub async fn bind(addr: impl ToSocketAddr) -> io::Result<UdpSocket> {
        let addr = addr.to_socket_addr()?;
        with_state(|s| {
            let me = s.id;
            if node_of(addr, me, s.nodes)? != me {
                return Err(io::Error::new(
                    io::ErrorKind::AddrNotAvailable,
                    format!("{addr} is not an address of node {me}"),
                ));
            }
            let port = bind_port(&mut s.net, addr.port())?;
            Ok(UdpSocket { port, local: node_addr(me, port) })
        })
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.local)
    }

    /// Sends one datagram; it completes at once (the network may still lose it).
    pub async fn send_to(&self, buf: &[u8], target: impl ToSocketAddr) -> io::Result<usize> {
        let target = target.to_socket_addr()?;
        with_state(|s| {
            let to = node_of(target, s.id, s.nodes)?;
            let msg = Wire::Udp { src: self.port, dst: target.port(), data: buf.to_vec() };
            s.send(to, msg);
            Ok(buf.len())
        })
    }

    /// Receives one datagram (truncated to `buf`, as a real socket does) and its sender.
    pub async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        let port = self.port;
        std::future::poll_fn(|cx| {
            with_state(|s| {
                let slot = s.net.udp.get_mut(&port).expect("socket is bound");
                match slot.queue.pop_front() {
                    Some((from, data)) => {
                        let n = data.len().min(buf.len());
                        buf[..n].copy_from_slice(&data[..n]);
                        Poll::Ready(Ok((n, from)))
                    }
                    None => {
                        slot.waker = Some(cx.waker().clone());
                        Poll::Pending
                    }
                }
            })
        })
        .await
    }
}

impl Drop for UdpSocket {
    fn drop(&mut self) {
        let port = self.port;
        try_with_state(|s| {
            s.net.udp.remove(&port);
        });
    }
}
