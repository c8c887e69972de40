//! [`HostConfig`]: everything one run of real processes depends on besides the scenario and the
//! decisions, validated once (from the `process` target's options or from `weft run` flags).

use std::path::PathBuf;
use weft_core::SimDuration;

/// What a run in which every process is blocked forever (no timer, nothing in flight) means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnIdle {
    /// A deadlock (the default: a cluster that can never make progress again is suspicious).
    Deadlock,
    /// A normal end (servers that wait forever once their clients are done).
    Pass,
}

/// Whether to put processes into their own user and network namespaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Netns {
    /// Where the kernel allows it; otherwise run without and say so in the run's notes.
    Auto,
    Off,
}

/// The configuration of one program under the host. Placeholders in `args` are replaced per
/// node: `{id}` (0-based node number), `{ip}`, `{port}`, `{addr}` (`ip:port`), `{peers}`
/// (comma-separated `ip:port` of every other node), `{nodes}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostConfig {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub nodes: u32,
    /// A line containing this text is a safety violation (`no_forbidden_output`).
    pub forbid: Option<String>,
    /// Exit statuses that count as success; any other exit, or death by signal, is
    /// `TargetCrashed`.
    pub exit_codes: Vec<i32>,
    /// The run ends (as a pass) when virtual time would pass this.
    pub time_limit: SimDuration,
    pub on_idle: OnIdle,
    /// Hang bound: this many intercepted calls without virtual time advancing is a deadlock.
    pub hang_events: u64,
    /// The port `{port}`/`{addr}`/`{peers}` name.
    pub port: u16,
    pub netns: Netns,
    /// Pin the host thread and every process to one CPU (hand-offs several times cheaper).
    pub pin_cpu: bool,
    /// The shim to preload; `None` uses the one embedded in this library.
    pub shim: Option<PathBuf>,
}

impl HostConfig {
    /// `nodes` copies of `program args…` with the defaults documented on each field.
    pub fn new(program: impl Into<PathBuf>, args: Vec<String>, nodes: u32) -> HostConfig {
        HostConfig {
            program: program.into(),
            args,
            nodes,
            forbid: None,
            exit_codes: vec![0],
            time_limit: SimDuration::from_secs(60),
            on_idle: OnIdle::Deadlock,
            hang_events: 100_000,
            port: 7000,
            netns: Netns::Auto,
            pin_cpu: true,
            shim: None,
        }
    }

    /// `ip:port` of node `node`.
    pub fn addr(&self, node: u32) -> String {
        format!("{}:{}", crate::host::format_ip(crate::host::node_ip(node)), self.port)
    }

    /// The arguments of node `node`, placeholders replaced.
    pub fn args_for(&self, node: u32) -> Vec<String> {
        let peers: Vec<String> =
            (0..self.nodes).filter(|&n| n != node).map(|n| self.addr(n)).collect();
        let peers = peers.join(",");
        let ip = crate::host::format_ip(crate::host::node_ip(node));
        self.args
            .iter()
            .map(|a| {
                a.replace("{id}", &node.to_string())
                    .replace("{ip}", &ip)
                    .replace("{port}", &self.port.to_string())
                    .replace("{addr}", &self.addr(node))
                    .replace("{peers}", &peers)
                    .replace("{nodes}", &self.nodes.to_string())
            })
            .collect()
    }
}

impl HostConfig {
    /// The `process` target spec that prepares back into this configuration: what a repro file
    /// of a `weft run` records, so `weft replay` reruns it through [`crate::ProcessTarget`].
    pub fn to_spec(&self) -> weft_core::RunSpec {
        let mut o = std::collections::BTreeMap::new();
        let mut put = |k: &str, v: String| {
            o.insert(k.to_string(), v);
        };
        put("program", self.program.display().to_string());
        put("args", join_args(&self.args));
        put("nodes", self.nodes.to_string());
        put("forbid", self.forbid.clone().unwrap_or_default());
        put(
            "exit_codes",
            self.exit_codes.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(","),
        );
        put("time_limit", self.time_limit.to_string());
        put(
            "on_idle",
            match self.on_idle {
                OnIdle::Deadlock => "deadlock",
                OnIdle::Pass => "pass",
            }
            .into(),
        );
        put("hang_events", self.hang_events.to_string());
        put("port", self.port.to_string());
        put(
            "netns",
            match self.netns {
                Netns::Auto => "auto",
                Netns::Off => "off",
            }
            .into(),
        );
        put("pin", self.pin_cpu.to_string());
        put("shim", self.shim.as_ref().map(|p| p.display().to_string()).unwrap_or_default());
        weft_core::RunSpec {
            target: "process".into(),
            variant: "default".into(),
            options: o,
            property: None,
        }
    }
}

/// Joins arguments for the `args` option of the `process` target: separated by the ASCII unit
/// separator (U+001F), which no shell argument contains in practice.
pub fn join_args(args: &[String]) -> String {
    args.join("\u{1f}")
}

/// The inverse of [`join_args`] (an empty string is no arguments).
pub fn split_args(joined: &str) -> Vec<String> {
    if joined.is_empty() {
        Vec::new()
    } else {
        joined.split('\u{1f}').map(str::to_string).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_replaced_per_node() {
        let cfg = HostConfig::new(
            "/bin/prog",
            ["--id={id}", "{addr}", "{peers}", "{ip}:{port}", "{nodes}"].map(String::from).to_vec(),
            3,
        );
        assert_eq!(
            cfg.args_for(1),
            ["--id=1", "127.1.0.2:7000", "127.1.0.1:7000,127.1.0.3:7000", "127.1.0.2:7000", "3"]
        );
    }

    #[test]
    fn a_config_round_trips_through_its_spec() {
        let mut cfg = HostConfig::new("/bin/true", vec!["{id}".into(), "x y".into()], 4);
        cfg.forbid = Some("BAD".into());
        cfg.exit_codes = vec![0, 3];
        cfg.time_limit = SimDuration::from_millis(1500);
        cfg.on_idle = OnIdle::Pass;
        cfg.port = 9000;
        cfg.netns = Netns::Off;
        cfg.pin_cpu = false;
        let spec = cfg.to_spec();
        assert_eq!(spec.target, "process");
        assert_eq!(crate::ProcessTarget.config(&spec).unwrap(), cfg);
    }

    #[test]
    fn args_round_trip_through_the_option_string() {
        let args: Vec<String> = ["a b", "", "{id}"].map(String::from).to_vec();
        assert_eq!(split_args(&join_args(&args)), args);
        assert!(split_args("").is_empty());
    }
}
