//! Simulated networking with the API shape of `tokio::net`: [`TcpListener`], [`TcpStream`]
//! (and its owned halves) and [`UdpSocket`], carried as kernel messages ([`Wire`]) so every
//! datagram and segment meets weft's network model: latency, drop, duplicate, delay,
//! partitions. Datagrams are delivered as the network decides. A stream numbers its segments,
//! acknowledges them cumulatively and retransmits after a timeout; after
//! [`STREAM_RETRIES`] timeouts without progress (a partition, a crashed peer that never
//! answers) it fails with `TimedOut`, and a segment reaching a restarted or closed peer is
//! answered with a reset (`ConnectionReset`). Node `n` has the address `10.0.0.{n+1}`
//! ([`node_ip`]); `127.0.0.1`, `0.0.0.0` and `localhost` are the node itself.

mod tcp;
mod udp;

pub use tcp::{OwnedReadHalf, OwnedWriteHalf, TcpListener, TcpStream};
pub use udp::UdpSocket;

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::task::Waker;
use weft_sim::NodeId;

/// Stream retransmission timeout.
pub const STREAM_RTO: weft_core::SimDuration = weft_core::SimDuration::from_millis(50);
/// Timeouts without progress before a stream fails with `TimedOut`.
pub const STREAM_RETRIES: u32 = 6;

/// The address of node `n`: `10.0.0.{n+1}`.
pub fn node_ip(n: NodeId) -> IpAddr {
    assert!(n < 254, "weft-async addresses nodes 0..254");
    IpAddr::V4(Ipv4Addr::new(10, 0, 0, n as u8 + 1))
}

pub fn node_addr(n: NodeId, port: u16) -> SocketAddr {
    SocketAddr::new(node_ip(n), port)
}

/// What `bind`, `connect` and `send_to` accept, like tokio's `ToSocketAddrs`: a `SocketAddr`,
/// `"10.0.0.2:7000"`, `"node2:7000"`, `"localhost:7000"`, or `(ip, port)`.
pub trait ToSocketAddr {
    fn to_socket_addr(&self) -> io::Result<SocketAddr>;
}

impl ToSocketAddr for SocketAddr {
    fn to_socket_addr(&self) -> io::Result<SocketAddr> {
        Ok(*self)
    }
}

impl ToSocketAddr for str {
    fn to_socket_addr(&self) -> io::Result<SocketAddr> {
        if let Ok(a) = self.parse() {
            return Ok(a);
        }
        let bad = || io::Error::new(io::ErrorKind::InvalidInput, format!("bad address {self:?}"));
        let (host, port) = self.rsplit_once(':').ok_or_else(bad)?;
        let port: u16 = port.parse().map_err(|_| bad())?;
        let ip = match host {
            "localhost" => IpAddr::V4(Ipv4Addr::LOCALHOST),
            h => {
                let n = h.strip_prefix("node").and_then(|n| n.parse::<NodeId>().ok());
                node_ip(n.filter(|&n| n < 254).ok_or_else(bad)?)
            }
        };
        Ok(SocketAddr::new(ip, port))
    }
}

impl ToSocketAddr for String {
    fn to_socket_addr(&self) -> io::Result<SocketAddr> {
        self.as_str().to_socket_addr()
    }
}

impl<T: ToSocketAddr + ?Sized> ToSocketAddr for &T {
    fn to_socket_addr(&self) -> io::Result<SocketAddr> {
        (**self).to_socket_addr()
    }
}

impl ToSocketAddr for (IpAddr, u16) {
    fn to_socket_addr(&self) -> io::Result<SocketAddr> {
        Ok(SocketAddr::new(self.0, self.1))
    }
}

impl ToSocketAddr for (Ipv4Addr, u16) {
    fn to_socket_addr(&self) -> io::Result<SocketAddr> {
        Ok(SocketAddr::new(IpAddr::V4(self.0), self.1))
    }
}

/// The node an address names, from node `me` in a world of `nodes`.
pub(crate) fn node_of(addr: SocketAddr, me: NodeId, nodes: usize) -> io::Result<NodeId> {
    let ip = addr.ip();
    if ip.is_loopback() || ip.is_unspecified() {
        return Ok(me);
    }
    if let IpAddr::V4(v4) = ip {
        let [a, b, c, d] = v4.octets();
        if (a, b, c) == (10, 0, 0) && d >= 1 && ((d - 1) as usize) < nodes {
            return Ok((d - 1) as NodeId);
        }
    }
    Err(io::Error::new(io::ErrorKind::HostUnreachable, format!("no node has address {ip}")))
}

/// A kernel message between two weft-async nodes.
#[derive(Clone, Hash)]
pub enum Wire {
    Udp {
        src: u16,
        dst: u16,
        data: Vec<u8>,
    },
    /// Open a stream: the opener's incarnation and connection id, and the listening port.
    Syn {
        boot: u64,
        cid: u64,
        src: u16,
        dst: u16,
    },
    /// Accepted: addressed to the opener's connection, naming the acceptor's.
    SynAck {
        boot: u64,
        cid: u64,
        peer_boot: u64,
        peer_cid: u64,
    },
    /// Data (or the end of the stream, `fin`) for connection `cid` of incarnation `boot`, from
    /// the sender's connection `src_cid` of its incarnation `src_boot`.
    Seg {
        boot: u64,
        cid: u64,
        src_boot: u64,
        src_cid: u64,
        seq: u64,
        data: Vec<u8>,
        fin: bool,
    },
    /// Every segment below `upto` arrived.
    Ack {
        boot: u64,
        cid: u64,
        upto: u64,
    },
    /// The connection is gone; `refused`: nothing listens on the port.
    Rst {
        boot: u64,
        cid: u64,
        refused: bool,
    },
}

impl fmt::Debug for Wire {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Wire::Udp { src, dst, data } => write!(f, "udp :{src}->:{dst} {}B", data.len()),
            Wire::Syn { cid, dst, .. } => write!(f, "syn c{cid} :{dst}"),
            Wire::SynAck { cid, peer_cid, .. } => write!(f, "syn-ack c{cid} (c{peer_cid})"),
            Wire::Seg { cid, seq, data, fin, .. } => {
                write!(f, "seg c{cid}#{seq} {}B{}", data.len(), if *fin { " fin" } else { "" })
            }
            Wire::Ack { cid, upto, .. } => write!(f, "ack c{cid} <{upto}"),
            Wire::Rst { cid, refused, .. } => {
                write!(f, "rst c{cid}{}", if *refused { " refused" } else { "" })
            }
        }
    }
}

#[derive(Default)]
pub(crate) struct UdpSlot {
    queue: VecDeque<(SocketAddr, Vec<u8>)>,
    waker: Option<Waker>,
}

#[derive(Default)]
pub(crate) struct NetState {
    udp: BTreeMap<u16, UdpSlot>,
    listeners: BTreeMap<u16, tcp::Listen>,
    conns: BTreeMap<u64, tcp::Conn>,
    /// Streams accepted, by the opener's (node, incarnation, connection): a duplicated `Syn`
    /// is answered again, not accepted twice.
    accepted: BTreeMap<(NodeId, u64, u64), u64>,
    next_cid: u64,
    next_port: u16,
}

impl NetState {
    fn ephemeral(&mut self) -> u16 {
        loop {
            self.next_port = if self.next_port < 49152 || self.next_port == u16::MAX {
                49152
            } else {
                self.next_port + 1
            };
            let p = self.next_port;
            if !self.udp.contains_key(&p) && !self.listeners.contains_key(&p) {
                return p;
            }
        }
    }
}

impl crate::rt::State {
    /// A message from node `from` arrived.
    pub(crate) fn on_wire(&mut self, from: NodeId, msg: Wire) {
        match msg {
            Wire::Udp { src, dst, data } => {
                if let Some(slot) = self.net.udp.get_mut(&dst) {
                    slot.queue.push_back((node_addr(from, src), data));
                    if let Some(w) = slot.waker.take() {
                        w.wake();
                    }
                }
            }
            other => self.on_stream(from, other),
        }
    }
}
