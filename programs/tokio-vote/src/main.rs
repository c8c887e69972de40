//! `tokio-vote`: a leader election written as ordinary tokio code, for weft's `process` target.
//!
//! Three (or more) nodes on tokio's multi-thread runtime keep one TCP connection to every peer
//! and elect a leader with randomised election timeouts, Raft-style terms and votes; the leader
//! sends heartbeats. A node that leads term `t` and then hears another node announce itself
//! leader of the same term prints `SPLIT BRAIN` — the line weft's `forbid` option turns into a
//! safety violation.
//!
//! The planted bug: without `--fixed`, a voter does not remember whom it voted for in a term,
//! so two candidates of one term can both collect a majority. It needs two candidacies in one
//! term, so only some message timings (latencies, the timeouts drawn) expose it.
//!
//! usage: `tokio-vote ID ADDR OTHERS [--fixed] [--current-thread]` (OTHERS comma-separated
//! `ip:port`). The program reads randomness through `getrandom(2)` and time through tokio, so
//! under weft both are simulated.
// This is a program under test, not weft: it runs on real tokio, under the shim or natively.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

const HEARTBEAT: Duration = Duration::from_millis(20);
const RUN_FOR: Duration = Duration::from_millis(1500);

#[derive(Default)]
struct State {
    term: u64,
    voted_for: Option<(u64, usize)>,
    leader_of: Option<u64>,
    votes: usize,
    /// When this node campaigns unless it hears from a leader or grants a vote first.
    deadline: Option<tokio::time::Instant>,
}

/// A fresh randomised election deadline.
fn election_deadline() -> tokio::time::Instant {
    tokio::time::Instant::now() + Duration::from_millis(60 + random_u64() % 120)
}

struct Node {
    id: usize,
    fixed: bool,
    majority: usize,
    state: Mutex<State>,
    peers: Vec<mpsc::UnboundedSender<String>>,
}

fn random_u64() -> u64 {
    let mut v = 0u64;
    // SAFETY: writes at most 8 bytes into `v`.
    let n = unsafe { libc::getrandom((&raw mut v).cast(), 8, 0) };
    assert_eq!(n, 8, "getrandom");
    v
}

impl Node {
    fn broadcast(&self, msg: String) {
        for p in &self.peers {
            let _ = p.send(msg.clone());
        }
    }

    /// Handles one line from peer `from`; returns a reply for that peer, if any.
    fn on_message(&self, line: &str) -> Option<(usize, String)> {
        let mut words = line.split_whitespace();
        let (kind, term, from) = (
            words.next()?,
            words.next()?.parse::<u64>().ok()?,
            words.next()?.parse::<usize>().ok()?,
        );
        let mut s = self.state.lock().unwrap();
        if term > s.term {
            s.term = term;
            s.leader_of = None;
            s.votes = 0;
        }
        match kind {
            "REQ" if term == s.term => {
                let granted = match s.voted_for {
                    Some((t, who)) if self.fixed && t == term => who == from,
                    _ => true,
                };
                if granted {
                    s.voted_for = Some((term, from));
                    s.deadline = Some(election_deadline());
                    return Some((from, format!("VOTE {term} {}", self.id)));
                }
            }
            "VOTE" if term == s.term && s.leader_of.is_none() && s.votes > 0 => {
                s.votes += 1;
                if s.votes >= self.majority {
                    s.leader_of = Some(term);
                    println!("node {} leads term {term}", self.id);
                    drop(s);
                    self.broadcast(format!("LEAD {term} {}", self.id));
                }
            }
            "LEAD" if term == s.term => {
                if s.leader_of == Some(term) {
                    println!("SPLIT BRAIN: nodes {} and {from} both lead term {term}", self.id);
                }
                s.deadline = Some(election_deadline());
            }
            _ => {}
        }
        None
    }

    /// Starts a candidacy for the next term.
    fn campaign(&self) {
        let mut s = self.state.lock().unwrap();
        s.term += 1;
        s.voted_for = Some((s.term, self.id));
        s.votes = 1;
        s.leader_of = None;
        let term = s.term;
        drop(s);
        println!("node {} campaigns for term {term}", self.id);
        self.broadcast(format!("REQ {term} {}", self.id));
    }
}

/// Keeps one outgoing connection to `addr`, reconnecting after errors; sends what `rx` gives.
async fn sender(addr: String, mut rx: mpsc::UnboundedReceiver<String>) {
    loop {
        let Ok(mut stream) = TcpStream::connect(&addr).await else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        while let Some(msg) = rx.recv().await {
            if stream.write_all(format!("{msg}\n").as_bytes()).await.is_err() {
                break;
            }
        }
    }
}

/// Reads lines from one incoming connection.
async fn receiver(node: Arc<Node>, stream: TcpStream) {
    let mut lines = BufReader::new(stream).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if let Some((to, reply)) = node.on_message(&line) {
            let slot = if to < node.id { to } else { to - 1 };
            if let Some(p) = node.peers.get(slot) {
                let _ = p.send(reply);
            }
        }
    }
}

/// Election timer and heartbeats: a leader sends `LEAD` every heartbeat; anyone else
/// campaigns once its election deadline has passed.
async fn ticker(node: Arc<Node>) {
    node.state.lock().unwrap().deadline = Some(election_deadline());
    loop {
        tokio::time::sleep(HEARTBEAT).await;
        let (leads, term, due) = {
            let s = node.state.lock().unwrap();
            let due = s.deadline.is_none_or(|d| tokio::time::Instant::now() >= d);
            (s.leader_of == Some(s.term), s.term, due)
        };
        if leads {
            node.broadcast(format!("LEAD {term} {}", node.id));
        } else if due {
            node.state.lock().unwrap().deadline = Some(election_deadline());
            node.campaign();
        }
    }
}

async fn run(id: usize, addr: String, others: Vec<String>, fixed: bool) {
    let listener = TcpListener::bind(&addr).await.expect("bind");
    let mut peers = Vec::new();
    for other in &others {
        let (tx, rx) = mpsc::unbounded_channel();
        peers.push(tx);
        tokio::spawn(sender(other.clone(), rx));
    }
    let cluster = others.len() + 1;
    let majority = cluster / 2 + 1;
    let node = Arc::new(Node { id, fixed, majority, state: Mutex::default(), peers });
    tokio::spawn(ticker(node.clone()));
    let accept = async {
        loop {
            let (stream, _) = listener.accept().await.expect("accept");
            tokio::spawn(receiver(node.clone(), stream));
        }
    };
    tokio::select! {
        () = accept => {}
        () = tokio::time::sleep(RUN_FOR) => {}
    }
    let term = node.state.lock().unwrap().term;
    println!("node {id} done at term {term}");
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: tokio-vote ID ADDR OTHERS [--fixed] [--current-thread]");
        std::process::exit(2);
    }
    let id: usize = args[1].parse().expect("ID");
    let others: Vec<String> =
        args[3].split(',').filter(|s| !s.is_empty()).map(String::from).collect();
    let fixed = args.iter().any(|a| a == "--fixed");
    let mut builder = if args.iter().any(|a| a == "--current-thread") {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(2);
        b
    };
    let rt = builder.enable_all().build().expect("runtime");
    rt.block_on(run(id, args[2].clone(), others, fixed));
    // Leave without waiting for blocked tasks (a sender may be mid-connect).
    std::process::exit(0);
}
