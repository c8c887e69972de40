//! Injected faults on processes and links: when to inject one (a decision at each
//! opportunity), crashes, pauses, partitions, and their endings (restart, resume, heal).

use super::*;
use weft_sim::faults::node_list;

/// The end of an injected fault, due at a virtual time.
#[derive(Clone, Copy, Debug)]
pub(super) enum Timed {
    Start(u32),
    Restart(u32),
    Resume(u32),
    Reconnect(u32),
    Uncut(u32, u32),
    /// The end of split `World::splits[i]`.
    Unsplit(usize),
}

impl World<'_> {
    /// One fault opportunity (per scheduling step, in the fault phase). True if a fault was
    /// injected, so the caller re-evaluates who can run.
    pub(super) fn fault_opportunity(&mut self) -> bool {
        if self.healed || self.now < SimTime::ZERO + self.scenario.fault_start {
            return false;
        }
        let nodes = self.cfg.nodes as usize;
        // Once per hand-off: most runs (no fault rates, or budgets spent) stop here.
        if !weft_sim::faults::possible(self.scenario, &self.counts, nodes, &self.partitionable) {
            return false;
        }
        // Reused from step to step: this runs once per hand-off.
        let up = &mut self.up_scratch;
        up.clear();
        up.resize(nodes, false);
        for p in self.procs.iter().filter(|p| p.alive) {
            up[p.node as usize] = true;
        }
        let Some(fault) = weft_sim::faults::opportunity_among(
            self.scenario,
            &mut self.counts,
            up,
            &self.partitionable,
            self.decisions,
            &mut |_| true,
        ) else {
            return false;
        };
        let now = self.now;
        match fault {
            Fault::Crash { node, outage } => {
                self.crash(node);
                if let Some(d) = outage {
                    self.after(now + d, Timed::Restart(node));
                }
            }
            Fault::Pause { node, duration } => {
                self.paused[node as usize] = true;
                self.event(node, EventKind::Pause, None, None, duration.as_nanos(), || {
                    format!("paused for {duration}")
                });
                self.after(now + duration, Timed::Resume(node));
            }
            Fault::Isolate { node, duration } => {
                self.net.isolate(node, true);
                self.event(node, EventKind::Partition, None, None, duration.as_nanos(), || {
                    format!("isolated for {duration}")
                });
                self.after(now + duration, Timed::Reconnect(node));
            }
            Fault::CutLink { from, to, duration } => {
                self.net.set_cut(from, to, true);
                self.event(from, EventKind::Partition, Some(to), None, duration.as_nanos(), || {
                    format!("link n{from} -> n{to} cut for {duration}")
                });
                self.after(now + duration, Timed::Uncut(from, to));
            }
            Fault::Split { side, rest, duration } => {
                self.split(&side, &rest, true);
                let text =
                    format!("partition {} | {} for {duration}", node_list(&side), node_list(&rest));
                let first = side[0];
                self.event(first, EventKind::Partition, None, None, duration.as_nanos(), || text);
                self.splits.push((side, rest));
                self.after(now + duration, Timed::Unsplit(self.splits.len() - 1));
            }
        }
        true
    }

    /// Cuts (or restores) every link, both directions, between `side` and `rest`.
    fn split(&mut self, side: &[u32], rest: &[u32], cut: bool) {
        for &a in side {
            for &b in rest {
                self.net.set_cut(a, b, cut);
                self.net.set_cut(b, a, cut);
            }
        }
    }

    pub(super) fn after(&mut self, at: SimTime, what: Timed) {
        self.seq += 1;
        self.timed.insert((at, self.seq), what);
    }

    /// Kills node `node`'s process (an injected crash: not a failure of the target).
    pub(super) fn crash(&mut self, node: u32) {
        // Every process of the node dies with it: its own program and every child forked there.
        let family: Vec<usize> = (0..self.procs.len())
            .filter(|&p| self.procs[p].node == node && self.procs[p].alive)
            .collect();
        if family.is_empty() {
            return;
        }
        for &p in &family {
            self.drain(p);
            if !self.procs[p].partial.is_empty() {
                let rest = std::mem::take(&mut self.procs[p].partial);
                self.emit_line(p, &rest);
            }
        }
        // SAFETY: all their threads wait for the baton; killing processes of the run.
        for &p in &family {
            self.kill_process(p);
            self.orphan_children(p);
        }
        self.reset_node_streams(node);
        self.fds.close_node(node);
        self.unmap_node(node);
        self.locks_crashed(node);
        self.pipes.close_node(node);
        self.down[node as usize] = true;
        self.event(node, EventKind::Crash, None, None, 0, || "crashed (injected)".into());
        self.disk_crash(node);
    }

    pub(super) fn restart(&mut self, node: u32) -> io::Result<()> {
        if !std::mem::replace(&mut self.down[node as usize], false) {
            return Ok(());
        }
        self.event(node, EventKind::Restart, None, None, 0, || "restart".into());
        self.start(node)
    }

    /// Ends the faults that are due, and all of them when the heal phase begins.
    pub(super) fn timed_due(&mut self) -> io::Result<()> {
        while let Some(entry) = self.timed.first_entry() {
            if entry.key().0 > self.now {
                break;
            }
            match entry.remove() {
                Timed::Start(node) => self.start(node)?,
                Timed::Restart(node) => self.restart(node)?,
                Timed::Resume(node) => self.resume(node),
                Timed::Reconnect(node) => {
                    self.net.isolate(node, false);
                    self.event(node, EventKind::Heal, None, None, 0, || "reconnected".into());
                }
                Timed::Uncut(from, to) => {
                    self.net.set_cut(from, to, false);
                    self.event(from, EventKind::Heal, Some(to), None, 0, || "link restored".into());
                }
                Timed::Unsplit(i) => {
                    let (side, rest) = std::mem::take(&mut self.splits[i]);
                    self.split(&side, &rest, false);
                    self.event(side[0], EventKind::Heal, None, None, 0, || {
                        format!("partition {} | {} healed", node_list(&side), node_list(&rest))
                    });
                }
            }
        }
        if !self.healed && self.now >= SimTime::ZERO + self.scenario.fault_phase {
            self.healed = true;
            if self.net.any_cut() {
                self.net.heal_all();
                self.event(0, EventKind::Heal, None, None, 1, || {
                    "heal phase: links restored".into()
                });
            }
            self.timed.retain(|_, t| matches!(t, Timed::Restart(_) | Timed::Start(_)));
            for node in 0..self.cfg.nodes {
                self.resume(node);
                if self.scenario.restart {
                    self.restart(node)?;
                }
            }
        }
        Ok(())
    }

    /// Whether the start of the heal phase would change anything.
    pub(super) fn heal_pending(&self) -> bool {
        !self.healed
            && (self.net.any_cut()
                || self.paused.iter().any(|&p| p)
                || (self.scenario.restart && self.down.iter().any(|&d| d)))
    }

    pub(super) fn resume(&mut self, node: u32) {
        if std::mem::replace(&mut self.paused[node as usize], false) {
            self.event(node, EventKind::Resume, None, None, 0, || "resumed".into());
        }
    }
}
