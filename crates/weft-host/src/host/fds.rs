//! The host's descriptor table: the single owner of what a (process, fd) refers to. A
//! descriptor refers to an object ([`ObjId`]): a socket, a process-local object (a pipe
//! end, an eventfd, a socketpair end), or an open file of the node's simulated disk. Several descriptors may refer to one (`dup`, `dup2`,
//! `dup3`, `fcntl(F_DUPFD)`), and the object lives until the last of them is closed, as an open
//! file description does on Linux.
//!
//! Each process has its own table (`fork` copies the parent's, every descriptor referring to
//! the same objects, so a socket shared by parent and child stays one socket until both have
//! closed it). Lookups name the node, and resolve in the table of the node's process being
//! served ([`Fds::enter`]: the run loop enters a thread's process before it serves or wakes
//! it). A node's own program has table number `node`, so a run without children never enters
//! anything else.

use super::disk::OpenFile;
use super::local::Local;
use super::sockets::Sock;
use std::collections::BTreeMap;

/// An object: its node and its number there, in creation order (so the same run names the
/// same objects).
pub(super) type ObjId = (u32, u64);

/// What a descriptor refers to.
pub(super) enum Object {
    Sock(Sock),
    Local(Local),
    File(OpenFile),
}

struct Entry {
    /// How many descriptors refer to it.
    refs: u32,
    obj: Object,
}

/// Table numbers of forked children start here (a node's own program has table `node`).
pub(super) const CHILD_TABLE_BASE: u32 = 1 << 16;

/// Every open simulated descriptor of every process, and the objects they refer to.
#[derive(Default)]
pub(super) struct Fds {
    /// `(table, fd)` to object.
    fds: BTreeMap<(u32, i32), ObjId>,
    /// Every object some descriptor refers to.
    objs: BTreeMap<ObjId, Entry>,
    next: u64,
    /// Per node, the table lookups resolve in (absent: the node's own, `node`).
    current: BTreeMap<u32, u32>,
    /// The node of every child's table.
    owner: BTreeMap<u32, u32>,
}

impl Fds {
    /// Lookups for `node` resolve in `table` from now on; answers the table they did.
    pub(super) fn enter(&mut self, node: u32, table: u32) -> u32 {
        let was = self.table(node);
        if table == node {
            // Once per hand-off and per blocked thread: almost always nothing to remove.
            if !self.current.is_empty() {
                self.current.remove(&node);
            }
        } else {
            self.current.insert(node, table);
        }
        was
    }

    pub(super) fn table(&self, node: u32) -> u32 {
        self.current.get(&node).copied().unwrap_or(node)
    }

    fn key(&self, node: u32, fd: i32) -> (u32, i32) {
        (self.table(node), fd)
    }

    /// A fork on `node`: table `child` becomes a copy of `parent`, referring to the same
    /// objects.
    pub(super) fn fork_table(&mut self, node: u32, parent: u32, child: u32) {
        let copied: Vec<(i32, ObjId)> = self
            .fds
            .range((parent, i32::MIN)..=(parent, i32::MAX))
            .map(|(k, id)| (k.1, *id))
            .collect();
        for (fd, id) in copied {
            self.objs.get_mut(&id).expect("referenced object").refs += 1;
            self.fds.insert((child, fd), id);
        }
        self.owner.insert(child, node);
    }

    /// Records a new socket at `fd` of `node`'s process; answers its object. A descriptor
    /// still recorded there was closed behind the shim's back, and is forgotten.
    pub(super) fn open_socket(&mut self, node: u32, fd: i32, sock: Sock) -> ObjId {
        self.open(node, fd, Object::Sock(sock))
    }

    /// Records a new process-local object at `fd` of `node`'s process (the caller has closed
    /// whatever `fd` held).
    pub(super) fn open_local(&mut self, node: u32, fd: i32, local: Local) -> ObjId {
        self.open(node, fd, Object::Local(local))
    }

    fn open(&mut self, node: u32, fd: i32, obj: Object) -> ObjId {
        self.close(node, fd);
        self.next += 1;
        let id = (node, self.next);
        self.objs.insert(id, Entry { refs: 1, obj });
        let k = self.key(node, fd);
        self.fds.insert(k, id);
        id
    }

    /// Makes `new` of `node`'s process refer to what `old` refers to (the caller has closed
    /// `new`). False if `old` is not open.
    pub(super) fn dup(&mut self, node: u32, old: i32, new: i32) -> bool {
        let Some(&id) = self.fds.get(&self.key(node, old)) else { return false };
        if old == new {
            return true;
        }
        self.close(node, new);
        self.objs.get_mut(&id).expect("referenced object").refs += 1;
        let k = self.key(node, new);
        self.fds.insert(k, id);
        true
    }

    /// One more reference to object `id` (a descriptor in flight, passed over a socketpair).
    pub(super) fn hold(&mut self, id: ObjId) {
        if let Some(e) = self.objs.get_mut(&id) {
            e.refs += 1;
        }
    }

    /// Drops a reference taken with [`Fds::hold`]; the object goes with its last one.
    pub(super) fn release(&mut self, id: ObjId) -> Option<Object> {
        let e = self.objs.get_mut(&id)?;
        e.refs -= 1;
        (e.refs == 0).then(|| self.objs.remove(&id).expect("referenced object").obj)
    }

    /// Makes `fd` of `node`'s process refer to `id`, taking over a reference held for it (a
    /// passed descriptor arriving); the caller has closed `fd`.
    pub(super) fn adopt(&mut self, node: u32, fd: i32, id: ObjId) {
        let k = self.key(node, fd);
        self.fds.insert(k, id);
    }

    /// What object `id` is, for the shim's table: 1 a datagram socket, 2 a stream socket, 3
    /// a process-local object, 4 a data-directory file.
    pub(super) fn kind_code(&self, id: ObjId) -> u8 {
        match self.objs.get(&id).map(|e| &e.obj) {
            Some(Object::Sock(s)) if s.stream.is_some() => 2,
            Some(Object::Sock(_)) => 1,
            Some(Object::Local(_)) => 3,
            Some(Object::File(_)) => 4,
            None => 0,
        }
    }

    /// True when `fd` is the last descriptor referring to its socket (closing it closes the
    /// socket).
    pub(super) fn is_last(&self, node: u32, fd: i32) -> bool {
        self.id(node, fd).is_some_and(|id| self.objs[&id].refs == 1)
    }

    /// Closes `fd` of `node`'s process; the object goes with its last descriptor, and is
    /// answered then.
    pub(super) fn close(&mut self, node: u32, fd: i32) -> Option<Object> {
        let id = self.fds.remove(&self.key(node, fd))?;
        let e = self.objs.get_mut(&id).expect("referenced object");
        e.refs -= 1;
        (e.refs == 0).then(|| self.objs.remove(&id).expect("referenced object").obj)
    }

    /// Closes every descriptor and object of `node`'s processes (it crashed).
    pub(super) fn close_node(&mut self, node: u32) {
        let owner = std::mem::take(&mut self.owner);
        self.fds.retain(|k, _| k.0 != node && owner.get(&k.0).is_none_or(|&n| n != node));
        self.objs.retain(|k, _| k.0 != node);
        self.owner = owner.into_iter().filter(|&(_, n)| n != node).collect();
        self.current.remove(&node);
    }

    /// The socket `fd` of `node`'s process refers to.
    pub(super) fn id(&self, node: u32, fd: i32) -> Option<ObjId> {
        self.fds.get(&self.key(node, fd)).copied()
    }

    /// What descriptor `fd` of table `table` refers to, whichever process is being served.
    pub(super) fn id_in(&self, table: u32, fd: i32) -> Option<ObjId> {
        self.fds.get(&(table, fd)).copied()
    }

    /// True when `fd` of `node`'s process is open (a socket or a process-local object).
    pub(super) fn is_open(&self, node: u32, fd: i32) -> bool {
        self.fds.contains_key(&self.key(node, fd))
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

    pub(super) fn by_id(&self, id: ObjId) -> Option<&Sock> {
        match self.objs.get(&id).map(|e| &e.obj) {
            Some(Object::Sock(s)) => Some(s),
            _ => None,
        }
    }

    pub(super) fn by_id_mut(&mut self, id: ObjId) -> Option<&mut Sock> {
        match self.objs.get_mut(&id).map(|e| &mut e.obj) {
            Some(Object::Sock(s)) => Some(s),
            _ => None,
        }
    }

    /// The process-local object `fd` of `node`'s process refers to.
    pub(super) fn local(&self, node: u32, fd: i32) -> Option<&Local> {
        match self.objs.get(&self.id(node, fd)?).map(|e| &e.obj) {
            Some(Object::Local(l)) => Some(l),
            _ => None,
        }
    }

    pub(super) fn local_mut(&mut self, node: u32, fd: i32) -> Option<&mut Local> {
        let id = self.id(node, fd)?;
        match self.objs.get_mut(&id).map(|e| &mut e.obj) {
            Some(Object::Local(l)) => Some(l),
            _ => None,
        }
    }

    /// Records a new open file of the node's disk at `fd` (the caller has closed whatever `fd`
    /// held).
    pub(super) fn open_file(&mut self, node: u32, fd: i32, file: OpenFile) -> ObjId {
        self.open(node, fd, Object::File(file))
    }

    /// The open disk file `fd` of `node`'s process refers to.
    pub(super) fn file(&self, node: u32, fd: i32) -> Option<&OpenFile> {
        match self.objs.get(&self.id(node, fd)?).map(|e| &e.obj) {
            Some(Object::File(f)) => Some(f),
            _ => None,
        }
    }

    /// The open files that descriptors of tables `tables` refer to (each once).
    pub(super) fn files_of_tables(&mut self, tables: &[u32]) -> Vec<&mut OpenFile> {
        let ids: std::collections::BTreeSet<ObjId> =
            self.fds.iter().filter(|((t, _), _)| tables.contains(t)).map(|(_, &id)| id).collect();
        let mut out = Vec::new();
        for (id, e) in self.objs.iter_mut() {
            if let (true, Object::File(f)) = (ids.contains(id), &mut e.obj) {
                out.push(f);
            }
        }
        out
    }

    pub(super) fn file_mut(&mut self, node: u32, fd: i32) -> Option<&mut OpenFile> {
        let id = self.id(node, fd)?;
        match self.objs.get_mut(&id).map(|e| &mut e.obj) {
            Some(Object::File(f)) => Some(f),
            _ => None,
        }
    }

    /// The open descriptors of `node`'s process, in fd order.
    pub(super) fn fds_of(&self, node: u32) -> Vec<i32> {
        let t = self.table(node);
        self.fds.range((t, i32::MIN)..=(t, i32::MAX)).map(|(k, _)| k.1).collect()
    }

    /// The sockets of `node`'s process, in creation order.
    pub(super) fn socks_of(&self, node: u32) -> impl Iterator<Item = (ObjId, &Sock)> + '_ {
        self.objs.range((node, 0)..=(node, u64::MAX)).filter_map(|(id, e)| match &e.obj {
            Object::Sock(s) => Some((*id, s)),
            Object::Local(_) | Object::File(_) => None,
        })
    }
}
