//! What an event does to the world: a handler called on a live node (a panic in target code
//! becomes an outcome, a crash at a storage call a crash), and the effects it left applied in
//! order — messages routed through the network, timers set or cancelled, observations recorded.

use super::{Ev, World};
use crate::faults;
use crate::net::Fate;
use crate::node::{Ctx, Effect, Node, NodeId};
use crate::storage::CrashPoint;
use crate::view::{Observation, Phase};
use std::panic::{catch_unwind, AssertUnwindSafe};
use weft_core::{stable_hash, Decisions, EventKind, Observer, Site};

impl<N: Node> World<'_, N> {
    pub(super) fn dispatch(
        &mut self,
        ev: Ev<N>,
        decisions: &mut Decisions,
        obs: &mut dyn Observer,
    ) -> Result<(), String> {
        match ev {
            Ev::Start { node } => {
                self.changed = true;
                self.note(obs, Some(node), EventKind::Start, None, None, 0, || "start".into());
                self.call(node, decisions, obs, |n, ctx| n.on_start(ctx))?;
            }
            Ev::Deliver { from, to, msg, id } => {
                if self.slots[to as usize].node.is_none() {
                    let m = &msg;
                    self.note(obs, Some(to), EventKind::Drop, Some(from), Some(id), 1, || {
                        format!("{m:?} (receiver down)")
                    });
                    return Ok(());
                }
                let payload = stable_hash(&msg);
                let text = obs.wants_events().then(|| format!("{msg:?}"));
                let crashed = self.invoke(to, decisions, |n, ctx| n.on_message(from, msg, ctx))?;
                self.note(obs, Some(to), EventKind::Deliver, Some(from), Some(id), payload, || {
                    text.unwrap_or_default()
                });
                self.apply(to, decisions, obs);
                self.after_storage_crash(to, crashed, decisions, obs);
            }
            Ev::Timer { node, incarnation, id, tag } => {
                let slot = &mut self.slots[node as usize];
                if slot.incarnation != incarnation || slot.node.is_none() {
                    return Ok(());
                }
                if let Some(pos) = slot.cancelled.iter().position(|&c| c == id) {
                    slot.cancelled.swap_remove(pos);
                    return Ok(());
                }
                let crashed = self.invoke(node, decisions, |n, ctx| n.on_timer(id, tag, ctx))?;
                self.note(obs, Some(node), EventKind::Timer, None, None, tag, || {
                    format!("timer {tag}")
                });
                self.apply(node, decisions, obs);
                self.after_storage_crash(node, crashed, decisions, obs);
            }
            Ev::Request { node, req } => {
                if self.slots[node as usize].node.is_none() {
                    return Ok(());
                }
                let payload = stable_hash(&req);
                let text = obs.wants_events().then(|| format!("{req:?}"));
                let crashed = self.invoke(node, decisions, |n, ctx| n.on_request(req, ctx))?;
                self.note(obs, Some(node), EventKind::Request, None, None, payload, || {
                    text.unwrap_or_default()
                });
                self.apply(node, decisions, obs);
                self.after_storage_crash(node, crashed, decisions, obs);
            }
            Ev::Restart { node, incarnation } => {
                let slot = &self.slots[node as usize];
                if slot.node.is_some() || slot.incarnation != incarnation {
                    return Ok(());
                }
                self.restart(node, decisions, obs)?;
            }
            Ev::Resume { node } => {
                self.note(obs, Some(node), EventKind::Resume, None, None, 0, || "resume".into());
            }
            Ev::Reconnect { from, to } => {
                let up = self.net.set_cut(from, to, false);
                self.note(obs, Some(from), EventKind::Heal, Some(to), None, 0, || {
                    format!("link n{from} -> n{to} restored")
                });
                if up {
                    self.links_up(&[(from, to)], decisions, obs)?;
                }
            }
            Ev::Rejoin { node } => {
                let peers = self.net.isolate(node, false);
                self.note(obs, Some(node), EventKind::Heal, None, None, 0, || "reconnected".into());
                let pairs: Vec<(NodeId, NodeId)> = peers.into_iter().map(|p| (node, p)).collect();
                self.links_up(&pairs, decisions, obs)?;
            }
            Ev::Unsplit { side, rest } => {
                let mut pairs = Vec::new();
                for &a in &side {
                    for &b in &rest {
                        let up = self.net.set_cut(a, b, false) | self.net.set_cut(b, a, false);
                        if up {
                            pairs.push((a, b));
                        }
                    }
                }
                self.note(obs, side.first().copied(), EventKind::Heal, None, None, 0, || {
                    format!(
                        "partition {} | {} healed",
                        faults::node_list(&side),
                        faults::node_list(&rest)
                    )
                });
                self.links_up(&pairs, decisions, obs)?;
            }
            Ev::HealPhase => self.heal(decisions, obs),
        }
        Ok(())
    }

    /// Calls a handler on a live node, then applies its effects. A panic in target code is an
    /// outcome (TargetCrashed), not a crash of weft.
    pub(super) fn call(
        &mut self,
        node: NodeId,
        decisions: &mut Decisions,
        obs: &mut dyn Observer,
        f: impl FnOnce(&mut N, &mut Ctx<'_, N>),
    ) -> Result<(), String> {
        let crashed = self.invoke(node, decisions, f)?;
        self.apply(node, decisions, obs);
        self.after_storage_crash(node, crashed, decisions, obs);
        Ok(())
    }

    /// Runs a handler, leaving its effects in `self.outbox`. Returns whether the node crashed at
    /// a storage call inside the handler.
    fn invoke(
        &mut self,
        node: NodeId,
        decisions: &mut Decisions,
        f: impl FnOnce(&mut N, &mut Ctx<'_, N>),
    ) -> Result<bool, String> {
        let faulty = self.phase == Phase::Fault;
        let slot = &mut self.slots[node as usize];
        let Some(n) = slot.node.as_mut() else { return Ok(false) };
        let mut ctx = Ctx {
            id: node,
            now: self.now,
            nodes: self.spec.nodes,
            next_timer: &mut self.next_timer,
            outbox: &mut self.outbox,
            decisions,
            disk: &mut slot.disk,
            scenario: self.scenario,
            counts: &mut self.counts,
            disk_counts: &mut self.disk_counts,
            faulty,
            changed: &mut self.changed,
        };
        // Every draw of the handler (node choices, storage faults) is addressed to the node.
        let base = ctx.decisions.set_base(Site::node(node, 0));
        let result = catch_unwind(AssertUnwindSafe(|| f(n, &mut ctx)));
        ctx.decisions.set_base(base);
        match result {
            Ok(()) => Ok(false),
            Err(p) if p.is::<CrashPoint>() => Ok(true),
            Err(p) => Err(panic_text(node, p)),
        }
    }

    /// Applies the effects a handler left in `self.outbox`, in order.
    fn apply(&mut self, node: NodeId, decisions: &mut Decisions, obs: &mut dyn Observer) {
        let mut outbox = std::mem::take(&mut self.outbox);
        let faulty = self.phase == Phase::Fault;
        for effect in outbox.drain(..) {
            match effect {
                Effect::Send { to, msg } => {
                    let id = self.next_msg;
                    self.next_msg += 1;
                    let fate = self.net.route(
                        (node, to),
                        self.now,
                        self.scenario,
                        faulty,
                        &mut self.counts,
                        decisions,
                    );
                    let payload = stable_hash(&msg);
                    let text = || format!("{msg:?}");
                    match fate {
                        Fate::Deliver(at) => {
                            self.note(
                                obs,
                                Some(node),
                                EventKind::Send,
                                Some(to),
                                Some(id),
                                payload,
                                text,
                            );
                            self.push(at, Ev::Deliver { from: node, to, msg, id });
                        }
                        Fate::Duplicate(a, b) => {
                            self.note(
                                obs,
                                Some(node),
                                EventKind::Duplicate,
                                Some(to),
                                Some(id),
                                payload,
                                text,
                            );
                            self.push(a, Ev::Deliver { from: node, to, msg: msg.clone(), id });
                            self.push(b, Ev::Deliver { from: node, to, msg, id });
                        }
                        Fate::Drop | Fate::Cut => {
                            let why = if fate == Fate::Cut { "link cut" } else { "dropped" };
                            self.note(
                                obs,
                                Some(node),
                                EventKind::Drop,
                                Some(to),
                                Some(id),
                                payload,
                                || format!("{msg:?} ({why})"),
                            );
                        }
                    }
                }
                Effect::Timer { id, after, tag } => {
                    let incarnation = self.slots[node as usize].incarnation;
                    self.push(self.now + after, Ev::Timer { node, incarnation, id, tag });
                }
                Effect::Cancel(id) => self.slots[node as usize].cancelled.push(id),
                Effect::Observe(o) => {
                    self.changed = true;
                    let text = obs.wants_events().then(|| format!("{o:?}"));
                    self.history.push(Observation { time: self.now, node, obs: o });
                    self.note(obs, Some(node), EventKind::Observe, None, None, 0, || {
                        text.unwrap_or_default()
                    });
                }
            }
        }
        self.outbox = outbox;
        if let Some(n) = self.slots[node as usize].node.as_ref() {
            let f = n.feature();
            if f != 0 {
                obs.feature(f);
            }
        }
    }
}

pub(super) fn panic_text(node: NodeId, payload: Box<dyn std::any::Any + Send>) -> String {
    let msg = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic".into());
    format!("node n{node} panicked: {msg}")
}
