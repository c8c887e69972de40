//! Simulated events per second per core on a many-node message workload, beside a baseline in
//! the same run. An event is one trace event: a send, a delivery, a timer firing (so one message
//! delivered counts twice: its send and its delivery). The baseline is
//! a bare binary-heap event loop (push + pop of a timestamped entry), the floor
//! any discrete-event kernel pays per event. Prints ratios, asserts nothing (machines are noisy).
//!
//! Run: `cargo bench -p weft-sim --bench events`

#![allow(clippy::disallowed_methods)] // a benchmark reads the wall clock

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;
use std::time::Instant;
use weft_core::{Decisions, NullObserver, Scenario, SimDuration};
use weft_sim::{Ctx, Node, NodeId, SimSpec, TimerId};

/// Every node gossips a counter to a peer chosen round-robin on a 1 ms timer; receivers relay
/// each message once more.
struct Gossip {
    id: NodeId,
    next: u32,
    seen: u64,
}

#[derive(Clone, Debug, Hash)]
struct Rumour {
    hops: u8,
    value: u64,
}

impl Node for Gossip {
    type Msg = Rumour;
    type Req = ();
    type Obs = ();
    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        ctx.set_timer(SimDuration::from_millis(1), 0);
    }
    fn on_message(&mut self, _from: NodeId, msg: Rumour, ctx: &mut Ctx<'_, Self>) {
        self.seen = self.seen.wrapping_add(msg.value);
        if msg.hops == 0 {
            let to = (self.id + 7) % ctx.nodes() as NodeId;
            ctx.send(to, Rumour { hops: 1, value: msg.value });
        }
    }
    fn on_timer(&mut self, _t: TimerId, _tag: u64, ctx: &mut Ctx<'_, Self>) {
        self.next = (self.next + 1) % ctx.nodes() as u32;
        let to =
            if self.next == self.id { (self.next + 1) % ctx.nodes() as u32 } else { self.next };
        ctx.send(to, Rumour { hops: 0, value: self.seen });
        ctx.set_timer(SimDuration::from_millis(1), 0);
    }
    fn describe(&self) -> String {
        format!("seen={}", self.seen)
    }
}

fn spec(nodes: usize) -> SimSpec<Gossip> {
    SimSpec {
        nodes,
        make: Box::new(|id| Gossip { id, next: id, seen: 0 }),
        workload: Box::new(|_, _| Vec::new()),
        properties: Vec::new(),
        assumptions: Vec::new(),
        crash_gate: None,
        focus: None,
    }
}

fn kernel(nodes: usize, scenario: &Scenario, reps: u64) -> (u64, f64) {
    let s = spec(nodes);
    let start = Instant::now();
    let mut events = 0;
    for seed in 0..reps {
        let r = s.run(scenario, &mut Decisions::random(seed), &mut NullObserver);
        events += r.events;
    }
    (events, start.elapsed().as_secs_f64())
}

fn baseline(n: u64) -> f64 {
    let start = Instant::now();
    let mut heap = BinaryHeap::new();
    let mut x = 1u64;
    for i in 0..1024u64 {
        heap.push(Reverse((i, i)));
    }
    for i in 0..n {
        let Reverse((t, _)) = heap.pop().unwrap();
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        heap.push(Reverse((t + 1 + (x >> 54), i)));
    }
    black_box(heap.len());
    n as f64 / start.elapsed().as_secs_f64()
}

fn main() {
    let calm = Scenario {
        fault_phase: SimDuration::from_millis(500),
        heal_phase: SimDuration::from_millis(500),
        max_events: u64::MAX,
        ..Scenario::calm()
    };
    let faulty = Scenario { rates: Scenario::default().rates, ..calm.clone() };
    let base = baseline(20_000_000);
    println!("baseline: bare binary-heap event loop      {:>12.0} events/s", base);
    for (name, sc) in [("no faults", &calm), ("default fault rates", &faulty)] {
        for nodes in [8, 64] {
            let (events, secs) = kernel(nodes, sc, 20);
            let rate = events as f64 / secs;
            println!(
                "weft-sim: {nodes:>2} nodes gossip, {name:<19} {rate:>12.0} events/s  \
                 ({events} events, {:.1}x the bare loop's cost, {:.2}x the 5M/s/core goal)",
                base / rate,
                rate / 5e6
            );
        }
    }
}
