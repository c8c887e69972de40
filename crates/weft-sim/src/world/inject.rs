//! Faults in the world: at each opportunity of the fault phase the fault model may crash,
//! pause or isolate a node or cut links (each undone later by a queued event); a crash keeps a
//! disk state drawn under the persistence contract (and audits it under another); the heal
//! phase ends every fault and restarts crashed nodes.

use super::dispatch::panic_text;
use super::{Ev, World};
use crate::faults::{self, Fault};
use crate::node::{Node, NodeId};
use crate::view::{Phase, View};
use std::panic::{catch_unwind, AssertUnwindSafe};
use weft_core::{Decisions, EventKind, Observer, SimDuration, SimTime, Site};

impl<N: Node> World<'_, N> {
    pub(super) fn restart(
        &mut self,
        node: NodeId,
        decisions: &mut Decisions,
        obs: &mut dyn Observer,
    ) -> Result<(), String> {
        let fresh = catch_unwind(AssertUnwindSafe(|| (self.spec.make)(node)))
            .map_err(|p| panic_text(node, p))?;
        let slot = &mut self.slots[node as usize];
        slot.node = Some(fresh);
        slot.incarnation += 1;
        self.changed = true;
        slot.cancelled.clear();
        self.note(obs, Some(node), EventKind::Restart, None, None, 0, || "restart".into());
        self.call(node, decisions, obs, |n, ctx| n.on_recover(ctx))
    }

    /// Tells both ends of each pair that their link is back.
    pub(super) fn links_up(
        &mut self,
        pairs: &[(NodeId, NodeId)],
        decisions: &mut Decisions,
        obs: &mut dyn Observer,
    ) -> Result<(), String> {
        for &(a, b) in pairs {
            self.call(a, decisions, obs, |n, ctx| n.on_link_up(b, ctx))?;
            self.call(b, decisions, obs, |n, ctx| n.on_link_up(a, ctx))?;
        }
        Ok(())
    }

    /// Faults stop: links heal, paused nodes resume, crashed nodes restart (if the scenario
    /// restarts them).
    pub(super) fn heal(&mut self, decisions: &mut Decisions, obs: &mut dyn Observer) {
        self.phase = Phase::Heal;
        self.changed = true;
        let pairs = self.net.heal_all();
        self.note(obs, None, EventKind::Heal, None, None, 0, || "heal phase: faults stop".into());
        // A panic here is reported by the next event on that node, as for restarts.
        let _ = self.links_up(&pairs, decisions, obs);
        for node in 0..self.slots.len() as NodeId {
            self.slots[node as usize].paused_until = SimTime::ZERO;
            if self.scenario.restart && self.slots[node as usize].node.is_none() {
                // A panic in a factory is reported by the next event on that node.
                let _ = self.restart(node, decisions, obs);
            }
        }
    }

    pub(super) fn fault_opportunity(&mut self, decisions: &mut Decisions, obs: &mut dyn Observer) {
        let up: Vec<bool> = self.slots.iter().map(|s| s.node.is_some()).collect();
        let fault = {
            let view = View {
                now: self.now,
                phase: self.phase,
                slots: &self.slots,
                queue: &self.queue,
                history: &self.history,
            };
            let gate = self.spec.crash_gate;
            faults::opportunity(self.scenario, &mut self.counts, &up, decisions, &mut |n| {
                gate.is_none_or(|g| g(&view, n))
            })
        };
        let Some(fault) = fault else { return };
        match fault {
            Fault::Crash { node, outage } => {
                self.crash_node(node, outage, "", decisions, obs);
            }
            Fault::Pause { node, duration } => {
                self.slots[node as usize].paused_until = self.now + duration;
                self.push(self.now + duration, Ev::Resume { node });
                self.note(obs, Some(node), EventKind::Pause, None, None, duration.0, || {
                    format!("pause for {duration}")
                });
            }
            Fault::Isolate { node, duration } => {
                self.net.isolate(node, true);
                self.push(self.now + duration, Ev::Rejoin { node });
                self.note(obs, Some(node), EventKind::Partition, None, None, duration.0, || {
                    format!("isolated for {duration}")
                });
            }
            Fault::CutLink { from, to, duration } => {
                self.net.set_cut(from, to, true);
                self.push(self.now + duration, Ev::Reconnect { from, to });
                self.note(
                    obs,
                    Some(from),
                    EventKind::Partition,
                    Some(to),
                    None,
                    duration.0,
                    || format!("link n{from} -> n{to} cut for {duration}"),
                );
            }
            Fault::Split { side, rest, duration } => {
                for &a in &side {
                    for &b in &rest {
                        self.net.set_cut(a, b, true);
                        self.net.set_cut(b, a, true);
                    }
                }
                let text = format!(
                    "partition {} | {} for {duration}",
                    faults::node_list(&side),
                    faults::node_list(&rest)
                );
                let first = side.first().copied();
                self.push(self.now + duration, Ev::Unsplit { side, rest });
                self.note(obs, first, EventKind::Partition, None, None, duration.0, || text);
            }
        }
    }

    pub(super) fn after_storage_crash(
        &mut self,
        node: NodeId,
        crashed: bool,
        decisions: &mut Decisions,
        obs: &mut dyn Observer,
    ) {
        if crashed {
            let base = decisions.set_base(Site::disk(node));
            let outage = faults::outage(self.scenario, decisions);
            decisions.set_base(base);
            self.crash_node(node, outage, "at a storage call", decisions, obs);
        }
    }

    /// The node loses its volatile state; its disk keeps a crash state drawn under the
    /// scenario's contract (each loss noted with the rule that allowed it).
    fn crash_node(
        &mut self,
        node: NodeId,
        outage: Option<SimDuration>,
        why: &str,
        decisions: &mut Decisions,
        obs: &mut dyn Observer,
    ) {
        self.changed = true;
        let slot = &mut self.slots[node as usize];
        slot.node = None;
        slot.incarnation += 1;
        slot.cancelled.clear();
        let inc = slot.incarnation;
        let pre_crash = self.audit.is_some().then(|| slot.disk.clone());
        let base = decisions.set_base(Site::disk(node));
        let (state, losses) = slot.disk.crash(self.scenario.disk.contract, decisions);
        decisions.set_base(base);
        if let Some(d) = outage {
            self.push(self.now + d, Ev::Restart { node, incarnation: inc });
        }
        let what = if why.is_empty() { "crash".to_string() } else { format!("crash {why}") };
        self.note(obs, Some(node), EventKind::Crash, None, None, 0, || match outage {
            Some(d) => format!("{what} (restart in {d})"),
            None => what,
        });
        for loss in losses {
            self.note(obs, Some(node), EventKind::Note, None, None, 0, || loss);
        }
        if let (Some(contract), Some(disk)) = (self.audit, pre_crash) {
            if let Err(rule) = disk.allows(contract, &state) {
                self.unreachable.get_or_insert(format!(
                    "the crash state of n{node} at {} is not reachable under `{}`: {rule}",
                    self.now.to_string().trim(),
                    contract.name()
                ));
            }
        }
    }
}
