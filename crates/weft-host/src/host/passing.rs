//! Descriptors passed between a node's processes over a socketpair (`SCM_RIGHTS`). The kernel
//! carries the descriptors themselves (the shim sends the real placeholders over the real
//! socketpair, with the batch's number); the host carries what they are: a passed simulated
//! descriptor is one more reference to its object while in flight, and becomes a descriptor of
//! the receiving process, referring to that same object, when a read takes the bytes it was
//! sent with. A sender stages its batch (`OP_PASS`), and the next bytes it writes to that
//! socket carry it; a read that starts at them takes it, and the receiver adopts each
//! descriptor at the number the kernel gave it (`OP_ADOPT`) or drops it. Over a real socket
//! (a named `AF_UNIX` one: Python's multiprocessing forkserver) the kernel carries the batch's
//! number too, in a marker descriptor beside the others (`weft-shim/src/passreal.rs`), so the
//! batch is only registered, not staged.

use super::fds::ObjId;
use super::*;

/// Batches of passed descriptors, by number, and the batch each thread has staged.
#[derive(Default)]
pub(super) struct Passing {
    batches: BTreeMap<u64, Vec<Option<ObjId>>>,
    staged: BTreeMap<usize, (i32, u64)>,
    next: u64,
}

impl World<'_> {
    /// `OP_PASS`: stages the `args[1]` descriptors in `data` (i32 each) to go with the next
    /// bytes written to socket `args[0]` (answer the batch's number; `args[2]` = 1: only
    /// registers it, the kernel carries its number), or (`args[1]` = -1) drops batch `args[3]`
    /// (0: the staged one; the send failed).
    pub(super) fn op_pass(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        if slot.args[1] < 0 {
            let batch = match slot.args[3] {
                0 => self.passing.staged.remove(&c.t).map(|s| s.1),
                b => Some(b as u64),
            };
            if let Some(batch) = batch {
                self.release_batch(batch);
            }
            return Reply::Ret(0);
        }
        let n = (slot.args[1] as usize).min(DATA_MAX / 4);
        let objs: Vec<Option<ObjId>> = (0..n)
            .map(|i| {
                let fd = i32::from_le_bytes(slot.data[i * 4..i * 4 + 4].try_into().expect("4"));
                let id = self.fds.id(c.node, fd);
                if let Some(id) = id {
                    self.fds.hold(id);
                }
                id
            })
            .collect();
        self.passing.next += 1;
        let batch = self.passing.next;
        self.passing.batches.insert(batch, objs);
        if slot.args[2] == 1 {
            return Reply::Ret(batch as i64);
        }
        if let Some((_, old)) = self.passing.staged.insert(c.t, (slot.args[0] as i32, batch)) {
            self.release_batch(old);
        }
        Reply::Ret(batch as i64)
    }

    /// After thread `t` wrote `n` bytes (n > 0) to `fd`: its staged batch goes with them.
    pub(super) fn attach_staged(&mut self, t: usize, node: u32, fd: i32, n: usize) {
        if self.passing.staged.get(&t).is_none_or(|s| s.0 != fd) {
            return;
        }
        let (_, batch) = self.passing.staged.remove(&t).expect("staged");
        match self.local_tx(node, fd) {
            Some(tx) => self.pipes.mark(tx, n, batch),
            None => self.release_batch(batch),
        }
    }

    /// `OP_ADOPT`: batch `args[0]` arrived; its `i`th descriptor is adopted at the number in
    /// `data` (i32 each, `args[1]` of them; -1 or missing: dropped). Answers in `data` (a byte
    /// each) what each adopted one is (`Fds::kind_code`; 0: not simulated).
    pub(super) fn op_adopt(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let Some(objs) = self.passing.batches.remove(&(slot.args[0] as u64)) else {
            return Reply::Ret(-(libc::EINVAL as i64));
        };
        if objs.iter().flatten().any(|id| id.0 != c.node) {
            // Sent from another node (over a real socket): its objects live there.
            objs.into_iter().flatten().for_each(|id| self.release_obj(id));
            return Reply::Ret(-(libc::EXDEV as i64));
        }
        let given = (slot.args[1].max(0) as usize).min(objs.len());
        let fds: Vec<i32> = (0..given)
            .map(|i| i32::from_le_bytes(slot.data[i * 4..i * 4 + 4].try_into().expect("4")))
            .collect();
        for (i, obj) in objs.into_iter().enumerate() {
            let fd = fds.get(i).copied().unwrap_or(-1);
            slot.data[i] = 0;
            match obj {
                Some(id) if fd >= 0 => {
                    self.close_fd(c.node, fd);
                    self.fds.adopt(c.node, fd, id);
                    slot.data[i] = self.fds.kind_code(id);
                }
                Some(id) => self.release_obj(id),
                None => {}
            }
        }
        Reply::Ret(0)
    }

    fn release_batch(&mut self, batch: u64) {
        for id in self.passing.batches.remove(&batch).unwrap_or_default().into_iter().flatten() {
            self.release_obj(id);
        }
    }

    fn release_obj(&mut self, id: ObjId) {
        if let Some(obj) = self.fds.release(id) {
            self.local_closed(obj);
        }
    }

    /// Releases the batches whose pipe went before a read took them.
    pub(super) fn release_unread(&mut self) {
        for batch in std::mem::take(&mut self.pipes.unread) {
            self.release_batch(batch);
        }
    }
}
