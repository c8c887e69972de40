//! weft-async runs async Rust in-process under weft's kernel. Each simulated node owns a
//! deterministic single-threaded executor ([`spawn`], [`JoinHandle`], [`yield_now`]) that the
//! kernel drives: a message, a timer or a start is one kernel event, after which the node's
//! ready tasks are polled until none is ready, and *which* ready task is polled next is a
//! decision (0 = first woken first), so task interleavings are explored, shrunk and replayed
//! like message orders. [`time`] is virtual (`sleep`, `interval`, `timeout`, `Instant`);
//! [`net`] has tokio-shaped `TcpListener`/`TcpStream`/`UdpSocket` over weft's network model
//! (latency, drop, duplicate, delay, partitions; streams retransmit and reset); [`fs`] is the
//! node's simulated disk, which survives a crash; [`random`] draws from the decision source;
//! [`history`] records Jepsen-style client operations for `weft_check`; [`sync::watch`] is a
//! watch channel whose waiters wake in a deterministic order. [`AsyncNode`] is the
//! `weft_sim::Node` that hosts one entry function per node; a crash drops all its tasks and a
//! restart reruns the entry function. No threads, no real clock, no hash-ordered wake-ups.

pub mod fs;
pub mod history;
pub mod io;
pub mod net;
mod node;
pub mod random;
mod rt;
pub mod sync;
mod task;
pub mod time;

pub use node::{entry, world, AsyncNode, AsyncObs, Entry, SCHEDULE_STREAM};
pub use task::{spawn, yield_now, JoinError, JoinHandle};

/// The id of the node the calling task runs on.
pub fn node_id() -> u32 {
    rt::with_state(|s| s.id)
}

/// How many nodes the world has (ids are `0..nodes`).
pub fn nodes() -> usize {
    rt::with_state(|s| s.nodes)
}

/// Sets the one-line state this node shows in timelines and diagrams (`weft show`).
pub fn set_status(text: impl Into<String>) {
    let text = text.into();
    rt::with_state(|s| s.status = text);
}
