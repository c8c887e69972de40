//! The `process` target: real programs under the shim, behind weft's generic [`Target`]
//! interface so explore, replay and shrink work on them unchanged.

use crate::config::{split_args, HostConfig, Netns, OnIdle};
use weft_core::{
    ConfigError, Decisions, Modality, Observer, OptionInfo, Outcome, PropertyInfo, RunReport,
    RunSpec, Runner, Scenario, SimDuration, SimTime, Target, TargetInfo, VariantInfo,
};

/// Target `process`. Options (all strings, as in a [`RunSpec`]):
///
/// | option | default | meaning |
/// |---|---|---|
/// | `program` | (required) | path of the executable (dynamically linked, not Go) |
/// | `args` | empty | arguments joined by U+001F ([`crate::join_args`]); placeholders below |
/// | `nodes` | `3` | number of processes |
/// | `forbid` | empty | an output line containing this text violates `no_forbidden_output` |
/// | `exit_codes` | `0` | comma list of exit statuses that count as success |
/// | `time_limit` | `60s` | virtual time at which the run ends as a pass |
/// | `on_idle` | `deadlock` | `deadlock` or `pass`: everything blocked forever |
/// | `hang_events` | `100000` | intercepted calls without time advancing that make a hang |
/// | `port` | `7000` | the port the placeholders name |
/// | `netns` | `auto` | `auto` (own user+net namespace where possible) or `off` |
/// | `pin` | `true` | pin host and processes to one CPU |
/// | `shim` | empty | a shim .so to use instead of the embedded one |
///
/// Placeholders in `args`, per node: `{id}` `{ip}` `{port}` `{addr}` `{peers}` (every node) `{others}` (every
/// other node) `{nodes}`.
pub struct ProcessTarget;

const OPTIONS: &[OptionInfo] = &[
    OptionInfo { name: "program", default: "", summary: "executable to run (required)" },
    OptionInfo {
        name: "args",
        default: "",
        summary: "arguments joined by U+001F; {id} {ip} {port} {addr} {peers} {others} {nodes}",
    },
    OptionInfo { name: "nodes", default: "3", summary: "number of processes" },
    OptionInfo { name: "forbid", default: "", summary: "output text that must never appear" },
    OptionInfo {
        name: "exit_codes",
        default: "0",
        summary: "comma list of successful exit statuses",
    },
    OptionInfo {
        name: "time_limit",
        default: "60s",
        summary: "virtual time at which the run ends",
    },
    OptionInfo {
        name: "on_idle",
        default: "deadlock",
        summary: "deadlock | pass when all block forever",
    },
    OptionInfo {
        name: "hang_events",
        default: "100000",
        summary: "calls without time advancing = hang",
    },
    OptionInfo { name: "port", default: "7000", summary: "port named by the placeholders" },
    OptionInfo { name: "netns", default: "auto", summary: "auto | off: own network namespace" },
    OptionInfo { name: "pin", default: "true", summary: "pin to one CPU" },
    OptionInfo { name: "shim", default: "", summary: "shim .so path (default: embedded)" },
];

impl Target for ProcessTarget {
    fn info(&self) -> TargetInfo {
        TargetInfo {
            name: "process",
            summary: "unmodified Linux binaries under the LD_PRELOAD shim",
            variants: vec![VariantInfo { name: "default", summary: "as configured" }],
            options: OPTIONS.to_vec(),
            properties: vec![PropertyInfo {
                name: "no_forbidden_output",
                modality: Modality::Always,
                summary: "no output line contains the `forbid` text",
            }],
        }
    }

    fn prepare(&self, spec: &RunSpec) -> Result<Box<dyn Runner>, ConfigError> {
        Ok(Box::new(ProcessRunner { cfg: self.config(spec)? }))
    }
}

impl ProcessTarget {
    /// Validates `spec` into the configuration a runner would use (the inverse of
    /// [`HostConfig::to_spec`]).
    pub fn config(&self, spec: &RunSpec) -> Result<HostConfig, ConfigError> {
        let info = self.info();
        info.validate(spec)?;
        let program = info.option(spec, "program");
        if program.is_empty() {
            return Err(ConfigError::bad_option("program", program, "required"));
        }
        let mut cfg = HostConfig::new(program, split_args(info.option(spec, "args")), 3);
        cfg.nodes = info.parse_option(spec, "nodes")?;
        if cfg.nodes == 0 || cfg.nodes as usize > crate::proto::MAX_SLOTS {
            return Err(ConfigError::bad_option("nodes", &cfg.nodes.to_string(), "1..=64"));
        }
        let forbid = info.option(spec, "forbid");
        cfg.forbid = (!forbid.is_empty()).then(|| forbid.to_string());
        let codes = info.option(spec, "exit_codes");
        cfg.exit_codes =
            codes.split(',').map(|c| c.trim().parse::<i32>()).collect::<Result<_, _>>().map_err(
                |_| ConfigError::bad_option("exit_codes", codes, "comma list of integers"),
            )?;
        let limit = info.option(spec, "time_limit");
        cfg.time_limit = SimDuration::parse(limit)
            .ok_or_else(|| ConfigError::bad_option("time_limit", limit, "a duration"))?;
        cfg.on_idle = match info.option(spec, "on_idle") {
            "deadlock" => OnIdle::Deadlock,
            "pass" => OnIdle::Pass,
            v => return Err(ConfigError::bad_option("on_idle", v, "deadlock | pass")),
        };
        cfg.hang_events = info.parse_option(spec, "hang_events")?;
        cfg.port = info.parse_option(spec, "port")?;
        cfg.netns = match info.option(spec, "netns") {
            "auto" => Netns::Auto,
            "off" => Netns::Off,
            v => return Err(ConfigError::bad_option("netns", v, "auto | off")),
        };
        cfg.pin_cpu = info.parse_option(spec, "pin")?;
        let shim = info.option(spec, "shim");
        cfg.shim = (!shim.is_empty()).then(|| shim.into());
        Ok(cfg)
    }
}

/// A prepared `process` target.
pub struct ProcessRunner {
    cfg: HostConfig,
}

impl ProcessRunner {
    pub fn config(&self) -> &HostConfig {
        &self.cfg
    }
}

impl Runner for ProcessRunner {
    fn default_scenario(&self) -> Scenario {
        Scenario::default()
    }

    fn run(
        &self,
        scenario: &Scenario,
        decisions: &mut Decisions,
        obs: &mut dyn Observer,
    ) -> RunReport {
        match crate::run_once(&self.cfg, scenario, decisions, obs) {
            Ok(out) => out.report,
            Err(e) => RunReport {
                outcome: Outcome::Unsupported { detail: format!("host could not run it: {e}") },
                trace_hash: 0,
                events: 0,
                faults: 0,
                end_time: SimTime::ZERO,
                sometimes: Vec::new(),
            },
        }
    }
}
