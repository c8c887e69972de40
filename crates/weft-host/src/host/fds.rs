//! The host's descriptor table: the single owner of what a (process, fd) refers to. A
//! descriptor refers to a socket object ([`SockId`]); several descriptors may refer to one
//! (`dup`, `dup2`, `dup3`, `fcntl(F_DUPFD)`), and the object lives until the last of them is
//! closed, as an open file description does on Linux. Today a node has one process, so a
//! descriptor is keyed by `(node, fd)`; every lookup goes through this API, so descriptors
//! shared across `fork`, pipes and eventfds change this one place.

use super::sockets::Sock;
use std::collections::BTreeMap;

/// A socket object: its node and its number there, in creation order (so the same run names
/// the same objects).
pub(super) type SockId = (u32, u64);

struct Entry {
    /// How many descriptors refer to it.
    refs: u32,
    sock: Sock,
}

/// Every open simulated descriptor of every process, and the objects they refer to.
#[derive(Default)]
pub(super) struct Fds {
    fds: BTreeMap<(u32, i32), SockId>,
    socks: BTreeMap<SockId, Entry>,
    next: u64,
}

impl Fds {
    /// Records a new socket at `fd` of `node`'s process; answers its object. A descriptor
    /// still recorded there was closed behind the shim's back, and is forgotten.
    pub(super) fn open_socket(&mut self, node: u32, fd: i32, sock: Sock) -> SockId {
        self.close(node, fd);
        self.next += 1;
        let id = (node, self.next);
        self.socks.insert(id, Entry { refs: 1, sock });
        self.fds.insert((node, fd), id);
        id
    }

    /// Makes `new` of `node`'s process refer to what `old` refers to (the caller has closed
    /// `new`). False if `old` is not open.
    pub(super) fn dup(&mut self, node: u32, old: i32, new: i32) -> bool {
        let Some(&id) = self.fds.get(&(node, old)) else { return false };
        if old == new {
            return true;
        }
        self.close(node, new);
        self.socks.get_mut(&id).expect("referenced socket").refs += 1;
        self.fds.insert((node, new), id);
        true
    }

    /// True when `fd` is the last descriptor referring to its socket (closing it closes the
    /// socket).
    pub(super) fn is_last(&self, node: u32, fd: i32) -> bool {
        self.id(node, fd).is_some_and(|id| self.socks[&id].refs == 1)
    }

    /// Closes `fd` of `node`'s process; the socket goes with its last descriptor.
    pub(super) fn close(&mut self, node: u32, fd: i32) {
        let Some(id) = self.fds.remove(&(node, fd)) else { return };
        let e = self.socks.get_mut(&id).expect("referenced socket");
        e.refs -= 1;
        if e.refs == 0 {
            self.socks.remove(&id);
        }
    }

    /// Closes every descriptor and socket of `node`'s process (it crashed).
    pub(super) fn close_node(&mut self, node: u32) {
        self.fds.retain(|k, _| k.0 != node);
        self.socks.retain(|k, _| k.0 != node);
    }

    /// The socket `fd` of `node`'s process refers to.
    pub(super) fn id(&self, node: u32, fd: i32) -> Option<SockId> {
        self.fds.get(&(node, fd)).copied()
    }

    /// True when `fd` of `node`'s process is an open simulated socket.
    pub(super) fn is_open(&self, node: u32, fd: i32) -> bool {
        self.fds.contains_key(&(node, fd))
    }

    /// True when `fd` of `node`'s process is a stream socket.
    pub(super) fn is_stream(&self, node: u32, fd: i32) -> bool {
        self.sock(node, fd).is_some_and(|s| s.stream.is_some())
    }

    pub(super) fn sock(&self, node: u32, fd: i32) -> Option<&Sock> {
        self.by_id(self.id(node, fd)?)
    }

    pub(super) fn sock_mut(&mut self, node: u32, fd: i32) -> Option<&mut Sock> {
        self.by_id_mut(self.id(node, fd)?)
    }

    /// The socket at `fd` of `node`'s process, which the caller knows is open.
    pub(super) fn open_sock(&self, node: u32, fd: i32) -> &Sock {
        self.sock(node, fd).expect("open socket")
    }

    pub(super) fn by_id(&self, id: SockId) -> Option<&Sock> {
        self.socks.get(&id).map(|e| &e.sock)
    }

    pub(super) fn by_id_mut(&mut self, id: SockId) -> Option<&mut Sock> {
        self.socks.get_mut(&id).map(|e| &mut e.sock)
    }

    /// The open descriptors of `node`'s process, in fd order.
    pub(super) fn fds_of(&self, node: u32) -> Vec<i32> {
        self.fds.range((node, i32::MIN)..=(node, i32::MAX)).map(|(k, _)| k.1).collect()
    }

    /// The sockets of `node`'s process, in creation order.
    pub(super) fn socks_of(&self, node: u32) -> impl Iterator<Item = (SockId, &Sock)> + '_ {
        self.socks.range((node, 0)..=(node, u64::MAX)).map(|(id, e)| (*id, &e.sock))
    }
}
