//! Prints the timeline of one run: `show VARIANT SEED|@FILE [option=value ...]` (`@FILE`: a
//! whitespace-separated decision list to replay).

use weft_core::{Decisions, Recorder, RunSpec, Target};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut spec =
        RunSpec { target: "omnipaxos".into(), variant: args[0].clone(), ..RunSpec::default() };
    let mut decisions = match args[1].strip_prefix('@') {
        Some(path) => Decisions::replay(
            std::fs::read_to_string(path)
                .expect("read decision list")
                .split_whitespace()
                .map(|w| w.parse().expect("decision"))
                .collect(),
        ),
        None => Decisions::random(args[1].parse().expect("seed")),
    };
    for kv in &args[2..] {
        let (k, v) = kv.split_once('=').expect("option=value");
        spec.options.insert(k.into(), v.into());
    }
    let runner = weft_target_omnipaxos::OmniPaxos.prepare(&spec).expect("spec");
    let mut rec = Recorder::default();
    let report = runner.run(&runner.default_scenario(), &mut decisions, &mut rec);
    for e in &rec.events {
        let node = e.node.map_or("-".into(), |n| format!("n{n}"));
        let peer = e.peer.map_or("".into(), |n| format!("n{n}"));
        println!(
            "{} {:>4} {:<9} {:>3} {} | {}",
            e.time,
            node,
            e.kind,
            peer,
            e.summary,
            e.state.clone().unwrap_or_default()
        );
    }
    println!("{:?} events={} faults={}", report.outcome, report.events, report.faults);
}
