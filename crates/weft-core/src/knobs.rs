//! Every knob of a [`Scenario`] by name, so that command-line flags (`--scenario KEY=VALUE`,
//! `--faults`, `--budget`) and config files (a cluster file's `[scenario]` table) set them
//! through one table, with one validation and one error naming the knob.

use crate::rng::Ratio;
use crate::scenario::{Contract, PartitionShape, Scenario};
use crate::time::SimDuration;

/// A knob that cannot take the given value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("scenario knob `{key}`: {reason}")]
pub struct KnobError {
    pub key: String,
    pub reason: String,
}

fn err(key: &str, reason: impl Into<String>) -> KnobError {
    KnobError { key: key.into(), reason: reason.into() }
}

/// The knobs, `(name, kind of value)`, in the order the docs list them.
pub const KNOBS: &[(&str, &str)] = &[
    ("latency_min", "duration"),
    ("latency_max", "duration"),
    ("delay_max", "duration"),
    ("outage_max", "duration"),
    ("restart", "true|false"),
    ("fault_phase", "duration"),
    ("fault_start", "duration"),
    ("fault_gaps", "true|false"),
    ("heal_phase", "duration"),
    ("max_events", "number"),
    ("rates.drop", "ratio"),
    ("rates.dup", "ratio"),
    ("rates.delay", "ratio"),
    ("rates.crash", "ratio"),
    ("rates.pause", "ratio"),
    ("rates.partition", "ratio"),
    ("partition_shape", "mixed|node|link|halves|minority"),
    ("budget.crashes", "number"),
    ("budget.pauses", "number"),
    ("budget.partitions", "number"),
    ("budget.drops", "number"),
    ("budget.duplicates", "number"),
    ("disk.contract", "durable|fsync|posix"),
    ("disk.block_size", "number"),
    ("disk.crash_at_call", "ratio"),
    ("disk.eio", "ratio"),
    ("disk.enospc", "ratio"),
    ("disk.fsync_drops_pages", "ratio"),
    ("disk.corrupt_read", "ratio"),
    ("disk.latent_error", "ratio"),
    ("disk.misdirect", "ratio"),
    ("disk.budget", "number"),
];

/// The fault kinds `--faults` switches, each with its rate knob and (if any) budget knob.
pub const FAULT_KINDS: &[(&str, &str, Option<&str>)] = &[
    ("crash", "rates.crash", Some("budget.crashes")),
    ("pause", "rates.pause", Some("budget.pauses")),
    ("partition", "rates.partition", Some("budget.partitions")),
    ("drop", "rates.drop", Some("budget.drops")),
    ("dup", "rates.dup", Some("budget.duplicates")),
    ("delay", "rates.delay", None),
];

fn duration(key: &str, v: &str) -> Result<SimDuration, KnobError> {
    SimDuration::parse(v).ok_or_else(|| err(key, format!("`{v}` is not a duration like 500ms")))
}

fn ratio(key: &str, v: &str) -> Result<Ratio, KnobError> {
    Ratio::parse(v).ok_or_else(|| err(key, format!("`{v}` is not a ratio NUM/DEN with NUM <= DEN")))
}

fn number<T: std::str::FromStr>(key: &str, v: &str) -> Result<T, KnobError> {
    v.trim().parse().map_err(|_| err(key, format!("`{v}` is not a number in range")))
}

impl Scenario {
    /// Sets knob `key` (a name from [`KNOBS`]; `rates.duplicate` is accepted for `rates.dup`)
    /// from its text form.
    pub fn set_knob(&mut self, key: &str, v: &str) -> Result<(), KnobError> {
        let (r, b, d) = (&mut self.rates, &mut self.budget, &mut self.disk);
        match key {
            "latency_min" => self.latency_min = duration(key, v)?,
            "latency_max" => self.latency_max = duration(key, v)?,
            "delay_max" => self.delay_max = duration(key, v)?,
            "outage_max" => self.outage_max = duration(key, v)?,
            "restart" => {
                self.restart = v.trim().parse().map_err(|_| err(key, "expected true or false"))?
            }
            "fault_phase" => self.fault_phase = duration(key, v)?,
            "fault_start" => self.fault_start = duration(key, v)?,
            "fault_gaps" => {
                self.fault_gaps =
                    v.trim().parse().map_err(|_| err(key, "expected true or false"))?
            }
            "heal_phase" => self.heal_phase = duration(key, v)?,
            "max_events" => self.max_events = number(key, v)?,
            "rates.drop" => r.drop = ratio(key, v)?,
            "rates.dup" | "rates.duplicate" => r.duplicate = ratio(key, v)?,
            "rates.delay" => r.delay = ratio(key, v)?,
            "rates.crash" => r.crash = ratio(key, v)?,
            "rates.pause" => r.pause = ratio(key, v)?,
            "rates.partition" => r.partition = ratio(key, v)?,
            "partition_shape" => {
                self.partition_shape = PartitionShape::parse(v.trim()).ok_or_else(|| {
                    err(key, format!("`{v}` is not mixed, node, link, halves or minority"))
                })?
            }
            "budget.crashes" => b.crashes = number(key, v)?,
            "budget.pauses" => b.pauses = number(key, v)?,
            "budget.partitions" => b.partitions = number(key, v)?,
            "budget.drops" => b.drops = number(key, v)?,
            "budget.duplicates" => b.duplicates = number(key, v)?,
            "disk.contract" => {
                d.contract = Contract::parse(v.trim())
                    .ok_or_else(|| err(key, format!("`{v}` is not durable, fsync or posix")))?
            }
            "disk.block_size" => d.block_size = number(key, v)?,
            "disk.crash_at_call" => d.crash_at_call = ratio(key, v)?,
            "disk.eio" => d.eio = ratio(key, v)?,
            "disk.enospc" => d.enospc = ratio(key, v)?,
            "disk.fsync_drops_pages" => d.fsync_drops_pages = ratio(key, v)?,
            "disk.corrupt_read" => d.corrupt_read = ratio(key, v)?,
            "disk.latent_error" => d.latent_error = ratio(key, v)?,
            "disk.misdirect" => d.misdirect = ratio(key, v)?,
            "disk.budget" => d.budget = number(key, v)?,
            _ => {
                let known: Vec<&str> = KNOBS.iter().map(|k| k.0).collect();
                return Err(err(key, format!("unknown knob (known: {})", known.join(", "))));
            }
        }
        self.check_knobs()
    }

    /// `--faults SPEC`: which fault kinds are on. `none` turns every kind off, `default` (or
    /// `all`) puts every kind at [`Scenario::default`]'s rate, and a comma list such as
    /// `crash,partition=1/100,drop` turns exactly the listed kinds on (the others off), each at
    /// the given rate or, without one, at its current rate if that is not zero, else at the
    /// default's. Budgets and phases are untouched.
    pub fn set_faults(&mut self, spec: &str) -> Result<(), KnobError> {
        let defaults = Scenario::default();
        let current = self.clone();
        let spec = spec.trim();
        for (_, rate, _) in FAULT_KINDS {
            let on = matches!(spec, "default" | "all");
            let value = if on { defaults.knob_ratio(rate) } else { Ratio::ZERO };
            self.set_knob(rate, &value.to_string())?;
        }
        if matches!(spec, "none" | "" | "default" | "all") {
            return Ok(());
        }
        for part in spec.split(',') {
            let (kind, given) = match part.split_once('=') {
                Some((k, v)) => (k.trim(), Some(v.trim())),
                None => (part.trim(), None),
            };
            let kind = if kind == "duplicate" { "dup" } else { kind };
            let Some((_, rate, _)) = FAULT_KINDS.iter().find(|f| f.0 == kind) else {
                let known: Vec<&str> = FAULT_KINDS.iter().map(|f| f.0).collect();
                return Err(err(
                    "faults",
                    format!(
                        "unknown fault kind `{kind}` (known: {}, none, default)",
                        known.join(", ")
                    ),
                ));
            };
            let value = match given {
                Some(v) => ratio(rate, v)?,
                None if !current.knob_ratio(rate).is_zero() => current.knob_ratio(rate),
                None => defaults.knob_ratio(rate),
            };
            self.set_knob(rate, &value.to_string())?;
        }
        Ok(())
    }

    /// The relations between knobs that single values cannot break on their own.
    pub fn check_knobs(&self) -> Result<(), KnobError> {
        if self.latency_min > self.latency_max {
            return Err(err("latency_min", "must not exceed latency_max"));
        }
        if self.disk.block_size == 0 {
            return Err(err("disk.block_size", "must be at least 1"));
        }
        if self.max_events == 0 {
            return Err(err("max_events", "must be at least 1"));
        }
        // The bounds a repro file's scenario must keep: a knob may not set what a recorded
        // counterexample could then not be read back with.
        self.validate()
            .map_err(|e| err(&e.field, format!("is {}; allowed: {}", e.value, e.allowed)))
    }

    fn knob_ratio(&self, key: &str) -> Ratio {
        let r = &self.rates;
        match key {
            "rates.drop" => r.drop,
            "rates.dup" => r.duplicate,
            "rates.delay" => r.delay,
            "rates.crash" => r.crash,
            "rates.pause" => r.pause,
            "rates.partition" => r.partition,
            _ => unreachable!("not a fault rate knob: {key}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_knob_can_be_set() {
        for (key, kind) in KNOBS {
            let values: &[&str] = match *kind {
                "duration" => &["7ms"],
                "ratio" => &["1/3"],
                "number" => &["9"],
                "true|false" => &["false", "true"], // one of them is not the default
                "mixed|node|link|halves|minority" => &["halves"],
                _ => &["posix"],
            };
            let changed = values.iter().any(|value| {
                let mut s = Scenario::default();
                s.set_knob(key, value).unwrap_or_else(|e| panic!("{e}"));
                s != Scenario::default()
            });
            assert!(changed, "{key} changed nothing");
        }
    }

    #[test]
    fn bad_values_name_the_knob() {
        let mut s = Scenario::default();
        let e = s.set_knob("rates.crash", "3/2").unwrap_err();
        assert_eq!(e.key, "rates.crash");
        assert!(s.set_knob("budget.crashes", "-1").is_err());
        assert!(s.set_knob("nonsense", "1").unwrap_err().reason.contains("unknown knob"));
        assert_eq!(s.set_knob("latency_min", "1s").unwrap_err().key, "latency_min");
    }

    #[test]
    fn a_knob_cannot_set_what_a_repro_file_would_refuse() {
        let mut s = Scenario::default();
        let e = s.set_knob("max_events", "2000000").unwrap_err();
        assert_eq!(
            (e.key.as_str(), e.reason.as_str()),
            ("max_events", "is 2000000; allowed: 1..=1000000")
        );
        assert_eq!(s.set_knob("outage_max", "2h").unwrap_err().key, "outage_max");
        s.set_knob("max_events", "1000000").unwrap();
        s.validate().unwrap();
    }

    #[test]
    fn faults_switch_kinds() {
        let mut s = Scenario::calm();
        s.set_faults("crash,drop=1/7").unwrap();
        assert_eq!(s.rates.crash, Scenario::default().rates.crash);
        assert_eq!(s.rates.drop, Ratio::new(1, 7));
        assert!(s.rates.partition.is_zero() && s.rates.delay.is_zero());
        s.set_faults("none").unwrap();
        assert_eq!(s, Scenario::calm());
        s.set_faults("default").unwrap();
        assert_eq!(s.rates, Scenario::default().rates);
        assert_eq!(s.set_faults("quake").unwrap_err().key, "faults");
    }
}
