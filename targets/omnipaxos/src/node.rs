//! The harness node: one omnipaxos server inside weft's kernel, plus the link-session layer the
//! library expects from its transport, plus the oracles.
//!
//! Time: the library has no clock; it advances only when `tick()` is called. Each node calls it
//! from a periodic weft timer ([`TICK`]), whose phase is a decision, so ticks of different
//! nodes interleave in every order the search wants. The library draws no randomness.
//!
//! Links: omnipaxos assumes a session transport and asks the application to call
//! `reconnected(pid)` on *both* ends when a broken link comes back. The kernel can cut links but
//! does not tell nodes when they come back, so the harness drives link flaps itself: the
//! workload delivers `LinkDown(peer)` and, later, `LinkUp(peer)` to both ends at the same
//! instant. While a link is down each end discards what it would send on it and what arrives
//! on it; every message carries the sender's session number for that link, and a message from
//! an older session is discarded on arrival (a TCP connection does not deliver the bytes of the
//! connection before it). On `LinkUp` each end calls `reconnected(peer)`.

use crate::library::{Library, Tuning, NOT_A_VALUE};
use std::collections::BTreeMap;
use std::fmt::{self, Debug};
use std::hash::{Hash, Hasher};
use weft_core::SimDuration;
use weft_sim::{Ctx, Node, NodeId, TimerId, View};

/// Period of the tick timer.
pub const TICK: SimDuration = SimDuration::from_millis(10);
/// Values at or above this are the heal-phase probes of the recovery property.
pub const PROBE_BASE: u64 = 1_000_000;
const TIMER_TICK: u64 = 1;
const TIMER_FIRST_TICK: u64 = 2;

/// A message on the wire: the library's message plus the sender's session number of the link
/// and its position in that session. `msg: None` is the transport's own "connection reset"
/// notice (message-loss mode only, see [`OpNode::on_message`]).
#[derive(Clone)]
pub struct Wire<M> {
    pub session: u32,
    pub seq: u64,
    pub msg: Option<M>,
}

impl<M: Debug> Debug for Wire<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.msg {
            Some(m) => write!(f, "s{}#{} {m:?}", self.session, self.seq),
            None => write!(f, "s{}#{} reset", self.session, self.seq),
        }
    }
}

/// The library's messages implement `Debug` but not `Hash`; their `Debug` text is
/// deterministic (no hash maps inside), so the trace hash folds it in without allocating.
impl<M: Debug> Hash for Wire<M> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.session.hash(state);
        self.seq.hash(state);
        weft_core::hash_debug(&self.msg, state);
    }
}

/// Workload inputs.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub enum Req {
    /// A client proposes this value at this server.
    Append(u64),
    /// The link to this peer breaks (delivered to both ends at once).
    LinkDown(NodeId),
    /// The link to this peer is back (delivered to both ends at once).
    LinkUp(NodeId),
}

/// What a node reports to the history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Obs {
    /// A client's value was handed to the library here.
    Proposed(u64),
    /// This server decided `value` at log index `index`.
    Decided { index: u64, value: u64 },
}

pub struct OpNode<L: Library> {
    pub id: NodeId,
    paxos: L::Paxos,
    tuning: Tuning,
    nodes: usize,
    /// Values of this server's decided prefix, as read once each became decided.
    pub decided: Vec<u64>,
    /// Set when the library changed the entry of a slot it had decided.
    pub unstable: Option<String>,
    /// Set when the library lowered its decided index (the entries may still be intact).
    pub regressed: Option<String>,
    /// Per peer: how many flaps currently hold the link down, and the session number.
    down: Vec<u32>,
    session: Vec<u32>,
    /// Session transport (the default): per peer, the next sequence number to send, the next
    /// to hand to the library, and early arrivals held back until the gap before them fills,
    /// so each link is FIFO like a TCP connection. Without it (message-loss mode) a link loses
    /// messages but never reorders them: a message older than one already handed over is
    /// discarded on arrival (omnipaxos detects the gaps with its own sequence numbers and asks
    /// to resync; it does not promise safety when a stale message overtakes newer ones).
    fifo: bool,
    send_seq: Vec<u64>,
    recv_seq: Vec<u64>,
    held: Vec<BTreeMap<u64, L::Msg>>,
    outbox: Vec<L::Msg>,
    scratch: Vec<u64>,
    /// Ticks since the last audit of the decided prefix (one audit per election round).
    ticks: u64,
    /// The leader this server last reported, and how often that changed.
    last_leader: Option<NodeId>,
    pub leader_changes: u32,
}

impl<L: Library> OpNode<L> {
    pub fn new(id: NodeId, nodes: usize, tuning: Tuning, fifo: bool) -> OpNode<L> {
        OpNode {
            id,
            paxos: L::build(id as u64 + 1, nodes as u64, tuning),
            tuning,
            nodes,
            decided: Vec::new(),
            unstable: None,
            regressed: None,
            down: vec![0; nodes],
            session: vec![0; nodes],
            fifo,
            send_seq: vec![0; nodes],
            recv_seq: vec![0; nodes],
            held: (0..nodes).map(|_| BTreeMap::new()).collect(),
            outbox: Vec::new(),
            scratch: Vec::new(),
            ticks: 0,
            last_leader: None,
            leader_changes: 0,
        }
    }

    /// The pid this server believes leads (omnipaxos pids are node ids + 1).
    pub fn leader(&self) -> Option<NodeId> {
        L::leader(&self.paxos).filter(|&p| p > 0).map(|p| p as NodeId - 1)
    }

    /// Sends what the library queued, records newly decided entries.
    fn flush(&mut self, ctx: &mut Ctx<'_, Self>) {
        L::take_outgoing(&mut self.paxos, &mut self.outbox);
        let mut outbox = std::mem::take(&mut self.outbox);
        for msg in outbox.drain(..) {
            let to = L::receiver(&msg);
            let Some(to) = to.checked_sub(1).map(|t| t as NodeId) else { continue };
            if to as usize >= self.nodes || to == self.id || self.down[to as usize] > 0 {
                continue; // no link: what the library sends on it is lost
            }
            self.send(ctx, to, Some(msg));
        }
        self.outbox = outbox;
        let leader = self.leader();
        if leader.is_some() && leader != self.last_leader {
            self.last_leader = leader;
            self.leader_changes += 1;
        }
        let idx = L::decided_idx(&self.paxos);
        let known = self.decided.len() as u64;
        if idx < known {
            // Entries the application was told are decided stay in `decided`; `audit` checks
            // they are not overwritten.
            self.regressed
                .get_or_insert_with(|| format!("decided index went back from {known} to {idx}"));
        } else if idx > known {
            self.scratch.clear();
            if !L::read(&self.paxos, known, idx, &mut self.scratch) {
                self.unstable
                    .get_or_insert_with(|| format!("decided entries {known}..{idx} unreadable"));
                return;
            }
            for (i, &value) in self.scratch.iter().enumerate() {
                ctx.observe(Obs::Decided { index: known + i as u64, value });
            }
            self.decided.extend_from_slice(&self.scratch);
        }
    }

    fn send(&mut self, ctx: &mut Ctx<'_, Self>, to: NodeId, msg: Option<L::Msg>) {
        let t = to as usize;
        let seq = self.send_seq[t];
        self.send_seq[t] += 1;
        ctx.send(to, Wire { session: self.session[t], seq, msg });
    }

    /// Re-reads the decided prefix: an entry, once decided, must never change.
    fn audit(&mut self) {
        if self.unstable.is_some() || self.decided.is_empty() {
            return;
        }
        self.scratch.clear();
        let mut len = self.decided.len() as u64;
        if !L::read(&self.paxos, 0, len, &mut self.scratch) {
            // The log is shorter than what was decided (after a decided-index regression):
            // compare what it still holds up to its decided index.
            len = L::decided_idx(&self.paxos).min(len);
            self.scratch.clear();
            if !L::read(&self.paxos, 0, len, &mut self.scratch) {
                self.unstable = Some(format!("decided entries 0..{len} unreadable"));
                return;
            }
        }
        if let Some(i) = (0..len as usize).find(|&i| self.scratch[i] != self.decided[i]) {
            self.unstable = Some(format!(
                "decided slot {i} changed from {} to {}",
                show(self.decided[i]),
                show(self.scratch[i])
            ));
        }
    }
}

fn show(v: u64) -> String {
    if v == NOT_A_VALUE {
        "a non-value entry".into()
    } else {
        v.to_string()
    }
}

impl<L: Library> Node for OpNode<L> {
    type Msg = Wire<L::Msg>;
    type Req = Req;
    type Obs = Obs;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        // The tick phase is a decision (0: tick at once), so node clocks interleave freely.
        let phase = ctx.choose(TICK.as_nanos() / 1_000_000) * 1_000_000;
        ctx.set_timer(SimDuration(phase), TIMER_FIRST_TICK);
    }

    fn on_message(&mut self, from: NodeId, wire: Self::Msg, ctx: &mut Ctx<'_, Self>) {
        let f = from as usize;
        if self.down[f] > 0 || wire.session != self.session[f] {
            return; // the connection it was sent on is gone
        }
        if !self.fifo {
            // Message-loss mode: a link loses messages but never reorders them. A message older
            // than one already handed over is discarded (overtaken: lost). A gap means something
            // was lost, which a session transport would see as a broken connection: both ends
            // are told (`reconnected`), this one now and the peer by a reset notice, so the
            // library resynchronises as it would after a link flap.
            if wire.seq < self.recv_seq[f] {
                return;
            }
            let gap = wire.seq > self.recv_seq[f];
            self.recv_seq[f] = wire.seq + 1;
            match wire.msg {
                None => L::reconnected(&mut self.paxos, from as u64 + 1),
                Some(msg) => {
                    if gap {
                        L::reconnected(&mut self.paxos, from as u64 + 1);
                        self.send(ctx, from, None);
                    }
                    L::handle_incoming(&mut self.paxos, msg);
                }
            }
        } else {
            let Some(msg) = wire.msg else { return };
            self.held[f].insert(wire.seq, msg);
            while let Some(msg) = self.held[f].remove(&self.recv_seq[f]) {
                self.recv_seq[f] += 1;
                L::handle_incoming(&mut self.paxos, msg);
            }
        }
        self.flush(ctx);
    }

    fn on_timer(&mut self, _timer: TimerId, tag: u64, ctx: &mut Ctx<'_, Self>) {
        debug_assert!(tag == TIMER_TICK || tag == TIMER_FIRST_TICK);
        ctx.set_timer(TICK, TIMER_TICK);
        L::tick(&mut self.paxos);
        self.ticks += 1;
        self.flush(ctx);
        if self.ticks >= self.tuning.election_ticks {
            self.ticks = 0;
            self.audit();
        }
    }

    fn on_request(&mut self, req: Req, ctx: &mut Ctx<'_, Self>) {
        match req {
            Req::Append(value) => {
                if L::append(&mut self.paxos, value) {
                    ctx.observe(Obs::Proposed(value));
                }
            }
            Req::LinkDown(peer) => {
                self.down[peer as usize] += 1;
            }
            Req::LinkUp(peer) => {
                let p = peer as usize;
                self.down[p] = self.down[p].saturating_sub(1);
                if self.down[p] == 0 {
                    self.session[p] += 1;
                    self.send_seq[p] = 0;
                    self.recv_seq[p] = 0;
                    self.held[p].clear();
                    L::reconnected(&mut self.paxos, peer as u64 + 1);
                }
            }
        }
        self.flush(ctx);
    }

    fn describe(&self) -> String {
        let leader = match self.leader() {
            Some(l) => format!("n{l}"),
            None => "none".into(),
        };
        let down: Vec<String> =
            (0..self.nodes).filter(|&p| self.down[p] > 0).map(|p| format!("n{p}")).collect();
        let tail: Vec<String> = self.decided.iter().rev().take(4).rev().map(|&v| show(v)).collect();
        format!(
            "omnipaxos {} leader={leader} decided={} [..{}] down=[{}]",
            L::VERSION,
            self.decided.len(),
            tail.join(","),
            down.join(",")
        )
    }

    fn feature(&self) -> u64 {
        let leader = self.leader().map_or(0, |l| l as u64 + 1);
        (self.decided.len() as u64) << 8
            | leader << 4
            | self.down.iter().filter(|&&d| d > 0).count() as u64
    }
}

/// Agreement: the decided prefixes of all servers are prefixes of one another, and no server
/// ever changes an entry it has decided.
pub fn agreement<L: Library>(v: &View<'_, OpNode<L>>) -> Result<(), String> {
    let nodes: Vec<&OpNode<L>> = v.nodes().filter_map(|(_, n)| n).collect();
    for n in &nodes {
        if let Some(why) = &n.unstable {
            return Err(format!("n{}: {why}", n.id));
        }
    }
    for (i, a) in nodes.iter().enumerate() {
        for b in &nodes[i + 1..] {
            let common = a.decided.len().min(b.decided.len());
            if a.decided[..common] != b.decided[..common] {
                let at = (0..common).find(|&k| a.decided[k] != b.decided[k]).unwrap_or(0);
                return Err(format!(
                    "n{} and n{} decided different entries at index {at}: {} vs {}",
                    a.id,
                    b.id,
                    show(a.decided[at]),
                    show(b.decided[at])
                ));
            }
        }
    }
    Ok(())
}

/// Recovery: a leader that a majority of servers follow exists, and a heal-phase probe value has
/// been decided.
pub fn recovery<L: Library>(v: &View<'_, OpNode<L>>) -> Result<(), String> {
    let nodes: Vec<&OpNode<L>> = v.nodes().filter_map(|(_, n)| n).collect();
    let majority = v.len() / 2 + 1;
    let leader = nodes.iter().find_map(|n| {
        let l = n.leader()?;
        let followers = nodes.iter().filter(|m| m.leader() == Some(l)).count();
        (followers >= majority && nodes.iter().any(|m| m.id == l && m.leader() == Some(l)))
            .then_some(l)
    });
    let Some(leader) = leader else {
        let views: Vec<String> =
            nodes.iter().map(|n| format!("n{}->{:?}", n.id, n.leader())).collect();
        return Err(format!("no leader followed by a majority ({})", views.join(" ")));
    };
    if nodes.iter().any(|n| n.decided.iter().any(|&x| (PROBE_BASE..NOT_A_VALUE).contains(&x))) {
        Ok(())
    } else {
        Err(format!("leader n{leader}, but no heal-phase append was decided"))
    }
}

/// Reachability: some server saw a second leader (the bug needs a leader change).
pub fn leader_changed<L: Library>(v: &View<'_, OpNode<L>>) -> Result<(), String> {
    if v.nodes().any(|(_, n)| n.is_some_and(|n| n.leader_changes >= 2)) {
        Ok(())
    } else {
        Err("no server saw the leader change".into())
    }
}

/// The decided index never goes back.
pub fn monotone_decided<L: Library>(v: &View<'_, OpNode<L>>) -> Result<(), String> {
    for (_, n) in v.nodes() {
        if let Some(why) = n.and_then(|n| n.regressed.as_ref()) {
            return Err(format!("n{}: {why}", n.map_or(0, |n| n.id)));
        }
    }
    Ok(())
}
