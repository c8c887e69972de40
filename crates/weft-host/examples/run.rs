//! What `weft run` does, as a stand-alone example until the CLI wires it:
//!
//!     cargo run -p weft-host --example run -- [--nodes N] [--seed S] [--faults SPEC] \
//!         [--time-limit 10s] -- PROGRAM ARGS…
//!
//! Prints the notes, every output line as `time node | text`, then the outcome, the trace hash
//! and the number of decisions (what `--record` would store).

use weft_core::SimDuration;
use weft_host::{faults_scenario, run_program, HostConfig};

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut nodes, mut seed, mut faults, mut limit) = (3u32, 0u64, "none".to_string(), None);
    let mut program = Vec::new();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--nodes" => nodes = args.next().and_then(|v| v.parse().ok()).expect("--nodes N"),
            "--seed" => seed = args.next().and_then(|v| v.parse().ok()).expect("--seed S"),
            "--faults" => faults = args.next().expect("--faults SPEC"),
            "--time-limit" => {
                limit = Some(
                    args.next().and_then(|v| SimDuration::parse(&v)).expect("--time-limit 10s"),
                )
            }
            "--" => {
                program.extend(args.by_ref());
            }
            other => panic!("unknown flag {other}"),
        }
    }
    assert!(!program.is_empty(), "usage: run [flags] -- PROGRAM ARGS…");
    let mut cfg = HostConfig::new(&program[0], program[1..].to_vec(), nodes);
    if let Some(l) = limit {
        cfg.time_limit = l;
    }
    let scenario = faults_scenario(&faults).unwrap_or_else(|e| panic!("--faults: {e}"));
    let run = run_program(&cfg, &scenario, seed, None).expect("host error");
    for n in &run.output.notes {
        println!("note: {n}");
    }
    print!("{}", run.output.render());
    let r = &run.output.report;
    println!(
        "outcome: {}  trace {:016x}  events {}  faults {}  end {}  decisions {}",
        r.outcome,
        r.trace_hash,
        r.events,
        r.faults,
        r.end_time,
        run.decisions.len()
    );
}
