//! Declared target options: each option's name, default, meaning and the values it allows,
//! written once by a target ([`OptionDecl`]) and used by everything that reads options — the
//! CLI's `-o KEY=VALUE`, the repro reader and `weft targets`. A value outside its bounds is a
//! [`ConfigError`] naming the option, the value and the allowed range, raised before a run
//! allocates anything for it (an unbounded `writes=99999999999` once asked for 2 TB).

use crate::target::{ConfigError, OptionInfo, RunSpec, Target};
use crate::time::SimDuration;

/// Most requests of one kind (client writes, proposals, link flaps, steps) an option may ask
/// for in one run: far above what a useful run needs, small enough that building the workload
/// takes a few MB.
pub const MAX_REQUESTS: u64 = 100_000;

/// The values an option accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Allowed {
    /// Any text; the target checks it itself (options of targets that declare no bounds).
    Any,
    /// An integer in `min..=max`.
    Int { min: u64, max: u64 },
    /// An integer `n`, or an inclusive range `a-b` with `a <= b`, each in `min..=max`.
    IntOrRange { min: u64, max: u64 },
    /// One of `words`, or an integer in `min..=max`.
    WordOrInt { words: &'static [&'static str], min: u64, max: u64 },
    /// `true` or `false`.
    Bool,
    /// One of these words.
    Word(&'static [&'static str]),
    /// A duration such as `300ms` in `min..=max`.
    Duration { min: SimDuration, max: SimDuration },
    /// A probability `NUM/DEN` with `DEN > 0` and `NUM <= DEN`, or `0` or `1`.
    Ratio,
}

impl Allowed {
    /// What the option accepts, in words (`an integer in 0..=100000`).
    pub fn describe(&self) -> String {
        match self {
            Allowed::Any => "any text".into(),
            Allowed::Int { min, max } => format!("an integer in {min}..={max}"),
            Allowed::IntOrRange { min, max } => {
                format!("an integer in {min}..={max}, or a range like {min}-{max} within it")
            }
            Allowed::WordOrInt { words, min, max } => {
                format!("{}, or an integer in {min}..={max}", words.join(" or "))
            }
            Allowed::Bool => "true or false".into(),
            Allowed::Word(words) => format!("one of {}", words.join(", ")),
            Allowed::Duration { min, max } => format!("a duration in {min}..={max}"),
            Allowed::Ratio => "a ratio NUM/DEN with NUM <= DEN (or 0 or 1)".into(),
        }
    }

    /// Whether `value` is allowed.
    pub fn accepts(&self, value: &str) -> bool {
        let int_in = |text: &str, min: u64, max: u64| {
            text.parse::<u64>().ok().filter(|n| (min..=max).contains(n)).is_some()
        };
        match *self {
            Allowed::Any => true,
            Allowed::Int { min, max } => int_in(value, min, max),
            Allowed::IntOrRange { min, max } => match value.split_once('-') {
                Some((a, b)) => {
                    int_in(a, min, max)
                        && int_in(b, min, max)
                        && a.parse::<u64>().ok() <= b.parse::<u64>().ok()
                }
                None => int_in(value, min, max),
            },
            Allowed::WordOrInt { words, min, max } => {
                words.contains(&value) || int_in(value, min, max)
            }
            Allowed::Bool => value == "true" || value == "false",
            Allowed::Word(words) => words.contains(&value),
            Allowed::Duration { min, max } => {
                SimDuration::parse(value).is_some_and(|d| d >= min && d <= max)
            }
            Allowed::Ratio => crate::rng::Ratio::parse(value).is_some(),
        }
    }
}

/// One option of a target: its name, default, meaning and allowed values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptionDecl {
    pub name: &'static str,
    pub default: &'static str,
    pub allowed: Allowed,
    pub summary: &'static str,
}

impl OptionDecl {
    pub const fn new(
        name: &'static str,
        default: &'static str,
        allowed: Allowed,
        summary: &'static str,
    ) -> OptionDecl {
        OptionDecl { name, default, allowed, summary }
    }

    /// The option as [`crate::TargetInfo`] lists it.
    pub fn info(&self) -> OptionInfo {
        OptionInfo { name: self.name, default: self.default, summary: self.summary }
    }

    /// `value` for this option, or an error naming the option, the value and what is allowed.
    pub fn check(&self, value: &str) -> Result<(), ConfigError> {
        if self.allowed.accepts(value) {
            return Ok(());
        }
        Err(ConfigError::bad_option(
            self.name,
            value,
            &format!("expected {}", self.allowed.describe()),
        ))
    }
}

/// The options as [`crate::TargetInfo`] lists them.
pub fn infos(decls: &[OptionDecl]) -> Vec<OptionInfo> {
    decls.iter().map(OptionDecl::info).collect()
}

/// Checks every option `spec` sets against its declaration (names are checked by
/// [`crate::TargetInfo::validate`]; an option without a declaration is left to the target).
pub fn check_options(decls: &[OptionDecl], spec: &RunSpec) -> Result<(), ConfigError> {
    for (name, value) in &spec.options {
        if let Some(decl) = decls.iter().find(|d| d.name == name) {
            decl.check(value)?;
        }
    }
    Ok(())
}

/// Checks `spec` against `target`'s description and option declarations: the variant, option
/// names and values, and the property. Every reader of a spec (the CLI, the repro reader, each
/// target's `prepare`) goes through it.
pub fn check_spec(target: &dyn Target, spec: &RunSpec) -> Result<(), ConfigError> {
    target.info().validate(spec)?;
    check_options(&target.options(), spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_enforced_and_named() {
        let int = Allowed::Int { min: 1, max: 10 };
        assert!(int.accepts("1") && int.accepts("10"));
        for bad in ["0", "11", "-1", "99999999999999999999999", "", " 5", "5x"] {
            assert!(!int.accepts(bad), "{bad}");
        }
        let ids = Allowed::IntOrRange { min: 2, max: 8 };
        assert!(ids.accepts("5") && ids.accepts("4-6") && ids.accepts("8-8"));
        for bad in ["1000", "6-4", "1-5", "4-9", "4-", "-", "a-b"] {
            assert!(!ids.accepts(bad), "{bad}");
        }
        let auto = Allowed::WordOrInt { words: &["auto"], min: 1, max: 8 };
        assert!(auto.accepts("auto") && auto.accepts("3") && !auto.accepts("0"));
        let d =
            Allowed::Duration { min: SimDuration::from_millis(1), max: SimDuration::from_secs(1) };
        assert!(d.accepts("300ms") && !d.accepts("0ms") && !d.accepts("2s") && !d.accepts("x"));
        assert!(Allowed::Ratio.accepts("1/50") && !Allowed::Ratio.accepts("2/1"));
        assert!(!Allowed::Ratio.accepts("1/0"));
        assert!(Allowed::Bool.accepts("true") && !Allowed::Bool.accepts("yes"));

        let decl = OptionDecl::new("ids", "5", ids, "identifier-space size");
        let err = decl.check("1000").unwrap_err().to_string();
        assert!(err.contains("`ids`") && err.contains("`1000`") && err.contains("2..=8"), "{err}");
    }
}
