//! The host's descriptor table: the single owner of what a (process, fd) refers to. Today a
//! node has one process and a descriptor can only be a simulated socket, keyed by
//! `(node, fd)`; every lookup goes through this API, so duplicated descriptors, descriptors
//! shared across `fork`, pipes and eventfds change this one place.

use super::sockets::Sock;
use std::collections::BTreeMap;

/// Every open simulated descriptor of every process.
#[derive(Default)]
pub(super) struct Fds {
    socks: BTreeMap<(u32, i32), Sock>,
}

impl Fds {
    /// Records a new socket at `fd` of `node`'s process (replacing whatever was there).
    pub(super) fn open_socket(&mut self, node: u32, fd: i32, sock: Sock) {
        self.socks.insert((node, fd), sock);
    }

    /// Closes `fd` of `node`'s process; answers the socket it held.
    pub(super) fn close(&mut self, node: u32, fd: i32) -> Option<Sock> {
        self.socks.remove(&(node, fd))
    }

    /// Closes every descriptor of `node`'s process (it crashed).
    pub(super) fn close_node(&mut self, node: u32) {
        self.socks.retain(|k, _| k.0 != node);
    }

    /// True when `fd` of `node`'s process is an open simulated socket.
    pub(super) fn is_open(&self, node: u32, fd: i32) -> bool {
        self.socks.contains_key(&(node, fd))
    }

    /// True when `fd` of `node`'s process is a stream socket.
    pub(super) fn is_stream(&self, node: u32, fd: i32) -> bool {
        self.sock(node, fd).is_some_and(|s| s.stream.is_some())
    }

    pub(super) fn sock(&self, node: u32, fd: i32) -> Option<&Sock> {
        self.socks.get(&(node, fd))
    }

    pub(super) fn sock_mut(&mut self, node: u32, fd: i32) -> Option<&mut Sock> {
        self.socks.get_mut(&(node, fd))
    }

    /// The socket at `fd` of `node`'s process, which the caller knows is open.
    pub(super) fn open_sock(&self, node: u32, fd: i32) -> &Sock {
        &self.socks[&(node, fd)]
    }

    /// The open descriptors of `node`'s process and their sockets, in fd order.
    pub(super) fn on_node(&self, node: u32) -> impl Iterator<Item = (i32, &Sock)> + '_ {
        self.socks.range((node, i32::MIN)..=(node, i32::MAX)).map(|(k, s)| (k.1, s))
    }
}
