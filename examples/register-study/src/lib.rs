//! Harness: the register of [`protocol`] as a weft world (everything here but `protocol.rs`).
pub mod protocol;

use protocol::{Replica, Req};
use weft::{Allowed, SimDuration, World};

/// Three replicas whose client history must be a linearizable register ([`unchecked`]: the
/// same world without the property, for measuring its cost).
pub fn world() -> World<Replica> {
    unchecked().always("Linearizable", weft::history::register)
}

pub fn unchecked() -> World<Replica> {
    World::new("register-study", 3, |cfg, id| Replica::new(id, cfg.is("fixed")))
        .summary("a replicated register whose leader serves reads")
        .variant("buggy", "the leader reads locally, without a quorum")
        .variant("fixed", "the leader confirms its term with a quorum first")
        .option("requests", "12", Allowed::Int { min: 1, max: 1000 }, "client operations")
        .workload(|cfg| {
            weft::requests::<Replica>(cfg.get("requests"), 3, |i, d| match d.choose(2) {
                0 => Req::Read { client: i },
                _ => Req::Write { client: i, value: i + 1 },
            })
        })
        .scenario(|_, s| {
            s.budget.crashes = 0; // no disk: a crash would lose acknowledged writes
            (s.fault_phase, s.heal_phase) =
                (SimDuration::from_millis(600), SimDuration::from_millis(300));
        })
}
