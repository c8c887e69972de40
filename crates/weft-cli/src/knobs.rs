//! The scenario flags shared by `weft run` and the commands that take a target (`explore`,
//! `check-determinism`, `eval`): which fault kinds are on (`--faults`), the two phases, fault
//! budgets, and any other knob by name (`--scenario KEY=VALUE`, the names of
//! [`weft_core::KNOBS`]). They apply on top of the target's default scenario (for `weft run`:
//! the calm one, plus a cluster file's `[scenario]` table), in the order listed here.

use anyhow::{anyhow, Result};
use clap::Args;
use weft_core::Scenario;

#[derive(Args, Clone, Debug, Default)]
pub struct ScenarioArgs {
    /// Fault kinds to switch on, the others off: `none`, `default` (all at default rates), or
    /// a comma list of crash, pause, partition, drop, dup, delay, each optionally with a rate
    /// (`crash,partition=1/100,drop=1/10`).
    #[arg(long, value_name = "KINDS")]
    faults: Option<String>,
    /// Faults are injected only before this virtual time (e.g. `5s`).
    #[arg(long, value_name = "DURATION")]
    fault_phase: Option<String>,
    /// How long the heal phase lasts (faults stopped, `eventually` properties checked).
    #[arg(long, value_name = "DURATION")]
    heal_phase: Option<String>,
    /// At most this many faults of a kind per run: `crash=2,partition=1` (kinds: crash, pause,
    /// partition, drop, dup).
    #[arg(long, value_name = "KIND=N,…")]
    fault_budget: Option<String>,
    /// Any scenario knob: `delay_max=200ms`, `rates.crash=1/50`, `budget.crashes=3`,
    /// `latency_max=20ms`, `restart=false`, `disk.eio=1/100`… (repeatable; the knobs are listed
    /// in the README).
    #[arg(long = "scenario", value_name = "KEY=VALUE")]
    knobs: Vec<String>,
}

impl ScenarioArgs {
    /// Whether any flag was given.
    pub fn is_empty(&self) -> bool {
        self.faults.is_none()
            && self.fault_phase.is_none()
            && self.heal_phase.is_none()
            && self.fault_budget.is_none()
            && self.knobs.is_empty()
    }

    /// `base` with these flags applied.
    pub fn apply(&self, mut base: Scenario) -> Result<Scenario> {
        fn bad(flag: &'static str) -> impl Fn(weft_core::KnobError) -> anyhow::Error {
            move |e| anyhow!("bad {flag}: {e}")
        }
        if let Some(f) = &self.faults {
            base.set_faults(f).map_err(bad("--faults"))?;
        }
        if let Some(d) = &self.fault_phase {
            base.set_knob("fault_phase", d).map_err(bad("--fault-phase"))?;
        }
        if let Some(d) = &self.heal_phase {
            base.set_knob("heal_phase", d).map_err(bad("--heal-phase"))?;
        }
        if let Some(list) = &self.fault_budget {
            for part in list.split(',') {
                let (kind, n) = part
                    .split_once('=')
                    .ok_or_else(|| anyhow!("bad --fault-budget: `{part}` is not KIND=N"))?;
                let knob = weft_core::FAULT_KINDS
                    .iter()
                    .find(|f| f.0 == kind.trim())
                    .and_then(|f| f.2)
                    .ok_or_else(|| {
                        anyhow!(
                            "bad --fault-budget: `{kind}` has no budget (crash, pause, \
                             partition, drop, dup)"
                        )
                    })?;
                base.set_knob(knob, n).map_err(bad("--fault-budget"))?;
            }
        }
        for kv in &self.knobs {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| anyhow!("bad --scenario: `{kv}` is not KEY=VALUE"))?;
            base.set_knob(k.trim(), v.trim()).map_err(bad("--scenario"))?;
        }
        Ok(base)
    }

    /// The flags as given, for the header line of a run.
    pub fn describe(&self) -> String {
        let mut s = String::new();
        let mut put = |flag: &str, v: &Option<String>| {
            if let Some(v) = v {
                s.push_str(&format!(" --{flag} {v}"));
            }
        };
        put("faults", &self.faults);
        put("fault-phase", &self.fault_phase);
        put("heal-phase", &self.heal_phase);
        put("fault-budget", &self.fault_budget);
        for kv in &self.knobs {
            s.push_str(&format!(" --scenario {kv}"));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_apply_in_order_and_errors_name_the_flag() {
        let a = ScenarioArgs {
            faults: Some("crash".into()),
            fault_phase: Some("4s".into()),
            fault_budget: Some("crash=3".into()),
            knobs: vec!["delay_max=7ms".into()],
            ..Default::default()
        };
        let s = a.apply(Scenario::calm()).unwrap();
        assert_eq!(s.budget.crashes, 3);
        assert_eq!(s.fault_phase, weft_core::SimDuration::from_secs(4));
        assert_eq!(s.delay_max, weft_core::SimDuration::from_millis(7));
        assert!(!s.rates.crash.is_zero() && s.rates.drop.is_zero());
        let e = ScenarioArgs { fault_budget: Some("delay=1".into()), ..Default::default() };
        assert!(e.apply(Scenario::calm()).unwrap_err().to_string().contains("--fault-budget"));
        let e = ScenarioArgs { knobs: vec!["rates.crash=9".into()], ..Default::default() };
        assert!(e.apply(Scenario::calm()).unwrap_err().to_string().contains("rates.crash"));
    }
}
