//! The protocol under test (not harness): a 3-node replicated register with a leader. Writes
//! are versioned by (term, sequence) and acknowledged once a majority stores them; a node that
//! stops hearing its leader starts an election for a higher term and wins with a majority of
//! votes, adopting the newest value they report. The `buggy` leader serves reads from its own
//! committed value without asking anyone — after a partition, an old leader that does not yet
//! know it was replaced serves a stale read. The `fixed` leader first confirms with a quorum
//! that it is still leader of its term (a read index), as Raft does.

use weft::history::Hist;
use weft::{Ctx, Node, NodeId, SimDuration, SimTime, TimerId};

const HEARTBEAT: SimDuration = SimDuration::from_millis(10);
const TIMEOUT_MS: u64 = 40;
const TICK: u64 = 1;
const MAJORITY: usize = 2;

#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(pub u64, pub u64);

#[derive(Clone, Debug, Hash)]
pub enum Msg {
    Heartbeat { term: u64 },
    RequestVote { term: u64 },
    Vote { term: u64, version: Version, value: u64 },
    Store { term: u64, version: Version, value: u64 },
    Stored { term: u64, version: Version },
    ReadIndex { term: u64, client: u64 },
    ReadAck { term: u64, client: u64 },
}

#[derive(Clone, Debug, Hash)]
pub enum Req {
    Write { client: u64, value: u64 },
    Read { client: u64 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Follower,
    Candidate,
    Leader,
}

pub struct Replica {
    pub id: NodeId,
    pub quorum_reads: bool,
    pub term: u64,
    pub role: Role,
    voted: u64,
    votes: Vec<NodeId>,
    pub version: Version,
    pub value: u64,
    /// The newest value this leader knows a majority stores.
    committed: (Version, u64),
    last_heard: SimTime,
    /// Leader: writes awaiting a majority (client, version, value, acks) and reads awaiting a
    /// read-index quorum (client, acks).
    writes: Vec<(u64, Version, u64, Vec<NodeId>)>,
    reads: Vec<(u64, Vec<NodeId>)>,
}

impl Replica {
    pub fn new(id: NodeId, quorum_reads: bool) -> Replica {
        let role = if id == 0 { Role::Leader } else { Role::Follower };
        let (version, value) = (Version(0, 0), 0);
        let (writes, reads) = (Vec::new(), Vec::new());
        let (votes, last_heard, committed) = (Vec::new(), SimTime::ZERO, (version, value));
        Replica {
            id,
            quorum_reads,
            term: 1,
            role,
            voted: 1,
            votes,
            version,
            value,
            committed,
            last_heard,
            writes,
            reads,
        }
    }

    fn others(&self) -> impl Iterator<Item = NodeId> + use<> {
        let me = self.id;
        (0..3).filter(move |&n| n != me)
    }

    /// A message of a newer term: follow it (a leader steps down; its open requests stay open).
    fn see_term(&mut self, term: u64, ctx: &mut Ctx<'_, Self>) {
        if term > self.term {
            self.term = term;
            self.role = Role::Follower;
            self.writes.clear();
            self.reads.clear();
            ctx.changed();
        }
    }

    fn store(&mut self, version: Version, value: u64) {
        if version > self.version {
            (self.version, self.value) = (version, value);
        }
    }
}

impl Node for Replica {
    type Msg = Msg;
    type Req = Req;
    type Obs = Hist;
    const CHECK_ON_CHANGE: bool = true;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.last_heard = ctx.now();
        ctx.set_timer(HEARTBEAT, TICK);
    }

    fn on_timer(&mut self, _: TimerId, _: u64, ctx: &mut Ctx<'_, Self>) {
        ctx.set_timer(HEARTBEAT, TICK);
        if self.role == Role::Leader {
            for n in self.others() {
                ctx.send(n, Msg::Heartbeat { term: self.term });
            }
            return;
        }
        let timeout = TIMEOUT_MS + ctx.fair_choose(40, self.id as u64);
        if ctx.now().since(self.last_heard) > SimDuration::from_millis(timeout) {
            self.term += 1;
            self.voted = self.term;
            self.role = Role::Candidate;
            self.votes = vec![self.id];
            self.last_heard = ctx.now();
            for n in self.others() {
                ctx.send(n, Msg::RequestVote { term: self.term });
            }
        }
    }

    fn on_message(&mut self, from: NodeId, msg: Msg, ctx: &mut Ctx<'_, Self>) {
        match msg {
            Msg::Heartbeat { term } if term >= self.term => {
                self.see_term(term, ctx);
                self.last_heard = ctx.now();
            }
            Msg::RequestVote { term } if term > self.term && self.voted < term => {
                self.see_term(term, ctx);
                self.voted = term;
                self.last_heard = ctx.now();
                ctx.send(from, Msg::Vote { term, version: self.version, value: self.value });
            }
            Msg::Vote { term, version, value }
                if term == self.term && self.role == Role::Candidate =>
            {
                self.store(version, value);
                self.votes.push(from);
                if self.votes.len() >= MAJORITY {
                    self.role = Role::Leader;
                    self.committed = (self.version, self.value);
                    ctx.changed();
                }
            }
            Msg::Store { term, version, value } if term >= self.term => {
                self.see_term(term, ctx);
                self.last_heard = ctx.now();
                self.store(version, value);
                ctx.send(from, Msg::Stored { term, version });
            }
            Msg::Stored { term, version } if term == self.term => self.stored(from, version, ctx),
            Msg::ReadIndex { term, client } if term >= self.term => {
                self.see_term(term, ctx);
                self.last_heard = ctx.now();
                ctx.send(from, Msg::ReadAck { term, client });
            }
            Msg::ReadAck { term, client } if term == self.term => self.read_ack(from, client, ctx),
            _ => {} // a stale term
        }
    }

    fn on_request(&mut self, req: Req, ctx: &mut Ctx<'_, Self>) {
        let (client, f, value) = match req {
            Req::Write { client, value } => (client, "write", Some(value)),
            Req::Read { client } => (client, "read", None),
        };
        ctx.observe(Hist::invoke(client, f, value));
        if self.role != Role::Leader {
            return ctx.observe(Hist::fail(client, f));
        }
        match value {
            Some(value) => {
                let version = Version(self.term, self.version.1 + 1);
                self.store(version, value);
                self.writes.push((client, version, value, vec![self.id]));
                for n in self.others() {
                    ctx.send(n, Msg::Store { term: self.term, version, value });
                }
            }
            None if self.quorum_reads => {
                self.reads.push((client, vec![self.id]));
                for n in self.others() {
                    ctx.send(n, Msg::ReadIndex { term: self.term, client });
                }
            }
            // BUG: no quorum: this node may no longer be the leader.
            None => ctx.observe(Hist::ok(client, "read", Some(self.committed.1))),
        }
    }

    fn describe(&self) -> String {
        format!("{:?} term {} value {} {:?}", self.role, self.term, self.value, self.version)
    }
}

impl Replica {
    fn stored(&mut self, from: NodeId, version: Version, ctx: &mut Ctx<'_, Self>) {
        let Some(i) = self.writes.iter().position(|w| w.1 == version) else { return };
        let w = &mut self.writes[i];
        if !w.3.contains(&from) {
            w.3.push(from);
        }
        if w.3.len() >= MAJORITY {
            let (client, version, value, _) = self.writes.remove(i);
            self.committed = self.committed.max((version, value));
            ctx.observe(Hist::ok(client, "write", Some(value)));
        }
    }

    fn read_ack(&mut self, from: NodeId, client: u64, ctx: &mut Ctx<'_, Self>) {
        let Some(i) = self.reads.iter().position(|r| r.0 == client) else { return };
        if !self.reads[i].1.contains(&from) {
            self.reads[i].1.push(from);
        }
        if self.reads[i].1.len() >= MAJORITY {
            self.reads.remove(i);
            ctx.observe(Hist::ok(client, "read", Some(self.committed.1)));
        }
    }
}
