//! Sharded campaigns through the `weft` binary: `explore --shard K/N` for every K, then
//! `weft merge`, reports what one machine reports (the same violation, run index, counts and
//! shrunk repro bytes); bad, missing, duplicate and mismatched shard files are one-line errors
//! (exit 2); coverage-guided shards, run at once, exchange their corpus and merge to one
//! machine's answer, and a missing shard is named after `--sync-timeout`, never waited for
//! forever; exhaustive search refuses `--shard`; `weft deploy k8s` writes an Indexed Job
//! with the fields the API requires, whose command, run once per index, merges to the same
//! result.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn weft(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_weft")).args(args).output().expect("weft runs")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("shard").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `weft explore` with `campaign` and `extra`, `--json --quiet`; (exit code, summary).
fn explore(campaign: &[&str], extra: &[&str]) -> (i32, Value) {
    let mut args = vec!["explore"];
    args.extend_from_slice(campaign);
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--json", "--quiet"]);
    let o = weft(&args);
    // An input error prints no summary: Null, and the caller looks at the code.
    let json = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (code(&o), json)
}

/// Runs all `n` shards of `campaign` into `results` (one thread each).
fn run_shards(campaign: &[&str], n: u64, results: &Path) {
    for k in 0..n {
        let shard = format!("{k}/{n}");
        let (c, j) = explore(campaign, &["--shard", &shard, "--jobs", "1", "--out", s(results)]);
        assert_eq!(c, 0, "shard {shard}: {j}");
    }
}

fn merge(paths: &[&Path], out: &Path) -> (i32, Value, String) {
    let mut args = vec!["merge", "--json", "--quiet", "--out", s(out)];
    args.extend(paths.iter().map(|p| s(p)));
    let o = weft(&args);
    let json = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (code(&o), json, stderr(&o))
}

/// The fields of an explore summary that do not depend on threads, shards or the machine.
fn answer(j: &Value) -> Value {
    let v = &j["violation"];
    serde_json::json!({
        "exit": j["exit_code"], "runs": j["runs"], "events": j["events"],
        "outcomes": j["outcomes"], "features": j["features"], "vacuous": j["vacuous"],
        "kind": v["kind"], "detail": v["detail"], "run_index": v["run_index"],
        "before": v["before"], "after": v["after"], "shrink_runs": v["shrink_runs"],
    })
}

fn bytes(j: &Value, key: &str) -> Vec<u8> {
    std::fs::read(j["violation"][key].as_str().unwrap()).unwrap()
}

/// Shards, merged, against `--jobs 1` (every count) and `--jobs 2` (the violation).
fn check_merge_equals_one_machine(name: &str, campaign: &[&str], n: u64) {
    let d = dir(name);
    let results = d.join("results");
    run_shards(campaign, n, &results);
    check_early_stops(&results, n);
    let (mc, merged, err) = merge(&[&results], &d.join("merged"));
    let (c1, one) = explore(campaign, &["--jobs", "1", "--out", s(&d.join("one"))]);
    let (c2, two) = explore(campaign, &["--jobs", "2", "--out", s(&d.join("two"))]);
    assert_eq!((mc, c1, c2), (1, 1, 1), "{err}");
    assert_eq!(answer(&merged), answer(&one), "merged vs --jobs 1");
    assert_eq!(merged["violation"]["run_index"], two["violation"]["run_index"]);
    assert_eq!(merged["merged"]["shards"], n);
    assert_eq!(merged["merged"]["reproducible"], true);
    for key in ["repro", "shrunk_repro"] {
        assert_eq!(bytes(&merged, key), bytes(&one, key), "{key} bytes");
        assert_eq!(bytes(&merged, key), bytes(&two, key), "{key} bytes");
    }
}

/// Shards run one after another: each must stop before runs above a failure an earlier shard
/// published in the folder (`found-…idx`), since they cannot be the answer.
fn check_early_stops(results: &Path, n: u64) {
    let mut known = u64::MAX;
    for k in 0..n {
        let f: Value = serde_json::from_slice(
            &std::fs::read(results.join(format!("shard-{k}-of-{n}.json"))).unwrap(),
        )
        .unwrap();
        let runs = f["runs"].as_u64().unwrap();
        if known != u64::MAX {
            // Indices k, k+n, … at or below `known`.
            let allowed = if known < k { 0 } else { (known - k) / n + 1 };
            assert!(runs <= allowed, "shard {k}/{n} made {runs} runs, known failure {known}");
        }
        if let Some(i) = f["first_failure"]["run_index"].as_u64() {
            known = known.min(i);
        }
    }
    assert!(known < u64::MAX, "the campaign fails");
    let published = std::fs::read_dir(results)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("found-"))
        .count();
    assert!(published >= 1);
}

const PB: [&str; 8] =
    ["primary-backup", "--variant", "buggy", "--seed", "3", "--runs", "3000", "--strategy"];

#[test]
fn random_shards_merge_to_the_single_machine_result() {
    let campaign: Vec<&str> = PB.iter().copied().chain(["random"]).collect();
    check_merge_equals_one_machine("random", &campaign, 4);
}

#[test]
fn swarm_shards_merge_to_the_single_machine_result() {
    let campaign: Vec<&str> = PB.iter().copied().chain(["swarm"]).collect();
    check_merge_equals_one_machine("swarm", &campaign, 3);
}

#[test]
fn a_passing_campaign_merges_to_the_same_counts() {
    let campaign =
        ["primary-backup", "--variant", "fixed", "--runs", "300", "--strategy", "random"];
    let d = dir("passing");
    run_shards(&campaign, 4, &d.join("results"));
    let (mc, merged, err) = merge(&[&d.join("results")], &d.join("merged"));
    let (c1, one) = explore(&campaign, &["--jobs", "2", "--out", s(&d.join("one"))]);
    assert_eq!((mc, c1), (0, 0), "{err}");
    assert_eq!(answer(&merged), answer(&one));
    assert_eq!(merged["runs"], 300);
}

/// A `--time` campaign on shards merges, and says it is not reproducible run for run.
#[test]
fn time_budgeted_shards_merge_but_are_not_reproducible() {
    let d = dir("time");
    let results = d.join("results");
    for k in 0..2 {
        let shard = format!("{k}/2");
        let args = ["--time", "300ms", "--shard", &shard, "--out", s(&results)];
        let (c, _) =
            explore(&["primary-backup", "--variant", "fixed", "--strategy", "random"], &args);
        assert_eq!(c, 0);
    }
    let (c, merged, err) = merge(&[&results], &d.join("merged"));
    assert_eq!(c, 0, "{err}");
    assert_eq!(merged["merged"]["reproducible"], false);
    assert!(err.contains("not reproducible run for run"), "{err}");
    assert!(merged["runs"].as_u64().unwrap() > 0);
}

/// Bad shard sets: each a one-line error, exit 2, naming what is wrong.
#[test]
fn bad_missing_duplicate_and_mismatched_shards_are_refused() {
    let campaign = ["primary-backup", "--variant", "fixed", "--runs", "40", "--strategy", "random"];
    let d = dir("bad");
    let (a, b) = (d.join("a"), d.join("b"));
    run_shards(&campaign, 2, &a);
    // The same campaign with another seed, shard 1 of 2.
    let other: Vec<&str> = campaign.iter().copied().chain(["--seed", "9"]).collect();
    let (c, _) = explore(&other, &["--shard", "1/2", "--out", s(&b)]);
    assert_eq!(c, 0);
    let refused = |paths: &[&Path], needle: &str| {
        let (c, _, err) = merge(paths, &d.join("m"));
        assert_eq!(c, 2, "{needle}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(needle), "wanted `{needle}` in: {err}");
    };
    let (s0, s1) = (a.join("shard-0-of-2.json"), a.join("shard-1-of-2.json"));
    refused(&[&s0], "missing 1 of 2 shards: 1/2");
    refused(&[&s0, &b.join("shard-1-of-2.json")], "different campaign");
    refused(&[&s0, &s1, &s1], "both are shard 1/2");
    let copy = d.join("shard-copy.json");
    std::fs::copy(&s1, &copy).unwrap();
    refused(&[&a, &copy], "both are shard 1/2");
    let garbage = d.join("garbage.json");
    std::fs::write(&garbage, b"{\"format\": \"weft-shard\", \"format_version\": 1}").unwrap();
    refused(&[&s0, &garbage], "malformed shard result file");
    std::fs::write(&garbage, b"not json").unwrap();
    refused(&[&garbage], "not a weft shard result file");
    refused(&[&d.join("nowhere")], "no such file or folder");
    // A ledger cut short (a hand-edited file) is caught, not miscounted.
    let mut j: Value = serde_json::from_slice(&std::fs::read(&s1).unwrap()).unwrap();
    j["ledger"]["events"].as_array_mut().unwrap().pop();
    std::fs::write(&garbage, serde_json::to_vec(&j).unwrap()).unwrap();
    refused(&[&s0, &garbage], "inconsistent");
    // The good set still merges.
    assert_eq!(merge(&[&a], &d.join("m")).0, 0);
}

/// Starts shards `ks` of `n` of `campaign` at once (coverage shards wait for each other);
/// their outputs, in order.
fn start_shards(
    campaign: &[&str],
    ks: &[u64],
    n: u64,
    results: &Path,
    extra: &[&str],
) -> Vec<Output> {
    let children: Vec<_> = ks
        .iter()
        .map(|k| {
            Command::new(env!("CARGO_BIN_EXE_weft"))
                .arg("explore")
                .args(campaign)
                .args(["--shard", &format!("{k}/{n}"), "--jobs", "1", "--quiet"])
                .args(["--out", s(results)])
                .args(extra)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("weft starts")
        })
        .collect();
    children.into_iter().map(|c| c.wait_with_output().expect("shard ends")).collect()
}

/// Coverage shards run at once, merged, against one machine with `--jobs 2`: the same
/// violation, run index, counts and repro bytes (unshrunk and shrunk).
fn check_coverage_merge(name: &str, campaign: &[&str], n: u64) -> Value {
    let d = dir(name);
    let results = d.join("results");
    for (k, o) in start_shards(campaign, &Vec::from_iter(0..n), n, &results, &[]).iter().enumerate()
    {
        assert_eq!(code(o), 0, "shard {k}/{n}: {}", stderr(o));
    }
    let (mc, merged, err) = merge(&[&results], &d.join("merged"));
    let (c2, two) = explore(campaign, &["--jobs", "2", "--out", s(&d.join("two"))]);
    assert_eq!((mc, c2), (1, 1), "{err}");
    assert_eq!(merged["strategy"], "coverage");
    assert_eq!(answer(&merged), answer(&two), "merged vs --jobs 2");
    for key in ["repro", "shrunk_repro"] {
        assert_eq!(bytes(&merged, key), bytes(&two, key), "{key} bytes");
    }
    merged
}

/// Issue 17's acceptance command, with its default strategy (coverage): chord's violation is
/// at run 3501, after 27 generations of exchanged corpus.
#[test]
fn coverage_shards_merge_to_the_single_machine_result() {
    let chord = ["chord", "--variant", "original", "-o", "ids=5", "--runs", "400000"];
    let merged = check_coverage_merge("coverage-chord", &chord, 4);
    assert!(merged["violation"]["run_index"].as_u64().unwrap() > 1000, "{merged}");
    let pb = ["primary-backup", "--variant", "buggy", "--runs", "400000"];
    check_coverage_merge("coverage-pb", &pb, 3);
}

/// A shard that never comes is named when the wait times out (exit 2), and a shard that gave
/// up tells the others, which stop at once instead of waiting out their own (long) timeout.
#[test]
fn a_missing_coverage_shard_is_named_not_waited_for_forever() {
    let d = dir("coverage-missing");
    let campaign = ["chord", "--variant", "corrected", "--runs", "100000"];
    let results = d.join("results");
    let outs = std::thread::scope(|scope| {
        let quick =
            scope.spawn(|| start_shards(&campaign, &[0], 3, &results, &["--sync-timeout", "1s"]));
        let patient =
            scope.spawn(|| start_shards(&campaign, &[1], 3, &results, &["--sync-timeout", "120s"]));
        [quick.join().unwrap().remove(0), patient.join().unwrap().remove(0)]
    });
    assert_eq!(code(&outs[0]), 2, "{}", stderr(&outs[0]));
    assert!(
        stderr(&outs[0]).contains("for shard 2/3 to finish generation 0"),
        "{}",
        stderr(&outs[0])
    );
    assert!(stderr(&outs[0]).contains("died, hangs or never started"), "{}", stderr(&outs[0]));
    assert_eq!(code(&outs[1]), 2, "{}", stderr(&outs[1]));
    assert!(stderr(&outs[1]).contains("shard 0/3 gave up: "), "{}", stderr(&outs[1]));
    assert!(!results.join("shard-0-of-3.json").exists(), "no result file for a failed shard");
}

/// A coverage shard killed mid-campaign (SIGKILL: no abort file) is named by the other one
/// after `--sync-timeout`, which then exits 2 without a result file.
#[test]
fn a_coverage_shard_that_dies_is_reported() {
    let d = dir("coverage-killed");
    let results = d.join("results");
    let spawn = |k: u64| {
        Command::new(env!("CARGO_BIN_EXE_weft"))
            .args(["explore", "chord", "--variant", "corrected", "--runs", "10000000"])
            .args(["--shard", &format!("{k}/2"), "--jobs", "1", "--quiet", "--sync-timeout", "2s"])
            .args(["--out", s(&results)])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("weft starts")
    };
    let (survivor, mut victim) = (spawn(0), spawn(1));
    // Kill shard 1 once the campaign is a few generations in.
    let past_generation_3 = || {
        let Ok(sync) = std::fs::read_dir(&results) else { return false };
        let dirs = sync.flatten().filter(|e| e.file_name().to_string_lossy().starts_with("sync-"));
        dirs.flat_map(|e| std::fs::read_dir(e.path()).into_iter().flatten().flatten()).any(|f| {
            let name = f.file_name().to_string_lossy().into_owned();
            let g =
                name.strip_prefix("gen-").and_then(|r| r.split('-').next()?.parse::<u64>().ok());
            g.is_some_and(|g| g >= 3)
        })
    };
    for _ in 0..6000 {
        if past_generation_3() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(past_generation_3(), "the shards never got going");
    victim.kill().expect("kill shard 1");
    let _ = victim.wait();
    let o = survivor.wait_with_output().expect("shard 0 ends");
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("waited 2s for shard 1/2 to finish generation"), "{}", stderr(&o));
    assert!(!results.join("shard-0-of-2.json").exists());
}

#[test]
fn exhaustive_refuses_shard_and_a_shard_never_runs_twice() {
    let d = dir("refuse");
    let o = weft(&[
        "explore",
        "chord",
        "--runs",
        "10",
        "--strategy",
        "exhaustive",
        "--shard",
        "0/2",
        "--out",
        s(&d),
    ]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--shard needs --strategy random, swarm or coverage"),
        "{}",
        stderr(&o)
    );
    let o = weft(&["explore", "chord", "--strategy", "random", "--shard", "2/2"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    // A retried shard whose complete result is there does nothing (and says so).
    let campaign = ["primary-backup", "--variant", "fixed", "--runs", "20", "--strategy", "random"];
    run_shards(&campaign, 1, &d);
    let before = std::fs::read(d.join("shard-0-of-1.json")).unwrap();
    let (c, _) = explore(&campaign, &["--shard", "0/1", "--out", s(&d)]);
    assert_eq!(c, 0);
    assert_eq!(std::fs::read(d.join("shard-0-of-1.json")).unwrap(), before);
    // Another campaign's shard in the same folder is refused, not overwritten.
    let (c, _) = explore(&campaign, &["--seed", "5", "--shard", "0/1", "--out", s(&d)]);
    assert_eq!(c, 2);
    assert_eq!(std::fs::read(d.join("shard-0-of-1.json")).unwrap(), before);
}

/// What the Kubernetes Job API requires of an Indexed Job (batch/v1): completionMode Indexed,
/// completions set, parallelism within it, restartPolicy Never or OnFailure, a DNS-1123 name,
/// a container with an image; and what weft needs: the index reaching `--shard` through an
/// env var the command can expand, and the results folder on a mounted volume.
#[test]
fn k8s_manifest_is_an_indexed_job_whose_commands_merge_to_the_campaign() {
    let d = dir("k8s");
    let results = d.join("results");
    let campaign = PB.iter().copied().chain(["random"]);
    let mut args = vec![
        "deploy",
        "k8s",
        "--shards",
        "3",
        "--results",
        s(&results),
        "--image",
        "registry.example/weft:1",
        "--claim",
        "weft-results",
        "--",
    ];
    args.extend(campaign.clone());
    let o = weft(&args);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let m: Value = serde_json::from_slice(&o.stdout).expect("the manifest is JSON");
    assert_eq!(m["apiVersion"], "batch/v1");
    assert_eq!(m["kind"], "Job");
    let name = m["metadata"]["name"].as_str().unwrap();
    assert!(name.len() <= 63 && !name.starts_with('-') && !name.ends_with('-'), "{name}");
    assert!(name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'));
    let spec = &m["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    assert_eq!(spec["completions"], 3);
    let parallelism = spec["parallelism"].as_u64().unwrap();
    assert!((1..=3).contains(&parallelism));
    let pod = &spec["template"]["spec"];
    assert!(["Never", "OnFailure"].contains(&pod["restartPolicy"].as_str().unwrap()));
    let c = &pod["containers"][0];
    assert_eq!(c["image"], "registry.example/weft:1");
    let cname = c["name"].as_str().expect("a container needs a name");
    assert!(!cname.is_empty() && cname.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'));
    let env = &c["env"][0];
    assert_eq!(env["name"], "JOB_COMPLETION_INDEX");
    assert_eq!(
        env["valueFrom"]["fieldRef"]["fieldPath"],
        "metadata.annotations['batch.kubernetes.io/job-completion-index']"
    );
    let mount = &c["volumeMounts"][0];
    assert_eq!(mount["mountPath"], s(&results));
    let volume = pod["volumes"].as_array().unwrap().iter().find(|v| v["name"] == mount["name"]);
    assert_eq!(volume.unwrap()["persistentVolumeClaim"]["claimName"], "weft-results");
    // Run each index's command as the kubelet would: $(JOB_COMPLETION_INDEX) expanded.
    let command: Vec<String> =
        c["command"].as_array().unwrap().iter().map(|a| a.as_str().unwrap().into()).collect();
    assert!(command.iter().any(|a| a == "$(JOB_COMPLETION_INDEX)/3"), "{command:?}");
    for index in 0..3 {
        let argv: Vec<String> = command
            .iter()
            .map(|a| a.replace("$(JOB_COMPLETION_INDEX)", &index.to_string()))
            .collect();
        assert_eq!(argv[0], "weft");
        let o = Command::new(env!("CARGO_BIN_EXE_weft")).args(&argv[1..]).output().unwrap();
        assert_eq!(code(&o), 0, "{argv:?}: {}", stderr(&o));
    }
    let (mc, merged, err) = merge(&[&results], &d.join("merged"));
    let single: Vec<&str> = PB.iter().copied().chain(["random"]).collect();
    let (c1, one) = explore(&single, &["--jobs", "1", "--out", s(&d.join("one"))]);
    assert_eq!((mc, c1), (1, 1), "{err}");
    assert_eq!(answer(&merged), answer(&one));
    // The campaign is checked before anything is written.
    let bad = weft(&[
        "deploy",
        "k8s",
        "--shards",
        "2",
        "--results",
        "/r",
        "--image",
        "i",
        "--claim",
        "c",
        "--parallelism",
        "1",
        "--",
        "chord",
        "--strategy",
        "coverage",
        "--runs",
        "5",
    ]);
    assert_eq!(code(&bad), 2);
    assert!(stderr(&bad).contains("all 2 must run at once"), "{}", stderr(&bad));
}

#[test]
fn slurm_script_is_a_job_array_over_the_shards() {
    let d = dir("slurm-script");
    let o = weft(&[
        "deploy",
        "slurm",
        "--shards",
        "5",
        "--results",
        s(&d),
        "--jobs",
        "2",
        "--weft",
        "/opt/weft",
        "--max-running",
        "3",
        "--",
        "chord",
        "--variant",
        "original",
        "-o",
        "ids=5",
        "--runs",
        "1000",
        "--strategy",
        "random",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let script = String::from_utf8(o.stdout).unwrap();
    assert!(script.starts_with("#!/bin/sh\n"));
    assert!(script.contains("#SBATCH --array=0-4%3\n"), "{script}");
    assert!(script.contains("#SBATCH --cpus-per-task=2\n"), "{script}");
    assert!(script.contains("--shard \"${SLURM_ARRAY_TASK_ID:?submit with sbatch}/5\""));
    assert!(script.contains("exec /opt/weft explore chord --variant original -o ids=5"));
    for own in ["--out", "--time", "--shard"] {
        let o = weft(&[
            "deploy",
            "slurm",
            "--shards",
            "2",
            "--results",
            "/r",
            "--",
            "chord",
            "--strategy",
            "random",
            "--runs",
            "9",
            own,
            "x",
        ]);
        assert_eq!(code(&o), 2, "{own}");
    }
}
