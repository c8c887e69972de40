//! Processes: starting a node, reading its output, its exit or death and what that means for
//! the run, killing them all at the end, and the report of a call the shim cannot simulate.

use super::*;

impl World<'_> {
    /// The virtual pid of node `node`'s process as it starts now: [`virtual_pid`] the first
    /// time, a fresh one after a restart (as the kernel gives; a pid file left by the crashed
    /// incarnation then names no live process, so `kill(pid, 0)` says ESRCH).
    fn incarnation_pid(&self, node: u32) -> u32 {
        let first = virtual_pid(node);
        let started = self.procs.iter().any(|p| p.node == node && p.vpid == first);
        if started {
            self.fresh_pid()
        } else {
            first
        }
    }

    /// Spawns node `node` and waits for its hello (the process then waits for the baton).
    pub(super) fn start(&mut self, node: u32) -> io::Result<()> {
        let slot = node as usize;
        self.region.reset_slot(slot);
        let launch = self.cfg.launch(node);
        let vpid = self.incarnation_pid(node);
        let spawned = spawn::spawn(&SpawnSpec {
            launch: &launch,
            shim: self.shim,
            region_fd: self.region.fd(),
            slot,
            cpu: self.cpu,
            netns: self.netns,
            all_users: self.all_users,
            ip: self.cfg.node_ip(node),
            hosts: self.hosts.as_ref(),
            ld_cache: self.ld_cache.as_ref(),
        })?;
        self.procs.push(Proc {
            node,
            pid: spawned.pid,
            vpid,
            out: spawned.out,
            partial: Vec::new(),
            alive: true,
            steps: 0,
            sig: Default::default(),
            parent: None,
            pidfd: None,
            zombie: false,
            announced: None,
            table: node,
        });
        let p = self.procs.len() - 1;
        self.threads.push(Thread {
            proc: p,
            slot,
            wait: Wait::Hello,
            sig: Default::default(),
            cpu: busy::Cpu::default(),
        });
        let t = self.threads.len() - 1;
        self.event(node, EventKind::Start, None, None, 0, || {
            format!("start {} as {}", launch.program.display(), format_ip(self.cfg.node_ip(node)))
        });
        match self.wait_for_request(t) {
            Resumed::Request(OP_HELLO) => self.answer_hello(t),
            Resumed::Request(op) => self.handle(t, op),
            Resumed::Died(status) => {
                self.died(p, status);
                self.fail(Outcome::Unsupported {
                    detail: format!(
                        "node {node} ended before the shim made contact (is it setuid, or \
                         does it not load libc dynamically?)"
                    ),
                });
            }
            Resumed::Stalled => self.fail(Outcome::Unsupported {
                detail: format!(
                    "node {node} never contacted the host within {WALL_STALL_SECS}s: the shim \
                     did not load"
                ),
            }),
            Resumed::Spinning(place) => self.fail(Outcome::Unsupported {
                detail: format!(
                    "node {node} spins before the shim made contact (the shim did not load?): \
                     {place}"
                ),
            }),
        }
        Ok(())
    }

    /// The wait status of `p` if it has ended. A forked child is not ours to reap (its parent
    /// does): its pidfd tells that it ended, its announced status what it was.
    pub(super) fn try_reap(&mut self, p: usize) -> Option<i32> {
        if let Some(fd) = &self.procs[p].pidfd {
            let mut pfd = libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
            // SAFETY: polling our own pidfd without blocking.
            let ready = unsafe { libc::poll(&mut pfd, 1, 0) } > 0;
            return ready.then(|| self.ended_status(p));
        }
        let mut status = 0;
        let r = spawn::reap(self.procs[p].pid, &mut status, libc::WNOHANG);
        (r == self.procs[p].pid).then_some(status)
    }

    /// How forked child `p`, which has ended, did: the kernel's wait status, read from its
    /// `/proc/<pid>/stat` while it is a zombie its real parent (the node's process that forked
    /// it) has not reaped; else the status it announced (an exit code).
    fn ended_status(&self, p: usize) -> i32 {
        let path = format!("/proc/{}/stat", self.procs[p].pid);
        let stat = std::fs::read_to_string(path).unwrap_or_default();
        // The fields after the name; the 52nd field, `exit_code`, is the 50th of them.
        let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        let zombie = after.split_whitespace().next() == Some("Z");
        match after.split_whitespace().nth(49).and_then(|f| f.parse().ok()) {
            Some(status) if zombie => status,
            _ => (self.procs[p].announced.unwrap_or(0).clamp(0, 255) as i32) << 8,
        }
    }

    /// Reads everything `p` has written so far and turns complete lines into output events.
    /// Called at every hand-off, so it reads straight into `partial`'s spare capacity (no
    /// buffer to clear) and usually costs one `read` that finds the pipe empty.
    pub(super) fn drain(&mut self, p: usize) {
        let proc = &mut self.procs[p];
        loop {
            proc.partial.reserve(8192);
            let spare = proc.partial.spare_capacity_mut();
            // SAFETY: reading at most `spare.len()` bytes into the vector's spare capacity from
            // our non-blocking pipe end.
            let n =
                unsafe { libc::read(proc.out.as_raw_fd(), spare.as_mut_ptr().cast(), spare.len()) };
            if n <= 0 {
                break;
            }
            let len = proc.partial.len() + n as usize;
            // SAFETY: `read` initialised the first `n` bytes of the spare capacity.
            unsafe { proc.partial.set_len(len) };
        }
        while let Some(i) = self.procs[p].partial.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.procs[p].partial.drain(..=i).collect();
            self.emit_line(p, &line[..line.len() - 1]);
        }
    }

    /// What process `p` printed after its last newline, as it ends: natively it shares its
    /// terminal with the process that forked it, which goes on with the same line
    /// (`printf abc | cat; echo def` prints `abcdef`), so a live parent's output continues it;
    /// without one it is a line of its own.
    fn finish_output(&mut self, p: usize) {
        if self.procs[p].partial.is_empty() {
            return;
        }
        let rest = std::mem::take(&mut self.procs[p].partial);
        match self.procs[p].parent.filter(|&q| self.procs[q].alive) {
            Some(q) => {
                self.drain(q);
                self.procs[q].partial.extend_from_slice(&rest);
            }
            None => self.emit_line(p, &rest),
        }
    }

    pub(super) fn emit_line(&mut self, p: usize, bytes: &[u8]) {
        let node = self.procs[p].node;
        let text = String::from_utf8_lossy(bytes).into_owned();
        let mut h = StableHasher::new();
        h.write(bytes);
        let t = super::history::summary(&text);
        self.event(node, EventKind::Observe, None, None, h.finish(), || t);
        if let Some(pattern) = &self.cfg.forbid {
            if text.contains(pattern.as_str()) {
                let detail = format!("node {node} printed `{text}` at {}", self.now);
                let d = detail.clone();
                self.event(node, EventKind::Violation, None, None, 0, || {
                    format!("no_forbidden_output: {d}")
                });
                self.fail(Outcome::SafetyViolation {
                    property: "no_forbidden_output".into(),
                    detail,
                });
            }
        }
        self.lines.push(OutputLine { time: self.now, node, text });
    }

    /// A process ended (`status` from waitpid).
    pub(super) fn died(&mut self, p: usize, status: i32) {
        self.drain(p);
        self.finish_output(p);
        let node = self.procs[p].node;
        self.mark_gone(p);
        self.orphan_children(p);
        self.close_process_fds(p);
        if self.procs[p].pidfd.is_some() {
            // A forked child: its status is its parent's business, not the run's.
            self.child_ended(p, status);
            return;
        }
        if libc::WIFEXITED(status) {
            let code = libc::WEXITSTATUS(status);
            self.event(node, EventKind::Note, None, None, code as u64, || format!("exit {code}"));
            if !self.cfg.exit_ok(node, code) {
                let limit = self.cfg.limit_outcome(node, self.procs[p].pid, status, self.now);
                self.fail(limit.unwrap_or(Outcome::TargetCrashed {
                    detail: format!("node {node} exited with status {code} at {}", self.now),
                }));
            }
        } else if libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGSYS {
            // The seccomp trap fired while the program had SIGSYS blocked or ignored, so the
            // kernel killed it instead of letting the shim report the call.
            self.event(node, EventKind::Crash, None, None, libc::SIGSYS as u64, || {
                "killed by SIGSYS".into()
            });
            self.fail(Outcome::Unsupported {
                detail: format!(
                    "node {node} made a raw system call the shim traps while SIGSYS was blocked \
                     or ignored (killed by SIGSYS at {})",
                    self.now
                ),
            });
        } else if libc::WIFSIGNALED(status) {
            let sig = libc::WTERMSIG(status);
            self.event(node, EventKind::Crash, None, None, sig as u64, || {
                format!("killed by {}", signal_name(sig))
            });
            let limit = self.cfg.limit_outcome(node, self.procs[p].pid, status, self.now);
            self.fail(limit.unwrap_or(Outcome::TargetCrashed {
                detail: format!("node {node} was killed by {} at {}", signal_name(sig), self.now),
            }));
        }
    }

    /// Closes every descriptor of process `p`, as the kernel does at exit (a connected stream
    /// whose last descriptor this was ends with a FIN), and ends its shared file mappings.
    pub(super) fn close_process_fds(&mut self, p: usize) {
        let node = self.procs[p].node;
        let was = self.fds.enter(node, self.procs[p].table);
        for fd in self.fds.fds_of(node) {
            self.close_fd(node, fd);
        }
        self.fds.enter(node, was);
        self.unmap_table(self.procs[p].table);
    }

    /// `OP_VIRTUAL_PID`: the virtual pid of the run's process with real pid `args[0]`, or 0.
    /// A group or session id is its leader's pid (a node's program leads its own, see
    /// `spawn::fresh_process_state`).
    pub(super) fn op_virtual_pid(&mut self, _c: Caller, slot: &mut Slot) -> Reply {
        Reply::Ret(self.virtual_id(slot.args[0] as libc::pid_t))
    }

    /// The virtual pid for the kernel's pid `real` (the latest process with it: a sender may
    /// have exited since it sent its credentials, a group's leader since it made the group),
    /// or 0.
    pub(super) fn virtual_id(&self, real: libc::pid_t) -> i64 {
        let p = self.procs.iter().rev().find(|p| p.pid == real && real > 0);
        p.map_or(0, |p| p.vpid as i64)
    }

    /// The virtual id of process `p`'s group (0 once it cannot be read: the process ended).
    pub(super) fn virtual_group(&self, p: usize) -> i64 {
        // SAFETY: a query on a process of the run.
        let real = unsafe { libc::getpgid(self.procs[p].pid) };
        if real <= 0 {
            return 0;
        }
        self.virtual_id(real)
    }

    /// `OP_REAL_PID`: the real pid of the caller's node's process with virtual pid
    /// `args[0]`, or 0 (none, or another node's: nodes are separate machines).
    pub(super) fn op_real_pid(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let want = slot.args[0];
        let p = self.procs.iter().rev().find(|p| p.node == c.node && p.vpid as i64 == want);
        Reply::Ret(p.map_or(0, |p| p.pid as i64))
    }

    /// The process announced its exit: wait (in real time, nothing else runs) until it is gone.
    pub(super) fn await_exit(&mut self, p: usize) {
        #[allow(clippy::disallowed_methods)] // real-time bound on a process's exit path
        let started = std::time::Instant::now();
        loop {
            self.drain(p);
            if let Some(status) = self.try_reap(p) {
                self.died(p, status);
                return;
            }
            if started.elapsed().as_secs() >= WALL_STALL_SECS {
                // SAFETY: killing our own child.
                unsafe { libc::kill(self.procs[p].pid, libc::SIGKILL) };
            }
            std::thread::sleep(std::time::Duration::from_micros(20));
        }
    }

    /// Process `p` no longer exists, nor do its threads.
    pub(super) fn mark_gone(&mut self, p: usize) {
        self.procs[p].alive = false;
        self.drop_timers(p);
        for t in self.threads.iter_mut().filter(|t| t.proc == p) {
            t.wait = Wait::Gone;
        }
    }

    pub(super) fn kill_all(&mut self) {
        for p in 0..self.procs.len() {
            if self.procs[p].alive {
                self.kill_process(p);
            }
        }
    }

    /// Kills process `p` for real (the run or its node ends), reaping it if it is ours; a
    /// forked child is left to its parent or to init.
    pub(super) fn kill_process(&mut self, p: usize) {
        let mut status = 0;
        // SAFETY: killing a process of the run, reaping only our own child.
        unsafe {
            libc::kill(self.procs[p].pid, libc::SIGKILL);
            if self.procs[p].pidfd.is_none() {
                libc::waitpid(self.procs[p].pid, &mut status, 0);
            }
        }
        self.mark_gone(p);
    }

    pub(super) fn op_exit(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        self.procs[c.p].announced = (slot.args[0] >= 0).then_some(slot.args[0]);
        self.await_exit(c.p);
        Reply::Settled
    }

    /// Process `p` for a report: its node, its command name (the kernel's `comm`, which an
    /// exec changes) and its virtual pid — in a node of many processes, which one it was.
    pub(super) fn who(&self, p: usize) -> String {
        let proc = &self.procs[p];
        let comm = std::fs::read_to_string(format!("/proc/{}/comm", proc.pid));
        match comm.as_deref().map(str::trim_end) {
            Ok(name) if !name.is_empty() => {
                format!("node {} ({name}, pid {})", proc.node, proc.vpid)
            }
            _ => format!("node {} (pid {})", proc.node, proc.vpid),
        }
    }

    /// The shim met a call it cannot simulate: the run ends `Unsupported`, naming it.
    pub(super) fn op_unsupported(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let node = c.node;
        let len = (slot.len as usize).min(DATA_MAX);
        let what = String::from_utf8_lossy(&slot.data[..len]).into_owned();
        let detail = format!("{}: {what}", self.who(c.p));
        self.event(node, EventKind::Note, None, None, slot.args[0] as u64, || {
            format!("unsupported: {what}")
        });
        self.fail(Outcome::Unsupported { detail });
        // The whole node goes: the process does not wait for an answer, nor should its family.
        for p in 0..self.procs.len() {
            if self.procs[p].alive && self.procs[p].node == node {
                self.kill_process(p);
            }
        }
        Reply::Settled
    }

    pub(super) fn op_unknown(&mut self, c: Caller, op: u32) -> Reply {
        self.fail(Outcome::Unsupported {
            detail: format!("node {}: unknown request {op} (shim/host mismatch)", c.node),
        });
        Reply::Settled
    }
}

pub(super) fn signal_name(sig: i32) -> String {
    // SAFETY: strsignal returns a static or thread-local NUL-terminated string.
    let p = unsafe { libc::strsignal(sig) };
    if p.is_null() {
        return format!("signal {sig}");
    }
    // SAFETY: non-null NUL-terminated string from libc.
    let s = unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy().into_owned();
    format!("signal {sig} ({s})")
}

/// What the threads of a stalled process are doing in the kernel (from /proc), for the report.
pub(super) fn blocked_in(pid: libc::pid_t) -> String {
    let mut calls = Vec::new();
    if let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for task in dir.flatten() {
            let text = std::fs::read_to_string(task.path().join("syscall")).unwrap_or_default();
            let call = match text.split_whitespace().next() {
                Some("running") => "running user code (a busy loop?)".to_string(),
                Some("202") => "blocked in futex (a lock the shim does not see?)".to_string(),
                Some(n) => format!("blocked in system call {n}"),
                None => continue,
            };
            if !calls.contains(&call) {
                calls.push(call);
            }
        }
    }
    if calls.is_empty() {
        "state unknown".into()
    } else {
        calls.join("; ")
    }
}
