//! Runs the paired evaluation of omnipaxos variants and prints the table that
//! `docs/real-targets.md` records. Until `weft eval` exists:
//!
//!     cargo run --release -p weft-target-omnipaxos --example eval -- \
//!         CAMPAIGNS BUDGET SEED VARIANT,VARIANT[,...] [option=value ...]

use weft_core::{RunSpec, Target};
use weft_explore::{evaluate, EvalOptions};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: eval CAMPAIGNS BUDGET SEED V1,V2[,...] [option=value ...]";
    assert!(args.len() >= 4, "{usage}");
    let campaigns: u64 = args[0].parse().expect(usage);
    let budget: u64 = args[1].parse().expect(usage);
    let seed: u64 = args[2].parse().expect(usage);
    let variants: Vec<String> = args[3].split(',').map(str::to_string).collect();
    let mut spec = RunSpec { target: "omnipaxos".into(), ..RunSpec::default() };
    for kv in &args[4..] {
        let (k, v) = kv.split_once('=').expect("options are option=value");
        if k == "property" {
            spec.property = Some(v.into());
        } else {
            spec.options.insert(k.into(), v.into());
        }
    }
    let target = weft_target_omnipaxos::OmniPaxos;
    let opts = EvalOptions { spec, variants, campaigns, budget, seed, jobs: 2, scenario: None };
    #[allow(clippy::disallowed_methods)] // wall time of the whole evaluation, for the docs
    let start = std::time::Instant::now();
    let eval = evaluate(&target as &dyn Target, &opts);
    let secs = start.elapsed().as_secs_f64();
    println!("| variant | campaigns found / N | Wilson 95% | median runs to 1st failure | failed to run | runs | properties |");
    println!("|---|---|---|---|---|---|---|");
    for v in &eval.variants {
        let props: Vec<String> = v.properties.iter().map(|(p, n)| format!("{p}: {n}")).collect();
        println!(
            "| {} | {} / {} | [{:.2}, {:.2}] | {} | {} | {} | {} |",
            v.variant,
            v.found,
            v.campaigns,
            v.found_ci95.0,
            v.found_ci95.1,
            v.median_runs_to_failure.map_or("-".into(), |m| m.to_string()),
            v.failed_to_run,
            v.runs,
            props.join(", ")
        );
    }
    let runs: u64 = eval.variants.iter().map(|v| v.runs).sum();
    println!();
    println!("{runs} campaign runs (plus paired replays) in {secs:.1} s wall, 2 jobs");
    println!();
    for v in &eval.variants {
        let seeds: Vec<String> = v
            .ends
            .iter()
            .filter_map(|e| match e {
                weft_explore::CampaignEnd::Found { seed, outcome, .. } => {
                    Some(format!("{seed} ({})", outcome.property().unwrap_or(outcome.kind())))
                }
                _ => None,
            })
            .take(5)
            .collect();
        println!("{} first failing seeds: {}", v.variant, seeds.join(", "));
    }
    println!();
    for d in &eval.differences {
        println!(
            "{} vs {}: only on {}: [{}]; of {} first failing seeds, {} fail the same way on {}, {} pass there (first: {:?})",
            d.variant,
            d.other,
            d.variant,
            d.only_on_variant.join(", "),
            d.replayed,
            d.also_fail,
            d.other,
            d.pass_on_other,
            d.pass_seeds.iter().take(3).collect::<Vec<_>>()
        );
    }
}
