//! One narrow interface over the four published omnipaxos APIs, so the harness in
//! [`crate::node`] is written once.
//!
//! What differs between versions, and is absorbed here:
//! - 0.2.0–0.2.2 return outgoing messages from `outgoing_messages()`; 0.2.3 moves them into a
//!   caller's buffer with `take_outgoing_messages(&mut buf)`.
//! - 0.2.0–0.2.2 index the log with `u64`; 0.2.3 with `usize`.
//! - 0.2.0–0.2.2 `get_current_leader()` answers `Option<NodeId>`; 0.2.3 answers
//!   `Option<(NodeId, bool)>` (leader, whether this node is in the accept phase).
//! - 0.2.3 changed the default `election_tick_timeout` from 10 to 1 tick; the harness sets
//!   every timeout explicitly, so all versions run with the same timing.
//!
//! Each version is built by `build.rs` as the wrapper crate `omnipaxos_v0_2_N` (see there for
//! why they cannot be ordinary dependencies).

use std::fmt::Debug;

/// The entry type the harness replicates: a client value. Values are unique per run, so a
/// decided log is a sequence of distinct numbers and any divergence is visible.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Val(pub u64);

/// Log slot that holds something other than a client value (a stop-sign, a trimmed or
/// snapshotted index); never produced by this harness, which neither reconfigures nor compacts.
pub const NOT_A_VALUE: u64 = u64::MAX;

/// Timing shared by every version, in ticks of the harness's tick timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tuning {
    pub election_ticks: u64,
    pub resend_ticks: u64,
}

/// The calls the harness makes on one omnipaxos server. Node ids are omnipaxos pids (1-based).
pub trait Library: Send + Sync + 'static {
    /// The variant name (`0.2.0`, …).
    const VERSION: &'static str;
    type Paxos;
    type Msg: Clone + Debug;

    /// A server `pid` of the cluster `1..=nodes`, on a fresh `MemoryStorage`.
    fn build(pid: u64, nodes: u64, tuning: Tuning) -> Self::Paxos;
    fn handle_incoming(p: &mut Self::Paxos, msg: Self::Msg);
    /// Moves the server's outgoing messages to the end of `out`.
    fn take_outgoing(p: &mut Self::Paxos, out: &mut Vec<Self::Msg>);
    fn receiver(msg: &Self::Msg) -> u64;
    fn tick(p: &mut Self::Paxos);
    /// Proposes a value; false if the library refused it (only during reconfiguration).
    fn append(p: &mut Self::Paxos, value: u64) -> bool;
    fn reconnected(p: &mut Self::Paxos, pid: u64);
    fn decided_idx(p: &Self::Paxos) -> u64;
    /// Appends the values at log indices `from..to` to `out` ([`NOT_A_VALUE`] for slots that
    /// hold no client value). False if the library could not read that range.
    fn read(p: &Self::Paxos, from: u64, to: u64, out: &mut Vec<u64>) -> bool;
    fn leader(p: &Self::Paxos) -> Option<u64>;
}

/// Implements [`Library`] for one version. `$outgoing` and `$leader` name the API shape;
/// `$idx` is the version's log index type.
macro_rules! omnipaxos_version {
    ($name:ident, $krate:ident, $version:literal, idx = $idx:ty, outgoing = $outgoing:ident, leader = $leader:ident) => {
        #[doc = concat!("omnipaxos ", $version, " from crates.io.")]
        pub struct $name;

        impl $krate::storage::Entry for Val {
            type Snapshot = $krate::storage::NoSnapshot;
        }

        impl Library for $name {
            const VERSION: &'static str = $version;
            type Paxos = $krate::OmniPaxos<Val, $krate::MemoryStorage<Val>>;
            type Msg = $krate::messages::Message<Val>;

            fn build(pid: u64, nodes: u64, tuning: Tuning) -> Self::Paxos {
                let cluster = $krate::ClusterConfig {
                    configuration_id: 1,
                    nodes: (1..=nodes).collect(),
                    ..Default::default()
                };
                let server = $krate::ServerConfig {
                    pid,
                    election_tick_timeout: tuning.election_ticks,
                    resend_message_tick_timeout: tuning.resend_ticks,
                    batch_size: 1,
                    ..Default::default()
                };
                cluster
                    .build_for_server(server, $krate::MemoryStorage::default())
                    .expect("harness configuration is valid")
            }

            fn handle_incoming(p: &mut Self::Paxos, msg: Self::Msg) {
                p.handle_incoming(msg)
            }

            fn take_outgoing(p: &mut Self::Paxos, out: &mut Vec<Self::Msg>) {
                omnipaxos_version!(@outgoing $outgoing, p, out)
            }

            fn receiver(msg: &Self::Msg) -> u64 {
                msg.get_receiver()
            }

            fn tick(p: &mut Self::Paxos) {
                p.tick()
            }

            fn append(p: &mut Self::Paxos, value: u64) -> bool {
                p.append(Val(value)).is_ok()
            }

            fn reconnected(p: &mut Self::Paxos, pid: u64) {
                p.reconnected(pid)
            }

            fn decided_idx(p: &Self::Paxos) -> u64 {
                p.get_decided_idx() as u64
            }

            fn read(p: &Self::Paxos, from: u64, to: u64, out: &mut Vec<u64>) -> bool {
                if from >= to {
                    return true;
                }
                let Some(entries) = p.read_entries((from as $idx)..(to as $idx)) else {
                    return false;
                };
                out.extend(entries.into_iter().map(|e| match e {
                    $krate::util::LogEntry::Decided(v) | $krate::util::LogEntry::Undecided(v) => {
                        v.0
                    }
                    _ => NOT_A_VALUE,
                }));
                true
            }

            fn leader(p: &Self::Paxos) -> Option<u64> {
                omnipaxos_version!(@leader $leader, p)
            }
        }
    };
    (@outgoing returned, $p:ident, $out:ident) => {
        $out.extend($p.outgoing_messages())
    };
    (@outgoing buffer, $p:ident, $out:ident) => {
        $p.take_outgoing_messages($out)
    };
    (@leader plain, $p:ident) => {
        $p.get_current_leader()
    };
    (@leader with_phase, $p:ident) => {
        $p.get_current_leader().map(|(pid, _accepted)| pid)
    };
}

omnipaxos_version!(
    V0_2_0,
    omnipaxos_v0_2_0,
    "0.2.0",
    idx = u64,
    outgoing = returned,
    leader = plain
);
omnipaxos_version!(
    V0_2_1,
    omnipaxos_v0_2_1,
    "0.2.1",
    idx = u64,
    outgoing = returned,
    leader = plain
);
omnipaxos_version!(
    V0_2_2,
    omnipaxos_v0_2_2,
    "0.2.2",
    idx = u64,
    outgoing = returned,
    leader = plain
);
omnipaxos_version!(
    V0_2_3,
    omnipaxos_v0_2_3,
    "0.2.3",
    idx = usize,
    outgoing = buffer,
    leader = with_phase
);
