//! How often random runs reach the bug and its preconditions, to tune the harness's defaults:
//!
//!     stats VARIANT RUNS [option=value ...] [sc.KNOB=N ...] [trace]
//!
//! Runs `RUNS` random seeds (derived from 1) with the target's default scenario, changed by
//! `sc.partition=D` (partition rate 1/D), `sc.partitions=N`, `sc.drop=D`, `sc.drops=N`,
//! `sc.fault_ms=MS`, `sc.outage_ms=MS`. Prints how many runs violated a property and, with
//! `trace` (slower: it records every event), how many grew to all nodes, delivered a leader
//! transfer's `MsgTimeoutNow`, and elected a leader that still counted only the bootstrap
//! voters after the membership grew (the bug's first half).

use weft_core::{derive_seed, Decisions, EventKind, NullObserver, Ratio, Recorder, RunSpec};
use weft_core::{SimDuration, Target};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut spec =
        RunSpec { target: "raft-rs".into(), variant: args[0].clone(), ..RunSpec::default() };
    let runs: u64 = args[1].parse().expect("RUNS is a number");
    let mut knobs = Vec::new();
    let mut trace = false;
    for arg in &args[2..] {
        if arg == "trace" {
            trace = true;
            continue;
        }
        let (k, v) = arg.split_once('=').expect("option=value");
        match k.strip_prefix("sc.") {
            Some(knob) => knobs.push((knob.to_string(), v.parse::<u32>().expect("a number"))),
            None => {
                spec.options.insert(k.into(), v.into());
            }
        }
    }
    let runner = weft_target_raft_rs::RaftRs.prepare(&spec).expect("a valid spec");
    let mut sc = runner.default_scenario();
    for (knob, v) in knobs {
        match knob.as_str() {
            "partition" => sc.rates.partition = Ratio::new(1, v),
            "partitions" => sc.budget.partitions = v,
            "drop" => sc.rates.drop = Ratio::new(1, v),
            "drops" => sc.budget.drops = v,
            "fault_ms" => sc.fault_phase = SimDuration::from_millis(v.into()),
            "outage_ms" => sc.outage_max = SimDuration::from_millis(v.into()),
            other => panic!("unknown scenario knob {other}"),
        }
    }
    let (mut failed, mut grew, mut timeout_now, mut stale_leader) = (0, 0, 0, 0);
    for i in 0..runs {
        let mut d = Decisions::random(derive_seed(1, i));
        let mut rec = Recorder::default();
        let report = if trace {
            runner.run(&sc, &mut d, &mut rec)
        } else {
            runner.run(&sc, &mut d, &mut NullObserver)
        };
        if report.outcome.is_failure() {
            failed += 1;
            println!("run {i}: {}", report.outcome);
        }
        let (mut g, mut t, mut s) = (false, false, false);
        for e in &rec.events {
            let state = e.state.as_deref().unwrap_or_default();
            g |= state.contains(",n4]");
            t |= e.kind == EventKind::Deliver && e.summary.contains("MsgTimeoutNow");
            s |= g
                && e.kind == EventKind::Observe
                && e.summary.starts_with("Leader")
                && state.contains("voters=[n0,n1,n2]");
        }
        grew += u64::from(g);
        timeout_now += u64::from(t);
        stale_leader += u64::from(s);
    }
    print!("{runs} runs: {failed} violated a property");
    if trace {
        print!(
            ", {grew} grew, {timeout_now} delivered MsgTimeoutNow, {stale_leader} stale leaders"
        );
    }
    println!();
}
