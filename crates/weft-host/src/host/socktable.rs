//! The node's sockets as its `/proc/net/{tcp,tcp6,udp,udp6}` tables list them (`OP_SOCKETS`)
//! and the inode a `/proc/<pid>/fd/<n>` link names (`OP_SOCK_INODE`), so `ss`, `netstat` and
//! `lsof` see the simulated sockets, with the processes holding them, instead of the real
//! placeholders (which are never bound: a script waiting for its daemon's port to listen, as
//! Galera's rsync state transfer does, waited forever). Inodes are numbered by object, so they
//! are the same in every run.

use super::fds::ObjId;
use super::sockets::Sock;
use super::stream::Stream;
use super::*;

use super::stream::SockRow as Row;

impl World<'_> {
    /// `OP_SOCKETS`: the rows of table `args[0]` (`NET_*`), in creation order.
    pub(super) fn op_sockets(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let table = slot.args[0];
        let (stream, v6) =
            (matches!(table, NET_TCP | NET_TCP6), matches!(table, NET_TCP6 | NET_UDP6));
        let rows: Vec<(u32, Row)> = self
            .fds
            .socks_of(c.node)
            .filter(|(_, s)| s.stream.is_some() == stream && (s.spaces & SPACE_V6 != 0) == v6)
            .filter_map(|(id, s)| Some((sock_inode(id), self.row(id, s)?)))
            .collect();
        let fit = rows.len().min(DATA_MAX / NET_RECORD);
        for (k, (inode, ((lip, lport), (rip, rport), state))) in rows[..fit].iter().enumerate() {
            let r = &mut slot.data[k * NET_RECORD..(k + 1) * NET_RECORD];
            r.fill(0);
            r[0..4].copy_from_slice(&lip.to_ne_bytes());
            r[4..8].copy_from_slice(&rip.to_ne_bytes());
            r[8..12].copy_from_slice(&inode.to_ne_bytes());
            r[12..14].copy_from_slice(&lport.to_ne_bytes());
            r[14..16].copy_from_slice(&rport.to_ne_bytes());
            r[16] = *state;
        }
        Reply::Ret(fit as i64)
    }

    /// Socket `id`'s row, when Linux lists it: a stream that listens, connects or is
    /// connected; a datagram socket once bound.
    fn row(&self, id: ObjId, s: &Sock) -> Option<Row> {
        let local = (s.bound, s.port);
        match &s.stream {
            Some(Stream::Listening { .. }) => Some((local, (0, 0), 0x0a)),
            Some(Stream::Connecting(_)) => Some((local, (0, 0), 2)), // SYN_SENT
            Some(Stream::Connected(conn)) => self.conn_view(*conn, id),
            Some(Stream::Fresh | Stream::Failed(_)) => None,
            None if s.port == 0 => None,
            None => Some(match s.peer {
                Some(peer) => (local, peer, 1), // ESTABLISHED
                None => (local, (0, 0), 7),     // CLOSE
            }),
        }
    }

    /// `OP_SOCK_INODE`: the inode of descriptor `args[1]` of the node's process with virtual
    /// pid `args[0]`, if it is a socket.
    pub(super) fn op_sock_inode(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        // A zombie is listed too, but its descriptors are closed: no socket is found then.
        let Some(p) = self.listed_by_vpid(c.node, slot.args[0]) else { return Reply::Ret(0) };
        let id = self.fds.id_in(self.procs[p].table, slot.args[1] as i32);
        let id = id.filter(|&id| self.fds.by_id(id).is_some());
        Reply::Ret(id.map_or(0, |id| sock_inode(id) as i64))
    }
}

/// The inode `/proc` shows for socket `id`.
fn sock_inode(id: ObjId) -> u32 {
    SOCK_INODE_BASE.wrapping_add(id.1 as u32)
}
