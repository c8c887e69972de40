//! A server: Raft-style elections over UDP (randomised timeouts, one vote per term, the
//! up-to-date check), and replication of the whole state over one stream per follower (the
//! leader sends its snapshot on every change and as a heartbeat; a follower keeps the newer of
//! its own and the leader's). A write (or a read, as a barrier) bumps the leader's index; it
//! is answered once a majority holds that index in the leader's term. The `buggy` leader
//! answers a write as soon as it has applied it locally.
//!
//! Terms, votes and the state are persisted before any message that depends on them.

use crate::sys::{
    addr, load, persist, random, set_status, sleep, spawn, timeout, watch, Duration, Instant,
    TcpListener, TcpStream, UdpSocket,
};
use crate::wire::{decode, encode, recv_frame, send_frame, Peer, Request, Response, Snapshot};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::rc::Rc;

pub const SERVERS: u32 = 3;
const MAJORITY: usize = 2;
pub const VOTE_PORT: u16 = 7000;
pub const REPL_PORT: u16 = 7001;
pub const CLIENT_PORT: u16 = 7002;
const HEARTBEAT: Duration = Duration::from_millis(30);
const ELECTION_MS: u64 = 150;
const COMMIT_WAIT: Duration = Duration::from_millis(400);

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Durable {
    term: u64,
    voted_for: Option<u32>,
    snap: Snapshot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Follower,
    Candidate,
    Leader,
}

struct Server {
    id: u32,
    buggy: bool,
    d: Durable,
    role: Role,
    votes: usize,
    last_heard: Instant,
    leader_hint: Option<u32>,
    /// Leader: the highest index each server acknowledged in this term.
    matched: Vec<u64>,
    /// (term, commit index) as the leader of that term last computed it.
    commit: watch::Sender<(u64, u64)>,
    /// The leader's index, for replicators waiting for something to send.
    changed: watch::Sender<u64>,
}

type Shared = Rc<RefCell<Server>>;

impl Server {
    /// A higher term seen anywhere: follow it, with no vote cast yet.
    fn observe_term(&mut self, term: u64) {
        if term > self.d.term {
            self.d.term = term;
            self.d.voted_for = None;
            self.role = Role::Follower;
        }
    }

    fn show(&self) {
        let role = format!("{:?}", self.role).to_lowercase();
        let snap = &self.d.snap;
        set_status(format!(
            "{role} t{} v{}.{} {:?}",
            self.d.term, snap.last_term, snap.index, snap.kv
        ));
    }
}

async fn save(node: &Shared) {
    let d = node.borrow().d.clone();
    persist(&encode(&d)).await;
    node.borrow().show();
}

pub async fn server(id: u32, buggy: bool) {
    let d: Durable = match load().await {
        Some(bytes) => decode(&bytes).expect("a state this server wrote"),
        None => Durable::default(),
    };
    let (commit, _) = watch::channel((d.term, 0));
    let (changed, _) = watch::channel(0);
    let node = Rc::new(RefCell::new(Server {
        id,
        buggy,
        d,
        role: Role::Follower,
        votes: 0,
        last_heard: Instant::now(),
        leader_hint: None,
        matched: vec![0; SERVERS as usize],
        commit,
        changed,
    }));
    node.borrow().show();
    let udp = Rc::new(UdpSocket::bind(addr(id, VOTE_PORT)).await.expect("bind votes"));
    let replication = TcpListener::bind(addr(id, REPL_PORT)).await.expect("bind replication");
    let clients = TcpListener::bind(addr(id, CLIENT_PORT)).await.expect("bind clients");
    spawn(votes(node.clone(), udp.clone()));
    spawn(accept_leaders(node.clone(), replication));
    spawn(accept_clients(node.clone(), clients));
    elections(node, udp).await;
}

/// Starts an election whenever a randomised timeout passes without hearing from a leader.
async fn elections(node: Shared, udp: Rc<UdpSocket>) {
    let id = node.borrow().id;
    let mut round = 0;
    loop {
        round += 1;
        let wait = Duration::from_millis(ELECTION_MS + random(ELECTION_MS, round).await);
        sleep(wait).await;
        let request = {
            let mut n = node.borrow_mut();
            if n.role == Role::Leader || n.last_heard.elapsed() < wait {
                continue;
            }
            n.d.term += 1;
            n.d.voted_for = Some(id);
            n.role = Role::Candidate;
            n.votes = 1;
            Peer::RequestVote { term: n.d.term, candidate: id, version: n.d.snap.version() }
        };
        save(&node).await;
        for peer in (0..SERVERS).filter(|&p| p != id) {
            let _ = udp.send_to(&encode(&request), addr(peer, VOTE_PORT)).await;
        }
    }
}

/// Answers vote requests and counts votes.
async fn votes(node: Shared, udp: Rc<UdpSocket>) {
    let mut buf = vec![0u8; 4096];
    loop {
        let Ok((len, from)) = udp.recv_from(&mut buf).await else { continue };
        let Ok(msg) = decode::<Peer>(&buf[..len]) else { continue };
        match msg {
            Peer::RequestVote { term, candidate, version } => {
                let reply = {
                    let mut n = node.borrow_mut();
                    n.observe_term(term);
                    let free = n.d.voted_for.is_none_or(|v| v == candidate);
                    let granted = term == n.d.term && free && version >= n.d.snap.version();
                    if granted {
                        n.d.voted_for = Some(candidate);
                        n.last_heard = Instant::now();
                    }
                    Peer::Vote { term: n.d.term, granted }
                };
                save(&node).await;
                let _ = udp.send_to(&encode(&reply), from).await;
            }
            Peer::Vote { term, granted } => {
                let won = {
                    let mut n = node.borrow_mut();
                    n.observe_term(term);
                    let counts = n.role == Role::Candidate && term == n.d.term && granted;
                    n.votes += counts as usize;
                    counts && n.votes == MAJORITY
                };
                save(&node).await;
                if won {
                    lead(node.clone()).await;
                }
            }
            _ => {}
        }
    }
}

/// Becomes leader: a no-op bump makes every state it sends carry its own term.
async fn lead(node: Shared) {
    let (id, term) = {
        let mut n = node.borrow_mut();
        n.role = Role::Leader;
        n.leader_hint = Some(n.id);
        n.d.snap.last_term = n.d.term;
        n.d.snap.index += 1;
        n.matched = vec![0; SERVERS as usize];
        let (id, index) = (n.id as usize, n.d.snap.index);
        n.matched[id] = index;
        (n.id, n.d.term)
    };
    save(&node).await;
    for peer in (0..SERVERS).filter(|&p| p != id) {
        spawn(replicate(node.clone(), peer, term));
    }
}

fn leads(node: &Shared, term: u64) -> bool {
    let n = node.borrow();
    n.role == Role::Leader && n.d.term == term
}

/// Keeps follower `peer` up to date for as long as this node leads in `term`.
async fn replicate(node: Shared, peer: u32, term: u64) {
    let id = node.borrow().id;
    while leads(&node, term) {
        let stream = match timeout(HEARTBEAT * 4, TcpStream::connect(addr(peer, REPL_PORT))).await {
            Ok(Ok(s)) => s,
            _ => {
                sleep(HEARTBEAT).await;
                continue;
            }
        };
        let (mut rx, mut tx) = stream.into_split();
        let acks = spawn({
            let node = node.clone();
            async move {
                while let Ok(Peer::AppendAck { term: t, index }) = recv_frame(&mut rx).await {
                    on_ack(&node, peer, term, t, index).await;
                }
            }
        });
        let mut changed = node.borrow().changed.subscribe();
        while leads(&node, term) && !acks.is_finished() {
            let snap = node.borrow().d.snap.clone();
            if send_frame(&mut tx, &Peer::Append { term, leader: id, snap }).await.is_err() {
                break;
            }
            let _ = timeout(HEARTBEAT, changed.changed()).await;
        }
        acks.abort();
    }
}

async fn on_ack(node: &Shared, peer: u32, term: u64, acked_term: u64, index: u64) {
    let stepped_down = {
        let mut n = node.borrow_mut();
        if acked_term > n.d.term {
            n.observe_term(acked_term);
            true
        } else {
            if acked_term == term && n.role == Role::Leader && n.d.term == term {
                let m = &mut n.matched[peer as usize];
                *m = (*m).max(index);
                let mut sorted = n.matched.clone();
                sorted.sort_unstable_by(|a, b| b.cmp(a));
                let commit = sorted[MAJORITY - 1];
                n.commit.send_if_modified(|c| {
                    let newer = *c < (term, commit);
                    if newer {
                        *c = (term, commit);
                    }
                    newer
                });
            }
            false
        }
    };
    if stepped_down {
        save(node).await;
    }
}

async fn accept_leaders(node: Shared, listener: TcpListener) {
    while let Ok((stream, _)) = listener.accept().await {
        spawn(follow(node.clone(), stream));
    }
}

/// Takes the leader's snapshots from one stream, acknowledging each.
async fn follow(node: Shared, stream: TcpStream) {
    let (mut rx, mut tx) = stream.into_split();
    while let Ok(Peer::Append { term, leader, snap }) = recv_frame(&mut rx).await {
        let (ack, dirty) = {
            let mut n = node.borrow_mut();
            if term < n.d.term {
                (Peer::AppendAck { term: n.d.term, index: 0 }, false)
            } else {
                let before = (n.d.term, n.d.snap.version());
                n.observe_term(term);
                n.role = Role::Follower;
                n.leader_hint = Some(leader);
                n.last_heard = Instant::now();
                if snap.version() > n.d.snap.version() {
                    n.d.snap = snap.clone();
                }
                let dirty = before != (n.d.term, n.d.snap.version());
                (Peer::AppendAck { term, index: snap.index }, dirty)
            }
        };
        if dirty {
            save(&node).await;
        }
        if send_frame(&mut tx, &ack).await.is_err() {
            return;
        }
    }
}

async fn accept_clients(node: Shared, listener: TcpListener) {
    while let Ok((mut stream, _)) = listener.accept().await {
        let node = node.clone();
        spawn(async move {
            while let Ok(req) = recv_frame::<_, Request>(&mut stream).await {
                let resp = handle(&node, req).await;
                if send_frame(&mut stream, &resp).await.is_err() {
                    return;
                }
            }
        });
    }
}

/// Serves one client operation: applied at the leader's next index, answered once committed.
async fn handle(node: &Shared, req: Request) -> Response {
    let (term, index, value, early) = {
        let mut n = node.borrow_mut();
        if n.role != Role::Leader {
            return Response::NotLeader { hint: n.leader_hint };
        }
        let (key, write) = match req {
            Request::Get { key } => (key, false),
            Request::Put { key, value } => {
                n.d.snap.kv.insert(key, value);
                (key, true)
            }
        };
        n.d.snap.index += 1;
        let (id, index) = (n.id as usize, n.d.snap.index);
        n.matched[id] = index;
        (n.d.term, index, n.d.snap.kv.get(&key).copied(), write && n.buggy)
    };
    save(node).await;
    node.borrow().changed.send_replace(index);
    if early {
        // BUG: the write is acknowledged before a majority stores it.
        return Response::Done(value);
    }
    let mut commit = node.borrow().commit.subscribe();
    let done = commit.wait_for(|&(t, c)| t != term || c >= index);
    let committed = matches!(timeout(COMMIT_WAIT, done).await, Ok(Ok(c)) if c.0 == term);
    if committed {
        Response::Done(value)
    } else {
        Response::Unavailable
    }
}
