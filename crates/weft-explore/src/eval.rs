//! Evaluation: does a target tell its buggy variant from its fixed one, and how reliably?
//!
//! [`evaluate`] runs `campaigns` independent campaigns of `budget` runs per variant. Campaign
//! `c` has seed `derive_seed(seed, c)` and its run `i` draws decisions from
//! `Decisions::random(derive_seed(campaign_seed, i))`, the same seeds for every variant, so the
//! comparison is paired. A campaign stops at its first failing run. Per variant it reports the
//! share of campaigns that found a failure with a Wilson 95% interval (campaigns that failed to
//! run stay in the denominator), the median runs to the first failure, and which properties
//! failed. Per ordered pair of variants it reports the properties that failed on the first and
//! never on the second, and how many of the first's failing seeds pass when replayed on the
//! second.
//!
//! Campaigns run on `jobs` scoped threads; results are merged by campaign index, so the report
//! is the same for any `jobs`. The one exception is wall-clock time to the first failure,
//! measured only when the caller passes a clock ([`EvalOptions::clock`]; the CLI does), since
//! this library reads no clock of its own.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;
use weft_core::{derive_seed, Decisions, NullObserver, Outcome, RunSpec, Runner, Scenario, Target};

/// What to evaluate.
#[derive(Clone, Debug)]
pub struct EvalOptions {
    /// Target name is taken from the target; the spec's `variant` is replaced per variant.
    pub spec: RunSpec,
    pub variants: Vec<String>,
    pub campaigns: u64,
    /// Runs per campaign.
    pub budget: u64,
    pub seed: u64,
    pub jobs: usize,
    /// The scenario of every run; `None`: each variant's `Runner::default_scenario`.
    pub scenario: Option<Scenario>,
    /// A monotonic clock (time since any fixed instant) to time each campaign to its first
    /// failure; `None`: no times are reported.
    pub clock: Option<fn() -> Duration>,
}

/// One campaign's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CampaignEnd {
    /// The first failing run: its index, seed and outcome.
    Found { run_index: u64, seed: u64, outcome: Outcome },
    /// Every run of the budget passed (or ended without a failure).
    Clean,
    /// The campaign could not run (bad spec, a panic outside the simulated world, an
    /// unsupported target or nondeterminism): counted in the denominator, never as found.
    FailedToRun { detail: String },
}

/// Results of one variant.
#[derive(Clone, Debug, PartialEq)]
pub struct VariantEval {
    pub variant: String,
    /// The denominator: every campaign, including those that failed to run.
    pub campaigns: u64,
    pub found: u64,
    pub failed_to_run: u64,
    /// Wilson score interval (95%) for `found / campaigns`.
    pub found_ci95: (f64, f64),
    /// Median (lower median) of runs to the first failure, counting the failing run, over the
    /// campaigns that found one.
    pub median_runs_to_failure: Option<u64>,
    /// Median (lower median) wall-clock time to the first failure over the campaigns that found
    /// one; only with [`EvalOptions::clock`].
    pub median_time_to_failure: Option<Duration>,
    /// Property (or outcome kind, for failures without a property) → campaigns whose first
    /// failure it was.
    pub properties: BTreeMap<String, u64>,
    /// Runs executed in total.
    pub runs: u64,
    /// Each campaign's end, by campaign index.
    pub ends: Vec<CampaignEnd>,
}

/// A paired comparison of two variants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    pub variant: String,
    pub other: String,
    /// Properties that failed on `variant` in some campaign and on `other` in none.
    pub only_on_variant: Vec<String>,
    /// Of `variant`'s first failing runs (`replayed`), how many fail the same way when their
    /// seed is run on `other`, how many pass there, and the first 20 of those seeds.
    pub replayed: u64,
    pub also_fail: u64,
    pub pass_on_other: u64,
    pub pass_seeds: Vec<u64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    pub variants: Vec<VariantEval>,
    /// One entry per ordered pair of distinct variants.
    pub differences: Vec<Difference>,
}

/// Wilson score interval at 95% for `k` successes in `n` trials.
pub fn wilson95(k: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let z = 1.959_963_984_540_054_f64;
    let (k, n) = (k as f64, n as f64);
    let p = k / n;
    let denom = 1.0 + z * z / n;
    let center = (p + z * z / (2.0 * n)) / denom;
    let half = z / denom * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    ((center - half).max(0.0), (center + half).min(1.0))
}

fn failure_key(o: &Outcome) -> String {
    o.property().map(str::to_string).unwrap_or_else(|| o.kind().to_string())
}

fn cannot_run(o: &Outcome) -> bool {
    matches!(o, Outcome::Unsupported { .. } | Outcome::Nondeterminism { .. })
}

/// One run, with panics outside the simulated world turned into an error.
fn run_seed(runner: &dyn Runner, scenario: &Scenario, seed: u64) -> Result<Outcome, String> {
    catch_unwind(AssertUnwindSafe(|| {
        let mut d = Decisions::random(seed);
        runner.run(scenario, &mut d, &mut NullObserver).outcome
    }))
    .map_err(|_| "the runner panicked".to_string())
}

/// One campaign: its end, the runs it made, and (with a clock) the time it took.
type CampaignResult = (CampaignEnd, u64, Option<Duration>);

fn campaign(
    runner: &dyn Runner,
    scenario: &Scenario,
    seed: u64,
    budget: u64,
    clock: Option<fn() -> Duration>,
) -> CampaignResult {
    let start = clock.map(|c| c());
    let elapsed = || clock.zip(start).map(|(c, s)| c().saturating_sub(s));
    for i in 0..budget {
        let run_seed_i = derive_seed(seed, i);
        match run_seed(runner, scenario, run_seed_i) {
            Err(detail) => return (CampaignEnd::FailedToRun { detail }, i + 1, elapsed()),
            Ok(o) if cannot_run(&o) => {
                return (CampaignEnd::FailedToRun { detail: o.to_string() }, i + 1, elapsed())
            }
            Ok(o) if o.is_failure() => {
                let end = CampaignEnd::Found { run_index: i, seed: run_seed_i, outcome: o };
                return (end, i + 1, elapsed());
            }
            Ok(_) => {}
        }
    }
    (CampaignEnd::Clean, budget, elapsed())
}

/// Runs the evaluation. `target` must know every variant in `opts.variants`; a variant whose
/// spec does not prepare counts all its campaigns as failed to run.
pub fn evaluate(target: &dyn Target, opts: &EvalOptions) -> Evaluation {
    let mut variants = Vec::new();
    let mut runners: Vec<Option<Box<dyn Runner>>> = Vec::new();
    for name in &opts.variants {
        let spec = RunSpec { variant: name.clone(), ..opts.spec.clone() };
        let prepared = target.prepare(&spec);
        let results = match &prepared {
            Err(e) => (0..opts.campaigns)
                .map(|_| (CampaignEnd::FailedToRun { detail: e.to_string() }, 0, None))
                .collect(),
            Ok(runner) => run_campaigns(runner.as_ref(), opts),
        };
        variants.push(summarise(name, results));
        runners.push(prepared.ok());
    }
    let mut differences = Vec::new();
    for (a, va) in variants.iter().enumerate() {
        for (b, vb) in variants.iter().enumerate() {
            if a == b {
                continue;
            }
            let only_on_variant =
                va.properties.keys().filter(|p| !vb.properties.contains_key(*p)).cloned().collect();
            let mut diff = Difference {
                variant: va.variant.clone(),
                other: vb.variant.clone(),
                only_on_variant,
                replayed: 0,
                also_fail: 0,
                pass_on_other: 0,
                pass_seeds: Vec::new(),
            };
            if let Some(other) = &runners[b] {
                let other_scenario =
                    opts.scenario.clone().unwrap_or_else(|| other.default_scenario());
                for end in &va.ends {
                    let CampaignEnd::Found { seed, outcome, .. } = end else { continue };
                    diff.replayed += 1;
                    match run_seed(other.as_ref(), &other_scenario, *seed) {
                        Ok(o) if o.same_failure(outcome) => diff.also_fail += 1,
                        Ok(o) if !o.is_failure() => {
                            diff.pass_on_other += 1;
                            if diff.pass_seeds.len() < 20 {
                                diff.pass_seeds.push(*seed);
                            }
                        }
                        _ => {}
                    }
                }
            }
            differences.push(diff);
        }
    }
    Evaluation { variants, differences }
}

fn run_campaigns(runner: &dyn Runner, opts: &EvalOptions) -> Vec<CampaignResult> {
    let scenario = opts.scenario.clone().unwrap_or_else(|| runner.default_scenario());
    let next = AtomicU64::new(0);
    let results = Mutex::new(BTreeMap::new());
    let worker = || loop {
        let c = next.fetch_add(1, Ordering::Relaxed);
        if c >= opts.campaigns {
            return;
        }
        let seed = derive_seed(opts.seed, c);
        let r = campaign(runner, &scenario, seed, opts.budget, opts.clock);
        results.lock().expect("eval results poisoned").insert(c, r);
    };
    std::thread::scope(|s| {
        for _ in 1..opts.jobs.max(1) {
            s.spawn(worker);
        }
        worker();
    });
    results.into_inner().expect("eval results poisoned").into_values().collect()
}

fn summarise(name: &str, results: Vec<CampaignResult>) -> VariantEval {
    let campaigns = results.len() as u64;
    let runs = results.iter().map(|(_, r, _)| r).sum();
    let mut to_failure = Vec::new();
    let mut times = Vec::new();
    let mut properties = BTreeMap::new();
    let mut failed_to_run = 0;
    for (end, _, time) in &results {
        match end {
            CampaignEnd::Found { run_index, outcome, .. } => {
                to_failure.push(run_index + 1);
                times.extend(*time);
                *properties.entry(failure_key(outcome)).or_insert(0) += 1;
            }
            CampaignEnd::FailedToRun { .. } => failed_to_run += 1,
            CampaignEnd::Clean => {}
        }
    }
    to_failure.sort_unstable();
    times.sort_unstable();
    let found = to_failure.len() as u64;
    let ends = results.into_iter().map(|(end, _, _)| end).collect();
    VariantEval {
        variant: name.to_string(),
        campaigns,
        found,
        failed_to_run,
        found_ci95: wilson95(found, campaigns),
        median_runs_to_failure: (!to_failure.is_empty())
            .then(|| to_failure[(to_failure.len() - 1) / 2]),
        median_time_to_failure: (!times.is_empty()).then(|| times[(times.len() - 1) / 2]),
        properties,
        runs,
        ends,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_core::{
        ConfigError, Modality, Observer, PropertyInfo, RunReport, SimTime, TargetInfo, VariantInfo,
    };

    /// `buggy` violates `P` when its first decision (of 4) is 0; `fixed` never does; `broken`
    /// does not prepare.
    struct Toy;
    struct ToyRunner {
        buggy: bool,
    }

    impl Target for Toy {
        fn info(&self) -> TargetInfo {
            TargetInfo {
                name: "toy",
                summary: "",
                variants: ["buggy", "fixed", "broken"]
                    .map(|name| VariantInfo { name, summary: "" })
                    .to_vec(),
                options: vec![],
                properties: vec![PropertyInfo {
                    name: "P",
                    modality: Modality::Always,
                    summary: "",
                }],
            }
        }
        fn prepare(&self, spec: &RunSpec) -> Result<Box<dyn Runner>, ConfigError> {
            self.info().validate(spec)?;
            if spec.variant == "broken" {
                return Err(ConfigError::BadOption {
                    option: "x".into(),
                    value: "y".into(),
                    reason: "broken on purpose".into(),
                });
            }
            Ok(Box::new(ToyRunner { buggy: spec.variant == "buggy" }))
        }
    }

    impl Runner for ToyRunner {
        fn default_scenario(&self) -> Scenario {
            Scenario::calm()
        }
        fn run(&self, _: &Scenario, d: &mut Decisions, _: &mut dyn Observer) -> RunReport {
            let hit = d.choose(4) == 0;
            let outcome = if self.buggy && hit {
                Outcome::SafetyViolation { property: "P".into(), detail: "hit".into() }
            } else {
                Outcome::Pass
            };
            RunReport {
                outcome,
                trace_hash: 0,
                events: 1,
                faults: 0,
                end_time: SimTime::ZERO,
                sometimes: vec![],
            }
        }
    }

    fn opts(jobs: usize) -> EvalOptions {
        EvalOptions {
            spec: RunSpec { target: "toy".into(), ..RunSpec::default() },
            variants: vec!["buggy".into(), "fixed".into(), "broken".into()],
            campaigns: 40,
            budget: 10,
            seed: 5,
            jobs,
            scenario: None,
            clock: None,
        }
    }

    /// A fake clock: every reading is one second later than the one before.
    fn ticking() -> Duration {
        static SECONDS: AtomicU64 = AtomicU64::new(0);
        Duration::from_secs(SECONDS.fetch_add(1, Ordering::Relaxed))
    }

    #[test]
    fn times_campaigns_only_with_a_clock() {
        let e = evaluate(&Toy, &opts(1));
        assert!(e.variants.iter().all(|v| v.median_time_to_failure.is_none()));
        let e = evaluate(&Toy, &EvalOptions { clock: Some(ticking), ..opts(1) });
        let [buggy, fixed, _] = &e.variants[..] else { panic!("three variants") };
        // Two readings per campaign (start, failure), one second apart.
        assert_eq!(buggy.median_time_to_failure, Some(Duration::from_secs(1)));
        assert_eq!(fixed.median_time_to_failure, None, "fixed never fails");
    }

    #[test]
    fn tells_buggy_from_fixed_and_counts_failures_to_run() {
        let e = evaluate(&Toy, &opts(2));
        let [buggy, fixed, broken] = &e.variants[..] else { panic!("three variants") };
        // P(no hit in 10 runs) = 0.75^10 ≈ 5.6%: most campaigns find it.
        assert!(buggy.found >= 30 && buggy.found < 40, "{}", buggy.found);
        assert_eq!(buggy.properties.get("P"), Some(&buggy.found));
        assert!(buggy.median_runs_to_failure.is_some_and(|m| (1..=4).contains(&m)));
        assert_eq!((fixed.found, fixed.runs, fixed.failed_to_run), (0, 400, 0));
        assert_eq!((broken.found, broken.failed_to_run, broken.campaigns), (0, 40, 40));
        assert!(broken.found_ci95.1 < 0.1, "failures to run stay in the denominator");
        let d = &e.differences[0];
        assert_eq!((d.variant.as_str(), d.other.as_str()), ("buggy", "fixed"));
        assert_eq!(d.only_on_variant, vec!["P".to_string()]);
        assert_eq!((d.replayed, d.also_fail), (buggy.found, 0));
    }

    #[test]
    fn the_report_does_not_depend_on_jobs() {
        assert_eq!(evaluate(&Toy, &opts(1)), evaluate(&Toy, &opts(2)));
    }

    #[test]
    fn wilson_matches_known_values() {
        // 0 of 10: [0, 0.2775]; 10 of 10: [0.7225, 1]; 5 of 10: [0.2366, 0.7634].
        let (lo, hi) = wilson95(0, 10);
        assert!(lo == 0.0 && (hi - 0.2775).abs() < 1e-3, "{lo} {hi}");
        let (lo, hi) = wilson95(10, 10);
        assert!((lo - 0.7225).abs() < 1e-3 && (hi - 1.0).abs() < 1e-12, "{lo} {hi}");
        let (lo, hi) = wilson95(5, 10);
        assert!((lo - 0.2366).abs() < 1e-3 && (hi - 0.7634).abs() < 1e-3, "{lo} {hi}");
    }
}
