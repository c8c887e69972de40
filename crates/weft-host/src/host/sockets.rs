//! Simulated sockets: UDP datagrams (ports, binding, sending through the network model,
//! delivery into receive queues) and the socket-call handlers, which hand stream sockets on to
//! [`super::stream`].

use super::fds::ObjId;
use super::*;
use std::collections::VecDeque;

/// The first port an unbound socket is given (Linux's default ephemeral range).
pub(super) const EPHEMERAL_PORT_FIRST: u16 = 49152;
/// Datagrams a receive queue holds; later arrivals are dropped.
pub(super) const QUEUE_MAX: usize = 1024;

/// A UDP datagram as its receiver sees it.
pub(super) struct Datagram {
    /// The sender's address; [`LOOPBACK6`] for IPv6 traffic on the node.
    pub(super) src_ip: u32,
    pub(super) src_port: u16,
    /// The address the sender named: the receiver's own, its loopback (`127.0.0.1` or
    /// [`LOOPBACK6`]) when the sender was the node itself.
    pub(super) dst_ip: u32,
    pub(super) data: Vec<u8>,
}

/// A simulated socket (UDP, or a stream when `stream` is set).
#[derive(Default)]
pub(super) struct Sock {
    pub(super) port: u16,
    pub(super) peer: Option<(u32, u16)>,
    pub(super) queue: VecDeque<Datagram>,
    /// Stream sockets only.
    pub(super) stream: Option<stream::Stream>,
    /// Pending error for SO_ERROR (a failed non-blocking connect).
    pub(super) err: i32,
    /// `SO_REUSEADDR` / `SO_REUSEPORT` as of its bind (or listen): `REUSE_*` bits.
    pub(super) reuse: u8,
    /// The address spaces it takes part in (`SPACE_*` bits; an IPv6 socket's follow
    /// `IPV6_V6ONLY` as of its bind or connect).
    pub(super) spaces: u8,
    /// The address it was bound to (0: any), which an IPv6 socket's name reports.
    pub(super) bound: u32,
}

impl Sock {
    pub(super) fn listening(&self) -> bool {
        matches!(self.stream, Some(stream::Stream::Listening { .. }))
    }
}

/// Whether a socket with `reuse` may bind the port `other` holds, by Linux's rules: both set
/// `SO_REUSEPORT`, or both set `SO_REUSEADDR` and `other` is not listening.
fn shareable(reuse: u8, other: &Sock) -> bool {
    let both = reuse & other.reuse;
    both & REUSE_PORT != 0 || (both & REUSE_ADDR != 0 && !other.listening())
}

/// Whether sockets bound to addresses `a` and `b` (0: any) overlap, so that one port cannot
/// hold both unless they share it: either is the wildcard, or they are the same address.
fn overlaps(a: u32, b: u32) -> bool {
    a == 0 || b == 0 || a == b
}

/// The sockets among `users` that receive traffic from `from` to `dst` (the address its sender
/// named), as Linux scores them: a socket connected elsewhere never does; one connected to
/// `from` beats one bound to exactly `dst`, which beats one bound to any address. Only the
/// best-scoring ones are kept.
pub(super) fn receivers<'a>(
    users: impl Iterator<Item = (ObjId, &'a Sock)>,
    dst: u32,
    from: (u32, u16),
) -> Vec<(ObjId, u8)> {
    let score = |s: &Sock| {
        let bound = match s.bound {
            0 => Some(0),
            b if b == dst => Some(4),
            _ => None,
        };
        let peer = match s.peer {
            None => Some(0),
            Some(p) if p == from => Some(8),
            Some(_) => None,
        };
        Some(bound? + peer?)
    };
    let scored: Vec<(ObjId, u8, u8)> =
        users.filter_map(|(id, s)| score(s).map(|k| (id, s.reuse, k))).collect();
    let best = scored.iter().map(|u| u.2).max();
    scored.into_iter().filter(|u| Some(u.2) == best).map(|(id, reuse, _)| (id, reuse)).collect()
}

/// Which of the sockets sharing a port (`SO_REUSEPORT`/`SO_REUSEADDR`) receives what
/// `from` sends: with `SO_REUSEPORT` set on all, a hash of the sender's address (one flow
/// always reaches the same socket, as on Linux); otherwise the newest socket.
pub(super) fn pick_receiver(users: &[(ObjId, u8)], from: (u32, u16)) -> ObjId {
    if users.len() > 1 && users.iter().all(|u| u.1 & REUSE_PORT != 0) {
        let mut h = StableHasher::new();
        h.write_u32(from.0);
        h.write_u16(from.1);
        return users[(h.finish() % users.len() as u64) as usize].0;
    }
    users.last().expect("a receiver").0
}

/// The address space traffic to `ip` travels in: the IPv6 loopback's, or IPv4.
pub(super) fn space_of(ip: u32) -> u8 {
    if ip == LOOPBACK6 {
        SPACE_V6
    } else {
        SPACE_V4
    }
}

/// A datagram in flight from node `from` to port `port` of node `to`, in address space
/// `space`.
pub(super) struct Flight {
    pub(super) from: u32,
    pub(super) to: u32,
    pub(super) port: u16,
    pub(super) space: u8,
    pub(super) msg: u64,
    pub(super) dgram: Datagram,
}

impl World<'_> {
    pub(super) fn op_socket(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let stream = (slot.args[1] != 0).then_some(stream::Stream::Fresh);
        let spaces = slot.args[2] as u8;
        self.fds.open_socket(
            c.node,
            slot.args[0] as i32,
            Sock { stream, spaces, ..Sock::default() },
        );
        Reply::Ret(0)
    }

    pub(super) fn op_close(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        self.close_fd(c.node, slot.args[0] as i32);
        Reply::Ret(0)
    }

    /// Closes `fd`; the socket itself closes (a stream sends its FIN) with its last descriptor.
    pub(super) fn close_fd(&mut self, node: u32, fd: i32) {
        if self.fds.is_last(node, fd) {
            self.stream_close(node, fd);
        }
        let file = self.disk_inode(node, fd).map(|(i, _)| (i, self.fds.table(node)));
        let id = self.fds.id(node, fd);
        let gone = self.fds.close(node, fd);
        if let Some((inode, table)) = file {
            self.locks_closed(node, table, inode, gone.is_some().then_some(id).flatten());
        }
        if let Some(obj) = gone {
            self.local_closed(obj);
            self.release_unread();
        }
    }

    pub(super) fn op_dup(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let (old, new) = (slot.args[0] as i32, slot.args[1] as i32);
        if !self.fds.is_open(c.node, old) {
            return Reply::Ret(-(libc::EBADF as i64));
        }
        if old != new {
            self.close_fd(c.node, new);
            self.fds.dup(c.node, old, new);
        }
        Reply::Ret(new as i64)
    }

    pub(super) fn op_listen(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let (node, fd) = (c.node, slot.args[0] as i32);
        let Some(id) = self.fds.id(node, fd) else { return Reply::Ret(-(libc::EBADF as i64)) };
        let sock = self.fds.sock_mut(node, fd).expect("open");
        sock.reuse = slot.args[2] as u8;
        let (port, reuse, fresh) =
            (sock.port, sock.reuse, sock.stream == Some(stream::Stream::Fresh));
        // Another listener on the port clashes, unless both set SO_REUSEPORT.
        let (spaces, bound) = (sock.spaces, sock.bound);
        let clash = |(other, s): (ObjId, &Sock)| {
            other != id
                && s.listening()
                && overlaps(bound, s.bound)
                && reuse & s.reuse & REUSE_PORT == 0
        };
        if fresh && port != 0 && self.port_users(node, true, port, spaces).any(clash) {
            return Reply::Ret(-(libc::EADDRINUSE as i64));
        }
        Reply::Ret(self.stream_listen(node, fd))
    }

    pub(super) fn op_accept(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let fd = slot.args[0] as i32;
        let newfd = slot.args[1] as i32;
        let nonblock = slot.args[2] != 0;
        match self.stream_accept(c.node, fd, newfd, slot) {
            Some(r) => Reply::Ret(r),
            None if nonblock => Reply::Ret(-(libc::EAGAIN as i64)),
            None => Reply::Block(Wait::Accept { fd, newfd }),
        }
    }

    pub(super) fn op_shutdown(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let (fd, how) = (slot.args[0] as i32, slot.args[1] as i32);
        if self.fds.local(c.node, fd).is_some() {
            return Reply::Ret(self.local_shutdown(c.node, fd, how));
        }
        Reply::Ret(self.stream_shutdown(c.node, fd, how))
    }

    pub(super) fn op_getpeername(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let (node, fd) = (c.node, slot.args[0] as i32);
        let r = match self.fds.sock(node, fd) {
            None => -(libc::EBADF as i64),
            Some(sock) => match (sock.stream.is_some(), self.stream_peer(node, fd), sock.peer) {
                (true, Some((ip, port)), _) | (false, _, Some((ip, port))) => {
                    slot.addr_ip = ip;
                    slot.addr_port = port;
                    0
                }
                _ => -(libc::ENOTCONN as i64),
            },
        };
        Reply::Ret(r)
    }

    pub(super) fn op_sockerr(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let r = match self.fds.sock_mut(c.node, slot.args[0] as i32) {
            Some(s) => std::mem::take(&mut s.err) as i64,
            None => libc::EBADF as i64,
        };
        Reply::Ret(r)
    }

    pub(super) fn op_bind(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let (fd, reuse) = (slot.args[0] as i32, slot.args[1] as u8);
        if let Some(s) = self.fds.sock_mut(c.node, fd).filter(|s| s.port == 0) {
            s.spaces = slot.args[2] as u8;
        }
        Reply::Ret(self.bind(c.node, fd, slot.addr_ip, slot.addr_port, reuse))
    }

    pub(super) fn op_connect(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let (node, fd) = (c.node, slot.args[0] as i32);
        let ip = slot.addr_ip;
        if let Some(s) = self.fds.sock_mut(node, fd).filter(|s| s.port == 0) {
            s.spaces = slot.args[2] as u8;
        }
        if self.fds.is_stream(node, fd) {
            let nonblock = slot.args[1] != 0;
            return match self.stream_connect(node, fd, ip, slot.addr_port, nonblock) {
                Some(r) => Reply::Ret(r),
                None => Reply::Block(Wait::Connect { fd }),
            };
        }
        if !self.fds.is_open(node, fd) {
            return Reply::Ret(-(libc::EBADF as i64));
        }
        self.autobind(node, fd);
        if let Some(sock) = self.fds.sock_mut(node, fd) {
            sock.peer = Some((ip, slot.addr_port));
        }
        Reply::Ret(0)
    }

    pub(super) fn op_getsockname(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let r = match self.fds.sock(c.node, slot.args[0] as i32) {
            None => -(libc::EBADF as i64),
            Some(sock) => {
                slot.addr_ip = self.local_ip(c.node, slot.args[0] as i32, sock);
                slot.addr_port = sock.port;
                0
            }
        };
        Reply::Ret(r)
    }

    pub(super) fn op_sendto(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let fd = slot.args[0] as i32;
        let len = (slot.len as usize).min(DATA_MAX);
        if self.fds.local(c.node, fd).is_some() {
            let r = self.local_write(c.node, fd, &slot.data[..len]);
            if r > 0 {
                self.attach_staged(c.t, c.node, fd, r as usize);
            }
            return Reply::Ret(r);
        }
        if self.fds.is_stream(c.node, fd) {
            return Reply::Ret(self.stream_send(c.node, fd, &slot.data[..len]));
        }
        Reply::Ret(self.sendto(c.node, slot))
    }

    pub(super) fn op_recvfrom(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let (node, fd) = (c.node, slot.args[0] as i32);
        let nonblock = slot.args[1] != 0;
        let deadline = (slot.args[2] > 0).then_some(SimTime(slot.args[2] as u64));
        let peek = slot.args[4] != 0;
        let cap = slot.args[3].max(0) as usize;
        if !self.fds.is_open(node, fd) {
            Reply::Ret(-(libc::EBADF as i64))
        } else if let Some(r) = self.try_recv(node, fd, peek, cap, slot) {
            Reply::Ret(r)
        } else if nonblock || deadline.is_some_and(|d| d <= self.now) {
            Reply::Ret(-(libc::EAGAIN as i64))
        } else {
            Reply::Block(Wait::Recv { fd, deadline, peek, cap })
        }
    }

    /// bind() of `fd` to `ip:port` (0: an ephemeral port), with the socket's `SO_REUSEADDR` /
    /// `SO_REUSEPORT` as `REUSE_*` bits.
    pub(super) fn bind(&mut self, node: u32, fd: i32, ip: u32, port: u16, reuse: u8) -> i64 {
        let Some(id) = self.fds.id(node, fd) else { return -(libc::EBADF as i64) };
        let sock = self.fds.open_sock(node, fd);
        let v6 = sock.spaces & SPACE_V6 != 0 && ip == LOOPBACK6;
        if ip != 0 && ip != self.cfg.node_ip(node) && ip != LOCALHOST && !v6 {
            return -(libc::EADDRNOTAVAIL as i64);
        }
        if sock.port != 0 {
            return -(libc::EINVAL as i64);
        }
        let (stream, spaces) = (sock.stream.is_some(), sock.spaces);
        let port = if port == 0 { self.ephemeral(node, stream) } else { port };
        let clash = |(other, s): (ObjId, &Sock)| {
            other != id && overlaps(ip, s.bound) && !shareable(reuse, s)
        };
        if self.port_users(node, stream, port, spaces).any(clash) {
            return -(libc::EADDRINUSE as i64);
        }
        if let Some(s) = self.fds.sock_mut(node, fd) {
            s.port = port;
            s.reuse = reuse;
            s.bound = ip;
        }
        0
    }

    /// The sockets of `node` bound to `port`, in the stream or the datagram port space (Linux
    /// keeps the two apart: a TCP and a UDP socket may both have port 7000), that take part
    /// in one of the address spaces `spaces` (an IPv4 socket and an `IPV6_V6ONLY` one may
    /// both have port 7000 too).
    pub(super) fn port_users(
        &self,
        node: u32,
        stream: bool,
        port: u16,
        spaces: u8,
    ) -> impl Iterator<Item = (ObjId, &Sock)> + '_ {
        self.fds.socks_of(node).filter(move |(_, s)| {
            s.port == port && s.stream.is_some() == stream && s.spaces & spaces != 0
        })
    }

    /// The local address `fd`'s name reports: the loopback when it talks to the node's own
    /// loopback; for an IPv4 socket what it was bound to, the node's address when bound to any
    /// (as before IPv6 was simulated); for an IPv6 one what it was bound to (`::`, `::1`) or
    /// the end of the connection it carries.
    fn local_ip(&self, node: u32, fd: i32, sock: &Sock) -> u32 {
        if sock.port == 0 {
            return 0;
        }
        let peer = self.stream_peer(node, fd).or(sock.peer).map(|p| p.0);
        if sock.spaces & SPACE_V6 == 0 {
            return match (peer, sock.bound) {
                (Some(LOCALHOST), _) => LOCALHOST,
                (_, 0) => self.cfg.node_ip(node),
                (_, bound) => bound,
            };
        }
        match peer {
            Some(ip @ (LOOPBACK6 | LOCALHOST)) => ip,
            Some(_) => self.cfg.node_ip(node),
            None if sock.bound == 0 || sock.bound == LOOPBACK6 => sock.bound,
            None => self.cfg.node_ip(node),
        }
    }

    pub(super) fn ephemeral(&mut self, node: u32, stream: bool) -> u16 {
        loop {
            let port = self.next_port[node as usize];
            self.next_port[node as usize] =
                if port == u16::MAX { EPHEMERAL_PORT_FIRST } else { port + 1 };
            if self.port_users(node, stream, port, SPACE_V4 | SPACE_V6).next().is_none() {
                return port;
            }
        }
    }

    pub(super) fn autobind(&mut self, node: u32, fd: i32) {
        if let Some(stream) =
            self.fds.sock(node, fd).filter(|s| s.port == 0).map(|s| s.stream.is_some())
        {
            let port = self.ephemeral(node, stream);
            if let Some(s) = self.fds.sock_mut(node, fd) {
                s.port = port;
            }
        }
    }

    /// The node an address belongs to (localhost and the node's own address are itself).
    pub(super) fn node_of(&self, from: u32, ip: u32) -> Option<u32> {
        if ip == LOCALHOST || ip == LOOPBACK6 {
            return Some(from);
        }
        self.cfg.node_at(ip)
    }

    pub(super) fn sendto(&mut self, node: u32, slot: &mut Slot) -> i64 {
        let fd = slot.args[0] as i32;
        let Some(sock) = self.fds.sock(node, fd) else { return -(libc::EBADF as i64) };
        let (ip, port) = if slot.addr_ip == 0 && slot.addr_port == 0 {
            match sock.peer {
                Some(peer) => peer,
                None => return -(libc::EDESTADDRREQ as i64),
            }
        } else {
            (slot.addr_ip, slot.addr_port)
        };
        self.autobind(node, fd);
        let src_port = self.fds.open_sock(node, fd).port;
        let len = (slot.len as usize).min(DATA_MAX);
        let data = slot.data[..len].to_vec();
        let mut h = StableHasher::new();
        h.write(&data);
        let payload = h.finish();
        let Some(to) = self.node_of(node, ip) else {
            // No such host in the simulated network: UDP loses it silently.
            self.event(node, EventKind::Drop, None, None, payload, || {
                format!("{len} bytes to {}:{port}: no such node", format_ip(ip))
            });
            return len as i64;
        };
        self.seq += 1;
        let msg = self.seq;
        self.event(node, EventKind::Send, Some(to), Some(msg), payload, || {
            format!("{len} bytes :{src_port} -> n{to}:{port}")
        });
        let faulty = !self.healed;
        let fate = self.net.route(
            (node, to),
            self.now,
            self.scenario,
            faulty,
            &mut self.counts,
            self.decisions,
        );
        let arrivals = match fate {
            Fate::Cut => {
                self.event(node, EventKind::Drop, Some(to), Some(msg), payload, || {
                    "lost: link cut".into()
                });
                vec![]
            }
            Fate::Drop => {
                self.event(node, EventKind::Drop, Some(to), Some(msg), payload, || {
                    "dropped".into()
                });
                vec![]
            }
            Fate::Deliver(at) => vec![at],
            Fate::Duplicate(a, b) => {
                self.event(node, EventKind::Duplicate, Some(to), Some(msg), payload, || {
                    "duplicated".into()
                });
                vec![a, b]
            }
        };
        for at in arrivals {
            self.seq += 1;
            let space = space_of(ip);
            let dgram = Datagram {
                src_ip: source(self.cfg.node_ip(node), ip),
                src_port,
                dst_ip: ip,
                data: data.clone(),
            };
            let flight = Flight { from: node, to, port, space, msg, dgram };
            self.flights.insert((at, self.seq), flight);
        }
        len as i64
    }

    /// Receives on `fd` into the slot: a datagram popped (or peeked), or stream bytes. None if
    /// nothing is there yet.
    pub(super) fn try_recv(
        &mut self,
        node: u32,
        fd: i32,
        peek: bool,
        cap: usize,
        slot: &mut Slot,
    ) -> Option<i64> {
        if self.fds.local(node, fd).is_some() {
            return self.local_try_read(node, fd, peek, cap, slot);
        }
        let sock = self.fds.sock_mut(node, fd)?;
        if sock.stream.is_some() {
            return self.stream_try_recv(node, fd, peek, cap, slot);
        }
        if peek {
            write_dgram(slot, sock.queue.front()?);
        } else {
            write_dgram(slot, &sock.queue.pop_front()?);
        }
        Some(slot.ret)
    }

    pub(super) fn deliver_due(&mut self) {
        while let Some(entry) = self.flights.first_entry() {
            if entry.key().0 > self.now {
                break;
            }
            let f = entry.remove();
            let payload = {
                let mut h = StableHasher::new();
                h.write(&f.dgram.data);
                h.finish()
            };
            let alive = self.procs.iter().any(|p| p.node == f.to && p.alive);
            let from = (f.dgram.src_ip, f.dgram.src_port);
            let users = if alive {
                receivers(self.port_users(f.to, false, f.port, f.space), f.dgram.dst_ip, from)
            } else {
                Vec::new()
            };
            let owner = (!users.is_empty()).then(|| pick_receiver(&users, from));
            let Some(id) = owner else {
                self.event(f.to, EventKind::Drop, Some(f.from), Some(f.msg), payload, || {
                    format!("nothing bound to port {} on n{}", f.port, f.to)
                });
                continue;
            };
            let len = f.dgram.data.len();
            let sock = self.fds.by_id_mut(id).expect("owner exists");
            if sock.queue.len() >= QUEUE_MAX {
                self.event(f.to, EventKind::Drop, Some(f.from), Some(f.msg), payload, || {
                    "receive queue full".into()
                });
                continue;
            }
            sock.queue.push_back(f.dgram);
            self.event(f.to, EventKind::Deliver, Some(f.from), Some(f.msg), payload, || {
                format!("{len} bytes from n{} -> :{}", f.from, f.port)
            });
        }
    }
}

fn write_dgram(slot: &mut Slot, d: &Datagram) {
    let n = d.data.len().min(DATA_MAX);
    slot.data[..n].copy_from_slice(&d.data[..n]);
    slot.len = n as u32;
    slot.addr_ip = d.src_ip;
    slot.addr_port = d.src_port;
    slot.args[5] = d.dst_ip as i64;
    slot.ret = n as i64;
}

/// The source address of a datagram a node at `own` sends to `to`: as Linux picks it, the
/// loopback for the node's own loopback, the node's address otherwise.
fn source(own: u32, to: u32) -> u32 {
    match to {
        LOOPBACK6 | LOCALHOST => to,
        _ => own,
    }
}
