//! Decision sites: the stable address of a decision point ("the latency of a message on link
//! n0→n1", "the kind of fault at opportunity k", "node 2's choice for timer 3").
//!
//! A site is a kind plus two small numbers, packed into one `u64` so it is cheap to carry next
//! to every logged decision and prints as text (`latency n0>n1`). The *index within its site*
//! (the 7th latency on that link) is not part of the site: the decision source counts it. A
//! replay by site ([`crate::Decisions::replay_sited`]) answers the k-th draw at site s with the
//! k-th recorded value for s, so removing one fault or zeroing one link's latencies leaves every
//! other site's answers where they were — which a replay by position does not (deleting one
//! decision there moves every later value onto another decision point).
//!
//! [`Site::ANON`] (0) is the anonymous site: draws nobody addressed share one stream, in order,
//! so a run made only of anonymous draws replays by site exactly as it does by position.

use std::fmt;

/// What a site decides. The numeric values are part of the format: never reuse one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum SiteKind {
    Anon = 0,
    /// A message's fate on link a→b (none / drop / duplicate / delay).
    MessageFault = 1,
    /// A message's latency on link a→b.
    Latency = 2,
    /// A delayed message's extra delay on link a→b.
    Delay = 3,
    /// Whether (and which kind of) fault is injected at a fault opportunity.
    FaultKind = 4,
    /// The details (victim, shape, duration) of the fault drawn at opportunity a.
    FaultDetail = 5,
    /// A node's own choice (`Ctx::choose`), node a, sub-stream b (e.g. a timer tag).
    Node = 6,
    /// The workload's shape (request times, targets).
    Workload = 7,
    /// Node a's disk: crash states and storage faults.
    Disk = 8,
    /// Which runnable thread of a real-process run gets the next turn (b = 0), or which
    /// waiters a partial futex or condition-variable wake picks (b = 1).
    Schedule = 9,
    /// The random seed handed to real process a (its index in the run) when it starts or
    /// replaces its image; everything it draws from `getrandom` follows from it.
    Seed = 10,
    /// With `Scenario::fault_gaps`: at which fault opportunity from now the next node or
    /// network fault comes (a = 0), or at which message from now the next message fault on
    /// link a-1→b (0: none).
    FaultGap = 11,
}

const KINDS: [(SiteKind, &str); 12] = [
    (SiteKind::Anon, "anon"),
    (SiteKind::MessageFault, "message-fault"),
    (SiteKind::Latency, "latency"),
    (SiteKind::Delay, "delay"),
    (SiteKind::FaultKind, "fault"),
    (SiteKind::FaultDetail, "fault-detail"),
    (SiteKind::Node, "node"),
    (SiteKind::Workload, "workload"),
    (SiteKind::Disk, "disk"),
    (SiteKind::Schedule, "schedule"),
    (SiteKind::Seed, "seed"),
    (SiteKind::FaultGap, "fault-gap"),
];

/// A decision site: `kind` in the top byte, `a` in the next 24 bits, `b` in the low 32.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Site(pub u64);

impl Site {
    pub const ANON: Site = Site(0);

    pub fn new(kind: SiteKind, a: u32, b: u32) -> Site {
        assert!(a < 1 << 24, "site component {a} does not fit in 24 bits");
        Site(((kind as u64) << 56) | ((a as u64) << 32) | b as u64)
    }

    pub fn message_fault(from: u32, to: u32) -> Site {
        Site::new(SiteKind::MessageFault, from, to)
    }
    pub fn latency(from: u32, to: u32) -> Site {
        Site::new(SiteKind::Latency, from, to)
    }
    pub fn delay(from: u32, to: u32) -> Site {
        Site::new(SiteKind::Delay, from, to)
    }
    /// Every fault opportunity draws at this one site; the index within it is the opportunity.
    pub fn fault_kind() -> Site {
        Site::new(SiteKind::FaultKind, 0, 0)
    }
    /// With `Scenario::fault_gaps`, the gaps between faults (the k-th is the gap after the
    /// (k-1)-th fault opportunity that drew a kind).
    pub fn fault_gap() -> Site {
        Site::new(SiteKind::FaultGap, 0, 0)
    }
    /// With `Scenario::fault_gaps`, the gaps between message faults on link `from`→`to`
    /// (counted in the link's messages of the fault phase).
    pub fn message_gap(from: u32, to: u32) -> Site {
        Site::new(SiteKind::FaultGap, from + 1, to)
    }
    /// The details of the fault drawn at opportunity `k` (its index at [`Site::fault_kind`]).
    pub fn fault_detail(k: u32) -> Site {
        Site::new(SiteKind::FaultDetail, k.min((1 << 24) - 1), 0)
    }
    pub fn node(node: u32, stream: u32) -> Site {
        Site::new(SiteKind::Node, node, stream)
    }
    pub fn workload() -> Site {
        Site::new(SiteKind::Workload, 0, 0)
    }
    /// The shape of workload item `i` (its time, node, arguments), in a stream of its own, so a
    /// shrinker that drops one request leaves every other request's answers where they were.
    /// Item 0 is a site of its own too: [`Site::workload`] is the stream of unaddressed draws.
    pub fn workload_item(i: u32) -> Site {
        Site::new(SiteKind::Workload, i.min((1 << 24) - 2) + 1, 0)
    }
    pub fn disk(node: u32) -> Site {
        Site::new(SiteKind::Disk, node, 0)
    }
    /// The scheduler's pick of the next thread to run in a real-process run.
    pub fn schedule() -> Site {
        Site::new(SiteKind::Schedule, 0, 0)
    }
    /// Which waiters a partial wake picks in a real-process run.
    pub fn wake() -> Site {
        Site::new(SiteKind::Schedule, 0, 1)
    }
    /// The random seed of real process `p` (its index in the run).
    pub fn seed(p: u32) -> Site {
        Site::new(SiteKind::Seed, p.min((1 << 24) - 1), 0)
    }

    /// The kind, or None for a value no weft version wrote.
    pub fn kind(self) -> Option<SiteKind> {
        let k = (self.0 >> 56) as u8;
        KINDS.iter().find(|(kind, _)| *kind as u8 == k).map(|(kind, _)| *kind)
    }

    pub fn a(self) -> u32 {
        ((self.0 >> 32) & 0xff_ffff) as u32
    }

    pub fn b(self) -> u32 {
        self.0 as u32
    }
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (a, b) = (self.a(), self.b());
        match self.kind() {
            None => write!(f, "site {:#x}", self.0),
            Some(SiteKind::Anon) => write!(f, "anon"),
            Some(k @ (SiteKind::MessageFault | SiteKind::Latency | SiteKind::Delay)) => {
                write!(f, "{} n{a}>n{b}", name(k))
            }
            Some(SiteKind::Workload) if a > 0 => write!(f, "workload #{}", a - 1),
            Some(SiteKind::FaultGap) if a > 0 => write!(f, "fault-gap n{}>n{b}", a - 1),
            Some(SiteKind::FaultKind | SiteKind::Workload | SiteKind::FaultGap) => {
                write!(f, "{}", name(self.kind_or()))
            }
            Some(SiteKind::FaultDetail) => write!(f, "fault-detail #{a}"),
            Some(SiteKind::Node) => write!(f, "node n{a}/{b}"),
            Some(SiteKind::Disk) => write!(f, "disk n{a}"),
            Some(SiteKind::Schedule) if b == 0 => write!(f, "schedule"),
            Some(SiteKind::Schedule) => write!(f, "wake"),
            Some(SiteKind::Seed) => write!(f, "seed p{a}"),
        }
    }
}

impl SiteKind {
    /// The kind's name as sites print it (`latency`, `fault-detail`, `node`).
    pub fn name(self) -> &'static str {
        name(self)
    }
}

impl Site {
    fn kind_or(self) -> SiteKind {
        self.kind().unwrap_or(SiteKind::Anon)
    }
}

fn name(k: SiteKind) -> &'static str {
    KINDS.iter().find(|(kind, _)| *kind == k).map_or("?", |(_, n)| n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sites_pack_and_print() {
        let s = Site::latency(3, 4);
        assert_eq!((s.kind(), s.a(), s.b()), (Some(SiteKind::Latency), 3, 4));
        assert_eq!(s.to_string(), "latency n3>n4");
        assert_eq!(Site::fault_detail(7).to_string(), "fault-detail #7");
        assert_eq!(Site::node(2, 5).to_string(), "node n2/5");
        assert_eq!(Site::ANON.to_string(), "anon");
        assert_eq!(Site::schedule().to_string(), "schedule");
        assert_eq!(Site::wake().to_string(), "wake");
        assert_eq!(Site::workload().to_string(), "workload");
        assert_eq!(Site::workload_item(0).to_string(), "workload #0");
        assert_ne!(Site::workload_item(0), Site::workload());
        assert_eq!(Site::seed(2).to_string(), "seed p2");
        assert_eq!(Site::seed(2).kind(), Some(SiteKind::Seed));
        assert_ne!(Site::latency(0, 1), Site::latency(1, 0));
        assert_ne!(Site::latency(0, 1), Site::delay(0, 1));
        // Packed values are part of the format.
        assert_eq!(Site::fault_kind().0, 4 << 56);
    }
}
