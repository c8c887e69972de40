//! [`HostConfig`]: everything one run of real processes depends on besides the scenario and the
//! decisions, validated once (from the `process` target's options or from `weft run` flags).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
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

/// Which users and groups a node's user namespace maps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Users {
    /// Every id, when weft runs as root (files of every user, real `setuid`); otherwise only
    /// weft's own, and the run's notes say so.
    All,
    /// Only weft's own user and group (the shim keeps a privilege drop's ids).
    One,
}

/// Per-process resource limits, applied with `setrlimit` before the program starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// `RLIMIT_DATA` in bytes (heap, private mappings, thread stacks); 0 = no limit.
    pub memory_bytes: u64,
    /// `RLIMIT_CPU` in seconds of CPU time (SIGXCPU, then SIGKILL 2 s later); 0 = no limit.
    pub cpu_secs: u64,
}

impl Default for Limits {
    /// 2 GiB of memory and 300 s of CPU time per process.
    fn default() -> Limits {
        Limits { memory_bytes: 2 << 30, cpu_secs: 300 }
    }
}

/// One kind of node of a cluster: `count` processes of one program. Nodes are numbered in
/// group order (the first group's nodes first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    pub name: String,
    pub program: PathBuf,
    /// The content hash ([`crate::program_hash`]) the program must still have (recorded in
    /// repros, so a changed binary is refused); `None`: not checked.
    pub program_hash: Option<u64>,
    /// Placeholders are replaced per node (see [`HostConfig`]).
    pub args: Vec<String>,
    /// Added to the environment weft itself was started with.
    pub env: BTreeMap<String, String>,
    pub count: u32,
    /// Virtual time at which the group's processes start.
    pub start: SimDuration,
    /// Exit statuses that count as success; any other exit, or death by signal, ends the run
    /// as `target_crashed` (or `resource_limit`).
    pub exit_codes: Vec<i32>,
    pub limits: Limits,
    /// Directories whose files live on the node's simulated disk (absolute, or relative to
    /// the node's working directory; `{id}`, `{group}`, `{index}` replaced per node). Empty:
    /// every file is real.
    pub data_dirs: Vec<String>,
    /// Whether partition faults may cut this group's links (false: its nodes keep every link,
    /// like the control node Jepsen's clients run on, outside its iptables partitions).
    pub in_partitions: bool,
}

impl Group {
    /// `count` copies of `program args…`, started at time 0, exit status 0 expected.
    pub fn new(name: &str, program: impl Into<PathBuf>, args: Vec<String>, count: u32) -> Group {
        Group {
            name: name.into(),
            program: program.into(),
            program_hash: None,
            args,
            env: BTreeMap::new(),
            count,
            start: SimDuration::ZERO,
            exit_codes: vec![0],
            limits: Limits::default(),
            data_dirs: Vec::new(),
            in_partitions: true,
        }
    }
}

/// What a node is started as: the group's program, arguments with placeholders replaced, its
/// environment, working directory and limits.
#[derive(Clone, Debug)]
pub(crate) struct Launch {
    pub(crate) program: PathBuf,
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) cwd: Option<PathBuf>,
    /// Where the process sees the run's folder, when that is not where it really is: the real
    /// folder is bound at [`crate::workdir::VIEW_DIR`] in the process's own mount namespace.
    pub(crate) view: Option<crate::workdir::View>,
    pub(crate) limits: Limits,
}

/// The configuration of real processes under the host: one or more node [`Group`]s.
/// Placeholders in a group's `args` are replaced per node: `{id}` (0-based node number over
/// the whole cluster), `{ip}`, `{port}`, `{addr}` (`ip:port`), `{peers}` (comma-separated
/// `ip:port` of every node, in id order), `{others}` (the same without this node), `{nodes}`,
/// `{group}` (the group's name), `{index}` (0-based number within the group) and
/// `{peers:NAME}` (the addresses of group NAME's nodes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostConfig {
    pub groups: Vec<Group>,
    /// The number of nodes: the sum of the groups' counts ([`HostConfig::check`] insists).
    pub nodes: u32,
    /// A line containing this text is a safety violation (`no_forbidden_output`).
    pub forbid: Option<String>,
    /// Check the client history (output lines with `weft_check::history::PREFIX`) against
    /// this model at the end of a run that passed (property `history`).
    pub history: Option<weft_check::history::HistoryModel>,
    /// The run ends (as a pass) when virtual time would pass this.
    pub time_limit: SimDuration,
    pub on_idle: OnIdle,
    /// Hang bound: this many intercepted calls without virtual time advancing is a deadlock.
    pub hang_events: u64,
    /// The port `{port}`/`{addr}`/`{peers}` name.
    pub port: u16,
    /// Node 0's IPv4 address; node `k`'s is this plus `k` (`127.1.0.1` unless the cluster file
    /// or `-o addresses=` says otherwise: [`crate::ProcessTarget`] checks it).
    pub ip_base: u32,
    pub netns: Netns,
    pub users: Users,
    /// Pin the host thread and every process to one CPU (hand-offs several times cheaper).
    pub pin_cpu: bool,
    /// The shim to preload; `None` uses the one embedded in this library.
    pub shim: Option<PathBuf>,
    /// Each run makes a fresh, empty working directory per node under this folder
    /// (`slotK/nID`); `None`: processes inherit weft's own working directory.
    pub work_dir: Option<PathBuf>,
    /// This run's folder under `work_dir` (set by [`crate::run_once`] for one run).
    pub(crate) run_dir: Option<PathBuf>,
    /// Whether the processes see `run_dir` at [`crate::workdir::VIEW_DIR`] (set with it).
    pub(crate) run_view: bool,
}

impl HostConfig {
    /// `nodes` copies of `program args…` (one group, `node`) with the defaults documented on
    /// each field.
    pub fn new(program: impl Into<PathBuf>, args: Vec<String>, nodes: u32) -> HostConfig {
        HostConfig::cluster(vec![Group::new("node", program, args, nodes)])
    }

    /// A cluster of `groups`, with the defaults documented on each field.
    pub fn cluster(groups: Vec<Group>) -> HostConfig {
        HostConfig {
            nodes: groups.iter().map(|g| g.count).sum(),
            groups,
            forbid: None,
            history: None,
            time_limit: SimDuration::from_secs(60),
            on_idle: OnIdle::Deadlock,
            hang_events: 100_000,
            port: 7000,
            ip_base: crate::host::NODE_IP_BASE,
            netns: Netns::Auto,
            users: Users::All,
            pin_cpu: true,
            shim: None,
            work_dir: None,
            run_dir: None,
            run_view: false,
        }
    }

    /// The configuration's own consistency: node count, group names, `{peers:NAME}`.
    pub fn check(&self) -> Result<(), String> {
        let sum: u64 = self.groups.iter().map(|g| g.count as u64).sum();
        if sum != self.nodes as u64 || sum == 0 || sum > crate::proto::MAX_SLOTS as u64 {
            return Err(format!(
                "a cluster needs 1..={} nodes in all (groups give {sum}, nodes says {})",
                crate::proto::MAX_SLOTS,
                self.nodes
            ));
        }
        for (i, g) in self.groups.iter().enumerate() {
            if self.groups[..i].iter().any(|h| h.name == g.name) {
                return Err(format!("two groups are named `{}`", g.name));
            }
            if g.exit_codes.is_empty() {
                return Err(format!("group `{}`: exit_codes is empty", g.name));
            }
            for a in &g.args {
                for name in a.split("{peers:").skip(1).filter_map(|r| r.split_once('}')) {
                    if !self.groups.iter().any(|h| h.name == name.0) {
                        return Err(format!(
                            "group `{}`: no group `{}` for {{peers:{}}}",
                            g.name, name.0, name.0
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// The group of node `node` and the node's number within it.
    pub fn group_of(&self, node: u32) -> (&Group, u32) {
        let mut first = 0;
        for g in &self.groups {
            if node < first + g.count {
                return (g, node - first);
            }
            first += g.count;
        }
        panic!("node {node} is outside the cluster of {} nodes", self.nodes)
    }

    /// `ip:port` of node `node`.
    pub fn addr(&self, node: u32) -> String {
        format!("{}:{}", crate::host::format_ip(self.node_ip(node)), self.port)
    }

    /// Node `node`'s IPv4 address.
    pub fn node_ip(&self, node: u32) -> u32 {
        self.ip_base + node
    }

    /// The node whose address `ip` is, if any.
    pub fn node_at(&self, ip: u32) -> Option<u32> {
        let n = self.node_index(ip);
        (ip >= self.ip_base && n < self.nodes).then_some(n)
    }

    /// The node at `ip`, a node's address (what a connection's ends hold).
    pub(crate) fn node_index(&self, ip: u32) -> u32 {
        ip.wrapping_sub(self.ip_base)
    }

    /// The addresses of the nodes `nodes`, comma-separated.
    fn addrs(&self, nodes: impl Iterator<Item = u32>) -> String {
        nodes.map(|n| self.addr(n)).collect::<Vec<String>>().join(",")
    }

    /// The arguments of node `node`, placeholders replaced.
    pub fn args_for(&self, node: u32) -> Vec<String> {
        let peers = self.addrs(0..self.nodes);
        let others = self.addrs((0..self.nodes).filter(|&n| n != node));
        let ip = crate::host::format_ip(self.node_ip(node));
        let (group, index) = self.group_of(node);
        let mut first = 0;
        let mut of_group = Vec::new();
        for g in &self.groups {
            of_group.push((format!("{{peers:{}}}", g.name), self.addrs(first..first + g.count)));
            first += g.count;
        }
        group
            .args
            .iter()
            .map(|a| {
                let mut a = a
                    .replace("{id}", &node.to_string())
                    .replace("{ip}", &ip)
                    .replace("{port}", &self.port.to_string())
                    .replace("{addr}", &self.addr(node))
                    .replace("{peers}", &peers)
                    .replace("{others}", &others)
                    .replace("{nodes}", &self.nodes.to_string())
                    .replace("{group}", &group.name)
                    .replace("{index}", &index.to_string());
                for (pattern, list) in &of_group {
                    a = a.replace(pattern, list);
                }
                a
            })
            .collect()
    }

    /// How node `node` is started.
    pub(crate) fn launch(&self, node: u32) -> Launch {
        let (group, _) = self.group_of(node);
        let mut env: Vec<(String, String)> =
            group.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        let dirs = self.data_dirs_for(node);
        if !dirs.is_empty() {
            env.push(("WEFT_DATA_DIRS".into(), dirs.join(":")));
        }
        Launch {
            program: group.program.clone(),
            args: self.args_for(node),
            env,
            cwd: self.node_dir(node),
            view: self.run_dir.as_ref().filter(|_| self.run_view).map(|real| {
                crate::workdir::View::new(real, &self.seen_run_dir().unwrap_or_default(), node)
            }),
            limits: group.limits,
        }
    }

    fn node_dir(&self, node: u32) -> Option<PathBuf> {
        self.run_dir.as_ref().map(|d| d.join(format!("n{node}")))
    }

    /// Node `node`'s data directories: absolute, lexically normalised, relative ones resolved
    /// against its working directory (as the kernel names it, symlinks resolved, so the paths
    /// match what `getcwd` tells the program).
    pub fn data_dirs_for(&self, node: u32) -> Vec<String> {
        let (group, index) = self.group_of(node);
        if group.data_dirs.is_empty() {
            return Vec::new();
        }
        let cwd = match self.seen_run_dir() {
            Some(d) => d.join(format!("n{node}")),
            None => std::env::current_dir()
                .and_then(std::fs::canonicalize)
                .unwrap_or_else(|_| PathBuf::from("/")),
        };
        group
            .data_dirs
            .iter()
            .map(|d| {
                let d = d
                    .replace("{id}", &node.to_string())
                    .replace("{group}", &group.name)
                    .replace("{index}", &index.to_string());
                normalize_path(&cwd.join(d).to_string_lossy())
            })
            .collect()
    }

    /// When node `node` starts, if not at time 0.
    pub(crate) fn start_at(&self, node: u32) -> Option<SimDuration> {
        let start = self.group_of(node).0.start;
        (start > SimDuration::ZERO).then_some(start)
    }

    /// The run's working folder as a resolved absolute path, if it has one.
    pub(crate) fn work_prefix(&self) -> Option<Vec<u8>> {
        use std::os::unix::ffi::OsStrExt;
        Some(self.seen_run_dir()?.as_os_str().as_bytes().to_vec())
    }

    /// The run's folder as its processes see it (what `getcwd` tells them, symlinks resolved):
    /// the fixed [`crate::workdir::VIEW_DIR`] when it is bound there, else the real folder.
    fn seen_run_dir(&self) -> Option<PathBuf> {
        let real = self.run_dir.as_ref()?;
        let dir = if self.run_view { Path::new(crate::workdir::VIEW_DIR) } else { real };
        Some(std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf()))
    }

    /// Per node: whether partition faults may cut its links (its group's `in_partitions`).
    pub(crate) fn partitionable(&self) -> Vec<bool> {
        (0..self.nodes).map(|n| self.group_of(n).0.in_partitions).collect()
    }

    /// Whether exit status `code` is a success for node `node`.
    pub(crate) fn exit_ok(&self, node: u32, code: i32) -> bool {
        self.group_of(node).0.exit_codes.contains(&code)
    }

    /// Why some program of the cluster cannot run under the shim (static, Go, …), if any.
    pub(crate) fn unsupported_reason(&self) -> Option<String> {
        self.groups.iter().find_map(|g| crate::elf::unsupported_reason_cached(&g.program))
    }

    /// The outcome for node `node`'s process `pid`, which ended badly with wait status
    /// `status`, if it ran into one of its limits (see [`crate::spawn::reap`]).
    pub(crate) fn limit_outcome(
        &self,
        node: u32,
        pid: libc::pid_t,
        status: i32,
        at: weft_core::SimTime,
    ) -> Option<weft_core::Outcome> {
        let (group, _) = self.group_of(node);
        let why = crate::spawn::over_limit(pid, status, &group.limits)?;
        Some(weft_core::Outcome::ResourceLimit {
            detail: format!("node {node} (group {}) {why} at {at}", group.name),
        })
    }
}

impl HostConfig {
    /// The `process` target spec that prepares back into this configuration: what a repro file
    /// of a `weft run` records, so `weft replay` reruns it through [`crate::ProcessTarget`].
    /// The groups are recorded as `cluster_json`, each program with its content hash.
    pub fn to_spec(&self) -> Result<weft_core::RunSpec, String> {
        self.to_spec_with(&[])
    }

    /// [`HostConfig::to_spec`], also recording a cluster file's `[scenario]` knobs.
    pub fn to_spec_with(&self, knobs: &[(String, String)]) -> Result<weft_core::RunSpec, String> {
        let cluster = crate::Cluster {
            groups: self.groups.clone(),
            settings: BTreeMap::new(),
            scenario: knobs.to_vec(),
        };
        let mut o = BTreeMap::new();
        let mut put = |k: &str, v: String| {
            o.insert(k.to_string(), v);
        };
        put("cluster_json", cluster.to_json()?);
        put("forbid", self.forbid.clone().unwrap_or_default());
        put("history", self.history.map(|m| m.name().to_string()).unwrap_or_default());
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
        put("addresses", crate::host::format_ip(self.ip_base));
        put(
            "netns",
            match self.netns {
                Netns::Auto => "auto",
                Netns::Off => "off",
            }
            .into(),
        );
        put(
            "users",
            match self.users {
                Users::All => "all",
                Users::One => "one",
            }
            .into(),
        );
        put("pin", self.pin_cpu.to_string());
        put("shim", self.shim.as_ref().map(|p| p.display().to_string()).unwrap_or_default());
        put(
            "work_dir",
            self.work_dir.as_ref().map(|p| p.display().to_string()).unwrap_or_default(),
        );
        Ok(weft_core::RunSpec {
            target: "process".into(),
            variant: "default".into(),
            options: o,
            property: None,
        })
    }
}

/// `path` (absolute) with `.`, `..` and repeated or trailing `/` resolved lexically.
pub fn normalize_path(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    format!("/{}", parts.join("/"))
}

/// Why `dir` (as written in a cluster file) cannot be a data directory, if it cannot.
pub fn data_dir_problem(dir: &str) -> Option<&'static str> {
    if dir.trim().is_empty() {
        return Some("is empty");
    }
    if dir.contains(':') {
        return Some("contains `:`");
    }
    let abs = normalize_path(dir);
    if dir.starts_with('/') && abs == "/" {
        return Some("is the root directory");
    }
    let system = ["/dev", "/proc", "/sys", "/usr", "/etc", "/bin", "/lib"];
    if dir.starts_with('/') && system.iter().any(|s| abs == *s || abs.starts_with(&format!("{s}/")))
    {
        return Some("is a system directory (it stays real and read-only)");
    }
    None
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
    fn groups_number_their_nodes_in_order() {
        let mut cfg = HostConfig::cluster(vec![
            Group::new("server", "/s", vec!["{index}".into(), "{peers:client}".into()], 2),
            Group::new("client", "/c", vec!["{index}:{id}".into(), "{peers:server}".into()], 1),
        ]);
        cfg.check().unwrap();
        assert_eq!(cfg.nodes, 3);
        assert_eq!(cfg.args_for(1), ["1", "127.1.0.3:7000"]);
        assert_eq!(cfg.args_for(2), ["0:2", "127.1.0.1:7000,127.1.0.2:7000"]);
        assert_eq!(cfg.group_of(2).0.name, "client");
        cfg.groups[1].args.push("{peers:nobody}".into());
        assert!(cfg.check().unwrap_err().contains("nobody"));
    }

    #[test]
    fn placeholders_are_replaced_per_node() {
        let mut cfg = HostConfig::new(
            "/bin/prog",
            ["--id={id}", "{addr}", "{others}", "{ip}:{port}", "{nodes}", "{peers}"]
                .map(String::from)
                .to_vec(),
            3,
        );
        cfg.groups[0].args.push("{group}/{index}/{peers:node}".into());
        assert_eq!(
            cfg.args_for(1),
            [
                "--id=1",
                "127.1.0.2:7000",
                "127.1.0.1:7000,127.1.0.3:7000",
                "127.1.0.2:7000",
                "3",
                "127.1.0.1:7000,127.1.0.2:7000,127.1.0.3:7000",
                "node/1/127.1.0.1:7000,127.1.0.2:7000,127.1.0.3:7000"
            ]
        );
    }

    #[test]
    fn a_config_round_trips_through_its_spec() {
        let mut cfg = HostConfig::new("/bin/true", vec!["{id}".into(), "x y".into()], 4);
        cfg.groups[0].program = std::fs::canonicalize("/bin/true").unwrap();
        cfg.groups[0].program_hash = Some(crate::program_hash(&cfg.groups[0].program).unwrap());
        cfg.groups[0].exit_codes = vec![0, 3];
        cfg.groups[0].start = SimDuration::from_millis(3);
        cfg.groups[0].env.insert("K".into(), "v".into());
        cfg.work_dir = Some("/tmp/weft-test-work".into());
        cfg.forbid = Some("BAD".into());
        cfg.time_limit = SimDuration::from_millis(1500);
        cfg.on_idle = OnIdle::Pass;
        cfg.port = 9000;
        cfg.netns = Netns::Off;
        cfg.pin_cpu = false;
        let spec = cfg.to_spec().unwrap();
        assert_eq!(spec.target, "process");
        assert_eq!(crate::ProcessTarget.config(&spec).unwrap(), cfg);
    }

    #[test]
    fn data_dirs_resolve_per_node_and_reach_the_shim() {
        let mut cfg = HostConfig::new("/bin/true", Vec::new(), 2);
        cfg.groups[0].data_dirs = vec!["/srv/x/../d{index}//".into(), "rel/./db".into()];
        let dirs = cfg.data_dirs_for(1);
        assert_eq!(dirs[0], "/srv/d1");
        assert!(dirs[1].starts_with('/') && dirs[1].ends_with("/rel/db"), "{dirs:?}");
        let env = cfg.launch(1).env;
        assert!(env.contains(&("WEFT_DATA_DIRS".into(), dirs.join(":"))), "{env:?}");
        assert!(HostConfig::new("/bin/true", Vec::new(), 1).launch(0).env.is_empty());
        assert_eq!(
            data_dir_problem("/proc/self"),
            Some("is a system directory (it stays real and read-only)")
        );
        assert!(data_dir_problem("/").is_some() && data_dir_problem("data").is_none());
    }

    #[test]
    fn args_round_trip_through_the_option_string() {
        let args: Vec<String> = ["a b", "", "{id}"].map(String::from).to_vec();
        assert_eq!(split_args(&join_args(&args)), args);
        assert!(split_args("").is_empty());
    }
}
