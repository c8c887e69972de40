//! [`check`]: run a campaign from `cargo test`, like proptest: the test passes, or fails with
//! the violation, where its repro was saved and the exact command that replays it. A failing
//! repro is saved under the crate (`weft-regressions/`, beside `Cargo.toml`) and replayed first
//! by every later run of the test, which then fails at once while the bug is there.
//!
//! The environment (read here, at the test's edge, never inside a run): `WEFT_SEED=N` sets the
//! campaign seed (with [`Checker::seed_from_env`]); `WEFT_REPLAY=FILE` replays that repro
//! instead of exploring; `WEFT_RUNS=N` overrides the number of runs.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use weft_core::{ConfigError, Outcome, RunSpec, Runner, Target};
use weft_explore::{CampaignOptions, Quiet, ShrinkOptions, Strategy};
use weft_report::Repro;

/// Starts a check of `target` (a [`crate::World`] or any [`Target`]) with defaults: its first
/// variant, 10,000 runs, seed 1, the `random` strategy, one thread, a shrink budget of 20,000
/// runs, regressions under `$CARGO_MANIFEST_DIR/weft-regressions`.
pub fn check(target: impl Target + 'static) -> Checker {
    Checker {
        target: Box::new(target),
        variant: None,
        options: BTreeMap::new(),
        property: None,
        runs: 10_000,
        seed: 1,
        strategy: Strategy::Random,
        jobs: 1,
        shrink_runs: 20_000,
        dir: None,
    }
}

/// A configured check; finish it with [`Checker::run`] or [`Checker::assert`].
pub struct Checker {
    target: Box<dyn Target>,
    variant: Option<String>,
    options: BTreeMap<String, String>,
    property: Option<String>,
    runs: u64,
    seed: u64,
    strategy: Strategy,
    jobs: usize,
    shrink_runs: u64,
    dir: Option<PathBuf>,
}

/// A check that passed.
#[derive(Debug)]
pub struct Passed {
    pub runs: u64,
    /// Saved repros of this configuration that were replayed first and no longer fail.
    pub fixed: Vec<PathBuf>,
}

/// Why a check did not pass.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// A property was violated (or the target crashed): the repro and how to replay it.
    #[error("{0}")]
    Violation(Box<Violation>),
    #[error("bad configuration: {0}")]
    Config(#[from] ConfigError),
    /// The strategy cannot run on this target: nothing was checked.
    #[error("{0}")]
    Unsupported(#[from] weft_explore::Unsupported),
    #[error("{0}")]
    Repro(#[from] weft_report::ReproError),
    #[error("WEFT_REPLAY={path}: the replay did not reproduce the recorded run ({recorded})")]
    Diverged { path: PathBuf, recorded: Outcome },
    #[error("{0}")]
    Io(String),
}

/// A violation found or replayed by a check.
#[derive(Debug)]
pub struct Violation {
    pub outcome: Outcome,
    /// The repro to replay: the shrunk one when shrinking worked.
    pub repro: PathBuf,
    pub decisions: usize,
    /// Whether it came from a saved repro replayed before exploring.
    pub saved: bool,
    /// The command that replays it from `cargo test`.
    pub replay: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let how = if self.saved { "saved repro still fails" } else { "found" };
        writeln!(f, "weft: VIOLATION ({how}) {}", self.outcome)?;
        writeln!(f, "  repro: {} ({} decisions)", self.repro.display(), self.decisions)?;
        writeln!(f, "  replay: {}", self.replay)?;
        write!(f, "  or, with a main_with binary: BIN replay {}", self.repro.display())
    }
}

impl Checker {
    pub fn variant(mut self, variant: &str) -> Self {
        self.variant = Some(variant.into());
        self
    }
    pub fn option(mut self, name: &str, value: impl ToString) -> Self {
        self.options.insert(name.into(), value.to_string());
        self
    }
    /// Only this property counts as a violation.
    pub fn property(mut self, name: &str) -> Self {
        self.property = Some(name.into());
        self
    }
    pub fn runs(mut self, runs: u64) -> Self {
        self.runs = runs.max(1);
        self
    }
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
    /// The seed from `WEFT_SEED` when set (a bad value panics, naming it).
    pub fn seed_from_env(mut self) -> Self {
        if let Ok(text) = env("WEFT_SEED") {
            self.seed = parse_env("WEFT_SEED", &text);
        }
        self
    }
    pub fn strategy(mut self, strategy: Strategy) -> Self {
        self.strategy = strategy;
        self
    }
    /// Worker threads; results do not depend on it.
    pub fn jobs(mut self, jobs: usize) -> Self {
        self.jobs = jobs.max(1);
        self
    }
    pub fn shrink_runs(mut self, runs: u64) -> Self {
        self.shrink_runs = runs;
        self
    }
    /// Where failing repros are saved and replayed from.
    pub fn regressions(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dir = Some(dir.into());
        self
    }

    /// Runs the check: `WEFT_REPLAY`'s file if set, else every saved repro of this
    /// configuration, then the campaign.
    pub fn run(self) -> Result<Passed, Failure> {
        let spec = self.spec();
        weft_core::check_spec(self.target.as_ref(), &spec)?;
        let runner = self.target.prepare(&spec)?;
        if let Ok(path) = env("WEFT_REPLAY") {
            let repro = Repro::read(Path::new(&path))?;
            if same_config(&repro.spec, &spec) {
                return replay_env(runner.as_ref(), &repro, PathBuf::from(path));
            }
        }
        let dir = self.regressions_dir();
        let fixed = self.replay_saved(runner.as_ref(), &spec, &dir)?;
        let runs = match env("WEFT_RUNS") {
            Ok(text) => parse_env("WEFT_RUNS", &text),
            Err(_) => self.runs,
        };
        let opts = CampaignOptions {
            seed: self.seed,
            runs: Some(runs),
            jobs: self.jobs,
            strategy: self.strategy,
            scenario: runner.default_scenario(),
        };
        let result = weft_explore::explore(runner.as_ref(), &opts, &Quiet)?;
        let Some(found) = result.found else { return Ok(Passed { runs: result.runs, fixed }) };
        let repro = weft_explore::found_repro(&spec, &found, self.seed, self.strategy);
        let name =
            format!("{}-{}-seed{}-run{}", spec.target, spec.variant, self.seed, found.run_index);
        let mut path = save(&repro, &dir.join(format!("{name}.json")))?;
        let mut saved = repro;
        let shrink = ShrinkOptions { max_runs: self.shrink_runs };
        if let Ok((small, _)) =
            weft_explore::shrink_repro(runner.as_ref(), None, &saved, &shrink, &Quiet)
        {
            path = save(&small, &dir.join(format!("{name}-shrunk.json")))?;
            saved = small;
        }
        Err(violation(&saved, path, false))
    }

    /// Runs the check and panics with the failure's full text (for `#[test]` functions).
    pub fn assert(self) -> Passed {
        match self.run() {
            Ok(passed) => passed,
            Err(failure) => panic!("{failure}"),
        }
    }

    fn spec(&self) -> RunSpec {
        let info = self.target.info();
        let variant = self.variant.clone().unwrap_or_else(|| info.variants[0].name.to_string());
        RunSpec {
            target: info.name.to_string(),
            variant,
            options: self.options.clone(),
            property: self.property.clone(),
        }
    }

    fn regressions_dir(&self) -> PathBuf {
        self.dir.clone().unwrap_or_else(|| {
            let root = env("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
            Path::new(&root).join("weft-regressions")
        })
    }

    /// Replays every saved repro of this configuration (shrunk ones first); the first that
    /// still fails is the result. Returns those that now pass.
    fn replay_saved(
        &self,
        runner: &dyn Runner,
        spec: &RunSpec,
        dir: &Path,
    ) -> Result<Vec<PathBuf>, Failure> {
        let mut files: Vec<PathBuf> = match std::fs::read_dir(dir) {
            Ok(entries) => entries.filter_map(|e| e.ok().map(|e| e.path())).collect(),
            Err(_) => return Ok(Vec::new()),
        };
        files.retain(|p| p.extension().is_some_and(|e| e == "json"));
        files.sort_by_key(|p| (!p.to_string_lossy().ends_with("-shrunk.json"), p.clone()));
        let mut fixed = Vec::new();
        for path in files {
            let repro = Repro::read(&path)?;
            if !same_config(&repro.spec, spec) {
                continue;
            }
            // The decisions, not the trace hash: the code under test may have changed since.
            let r = weft_explore::replay(runner, &repro.scenario, &repro.decisions, false);
            if r.report.outcome.is_failure() {
                let mut now = repro.clone();
                now.outcome = r.report.outcome;
                return Err(violation(&now, path, true));
            }
            fixed.push(path);
        }
        Ok(fixed)
    }
}

/// The test runner is an edge, like the command line: it reads the environment here, once per
/// check, and passes what it read down as configuration.
#[allow(clippy::disallowed_methods)]
fn env(name: &str) -> Result<String, std::env::VarError> {
    std::env::var(name)
}

fn same_config(a: &RunSpec, b: &RunSpec) -> bool {
    a.target == b.target
        && a.variant == b.variant
        && a.options == b.options
        && a.property == b.property
}

fn parse_env<T: std::str::FromStr>(name: &str, text: &str) -> T {
    text.trim().parse().unwrap_or_else(|_| panic!("{name}={text:?} is not a number"))
}

fn replay_env(runner: &dyn Runner, repro: &Repro, path: PathBuf) -> Result<Passed, Failure> {
    let (_, verdict) = weft_explore::replay_repro(runner, repro, None, false);
    match verdict {
        weft_explore::ReplayVerdict::Reproduced => Err(violation(repro, path, true)),
        weft_explore::ReplayVerdict::Diverged => {
            Err(Failure::Diverged { path, recorded: repro.outcome.clone() })
        }
        _ => Ok(Passed { runs: 1, fixed: Vec::new() }),
    }
}

fn violation(repro: &Repro, path: PathBuf, saved: bool) -> Failure {
    let path = std::path::absolute(&path).unwrap_or(path);
    Failure::Violation(Box::new(Violation {
        outcome: repro.outcome.clone(),
        replay: replay_command(&path),
        repro: path,
        decisions: repro.decisions.len(),
        saved,
    }))
}

/// `WEFT_REPLAY=FILE cargo test [--release] -p PKG --test T -- NAME --exact`, from what cargo
/// and the test harness tell the test process (package, test binary, test name).
fn replay_command(path: &Path) -> String {
    let mut cmd = format!("WEFT_REPLAY={} cargo test", path.display());
    if !cfg!(debug_assertions) {
        cmd.push_str(" --release");
    }
    let pkg = env("CARGO_PKG_NAME").ok();
    if let Some(pkg) = &pkg {
        cmd.push_str(&format!(" -p {pkg}"));
    }
    let exe = std::env::current_exe().ok();
    let stem = exe.as_ref().and_then(|e| e.file_stem()).map(|s| s.to_string_lossy().into_owned());
    if let Some((bin, _hash)) = stem.as_deref().and_then(|s| s.rsplit_once('-')) {
        match pkg.as_deref().map(|p| p.replace('-', "_")) {
            Some(p) if p == bin => cmd.push_str(" --lib"),
            _ => cmd.push_str(&format!(" --test {bin}")),
        }
    }
    if let Some(name) = std::thread::current().name().filter(|n| *n != "main") {
        cmd.push_str(&format!(" -- {name} --exact"));
    }
    cmd
}

/// Writes `repro` at `path`, or — if a different file is there — at the first free `-N` name:
/// a saved counterexample is never overwritten. An identical file is kept.
fn save(repro: &Repro, path: &Path) -> Result<PathBuf, Failure> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| Failure::Io(format!("cannot create {}: {e}", dir.display())))?;
    }
    let text = repro.to_json();
    for n in 1..10_000u32 {
        let candidate = match n {
            1 => path.to_path_buf(),
            n => path.with_file_name(format!(
                "{}-{n}.json",
                path.file_stem().unwrap_or_default().to_string_lossy()
            )),
        };
        match std::fs::read_to_string(&candidate) {
            Ok(existing) if existing == text => return Ok(candidate),
            Ok(_) => continue,
            Err(_) => {
                repro.write(&candidate)?;
                return Ok(candidate);
            }
        }
    }
    Err(Failure::Io(format!("no free name beside {}", path.display())))
}

/// Replays the repro at `path` on `target`, recording every event, and writes its HTML
/// space-time diagram to `out`. Returns the replayed events' timeline as text.
pub fn draw(target: &dyn Target, path: &Path, out: &Path) -> Result<String, Failure> {
    let repro = Repro::read(path)?;
    let runner = target.prepare(&repro.spec)?;
    let (r, _) = weft_explore::replay_repro(runner.as_ref(), &repro, None, true);
    let title = format!("weft: {}", path.display());
    let lines = vec![format!("outcome: {}", r.report.outcome)];
    let header = weft_report::html::Header { title: &title, lines: &lines };
    std::fs::write(out, weft_report::html::render(&header, &r.events))
        .map_err(|e| Failure::Io(format!("cannot write {}: {e}", out.display())))?;
    Ok(weft_report::timeline::render(&r.events))
}
