//! A frozen counterexample: `weft explore async-kv --variant buggy --runs 3000 --seed 1` found
//! it at run 222 and shrank it (1,224 → 367 events). Postmortem: node 2 wins term 1 with node
//! 1's vote; client 2's write of 301 to key 0 reaches it, and the buggy leader answers as soon
//! as its own disk holds the write; short partitions of node 0 and the clients' node drop the
//! first replication attempts, and node 2 crashes before any follower has the write. Nodes 0
//! and 1 elect node 1 in term 3 without it, and client 0's read of key 0 returns `null`. The
//! fixed leader waits for a majority, so the same decisions pass there. If this test fails, the
//! kernel, weft-async or the protocol changed the run: re-freeze it deliberately and say why.

use weft_core::{Decisions, NullObserver, Outcome, RunSpec, Runner, Target};
use weft_report::Repro;
use weft_target_async_kv::AsyncKv;

const LOST_WRITE: &str = include_str!("counterexamples/lost-write-after-early-ack.json");

fn replay(repro: &Repro, variant: &str) -> (Outcome, u64) {
    let spec = RunSpec { variant: variant.into(), property: None, ..repro.spec.clone() };
    let runner: Box<dyn Runner> = AsyncKv.prepare(&spec).expect("valid spec");
    let mut d = Decisions::replay(repro.decisions.clone());
    let report = runner.run(&repro.scenario, &mut d, &mut NullObserver);
    (report.outcome, report.trace_hash)
}

#[test]
fn lost_write_after_an_early_ack_replays_bit_for_bit_and_passes_on_the_fix() {
    let repro = Repro::parse(LOST_WRITE).expect("a valid repro");
    let (outcome, hash) = replay(&repro, "buggy");
    assert_eq!(outcome, repro.outcome);
    assert_eq!(hash, repro.trace_hash, "same trace hash");
    match outcome {
        Outcome::SafetyViolation { property, detail } => {
            assert_eq!(property, "Linearizable");
            assert!(detail.contains("write key 0 301") && detail.contains("read key 0 null"));
        }
        o => panic!("{o:?}"),
    }
    assert_eq!(replay(&repro, "fixed").0, Outcome::Pass);
}

/// The counterexample draws: the space-time diagram shows the four nodes, the crash and the
/// client history lines.
#[test]
fn the_counterexample_draws() {
    let repro = Repro::parse(LOST_WRITE).expect("a valid repro");
    let runner = AsyncKv.prepare(&repro.spec).expect("valid spec");
    let events = weft_explore::replay(runner.as_ref(), &repro.scenario, &repro.decisions, true);
    let header = weft_report::html::Header { title: "async-kv", lines: &[] };
    let html = weft_report::html::render(&header, &events.events);
    assert_eq!(weft_report::html::node_count(&events.events), 4);
    assert!(html.contains("crash"), "the crash is drawn");
    assert!(html.contains("history"), "client operations are drawn");
}
