//! `weft deploy slurm|k8s … -- EXPLORE-ARGS`: writes what a cluster engine needs to run a
//! campaign as N shards, each writing its result file to one shared folder for `weft merge`.
//!
//! Slurm gets a job-array script (`sbatch FILE`): array task K runs
//! `weft explore ARGS --shard $SLURM_ARRAY_TASK_ID/N`. Kubernetes gets an Indexed Job manifest
//! (JSON, which `kubectl apply -f` reads like YAML): completion index K runs the same with
//! `$(JOB_COMPLETION_INDEX)`, the results on a PersistentVolumeClaim. The campaign's arguments
//! are checked here as `weft explore` would check them, so a typo fails now, not on N nodes.

use super::explore::ExploreArgs;
use super::{Cli, Cmd, Code};
use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use serde_json::json;
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct DeployArgs {
    #[command(subcommand)]
    engine: Engine,
}

#[derive(Subcommand)]
enum Engine {
    /// A Slurm job-array script, one array task per shard (submit with `sbatch FILE`).
    Slurm(SlurmArgs),
    /// A Kubernetes Indexed Job manifest, one completion index per shard
    /// (`kubectl apply -f FILE`).
    K8s(K8sArgs),
}

#[derive(Args)]
struct Common {
    /// How many shards (array tasks, completions).
    #[arg(long)]
    shards: u64,
    /// Shared folder every shard writes its result file to, as the shards see it.
    #[arg(long)]
    results: PathBuf,
    /// Worker threads per shard (explore's --jobs).
    #[arg(long, default_value_t = 1)]
    jobs: u64,
    /// Job name (default: weft-TARGET-VARIANT).
    #[arg(long)]
    name: Option<String>,
    /// Write the script or manifest here instead of stdout.
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
    /// The campaign: `weft explore`'s arguments, target first (after `--`).
    #[arg(last = true, required = true, value_name = "EXPLORE-ARGS")]
    explore: Vec<String>,
}

#[derive(Args)]
struct SlurmArgs {
    #[command(flatten)]
    common: Common,
    /// The weft binary as the compute nodes see it.
    #[arg(long, default_value = "weft")]
    weft: String,
    /// Slurm partition (default: the cluster's default).
    #[arg(long)]
    partition: Option<String>,
    /// Slurm time limit per task (e.g. 01:00:00).
    #[arg(long)]
    time_limit: Option<String>,
    /// At most this many tasks at once (the array's `%M`).
    #[arg(long)]
    max_running: Option<u64>,
}

#[derive(Args)]
struct K8sArgs {
    #[command(flatten)]
    common: Common,
    /// Container image with weft (and the target) in it.
    #[arg(long)]
    image: String,
    /// The weft binary inside the image.
    #[arg(long, default_value = "weft")]
    weft: String,
    /// PersistentVolumeClaim mounted at --results in every pod (ReadWriteMany).
    #[arg(long)]
    claim: String,
    /// Pods at once (default: all shards).
    #[arg(long)]
    parallelism: Option<u64>,
}

/// Flags `deploy` sets itself on every shard.
const OWN_FLAGS: [&str; 5] = ["--shard", "--out", "--jobs", "--json", "--time"];

/// Checks the campaign's arguments as `weft explore` parses them; returns the parsed form.
/// `at_once`: the most shards the engine is told to run at the same time.
fn check_campaign(c: &Common, at_once: Option<u64>) -> Result<ExploreArgs> {
    if c.shards == 0 || c.shards > weft_explore::MAX_SHARDS {
        bail!("--shards must be between 1 and {}", weft_explore::MAX_SHARDS);
    }
    if c.jobs == 0 {
        bail!("--jobs must be at least 1");
    }
    for arg in &c.explore {
        if let Some(flag) =
            OWN_FLAGS.iter().find(|f| arg == *f || arg.starts_with(&format!("{f}=")))
        {
            let why = if *flag == "--time" {
                "a time budget makes a sharded campaign irreproducible; give --runs"
            } else {
                "deploy sets it on every shard"
            };
            bail!("the campaign's arguments must not contain {flag}: {why}");
        }
    }
    let argv = ["weft", "explore"].into_iter().map(String::from).chain(c.explore.iter().cloned());
    let cli = Cli::try_parse_from(argv).map_err(|e| {
        let text = e.render().to_string();
        let first = text.lines().next().unwrap_or("bad arguments").trim_start_matches("error: ");
        anyhow::anyhow!("the campaign's arguments: {first}")
    })?;
    let Cmd::Explore(a) = cli.cmd else { unreachable!("parsed as explore") };
    if a.runs.is_none() {
        bail!("give the campaign a --runs budget: shards of a run budget merge reproducibly");
    }
    let strategy = weft_explore::Strategy::parse(&a.strategy, a.max_depth).expect("clap checked");
    weft_explore::check_shardable(strategy)?;
    if strategy == weft_explore::Strategy::Coverage && at_once.is_some_and(|m| m < c.shards) {
        bail!(
            "coverage shards wait for each other at every generation, so all {} must run at \
             once: drop --max-running/--parallelism or use --strategy random",
            c.shards
        );
    }
    a.target.spec()?;
    Ok(a)
}

/// `'text'` for a POSIX shell.
fn quote(text: &str) -> String {
    if !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b))
    {
        return text.to_string();
    }
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// A DNS-1123 label from `text` (what Kubernetes requires of a Job name).
fn dns_label(text: &str) -> String {
    let mut s: String = text
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    s.truncate(52); // leaves room for the pod-name suffix Kubernetes adds
    s.trim_matches('-').to_string()
}

fn default_name(a: &ExploreArgs) -> String {
    match &a.target.variant {
        Some(v) => format!("weft-{}-{v}", a.target.target),
        None => format!("weft-{}", a.target.target),
    }
}

fn slurm(s: &SlurmArgs) -> Result<String> {
    let c = &s.common;
    let a = check_campaign(c, s.max_running)?;
    let n = c.shards;
    let name = c.name.clone().unwrap_or_else(|| default_name(&a));
    let results = c.results.display().to_string();
    // Slurm opens each task's log there before the task starts.
    if let Err(e) = std::fs::create_dir_all(&c.results) {
        eprintln!("note: cannot create {results} here ({e}); create it before sbatch");
    }
    let mut text = format!(
        "#!/bin/sh\n# Written by `weft deploy slurm`: {n} shards of `weft explore {}`.\n\
         # Submit: sbatch THIS-FILE; when every task has ended: weft merge {}\n",
        c.explore.join(" "),
        quote(&results)
    );
    let throttle = s.max_running.map(|m| format!("%{m}")).unwrap_or_default();
    text += &format!("#SBATCH --job-name={}\n", quote(&name));
    text += &format!("#SBATCH --array=0-{}{throttle}\n", n - 1);
    text += &format!("#SBATCH --cpus-per-task={}\n", c.jobs);
    text += &format!("#SBATCH --output={}\n", quote(&format!("{results}/slurm-%A_%a.log")));
    if let Some(p) = &s.partition {
        text += &format!("#SBATCH --partition={}\n", quote(p));
    }
    if let Some(t) = &s.time_limit {
        text += &format!("#SBATCH --time={}\n", quote(t));
    }
    let args: Vec<String> = c.explore.iter().map(|x| quote(x)).collect();
    text += &format!(
        "set -eu\nexec {} explore {} --shard \"${{SLURM_ARRAY_TASK_ID:?submit with sbatch}}/{n}\" \
         --jobs {} --out {} --quiet\n",
        quote(&s.weft),
        args.join(" "),
        c.jobs,
        quote(&results)
    );
    Ok(text)
}

fn k8s(k: &K8sArgs) -> Result<String> {
    let c = &k.common;
    let a = check_campaign(c, k.parallelism)?;
    let n = c.shards;
    let parallelism = k.parallelism.unwrap_or(n);
    if parallelism == 0 || parallelism > n {
        bail!("--parallelism must be between 1 and --shards ({n})");
    }
    let name = dns_label(&c.name.clone().unwrap_or_else(|| default_name(&a)));
    if name.is_empty() {
        bail!("--name must contain a letter or digit");
    }
    let results = c.results.display().to_string();
    let mut command = vec![k.weft.clone(), "explore".into()];
    command.extend(c.explore.iter().cloned());
    command.extend([
        "--shard".into(),
        format!("$(JOB_COMPLETION_INDEX)/{n}"),
        "--jobs".into(),
        c.jobs.to_string(),
        "--out".into(),
        results.clone(),
        "--quiet".into(),
    ]);
    let manifest = json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "labels": {"app.kubernetes.io/name": "weft"},
            "annotations": {"weft/campaign": c.explore.join(" "), "weft/merge": format!("weft merge {results}")},
        },
        "spec": {
            "completionMode": "Indexed",
            "completions": n,
            "parallelism": parallelism,
            "backoffLimit": 3,
            "template": {"spec": {
                "restartPolicy": "Never",
                "containers": [{
                    "name": "weft",
                    "image": k.image,
                    "command": command,
                    "env": [{
                        "name": "JOB_COMPLETION_INDEX",
                        "valueFrom": {"fieldRef": {
                            "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"
                        }},
                    }],
                    "resources": {"requests": {"cpu": c.jobs.to_string()}},
                    "volumeMounts": [{"name": "results", "mountPath": results}],
                }],
                "volumes": [{"name": "results", "persistentVolumeClaim": {"claimName": k.claim}}],
            }},
        },
    });
    Ok(serde_json::to_string_pretty(&manifest)? + "\n")
}

pub(crate) fn deploy(a: DeployArgs) -> Result<Code> {
    let (text, common, mode) = match &a.engine {
        Engine::Slurm(s) => (slurm(s)?, &s.common, 0o755),
        Engine::K8s(k) => (k8s(k)?, &k.common, 0o644),
    };
    match &common.output {
        None => print!("{text}"),
        Some(path) => {
            use std::os::unix::fs::PermissionsExt;
            std::fs::write(path, &text)
                .with_context(|| format!("cannot write {}", path.display()))?;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
                .with_context(|| format!("cannot make {} executable", path.display()))?;
            eprintln!("wrote {}", path.display());
        }
    }
    Ok(Code::Ok)
}
