//! weft-target-chord owns the Chord ring-maintenance target: the protocol as published
//! (`literal`: SIGCOMM 2001 + PODC 2002 successor-list operations), as Zave analysed it
//! (`original`: literal + the two obvious fixes FIX-J and FIX-S) and as Zave corrected it
//! (`corrected`: TSE 2017), with Zave's properties as oracles on ground truth. The reference
//! is `/work/shared/specs/chord.md`; section numbers (§) below point into it.
//!
//! **Layout.** [`model`] holds the replica logic as pure state-transition functions over a
//! fixed-size [`model::Ring`] (no allocation per step); [`props`] evaluates the properties;
//! [`atomic`] runs Zave's models step by step, the decision source picking each enabled step;
//! [`message`] runs the same logic as weft-sim nodes exchanging datagrams; [`exhaustive`] is a
//! breadth-first search over atomic states. Results and commands: `docs/chord.md`.
//!
//! **Configuring a run.** A [`weft_core::RunSpec`] with target `chord`, a variant and options
//! (see [`Chord::info`] for each with its default):
//! `mode` (`atomic` or `messages`), `r` (successor-list length, 2), `ids` (identifier-space
//! size, a number or a range like `4-6` drawn per run by the first decision; default `5`, the
//! measured best for the original's ring bugs and the smallest at which OrderedRing is
//! reachable without identity reuse), `steps` (atomic fault-phase length, 40), `failures` (most
//! failures per run, 2), `reuse` (may a failed identity join again, false), `fused` (D1
//! ablation: stabilize and reconcile as one step, false), `initial` (corrected: members of the
//! initial ideal ring, default r + 1), `gate` (`auto` = successor rule for literal/original and
//! principal rule for corrected; or `successor`, `principal`, `unguarded`), `swarm` (atomic:
//! per-segment step-kind weights, true), `ring-feature` (messages: report the ring's shape as a
//! coverage feature after every event, false; benched and not the default), `settle` (messages:
//! end a run in the heal phase once it is settled — ideal, quiet, every message in flight inert, so no event
//! left can change a property — instead of running the heal phase out, true). The first node bootstraps alone for literal/original;
//! corrected starts from an ideal ring whose member set (containing node 0) is drawn by a
//! decision. In atomic mode the [`weft_core::Scenario`] is not read (`steps` and `failures`
//! bound the fault phase); message mode uses it (latency, delays, crash rate and budget,
//! phases) and its default scenario is [`message::default_scenario`].
//!
//! **What counts** (the decision of issue "Chord as published and Chord as corrected").
//! Every property is evaluated after every step. A violation is *permanent* if deterministic
//! fair stabilization from that state (joins and failures stopped) does not reach Ideal within
//! `ids² + 8` rounds, *transient* otherwise; the outcome detail starts with the word.
//! * With a property focus (`RunSpec.property`), only that property counts, transient or not.
//! * `corrected`, no focus: Zave's Invariant (OneLiveSuccessor, SufficientPrincipals) and
//!   everything she proved it implies (AtLeastOneRing, AtMostOneRing, OrderedRing,
//!   ConnectedAppendages, OrderedSuccessorLists, NoDuplicates) count on any violation,
//!   transient or not; plus EventuallyIdeal. OrderedMerges and ValidSuccessorList are *not*
//!   invariants of the corrected protocol either: exhaustive search reaches an OrderedMerges
//!   violation in 6 steps and a ValidSuccessorList one in 10 at 5 ids, with no failure (a
//!   joiner merging behind a node that adopted a later joiner, as in §3.3), and Zave never
//!   claims them for it; they and OrderedAppendages count only under a focus.
//! * `literal` / `original`, no focus: the four ring properties (AtLeastOneRing,
//!   AtMostOneRing, OrderedRing, ConnectedAppendages) count only when permanent, and the three
//!   transient ones (OrderedAppendages, OrderedMerges, ValidSuccessorList) not at all: they
//!   fire within a dozen steps of almost every run and would hide the ring bugs. Plus
//!   EventuallyIdeal at the end of the heal phase.

pub mod atomic;
pub mod exhaustive;
pub mod message;
pub mod model;
pub mod props;

use model::{Gate, Rules, Variant, MAX_IDS, MAX_R};
use props::Property;
use weft_core::{
    Allowed, ConfigError, Decisions, Modality, Observer, OptionDecl, PropertyInfo, RunReport,
    RunSpec, Runner, Scenario, Target, TargetInfo, VariantInfo,
};

/// How replicas interact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Each operation is one atomic step of Zave's model.
    Atomic,
    /// Replicas exchange datagrams through weft-sim's network ([`message`]).
    Messages,
}

/// A validated run configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// `rules.ids` is `ids_min` until a run draws its identity count.
    pub rules: Rules,
    pub mode: Mode,
    pub ids_min: u8,
    pub ids_max: u8,
    /// Fault-phase length in atomic steps.
    pub steps: u32,
    /// Corrected: members of the initial ideal ring.
    pub initial: u8,
    pub focus: Option<Property>,
    /// Atomic mode: draw a per-run weight profile over step kinds ([`atomic::Profile`]).
    pub swarm: bool,
    /// Message mode: report the ring's shape as a coverage feature after every event
    /// ([`message::ChordNode`]'s `world_feature`), not only each replica's own state.
    pub ring_feature: bool,
    /// Message mode: end a run once it is settled (ideal, quiet, in-flight messages inert: see
    /// `message::settle`) instead of running out the heal phase.
    pub settle: bool,
}

impl Config {
    /// The configuration of `spec`, validated against [`Chord::info`].
    pub fn from_spec(spec: &RunSpec) -> Result<Config, ConfigError> {
        let info = Chord.info();
        weft_core::check_spec(&Chord, spec)?;
        let bad = ConfigError::bad_option;
        let variant = match spec.variant.as_str() {
            "literal" => Variant::Literal,
            "original" => Variant::Original,
            _ => Variant::Corrected,
        };
        let mode = match info.option(spec, "mode") {
            "atomic" => Mode::Atomic,
            "messages" => Mode::Messages,
            v => return Err(bad("mode", v, "expected atomic or messages")),
        };
        let r: u8 = info.parse_option(spec, "r")?;
        if r == 0 || r as usize > MAX_R {
            return Err(bad("r", &r.to_string(), "expected 1..=4"));
        }
        let ids_text = info.option(spec, "ids");
        let (ids_min, ids_max) = match ids_text.split_once('-') {
            Some((a, b)) => (a.trim().parse::<u8>().ok(), b.trim().parse::<u8>().ok()),
            None => (ids_text.parse().ok(), ids_text.parse().ok()),
        };
        let (Some(ids_min), Some(ids_max)) = (ids_min, ids_max) else {
            return Err(bad("ids", ids_text, "expected a number like 5 or a range like 4-6"));
        };
        if ids_min < 2 || ids_max as usize > MAX_IDS || ids_min > ids_max || ids_min <= r {
            return Err(bad(
                "ids",
                ids_text,
                &format!("expected r ({r}) < ids_min <= ids_max <= {MAX_IDS}"),
            ));
        }
        let steps: u32 = info.parse_option(spec, "steps")?;
        let max_failures: u8 = info.parse_option(spec, "failures")?;
        let reuse: bool = info.parse_option(spec, "reuse")?;
        let fused: bool = info.parse_option(spec, "fused")?;
        if fused && variant == Variant::Corrected {
            return Err(bad("fused", "true", "the corrected protocol has no separate reconcile"));
        }
        let initial = match info.option(spec, "initial") {
            "auto" => r + 1,
            v => v.parse().map_err(|_| bad("initial", v, "expected auto or a number"))?,
        };
        if initial == 0 || initial > ids_min {
            return Err(bad("initial", &initial.to_string(), "expected 1..=ids"));
        }
        let gate = match info.option(spec, "gate") {
            "auto" if variant == Variant::Corrected => Gate::Principal,
            "auto" | "successor" => Gate::Successor,
            "principal" => Gate::Principal,
            "unguarded" => Gate::Unguarded,
            v => return Err(bad("gate", v, "expected auto, successor, principal or unguarded")),
        };
        let swarm: bool = info.parse_option(spec, "swarm")?;
        let ring_feature: bool = info.parse_option(spec, "ring-feature")?;
        let settle: bool = info.parse_option(spec, "settle")?;
        let focus = spec.property.as_deref().and_then(Property::from_name);
        let rules = Rules { variant, r, ids: ids_min, reuse, fused, gate, max_failures };
        Ok(Config {
            rules,
            mode,
            ids_min,
            ids_max,
            steps,
            initial,
            focus,
            swarm,
            ring_feature,
            settle,
        })
    }
}

/// The Chord target.
pub struct Chord;

/// The properties a variant is judged by (the corrected-only ones are listed for all variants
/// so that a focus on them is accepted, but only corrected counts them by default).
fn property_infos() -> Vec<PropertyInfo> {
    props::ALL
        .iter()
        .map(|p| PropertyInfo {
            name: p.name(),
            modality: if *p == Property::EventuallyIdeal {
                Modality::Eventually
            } else {
                Modality::Always
            },
            summary: p.summary(),
        })
        .collect()
}

const IDS: u64 = MAX_IDS as u64;

const OPTIONS: &[OptionDecl] = &[
    OptionDecl::new(
        "mode",
        "atomic",
        Allowed::Word(&["atomic", "messages"]),
        "atomic (one step per operation) or messages",
    ),
    OptionDecl::new("r", "2", Allowed::Int { min: 1, max: MAX_R as u64 }, "successor-list length"),
    OptionDecl::new(
        "ids",
        "5",
        Allowed::IntOrRange { min: 2, max: IDS },
        "identifier-space size, or a range like 4-6 drawn per run",
    ),
    OptionDecl::new(
        "steps",
        "40",
        Allowed::Int { min: 0, max: weft_core::options::MAX_REQUESTS },
        "atomic mode: fault-phase length in steps",
    ),
    OptionDecl::new(
        "failures",
        "2",
        Allowed::Int { min: 0, max: IDS },
        "most node failures in one run",
    ),
    OptionDecl::new("reuse", "false", Allowed::Bool, "may a failed identity join again"),
    OptionDecl::new(
        "fused",
        "false",
        Allowed::Bool,
        "literal/original: stabilize and reconcile as one step (D1)",
    ),
    OptionDecl::new(
        "initial",
        "auto",
        Allowed::WordOrInt { words: &["auto"], min: 1, max: IDS },
        "corrected: members of the initial ideal ring (auto = r+1)",
    ),
    OptionDecl::new(
        "swarm",
        "true",
        Allowed::Bool,
        "atomic: draw per-run weights for each kind of step",
    ),
    OptionDecl::new(
        "gate",
        "auto",
        Allowed::Word(&["auto", "successor", "principal", "unguarded"]),
        "failure gate: auto, successor, principal or unguarded",
    ),
    OptionDecl::new(
        "ring-feature",
        "false",
        Allowed::Bool,
        "messages: the ring's shape is a coverage feature",
    ),
    OptionDecl::new(
        "settle",
        "true",
        Allowed::Bool,
        "messages: end a run once the ring is ideal and quiet",
    ),
];

impl Target for Chord {
    fn info(&self) -> TargetInfo {
        TargetInfo {
            name: "chord",
            summary:
                "Chord ring maintenance: as published, as Zave analysed it, as Zave corrected it",
            variants: vec![
                VariantInfo {
                    name: "original",
                    summary:
                        "SIGCOMM 2001 + PODC 2002 with FIX-J and FIX-S (Zave's analysed original)",
                },
                VariantInfo {
                    name: "literal",
                    summary: "SIGCOMM 2001 + PODC 2002 successor-list operations, no obvious fixes",
                },
                VariantInfo { name: "corrected", summary: "Zave's corrected protocol (TSE 2017)" },
            ],
            options: weft_core::options::infos(OPTIONS),
            properties: property_infos(),
        }
    }

    fn options(&self) -> Vec<OptionDecl> {
        OPTIONS.to_vec()
    }

    fn prepare(&self, spec: &RunSpec) -> Result<Box<dyn Runner>, ConfigError> {
        let config = Config::from_spec(spec)?;
        Ok(Box::new(ChordRunner { config }))
    }
}

/// A prepared Chord configuration.
pub struct ChordRunner {
    pub config: Config,
}

impl Runner for ChordRunner {
    fn default_scenario(&self) -> Scenario {
        match self.config.mode {
            Mode::Atomic => Scenario::default(),
            Mode::Messages => message::default_scenario(&self.config),
        }
    }

    fn run(
        &self,
        scenario: &Scenario,
        decisions: &mut Decisions,
        obs: &mut dyn Observer,
    ) -> RunReport {
        match self.config.mode {
            Mode::Atomic => atomic::run(&self.config, decisions, obs),
            Mode::Messages => message::run(&self.config, scenario, decisions, obs),
        }
    }
}

/// A run spec for `variant` with `options` given as `name=value` pairs.
pub fn spec(variant: &str, options: &[(&str, &str)], property: Option<&str>) -> RunSpec {
    RunSpec {
        target: "chord".into(),
        variant: variant.into(),
        options: options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        property: property.map(str::to_string),
    }
}
