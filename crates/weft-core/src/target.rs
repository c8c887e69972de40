//! The interface between weft's explorer and a target (a protocol model, a sans-IO library
//! harness, or real processes under the shim).
//!
//! A [`Target`] validates a [`RunSpec`] once and returns a [`Runner`]; the explorer then calls
//! [`Runner::run`] many times, each with a [`Scenario`], a [`Decisions`] source and an
//! [`Observer`]. A run is a pure function of (spec, scenario, decisions): that is the whole
//! determinism contract, and `weft check-determinism` tests it.

use crate::decisions::Decisions;
use crate::hash::StableHasher;
use crate::options::{Allowed, OptionDecl};
use crate::outcome::{Modality, Outcome};
use crate::scenario::Scenario;
use crate::time::SimTime;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::hash::Hasher;

/// Which variant and options of a target to run, and which property to focus on.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    pub target: String,
    pub variant: String,
    /// Target-specific options (`mode=atomic`, `ids=5`, …), validated by [`Target::prepare`].
    #[serde(default)]
    pub options: BTreeMap<String, String>,
    /// Only this property counts as a violation (others are still evaluated for the timeline).
    #[serde(default)]
    pub property: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VariantInfo {
    pub name: &'static str,
    pub summary: &'static str,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionInfo {
    pub name: &'static str,
    pub default: &'static str,
    pub summary: &'static str,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PropertyInfo {
    pub name: &'static str,
    pub modality: Modality,
    pub summary: &'static str,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetInfo {
    pub name: &'static str,
    pub summary: &'static str,
    /// The first variant is the default.
    pub variants: Vec<VariantInfo>,
    pub options: Vec<OptionInfo>,
    pub properties: Vec<PropertyInfo>,
}

/// A bad spec: unknown variant, option or property, or an option value that does not parse.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("unknown variant `{variant}` of target `{target}` (known: {known})")]
    UnknownVariant { target: String, variant: String, known: String },
    #[error("unknown option `{option}` for target `{target}` (known: {known})")]
    UnknownOption { target: String, option: String, known: String },
    #[error("bad value `{value}` for option `{option}`: {reason}")]
    BadOption { option: String, value: String, reason: String },
    #[error("unknown property `{property}` for target `{target}` (known: {known})")]
    UnknownProperty { target: String, property: String, known: String },
}

impl ConfigError {
    /// Option `option` has the unusable value `value`, for `reason` ("expected …").
    /// A value longer than 60 characters is shown shortened: it came from the command line or
    /// a file, and the error must stay one readable line.
    pub fn bad_option(option: &str, value: &str, reason: &str) -> ConfigError {
        ConfigError::BadOption {
            option: option.into(),
            value: shorten(value),
            reason: reason.into(),
        }
    }
}

/// `text`, cut to at most 60 characters (with `…` when cut).
pub fn shorten(text: &str) -> String {
    match text.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

impl TargetInfo {
    /// Checks variant, option names and property against this description; targets call it
    /// first in [`Target::prepare`], then parse option values.
    pub fn validate(&self, spec: &RunSpec) -> Result<(), ConfigError> {
        if !self.variants.iter().any(|v| v.name == spec.variant) {
            return Err(ConfigError::UnknownVariant {
                target: self.name.into(),
                variant: spec.variant.clone(),
                known: self.variants.iter().map(|v| v.name).collect::<Vec<_>>().join(", "),
            });
        }
        for key in spec.options.keys() {
            if !self.options.iter().any(|o| o.name == key) {
                return Err(ConfigError::UnknownOption {
                    target: self.name.into(),
                    option: key.clone(),
                    known: self.options.iter().map(|o| o.name).collect::<Vec<_>>().join(", "),
                });
            }
        }
        if let Some(p) = &spec.property {
            if !self.properties.iter().any(|q| q.name == p) {
                return Err(ConfigError::UnknownProperty {
                    target: self.name.into(),
                    property: p.clone(),
                    known: self.properties.iter().map(|q| q.name).collect::<Vec<_>>().join(", "),
                });
            }
        }
        Ok(())
    }

    /// The value of option `name` in `spec`, or its documented default.
    pub fn option<'a>(&'a self, spec: &'a RunSpec, name: &str) -> &'a str {
        if let Some(v) = spec.options.get(name) {
            return v;
        }
        self.options
            .iter()
            .find(|o| o.name == name)
            .map(|o| o.default)
            .unwrap_or_else(|| panic!("target {} has no option {name}", self.name))
    }

    /// Option `name`'s value in `spec` (or its default) is unusable, for `reason`.
    pub fn bad_option(&self, spec: &RunSpec, name: &str, reason: &str) -> ConfigError {
        ConfigError::bad_option(name, self.option(spec, name), reason)
    }

    /// Parses option `name` with `FromStr`, naming the option in the error.
    pub fn parse_option<T: std::str::FromStr>(
        &self,
        spec: &RunSpec,
        name: &str,
    ) -> Result<T, ConfigError> {
        self.option(spec, name).parse().map_err(|_| {
            self.bad_option(spec, name, &format!("expected {}", std::any::type_name::<T>()))
        })
    }
}

/// A built-in target.
pub trait Target: Send + Sync {
    fn info(&self) -> TargetInfo;
    /// The options with the values each allows ([`crate::options`]), which `prepare`, the CLI
    /// and the repro reader check through [`crate::options::check_spec`]. The default
    /// declares `info()`'s options as [`Allowed::Any`] (the target checks values itself).
    fn options(&self) -> Vec<OptionDecl> {
        let options = self.info().options;
        options
            .iter()
            .map(|o| OptionDecl::new(o.name, o.default, Allowed::Any, o.summary))
            .collect()
    }
    /// Validates the spec and builds a runner for it.
    fn prepare(&self, spec: &RunSpec) -> Result<Box<dyn Runner>, ConfigError>;
}

/// A prepared target: runs it once per call, deterministically.
pub trait Runner: Send + Sync {
    /// The scenario a plain `random` campaign uses for this spec.
    fn default_scenario(&self) -> Scenario;
    fn run(
        &self,
        scenario: &Scenario,
        decisions: &mut Decisions,
        obs: &mut dyn Observer,
    ) -> RunReport;
}

/// What kind of thing happened at one event of the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    Start,
    Send,
    Deliver,
    Drop,
    Duplicate,
    Timer,
    Request,
    Observe,
    Crash,
    Restart,
    Pause,
    Resume,
    Partition,
    Heal,
    /// An atomic protocol step (in models where the decision source picks the next step).
    Step,
    Violation,
    Note,
}

impl EventKind {
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Start => "start",
            EventKind::Send => "send",
            EventKind::Deliver => "deliver",
            EventKind::Drop => "drop",
            EventKind::Duplicate => "duplicate",
            EventKind::Timer => "timer",
            EventKind::Request => "request",
            EventKind::Observe => "observe",
            EventKind::Crash => "crash",
            EventKind::Restart => "restart",
            EventKind::Pause => "pause",
            EventKind::Resume => "resume",
            EventKind::Partition => "partition",
            EventKind::Heal => "heal",
            EventKind::Step => "step",
            EventKind::Violation => "violation",
            EventKind::Note => "note",
        }
    }

    /// Faults count toward a repro's fault tally.
    pub fn is_fault(self) -> bool {
        matches!(
            self,
            EventKind::Drop
                | EventKind::Duplicate
                | EventKind::Crash
                | EventKind::Pause
                | EventKind::Partition
        )
    }
}

impl fmt::Display for EventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One event of a trace, as the timeline, the HTML diagram and determinism checks see it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// 0-based position in the trace.
    pub index: u64,
    pub time: SimTime,
    pub node: Option<u32>,
    pub kind: EventKind,
    /// The other end of a message (sender of a delivery, receiver of a send or drop).
    pub peer: Option<u32>,
    /// Message id linking a send to its delivery, drop or duplicate.
    pub msg: Option<u64>,
    pub summary: String,
    /// The node's one-line `describe()` after the event, when the target provides it.
    pub state: Option<String>,
    /// The running trace hash after this event.
    pub hash: u64,
}

/// Receives what a run does. The explorer's hot loop uses [`NullObserver`]; replay, `show` and
/// determinism checks use a recording one. Targets build text only when
/// [`Observer::wants_events`] says so.
pub trait Observer {
    fn wants_events(&self) -> bool {
        false
    }
    fn event(&mut self, _event: Event) {}
    /// An abstract-state feature reached (for coverage-guided search).
    fn feature(&mut self, _feature: u64) {}
    /// Called by targets that support state hashing right before a scheduling decision, with
    /// a hash of everything that determines the future. Returning [`Flow::Stop`] ends the run
    /// early with [`Outcome::Pass`] (exhaustive search uses it to prune visited states).
    fn checkpoint(&mut self, _state: u64) -> Flow {
        Flow::Continue
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Stop,
}

/// Observes nothing.
pub struct NullObserver;
impl Observer for NullObserver {}

/// Records every event (and feature) of a run.
#[derive(Default)]
pub struct Recorder {
    pub events: Vec<Event>,
    pub features: Vec<u64>,
}

impl Observer for Recorder {
    fn wants_events(&self) -> bool {
        true
    }
    fn event(&mut self, event: Event) {
        self.events.push(event);
    }
    fn feature(&mut self, feature: u64) {
        self.features.push(feature);
    }
}

/// Folds structured event data into the run's trace hash. Targets feed it the same words
/// whether or not anyone records text, so the hash is identical in explore and replay.
#[derive(Clone, Debug, Default)]
pub struct TraceHasher {
    h: StableHasher,
    events: u64,
}

impl TraceHasher {
    pub fn new() -> TraceHasher {
        TraceHasher::default()
    }

    /// Adds one event: its time, node, kind, peer and a payload hash (message or step).
    #[inline]
    pub fn event(&mut self, time: SimTime, node: u32, kind: EventKind, peer: u32, payload: u64) {
        self.h.add(time.0);
        self.h.add(((node as u64) << 32) | peer as u64);
        self.h.add(kind as u64);
        self.h.add(payload);
        self.events += 1;
    }

    pub fn events(&self) -> u64 {
        self.events
    }

    pub fn value(&self) -> u64 {
        self.h.finish()
    }
}

/// The result of one run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunReport {
    pub outcome: Outcome,
    pub trace_hash: u64,
    pub events: u64,
    pub faults: u64,
    pub end_time: SimTime,
    /// `sometimes` properties that held at least once in this run.
    pub sometimes: Vec<String>,
}
