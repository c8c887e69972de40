//! In-process clients: client nodes that send each operation to a server over the simulated
//! network, time out, retry on another server, and record the Jepsen history (invoke / ok /
//! fail / info) that `weft-check` checks. A system under test implements [`Service`] (a
//! [`Node`] whose client requests arrive as [`Call`]s over the network and are answered with
//! [`ServerCtx::answer`]); [`Cluster`] is the node type of a world of `servers` servers
//! followed by client nodes, and the workload's requests ([`Op`]) go to client nodes.

use crate::history::{Hist, Kind};
use crate::{Ctx, Node, NodeId, TimerId};
use std::fmt::Debug;
use std::hash::Hash;
use weft_core::SimDuration;

/// A client operation: `read`, `write` (register, kv; `key` for kv) or `add` (set).
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub struct Op {
    pub f: &'static str,
    pub key: Option<u64>,
    pub value: Option<u64>,
}

/// A server's answer to a call.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub enum Answer {
    /// It happened; what a read returned.
    Ok(Option<u64>),
    /// It certainly did not happen.
    Fail,
    /// Not here (not the leader): the client tries the next server at once.
    Elsewhere,
}

/// A client's call as a server receives it.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub struct Call {
    pub client: NodeId,
    pub id: u64,
    pub op: Op,
}

/// What goes over the wire in a [`Cluster`].
#[derive(Clone, Debug, Hash)]
pub enum Wire<M> {
    Peer(M),
    Call { id: u64, op: Op },
    Answer { id: u64, answer: Answer },
}

/// A server of a system under test with clients.
pub trait Service: Sized + 'static {
    type Msg: Clone + Hash + Debug;
    fn on_start(&mut self, _ctx: &mut ServerCtx<'_, '_, Self>) {}
    fn on_message(&mut self, from: NodeId, msg: Self::Msg, ctx: &mut ServerCtx<'_, '_, Self>);
    fn on_timer(&mut self, _tag: u64, _ctx: &mut ServerCtx<'_, '_, Self>) {}
    /// A client's call; answer it now or later with [`ServerCtx::answer`].
    fn on_call(&mut self, call: Call, ctx: &mut ServerCtx<'_, '_, Self>);
    fn describe(&self) -> String;
}

/// A server's handle to the world: [`Ctx`] with peer messages and answers.
pub struct ServerCtx<'c, 'a, S: Service> {
    ctx: &'c mut Ctx<'a, Cluster<S>>,
    servers: u32,
}

impl<S: Service> ServerCtx<'_, '_, S> {
    pub fn id(&self) -> NodeId {
        self.ctx.id()
    }
    pub fn now(&self) -> weft_core::SimTime {
        self.ctx.now()
    }
    /// Number of servers (ids `0..servers`).
    pub fn servers(&self) -> u32 {
        self.servers
    }
    pub fn send(&mut self, to: NodeId, msg: S::Msg) {
        self.ctx.send(to, Wire::Peer(msg));
    }
    pub fn answer(&mut self, call: &Call, answer: Answer) {
        self.ctx.send(call.client, Wire::Answer { id: call.id, answer });
    }
    pub fn set_timer(&mut self, after: SimDuration, tag: u64) -> TimerId {
        self.ctx.set_timer(after, tag)
    }
    pub fn choose(&mut self, n: u64) -> u64 {
        self.ctx.choose(n)
    }
    pub fn fair_choose(&mut self, n: u64, salt: u64) -> u64 {
        self.ctx.fair_choose(n, salt)
    }
}

/// How clients behave: how long they wait for an answer and how often they retry.
#[derive(Clone, Copy, Debug)]
pub struct ClientPolicy {
    pub timeout: SimDuration,
    /// Further attempts (each on the next server) after a timeout before the operation ends
    /// as `info` (unknown).
    pub retries: u32,
}

impl Default for ClientPolicy {
    fn default() -> Self {
        ClientPolicy { timeout: SimDuration::from_millis(100), retries: 2 }
    }
}

/// A client node: one operation at a time (later requests wait in order), each a new Jepsen
/// process after an `info`, as Jepsen's clients are.
pub struct Client {
    servers: u32,
    policy: ClientPolicy,
    process: u64,
    next_call: u64,
    /// The server tried next.
    guess: u32,
    open: Option<Open>,
    waiting: std::collections::VecDeque<Op>,
}

/// The operation in progress: the current attempt's call id and timer, attempts made, and
/// timeouts seen.
#[derive(Clone)]
struct Open {
    id: u64,
    op: Op,
    tries: u32,
    timeouts: u32,
    timer: TimerId,
}

/// The node type of a world with servers `0..servers` and client nodes after them.
pub enum Cluster<S: Service> {
    Server(S, u32),
    Client(Client),
}

impl<S: Service> Cluster<S> {
    /// Node `id` of a world of `servers` servers built by `server`; the other nodes are clients.
    pub fn make(
        id: NodeId,
        servers: u32,
        policy: ClientPolicy,
        server: impl FnOnce(NodeId) -> S,
    ) -> Cluster<S> {
        if id < servers {
            return Cluster::Server(server(id), servers);
        }
        // Process numbers are unique across clients: client k's n-th process is n * 2^20 + k.
        let (next_call, guess, open, waiting) = (0, 0, None, Default::default());
        let process = (id - servers) as u64;
        Cluster::Client(Client { servers, policy, process, next_call, guess, open, waiting })
    }

    /// The server's state (None for a client node).
    pub fn server(&self) -> Option<&S> {
        match self {
            Cluster::Server(s, _) => Some(s),
            Cluster::Client(_) => None,
        }
    }

    fn serve(
        &mut self,
        ctx: &mut Ctx<'_, Self>,
        f: impl FnOnce(&mut S, &mut ServerCtx<'_, '_, S>),
    ) {
        if let Cluster::Server(s, servers) = self {
            let servers = *servers;
            f(s, &mut ServerCtx { ctx, servers });
        }
    }
}

impl Client {
    fn start(&mut self, op: Op, ctx: &mut Ctx<'_, Cluster<impl Service>>) {
        ctx.observe(self.event(Kind::Invoke, &op, op.value));
        self.attempt(op, 0, 0, ctx);
    }

    fn event(&self, kind: Kind, op: &Op, value: Option<u64>) -> Hist {
        Hist { kind, process: self.process, f: op.f, key: op.key, value }
    }

    fn attempt(
        &mut self,
        op: Op,
        tries: u32,
        timeouts: u32,
        ctx: &mut Ctx<'_, Cluster<impl Service>>,
    ) {
        let id = self.next_call;
        self.next_call += 1;
        ctx.send(self.guess, Wire::Call { id, op: op.clone() });
        let timer = ctx.set_timer(self.policy.timeout, id);
        self.open = Some(Open { id, op, tries, timeouts, timer });
    }

    /// The open operation ended (`kind` Ok, Fail or Info); the next waiting one starts.
    fn end(&mut self, kind: Kind, value: Option<u64>, ctx: &mut Ctx<'_, Cluster<impl Service>>) {
        let Some(open) = self.open.take() else { return };
        ctx.cancel_timer(open.timer);
        let value = if kind == Kind::Ok { value.or(open.op.value) } else { None };
        ctx.observe(self.event(kind, &open.op, value));
        if kind == Kind::Info {
            self.process += 1 << 20;
        }
        if let Some(next) = self.waiting.pop_front() {
            self.start(next, ctx);
        }
    }

    fn next_server(&mut self) {
        self.guess = (self.guess + 1) % self.servers;
    }
}

impl<S: Service> Node for Cluster<S> {
    type Msg = Wire<S::Msg>;
    type Req = Op;
    type Obs = Hist;
    const CHECK_ON_CHANGE: bool = true;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.serve(ctx, |s, c| s.on_start(c));
    }

    fn on_message(&mut self, from: NodeId, msg: Self::Msg, ctx: &mut Ctx<'_, Self>) {
        match (self, msg) {
            (me @ Cluster::Server(..), Wire::Peer(m)) => {
                me.serve(ctx, |s, c| s.on_message(from, m, c))
            }
            (me @ Cluster::Server(..), Wire::Call { id, op }) => {
                me.serve(ctx, |s, c| s.on_call(Call { client: from, id, op }, c))
            }
            (Cluster::Client(c), Wire::Answer { id, answer }) => {
                let Some(open) = c.open.clone().filter(|o| o.id == id) else {
                    return; // a late answer to an earlier attempt
                };
                match answer {
                    Answer::Ok(v) => c.end(Kind::Ok, v, ctx),
                    Answer::Fail => c.end(Kind::Fail, None, ctx),
                    Answer::Elsewhere if open.tries < c.servers * (c.policy.retries + 1) => {
                        ctx.cancel_timer(open.timer);
                        c.next_server();
                        c.attempt(open.op, open.tries + 1, open.timeouts, ctx);
                    }
                    // Every server said "elsewhere", repeatedly: it certainly did not happen.
                    Answer::Elsewhere => c.end(Kind::Fail, None, ctx),
                }
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, _timer: TimerId, tag: u64, ctx: &mut Ctx<'_, Self>) {
        match self {
            me @ Cluster::Server(..) => me.serve(ctx, |s, c| s.on_timer(tag, c)),
            Cluster::Client(c) => {
                let Some(open) = c.open.clone().filter(|o| o.id == tag) else { return };
                if open.timeouts >= c.policy.retries {
                    return c.end(Kind::Info, None, ctx); // it may or may not have happened
                }
                c.next_server();
                c.attempt(open.op, open.tries + 1, open.timeouts + 1, ctx);
            }
        }
    }

    fn on_request(&mut self, op: Op, ctx: &mut Ctx<'_, Self>) {
        if let Cluster::Client(c) = self {
            if c.open.is_some() {
                c.waiting.push_back(op);
            } else {
                c.start(op, ctx);
            }
        }
    }

    fn describe(&self) -> String {
        match self {
            Cluster::Server(s, _) => s.describe(),
            Cluster::Client(c) => match &c.open {
                Some(o) => format!("client p{}: {} (attempt {})", c.process, o.op.f, o.tries + 1),
                None => "client: idle".into(),
            },
        }
    }
}
