//! What several commands share on their command line: which target, variant, options and
//! property they run ([`TargetArgs`]), the shrink budget, the parsers for durations, contracts
//! and strategy names, and opening a repro file against the target it names.

use crate::registry;
use anyhow::{Context, Result};
use clap::Args;
use std::collections::BTreeMap;
use std::path::Path;
use weft_core::{RunSpec, SimDuration};
use weft_explore::Strategy;
use weft_report::Repro;

/// Which target, variant, options and property a command runs.
#[derive(Args, Clone)]
pub(crate) struct TargetArgs {
    /// Target name (see `weft targets`).
    pub(super) target: String,
    /// Target variant (default: the target's first variant).
    #[arg(long)]
    pub(super) variant: Option<String>,
    /// Target option KEY=VALUE (repeatable; see `weft targets`).
    #[arg(long = "option", short = 'o', value_name = "KEY=VALUE")]
    options: Vec<String>,
    /// Shorthand for `--option mode=MODE` (e.g. chord's `atomic` or `messages`).
    #[arg(long)]
    mode: Option<String>,
    /// Count only violations of this property.
    #[arg(long)]
    property: Option<String>,
    /// Persistence contract of the simulated disks: durable, fsync or posix (default: the
    /// target's).
    #[arg(long, value_parser = parse_contract)]
    contract: Option<weft_core::Contract>,
    #[command(flatten)]
    knobs: crate::run::knobs::ScenarioArgs,
}

pub(super) fn parse_contract(text: &str) -> Result<weft_core::Contract, String> {
    weft_core::Contract::parse(text)
        .ok_or_else(|| format!("`{text}` is not a contract (durable, fsync, posix)"))
}

#[derive(Args, Clone)]
pub(crate) struct ShrinkBudget {
    /// Shrinking budget: a number of runs (`5000`) or wall-clock time (`30s`). A run budget
    /// gives the same result everywhere unless it takes longer than 5 minutes (then the best
    /// found so far is kept); a time budget keeps the best found so far.
    #[arg(long, default_value = "20000", value_parser = parse_budget)]
    pub(crate) shrink_budget: Budget,
}

/// How a campaign's result is finished (by `explore` and `merge` alike): shrunk or not,
/// reported as text or JSON, with or without progress.
#[derive(Args, Clone)]
pub(crate) struct FinishArgs {
    #[command(flatten)]
    pub(crate) shrink: ShrinkBudget,
    /// Do not shrink a violation (the unshrunk repro is always written first).
    #[arg(long)]
    pub(crate) no_shrink: bool,
    /// Print a machine-readable summary on stdout at the end (human text goes to stderr).
    #[arg(long)]
    pub(crate) json: bool,
    /// No progress display.
    #[arg(long)]
    pub(crate) quiet: bool,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Budget {
    Runs(u64),
    Time(std::time::Duration),
}

fn parse_budget(text: &str) -> Result<Budget, String> {
    if let Ok(n) = text.parse::<u64>() {
        return Ok(Budget::Runs(n.max(1)));
    }
    parse_wall(text)
        .map(Budget::Time)
        .map_err(|_| format!("`{text}` is neither a number of runs nor a duration like 30s or 5m"))
}

pub(super) fn parse_strategy_name(text: &str) -> Result<String, String> {
    if Strategy::NAMES.contains(&text) {
        Ok(text.to_string())
    } else {
        Err(format!("unknown strategy `{text}` (known: {})", Strategy::NAMES.join(", ")))
    }
}

pub(crate) fn parse_wall(text: &str) -> Result<std::time::Duration, String> {
    SimDuration::parse(text)
        .map(|d| std::time::Duration::from_nanos(d.as_nanos()))
        .ok_or_else(|| format!("`{text}` is not a duration like 30s, 500ms or 5m"))
}

impl TargetArgs {
    pub(crate) fn new(target: &str, variant: Option<&str>, options: &[String]) -> TargetArgs {
        TargetArgs {
            target: target.into(),
            variant: variant.map(str::to_string),
            options: options.to_vec(),
            mode: None,
            property: None,
            contract: None,
            knobs: Default::default(),
        }
    }

    /// Whether this command overrides the target's default scenario.
    pub(crate) fn overrides_scenario(&self) -> bool {
        self.contract.is_some() || !self.knobs.is_empty()
    }

    /// The runner's default scenario with this command's overrides (`--contract`, then the
    /// scenario flags of [`crate::run::knobs::ScenarioArgs`]).
    pub(crate) fn scenario(&self, runner: &dyn weft_core::Runner) -> Result<weft_core::Scenario> {
        let mut scenario = runner.default_scenario();
        if let Some(c) = self.contract {
            scenario.disk.contract = c;
        }
        self.knobs.apply(scenario)
    }

    pub(crate) fn with_property(mut self, property: Option<String>) -> TargetArgs {
        self.property = property;
        self
    }

    pub(crate) fn spec(&self) -> Result<(std::sync::Arc<dyn weft_core::Target>, RunSpec)> {
        let target = registry::find(&self.target)?;
        let info = target.info();
        let variant = match &self.variant {
            Some(v) => v.clone(),
            None => info.variants[0].name.to_string(),
        };
        let mut options = BTreeMap::new();
        for kv in &self.options {
            let (k, v) =
                kv.split_once('=').with_context(|| format!("option `{kv}` is not KEY=VALUE"))?;
            options.insert(k.trim().to_string(), v.trim().to_string());
        }
        if let Some(mode) = &self.mode {
            options.insert("mode".into(), mode.clone());
        }
        let spec = RunSpec {
            target: info.name.to_string(),
            variant,
            options,
            property: self.property.clone(),
        };
        weft_core::check_spec(target.as_ref(), &spec)?;
        Ok((target, spec))
    }
}

pub(crate) fn describe_spec(spec: &RunSpec) -> String {
    let mut s = format!("{} --variant {}", spec.target, spec.variant);
    for (k, v) in &spec.options {
        s.push_str(&format!(" -o {k}={v}"));
    }
    if let Some(p) = &spec.property {
        s.push_str(&format!(" --property {p}"));
    }
    s
}

/// Reads a repro file (size-bounded; its scenario checked by the reader) and checks its spec
/// against the target's declared variants, options and properties.
pub(super) fn open_repro(
    path: &Path,
    exec: &crate::run::process::ExecArgs,
) -> Result<(Repro, std::sync::Arc<dyn weft_core::Target>)> {
    let repro = crate::run::process::open_repro(path, exec)?;
    let shown = path.display();
    let target = registry::find(&repro.spec.target).with_context(|| format!("{shown}"))?;
    weft_core::check_spec(target.as_ref(), &repro.spec).with_context(|| format!("{shown}"))?;
    Ok((repro, target))
}
