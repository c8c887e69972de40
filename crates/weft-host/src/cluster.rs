//! Cluster files: a TOML description of the node groups of one run (each group's program,
//! arguments, environment, start time, count, expected exit statuses and limits), the run's
//! settings and its `[scenario]` knobs; and the resolved JSON form a repro records, with every
//! program as an absolute path and its content hash, so a replay runs exactly what was run.

use crate::config::{Group, Limits};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use weft_core::{Scenario, SimDuration};

/// A cluster file larger than this is refused before it is read.
pub const MAX_CLUSTER_FILE: u64 = 1 << 20;

/// A cluster, as read from a file or a repro.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cluster {
    pub groups: Vec<Group>,
    /// Top-level run settings of the file (`time_limit`, `on_idle`, `forbid`, `history`, `port`, `addresses`,
    /// `hang_events`), as `process` target option values.
    pub settings: BTreeMap<String, String>,
    /// `[scenario]` knobs in the order they apply (`faults` first), as text.
    pub scenario: Vec<(String, String)>,
}

/// The file format (see the crate README for an example).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDoc {
    time_limit: Option<String>,
    on_idle: Option<String>,
    forbid: Option<String>,
    history: Option<String>,
    port: Option<u16>,
    addresses: Option<String>,
    hang_events: Option<u64>,
    memory_limit: Option<Size>,
    cpu_limit: Option<Size>,
    scenario: Option<toml::Table>,
    group: Vec<FileGroup>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileGroup {
    name: String,
    program: PathBuf,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default = "one")]
    count: u32,
    start: Option<String>,
    exit_codes: Option<Vec<i32>>,
    memory_limit: Option<Size>,
    cpu_limit: Option<Size>,
    #[serde(default)]
    data_dirs: Vec<String>,
    #[serde(default = "yes")]
    in_partitions: bool,
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

fn one() -> u32 {
    1
}

/// A size or a duration, written as a number or a string with a unit.
#[derive(Deserialize)]
#[serde(untagged)]
enum Size {
    Number(u64),
    Text(String),
}

/// The recorded form (JSON, inside the `cluster_json` option of a repro's spec).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RecordDoc {
    groups: Vec<RecordGroup>,
    #[serde(default)]
    scenario: Vec<(String, String)>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RecordGroup {
    name: String,
    program: PathBuf,
    /// 16 hex digits of the program's content hash.
    hash: String,
    args: Vec<String>,
    env: BTreeMap<String, String>,
    count: u32,
    start_ns: u64,
    exit_codes: Vec<i32>,
    memory_bytes: u64,
    cpu_secs: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    data_dirs: Vec<String>,
    /// Absent when true, so recordings made before the field existed are unchanged.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    in_partitions: bool,
}

/// Parses `1GiB`, `512MiB`, `64M`, `4096` (bytes).
pub fn parse_bytes(text: &str) -> Option<u64> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num.parse().ok()?;
    let mult: u64 = match unit.trim() {
        "" | "B" => 1,
        "K" | "KiB" | "k" => 1 << 10,
        "M" | "MiB" => 1 << 20,
        "G" | "GiB" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(mult)
}

/// Parses a CPU-time limit: `30s`, `5m`, or a number of seconds (rounded up to a second).
pub fn parse_cpu_secs(text: &str) -> Option<u64> {
    let d = SimDuration::parse(text)?;
    Some(d.as_nanos().div_ceil(1_000_000_000))
}

fn size(field: &str, v: &Size, parse: fn(&str) -> Option<u64>) -> Result<u64, String> {
    match v {
        Size::Number(n) => Ok(*n),
        Size::Text(t) => parse(t).ok_or_else(|| format!("field `{field}`: `{t}` is not valid")),
    }
}

/// The line of byte offset `at` in `text` (1-based).
fn line_of(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].bytes().filter(|&b| b == b'\n').count() + 1
}

impl Cluster {
    /// Reads a cluster file. Program paths are relative to the file's folder. Every error is
    /// one line naming the file and the field.
    pub fn read(path: &Path, defaults: Limits) -> Result<Cluster, String> {
        let shown = path.display();
        let meta = std::fs::metadata(path).map_err(|e| format!("cluster file {shown}: {e}"))?;
        if !meta.is_file() || meta.len() > MAX_CLUSTER_FILE {
            return Err(format!(
                "cluster file {shown}: not a regular file of at most {MAX_CLUSTER_FILE} bytes"
            ));
        }
        let text =
            std::fs::read_to_string(path).map_err(|e| format!("cluster file {shown}: {e}"))?;
        let doc: FileDoc = toml::from_str(&text).map_err(|e| {
            let at = e.span().map(|s| format!(", line {}", line_of(&text, s.start)));
            let msg = e.message().replace('\n', " ");
            format!("cluster file {shown}{}: {}", at.unwrap_or_default(), msg.trim())
        })?;
        let base = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let base = std::path::absolute(base).map_err(|e| format!("cluster file {shown}: {e}"))?;
        Cluster::from_file(doc, &base, defaults).map_err(|e| format!("cluster file {shown}: {e}"))
    }

    fn from_file(doc: FileDoc, base: &Path, defaults: Limits) -> Result<Cluster, String> {
        let mut limits = defaults;
        if let Some(v) = &doc.memory_limit {
            limits.memory_bytes = size("memory_limit", v, parse_bytes)?;
        }
        if let Some(v) = &doc.cpu_limit {
            limits.cpu_secs = size("cpu_limit", v, parse_cpu_secs)?;
        }
        if doc.group.is_empty() {
            return Err("no [[group]]: a cluster needs at least one group".into());
        }
        let mut groups = Vec::new();
        for (i, g) in doc.group.into_iter().enumerate() {
            let at = |field: &str| format!("group {} (`{}`): field `{field}`", i + 1, g.name);
            // Relative to the file; a bare name that is no file there (absent, or a folder of
            // the same name, such as the program's configuration) is looked up in PATH later
            // (`check_program`), as a shell would.
            let beside = base.join(&g.program);
            let bare = !g.program.as_os_str().as_encoded_bytes().contains(&b'/');
            let program = if bare && !beside.is_file() { g.program.clone() } else { beside };
            // `{dir}` is the file's folder, fixed now so a repro records an absolute path.
            let here = |a: &String| a.replace("{dir}", &base.display().to_string());
            let mut group =
                Group::new(&g.name, program, g.args.iter().map(here).collect(), g.count);
            group.env = g.env.iter().map(|(k, v)| (k.clone(), here(v))).collect();
            if let Some(s) = &g.start {
                group.start = SimDuration::parse(s).ok_or_else(|| {
                    format!("{}: `{s}` is not a duration like 500ms", at("start"))
                })?;
            }
            if let Some(codes) = &g.exit_codes {
                group.exit_codes = codes.clone();
            }
            group.limits = limits;
            group.in_partitions = g.in_partitions;
            if let Some(v) = &g.memory_limit {
                group.limits.memory_bytes = size("memory_limit", v, parse_bytes)
                    .map_err(|e| format!("{}: {e}", at("memory_limit")))?;
            }
            if let Some(v) = &g.cpu_limit {
                group.limits.cpu_secs = size("cpu_limit", v, parse_cpu_secs)
                    .map_err(|e| format!("{}: {e}", at("cpu_limit")))?;
            }
            if g.name.is_empty()
                || !g.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                return Err(format!("{}: use letters, digits, - and _", at("name")));
            }
            if g.count == 0 {
                return Err(format!("{}: must be at least 1", at("count")));
            }
            for d in g.data_dirs.iter().map(here) {
                if let Some(why) = crate::config::data_dir_problem(&d) {
                    return Err(format!("{}: `{d}` {why}", at("data_dirs")));
                }
                group.data_dirs.push(d);
            }
            groups.push(group);
        }
        let mut settings = BTreeMap::new();
        let mut put = |k: &str, v: Option<String>| {
            if let Some(v) = v {
                settings.insert(k.to_string(), v);
            }
        };
        put("time_limit", doc.time_limit);
        put("on_idle", doc.on_idle);
        put("forbid", doc.forbid);
        put("history", doc.history);
        put("port", doc.port.map(|p| p.to_string()));
        put("addresses", doc.addresses);
        put("hang_events", doc.hang_events.map(|p| p.to_string()));
        let scenario = match doc.scenario {
            Some(table) => scenario_knobs(&table)?,
            None => Vec::new(),
        };
        let cluster = Cluster { groups, settings, scenario };
        cluster.apply_scenario(Scenario::calm())?;
        Ok(cluster)
    }

    /// `base` with this cluster's `[scenario]` knobs applied.
    pub fn apply_scenario(&self, mut base: Scenario) -> Result<Scenario, String> {
        for (k, v) in &self.scenario {
            let r = if k == "faults" { base.set_faults(v) } else { base.set_knob(k, v) };
            r.map_err(|e| format!("[scenario]: {e}"))?;
        }
        Ok(base)
    }

    /// The recorded form: JSON with every program's hash (computed now if not known).
    pub fn to_json(&self) -> Result<String, String> {
        let mut groups = Vec::new();
        for g in &self.groups {
            let hash = match g.program_hash {
                Some(h) => h,
                None => crate::program_hash(&g.program)?,
            };
            groups.push(RecordGroup {
                name: g.name.clone(),
                program: g.program.clone(),
                hash: format!("{hash:016x}"),
                args: g.args.clone(),
                env: g.env.clone(),
                count: g.count,
                start_ns: g.start.as_nanos(),
                exit_codes: g.exit_codes.clone(),
                memory_bytes: g.limits.memory_bytes,
                cpu_secs: g.limits.cpu_secs,
                data_dirs: g.data_dirs.clone(),
                in_partitions: g.in_partitions,
            });
        }
        let doc = RecordDoc { groups, scenario: self.scenario.clone() };
        serde_json::to_string(&doc).map_err(|e| format!("cannot record the cluster: {e}"))
    }

    /// The inverse of [`Cluster::to_json`]; hashes are checked when the programs are vetted
    /// ([`crate::vet_programs`]).
    pub fn from_json(text: &str) -> Result<Cluster, String> {
        let doc: RecordDoc =
            serde_json::from_str(text).map_err(|e| format!("recorded cluster: {e}"))?;
        let mut groups = Vec::new();
        for g in doc.groups {
            let hash = u64::from_str_radix(&g.hash, 16)
                .map_err(|_| format!("recorded cluster: bad hash `{}`", g.hash))?;
            let mut group = Group::new(&g.name, g.program, g.args, g.count);
            group.program_hash = Some(hash);
            group.env = g.env;
            group.start = SimDuration::from_nanos(g.start_ns);
            group.exit_codes = g.exit_codes;
            group.limits = Limits { memory_bytes: g.memory_bytes, cpu_secs: g.cpu_secs };
            group.data_dirs = g.data_dirs;
            group.in_partitions = g.in_partitions;
            groups.push(group);
        }
        let cluster = Cluster { groups, settings: BTreeMap::new(), scenario: doc.scenario };
        cluster.apply_scenario(Scenario::calm())?;
        Ok(cluster)
    }
}

/// The `[scenario]` table as `(knob, value)` pairs: nested tables become dotted knob names,
/// `faults` (a string or a list of kinds) comes first.
fn scenario_knobs(table: &toml::Table) -> Result<Vec<(String, String)>, String> {
    fn walk(prefix: &str, t: &toml::Table, out: &mut Vec<(String, String)>) -> Result<(), String> {
        for (k, v) in t {
            let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
            let text = match v {
                toml::Value::Table(inner) => {
                    walk(&key, inner, out)?;
                    continue;
                }
                toml::Value::String(s) => s.clone(),
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::Boolean(b) => b.to_string(),
                toml::Value::Array(items) if key == "faults" => {
                    let kinds: Option<Vec<&str>> = items.iter().map(|i| i.as_str()).collect();
                    kinds.ok_or("[scenario]: `faults` must list kinds as strings")?.join(",")
                }
                _ => {
                    return Err(format!("[scenario]: knob `{key}` needs a string, number or bool"))
                }
            };
            out.push((key, text));
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk("", table, &mut out)?;
    out.sort_by_key(|(k, _)| k != "faults");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Cluster, String> {
        let dir = std::env::temp_dir().join(format!("weft-cluster-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("c{}.toml", weft_core::stable_hash(text)));
        std::fs::write(&path, text).unwrap();
        Cluster::read(&path, Limits::default())
    }

    #[test]
    fn a_file_gives_groups_settings_and_knobs() {
        let c = parse(
            r#"
time_limit = "5s"
memory_limit = "64MiB"
addresses = "10.2.0.1"
[scenario]
faults = ["crash", "partition"]
budget.crashes = 2
fault_phase = "3s"
[[group]]
name = "server"
program = "/bin/true"
args = ["{id}", "{peers:server}", "{dir}/x.conf"]
count = 3
[[group]]
name = "client"
program = "/bin/echo"
start = "100ms"
exit_codes = [0, 1]
cpu_limit = "2s"
env = { A = "b" }
data_dirs = ["data-{index}", "{dir}/shared"]
in_partitions = false
"#,
        )
        .unwrap();
        assert_eq!(c.groups.len(), 2);
        assert_eq!(c.groups[0].count, 3);
        assert_eq!(c.groups[0].limits.memory_bytes, 64 << 20);
        assert_eq!(c.groups[1].start, SimDuration::from_millis(100));
        assert_eq!(c.groups[1].limits.cpu_secs, 2);
        assert_eq!(c.groups[1].env["A"], "b");
        let dir = std::path::absolute(std::env::temp_dir()).unwrap();
        assert!(c.groups[0].args[2].starts_with(dir.to_str().unwrap()), "{:?}", c.groups[0].args);
        assert!(c.groups[0].args[2].ends_with("/x.conf"));
        assert_eq!(c.settings["time_limit"], "5s");
        assert_eq!(c.settings["addresses"], "10.2.0.1");
        assert_eq!(c.scenario[0].0, "faults");
        let s = c.apply_scenario(Scenario::calm()).unwrap();
        assert_eq!(s.budget.crashes, 2);
        assert!(!s.rates.crash.is_zero() && s.rates.drop.is_zero());
        assert_eq!(s.fault_phase, SimDuration::from_secs(3));
        let back = Cluster::from_json(&c.to_json().unwrap()).unwrap();
        assert_eq!(back.groups[1].env, c.groups[1].env);
        assert_eq!(back.groups[1].data_dirs, c.groups[1].data_dirs);
        assert_eq!(c.groups[1].data_dirs[0], "data-{index}");
        assert!(c.groups[1].data_dirs[1].starts_with('/'), "{{dir}} made absolute");
        assert!(back.groups[0].data_dirs.is_empty());
        assert!(back.groups.iter().all(|g| g.program_hash.is_some()));
        assert!(c.groups[0].in_partitions && !c.groups[1].in_partitions);
        assert!(back.groups[0].in_partitions && !back.groups[1].in_partitions);
        let json = c.to_json().unwrap();
        assert_eq!(json.matches("in_partitions").count(), 1, "recorded only when false: {json}");
    }

    #[test]
    fn errors_are_one_line_and_name_the_field() {
        let cases = [
            ("[[group]]\nname = \"a\"\n", "program"),
            ("[[group]]\nname = \"a\"\nprogram = \"/bin/true\"\ncont = 2\n", "cont"),
            ("[[group]]\nname = \"a\"\nprogram = \"/bin/true\"\nstart = \"soon\"\n", "start"),
            ("[[group]]\nname = \"a\"\nprogram = \"/bin/true\"\ncount = 0\n", "count"),
            ("[scenario]\nrates.crash = \"2/1\"\n[[group]]\nname = \"a\"\nprogram = \"/bin/true\"\n", "rates.crash"),
            ("time_limit = 5\n[[group]]\nname = \"a\"\nprogram = \"/bin/true\"\n", "line 1"),
            ("[[group]]\nname = \"a\"\nprogram = \"/bin/true\"\ndata_dirs = [\"/proc/x\"]\n", "data_dirs"),
            ("[[group]]\nname = \"a\"\nprogram = \"/bin/true\"\ndata_dirs = [\"a:b\"]\n", "data_dirs"),
            ("this is not toml", "cluster file"),
            ("", "group"),
        ];
        for (text, needle) in cases {
            let e = parse(text).unwrap_err();
            assert!(e.contains(needle), "{e:?} should name {needle}");
            assert!(!e.contains('\n'), "one line: {e:?}");
        }
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_bytes("1GiB"), Some(1 << 30));
        assert_eq!(parse_bytes("64M"), Some(64 << 20));
        assert_eq!(parse_bytes("12"), Some(12));
        assert_eq!(parse_bytes("lots"), None);
        assert_eq!(parse_cpu_secs("1500ms"), Some(2));
        assert_eq!(parse_cpu_secs("5m"), Some(300));
    }
}
