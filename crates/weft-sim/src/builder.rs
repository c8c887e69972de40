//! [`World`]: declare an in-process target once — its nodes, variants, options with their
//! bounds, workload, properties and scenario, with defaults for everything optional — and get
//! a [`Target`] that the explorer, `cargo test` (`weft::check`) and the command line
//! (`weft::cli::main_with`) all run. Built-in targets use it too (`primary-backup`).

use crate::{Check, Node, NodeId, Property, SimRunner, SimSpec, View, Workload};
use std::collections::BTreeMap;
use std::sync::Arc;
use weft_core::{
    Allowed, ConfigError, Modality, OptionDecl, PropertyInfo, RunSpec, Runner, Scenario, Target,
    TargetInfo, VariantInfo,
};

/// The variant and option values one run of a [`World`] was prepared with.
#[derive(Clone, Debug)]
pub struct Config {
    variant: String,
    options: BTreeMap<&'static str, String>,
}

impl Config {
    /// The variant's name.
    pub fn variant(&self) -> &str {
        &self.variant
    }
    /// Whether this is variant `name`.
    pub fn is(&self, name: &str) -> bool {
        self.variant == name
    }
    /// Option `name`'s value (or its declared default), parsed. Values were checked against
    /// the option's declared bounds before the world was built.
    pub fn get<T: std::str::FromStr>(&self, name: &str) -> T {
        let text = self
            .options
            .get(name)
            .unwrap_or_else(|| panic!("no option `{name}` was declared with World::option"));
        text.parse().unwrap_or_else(|_| {
            panic!("option `{name}` = `{text}` is not a {}", std::any::type_name::<T>())
        })
    }
}

type Make<N> = Arc<dyn Fn(&Config, NodeId) -> N + Send + Sync>;
type MakeWorkload<N> = Arc<dyn Fn(&Config) -> Workload<N> + Send + Sync>;
type Tweak = Arc<dyn Fn(&Config, &mut Scenario) + Send + Sync>;

/// An in-process target, declared with a builder. Defaults: one variant `default`, no options,
/// no workload, no properties, [`Scenario::default`].
pub struct World<N: Node> {
    name: &'static str,
    summary: &'static str,
    variants: Vec<VariantInfo>,
    options: Vec<OptionDecl>,
    nodes: usize,
    make: Make<N>,
    workload: Option<MakeWorkload<N>>,
    properties: Vec<(PropertyInfo, Check<N>)>,
    scenario: Option<Tweak>,
    crash_gate: Option<fn(&View<'_, N>, NodeId) -> bool>,
}

impl<N: Node> World<N> {
    /// A world named `name` (the target name on the command line and in repro files) of
    /// `nodes` nodes, node `id` built by `make` at start and again after every restart.
    pub fn new(
        name: &'static str,
        nodes: usize,
        make: impl Fn(&Config, NodeId) -> N + Send + Sync + 'static,
    ) -> World<N> {
        World {
            name,
            summary: "",
            variants: Vec::new(),
            options: Vec::new(),
            nodes,
            make: Arc::new(make),
            workload: None,
            properties: Vec::new(),
            scenario: None,
            crash_gate: None,
        }
    }

    /// One line for `weft targets`.
    pub fn summary(mut self, summary: &'static str) -> Self {
        self.summary = summary;
        self
    }

    /// A variant (the first declared is the default), e.g. `buggy` and `fixed`.
    pub fn variant(mut self, name: &'static str, summary: &'static str) -> Self {
        self.variants.push(VariantInfo { name, summary });
        self
    }

    /// An option with its default and the values it allows; read it with [`Config::get`].
    pub fn option(
        mut self,
        name: &'static str,
        default: &'static str,
        allowed: Allowed,
        summary: &'static str,
    ) -> Self {
        self.options.push(OptionDecl::new(name, default, allowed, summary));
        self
    }

    /// The workload of each run (client requests, scheduled by simulated time), e.g.
    /// [`crate::spread_over_fault_phase`] or [`requests`].
    pub fn workload(
        mut self,
        make: impl Fn(&Config) -> Workload<N> + Send + Sync + 'static,
    ) -> Self {
        self.workload = Some(Arc::new(make));
        self
    }

    /// Adjusts the default scenario (fault budget, phases, rates) for a configuration.
    pub fn scenario(
        mut self,
        tweak: impl Fn(&Config, &mut Scenario) + Send + Sync + 'static,
    ) -> Self {
        self.scenario = Some(Arc::new(tweak));
        self
    }

    /// Which nodes may crash at a crash opportunity (default: any live node), e.g.
    /// `|_, node| node != CLIENT` to keep up a client node that holds the history.
    pub fn crash_gate(mut self, gate: fn(&View<'_, N>, NodeId) -> bool) -> Self {
        self.crash_gate = Some(gate);
        self
    }

    /// A safety property: `check` holds after every event that may change what it reads.
    pub fn always(self, name: &'static str, check: Check<N>) -> Self {
        self.property(name, Modality::Always, check)
    }

    /// A liveness property: `check` holds at some point of the heal phase.
    pub fn eventually(self, name: &'static str, check: Check<N>) -> Self {
        self.property(name, Modality::Eventually, check)
    }

    /// A reachability property: `check` holds at some point of some run (a campaign in which it
    /// never does is reported as vacuous).
    pub fn sometimes(self, name: &'static str, check: Check<N>) -> Self {
        self.property(name, Modality::Sometimes, check)
    }

    fn property(self, name: &'static str, modality: Modality, check: Check<N>) -> Self {
        self.described(name, modality, name, check)
    }

    /// A property with a one-line summary for `weft targets`.
    pub fn described(
        mut self,
        name: &'static str,
        modality: Modality,
        summary: &'static str,
        check: Check<N>,
    ) -> Self {
        self.properties.push((PropertyInfo { name, modality, summary }, check));
        self
    }

    fn config(&self, spec: &RunSpec) -> Config {
        let info = self.info();
        let options = self.options.iter().map(|o| (o.name, info.option(spec, o.name).to_string()));
        Config { variant: spec.variant.clone(), options: options.collect() }
    }
}

impl<N: Node> Target for World<N> {
    fn info(&self) -> TargetInfo {
        let variants = match self.variants.is_empty() {
            true => vec![VariantInfo { name: "default", summary: "the only variant" }],
            false => self.variants.clone(),
        };
        TargetInfo {
            name: self.name,
            summary: self.summary,
            variants,
            options: weft_core::options::infos(&self.options),
            properties: self.properties.iter().map(|(p, _)| p.clone()).collect(),
        }
    }

    fn options(&self) -> Vec<OptionDecl> {
        self.options.clone()
    }

    fn prepare(&self, spec: &RunSpec) -> Result<Box<dyn Runner>, ConfigError> {
        weft_core::check_spec(self, spec)?;
        let cfg = self.config(spec);
        let make = self.make.clone();
        let made = cfg.clone();
        let workload = match &self.workload {
            Some(w) => w(&cfg),
            None => Box::new(|_: &mut weft_core::Decisions, _: &Scenario| Vec::new()),
        };
        let mut scenario = Scenario::default();
        if let Some(tweak) = &self.scenario {
            tweak(&cfg, &mut scenario);
        }
        let sim = SimSpec {
            nodes: self.nodes,
            make: Box::new(move |id| make(&made, id)),
            workload,
            properties: self
                .properties
                .iter()
                .map(|(p, check)| Property { name: p.name, modality: p.modality, check: *check })
                .collect(),
            assumptions: Vec::new(),
            crash_gate: self.crash_gate,
            focus: spec.property.clone(),
        };
        Ok(Box::new(SimRunner { sim, scenario }))
    }
}

/// A workload of `count` requests spread over the fault phase, each at a jitter of whole
/// milliseconds within its equal slot and to a node of `0..nodes`, both drawn from the
/// decisions (so the search picks them and the shrinker simplifies them to slot start and node
/// 0); `make(i, decisions)` builds the `i`-th request (0-based) and may draw its shape too.
pub fn requests<N: Node>(
    count: u64,
    nodes: u32,
    make: impl Fn(u64, &mut weft_core::Decisions) -> N::Req + Send + Sync + 'static,
) -> Workload<N> {
    Box::new(move |d: &mut weft_core::Decisions, sc: &Scenario| {
        let slot = sc.fault_phase.as_nanos() / count.max(1);
        (0..count)
            .map(|i| {
                let at = weft_core::SimTime(i * slot + d.choose(slot / 1_000_000 + 1) * 1_000_000);
                let node = d.choose(nodes as u64) as NodeId;
                (at, node, make(i, d))
            })
            .collect()
    })
}
