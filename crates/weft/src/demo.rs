//! The small system the guide (`docs/guide/`) walks through, kept here so every page can use
//! it: a primary (node 0) that takes writes and a replica (node 1) that serves reads from its
//! own copy, which the primary updates by a message. The `buggy` replica answers reads at once
//! — a read can return a value older than a write already acknowledged — and the `fixed` one
//! forwards reads to the primary. Step 2 of the guide shows this code.

use crate::history::Hist;
use crate::{Ctx, Node, NodeId, TimerId, World};

#[derive(Clone, Debug, Hash)]
pub enum Msg {
    Update(u64),
    Read { client: u64 },
    ReadReply { client: u64, value: u64 },
}

#[derive(Clone, Debug, Hash)]
pub enum Req {
    Write { client: u64, value: u64 },
    Read { client: u64 },
}

pub struct Cache {
    id: NodeId,
    value: u64,
    forward_reads: bool,
    /// Reads forwarded and not yet answered (a reply may arrive twice: messages duplicate).
    reads: Vec<u64>,
}

impl Node for Cache {
    type Msg = Msg;
    type Req = Req;
    type Obs = Hist;
    const CHECK_ON_CHANGE: bool = true;

    fn on_start(&mut self, _ctx: &mut Ctx<'_, Self>) {}

    fn on_request(&mut self, req: Req, ctx: &mut Ctx<'_, Self>) {
        match req {
            Req::Write { client, value } => {
                ctx.observe(Hist::invoke(client, "write", Some(value)));
                self.value = value;
                ctx.send(1, Msg::Update(value));
                ctx.observe(Hist::ok(client, "write", Some(value)));
            }
            Req::Read { client } => {
                ctx.observe(Hist::invoke(client, "read", None));
                if self.forward_reads {
                    self.reads.push(client);
                    ctx.send(0, Msg::Read { client });
                } else {
                    ctx.observe(Hist::ok(client, "read", Some(self.value)));
                }
            }
        }
    }

    fn on_message(&mut self, _from: NodeId, msg: Msg, ctx: &mut Ctx<'_, Self>) {
        match msg {
            Msg::Update(value) => self.value = value,
            Msg::Read { client } => ctx.send(1, Msg::ReadReply { client, value: self.value }),
            Msg::ReadReply { client, value } if self.reads.contains(&client) => {
                self.reads.retain(|&c| c != client);
                ctx.observe(Hist::ok(client, "read", Some(value)))
            }
            Msg::ReadReply { .. } => {} // a duplicate
        }
    }

    fn on_timer(&mut self, _: TimerId, _: u64, _: &mut Ctx<'_, Self>) {}

    fn describe(&self) -> String {
        format!("n{} value={}", self.id, self.value)
    }
}

/// The demo as a [`World`]: writes of 1, 2, 3 to the primary (client 0) and reads at the
/// replica (clients 1, 2, 3), at times the search picks; the history must be a linearizable
/// register. Nodes keep no disk, so the scenario has no crashes.
pub fn world() -> World<Cache> {
    World::new("stale-cache", 2, |cfg, id| Cache {
        id,
        value: 0,
        forward_reads: cfg.is("fixed"),
        reads: Vec::new(),
    })
    .variant("buggy", "the replica answers reads from its own copy")
    .variant("fixed", "the replica forwards reads to the primary")
    .workload(|_| {
        Box::new(|d, _| {
            let mut at = |n: u64| weft_core::SimTime(n * 10_000_000 + d.choose(10) * 1_000_000);
            let mut reqs = Vec::new();
            for i in 0..3 {
                reqs.push((at(2 * i), 0, Req::Write { client: 0, value: i + 1 }));
                reqs.push((at(2 * i + 1), 1, Req::Read { client: 1 + i }));
            }
            reqs
        })
    })
    .scenario(|_, s| s.budget.crashes = 0)
    .always("Linearizable", crate::history::register)
}
