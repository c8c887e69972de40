//! The `process` target: real programs under the shim, behind weft's generic [`Target`]
//! interface so explore, replay and shrink work on them unchanged.

use crate::cluster::Cluster;
use crate::config::{split_args, Group, HostConfig, Limits, Netns, OnIdle, Users};
use weft_check::history::HistoryModel;
use weft_core::{
    Allowed, ConfigError, Decisions, Modality, Observer, OptionDecl, Outcome, PropertyInfo,
    RunReport, RunSpec, Runner, Scenario, SimDuration, SimTime, Target, TargetInfo, VariantInfo,
};

/// Target `process`. Options (all strings, as in a [`RunSpec`]):
///
/// | option | default | meaning |
/// |---|---|---|
/// | `program` | | path of the executable (dynamically linked, not Go); or `cluster` |
/// | `args` | empty | arguments joined by U+001F ([`crate::join_args`]); placeholders below |
/// | `nodes` | `3` | number of processes |
/// | `exit_codes` | `0` | comma list of exit statuses that count as success |
/// | `cluster` | | a cluster file (TOML, [`Cluster::read`]) instead of the four above |
/// | `cluster_json` | | the resolved cluster a repro records ([`ProcessTarget::resolve`]) |
/// | `memory_limit` | `2GiB` | per process (`RLIMIT_DATA`); `0` = none; a group may set its own |
/// | `cpu_limit` | `300s` | CPU time per process (`RLIMIT_CPU`); `0` = none |
/// | `work_dir` | `weft-out/work` | folder of the fresh per-node working directories |
/// | `forbid` | empty | an output line containing this text violates `no_forbidden_output` |
/// | `history` | empty | `set`, `register` or `kv`: check the client history (property `history`) |
/// | `time_limit` | `60s` | virtual time at which the run ends as a pass |
/// | `on_idle` | `deadlock` | `deadlock` or `pass`: everything blocked forever |
/// | `hang_events` | `100000` | intercepted calls without time advancing that make a hang |
/// | `port` | `7000` | the port the placeholders name |
/// | `addresses` | `127.1.0.1` | node 0's IPv4 address; node `k`'s is this plus `k` ([`addresses`]) |
/// | `netns` | `auto` | `auto` (own user+net namespace where possible) or `off` |
/// | `users` | `all` | `all` (every id mapped when weft runs as root) or `one` (weft's own) |
/// | `pin` | `true` | pin host and processes to one CPU |
/// | `shim` | empty | a shim .so to use instead of the embedded one |
///
/// A cluster file's top-level settings (`time_limit`, `on_idle`, `forbid`, `history`, `port`,
/// `addresses`, `hang_events`) apply unless the option is given; its `[scenario]` knobs shape the default
/// scenario. Placeholders: see [`HostConfig`].
pub struct ProcessTarget;

/// Each option with the values it allows, listed by `weft targets` and checked before a run
/// (`nodes` up to the shim's slot count); the text options (paths, lists, sizes, the history
/// model) are checked when the configuration is loaded.
const OPTIONS: &[OptionDecl] = &[
    OptionDecl::new("program", "", Allowed::Any, "executable to run (or -o cluster=FILE)"),
    OptionDecl::new(
        "args",
        "",
        Allowed::Any,
        "arguments joined by U+001F; {id} {ip} {port} {addr} {peers} {others} {nodes}",
    ),
    OptionDecl::new(
        "nodes",
        "3",
        Allowed::Int { min: 1, max: crate::proto::MAX_SLOTS as u64 },
        "number of processes",
    ),
    OptionDecl::new("exit_codes", "0", Allowed::Any, "comma list of successful exit statuses"),
    OptionDecl::new("cluster", "", Allowed::Any, "cluster file (TOML): node groups"),
    OptionDecl::new("cluster_json", "", Allowed::Any, "resolved cluster (in repros)"),
    OptionDecl::new("memory_limit", "2GiB", Allowed::Any, "memory per process (0: none)"),
    OptionDecl::new("cpu_limit", "300s", Allowed::Any, "CPU time per process (0: none)"),
    OptionDecl::new(
        "work_dir",
        "weft-out/work",
        Allowed::Any,
        "folder of fresh per-node working dirs",
    ),
    OptionDecl::new("forbid", "", Allowed::Any, "output text that must never appear"),
    OptionDecl::new(
        "history",
        "",
        Allowed::Any,
        "set | register | kv: check the WEFT-HISTORY lines",
    ),
    OptionDecl::new(
        "time_limit",
        "60s",
        Allowed::Duration { min: SimDuration::from_millis(1), max: SimDuration::from_secs(86_400) },
        "virtual time at which the run ends",
    ),
    OptionDecl::new(
        "on_idle",
        "deadlock",
        Allowed::Word(&["deadlock", "pass"]),
        "the outcome when every process blocks forever",
    ),
    OptionDecl::new(
        "hang_events",
        "100000",
        Allowed::Int { min: 1, max: 1_000_000_000 },
        "calls without time advancing = hang",
    ),
    OptionDecl::new(
        "port",
        "7000",
        Allowed::Int { min: 1, max: 65_535 },
        "port named by the placeholders",
    ),
    OptionDecl::new("addresses", "127.1.0.1", Allowed::Any, "node 0's IPv4 address (node k: + k)"),
    OptionDecl::new(
        "netns",
        "auto",
        Allowed::Word(&["auto", "off"]),
        "own user and network namespace",
    ),
    OptionDecl::new(
        "users",
        "all",
        Allowed::Word(&["all", "one"]),
        "ids the namespace maps (all: when root)",
    ),
    OptionDecl::new("pin", "true", Allowed::Bool, "pin to one CPU"),
    OptionDecl::new("shim", "", Allowed::Any, "shim .so path (default: embedded)"),
];

impl Target for ProcessTarget {
    fn info(&self) -> TargetInfo {
        TargetInfo {
            name: "process",
            summary: "unmodified Linux binaries under the LD_PRELOAD shim",
            variants: vec![VariantInfo { name: "default", summary: "as configured" }],
            options: weft_core::options::infos(OPTIONS),
            properties: vec![
                PropertyInfo {
                    name: "no_forbidden_output",
                    modality: Modality::Always,
                    summary: "no output line contains the `forbid` text",
                },
                PropertyInfo {
                    name: "history",
                    modality: Modality::Always,
                    summary: "the client history (WEFT-HISTORY lines) satisfies -o history=MODEL",
                },
            ],
        }
    }

    fn options(&self) -> Vec<OptionDecl> {
        OPTIONS.to_vec()
    }

    fn prepare(&self, spec: &RunSpec) -> Result<Box<dyn Runner>, ConfigError> {
        let (cfg, cluster) = self.load(spec)?;
        let scenario = cluster
            .apply_scenario(Scenario::default())
            .map_err(|e| ConfigError::bad_option("cluster", info_cluster(spec), &e))?;
        Ok(Box::new(ProcessRunner { cfg, scenario }))
    }
}

/// The node addresses beginning at `first` for `nodes` nodes: node 0's address, or why not.
/// Loopback ones (`127.0.0.0/8`, the default `127.1.0.1`) can never leave the machine; others
/// (for programs that treat a loopback peer as themselves: OpenDHT, FRR's martian check) only
/// where every node has a network namespace of its own, which holds only its loopback device.
/// None may be `127.0.0.1`, every node's own loopback address.
pub fn addresses(first: &str, nodes: u32, netns: Netns) -> Result<u32, &'static str> {
    let ip: std::net::Ipv4Addr = first.parse().map_err(|_| "an IPv4 address")?;
    let base = u32::from(ip);
    let last =
        base.checked_add(nodes.saturating_sub(1)).ok_or("an address with room for every node")?;
    let loopback = |a: u32| a >> 24 == 127;
    let usable = |a: u32| a >> 24 != 0 && a < u32::from_be_bytes([224, 0, 0, 0]);
    if !usable(base) || !usable(last) {
        return Err("unicast addresses (not 0.x.x.x, multicast or broadcast) for every node");
    }
    let own = u32::from_be_bytes([127, 0, 0, 1]);
    if (base..=last).contains(&own) {
        return Err("addresses that leave out 127.0.0.1 (each node's own loopback address)");
    }
    if loopback(base) != loopback(last) {
        return Err("addresses all inside or all outside 127.0.0.0/8");
    }
    if !loopback(base) && (netns == Netns::Off || !crate::netns_available()) {
        return Err(
            "loopback addresses (127.x.x.x): others need each node's own network namespace",
        );
    }
    Ok(base)
}

/// The option naming the cluster, for error messages.
fn info_cluster(spec: &RunSpec) -> &str {
    spec.options.get("cluster").map(String::as_str).unwrap_or("(recorded)")
}

fn bad(option: &str, value: &str) -> impl Fn(String) -> ConfigError {
    let (option, value) = (option.to_string(), value.to_string());
    move |e| ConfigError::bad_option(&option, &value, &e)
}

impl ProcessTarget {
    /// Validates `spec` into the configuration a runner would use (the inverse of
    /// [`HostConfig::to_spec`]).
    pub fn config(&self, spec: &RunSpec) -> Result<HostConfig, ConfigError> {
        Ok(self.load(spec)?.0)
    }

    /// `spec` in the form a repro records: the cluster (from a file, or the single program)
    /// as `cluster_json`, with absolute program paths and content hashes.
    pub fn resolve(&self, spec: &RunSpec) -> Result<RunSpec, ConfigError> {
        let (cfg, cluster) = self.load(spec)?;
        let mut out = cfg.to_spec_with(&cluster.scenario).map_err(bad("program", ""))?;
        out.property = spec.property.clone();
        Ok(out)
    }

    /// The groups of `spec`: from `cluster_json`, `cluster`, or `program` (exactly one).
    fn groups(&self, spec: &RunSpec, limits: Limits) -> Result<Cluster, ConfigError> {
        let info = self.info();
        let given = |k: &str| spec.options.get(k).is_some_and(|v| !v.is_empty());
        let sources: Vec<&str> =
            ["program", "cluster", "cluster_json"].into_iter().filter(|k| given(k)).collect();
        match sources[..] {
            [] => Err(ConfigError::bad_option("program", "", "required (or -o cluster=FILE)")),
            [_, _, ..] => {
                Err(ConfigError::bad_option(sources[1], "", "give one of program, cluster"))
            }
            ["cluster_json"] => Cluster::from_json(info.option(spec, "cluster_json"))
                .map_err(bad("cluster_json", "")),
            ["cluster"] => {
                if let Some(k) = ["args", "nodes", "exit_codes"].into_iter().find(|k| given(k)) {
                    return Err(ConfigError::bad_option(
                        k,
                        &spec.options[k],
                        "set in the cluster file",
                    ));
                }
                let path = info.option(spec, "cluster");
                Cluster::read(std::path::Path::new(path), limits).map_err(bad("cluster", path))
            }
            _ => {
                let program = info.option(spec, "program");
                let nodes: u32 = info.parse_option(spec, "nodes")?;
                if nodes == 0 || nodes as usize > crate::proto::MAX_SLOTS {
                    let range = format!("1..={}", crate::proto::MAX_SLOTS);
                    return Err(ConfigError::bad_option("nodes", &nodes.to_string(), &range));
                }
                let args = split_args(info.option(spec, "args"));
                let mut group = Group::new("node", program, args, nodes);
                let codes = info.option(spec, "exit_codes");
                group.exit_codes = codes
                    .split(',')
                    .map(|c| c.trim().parse::<i32>())
                    .collect::<Result<_, _>>()
                    .map_err(|_| {
                        ConfigError::bad_option("exit_codes", codes, "comma list of integers")
                    })?;
                group.limits = limits;
                Ok(Cluster {
                    groups: vec![group],
                    settings: Default::default(),
                    scenario: Vec::new(),
                })
            }
        }
    }

    /// Validates `spec` into the configuration a runner would use, and the cluster it came
    /// from (its `[scenario]` knobs shape the default scenario). Every program is checked
    /// ([`crate::check_program`]) and made absolute; a recorded hash must still match.
    pub fn load(&self, spec: &RunSpec) -> Result<(HostConfig, Cluster), ConfigError> {
        let info = self.info();
        weft_core::check_spec(self, spec)?;
        let limits = self.limits(spec)?;
        let mut cluster = self.groups(spec, limits)?;
        for g in &mut cluster.groups {
            let shown = g.program.display().to_string();
            g.program = crate::check_program(&g.program).map_err(bad("program", &shown))?;
            if let Some(recorded) = g.program_hash {
                let now = crate::program_hash(&g.program).map_err(bad("program", &shown))?;
                if now != recorded {
                    return Err(ConfigError::bad_option(
                        "program",
                        &shown,
                        &format!(
                            "its content changed since the repro was recorded (hash \
                             {recorded:016x}, now {now:016x}): refusing to run a different \
                             binary"
                        ),
                    ));
                }
            }
        }
        let mut cfg = HostConfig::cluster(cluster.groups.clone());
        cfg.check().map_err(bad("cluster", info_cluster(spec)))?;
        let setting = |k: &str| match spec.options.get(k) {
            Some(v) => v.as_str(),
            None => cluster.settings.get(k).map(String::as_str).unwrap_or(info.option(spec, k)),
        };
        let forbid = setting("forbid");
        cfg.forbid = (!forbid.is_empty()).then(|| forbid.to_string());
        let history = setting("history");
        cfg.history = match history {
            "" => None,
            v => Some(
                HistoryModel::parse(v)
                    .ok_or_else(|| ConfigError::bad_option("history", v, "set | register | kv"))?,
            ),
        };
        let limit = setting("time_limit");
        cfg.time_limit = SimDuration::parse(limit)
            .ok_or_else(|| ConfigError::bad_option("time_limit", limit, "a duration"))?;
        cfg.on_idle = match setting("on_idle") {
            "deadlock" => OnIdle::Deadlock,
            "pass" => OnIdle::Pass,
            v => return Err(ConfigError::bad_option("on_idle", v, "deadlock | pass")),
        };
        let number = |k: &str| {
            let v = setting(k);
            v.parse::<u64>().map_err(|_| ConfigError::bad_option(k, v, "a number"))
        };
        cfg.hang_events = number("hang_events")?;
        cfg.port = u16::try_from(number("port")?)
            .map_err(|_| ConfigError::bad_option("port", setting("port"), "a port number"))?;
        cfg.netns = match info.option(spec, "netns") {
            "auto" => Netns::Auto,
            "off" => Netns::Off,
            v => return Err(ConfigError::bad_option("netns", v, "auto | off")),
        };
        let first = setting("addresses");
        cfg.ip_base = addresses(first, cfg.nodes, cfg.netns)
            .map_err(|why| ConfigError::bad_option("addresses", first, why))?;
        cfg.users = match info.option(spec, "users") {
            "all" => Users::All,
            "one" => Users::One,
            v => return Err(ConfigError::bad_option("users", v, "all | one")),
        };
        cfg.pin_cpu = info.parse_option(spec, "pin")?;
        let shim = info.option(spec, "shim");
        cfg.shim = (!shim.is_empty()).then(|| shim.into());
        let work = info.option(spec, "work_dir");
        cfg.work_dir = (!work.is_empty())
            .then(|| std::path::absolute(work))
            .transpose()
            .map_err(|e| ConfigError::bad_option("work_dir", work, &e.to_string()))?;
        Ok((cfg, cluster))
    }

    fn limits(&self, spec: &RunSpec) -> Result<Limits, ConfigError> {
        let info = self.info();
        let memory = info.option(spec, "memory_limit");
        let cpu = info.option(spec, "cpu_limit");
        Ok(Limits {
            memory_bytes: crate::parse_bytes(memory).ok_or_else(|| {
                ConfigError::bad_option("memory_limit", memory, "a size like 1GiB")
            })?,
            cpu_secs: crate::parse_cpu_secs(cpu)
                .ok_or_else(|| ConfigError::bad_option("cpu_limit", cpu, "a duration like 60s"))?,
        })
    }
}

/// A prepared `process` target.
pub struct ProcessRunner {
    cfg: HostConfig,
    /// The default scenario with the cluster file's `[scenario]` knobs applied.
    scenario: Scenario,
}

impl ProcessRunner {
    /// A runner for a configuration built in code (no cluster file): the default scenario.
    pub fn new(cfg: HostConfig) -> ProcessRunner {
        ProcessRunner { cfg, scenario: Scenario::default() }
    }

    pub fn config(&self) -> &HostConfig {
        &self.cfg
    }
}

impl Runner for ProcessRunner {
    fn default_scenario(&self) -> Scenario {
        self.scenario.clone()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_addresses_are_checked() {
        let ok = |first: &str, nodes| super::addresses(first, nodes, crate::Netns::Auto);
        assert_eq!(ok("127.1.0.1", 3), Ok(u32::from_be_bytes([127, 1, 0, 1])));
        assert!(ok("not an address", 3).unwrap_err().contains("IPv4"));
        assert!(ok("127.0.0.0", 3).unwrap_err().contains("127.0.0.1"));
        assert!(ok("127.255.255.255", 2).unwrap_err().contains("all inside or all outside"));
        assert!(ok("223.255.255.255", 2).unwrap_err().contains("unicast"));
        assert!(ok("0.0.0.1", 2).unwrap_err().contains("unicast"));
        assert!(ok("240.0.0.1", 2).unwrap_err().contains("unicast"));
        assert!(ok("255.255.255.255", 2).unwrap_err().contains("room"));
        let off = super::addresses("10.0.0.1", 3, crate::Netns::Off);
        assert!(off.unwrap_err().contains("network namespace"));
        if crate::netns_available() {
            assert_eq!(ok("10.0.0.1", 3), Ok(u32::from_be_bytes([10, 0, 0, 1])));
        }
    }

    fn with(name: &str, value: &str) -> RunSpec {
        RunSpec {
            target: "process".into(),
            variant: "default".into(),
            options: [(name.to_string(), value.to_string())].into_iter().collect(),
            property: None,
        }
    }

    /// `-o addresses=` gives the nodes their addresses, a repro records them, and a bad one is
    /// refused by name.
    #[test]
    fn the_addresses_option_sets_the_nodes_addresses_and_is_recorded() {
        let mut spec = with("program", "/bin/true");
        let cfg = ProcessTarget.config(&spec).unwrap();
        assert_eq!(cfg.addr(1), "127.1.0.2:7000");
        spec.options.insert("addresses".into(), "127.3.0.1".into());
        let cfg = ProcessTarget.config(&spec).unwrap();
        assert_eq!(
            (cfg.addr(0), cfg.node_at(u32::from_be_bytes([127, 3, 0, 3]))),
            ("127.3.0.1:7000".into(), Some(2))
        );
        assert_eq!(cfg.to_spec().unwrap().options["addresses"], "127.3.0.1");
        spec.options.insert("addresses".into(), "127.0.0.1".into());
        let err = ProcessTarget.config(&spec).unwrap_err().to_string();
        assert!(err.contains("addresses") && err.contains("127.0.0.1"), "{err}");
    }

    #[test]
    fn options_declare_ranges_their_defaults_fit() {
        let decls = ProcessTarget.options();
        for o in &decls {
            assert!(o.allowed.accepts(o.default), "{}'s default {:?}", o.name, o.default);
        }
        let nodes = decls.iter().find(|o| o.name == "nodes").unwrap();
        assert_eq!(nodes.allowed.describe(), "an integer in 1..=256");
        for (name, good, bad) in [
            ("nodes", "256", "0"),
            ("nodes", "1", "257"),
            ("port", "65535", "70000"),
            ("port", "1", "0"),
            ("hang_events", "1", "0"),
            ("time_limit", "200ms", "0s"),
            ("time_limit", "1440m", "1441m"),
            ("on_idle", "pass", "sometimes"),
            ("netns", "off", "on"),
            ("users", "one", "some"),
            ("pin", "false", "yes"),
        ] {
            assert!(
                weft_core::check_spec(&ProcessTarget, &with(name, good)).is_ok(),
                "{name}={good}"
            );
            let err = weft_core::check_spec(&ProcessTarget, &with(name, bad)).unwrap_err();
            assert!(err.to_string().contains(name), "{name}={bad}: {err}");
            assert!(err.to_string().contains("expected"), "{name}={bad}: {err}");
        }
    }
}
