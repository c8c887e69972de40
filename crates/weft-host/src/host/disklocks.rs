//! Advisory locks on simulated files, between the processes of a node, as Linux keeps them:
//! POSIX record locks (`fcntl` `F_SETLK`/`F_SETLKW`/`F_GETLK`), owned by a process and
//! released when it closes any descriptor of the file or ends; open-file-description locks
//! (`F_OFD_*`), the same ranges owned by a description; and `flock` locks, whole-file and owned
//! by a description, which do not meet record locks. A conflicting lock is refused (`EAGAIN`,
//! `EWOULDBLOCK`) or, when asked to wait, the thread waits in virtual time until a lock of the
//! file goes and then looks again (a signal interrupts the wait: `EINTR`). A node's crash
//! drops its locks. Not modelled: `EDEADLK` for a cycle of waiting processes (the run then
//! ends as a deadlock naming the wait), and mandatory locking.

use super::fds::ObjId;
use super::*;

/// Who holds a lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Owner {
    /// A POSIX record lock: the process with this descriptor table.
    Process(u32),
    /// An OFD or `flock` lock: this open file description.
    Description(ObjId),
}

/// One held lock: `[start, end)` of `inode` on `node` (`end` = `u64::MAX`: to the end of the
/// file, however far it grows).
#[derive(Clone, Copy, Debug)]
struct Lock {
    node: u32,
    inode: usize,
    owner: Owner,
    flock: bool,
    write: bool,
    start: u64,
    end: u64,
}

/// What a lock request asks.
#[derive(Clone, Copy, Debug)]
pub(super) struct Ask {
    pub(super) owner: Owner,
    pub(super) flock: bool,
    /// `None`: unlock.
    pub(super) write: Option<bool>,
    pub(super) start: u64,
    pub(super) end: u64,
}

/// Every lock held on the node's simulated files.
#[derive(Default)]
pub(super) struct Locks {
    held: Vec<Lock>,
}

impl Lock {
    /// True when `self` keeps `ask` (for `inode` on `node`) from being granted.
    fn blocks(&self, node: u32, inode: usize, ask: &Ask, write: bool) -> bool {
        self.node == node
            && self.inode == inode
            && self.flock == ask.flock
            && self.owner != ask.owner
            && self.start < ask.end
            && ask.start < self.end
            && (self.write || write)
    }
}

impl Locks {
    /// The first lock that keeps `ask` (a lock, not an unlock) from being granted.
    fn conflict(&self, node: u32, inode: usize, ask: &Ask, write: bool) -> Option<Lock> {
        self.held.iter().find(|l| l.blocks(node, inode, ask, write)).copied()
    }

    /// Applies `ask` (granted): the owner's locks over its range are cut out, then the new one
    /// is added (none for an unlock). True when some lock was given up.
    fn apply(&mut self, node: u32, inode: usize, ask: &Ask) -> bool {
        let mut kept = Vec::with_capacity(self.held.len() + 1);
        let mut freed = false;
        for l in self.held.drain(..) {
            let mine = l.node == node
                && l.inode == inode
                && l.owner == ask.owner
                && l.flock == ask.flock
                && l.start < ask.end
                && ask.start < l.end;
            if !mine {
                kept.push(l);
                continue;
            }
            freed |= ask.write.is_none() || l.write && ask.write == Some(false);
            if l.start < ask.start {
                kept.push(Lock { end: ask.start, ..l });
            }
            if ask.end < l.end {
                kept.push(Lock { start: ask.end, ..l });
            }
        }
        if let Some(write) = ask.write {
            let Ask { owner, flock, start, end, .. } = *ask;
            kept.push(Lock { node, inode, owner, flock, write, start, end });
        }
        self.held = kept;
        freed
    }

    /// Drops the locks `pick` selects; answers the (node, inode) pairs that lost one.
    fn drop_where(&mut self, pick: impl Fn(&Lock) -> bool) -> Vec<(u32, usize)> {
        let mut gone: Vec<(u32, usize)> = Vec::new();
        self.held.retain(|l| {
            let drop = pick(l);
            if drop && !gone.contains(&(l.node, l.inode)) {
                gone.push((l.node, l.inode));
            }
            !drop
        });
        gone
    }
}

impl World<'_> {
    /// A lock request on `inode` of `c`'s node: granted (0), refused (`EAGAIN`), or the
    /// thread waits (`wait`) until some lock of the file goes, then answers `TOUCHED` for the
    /// shim to ask again.
    pub(super) fn lock_request(&mut self, c: Caller, inode: usize, ask: Ask, wait: bool) -> Reply {
        if let Some(write) = ask.write {
            if self.disks.locks.conflict(c.node, inode, &ask, write).is_some() {
                if wait {
                    return Reply::Block(Wait::DiskLock { node: c.node, inode });
                }
                return Reply::Ret(-(libc::EAGAIN as i64));
            }
        }
        if self.disks.locks.apply(c.node, inode, &ask) {
            self.wake_lock_waiters(c.node, inode);
        }
        Reply::Ret(0)
    }

    /// `F_GETLK`: the first lock that would keep `ask` from being granted, as (write, start,
    /// length (0: to the end), virtual pid of its process or -1 for a description's).
    pub(super) fn lock_query(
        &self,
        c: Caller,
        inode: usize,
        ask: &Ask,
    ) -> Option<(bool, u64, u64, i64)> {
        let l = self.disks.locks.conflict(c.node, inode, ask, ask.write.unwrap_or(false))?;
        let len = if l.end == u64::MAX { 0 } else { l.end - l.start };
        let pid = match l.owner {
            Owner::Process(table) => {
                self.procs.iter().rev().find(|p| p.table == table).map_or(-1, |p| p.vpid as i64)
            }
            Owner::Description(_) => -1,
        };
        Some((l.write, l.start, len, pid))
    }

    /// Descriptor `fd` of `c.node`'s current process, a file with `inode`, was closed, and with
    /// it its description when `last`: the process's record locks on the file go, and the
    /// description's locks when it went.
    pub(super) fn locks_closed(
        &mut self,
        node: u32,
        table: u32,
        inode: usize,
        desc: Option<ObjId>,
    ) {
        let gone = self.disks.locks.drop_where(|l| {
            l.node == node
                && (l.owner == Owner::Process(table) && l.inode == inode
                    || desc.is_some_and(|d| l.owner == Owner::Description(d)))
        });
        for (n, i) in gone {
            self.wake_lock_waiters(n, i);
        }
    }

    /// Node `node` crashed: its locks are gone with its processes.
    pub(super) fn locks_crashed(&mut self, node: u32) {
        self.disks.locks.drop_where(|l| l.node == node);
    }

    /// Threads waiting for a lock of `inode` on `node` look again.
    fn wake_lock_waiters(&mut self, node: u32, inode: usize) {
        for j in 0..self.threads.len() {
            if self.threads[j].wait == (Wait::DiskLock { node, inode }) {
                self.answer(j, TOUCHED);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(owner: Owner, write: Option<bool>, start: u64, end: u64) -> Ask {
        Ask { owner, flock: false, write, start, end }
    }

    #[test]
    fn ranges_conflict_only_where_they_overlap_and_one_writes() {
        let (a, b) = (Owner::Process(1), Owner::Process(2));
        let mut locks = Locks::default();
        locks.apply(0, 7, &ask(a, Some(true), 0, 10));
        assert!(locks.conflict(0, 7, &ask(b, Some(false), 5, 6), false).is_some());
        assert!(locks.conflict(0, 7, &ask(b, Some(true), 10, 20), true).is_none());
        assert!(locks.conflict(0, 8, &ask(b, Some(true), 0, 10), true).is_none(), "another file");
        assert!(locks.conflict(0, 7, &ask(a, Some(true), 0, 10), true).is_none(), "its own");
        // Unlocking the middle leaves two pieces.
        assert!(locks.apply(0, 7, &ask(a, None, 3, 6)));
        assert!(locks.conflict(0, 7, &ask(b, Some(true), 3, 6), true).is_none());
        assert!(locks.conflict(0, 7, &ask(b, Some(true), 0, 4), true).is_some());
        assert!(locks.conflict(0, 7, &ask(b, Some(true), 8, 9), true).is_some());
        // A flock lock does not meet record locks.
        let f = Ask {
            owner: Owner::Description((0, 1)),
            flock: true,
            write: Some(true),
            start: 0,
            end: u64::MAX,
        };
        assert!(locks.conflict(0, 7, &f, true).is_none());
    }

    #[test]
    fn shared_locks_share_until_one_writes() {
        let mut locks = Locks::default();
        locks.apply(0, 1, &ask(Owner::Process(1), Some(false), 0, u64::MAX));
        assert!(locks.conflict(0, 1, &ask(Owner::Process(2), Some(false), 0, 1), false).is_none());
        assert!(locks.conflict(0, 1, &ask(Owner::Process(2), Some(true), 0, 1), true).is_some());
        // Downgrading a write lock to a read one frees waiting readers.
        let mut w = Locks::default();
        w.apply(0, 1, &ask(Owner::Process(1), Some(true), 0, 5));
        assert!(w.apply(0, 1, &ask(Owner::Process(1), Some(false), 0, 5)));
    }
}
