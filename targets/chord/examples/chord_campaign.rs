//! Measurement campaigns behind docs/chord.md (too large for the test suite).
//!
//! ```text
//! cargo run --release -p weft-target-chord --example chord_campaign -- bfs VARIANT IDS [key=value…]
//! cargo run --release -p weft-target-chord --example chord_campaign -- random VARIANT SEEDS [PROPERTY|-] [key=value…]
//! cargo run --release -p weft-target-chord --example chord_campaign -- show VARIANT SEED [PROPERTY|-] [key=value…]
//! cargo run --release -p weft-target-chord --example chord_campaign -- guided VARIANT RUNS [PROPERTY|-] [key=value…]
//! ```
//!
//! `bfs` runs the exhaustive breadth-first search and prints the state count and, per property,
//! the shortest path to a violating state. `random` runs `Decisions::random(seed)` for seeds
//! 0..SEEDS and prints the first violation of each kind, the seed, and the throughput.
//! Options are the target's (`r=2`, `reuse=true`, `fused=true`, `gate=…`, `steps=…`, …).

use weft_core::{Decisions, NullObserver, Outcome, Target};
use weft_target_chord::exhaustive;
use weft_target_chord::props;
use weft_target_chord::{spec, Chord, Config};

#[allow(clippy::disallowed_methods)] // a measurement harness: it reports wall-clock time
fn now() -> std::time::Instant {
    std::time::Instant::now()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage =
        "usage: chord_campaign (bfs VARIANT IDS | random VARIANT SEEDS PROPERTY|-) [key=value…]";
    let mode = args.first().expect(usage).as_str();
    let variant = args.get(1).expect(usage).as_str();
    let count: u64 = args.get(2).expect(usage).parse().expect(usage);
    let (property, rest) = match mode {
        "random" | "show" | "guided" | "guided-permanent" => {
            let p = args.get(3).expect(usage).as_str();
            ((p != "-").then_some(p), &args[4..])
        }
        _ => (None, &args[3..]),
    };
    let mut options: Vec<(String, String)> = rest
        .iter()
        .map(|kv| {
            let (k, v) = kv.split_once('=').expect("options are key=value");
            (k.to_string(), v.to_string())
        })
        .collect();
    if mode == "bfs" {
        options.push(("ids".into(), count.to_string()));
    }
    let opts: Vec<(&str, &str)> = options.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let s = spec(variant, &opts, property);
    println!("config: {s:?}");
    match mode {
        "bfs" => bfs(&Config::from_spec(&s).expect("valid spec")),
        "random" => random(&s, count),
        "show" => show(&s, count),
        "guided" => guided(&s, count, false),
        "guided-permanent" => guided(&s, count, true),
        _ => panic!("{usage}"),
    }
}

fn bfs(config: &Config) {
    let rules = config.rules;
    let initials = exhaustive::initial_states(&rules, config.initial);
    let all = props::ALL.iter().fold(0, |m, p| m | p.bit());
    let start = now();
    let report = exhaustive::search(&rules, &initials, all, true, 50_000_000);
    let secs = start.elapsed().as_secs_f64();
    println!(
        "states {} transitions {} depth {} complete {} in {secs:.2}s",
        report.states, report.transitions, report.depth, report.complete
    );
    for (p, init, path) in &report.shortest {
        let text: Vec<String> = path.iter().map(|s| s.to_string()).collect();
        println!("{:<22} {:>3} steps (initial #{init}): {}", p.name(), path.len(), text.join("; "));
    }
    match &report.not_healing {
        Some((init, path)) => {
            let text: Vec<String> = path.iter().map(|s| s.to_string()).collect();
            println!("not healing: {} steps (initial #{init}): {}", path.len(), text.join("; "));
        }
        None => println!("every reachable state heals to Ideal"),
    }
}

fn random(s: &weft_core::RunSpec, seeds: u64) {
    let runner = Chord.prepare(s).expect("valid spec");
    let scenario = runner.default_scenario();
    let start = now();
    let mut events = 0u64;
    let mut firsts: Vec<(String, u64, f64, u64, String)> = Vec::new();
    let mut failures = 0u64;
    for seed in 0..seeds {
        let mut d = Decisions::random(seed);
        let report = runner.run(&scenario, &mut d, &mut NullObserver);
        events += report.events;
        if let Outcome::SafetyViolation { property, detail }
        | Outcome::LivenessViolation { property, detail } = &report.outcome
        {
            failures += 1;
            let class = detail.split(':').next().unwrap_or("").to_string();
            let key = format!("{property} ({class})");
            if !firsts.iter().any(|f| f.0 == key) {
                firsts.push((
                    key,
                    seed,
                    start.elapsed().as_secs_f64(),
                    report.events,
                    detail.clone(),
                ));
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{seeds} runs, {events} events in {secs:.2}s: {:.0} events/s, {:.0} runs/s; {failures} failing runs",
        events as f64 / secs,
        seeds as f64 / secs
    );
    for (key, seed, t, ev, detail) in &firsts {
        println!("first {key}: seed {seed} after {t:.3}s ({ev} events): {detail}");
    }
}

/// Replays one seed (or, with `decisions=a,b,c` in the environment-free argument list, a
/// decision list) and prints its timeline.
fn show(s: &weft_core::RunSpec, seed: u64) {
    let mut s = s.clone();
    let list = s.options.remove("decisions");
    let runner = Chord.prepare(&s).expect("valid spec");
    let mut rec = weft_core::Recorder::default();
    let mut d = match list {
        Some(l) => Decisions::replay(l.split(',').map(|x| x.trim().parse().unwrap()).collect()),
        None => Decisions::random(seed),
    };
    let report = runner.run(&runner.default_scenario(), &mut d, &mut rec);
    for e in &rec.events {
        println!("{:>3} {:<40} {}", e.index, e.summary, e.state.as_deref().unwrap_or(""));
    }
    println!("outcome: {}", report.outcome);
    println!("decisions: {:?}", d.log());
}

/// Collects the features a run reaches.
#[derive(Default)]
struct Features(Vec<u64>);
impl weft_core::Observer for Features {
    fn feature(&mut self, f: u64) {
        self.0.push(f);
    }
}

/// A small novelty-guided search (a stand-in for the explorer's coverage-guided strategy):
/// keep every run that reaches a feature never seen before, and extend random truncations of
/// kept runs with fresh random decisions.
fn guided(s: &weft_core::RunSpec, runs: u64, only_permanent: bool) {
    let runner = Chord.prepare(s).expect("valid spec");
    let scenario = runner.default_scenario();
    let start = now();
    let mut seen = std::collections::BTreeSet::new();
    let mut corpus: Vec<Vec<u64>> = Vec::new();
    let mut rng = weft_core::Rng::new(0xC0FFEE);
    let mut events = 0u64;
    for i in 0..runs {
        let mut d = if corpus.is_empty() || rng.below(4) == 0 {
            Decisions::random(i)
        } else {
            let base = &corpus[rng.below(corpus.len() as u64) as usize];
            let cut = rng.below(base.len() as u64 + 1) as usize;
            Decisions::replay_then_random(base[..cut].to_vec(), i)
        };
        let mut f = Features::default();
        let report = runner.run(&scenario, &mut d, &mut f);
        events += report.events;
        let permanent = matches!(&report.outcome,
            Outcome::SafetyViolation { detail, .. } | Outcome::LivenessViolation { detail, .. }
                if detail.starts_with("permanent"));
        if report.outcome.is_failure() && (permanent || !only_permanent) {
            println!(
                "run {i} after {:.2}s ({events} events, corpus {}): {}",
                start.elapsed().as_secs_f64(),
                corpus.len(),
                report.outcome
            );
            println!("decisions: {:?}", d.log());
            return;
        }
        let mut new = false;
        for x in f.0 {
            new |= seen.insert(x);
        }
        if new {
            corpus.push(d.into_log());
        }
    }
    println!(
        "no failure in {runs} runs ({:.2}s, corpus {})",
        start.elapsed().as_secs_f64(),
        corpus.len()
    );
}
