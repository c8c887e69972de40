//! Clients: each is a task that runs a few reads and writes against the cluster, finds the
//! leader by following `NotLeader` hints, times out and retries, and records every operation in
//! a Jepsen history (`invoke`, then `ok`, `fail` when it certainly did not happen, `info` when
//! unknown; after an `info` the client continues as a new process, as Jepsen's do).

use crate::server::{CLIENT_PORT, SERVERS};
use crate::sys::{addr, choose, history, set_status, sleep, spawn, timeout, Duration, TcpStream};
use crate::wire::{recv_frame, send_frame, Request, Response};
use serde_json::{json, Value};
use std::io;

pub const KEYS: u64 = 2;
const CALL_TIMEOUT: Duration = Duration::from_millis(600);
const ATTEMPTS: u32 = 8;

/// Runs `clients` client tasks of `ops` operations each, and waits for them.
pub async fn clients(clients: u64, ops: u64) {
    let tasks: Vec<_> = (0..clients).map(|c| spawn(client(c, clients, ops))).collect();
    for t in tasks {
        let _ = t.await;
    }
    set_status("clients done".into());
}

enum Failure {
    /// The request never left: the operation certainly did not happen.
    NotSent,
    /// Sent, but no answer: it may have happened.
    Unknown,
}

async fn call(server: u32, req: &Request) -> Result<Response, Failure> {
    let mut stream =
        TcpStream::connect(addr(server, CLIENT_PORT)).await.map_err(|_| Failure::NotSent)?;
    let exchange = async {
        send_frame(&mut stream, req).await?;
        recv_frame::<_, Response>(&mut stream).await
    };
    match timeout(CALL_TIMEOUT, exchange).await {
        Ok(Ok(resp)) => Ok(resp),
        Ok(Err(_)) | Err(_) => Err(Failure::Unknown),
    }
}

/// Sends `req` to the leader, following hints; `None`: no server confirmed it.
async fn call_leader(leader: &mut u32, req: &Request, retry_unknown: bool) -> Option<Response> {
    for _ in 0..ATTEMPTS {
        match call(*leader, req).await {
            Ok(Response::NotLeader { hint: Some(h) }) if h != *leader => *leader = h,
            Ok(Response::NotLeader { .. }) | Err(Failure::NotSent) => {
                *leader = (*leader + 1) % SERVERS;
                sleep(Duration::from_millis(50)).await;
            }
            Ok(Response::Unavailable) | Err(Failure::Unknown) if retry_unknown => {
                *leader = (*leader + 1) % SERVERS;
            }
            Ok(Response::Unavailable) | Err(Failure::Unknown) => return None,
            Ok(done) => return Some(done),
        }
    }
    Some(Response::Unavailable)
}

async fn client(c: u64, clients: u64, ops: u64) -> io::Result<()> {
    let mut process = c;
    let mut leader = 0;
    for i in 0..ops {
        sleep(Duration::from_millis(20 + choose(40).await)).await;
        let key = choose(KEYS).await;
        let write = choose(2).await == 1;
        let k = Some(json!(key));
        if write {
            let value = 100 * (c + 1) + i + 1;
            history::invoke(process, "write", k.clone(), json!(value));
            match call_leader(&mut leader, &Request::Put { key, value }, false).await {
                Some(Response::Done(_)) => history::ok(process, "write", k, json!(value)),
                // Every attempt was refused before it reached a leader.
                Some(_) => history::fail(process, "write", k),
                None => {
                    history::info(process, "write", k);
                    process += clients;
                }
            }
        } else {
            history::invoke(process, "read", k.clone(), Value::Null);
            match call_leader(&mut leader, &Request::Get { key }, true).await {
                Some(Response::Done(v)) => history::ok(process, "read", k, json!(v)),
                _ => history::fail(process, "read", k),
            }
        }
    }
    Ok(())
}
