//! The node's processes as its `/proc` shows them (`OP_PROCS`, `OP_PROC_INFO`): virtual pids,
//! parents, groups and sessions, and which have ended unwaited. The shim builds the listing
//! and the `stat` files from these, so `ps`, `pgrep` and a `/proc/$pid` check see the node's
//! processes by the pids `getpid` and `fork` answered, not the kernel's.

use super::*;

impl World<'_> {
    /// The caller's node's processes that `/proc` lists: running, or zombies.
    fn listed(&self, node: u32) -> Vec<usize> {
        let shown = |p: &Proc| p.node == node && (p.alive || p.zombie);
        (0..self.procs.len()).filter(|&p| shown(&self.procs[p])).collect()
    }

    /// The listed process of the caller's node with virtual pid `vpid` (the newest, should a
    /// pid have been used again).
    pub(super) fn listed_by_vpid(&self, node: u32, vpid: i64) -> Option<usize> {
        self.listed(node).into_iter().rfind(|&p| self.procs[p].vpid as i64 == vpid)
    }

    /// `OP_PROCS`: the listed processes' virtual pids, ascending, in `data`.
    pub(super) fn op_procs(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let mut pids: Vec<u32> =
            self.listed(c.node).into_iter().map(|p| self.procs[p].vpid).collect();
        pids.sort_unstable();
        pids.dedup();
        let fit = pids.len().min(DATA_MAX / 4);
        for (k, pid) in pids[..fit].iter().enumerate() {
            slot.data[k * 4..k * 4 + 4].copy_from_slice(&pid.to_ne_bytes());
        }
        Reply::Ret(fit as i64)
    }

    /// `OP_PROC_INFO`: the real pid of the listed process with virtual pid `args[0]` (0: none),
    /// its parent's, group's and session's virtual ids, and whether it is a zombie.
    pub(super) fn op_proc_info(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let Some(p) = self.listed_by_vpid(c.node, slot.args[0]) else {
            return Reply::Ret(0);
        };
        let parent = self.procs[p].parent.map_or(1, |q| self.procs[q].vpid);
        // SAFETY: a query on a process of the run.
        let sid = unsafe { libc::getsid(self.procs[p].pid) };
        slot.args[1] = parent as i64;
        slot.args[2] = self.virtual_group(p);
        slot.args[3] = if sid > 0 { self.virtual_id(sid) } else { 0 };
        slot.args[4] = self.procs[p].zombie as i64;
        Reply::Ret(self.procs[p].pid as i64)
    }
}
