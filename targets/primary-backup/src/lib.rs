//! The canary target `primary-backup`: a replicated register with a primary (node 0) and a
//! backup (node 1). Clients write to the primary; the backup promotes itself when it stops
//! hearing heartbeats. The `buggy` primary acknowledges a write before the backup has stored it,
//! so if the primary crashes (or is paused long enough for the backup to take over) inside that
//! window, an acknowledged write is missing after failover. The `fixed` primary acknowledges only
//! after the backup's `ReplicateAck`, and a promoted backup refuses further replication.
//!
//! It exists to prove the whole pipeline on a bug whose minimal counterexample is known: one
//! write, one crash of the primary between the acknowledgement and the replica's delivery.

use weft_core::{
    Allowed, ConfigError, Modality, OptionDecl, RunSpec, Runner, SimDuration, SimTime, Target,
    TargetInfo,
};
use weft_sim::{Check, Ctx, Node, NodeId, TimerId, View, World};

const HEARTBEAT: SimDuration = SimDuration::from_millis(10);
const SUSPECT_AFTER: SimDuration = SimDuration::from_millis(50);
const TIMER_HEARTBEAT: u64 = 1;
const TIMER_CHECK: u64 = 2;

#[derive(Clone, Debug, Hash)]
pub enum Msg {
    Replicate { value: u64 },
    ReplicateAck { value: u64 },
    Heartbeat,
}

#[derive(Clone, Debug, Hash)]
pub struct Write(pub u64);

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Obs {
    /// The client was told its write is durable.
    Acked(u64),
    /// The backup took over as primary.
    Promoted,
}

/// One node of the canary (0: the primary, 1: the backup).
pub struct PbNode {
    id: NodeId,
    buggy: bool,
    store: Vec<u64>,
    /// Primary: writes sent to the backup and not yet acknowledged by it (retransmitted).
    pending: Vec<u64>,
    /// Backup: when it last heard from the primary; whether it took over.
    last_heard: SimTime,
    promoted: bool,
}

impl PbNode {
    fn is_primary(&self) -> bool {
        self.id == 0 || self.promoted
    }
}

impl Node for PbNode {
    type Msg = Msg;
    type Req = Write;
    type Obs = Obs;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.last_heard = ctx.now();
        let tag = if self.id == 0 { TIMER_HEARTBEAT } else { TIMER_CHECK };
        ctx.set_timer(HEARTBEAT, tag);
    }

    fn on_message(&mut self, _from: NodeId, msg: Msg, ctx: &mut Ctx<'_, Self>) {
        match msg {
            Msg::Replicate { value } => {
                self.last_heard = ctx.now();
                if self.promoted {
                    return; // A new primary no longer follows the old one.
                }
                if !self.store.contains(&value) {
                    self.store.push(value);
                }
                ctx.send(0, Msg::ReplicateAck { value });
            }
            Msg::ReplicateAck { value } => {
                if let Some(pos) = self.pending.iter().position(|&v| v == value) {
                    self.pending.remove(pos);
                    if !self.buggy {
                        ctx.observe(Obs::Acked(value));
                    }
                }
            }
            Msg::Heartbeat => self.last_heard = ctx.now(),
        }
    }

    fn on_timer(&mut self, _timer: TimerId, tag: u64, ctx: &mut Ctx<'_, Self>) {
        match tag {
            TIMER_HEARTBEAT => {
                ctx.send(1, Msg::Heartbeat);
                // Retransmit what the backup has not acknowledged (lost messages).
                for &value in &self.pending {
                    ctx.send(1, Msg::Replicate { value });
                }
                ctx.set_timer(HEARTBEAT, TIMER_HEARTBEAT);
            }
            _ => {
                if !self.promoted && ctx.now().since(self.last_heard) > SUSPECT_AFTER {
                    self.promoted = true;
                    ctx.observe(Obs::Promoted);
                } else if !self.promoted {
                    ctx.set_timer(HEARTBEAT, TIMER_CHECK);
                }
            }
        }
    }

    fn on_request(&mut self, Write(value): Write, ctx: &mut Ctx<'_, Self>) {
        if self.id != 0 {
            return;
        }
        self.store.push(value);
        ctx.send(1, Msg::Replicate { value });
        // Both variants retransmit until the backup acknowledges; they differ only in when the
        // client hears back.
        self.pending.push(value);
        if self.buggy {
            // BUG: acknowledged before the backup has stored it.
            ctx.observe(Obs::Acked(value));
        }
    }

    fn describe(&self) -> String {
        let role = if self.id == 0 {
            "primary"
        } else if self.promoted {
            "promoted"
        } else {
            "backup"
        };
        format!("{role} store={:?} pending={:?}", self.store, self.pending)
    }

    fn feature(&self) -> u64 {
        ((self.store.len() as u64) << 8) | ((self.pending.len() as u64) << 1) | self.promoted as u64
    }
}

/// Every write acknowledged to a client is stored on the backup once it has taken over.
fn acked_writes_survive_failover(v: &View<'_, PbNode>) -> Result<(), String> {
    let Some(backup) = v.node(1) else { return Ok(()) };
    if !backup.promoted {
        return Ok(());
    }
    for o in v.history() {
        if let Obs::Acked(value) = o.obs {
            if !backup.store.contains(&value) {
                return Err(format!(
                    "write {value} was acknowledged at {} but the promoted backup has {:?}",
                    o.time.to_string().trim(),
                    backup.store
                ));
            }
        }
    }
    Ok(())
}

/// Reachability: the backup took over at least once.
fn failover_happened(v: &View<'_, PbNode>) -> Result<(), String> {
    match v.node(1) {
        Some(b) if b.promoted => Ok(()),
        _ => Err("no failover".into()),
    }
}

/// Once faults stop, some live node acts as primary.
fn has_primary(v: &View<'_, PbNode>) -> Result<(), String> {
    if v.nodes().any(|(_, n)| n.is_some_and(|n| n.is_primary())) {
        Ok(())
    } else {
        Err("no live primary".into())
    }
}

/// The target; a thin name for [`world`], which declares it with the [`World`] builder (the
/// same API a user's own targets use).
pub struct PrimaryBackup;

/// Name, modality, summary and check of every property.
const PROPERTIES: [(&str, Modality, &str, Check<PbNode>); 3] = [
    (
        "AckedWritesSurviveFailover",
        Modality::Always,
        "every acknowledged write is stored on the backup once it has taken over",
        acked_writes_survive_failover,
    ),
    (
        "FailoverHappens",
        Modality::Sometimes,
        "the backup takes over in some run",
        failover_happened,
    ),
    (
        "HasPrimary",
        Modality::Eventually,
        "after faults stop, a live node acts as primary",
        has_primary,
    ),
];

/// The canary as a world: two nodes, `writes` client writes to the primary spread over the
/// fault phase, one crash and no restart (its volatile store is gone and this register has no
/// disk).
pub fn world() -> World<PbNode> {
    let mut w = World::new("primary-backup", 2, |cfg, id| PbNode {
        id,
        buggy: cfg.is("buggy"),
        store: Vec::new(),
        pending: Vec::new(),
        last_heard: SimTime::ZERO,
        promoted: false,
    })
    .summary("canary: a replicated register; the buggy primary acks before the backup stores")
    .variant("buggy", "acknowledges a write before replicating it")
    .variant("fixed", "acknowledges only after the backup's ack")
    .option(
        "writes",
        "20",
        Allowed::Int { min: 0, max: weft_core::options::MAX_REQUESTS },
        "client writes per run, spread over the fault phase",
    )
    .workload(|cfg| {
        weft_sim::spread_over_fault_phase::<PbNode>(cfg.get("writes"), 0, |i| Write(i + 1))
    })
    .scenario(|_, s| {
        s.restart = false;
        s.budget.crashes = 1;
    });
    for (name, modality, summary, check) in PROPERTIES {
        w = w.described(name, modality, summary, check);
    }
    w
}

impl Target for PrimaryBackup {
    fn info(&self) -> TargetInfo {
        world().info()
    }

    fn options(&self) -> Vec<OptionDecl> {
        world().options()
    }

    fn prepare(&self, spec: &RunSpec) -> Result<Box<dyn Runner>, ConfigError> {
        world().prepare(spec)
    }
}
