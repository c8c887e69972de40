//! TCP-like streams between simulated processes: ordered, reliable while connected, reset when
//! a segment meets a cut link or an end's node crashes. Flow control without congestion
//! control: at most [`STREAM_WINDOW`] bytes sent one way may be unread (in flight, or waiting in
//! the receiver's buffer); a `send` takes what fits (a partial write), answers `EAGAIN` when
//! nothing does (the shim then waits for `POLLOUT` on a blocking socket), and a stream is
//! writable (`POLLOUT`) only while something fits. Bytes arrive after the link's latency, never
//! before bytes sent earlier in the same direction; the window opens as the receiver reads (at
//! once: the window update is not a segment of its own).
//!
//! A connection has two ends, 0 (the connecting side) and 1 (the accepting side). Segments
//! (SYN, SYN-ACK, refusal, data, FIN, RST) travel through weft-sim's network model like
//! datagrams, with message faults off: a stream hides loss by retransmitting, which here is
//! simply not losing. A connected stream whose segment meets a cut link is reset. A lost
//! handshake segment (SYN, SYN-ACK or refusal) is sent again, as Linux's SYN retransmission
//! timer does: after 1 s, then 2, 4, … 64 s, and the connect fails with `ETIMEDOUT` when the
//! seventh try is lost too (127 s, Linux's default `tcp_syn_retries` of 6), so a connect made
//! during a partition succeeds once it heals.

use super::fds::ObjId;
use super::{format_ip, Wait, World};
use crate::proto::{Slot, LOCALHOST, LOOPBACK6, SPACE_V4, SPACE_V6};
use std::collections::VecDeque;
use std::hash::Hasher;
use weft_core::{EventKind, SimTime, StableHasher};
use weft_sim::net::Fate;

/// A stream socket's state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Stream {
    Fresh,
    Listening {
        backlog: VecDeque<u64>,
    },
    Connecting(u64),
    Connected(u64),
    /// A connect that failed (errno).
    Failed(i32),
}

/// How many bytes sent one way may be unread at once: about what Linux lets a sender queue on
/// a default socket before it blocks (a send buffer plus the peer's receive window).
pub(super) const STREAM_WINDOW: usize = 256 * 1024;

impl Conn {
    /// An end's address as the sockets see it: `::1` or `127.0.0.1` for a connection the node
    /// made to its own loopback, the node's address otherwise.
    fn shown(&self, (ip, port): (u32, u16)) -> (u32, u16) {
        match self.named {
            _ if self.v6 => (LOOPBACK6, port),
            LOCALHOST => (LOCALHOST, port),
            _ => (ip, port),
        }
    }

    /// How many more bytes end `end` may send before its window is full.
    fn room(&self, end: usize) -> usize {
        STREAM_WINDOW.saturating_sub(self.unread[1 - end])
    }
}

/// A socket as `/proc/net` lists it: (local, remote, Linux's `TCP_*` state).
pub(super) type SockRow = ((u32, u16), (u32, u16), u8);

pub(super) struct Conn {
    /// The socket of each end while it has one.
    ends: [Option<ObjId>; 2],
    /// `(ip, port)` of each end: the node's IPv4 address.
    addrs: [(u32, u16); 2],
    /// Made to `::1`: each end sees the other as `::1` (IPv6 traffic on the node).
    v6: bool,
    /// The address the connecting end named (`127.0.0.1`, `::1` or a node's), which picks
    /// the listener: one bound to it, else one bound to any address.
    named: u32,
    /// Bytes each end can read.
    inbox: [VecDeque<u8>; 2],
    /// Bytes sent towards each end and not yet read there (or dropped): the closed window.
    unread: [usize; 2],
    /// Each end has received its peer's FIN.
    eof: [bool; 2],
    /// Each end has shut down writing.
    shut: [bool; 2],
    reset: bool,
    /// Latest arrival scheduled towards each end (segments never overtake).
    last: [SimTime; 2],
    /// Handshake segments lost so far (each one is sent again after a longer wait).
    lost: u8,
}

/// Handshake segments lost before a connect fails with `ETIMEDOUT` (Linux's `tcp_syn_retries`
/// of 6, plus the first try).
const HANDSHAKE_TRIES: u8 = 7;

#[derive(Clone, Debug)]
pub(super) enum Seg {
    Syn,
    SynAck,
    Refused,
    Data(Vec<u8>),
    Fin,
    Rst,
    /// The retransmission timer of a lost handshake segment (at the end that sent it): send
    /// this one again.
    Again(Box<Seg>),
}

pub(super) struct Segment {
    conn: u64,
    /// The end it travels to.
    to: usize,
    seg: Seg,
}

fn hash(bytes: &[u8]) -> u64 {
    let mut h = StableHasher::new();
    h.write(bytes);
    h.finish()
}

impl World<'_> {
    fn conn_node(&self, conn: u64, end: usize) -> u32 {
        self.cfg.node_index(self.conns[&conn].addrs[end].0)
    }

    /// Sends `seg` towards end `to` of `conn`; a cut link resets the connection instead.
    fn send_seg(&mut self, conn: u64, to: usize, seg: Seg) {
        let from_node = self.conn_node(conn, 1 - to);
        let to_node = self.conn_node(conn, to);
        let fate = self.net.route(
            (from_node, to_node),
            self.now,
            self.scenario,
            false,
            &mut self.counts,
            self.decisions,
        );
        let at = match fate {
            Fate::Deliver(at) | Fate::Duplicate(at, _) => at,
            Fate::Cut | Fate::Drop => {
                match seg {
                    Seg::Rst => {}
                    Seg::Syn | Seg::SynAck | Seg::Refused => self.handshake_lost(conn, to, seg),
                    _ => self.reset_conn(conn, "link cut"),
                }
                return;
            }
        };
        let c = self.conns.get_mut(&conn).expect("live connection");
        let at = at.max(c.last[to]);
        c.last[to] = at;
        self.seq += 1;
        self.segments.insert((at, self.seq), Segment { conn, to, seg });
    }

    /// Handshake segment `seg` towards end `to` met a cut link: its sender tries again later,
    /// or, after [`HANDSHAKE_TRIES`], the connect fails with `ETIMEDOUT`.
    fn handshake_lost(&mut self, conn: u64, to: usize, seg: Seg) {
        let Some(c) = self.conns.get_mut(&conn) else { return };
        c.lost += 1;
        let lost = c.lost;
        let from = 1 - to;
        let node = self.conn_node(conn, from);
        if lost >= HANDSHAKE_TRIES {
            self.fail_connect(conn, libc::ETIMEDOUT);
            self.reset_conn(conn, "connect timed out");
            return;
        }
        let wait = weft_core::SimDuration::from_secs(1 << (lost - 1));
        self.event(node, EventKind::Note, Some(self.conn_node(conn, to)), Some(conn), 4, || {
            format!("stream {conn} {} lost (link cut), again in {wait}", seg_name(&seg))
        });
        // A lost refusal is answered again when the connecting end sends its SYN again.
        let (from, seg) = if matches!(seg, Seg::Refused) { (0, Seg::Syn) } else { (from, seg) };
        self.seq += 1;
        let again = Segment { conn, to: from, seg: Seg::Again(Box::new(seg)) };
        self.segments.insert((self.now + wait, self.seq), again);
    }

    /// The connecting end of `conn`, if it is still connecting, fails with `errno`.
    fn fail_connect(&mut self, conn: u64, errno: i32) {
        let Some(id) = self.conns.get(&conn).and_then(|c| c.ends[0]) else { return };
        if let Some(s) = self.fds.by_id_mut(id) {
            if s.stream == Some(Stream::Connecting(conn)) {
                s.err = errno;
                s.stream = Some(Stream::Failed(errno));
            }
        }
    }

    /// Both ends see the connection reset (now, and on their next call).
    pub(super) fn reset_conn(&mut self, conn: u64, why: &str) {
        let cfg = self.cfg;
        let Some(c) = self.conns.get_mut(&conn) else { return };
        if c.reset {
            return;
        }
        c.reset = true;
        let (node, peer) = (cfg.node_index(c.addrs[0].0), cfg.node_index(c.addrs[1].0));
        let why = why.to_string();
        self.event(node, EventKind::Note, Some(peer), Some(conn), 2, || {
            format!("stream {conn} reset ({why})")
        });
    }

    /// Resets every live connection with an end on `node` (its process is gone, or about to
    /// be): its ends there vanish and the other ends get a RST after the link's latency. A
    /// connection already reset, or with an end its process closed, has nobody left to tell
    /// (`conns` keeps closed connections, so without this a crash would reset the node's whole
    /// history). One accepted by nobody yet (`ends` empty but not shut) still gets its RST.
    pub(super) fn reset_node_streams(&mut self, node: u32) {
        let ids: Vec<u64> = self.conns.keys().copied().collect();
        for id in ids {
            for end in 0..2 {
                if self.conn_node(id, end) != node {
                    continue;
                }
                let Some(c) = self.conns.get_mut(&id) else { continue };
                let closed = |e: usize| c.ends[e].is_none() && c.shut[e];
                let live = !c.reset && !closed(end) && !closed(1 - end);
                c.ends[end] = None;
                if live && self.conn_node(id, 1 - end) != node {
                    self.send_seg(id, 1 - end, Seg::Rst);
                }
            }
        }
    }

    /// connect() on a stream socket: Some(answer), or None when the caller blocks.
    pub(super) fn stream_connect(
        &mut self,
        node: u32,
        fd: i32,
        ip: u32,
        port: u16,
        nonblock: bool,
    ) -> Option<i64> {
        match self.fds.sock(node, fd).and_then(|s| s.stream.clone()) {
            Some(Stream::Fresh) => {}
            Some(Stream::Connecting(_)) => return Some(-(libc::EALREADY as i64)),
            Some(Stream::Connected(_)) => return Some(-(libc::EISCONN as i64)),
            _ => return Some(-(libc::EINVAL as i64)),
        }
        let Some(to) = self.node_of(node, ip) else {
            return Some(-(libc::ENETUNREACH as i64));
        };
        self.autobind(node, fd);
        let port_here = self.fds.open_sock(node, fd).port;
        self.seq += 1;
        let conn = self.seq;
        self.conns.insert(
            conn,
            Conn {
                ends: [self.fds.id(node, fd), None],
                addrs: [(self.cfg.node_ip(node), port_here), (self.cfg.node_ip(to), port)],
                v6: ip == LOOPBACK6,
                named: ip,
                inbox: [VecDeque::new(), VecDeque::new()],
                unread: [0; 2],
                eof: [false; 2],
                shut: [false; 2],
                reset: false,
                last: [SimTime::ZERO; 2],
                lost: 0,
            },
        );
        if let Some(s) = self.fds.sock_mut(node, fd) {
            s.stream = Some(Stream::Connecting(conn));
        }
        self.event(node, EventKind::Send, Some(to), Some(conn), 0, || {
            let to_ip = self.cfg.node_ip(to);
            let shown = if ip == LOOPBACK6 { "[::1]".to_string() } else { format_ip(to_ip) };
            format!("stream {conn} connect :{port_here} -> {shown}:{port}")
        });
        self.send_seg(conn, 1, Seg::Syn);
        if nonblock {
            Some(-(libc::EINPROGRESS as i64))
        } else {
            None
        }
    }

    /// The answer to a blocked connect, once there is one.
    pub(super) fn connect_result(&mut self, node: u32, fd: i32) -> Option<i64> {
        let sock = self.fds.sock_mut(node, fd)?;
        match sock.stream {
            Some(Stream::Connected(_)) => Some(0),
            Some(Stream::Failed(e)) => {
                sock.stream = Some(Stream::Fresh);
                sock.err = 0;
                Some(-(e as i64))
            }
            Some(Stream::Connecting(_)) => None,
            _ => Some(-(libc::ECONNABORTED as i64)),
        }
    }

    pub(super) fn stream_listen(&mut self, node: u32, fd: i32) -> i64 {
        self.autobind(node, fd);
        match self.fds.sock_mut(node, fd) {
            Some(s) if s.stream == Some(Stream::Fresh) => {
                s.stream = Some(Stream::Listening { backlog: VecDeque::new() });
                0
            }
            Some(s) if matches!(s.stream, Some(Stream::Listening { .. })) => 0,
            Some(_) => -(libc::EINVAL as i64),
            None => -(libc::EBADF as i64),
        }
    }

    /// accept(): binds the oldest pending connection to `newfd` and writes the peer into the
    /// slot. None if nothing is pending.
    pub(super) fn stream_accept(
        &mut self,
        node: u32,
        fd: i32,
        newfd: i32,
        slot: &mut Slot,
    ) -> Option<i64> {
        let conn = match self.fds.sock_mut(node, fd).and_then(|s| s.stream.as_mut()) {
            Some(Stream::Listening { backlog }) => backlog.pop_front()?,
            Some(_) => return Some(-(libc::EINVAL as i64)),
            None => return Some(-(libc::EBADF as i64)),
        };
        let listener = self.fds.open_sock(node, fd);
        let (port, reuse, spaces) = (listener.port, listener.reuse, listener.spaces);
        let id = self.fds.open_socket(
            node,
            newfd,
            super::sockets::Sock {
                port,
                stream: Some(Stream::Connected(conn)),
                reuse,
                spaces,
                ..Default::default()
            },
        );
        let c = self.conns.get_mut(&conn).expect("pending connection");
        c.ends[1] = Some(id);
        let peer = c.addrs[0];
        (slot.addr_ip, slot.addr_port) = c.shown(peer);
        let from = self.cfg.node_index(peer.0);
        self.event(node, EventKind::Note, Some(from), Some(conn), 1, || {
            format!("stream {conn} accepted on fd {newfd}")
        });
        Some(0)
    }

    fn my_conn(&self, node: u32, fd: i32) -> Option<(u64, usize)> {
        match self.fds.sock(node, fd)?.stream {
            Some(Stream::Connected(c)) => {
                let end = usize::from(self.conns[&c].ends[1] == self.fds.id(node, fd));
                Some((c, end))
            }
            _ => None,
        }
    }

    /// send() on a stream. While its connect is in progress Linux waits for the handshake
    /// (`sk_stream_wait_connect`): `EAGAIN` here, so a blocking sender waits for `POLLOUT`
    /// in the shim and a non-blocking one polls (Knot DNS sends its refresh query right after
    /// a non-blocking connect; `ENOTCONN` made it give the connection up).
    pub(super) fn stream_send(&mut self, node: u32, fd: i32, data: &[u8]) -> i64 {
        let Some((conn, end)) = self.my_conn(node, fd) else {
            return match self.fds.sock(node, fd).map(|s| &s.stream) {
                Some(Some(Stream::Connecting(_))) => -(libc::EAGAIN as i64),
                _ => -(libc::ENOTCONN as i64),
            };
        };
        let c = &self.conns[&conn];
        if c.reset {
            return -(libc::ECONNRESET as i64);
        }
        if c.shut[end] {
            return -(libc::EPIPE as i64);
        }
        let space = c.room(end);
        if space == 0 && !data.is_empty() {
            return -(libc::EAGAIN as i64);
        }
        let data = &data[..data.len().min(space)];
        let peer = self.conn_node(conn, 1 - end);
        let len = data.len();
        self.event(node, EventKind::Send, Some(peer), Some(conn), hash(data), || {
            format!("stream {conn}: {len} bytes")
        });
        if let Some(c) = self.conns.get_mut(&conn) {
            c.unread[1 - end] += len;
        }
        self.send_seg(conn, 1 - end, Seg::Data(data.to_vec()));
        len as i64
    }

    /// recv() on a stream: Some(answer) (bytes in the slot, 0 at end of stream, -errno), or
    /// None when nothing is there yet.
    pub(super) fn stream_try_recv(
        &mut self,
        node: u32,
        fd: i32,
        peek: bool,
        cap: usize,
        slot: &mut Slot,
    ) -> Option<i64> {
        let Some((conn, end)) = self.my_conn(node, fd) else {
            return match self.fds.sock(node, fd).map(|s| &s.stream) {
                Some(Some(Stream::Connecting(_))) => None,
                _ => Some(-(libc::ENOTCONN as i64)),
            };
        };
        let c = self.conns.get_mut(&conn).expect("live connection");
        if !c.inbox[end].is_empty() {
            let n = cap.min(c.inbox[end].len()).min(slot.data.len());
            for (i, b) in c.inbox[end].iter().take(n).enumerate() {
                slot.data[i] = *b;
            }
            if !peek {
                c.inbox[end].drain(..n);
                c.unread[end] = c.unread[end].saturating_sub(n);
            }
            slot.len = n as u32;
            slot.addr_ip = c.addrs[1 - end].0;
            slot.addr_port = c.addrs[1 - end].1;
            return Some(n as i64);
        }
        if c.reset {
            return Some(-(libc::ECONNRESET as i64));
        }
        if c.eof[end] || cap == 0 {
            slot.len = 0;
            return Some(0);
        }
        None
    }

    pub(super) fn stream_shutdown(&mut self, node: u32, fd: i32, how: i32) -> i64 {
        let Some((conn, end)) = self.my_conn(node, fd) else {
            return -(libc::ENOTCONN as i64);
        };
        if how != libc::SHUT_RD && !self.conns[&conn].shut[end] {
            if let Some(c) = self.conns.get_mut(&conn) {
                c.shut[end] = true;
            }
            self.send_seg(conn, 1 - end, Seg::Fin);
        }
        0
    }

    /// close() of a stream socket: FIN to a connected peer, RST to connections still waiting
    /// in a listener's backlog.
    pub(super) fn stream_close(&mut self, node: u32, fd: i32) {
        let Some(stream) = self.fds.sock(node, fd).and_then(|s| s.stream.clone()) else {
            return;
        };
        match stream {
            Stream::Connected(conn) | Stream::Connecting(conn) => {
                let end = usize::from(self.conns[&conn].ends[1] == self.fds.id(node, fd));
                if !self.conns[&conn].shut[end] {
                    self.send_seg(conn, 1 - end, Seg::Fin);
                }
                if let Some(c) = self.conns.get_mut(&conn) {
                    c.ends[end] = None;
                    c.shut[end] = true;
                    // What it never read is gone, and no longer holds the sender's window.
                    c.unread[end] = c.unread[end].saturating_sub(c.inbox[end].len());
                    c.inbox[end].clear();
                }
            }
            Stream::Listening { backlog } => {
                for conn in backlog {
                    self.send_seg(conn, 0, Seg::Rst);
                }
            }
            _ => {}
        }
    }

    pub(super) fn stream_peer(&self, node: u32, fd: i32) -> Option<(u32, u16)> {
        let (conn, end) = self.my_conn(node, fd)?;
        let c = &self.conns[&conn];
        Some(c.shown(c.addrs[1 - end]))
    }

    /// Connection `conn` as socket `id`'s end sees it: (local, remote, Linux's `TCP_*` state),
    /// or None once reset (Linux unlists a socket then).
    pub(super) fn conn_view(&self, conn: u64, id: ObjId) -> Option<SockRow> {
        let c = self.conns.get(&conn).filter(|c| !c.reset)?;
        let end = usize::from(c.ends[1] == Some(id));
        let state = match (c.eof[end], c.shut[end]) {
            (false, false) => 1, // ESTABLISHED
            (false, true) => 5,  // FIN_WAIT2
            (true, false) => 8,  // CLOSE_WAIT
            (true, true) => 9,   // LAST_ACK
        };
        Some((c.shown(c.addrs[end]), c.shown(c.addrs[1 - end]), state))
    }

    /// poll() readiness of a stream socket.
    pub(super) fn stream_revents(&self, node: u32, fd: i32, events: i16) -> i16 {
        let Some(sock) = self.fds.sock(node, fd) else { return libc::POLLNVAL };
        let mut re = 0;
        match &sock.stream {
            Some(Stream::Listening { backlog }) => {
                if !backlog.is_empty() {
                    re |= libc::POLLIN;
                }
            }
            Some(Stream::Connected(conn)) => {
                let c = &self.conns[conn];
                let end = usize::from(c.ends[1] == self.fds.id(node, fd));
                if !c.inbox[end].is_empty() || c.eof[end] || c.reset {
                    re |= libc::POLLIN;
                }
                if c.eof[end] {
                    re |= libc::POLLRDHUP;
                }
                if c.room(end) > 0 || c.reset || c.shut[end] {
                    re |= libc::POLLOUT;
                }
                if c.reset {
                    re |= libc::POLLERR | libc::POLLHUP;
                } else if c.eof[end] && c.shut[end] {
                    re |= libc::POLLHUP;
                }
            }
            Some(Stream::Failed(_)) => re |= libc::POLLOUT | libc::POLLERR | libc::POLLHUP,
            Some(Stream::Connecting(_)) | Some(Stream::Fresh) | None => {}
        }
        re & (events | libc::POLLERR | libc::POLLHUP | libc::POLLNVAL)
    }

    /// Delivers the stream segments due now.
    pub(super) fn deliver_segments(&mut self) {
        while let Some(entry) = self.segments.first_entry() {
            if entry.key().0 > self.now {
                break;
            }
            let Segment { conn, to, seg } = entry.remove();
            let Some(c) = self.conns.get(&conn) else { continue };
            let to_node = self.cfg.node_index(c.addrs[to].0);
            let from_node = self.cfg.node_index(c.addrs[1 - to].0);
            match seg {
                Seg::Syn => {
                    let port = c.addrs[1].1;
                    let alive = self.procs.iter().any(|p| p.node == to_node && p.alive);
                    let listeners = if alive {
                        let space = if c.v6 { SPACE_V6 } else { SPACE_V4 };
                        let users = self.port_users(to_node, true, port, space);
                        let listeners = users.filter(|(_, s)| s.listening());
                        super::sockets::receivers(listeners, c.named, c.addrs[0])
                    } else {
                        Vec::new()
                    };
                    let from = c.addrs[0];
                    let listener = (!listeners.is_empty())
                        .then(|| super::sockets::pick_receiver(&listeners, from));
                    let queued = listener.and_then(|id| match self.fds.by_id_mut(id) {
                        Some(super::sockets::Sock {
                            stream: Some(Stream::Listening { backlog }),
                            ..
                        }) => {
                            backlog.push_back(conn);
                            Some(())
                        }
                        _ => None,
                    });
                    if queued.is_some() {
                        self.event(
                            to_node,
                            EventKind::Deliver,
                            Some(from_node),
                            Some(conn),
                            0,
                            || format!("stream {conn} syn"),
                        );
                        self.send_seg(conn, 0, Seg::SynAck);
                    } else {
                        self.send_seg(conn, 0, Seg::Refused);
                    }
                }
                Seg::SynAck | Seg::Refused => {
                    let refused = matches!(seg, Seg::Refused);
                    if let Some(id) = c.ends[0] {
                        let node = to_node;
                        if let Some(s) = self.fds.by_id_mut(id) {
                            if s.stream == Some(Stream::Connecting(conn)) {
                                s.stream = Some(if refused {
                                    s.err = libc::ECONNREFUSED;
                                    Stream::Failed(libc::ECONNREFUSED)
                                } else {
                                    Stream::Connected(conn)
                                });
                            }
                        }
                        self.event(
                            node,
                            EventKind::Deliver,
                            Some(from_node),
                            Some(conn),
                            0,
                            || {
                                format!(
                                    "stream {conn} {}",
                                    if refused { "refused" } else { "connected" }
                                )
                            },
                        );
                    }
                    if refused {
                        self.conns.remove(&conn);
                    }
                }
                Seg::Data(data) => {
                    let len = data.len();
                    let payload = hash(&data);
                    if let Some(c) = self.conns.get_mut(&conn) {
                        // An end not accepted yet keeps what arrives (its socket is in a
                        // listener's backlog); one closed, or a reset connection, drops it.
                        if !c.reset && (c.ends[to].is_some() || !c.shut[to]) {
                            c.inbox[to].extend(data);
                        } else {
                            c.unread[to] = c.unread[to].saturating_sub(len);
                        }
                    }
                    self.event(
                        to_node,
                        EventKind::Deliver,
                        Some(from_node),
                        Some(conn),
                        payload,
                        || format!("stream {conn}: {len} bytes"),
                    );
                }
                Seg::Fin => {
                    if let Some(c) = self.conns.get_mut(&conn) {
                        c.eof[to] = true;
                    }
                    self.event(to_node, EventKind::Deliver, Some(from_node), Some(conn), 3, || {
                        format!("stream {conn} fin")
                    });
                }
                Seg::Rst => {
                    if to == 0 {
                        self.fail_connect(conn, libc::ECONNRESET);
                    }
                    self.reset_conn(conn, "peer gone");
                }
                Seg::Again(seg) => self.send_again(conn, to, *seg),
            }
        }
    }

    /// End `from`'s retransmission timer for `seg`: sends it again while the connection is
    /// still being made (a connect given up or closed meanwhile sends nothing).
    fn send_again(&mut self, conn: u64, from: usize, seg: Seg) {
        let Some(c) = self.conns.get(&conn) else { return };
        let connecting = c.ends[0]
            .and_then(|id| self.fds.by_id(id))
            .is_some_and(|s| s.stream == Some(Stream::Connecting(conn)));
        if c.reset || !connecting {
            return;
        }
        let (node, to_node) = (self.conn_node(conn, from), self.conn_node(conn, 1 - from));
        self.event(node, EventKind::Send, Some(to_node), Some(conn), 5, || {
            format!("stream {conn} {} again", seg_name(&seg))
        });
        self.send_seg(conn, 1 - from, seg);
    }

    /// Makes a thread blocked in accept or connect runnable when it can go on.
    pub(super) fn wake_stream_waiter(&mut self, t: usize, node: u32, slot: &mut Slot) {
        match self.threads[t].wait {
            Wait::Accept { fd, newfd } => {
                if let Some(r) = self.stream_accept(node, fd, newfd, slot) {
                    slot.ret = r;
                    self.threads[t].wait = Wait::Ready;
                }
            }
            Wait::Connect { fd } => {
                if let Some(r) = self.connect_result(node, fd) {
                    slot.ret = r;
                    self.threads[t].wait = Wait::Ready;
                }
            }
            _ => {}
        }
    }
}

/// A handshake segment's name in the timeline.
fn seg_name(seg: &Seg) -> &'static str {
    match seg {
        Seg::Syn => "syn",
        Seg::SynAck => "syn-ack",
        Seg::Refused => "refusal",
        _ => "segment",
    }
}
