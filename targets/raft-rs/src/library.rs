//! One narrow interface over the two published raft-rs versions, so the harness in
//! [`crate::node`] is written once.
//!
//! The two releases differ in their protocol-buffer runtime, not in the API the harness uses:
//! 0.4.1 generates its message types with prost (plus a rust-protobuf-style wrapper, so both
//! implement `protobuf::Message`), 0.4.2 with rust-protobuf; constructors differ (`new_()` vs
//! `new()`) but both implement `Default`, which is all the harness calls. Everything else
//! (`RawNode`, `MemStorage`, `Ready`, `Config`) has the same shape, so one macro body serves
//! both.
//!
//! Hidden randomness: raft-rs draws each randomised election timeout from `rand::thread_rng()`
//! in `[min_election_tick, max_election_tick)`. The harness sets `max_election_tick =
//! min_election_tick + 1`, so the draw has one possible value and the library's behaviour does
//! not depend on it (the call still reads the thread RNG, whose state nothing observes). The
//! randomness that election timeouts exist for comes instead from weft's decisions: whenever
//! the library resets its election timer, the harness holds that node's clock back by 0 to
//! `election_tick - 1` ticks, which gives the `[election_tick, 2 * election_tick)` spread the
//! library's defaults would (see [`crate::node`]).
//! The library reads no clock; its `FxHashMap`s hash with a fixed function, so iteration order
//! is a function of the inserted keys only.
//!
//! Each version is built by `build.rs` as the wrapper crate `raft_v0_4_N`.

use std::fmt::Debug;

/// What a committed log entry holds, as the harness decodes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A client value (8 bytes, little-endian).
    Value(u64),
    /// A configuration change adding this raft id as a voter.
    AddNode(u64),
    /// The empty entry a new leader appends (or a refused configuration change).
    Empty,
    /// Anything else (never produced by this harness).
    Other,
}

/// A committed entry handed to the harness's apply queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Committed {
    pub index: u64,
    pub term: u64,
    pub kind: Kind,
}

/// Timing shared by both versions, in ticks of the harness's tick timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tuning {
    pub election_ticks: usize,
    pub heartbeat_ticks: usize,
}

/// A node's role in its term.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Follower,
    PreCandidate,
    Candidate,
    Leader,
}

/// The role and term of one node, as the library reports them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct State {
    pub term: u64,
    pub role: Role,
    /// The raft id this node believes leads (0: none).
    pub leader_id: u64,
    pub commit: u64,
    pub last_index: u64,
}

/// The calls the harness makes on one raft-rs node. Ids are raft ids (1-based).
pub trait Library: Send + Sync + 'static {
    /// The variant name (`0.4.1`, …).
    const VERSION: &'static str;
    type Raw;
    type Msg: Clone + Debug;

    /// Node `id`, bootstrapped as a voter of `voters` (empty: a node that joins later and
    /// learns the configuration from the leader's log).
    fn build(id: u64, voters: &[u64], tuning: Tuning) -> Self::Raw;
    fn tick(r: &mut Self::Raw);
    /// Whether the library has work for the harness (messages, entries, state) beyond
    /// committed entries up to `since`.
    fn has_ready(r: &Self::Raw, since: u64) -> bool;
    /// Hands a message from the network to the library (errors, such as a response from a
    /// peer it does not know, are the library's to ignore).
    fn step(r: &mut Self::Raw, msg: Self::Msg);
    fn receiver(msg: &Self::Msg) -> u64;
    /// One short line for traces and diagrams: type, term, log position, commit, entries.
    fn summary(msg: &Self::Msg) -> String;
    /// Feeds every field of `msg` into `state`, for the trace hash. (The messages have no
    /// `Hash`; hashing their `Debug` text costs a protobuf text-format print per message.)
    fn hash_msg<H: std::hash::Hasher>(msg: &Self::Msg, state: &mut H);
    /// Proposes a client value; false if the library refused it (no leader known, a leader
    /// transfer in progress).
    fn propose(r: &mut Self::Raw, value: u64) -> bool;
    /// Proposes adding `id` as a voter; false if refused.
    fn propose_add_node(r: &mut Self::Raw, id: u64) -> bool;
    /// Asks for leadership to move to `to` (a follower forwards this to its leader).
    fn transfer_leader(r: &mut Self::Raw, to: u64);
    /// Handles one `Ready`: persists its entries and hard state to the node's `MemStorage`,
    /// moves its messages to `out`, appends committed entries after index `since` to
    /// `committed`, and acknowledges the append (`advance_append`). Applying is separate
    /// ([`Library::apply`], [`Library::advance_apply`]). False if nothing was ready.
    fn ready(
        r: &mut Self::Raw,
        since: u64,
        out: &mut Vec<Self::Msg>,
        committed: &mut Vec<Committed>,
    ) -> bool;
    /// Applies a configuration change entry to the library (`apply_conf_change`).
    fn apply_add_node(r: &mut Self::Raw, id: u64);
    /// Tells the library entries up to `index` are applied.
    fn advance_apply(r: &mut Self::Raw, index: u64);
    fn state(r: &Self::Raw) -> State;
    /// The voters this node's library currently counts votes and acks among, ascending.
    fn voters(r: &Self::Raw) -> Vec<u64>;
    /// The term of the entry at `index` in this node's log, if it holds one.
    fn term_at(r: &Self::Raw, index: u64) -> Option<u64>;
}

/// Implements [`Library`] for one version: the two APIs differ only in their crate.
macro_rules! raft_version {
    ($name:ident, $krate:ident, $version:literal) => {
        #[doc = concat!("raft-rs ", $version, " (crate `raft`) from crates.io.")]
        pub struct $name;

        impl Library for $name {
            const VERSION: &'static str = $version;
            type Raw = $krate::RawNode<$krate::storage::MemStorage>;
            type Msg = $krate::eraftpb::Message;

            fn build(id: u64, voters: &[u64], tuning: Tuning) -> Self::Raw {
                let config = $krate::Config {
                    id,
                    election_tick: tuning.election_ticks,
                    heartbeat_tick: tuning.heartbeat_ticks,
                    min_election_tick: tuning.election_ticks,
                    // One possible draw: see the module documentation.
                    max_election_tick: tuning.election_ticks + 1,
                    max_size_per_msg: 1 << 20,
                    max_inflight_msgs: 256,
                    ..Default::default()
                };
                let peers = voters.iter().map(|&id| $krate::Peer { id, context: None }).collect();
                $krate::RawNode::new(&config, $krate::storage::MemStorage::new(), peers)
                    .expect("harness configuration is valid")
            }

            fn tick(r: &mut Self::Raw) {
                r.tick();
            }

            fn has_ready(r: &Self::Raw, since: u64) -> bool {
                r.has_ready_since(Some(since))
            }

            fn step(r: &mut Self::Raw, msg: Self::Msg) {
                let _ = r.step(msg);
            }

            fn receiver(msg: &Self::Msg) -> u64 {
                msg.get_to()
            }

            fn hash_msg<H: std::hash::Hasher>(m: &Self::Msg, state: &mut H) {
                use std::hash::Hash;
                (m.get_msg_type() as i32).hash(state);
                (m.get_to(), m.get_from(), m.get_term(), m.get_log_term()).hash(state);
                (m.get_index(), m.get_commit(), m.get_reject(), m.get_reject_hint()).hash(state);
                m.get_context().hash(state);
                let entries = m.get_entries();
                entries.len().hash(state);
                for e in entries {
                    (e.get_entry_type() as i32, e.get_term(), e.get_index()).hash(state);
                    (e.get_data(), e.get_context()).hash(state);
                }
                let meta = m.get_snapshot().get_metadata();
                (meta.get_index(), meta.get_term()).hash(state);
            }

            fn summary(m: &Self::Msg) -> String {
                let mut s = format!(
                    "{:?} t{} i{}/lt{} c{}",
                    m.get_msg_type(),
                    m.get_term(),
                    m.get_index(),
                    m.get_log_term(),
                    m.get_commit()
                );
                let entries = m.get_entries();
                if !entries.is_empty() {
                    let first = entries[0].get_index();
                    s += &format!(
                        " +{} [{}..={}]",
                        entries.len(),
                        first,
                        first + entries.len() as u64 - 1
                    );
                }
                if m.get_reject() {
                    s += " reject";
                }
                if !m.get_context().is_empty() {
                    s += " transfer";
                }
                s
            }

            fn propose(r: &mut Self::Raw, value: u64) -> bool {
                r.propose(Vec::new(), value.to_le_bytes().to_vec()).is_ok()
            }

            fn propose_add_node(r: &mut Self::Raw, id: u64) -> bool {
                let mut cc = $krate::eraftpb::ConfChange::default();
                cc.set_change_type($krate::eraftpb::ConfChangeType::AddNode);
                cc.set_node_id(id);
                r.propose_conf_change(Vec::new(), cc).is_ok()
            }

            fn transfer_leader(r: &mut Self::Raw, to: u64) {
                r.transfer_leader(to);
            }

            fn ready(
                r: &mut Self::Raw,
                since: u64,
                out: &mut Vec<Self::Msg>,
                committed: &mut Vec<Committed>,
            ) -> bool {
                use $krate::eraftpb::{ConfChange, ConfChangeType, EntryType};
                if !r.has_ready_since(Some(since)) {
                    return false;
                }
                let mut rd = r.ready_since(since);
                {
                    let mut store = r.mut_store().wl();
                    store.append(&rd.entries).expect("MemStorage appends a contiguous suffix");
                    if let Some(hs) = &rd.hs {
                        store.set_hardstate(hs.clone());
                    }
                }
                out.append(&mut rd.messages);
                for e in rd.committed_entries.take().unwrap_or_default() {
                    if e.get_index() <= since {
                        continue;
                    }
                    let data = e.get_data();
                    let kind = match e.get_entry_type() {
                        EntryType::EntryNormal if data.is_empty() => Kind::Empty,
                        EntryType::EntryNormal if data.len() == 8 => {
                            Kind::Value(u64::from_le_bytes(data.try_into().expect("8 bytes")))
                        }
                        EntryType::EntryConfChange => {
                            let mut cc = ConfChange::default();
                            match $krate::protobuf::Message::merge_from_bytes(&mut cc, data) {
                                Ok(()) if cc.get_change_type() == ConfChangeType::AddNode => {
                                    Kind::AddNode(cc.get_node_id())
                                }
                                _ => Kind::Other,
                            }
                        }
                        _ => Kind::Other,
                    };
                    committed.push(Committed { index: e.get_index(), term: e.get_term(), kind });
                }
                r.advance_append(rd);
                true
            }

            fn apply_add_node(r: &mut Self::Raw, id: u64) {
                let mut cc = $krate::eraftpb::ConfChange::default();
                cc.set_change_type($krate::eraftpb::ConfChangeType::AddNode);
                cc.set_node_id(id);
                r.apply_conf_change(&cc);
            }

            fn advance_apply(r: &mut Self::Raw, index: u64) {
                r.advance_apply(index);
            }

            fn state(r: &Self::Raw) -> State {
                let raft = &r.raft;
                State {
                    term: raft.term,
                    role: match raft.state {
                        $krate::StateRole::Follower => Role::Follower,
                        $krate::StateRole::PreCandidate => Role::PreCandidate,
                        $krate::StateRole::Candidate => Role::Candidate,
                        $krate::StateRole::Leader => Role::Leader,
                    },
                    leader_id: raft.leader_id,
                    commit: raft.raft_log.committed,
                    last_index: raft.raft_log.last_index(),
                }
            }

            fn voters(r: &Self::Raw) -> Vec<u64> {
                r.raft.prs().nodes()
            }

            fn term_at(r: &Self::Raw, index: u64) -> Option<u64> {
                let log = &r.raft.raft_log;
                if index == 0 || index > log.last_index() {
                    return None;
                }
                log.term(index).ok()
            }
        }
    };
}

raft_version!(V0_4_1, raft_v0_4_1, "0.4.1");
raft_version!(V0_4_2, raft_v0_4_2, "0.4.2");
