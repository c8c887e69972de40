//! A sharded campaign on a real Slurm: Debian's `slurm-wlm` and `munge` (installed here when
//! missing, as `.ci/run` does), a single-node cluster configured in a temporary folder
//! (munged, slurmctld and slurmd on loopback ports), the job-array script `weft deploy slurm`
//! writes submitted with `sbatch`, the four shards' results merged, and the merged answer
//! compared with the same campaign on one machine: the same first failing run index, the same
//! unshrunk and shrunk repro bytes. Twice on one cluster: random search, then coverage-guided. The daemons are stopped when the test ends, pass or fail.

// Waiting for real daemons and a real job is bounded in wall-clock time.
#![allow(clippy::disallowed_methods)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The acceptance campaign of issue 17 with plain random search (independent shards)…
const RANDOM: [&str; 9] =
    ["chord", "--variant", "original", "-o", "ids=5", "--runs", "400000", "--strategy", "random"];
/// … and as issue 17 states it, with the default strategy, coverage (shards that exchange
/// their corpus at every generation, so all four tasks must run at once: the node has 4 CPUs).
const COVERAGE: [&str; 7] = ["chord", "--variant", "original", "-o", "ids=5", "--runs", "400000"];
const SHARDS: u64 = 4;

fn have(program: &str) -> bool {
    ["/usr/sbin", "/usr/bin", "/sbin", "/bin"].iter().any(|d| Path::new(d).join(program).exists())
}

/// Installs slurm-wlm and munge if they are missing; Err(reason) if that is impossible here.
fn ensure_installed() -> Result<(), String> {
    let needed = ["slurmctld", "slurmd", "sbatch", "munged", "mungekey"];
    if needed.iter().all(|p| have(p)) {
        return Ok(());
    }
    let install = || {
        Command::new("apt-get")
            .args(["install", "-y", "-qq", "--no-install-recommends", "slurm-wlm", "munge"])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    };
    if !install() {
        let _ = Command::new("apt-get").args(["update", "-qq"]).status();
        if !install() {
            return Err("apt-get cannot install slurm-wlm and munge here".into());
        }
    }
    match needed.iter().find(|p| !have(p)) {
        Some(p) => Err(format!("{p} is still missing after installing slurm-wlm and munge")),
        None => Ok(()),
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"))
}

/// The cluster: its daemons (children of this test) and the job submitted to it.
struct Cluster {
    dir: PathBuf,
    conf: PathBuf,
    daemons: Vec<Child>,
    job: Option<String>,
}

impl Cluster {
    fn slurm(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", &self.conf);
        c
    }

    fn start(dir: &Path) -> Cluster {
        let host = String::from_utf8(run(Command::new("hostname").arg("-s")).stdout).unwrap();
        let host = host.trim().to_string();
        for sub in ["state", "spool", "results"] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
        }
        let key = dir.join("munge.key");
        let o = run(Command::new("mungekey").arg("--create").arg("--keyfile").arg(&key));
        assert!(o.status.success(), "mungekey: {}", String::from_utf8_lossy(&o.stderr));
        let socket = dir.join("munge.sock");
        let d = dir.display();
        let conf = format!(
            "ClusterName=weft\nSlurmctldHost={host}(127.0.0.1)\nSlurmUser=root\nSlurmdUser=root\n\
             SlurmctldPort={}\nSlurmdPort={}\nAuthType=auth/munge\nCredType=cred/munge\n\
             AuthInfo=socket={}\nStateSaveLocation={d}/state\nSlurmdSpoolDir={d}/spool\n\
             SlurmctldPidFile={d}/slurmctld.pid\nSlurmdPidFile={d}/slurmd.pid\n\
             ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nSelectType=select/cons_tres\n\
             SelectTypeParameters=CR_CPU\nSchedulerType=sched/builtin\nJobCompType=jobcomp/none\n\
             AccountingStorageType=accounting_storage/none\nJobAcctGatherType=jobacct_gather/none\n\
             MpiDefault=none\nReturnToService=2\nSlurmdParameters=config_overrides\n\
             NodeName={host} NodeAddr=127.0.0.1 CPUs={SHARDS} State=UNKNOWN\n\
             PartitionName=weft Nodes={host} Default=YES MaxTime=INFINITE State=UP\n",
            free_port(),
            free_port(),
            socket.display()
        );
        let path = dir.join("slurm.conf");
        std::fs::write(&path, conf).unwrap();
        let mut cluster = Cluster { dir: dir.into(), conf: path, daemons: Vec::new(), job: None };
        let log = |name: &str| std::fs::File::create(dir.join(name)).unwrap();
        let munged = Command::new("munged")
            .arg("--foreground")
            .arg("--force")
            .arg(format!("--socket={}", socket.display()))
            .arg(format!("--key-file={}", key.display()))
            .arg(format!("--pid-file={d}/munged.pid"))
            .arg(format!("--seed-file={d}/munge.seed"))
            .arg(format!("--log-file={d}/munged.log"))
            .stdout(log("munged.out"))
            .stderr(log("munged.err"))
            .spawn()
            .expect("munged starts");
        cluster.daemons.push(munged);
        wait_until(Duration::from_secs(20), "munged's socket", || socket.exists(), &cluster);
        for daemon in ["slurmctld", "slurmd"] {
            let child = cluster
                .slurm(daemon)
                .arg("-D")
                .arg("-f")
                .arg(&cluster.conf)
                .stdout(log(&format!("{daemon}.out")))
                .stderr(log(&format!("{daemon}.err")))
                .spawn()
                .unwrap_or_else(|e| panic!("{daemon}: {e}"));
            cluster.daemons.push(child);
        }
        let idle = || {
            let o = cluster.slurm("sinfo").args(["-h", "-o", "%T"]).output();
            o.map(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle").unwrap_or(false)
        };
        wait_until(Duration::from_secs(60), "the node to be idle", idle, &cluster);
        cluster
    }

    /// The daemons' logs, for a failure message.
    fn logs(&self) -> String {
        let mut text = String::new();
        let mut names: Vec<PathBuf> = std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .chain(
                ["random", "coverage"]
                    .into_iter()
                    .flat_map(|n| std::fs::read_dir(self.dir.join("results").join(n)))
                    .flatten()
                    .flatten()
                    .map(|e| e.path()),
            )
            .filter(|p| {
                let n = p.to_string_lossy();
                n.ends_with(".out") || n.ends_with(".err") || n.ends_with(".log")
            })
            .collect();
        names.sort();
        for p in names {
            let body = std::fs::read_to_string(&p).unwrap_or_default();
            let tail: Vec<&str> = body.lines().rev().take(15).collect();
            text += &format!("--- {}\n", p.display());
            for l in tail.into_iter().rev() {
                text += l;
                text.push('\n');
            }
        }
        text
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Some(job) = &self.job {
            let _ = self.slurm("scancel").arg(job).status();
        }
        // SIGTERM first (the daemons exit cleanly within a second or two), then SIGKILL.
        for child in self.daemons.iter_mut().rev() {
            let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        for child in self.daemons.iter_mut() {
            while Instant::now() < deadline && matches!(child.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn wait_until(limit: Duration, what: &str, mut done: impl FnMut() -> bool, cluster: &Cluster) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}\n{}", cluster.logs());
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn weft(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_weft")).args(args).output().expect("weft runs")
}

fn summary(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
    })
}

fn repro_bytes(j: &Value, key: &str) -> Vec<u8> {
    std::fs::read(j["violation"][key].as_str().expect(key)).unwrap()
}

#[test]
fn a_slurm_job_array_of_shards_merges_to_the_single_machine_result() {
    if let Err(why) = ensure_installed() {
        assert!(
            option_env!("WEFT_REQUIRE_PACKAGES").is_none(),
            "{why} (.ci/run installs slurm-wlm and munge)"
        );
        eprintln!("skipped: {why}");
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("slurm");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut cluster = Cluster::start(&dir);
    check_array(&mut cluster, &dir, "random", &RANDOM);
    check_array(&mut cluster, &dir, "coverage", &COVERAGE);
}

/// Submits `campaign` as a 4-task array, merges, and compares with `--jobs 2` on one machine.
fn check_array(cluster: &mut Cluster, dir: &Path, name: &str, campaign: &[&str]) {
    let results = dir.join("results").join(name);
    std::fs::create_dir_all(&results).unwrap();
    let script = dir.join(format!("{name}.sh"));
    let shards = SHARDS.to_string();
    let mut args = vec!["deploy", "slurm", "--shards", &shards, "--results"];
    args.extend([results.to_str().unwrap(), "--weft", env!("CARGO_BIN_EXE_weft"), "-o"]);
    args.extend([script.to_str().unwrap(), "--"]);
    args.extend(campaign);
    let o = weft(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run(cluster.slurm("sbatch").arg("--parsable").arg(&script));
    assert!(
        o.status.success(),
        "sbatch: {}\n{}",
        String::from_utf8_lossy(&o.stderr),
        cluster.logs()
    );
    let job = String::from_utf8(o.stdout).unwrap().trim().to_string();
    cluster.job = Some(job.clone());
    let ended = || {
        let o = cluster.slurm("squeue").args(["-h", "-j", &job]).output().unwrap();
        o.status.success() && o.stdout.is_empty()
    };
    wait_until(Duration::from_secs(600), "the job array to end", ended, cluster);
    cluster.job = None;
    let merged_out = dir.join(format!("merged-{name}"));
    let o = weft(&[
        "merge",
        results.to_str().unwrap(),
        "--json",
        "--quiet",
        "--out",
        merged_out.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "merge: {}\n{}",
        String::from_utf8_lossy(&o.stderr),
        cluster.logs()
    );
    let merged = summary(&o);
    let one_out = dir.join(format!("one-{name}"));
    let mut single = vec!["explore"];
    single.extend(campaign);
    single.extend(["--jobs", "2", "--json", "--quiet", "--out", one_out.to_str().unwrap()]);
    let o = weft(&single);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let one = summary(&o);
    assert_eq!(merged["merged"]["shards"], SHARDS);
    assert_eq!((&merged["strategy"], &one["strategy"]), (&name.into(), &name.into()));
    for key in ["run_index", "kind", "detail", "before", "after"] {
        assert_eq!(merged["violation"][key], one["violation"][key], "{name}: {key}");
    }
    assert_eq!(repro_bytes(&merged, "repro"), repro_bytes(&one, "repro"), "{name}");
    assert_eq!(repro_bytes(&merged, "shrunk_repro"), repro_bytes(&one, "shrunk_repro"), "{name}");
    // Every task ran as its own shard under Slurm.
    for k in 0..SHARDS {
        let log = std::fs::read_to_string(results.join(format!("slurm-{job}_{k}.log"))).unwrap();
        assert!(log.contains(&format!("shard {k}/{SHARDS}: run indices")), "{log}");
    }
}
