//! Finds a decision list that violates `Agreement` on one variant and not on another, shrinks
//! it by hand-rolled deletion (weft's shrinker lives on another branch), and prints it:
//!
//!     freeze BUGGY FIXED FIRST_SEED SEEDS > counterexample.txt
//!
//! Shrinking keeps the *differential*: every accepted edit still fails on BUGGY and still
//! passes `Agreement` on FIXED.

use weft_core::{derive_seed, Decisions, NullObserver, Outcome, RunSpec, Runner, Target};

fn runner(variant: &str) -> Box<dyn Runner> {
    let spec = RunSpec {
        target: "omnipaxos".into(),
        variant: variant.into(),
        property: Some("Agreement".into()),
        ..RunSpec::default()
    };
    weft_target_omnipaxos::OmniPaxos.prepare(&spec).expect("spec")
}

fn outcome(r: &dyn Runner, list: &[u64]) -> Outcome {
    r.run(&r.default_scenario(), &mut Decisions::replay(list.to_vec()), &mut NullObserver).outcome
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (buggy, fixed) = (runner(&args[0]), runner(&args[1]));
    let first: u64 = args[2].parse().expect("first seed");
    let count: u64 = args[3].parse().expect("seed count");
    // Only the divergence of two servers' decided logs counts (not the other ways Agreement
    // can fail), so the shrunk run shows the classic symptom.
    let diverges = |o: &Outcome| {
        matches!(o, Outcome::SafetyViolation { property, detail }
            if property == "Agreement" && detail.contains("decided different entries"))
    };
    let holds = |list: &[u64]| {
        diverges(&outcome(buggy.as_ref(), list))
            && outcome(fixed.as_ref(), list).property() != Some("Agreement")
    };
    let mut found = None;
    for i in 0..count {
        let seed = derive_seed(first, i);
        let mut d = Decisions::random(seed);
        let o = buggy.run(&buggy.default_scenario(), &mut d, &mut NullObserver).outcome;
        if diverges(&o) && holds(d.log()) {
            eprintln!("seed {seed} (index {i}): {} decisions", d.len());
            found = Some(d.into_log());
            break;
        }
    }
    let mut list = found.expect("no differential seed in range");
    let mut tries = 0u64;
    // Delete spans, largest first, then lower values toward 0, until nothing changes.
    loop {
        let before = list.clone();
        let mut span = list.len().next_power_of_two();
        while span >= 1 {
            let mut at = 0;
            while at < list.len() {
                let end = (at + span).min(list.len());
                let mut cand = list.clone();
                cand.drain(at..end);
                tries += 1;
                if holds(&cand) {
                    list = cand;
                } else {
                    at += span;
                }
            }
            span /= 2;
        }
        for i in 0..list.len() {
            for v in [0, list[i] / 2] {
                if v < list[i] {
                    let mut cand = list.clone();
                    cand[i] = v;
                    tries += 1;
                    if holds(&cand) {
                        list = cand;
                        break;
                    }
                }
            }
        }
        while list.last() == Some(&0) {
            list.pop();
        }
        if list == before {
            break;
        }
    }
    eprintln!("shrunk to {} decisions in {tries} tries", list.len());
    eprintln!("{}: {}", args[0], outcome(buggy.as_ref(), &list));
    eprintln!("{}: {}", args[1], outcome(fixed.as_ref(), &list));
    let text: Vec<String> = list.iter().map(u64::to_string).collect();
    println!("{}", text.join(" "));
}
