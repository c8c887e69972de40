//! The wire protocol of message mode: the datagrams replicas exchange, the timer tags, and the
//! one query a replica may have outstanding (what it asked, of whom, and which reply answers it).

use crate::model::MAX_R;
use weft_sim::TimerId;

pub(super) const TAG_STABILIZE: u64 = 1;
pub(super) const TAG_RECONCILE: u64 = 2;
pub(super) const TAG_UPDATE: u64 = 3;
pub(super) const TAG_FLUSH: u64 = 4;
pub(super) const TAG_JOIN: u64 = 5;
pub(super) const TAG_RECTIFY: u64 = 6;
/// Request timeouts carry `TAG_TIMEOUT | seq`.
pub(super) const TAG_TIMEOUT: u64 = 1 << 32;
/// Maintenance timer periods are drawn uniformly from 1..=PERIOD_MS milliseconds.
pub(super) const PERIOD_MS: u64 = 20;
/// Decision values per period (see `ChordNode::arm`): with 200, idling and the long waits
/// are 21 of 4021 values at random.
pub(super) const PERIOD_SLOTS: u64 = 200;
/// Long waits a maintenance timer may take instead of a period: `PERIOD_MS + k * LONG_STEP_MS`
/// for k in `1..=LONG_WAITS` (30 ms to 220 ms).
pub(super) const LONG_WAITS: u64 = 20;
pub(super) const LONG_STEP_MS: u64 = 10;

/// Datagrams between replicas. `seq` matches a reply to its query.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub enum Msg {
    /// Join lookup for `joiner`, routed along first successors.
    FindSuccessor {
        joiner: u8,
        seq: u32,
        hops: u8,
    },
    /// Member `via` covers the joiner: its list (and so its successor) is the answer.
    Found {
        via: u8,
        list: [u8; MAX_R],
        seq: u32,
    },
    GetPred {
        seq: u32,
    },
    Pred {
        pred: u8,
        seq: u32,
    },
    GetSuccList {
        seq: u32,
    },
    SuccList {
        list: [u8; MAX_R],
        seq: u32,
    },
    GetPredAndSuccs {
        seq: u32,
    },
    PredAndSuccs {
        pred: u8,
        list: [u8; MAX_R],
        seq: u32,
    },
    Notify,
    Ping {
        seq: u32,
    },
    Pong {
        seq: u32,
    },
    /// Corrected: "response pending" — the receiver is mid-operation (§4.4).
    Busy {
        seq: u32,
    },
}

impl Msg {
    /// The query a reply answers (None: not a reply).
    pub(super) fn reply_seq(&self) -> Option<u32> {
        match *self {
            Msg::Found { seq, .. }
            | Msg::Pred { seq, .. }
            | Msg::SuccList { seq, .. }
            | Msg::PredAndSuccs { seq, .. }
            | Msg::Pong { seq }
            | Msg::Busy { seq } => Some(seq),
            _ => None,
        }
    }
}

/// The one outstanding query of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Op {
    Join,
    /// FIX-J: the joiner pings the successor it was given before adopting it.
    JoinPing {
        via: u8,
        list: [u8; MAX_R],
    },
    GetPred {
        s: u8,
    },
    /// FIX-S: ping `x` before adopting it as successor.
    StabPing {
        x: u8,
    },
    Reconcile {
        s: u8,
    },
    UpdatePing {
        s: u8,
    },
    FlushPing {
        p: u8,
    },
    Stab1 {
        s: u8,
    },
    Stab2 {
        p: u8,
    },
    RectPing {
        n: u8,
    },
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Outstanding {
    pub(super) op: Op,
    pub(super) seq: u32,
    pub(super) peer: u8,
    pub(super) timer: TimerId,
}
