//! The async-kv protocol as a sans-IO `weft_sim::Node`, for the benchmark: the same
//! elections (randomised timeouts, one vote per term, up-to-date check), whole-state
//! replication with a heartbeat, commit by majority, the same persisted JSON state, and the
//! same clients (think time, leader hints, call timeout) — as messages and timers instead of
//! tasks and streams.

use serde::Serialize;
use std::collections::BTreeMap;
use weft_core::SimDuration;
use weft_sim::{Ctx, Node, NodeId, SimSpec, TimerId};

const SERVERS: u32 = 3;
const HEARTBEAT: SimDuration = SimDuration::from_millis(30);
const CALL_TIMEOUT: SimDuration = SimDuration::from_millis(600);
const T_ELECTION: u64 = 1;
const T_HEARTBEAT: u64 = 2;
const T_THINK: u64 = 100;
const T_TIMEOUT: u64 = 200;

#[derive(Clone, Debug, Default, Hash, Serialize)]
pub struct Snap {
    last_term: u64,
    index: u64,
    kv: BTreeMap<u64, u64>,
}

#[derive(Clone, Debug, Hash)]
pub enum Msg {
    RequestVote { term: u64, version: (u64, u64) },
    Vote { term: u64, granted: bool },
    Append { term: u64, snap: Snap },
    Ack { term: u64, index: u64 },
    Req { client: u64, key: u64, put: Option<u64> },
    Resp { client: u64, done: bool, hint: Option<u32> },
}

#[derive(Default, Serialize)]
struct Durable {
    term: u64,
    voted_for: Option<u32>,
    snap: Snap,
}

#[derive(Default)]
struct Server {
    d: Durable,
    role: u8, // 0 follower, 1 candidate, 2 leader
    votes: usize,
    heard: bool,
    hint: Option<u32>,
    matched: [u64; 3],
    commit: u64,
    /// (index, client) waiting for commit.
    pending: Vec<(u64, u64)>,
}

#[derive(Default)]
struct Client {
    leader: u32,
    done: u64,
    waiting: Option<TimerId>,
}

pub struct KvNode {
    id: NodeId,
    server: Server,
    clients: Vec<Client>,
    ops: u64,
}

impl KvNode {
    fn persist(&mut self, ctx: &mut Ctx<'_, Self>) {
        let bytes = serde_json::to_vec(&self.server.d).expect("serializes");
        let mut disk = ctx.disk();
        let _ = disk.create("state.tmp");
        let _ = disk.truncate("state.tmp", 0);
        let _ = disk.write("state.tmp", 0, &bytes);
        let _ = disk.fsync("state.tmp");
        let _ = disk.rename("state.tmp", "state");
        let _ = disk.fsync_dir("");
    }

    fn observe_term(&mut self, term: u64) {
        let s = &mut self.server;
        if term > s.d.term {
            s.d.term = term;
            s.d.voted_for = None;
            s.role = 0;
        }
    }

    fn broadcast(&mut self, ctx: &mut Ctx<'_, Self>) {
        let msg = Msg::Append { term: self.server.d.term, snap: self.server.d.snap.clone() };
        for p in (0..SERVERS).filter(|&p| p != self.id) {
            ctx.send(p, msg.clone());
        }
    }

    fn election_timer(&mut self, ctx: &mut Ctx<'_, Self>) {
        let ms = 150 + ctx.fair_choose(150, 0);
        ctx.set_timer(SimDuration::from_millis(ms), T_ELECTION);
    }

    fn think(&mut self, c: u64, ctx: &mut Ctx<'_, Self>) {
        if self.clients[c as usize].done < self.ops {
            let ms = 20 + ctx.choose(40);
            ctx.set_timer(SimDuration::from_millis(ms), T_THINK + c);
        }
    }

    fn call(&mut self, c: u64, ctx: &mut Ctx<'_, Self>) {
        let key = ctx.choose(2);
        let put = (ctx.choose(2) == 1).then_some(100 * (c + 1) + self.clients[c as usize].done);
        let to = self.clients[c as usize].leader;
        ctx.send(to, Msg::Req { client: c, key, put });
        self.clients[c as usize].waiting = Some(ctx.set_timer(CALL_TIMEOUT, T_TIMEOUT + c));
    }

    fn on_server_msg(&mut self, from: NodeId, msg: Msg, ctx: &mut Ctx<'_, Self>) {
        match msg {
            Msg::RequestVote { term, version } => {
                self.observe_term(term);
                let s = &mut self.server;
                let free = s.d.voted_for.is_none_or(|v| v == from);
                let granted =
                    term == s.d.term && free && version >= (s.d.snap.last_term, s.d.snap.index);
                if granted {
                    s.d.voted_for = Some(from);
                    s.heard = true;
                }
                let term = s.d.term;
                self.persist(ctx);
                ctx.send(from, Msg::Vote { term, granted });
            }
            Msg::Vote { term, granted } => {
                self.observe_term(term);
                let s = &mut self.server;
                if s.role == 1 && term == s.d.term && granted {
                    s.votes += 1;
                    if s.votes == 2 {
                        s.role = 2;
                        s.hint = Some(self.id);
                        s.d.snap.last_term = s.d.term;
                        s.d.snap.index += 1;
                        s.matched = [0; 3];
                        s.matched[self.id as usize] = s.d.snap.index;
                        self.persist(ctx);
                        self.broadcast(ctx);
                        ctx.set_timer(HEARTBEAT, T_HEARTBEAT);
                    }
                }
            }
            Msg::Append { term, snap } => {
                let reply = if term < self.server.d.term {
                    Msg::Ack { term: self.server.d.term, index: 0 }
                } else {
                    self.observe_term(term);
                    let s = &mut self.server;
                    s.role = 0;
                    s.hint = Some(from);
                    s.heard = true;
                    let index = snap.index;
                    if (snap.last_term, snap.index) > (s.d.snap.last_term, s.d.snap.index) {
                        s.d.snap = snap;
                        self.persist(ctx);
                    }
                    Msg::Ack { term, index }
                };
                ctx.send(from, reply);
            }
            Msg::Ack { term, index } => {
                if term > self.server.d.term {
                    self.observe_term(term);
                    self.persist(ctx);
                    return;
                }
                let s = &mut self.server;
                if term == s.d.term && s.role == 2 {
                    let m = &mut s.matched[from as usize];
                    *m = (*m).max(index);
                    let mut sorted = s.matched;
                    sorted.sort_unstable_by(|a, b| b.cmp(a));
                    s.commit = s.commit.max(sorted[1]);
                    let commit = s.commit;
                    let (ready, rest): (Vec<_>, Vec<_>) =
                        s.pending.drain(..).partition(|&(i, _)| i <= commit);
                    s.pending = rest;
                    for (_, client) in ready {
                        ctx.send(SERVERS, Msg::Resp { client, done: true, hint: None });
                    }
                }
            }
            Msg::Req { client, key, put } => {
                let s = &mut self.server;
                if s.role != 2 {
                    let hint = s.hint;
                    ctx.send(from, Msg::Resp { client, done: false, hint });
                    return;
                }
                if let Some(v) = put {
                    s.d.snap.kv.insert(key, v);
                }
                s.d.snap.index += 1;
                s.matched[self.id as usize] = s.d.snap.index;
                s.pending.push((s.d.snap.index, client));
                self.persist(ctx);
                self.broadcast(ctx);
            }
            Msg::Resp { .. } => {}
        }
    }
}

impl Node for KvNode {
    type Msg = Msg;
    type Req = ();
    type Obs = ();

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        if self.id < SERVERS {
            self.election_timer(ctx);
        } else {
            for c in 0..self.clients.len() as u64 {
                self.think(c, ctx);
            }
        }
    }

    fn on_message(&mut self, from: NodeId, msg: Msg, ctx: &mut Ctx<'_, Self>) {
        if self.id < SERVERS {
            return self.on_server_msg(from, msg, ctx);
        }
        if let Msg::Resp { client, done, hint } = msg {
            let cl = &mut self.clients[client as usize];
            let Some(t) = cl.waiting.take() else { return };
            ctx.cancel_timer(t);
            if done {
                cl.done += 1;
                self.think(client, ctx);
            } else {
                cl.leader = hint.filter(|&h| h != from).unwrap_or((from + 1) % SERVERS);
                self.call(client, ctx);
            }
        }
    }

    fn on_timer(&mut self, _t: TimerId, tag: u64, ctx: &mut Ctx<'_, Self>) {
        match tag {
            T_ELECTION => {
                let s = &mut self.server;
                if s.role != 2 && !s.heard {
                    s.d.term += 1;
                    s.d.voted_for = Some(self.id);
                    s.role = 1;
                    s.votes = 1;
                    let msg = Msg::RequestVote {
                        term: s.d.term,
                        version: (s.d.snap.last_term, s.d.snap.index),
                    };
                    self.persist(ctx);
                    for p in (0..SERVERS).filter(|&p| p != self.id) {
                        ctx.send(p, msg.clone());
                    }
                }
                self.server.heard = false;
                self.election_timer(ctx);
            }
            T_HEARTBEAT => {
                if self.server.role == 2 {
                    self.broadcast(ctx);
                    ctx.set_timer(HEARTBEAT, T_HEARTBEAT);
                }
            }
            t if (T_THINK..T_TIMEOUT).contains(&t) => self.call(t - T_THINK, ctx),
            t => {
                let c = t - T_TIMEOUT;
                let cl = &mut self.clients[c as usize];
                cl.waiting = None;
                cl.done += 1;
                cl.leader = (cl.leader + 1) % SERVERS;
                self.think(c, ctx);
            }
        }
    }

    fn describe(&self) -> String {
        String::new()
    }
}

pub fn spec(clients: u64, ops: u64) -> SimSpec<KvNode> {
    SimSpec {
        nodes: SERVERS as usize + 1,
        make: Box::new(move |id| KvNode {
            id,
            server: Server::default(),
            clients: (0..clients).map(|_| Client::default()).collect(),
            ops,
        }),
        workload: Box::new(|_, _| Vec::new()),
        properties: Vec::new(),
        assumptions: Vec::new(),
        crash_gate: Some(|_, n| n != SERVERS),
        focus: None,
    }
}
