//! The `process` target at the CLI edge: a spec resolved into what a repro records (every
//! program by absolute path and content hash, working directories under the campaign's output
//! folder), and the rule that opening a repro never runs a program the user did not name:
//! the programs are listed, and run only with `--allow-exec` or `--allow-program PATH`.

use anyhow::{bail, Result};
use clap::Args;
use std::path::{Path, PathBuf};
use weft_core::RunSpec;
use weft_report::Repro;

#[derive(Args, Clone, Debug, Default)]
pub struct ExecArgs {
    /// Run the programs a `process` repro names (weft lists them, with their hashes and
    /// arguments, first). Without it, or --allow-program, such a repro is refused.
    #[arg(long)]
    allow_exec: bool,
    /// Run this program if the repro names it (repeatable: every program the repro names must
    /// be allowed).
    #[arg(long, value_name = "PATH")]
    allow_program: Vec<PathBuf>,
}

/// An absolute form of `path` (relative to the current directory).
fn absolute(path: &Path) -> Result<PathBuf> {
    Ok(std::path::absolute(path)?)
}

/// For the `process` target: `spec` as a repro records it (see
/// [`weft_host::ProcessTarget::resolve`]), its working directories under `out/work`. Other
/// targets' specs are returned as they are.
pub fn resolve(mut spec: RunSpec, out: &Path) -> Result<RunSpec> {
    if spec.target != "process" {
        return Ok(spec);
    }
    if !spec.options.contains_key("work_dir") {
        let work = absolute(out)?.join("work");
        spec.options.insert("work_dir".into(), work.display().to_string());
    }
    Ok(weft_host::ProcessTarget.resolve(&spec)?)
}

/// One program a repro would run (or load: the shim): group, path, recorded hash, arguments,
/// environment.
struct Named {
    group: String,
    program: PathBuf,
    hash: Option<u64>,
    args: Vec<String>,
    env: Vec<(String, String)>,
}

impl Named {
    /// Whether naming the program allows it: not when its environment asks the dynamic
    /// loader to load more code (`LD_*`), which only --allow-exec accepts.
    fn nameable(&self) -> bool {
        !self.env.iter().any(|(k, _)| k.starts_with("LD_"))
    }
}

fn named(spec: &RunSpec) -> Result<Vec<Named>> {
    let opt = |k: &str| spec.options.get(k).map(String::as_str).unwrap_or("");
    let mut named = Vec::new();
    if !opt("shim").is_empty() {
        let (program, args, env) = (opt("shim").into(), Vec::new(), Vec::new());
        named.push(Named { group: "shim".into(), program, hash: None, args, env });
    }
    if !opt("cluster_json").is_empty() {
        let cluster =
            weft_host::Cluster::from_json(opt("cluster_json")).map_err(anyhow::Error::msg)?;
        named.extend(cluster.groups.into_iter().map(|g| Named {
            group: g.name,
            program: g.program,
            hash: g.program_hash,
            args: g.args,
            env: g.env.into_iter().collect(),
        }));
        return Ok(named);
    }
    if !opt("cluster").is_empty() {
        bail!(
            "the repro names a cluster file ({}) instead of recording the cluster",
            opt("cluster")
        );
    }
    named.push(Named {
        group: "node".into(),
        program: opt("program").into(),
        hash: None,
        args: weft_host::split_args(opt("args")),
        env: Vec::new(),
    });
    Ok(named)
}

/// Reads the repro at `path`. A `process` repro's programs are listed on stdout and must be
/// allowed by `exec`; its working directories go under the repro's folder (`work/`).
pub fn open_repro(path: &Path, exec: &ExecArgs) -> Result<Repro> {
    let mut repro = Repro::read(path)?;
    if repro.spec.target != "process" {
        return Ok(repro);
    }
    let programs = named(&repro.spec)?;
    println!("{} runs {} program(s):", path.display(), programs.len());
    for n in &programs {
        let hash = n.hash.map(|h| format!("{h:016x}")).unwrap_or_else(|| "not recorded".into());
        println!("  {}: {} (hash {hash}) args {:?}", n.group, n.program.display(), n.args);
        if !n.env.is_empty() {
            println!("    env {:?}", n.env);
        }
    }
    let allowed: Vec<PathBuf> =
        exec.allow_program.iter().filter_map(|p| p.canonicalize().ok()).collect();
    let unnamed: Vec<String> = programs
        .iter()
        .filter(|n| !(exec.allow_exec || n.nameable() && allowed.contains(&n.program)))
        .map(|n| n.program.display().to_string())
        .collect();
    if !unnamed.is_empty() {
        bail!(
            "not running {} named by the repro: pass --allow-exec to run the programs listed \
             above, or --allow-program PATH for each",
            unnamed.join(", ")
        );
    }
    let folder = absolute(path)?.parent().map(Path::to_path_buf).unwrap_or_default();
    let work = folder.join("work");
    repro.spec.options.insert("work_dir".into(), work.display().to_string());
    Ok(repro)
}
