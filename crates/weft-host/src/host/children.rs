//! Child processes: `fork` (the child is a simulated process on its parent's node, on a fresh
//! slot, with the next virtual pid), a new image after `exec` (same process, same pid, its
//! other threads gone), `waitpid` and a child's end in virtual time, `kill` between the
//! processes of a node, and signals raised for a process (handed to the next of its threads
//! that runs; a sleep or poll they would interrupt on Linux ends with `EINTR`).
//!
//! A forked child is the program's child, not the host's: the host watches it through a pidfd
//! and the parent reaps it for real once the host says it ended (so that cannot block).

use super::*;
use std::os::fd::FromRawFd;

/// Virtual pids of forked children and restarted nodes: `CHILD_PID_BASE + ` the process's
/// index in the run (the same in every run; above the nodes' `1000 + id` and the threads'
/// `10000 + slot`).
const CHILD_PID_BASE: u32 = 20_000;

impl World<'_> {
    /// Answers a process's (or a new image's) hello in thread `t`'s slot: its random seed, its
    /// virtual pid and its parent's, its node, and the real time the run began.
    pub(super) fn answer_hello(&mut self, t: usize) {
        let p = self.threads[t].proc;
        let drawn = self.decisions.at(Site::seed(p as u32)).choose(u64::MAX);
        let seed = derive_seed(drawn, self.procs[p].vpid as u64);
        let ppid = self.procs[p].parent.map_or(1, |q| self.procs[q].vpid);
        let s = self.slot(t);
        // SAFETY: the thread waits for TURN_THREAD; the host owns the slot fields.
        unsafe {
            (*s).args[0] = seed as i64;
            (*s).args[1] = self.procs[p].vpid as i64;
            (*s).args[2] = ppid as i64;
            (*s).args[3] = self.procs[p].node as i64;
            (*s).args[4] = self.started;
            (*s).ret = 0;
        }
        self.threads[t].wait = Wait::Ready;
    }

    /// A hello from a thread that already runs: its process replaced its image (`exec`). The
    /// kernel ended the process's other threads.
    pub(super) fn op_exec_hello(&mut self, c: Caller, _slot: &mut Slot) -> Reply {
        for (j, x) in self.threads.iter_mut().enumerate() {
            if x.proc == c.p && j != c.t {
                x.wait = Wait::Gone;
            }
        }
        // As exec does: handlers back to default (ignored stays ignored), mask kept.
        self.procs[c.p].sig.exec();
        // The new image has none of the old one's mappings.
        self.unmap_table(self.procs[c.p].table);
        let vpid = self.procs[c.p].vpid;
        self.event(c.node, EventKind::Note, None, None, vpid as u64, || format!("{vpid} exec"));
        self.answer_hello(c.t);
        Reply::Settled
    }

    /// A virtual pid no process of the run has had: from the process's index in the run.
    pub(super) fn fresh_pid(&self) -> u32 {
        CHILD_PID_BASE + self.procs.len() as u32
    }

    pub(super) fn op_fork(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let Some(k) = self.free_slot() else { return Reply::Ret(-(libc::EAGAIN as i64)) };
        let Ok(out) = self.procs[c.p].out.try_clone() else {
            return Reply::Ret(-(libc::EAGAIN as i64));
        };
        self.region.reset_slot(k);
        let vpid = self.fresh_pid();
        self.procs.push(Proc {
            node: c.node,
            pid: 0,
            vpid,
            out,
            partial: Vec::new(),
            alive: false,
            steps: 0,
            parent: Some(c.p),
            pidfd: None,
            zombie: false,
            sig: self.procs[c.p].sig.forked(),
            announced: None,
            table: fds::CHILD_TABLE_BASE + self.procs.len() as u32,
        });
        let q = self.procs.len() - 1;
        let (parent, child) = (self.procs[c.p].table, self.procs[q].table);
        self.fds.fork_table(c.node, parent, child);
        self.disks.maps.fork(parent, child);
        // The child's thread keeps the forking thread's mask, with nothing pending.
        let sig = signals::ThreadSignals::inherit(&self.threads[c.t].sig);
        self.threads.push(Thread {
            proc: q,
            slot: k,
            wait: Wait::Hello,
            sig,
            cpu: busy::Cpu::default(),
        });
        slot.args[1] = vpid as i64;
        Reply::Ret(k as i64)
    }

    /// The parent forked (or failed to): wait for the child's hello, in real time, as for a
    /// node's start; answer the child's virtual pid.
    pub(super) fn op_forked(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let k = slot.args[1] as usize;
        let Some(tq) = self.threads.iter().rposition(|x| {
            x.slot == k && x.wait == Wait::Hello && self.procs[x.proc].parent == Some(c.p)
        }) else {
            return Reply::Ret(-(libc::EINVAL as i64));
        };
        let q = self.threads[tq].proc;
        let pid = slot.args[0];
        if pid <= 0 {
            self.threads[tq].wait = Wait::Gone;
            self.close_process_fds(q);
            return Reply::Ret(pid);
        }
        let vpid = self.procs[q].vpid;
        // SAFETY: pidfd_open on the child's pid: it exists (it waits for its hello's answer).
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
        if fd < 0 {
            self.fail(Outcome::Unsupported {
                detail: format!("node {}: fork(): pidfd_open failed on this kernel", c.node),
            });
            return Reply::Settled;
        }
        // SAFETY: a fresh fd we own.
        self.procs[q].pidfd = Some(unsafe { OwnedFd::from_raw_fd(fd as i32) });
        self.procs[q].pid = pid as libc::pid_t;
        self.procs[q].alive = true;
        let parent = self.procs[c.p].vpid;
        self.event(c.node, EventKind::Start, None, None, vpid as u64, || {
            format!("{parent} forked {vpid}")
        });
        match self.wait_for_request(tq) {
            Resumed::Request(OP_HELLO) => self.answer_hello(tq),
            Resumed::Died(status) => self.died(q, status),
            Resumed::Request(_) | Resumed::Stalled | Resumed::Spinning(_) => {
                self.fail(Outcome::Unsupported {
                    detail: format!("node {}: a forked child never said hello", c.node),
                });
                return Reply::Settled;
            }
        }
        Reply::Ret(vpid as i64)
    }

    /// A forked child ended with wait status `status`: its parent can wait for it and gets
    /// `SIGCHLD`; its own children are orphans (reaped by init, not waitable by anyone in the
    /// run).
    pub(super) fn child_ended(&mut self, p: usize, status: i32) {
        let node = self.procs[p].node;
        let vpid = self.procs[p].vpid;
        let code = self.procs[p].announced.unwrap_or(-1);
        self.event(node, EventKind::Note, None, None, code as u64, || {
            format!("{vpid} ended (announced status {code})")
        });
        if let Some(q) = self.procs[p].parent {
            self.procs[p].zombie = true;
            let vpid = vpid as i32;
            let (code, status) = if libc::WIFSIGNALED(status) {
                let dumped = libc::WCOREDUMP(status);
                (if dumped { libc::CLD_DUMPED } else { libc::CLD_KILLED }, libc::WTERMSIG(status))
            } else {
                (libc::CLD_EXITED, libc::WEXITSTATUS(status))
            };
            let info =
                SigInfo { signo: libc::SIGCHLD, code, pid: vpid, status, ..SigInfo::default() };
            self.send_signal(q, None, info);
        }
    }

    /// Process `p` is gone: its children lose their parent.
    pub(super) fn orphan_children(&mut self, p: usize) {
        for x in self.procs.iter_mut().filter(|x| x.parent == Some(p)) {
            x.parent = None;
            x.zombie = false;
        }
    }

    /// The answer to a wait of process `p` for `sel` (a virtual pid, or -1: any), if it has
    /// one now: a child that ended (oldest first; reaped unless `nowait`, its real pid in
    /// `args[1]`), or -ECHILD when no child matches. None: keep waiting.
    pub(super) fn wait_result(
        &mut self,
        p: usize,
        sel: i64,
        nowait: bool,
        slot: &mut Slot,
    ) -> Option<i64> {
        let matches = |x: &Proc| x.parent == Some(p) && (sel < 0 || x.vpid as i64 == sel);
        if !self.procs.iter().any(|x| matches(x) && (x.alive || x.zombie)) {
            return Some(-(libc::ECHILD as i64));
        }
        let z = self.procs.iter().position(|x| matches(x) && x.zombie)?;
        slot.args[1] = self.procs[z].pid as i64;
        if !nowait {
            self.procs[z].zombie = false;
            self.procs[z].parent = None;
        }
        Some(self.procs[z].vpid as i64)
    }

    pub(super) fn op_wait(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let (sel, nohang, nowait) = (slot.args[0], slot.args[1] != 0, slot.args[2] != 0);
        match self.wait_result(c.p, sel, nowait, slot) {
            Some(r) => Reply::Ret(r),
            None if nohang => Reply::Ret(0),
            None => Reply::Block(Wait::Child { sel, nowait }),
        }
    }

    /// SIGKILL: the process ends now (in virtual time); waits in real time until it is gone.
    pub(super) fn kill_now(&mut self, q: usize) {
        // SAFETY: signalling a process of the run (ours, or a child of one of ours).
        unsafe { libc::kill(self.procs[q].pid, libc::SIGKILL) };
        #[allow(clippy::disallowed_methods)] // real-time bound on a process's exit path
        let started = std::time::Instant::now();
        loop {
            if let Some(status) = self.try_reap(q) {
                self.died(q, status);
                return;
            }
            if started.elapsed().as_secs() >= WALL_STALL_SECS {
                self.mark_gone(q);
                return;
            }
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
    }
}
