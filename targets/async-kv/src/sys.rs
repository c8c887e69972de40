//! The one file that names the runtime. Under weft these are weft-async's types; on tokio the
//! same code would `use tokio::net::…`, `tokio::time::…`, `tokio::io::…` and `tokio::spawn`.
//! What has no tokio counterpart is here too: where a node lives, its randomness (drawn from
//! the decision source) and its durable state (the node's simulated disk).

pub use weft_async::io::{AsyncReadExt, AsyncWriteExt};
pub use weft_async::net::{TcpListener, TcpStream, UdpSocket};
pub use weft_async::spawn;
/// `tokio::sync::watch` on tokio. weft-async's has a deterministic wake order, which tokio's
/// lacks when tokio is built with `rt` (see `weft_async::sync`).
pub use weft_async::sync::watch;
pub use weft_async::time::{sleep, timeout, Duration, Instant};

use std::net::SocketAddr;

pub fn addr(node: u32, port: u16) -> SocketAddr {
    weft_async::net::node_addr(node, port)
}

/// Client histories (`invoke`, `ok`, `fail`, `info`), checked by `weft_check`.
pub use weft_async::history;

/// A random value in `0..n` (a workload's shape).
pub async fn choose(n: u64) -> u64 {
    weft_async::random::choose(n).await
}

/// A random value in `0..n` the protocol's liveness relies on (an election timeout).
pub async fn random(n: u64, salt: u64) -> u64 {
    weft_async::random::fair(n, salt).await
}

/// Writes `bytes` durably as the node's state file.
pub async fn persist(bytes: &[u8]) {
    weft_async::fs::write("state.tmp", bytes).await.expect("disk write");
    weft_async::fs::sync_all("state.tmp").await.expect("disk fsync");
    weft_async::fs::rename("state.tmp", "state").await.expect("disk rename");
    weft_async::fs::sync_dir("").await.expect("disk fsync of the directory");
}

/// The node's state file, if it ever persisted one.
pub async fn load() -> Option<Vec<u8>> {
    weft_async::fs::read("state").await.ok()
}

pub fn set_status(text: String) {
    weft_async::set_status(text)
}
