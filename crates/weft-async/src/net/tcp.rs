//! Streams: `TcpListener` and `TcpStream` over weft's lossy network. Each `write` is one
//! numbered segment, buffered until acknowledged and retransmitted every [`STREAM_RTO`]; the
//! receiver delivers segments in order once, buffering those that arrive early. Writes never
//! block (the send buffer is unbounded: no flow control). A peer that restarted, or a
//! connection that is gone, answers with a reset.

use super::{node_addr, node_of, NetState, ToSocketAddr, Wire, STREAM_RETRIES, STREAM_RTO};
use crate::rt::{try_with_state, with_state, State, TimerSlot};
use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::net::SocketAddr;
use std::rc::Rc;
use std::task::{Poll, Waker};
use weft_sim::NodeId;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Phase {
    Opening,
    Open,
    Failed(io::ErrorKind),
}

pub(crate) struct Conn {
    peer: NodeId,
    peer_port: u16,
    local_port: u16,
    /// The peer's (incarnation, connection id), once known.
    remote: Option<(u64, u64)>,
    phase: Phase,
    rx: VecDeque<u8>,
    rx_next: u64,
    rx_early: BTreeMap<u64, (Vec<u8>, bool)>,
    rx_eof: bool,
    tx_next: u64,
    unacked: BTreeMap<u64, (Vec<u8>, bool)>,
    fin_sent: bool,
    retries: u32,
    rto: Option<u64>,
    /// No handle is left: the connection lingers only to deliver what is unacknowledged.
    orphan: bool,
    waiters: Vec<Waker>,
}

impl Conn {
    fn new(peer: NodeId, peer_port: u16, local_port: u16, phase: Phase) -> Conn {
        Conn {
            peer,
            peer_port,
            local_port,
            remote: None,
            phase,
            rx: VecDeque::new(),
            rx_next: 0,
            rx_early: BTreeMap::new(),
            rx_eof: false,
            tx_next: 0,
            unacked: BTreeMap::new(),
            fin_sent: false,
            retries: 0,
            rto: None,
            orphan: false,
            waiters: Vec::new(),
        }
    }

    fn wake(&mut self) {
        for w in self.waiters.drain(..) {
            w.wake();
        }
    }

    fn fail(&mut self, kind: io::ErrorKind) {
        if !matches!(self.phase, Phase::Failed(_)) {
            self.phase = Phase::Failed(kind);
        }
        self.unacked.clear();
        self.wake();
    }
}

/// A segment's payload and whether it ends the stream.
type Seg = (Vec<u8>, bool);

pub(crate) struct Listen {
    backlog: VecDeque<u64>,
    waker: Option<Waker>,
}

impl State {
    fn arm_rto(&mut self, cid: u64) {
        if self.net.conns.get(&cid).is_some_and(|c| c.rto.is_none()) {
            let key = self.set_timer(STREAM_RTO, TimerSlot::Rto(cid));
            self.net.conns.get_mut(&cid).expect("conn").rto = Some(key);
        }
    }

    fn disarm_rto(&mut self, cid: u64) {
        if let Some(key) = self.net.conns.get_mut(&cid).and_then(|c| c.rto.take()) {
            self.cancel_timer(key);
        }
    }

    fn reset(&mut self, to: NodeId, boot: u64, cid: u64, refused: bool) {
        self.send(to, Wire::Rst { boot, cid, refused });
    }

    /// The retransmission timer of `cid` fired.
    pub(crate) fn on_rto(&mut self, cid: u64) {
        let boot = self.boot;
        let Some(c) = self.net.conns.get_mut(&cid) else { return };
        c.rto = None;
        c.retries += 1;
        if c.retries > STREAM_RETRIES {
            let (peer, remote) = (c.peer, c.remote);
            c.fail(io::ErrorKind::TimedOut);
            if let Some((b, rc)) = remote {
                self.reset(peer, b, rc, false);
            }
            self.forget_if_done(cid);
            return;
        }
        let peer = c.peer;
        let msgs: Vec<Wire> = match (c.phase, c.remote) {
            (Phase::Opening, _) => {
                vec![Wire::Syn { boot, cid, src: c.local_port, dst: c.peer_port }]
            }
            (Phase::Open, Some((b, rc))) => c
                .unacked
                .iter()
                .map(|(&seq, (data, fin))| Wire::Seg {
                    boot: b,
                    cid: rc,
                    src_boot: boot,
                    src_cid: cid,
                    seq,
                    data: data.clone(),
                    fin: *fin,
                })
                .collect(),
            _ => Vec::new(),
        };
        let again = !msgs.is_empty();
        for m in msgs {
            self.send(peer, m);
        }
        if again {
            self.arm_rto(cid);
        }
    }

    pub(crate) fn on_stream(&mut self, from: NodeId, msg: Wire) {
        match msg {
            Wire::Syn { boot, cid, src, dst } => self.on_syn(from, boot, cid, src, dst),
            Wire::SynAck { boot, cid, peer_boot, peer_cid } => {
                let me = self.boot;
                match self.net.conns.get_mut(&cid) {
                    Some(c) if boot == me && c.phase == Phase::Opening && c.peer == from => {
                        c.remote = Some((peer_boot, peer_cid));
                        c.phase = Phase::Open;
                        c.retries = 0;
                        c.wake();
                        self.disarm_rto(cid);
                    }
                    Some(c) if boot == me && c.remote == Some((peer_boot, peer_cid)) => {}
                    _ => self.reset(from, peer_boot, peer_cid, false),
                }
            }
            Wire::Seg { boot, cid, src_boot, src_cid, seq, data, fin } => {
                self.on_seg(from, (boot, cid), (src_boot, src_cid), seq, (data, fin))
            }
            Wire::Ack { boot, cid, upto } => {
                if boot != self.boot {
                    return;
                }
                let Some(c) = self.net.conns.get_mut(&cid) else { return };
                let before = c.unacked.len();
                c.unacked.retain(|&seq, _| seq >= upto);
                if c.unacked.len() < before {
                    c.retries = 0;
                }
                if c.unacked.is_empty() {
                    self.disarm_rto(cid);
                    self.forget_if_done(cid);
                }
            }
            Wire::Rst { boot, cid, refused } => {
                if boot != self.boot {
                    return;
                }
                if let Some(c) = self.net.conns.get_mut(&cid) {
                    let opening = c.phase == Phase::Opening;
                    c.fail(if refused && opening {
                        io::ErrorKind::ConnectionRefused
                    } else {
                        io::ErrorKind::ConnectionReset
                    });
                    self.disarm_rto(cid);
                    self.forget_if_done(cid);
                }
            }
            Wire::Udp { .. } => unreachable!("datagrams are handled by on_wire"),
        }
    }

    fn on_syn(&mut self, from: NodeId, boot: u64, cid: u64, src: u16, dst: u16) {
        let me = self.boot;
        if let Some(&mine) = self.net.accepted.get(&(from, boot, cid)) {
            if self.net.conns.contains_key(&mine) {
                self.send(from, Wire::SynAck { boot, cid, peer_boot: me, peer_cid: mine });
            }
            return;
        }
        let Some(listen) = self.net.listeners.get_mut(&dst) else {
            self.reset(from, boot, cid, true);
            return;
        };
        self.net.next_cid += 1;
        let mine = self.net.next_cid;
        listen.backlog.push_back(mine);
        if let Some(w) = listen.waker.take() {
            w.wake();
        }
        let mut c = Conn::new(from, src, dst, Phase::Open);
        c.remote = Some((boot, cid));
        self.net.conns.insert(mine, c);
        self.net.accepted.insert((from, boot, cid), mine);
        self.send(from, Wire::SynAck { boot, cid, peer_boot: me, peer_cid: mine });
    }

    fn on_seg(&mut self, from: NodeId, to: (u64, u64), src: (u64, u64), seq: u64, seg: Seg) {
        let (boot, cid) = to;
        let (data, fin) = seg;
        let me = self.boot;
        let c = match self.net.conns.get_mut(&cid) {
            Some(c) if boot == me && c.peer == from && c.phase == Phase::Open => c,
            Some(c) if boot == me && c.peer == from => return, // failed: the reset was sent
            _ => {
                // Unknown here: this node restarted, or the stream is gone.
                self.reset(from, src.0, src.1, false);
                return;
            }
        };
        if seq >= c.rx_next {
            c.rx_early.insert(seq, (data, fin));
        }
        while let Some((data, fin)) = c.rx_early.remove(&c.rx_next) {
            c.rx.extend(data);
            c.rx_eof |= fin;
            c.rx_next += 1;
        }
        c.wake();
        let (upto, remote) = (c.rx_next, c.remote);
        if let Some((b, rc)) = remote {
            self.send(from, Wire::Ack { boot: b, cid: rc, upto });
        }
    }

    /// Drops a connection with no handle and nothing left to deliver.
    fn forget_if_done(&mut self, cid: u64) {
        let done = self.net.conns.get(&cid).is_some_and(|c| {
            c.orphan && (c.unacked.is_empty() || matches!(c.phase, Phase::Failed(_)))
        });
        if done {
            self.disarm_rto(cid);
            self.net.conns.remove(&cid);
        }
    }

    fn write_seg(&mut self, cid: u64, data: Vec<u8>, fin: bool) -> io::Result<()> {
        let c = self.net.conns.get_mut(&cid).expect("conn");
        match c.phase {
            Phase::Failed(kind) => return Err(io::Error::from(kind)),
            Phase::Opening => unreachable!("a stream is open before it is written"),
            Phase::Open => {}
        }
        if c.fin_sent {
            return Err(io::Error::new(io::ErrorKind::BrokenPipe, "stream was shut down"));
        }
        c.fin_sent = fin;
        let seq = c.tx_next;
        c.tx_next += 1;
        c.unacked.insert(seq, (data.clone(), fin));
        let (peer, (b, rc)) = (c.peer, c.remote.expect("open"));
        let (src_boot, src_cid) = (self.boot, cid);
        self.send(peer, Wire::Seg { boot: b, cid: rc, src_boot, src_cid, seq, data, fin });
        self.arm_rto(cid);
        Ok(())
    }
}

/// The shared core of a stream and its halves: dropping the last one closes the stream.
struct Handle {
    cid: u64,
    local: SocketAddr,
    peer: SocketAddr,
}

impl Handle {
    fn shutdown(&self) {
        let cid = self.cid;
        try_with_state(|s| {
            let open = s.net.conns.get(&cid).is_some_and(|c| c.phase == Phase::Open);
            if open && !s.net.conns[&cid].fin_sent {
                let _ = s.write_seg(cid, Vec::new(), true);
            }
        });
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.shutdown();
        let cid = self.cid;
        try_with_state(|s| {
            if let Some(c) = s.net.conns.get_mut(&cid) {
                c.orphan = true;
                if c.phase == Phase::Opening {
                    c.fail(io::ErrorKind::ConnectionAborted);
                }
            }
            s.forget_if_done(cid);
        });
    }
}

async fn read(cid: u64, buf: &mut [u8]) -> io::Result<usize> {
    std::future::poll_fn(|cx| {
        with_state(|s| {
            let c = s.net.conns.get_mut(&cid).expect("conn");
            if buf.is_empty() {
                return Poll::Ready(Ok(0));
            }
            if !c.rx.is_empty() {
                let n = buf.len().min(c.rx.len());
                for (slot, b) in buf.iter_mut().zip(c.rx.drain(..n)) {
                    *slot = b;
                }
                return Poll::Ready(Ok(n));
            }
            match c.phase {
                _ if c.rx_eof => Poll::Ready(Ok(0)),
                Phase::Failed(kind) => Poll::Ready(Err(io::Error::from(kind))),
                _ => {
                    c.waiters.push(cx.waker().clone());
                    Poll::Pending
                }
            }
        })
    })
    .await
}

fn write(cid: u64, buf: &[u8]) -> io::Result<usize> {
    if buf.is_empty() {
        return Ok(0);
    }
    with_state(|s| s.write_seg(cid, buf.to_vec(), false))?;
    Ok(buf.len())
}

/// A stream, like `tokio::net::TcpStream`; read and write it through
/// [`crate::io::AsyncReadExt`] / [`crate::io::AsyncWriteExt`].
pub struct TcpStream {
    h: Rc<Handle>,
}

impl std::fmt::Debug for TcpStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TcpStream({} -> {})", self.h.local, self.h.peer)
    }
}

impl TcpStream {
    /// Opens a stream to `addr`: `ConnectionRefused` if nothing listens there, `TimedOut` if
    /// the peer cannot be reached within the retransmission budget.
    pub async fn connect(addr: impl ToSocketAddr) -> io::Result<TcpStream> {
        let addr = addr.to_socket_addr()?;
        let h = with_state(|s| -> io::Result<Handle> {
            let to = node_of(addr, s.id, s.nodes)?;
            let port = s.net.ephemeral();
            s.net.next_cid += 1;
            let cid = s.net.next_cid;
            let conn = Conn::new(to, addr.port(), port, Phase::Opening);
            s.net.conns.insert(cid, conn);
            s.send(to, Wire::Syn { boot: s.boot, cid, src: port, dst: addr.port() });
            s.arm_rto(cid);
            Ok(Handle { cid, local: node_addr(s.id, port), peer: addr })
        })?;
        let cid = h.cid;
        std::future::poll_fn(|cx| {
            with_state(|s| {
                let c = s.net.conns.get_mut(&cid).expect("conn");
                match c.phase {
                    Phase::Open => Poll::Ready(Ok(())),
                    Phase::Failed(kind) => Poll::Ready(Err(io::Error::from(kind))),
                    Phase::Opening => {
                        c.waiters.push(cx.waker().clone());
                        Poll::Pending
                    }
                }
            })
        })
        .await?;
        Ok(TcpStream { h: Rc::new(h) })
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.h.local)
    }
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.h.peer)
    }
    /// Accepted for compatibility; segments are never coalesced anyway.
    pub fn set_nodelay(&self, _nodelay: bool) -> io::Result<()> {
        Ok(())
    }

    pub fn into_split(self) -> (OwnedReadHalf, OwnedWriteHalf) {
        (OwnedReadHalf { h: self.h.clone() }, OwnedWriteHalf { h: self.h })
    }

    pub(crate) async fn read_some(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        read(self.h.cid, buf).await
    }
    pub(crate) fn write_some(&mut self, buf: &[u8]) -> io::Result<usize> {
        write(self.h.cid, buf)
    }
    pub(crate) fn shutdown_write(&mut self) {
        self.h.shutdown()
    }
}

/// The reading half of a [`TcpStream`].
pub struct OwnedReadHalf {
    h: Rc<Handle>,
}

/// The writing half of a [`TcpStream`]; dropping it shuts the stream down for writing.
pub struct OwnedWriteHalf {
    h: Rc<Handle>,
}

impl OwnedReadHalf {
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.h.peer)
    }
    pub(crate) async fn read_some(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        read(self.h.cid, buf).await
    }
}

impl OwnedWriteHalf {
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.h.peer)
    }
    pub(crate) fn write_some(&mut self, buf: &[u8]) -> io::Result<usize> {
        write(self.h.cid, buf)
    }
    pub(crate) fn shutdown_write(&mut self) {
        self.h.shutdown()
    }
}

impl Drop for OwnedWriteHalf {
    fn drop(&mut self) {
        self.h.shutdown();
    }
}

/// Accepts streams, like `tokio::net::TcpListener`.
pub struct TcpListener {
    port: u16,
    local: SocketAddr,
}

impl TcpListener {
    pub async fn bind(addr: impl ToSocketAddr) -> io::Result<TcpListener> {
        let addr = addr.to_socket_addr()?;
        with_state(|s| {
            let me = s.id;
            if node_of(addr, me, s.nodes)? != me {
                return Err(io::Error::new(
                    io::ErrorKind::AddrNotAvailable,
                    format!("{addr} is not an address of node {me}"),
                ));
            }
            let net: &mut NetState = &mut s.net;
            let port = if addr.port() == 0 { net.ephemeral() } else { addr.port() };
            if net.listeners.contains_key(&port) {
                let e = format!("tcp port {port} in use");
                return Err(io::Error::new(io::ErrorKind::AddrInUse, e));
            }
            net.listeners.insert(port, Listen { backlog: VecDeque::new(), waker: None });
            Ok(TcpListener { port, local: node_addr(me, port) })
        })
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.local)
    }

    pub async fn accept(&self) -> io::Result<(TcpStream, SocketAddr)> {
        let port = self.port;
        std::future::poll_fn(|cx| {
            with_state(|s| {
                let me = s.id;
                let l = s.net.listeners.get_mut(&port).expect("listening");
                match l.backlog.pop_front() {
                    Some(cid) => {
                        let c = &s.net.conns[&cid];
                        let peer = node_addr(c.peer, c.peer_port);
                        let local = node_addr(me, c.local_port);
                        let h = Handle { cid, local, peer };
                        Poll::Ready(Ok((TcpStream { h: Rc::new(h) }, peer)))
                    }
                    None => {
                        l.waker = Some(cx.waker().clone());
                        Poll::Pending
                    }
                }
            })
        })
        .await
    }
}

impl Drop for TcpListener {
    fn drop(&mut self) {
        let port = self.port;
        try_with_state(|s| {
            if let Some(l) = s.net.listeners.remove(&port) {
                for cid in l.backlog {
                    if let Some(c) = s.net.conns.get_mut(&cid) {
                        c.orphan = true;
                    }
                    s.forget_if_done(cid);
                }
            }
        });
    }
}
