//! Shared read-only mappings of simulated files. The shim serves `mmap(MAP_SHARED,
//! PROT_READ)` of a data-directory file as a copy of its bytes (`crates/weft-shim/src/
//! diskmmap.rs`); a copy stays what Linux would show only while the file does not change. So
//! the host keeps every live shared mapping per process (by the file's inode, which survives
//! renames and unlinks), and a write or truncate of a mapped file — by any process of the node,
//! through any descriptor — ends the run as unsupported, naming the call and the file, instead
//! of letting the mapping silently go stale. A mapping ends with its `munmap`, its process's
//! exit or `exec`, or its node's crash; a `fork`ed child inherits its parent's.

use super::*;

/// One live shared mapping.
#[derive(Clone)]
struct Mapping {
    node: u32,
    inode: usize,
    path: String,
}

/// Every live shared mapping, by (process table, token).
#[derive(Default)]
pub(super) struct Mappings {
    live: BTreeMap<(u32, i64), Mapping>,
    next: i64,
}

impl Mappings {
    /// A fork: table `child` maps what `parent` maps, under the same tokens (the child's
    /// shim inherits them with its memory).
    pub(super) fn fork(&mut self, parent: u32, child: u32) {
        let copied: Vec<(i64, Mapping)> = self
            .live
            .range((parent, 0)..=(parent, i64::MAX))
            .map(|(k, m)| (k.1, m.clone()))
            .collect();
        for (token, m) in copied {
            self.live.insert((child, token), m);
        }
    }

    /// The process with table `table` exited or replaced its image.
    pub(super) fn drop_table(&mut self, table: u32) {
        self.live.retain(|k, _| k.0 != table);
    }

    /// Node `node` crashed: its processes are gone.
    pub(super) fn drop_node(&mut self, node: u32) {
        self.live.retain(|_, m| m.node != node);
    }

    /// The path of a live mapping of inode `inode` on `node`, if any.
    fn of(&self, node: u32, inode: usize) -> Option<&str> {
        self.live.values().find(|m| m.node == node && m.inode == inode).map(|m| m.path.as_str())
    }
}

impl World<'_> {
    /// `DISK_MAP`: a shared read-only mapping of fd `args[1]`'s file begins; answers its token.
    pub(super) fn disk_map(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let fd = slot.args[1] as i32;
        let Some((inode, path)) = self.disk_inode(c.node, fd) else {
            return Reply::Ret(-(libc::EBADF as i64));
        };
        let (off, len) = (slot.args[2], slot.args[3]);
        let maps = &mut self.disks.maps;
        maps.next += 1;
        let token = maps.next;
        let table = self.procs[c.p].table;
        maps.live.insert((table, token), Mapping { node: c.node, inode, path: path.clone() });
        let s = format!("disk mmap {path} MAP_SHARED at={off} len={len}");
        self.disk_event(c.node, "mmap", &path, &[off, len], s);
        Reply::Ret(token)
    }

    /// `DISK_UNMAP`: the mapping with token `args[1]` ended.
    pub(super) fn disk_unmap(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let table = self.procs[c.p].table;
        match self.disks.maps.live.remove(&(table, slot.args[1])) {
            Some(m) => {
                let s = format!("disk munmap {}", m.path);
                self.disk_event(c.node, "munmap", &m.path, &[], s);
                Reply::Ret(0)
            }
            None => Reply::Ret(-(libc::EINVAL as i64)),
        }
    }

    /// Before `call` changes inode `inode` of `c`'s node: ends the run when a process maps the
    /// file shared.
    pub(super) fn unmapped_or_refuse(
        &mut self,
        c: Caller,
        inode: usize,
        call: &str,
    ) -> Option<Reply> {
        let path = self.disks.maps.of(c.node, inode)?.to_string();
        let what = format!(
            "{call} of `{path}` while a process of the node maps it MAP_SHARED: the mapping is a \
             copy of the file's bytes, and changes of a mapped file are not modelled"
        );
        Some(self.disk_unsupported(c, &what))
    }
}
