//! async-kv three ways: the async code in-process on weft-async, the same protocol as a
//! sans-IO node on weft-sim, and the *same async source files* (`src/server.rs`,
//! `src/client.rs`, `src/wire.rs`, compiled here against a tokio `sys` module) on a real
//! tokio current-thread runtime with loopback sockets. `cargo bench -p weft-target-async-kv`.
//!
//! Reported: kernel events per second (in-process runs), wall time per workload (3 clients ×
//! 6 operations; in-process: a whole run, 2 s of virtual time, under the default fault
//! scenario; tokio: until the clients finish, fault-free), client operations per wall second,
//! and the ratios.
// A benchmark measures wall time and prints: both are what it is for.
#![allow(clippy::disallowed_methods, clippy::print_stdout)]

mod sansio;

use std::time::{Duration as StdDuration, Instant as WallInstant};
use weft_core::{Decisions, NullObserver};

/// The async protocol again, on tokio: `crate::sys` is this file's tokio module.
#[path = "../src/client.rs"]
#[allow(dead_code)]
mod client;
#[path = "../src/server.rs"]
#[allow(dead_code)]
mod server;
#[path = "../src/wire.rs"]
#[allow(dead_code)]
mod wire;

/// What `src/sys.rs` is under weft, for tokio: the `use` lines change, and the helpers with no
/// tokio counterpart get plain implementations (a xorshift for randomness, an in-memory no-op
/// for the disk, counters for the history).
#[allow(dead_code)]
mod sys {
    use std::cell::Cell;
    use std::net::SocketAddr;
    pub use tokio::io::{AsyncReadExt, AsyncWriteExt};
    pub use tokio::net::{TcpListener, TcpStream, UdpSocket};
    pub use tokio::sync::watch;
    pub use tokio::task::spawn_local as spawn;
    pub use tokio::time::{sleep, timeout, Duration, Instant};

    thread_local! {
        static RNG: Cell<u64> = const { Cell::new(0x9e37_79b9_7f4a_7c15) };
        pub static OPS: Cell<u64> = const { Cell::new(0) };
        pub static BASE: Cell<u16> = const { Cell::new(21000) };
    }

    pub fn addr(node: u32, port: u16) -> SocketAddr {
        let base = BASE.with(|b| b.get());
        SocketAddr::from(([127, 0, 0, 1], base + node as u16 * 10 + (port - 7000)))
    }

    fn next() -> u64 {
        RNG.with(|r| {
            let mut x = r.get();
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            r.set(x);
            x
        })
    }

    pub async fn choose(n: u64) -> u64 {
        next() % n
    }

    pub async fn random(n: u64, _salt: u64) -> u64 {
        next() % n
    }

    pub async fn persist(_bytes: &[u8]) {}

    pub async fn load() -> Option<Vec<u8>> {
        None
    }

    pub fn set_status(_text: String) {}

    pub mod history {
        use serde_json::Value;
        fn count() {
            super::OPS.with(|o| o.set(o.get() + 1));
        }
        pub fn invoke(_p: u64, _f: &str, _k: Option<Value>, _v: Value) {}
        pub fn ok(_p: u64, _f: &str, _k: Option<Value>, _v: Value) {
            count()
        }
        pub fn fail(_p: u64, _f: &str, _k: Option<Value>) {
            count()
        }
        pub fn info(_p: u64, _f: &str, _k: Option<Value>) {
            count()
        }
    }
}

const RUNS: u64 = 200;
const CLIENTS: u64 = 3;
const OPS: u64 = 6;

struct Measured {
    events: u64,
    wall: StdDuration,
}

fn in_process() -> Measured {
    let spec = weft_target_async_kv::spec(false, CLIENTS, OPS);
    let sc = weft_target_async_kv::default_scenario();
    let t = WallInstant::now();
    let events = (0..RUNS)
        .map(|seed| spec.run(&sc, &mut Decisions::random(seed), &mut NullObserver).events)
        .sum();
    Measured { events, wall: t.elapsed() }
}

fn sans_io() -> Measured {
    let spec = sansio::spec(CLIENTS, OPS);
    let sc = weft_target_async_kv::default_scenario();
    let t = WallInstant::now();
    let events = (0..RUNS)
        .map(|seed| spec.run(&sc, &mut Decisions::random(seed), &mut NullObserver).events)
        .sum();
    Measured { events, wall: t.elapsed() }
}

/// One workload on real tokio; returns its wall time and the operations completed.
fn on_tokio(base: u16) -> (StdDuration, u64) {
    sys::BASE.with(|b| b.set(base));
    sys::OPS.with(|o| o.set(0));
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let local = tokio::task::LocalSet::new();
    let t = WallInstant::now();
    local.block_on(&rt, async {
        for id in 0..server::SERVERS {
            tokio::task::spawn_local(server::server(id, false));
        }
        client::clients(CLIENTS, OPS).await;
    });
    (t.elapsed(), sys::OPS.with(|o| o.get()))
}

fn main() {
    let a = in_process();
    let s = sans_io();
    let per = |m: &Measured| m.wall / RUNS as u32;
    let rate = |m: &Measured| m.events as f64 / m.wall.as_secs_f64();
    println!("async-kv, {CLIENTS} clients x {OPS} ops, {RUNS} runs of 2 s virtual time each:");
    println!(
        "  in-process async (weft-async): {:>9.0} events/s, {:>6} events/run, {:>8.2?}/run",
        rate(&a),
        a.events / RUNS,
        per(&a)
    );
    println!(
        "  in-process sans-IO (weft-sim): {:>9.0} events/s, {:>6} events/run, {:>8.2?}/run",
        rate(&s),
        s.events / RUNS,
        per(&s)
    );
    let tokio_runs = 3;
    let mut wall = StdDuration::ZERO;
    let mut ops = 0;
    for i in 0..tokio_runs {
        let (w, n) = on_tokio(21000 + i * 100);
        wall += w;
        ops += n;
    }
    let tokio_per = wall / tokio_runs as u32;
    println!(
        "  real tokio, loopback sockets:  {:>8.2?}/workload, {:.1} client ops/s (real time)",
        tokio_per,
        ops as f64 / wall.as_secs_f64()
    );
    let async_ops = (CLIENTS * OPS) as f64 / per(&a).as_secs_f64();
    println!("  in-process async: {async_ops:.0} client ops/s (wall)");
    println!("ratios:");
    println!("  sans-IO / async, events/s:              {:.2}", rate(&s) / rate(&a));
    println!(
        "  sans-IO / async, wall per run:          {:.2}",
        per(&s).as_secs_f64() / per(&a).as_secs_f64()
    );
    println!(
        "  tokio wall per workload / async wall per run: {:.1}",
        tokio_per.as_secs_f64() / per(&a).as_secs_f64()
    );
}
