//! Hostile repro files, many of them: valid repros of five targets mutated by every class of
//! damage issue 13's probe used (truncation, byte flips, deleted and duplicated fields, wrong
//! types, extreme numbers, unicode, deep nesting, decision strings, scenario and spec
//! semantics), each read and run the way `weft replay`, `weft show` and `weft shrink` do.
//!
//! 10,500 inputs go through the library calls the CLI makes (read, registry, spec check,
//! prepare, replay / record-and-render / shrink), in process for speed; 96 more go through the
//! real binary under a memory limit. Every input must end the way the CLI's exits 0-4 do: a
//! rejected input or a finished run. A panic (the CLI's exit 70), a binary exit outside 0-4 or
//! a signal, an input that takes longer than its time bound or a memory high-water mark above
//! its bound fails the test, and the input is saved under `CARGO_TARGET_TMPDIR/fuzz-failures/`.
//! The generator is weft's own seeded `Rng`: the same inputs on every run.

#[path = "../src/registry.rs"]
#[allow(dead_code)]
mod registry;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;
use weft_core::{derive_seed, Rng, RunSpec};
use weft_explore::{CampaignOptions, Quiet, ShrinkOptions, Strategy};
use weft_report::{Provenance, Repro};

const SEED: u64 = 13;
const IN_PROCESS: u64 = 10_500;
const THROUGH_BINARY: u64 = 96;
/// A hang detector, not a speed target: a legal input can ask for a long run, none this long.
const INPUT_TIME_BOUND: Duration = Duration::from_secs(60);
/// High-water mark of this test process's resident memory.
const MEMORY_BOUND_KB: u64 = 2 << 20;
/// Address-space limit of each binary run (`ulimit -v`, KB).
const BINARY_VM_LIMIT_KB: u64 = 4 << 20;

fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A repro of run `index` of a campaign over `spec`, failing or not.
fn repro_of(spec: RunSpec, index: u64) -> Repro {
    let target = registry::find(&spec.target).unwrap();
    let runner = target.prepare(&spec).unwrap();
    let opts = CampaignOptions {
        seed: 1,
        runs: Some(1),
        jobs: 1,
        strategy: Strategy::Random,
        scenario: runner.default_scenario(),
    };
    let (found, _) = weft_explore::run_one(runner.as_ref(), &opts, index);
    Repro {
        format: weft_report::FORMAT.into(),
        format_version: weft_report::FORMAT_VERSION,
        weft_version: weft_core::VERSION.into(),
        spec,
        scenario: found.scenario,
        seed: found.seed,
        provenance: Provenance {
            campaign_seed: 1,
            run_index: index,
            strategy: "random".into(),
            shrunk_from: None,
        },
        decisions: found.decisions,
        outcome: found.report.outcome,
        trace_hash: found.report.trace_hash,
        events: found.report.events,
        faults: found.report.faults,
    }
}

/// The first failing run of `spec` within 5000, as a repro.
fn failing(spec: RunSpec) -> Repro {
    (0..5000).map(|i| repro_of(spec.clone(), i)).find(|r| r.outcome.is_failure()).unwrap()
}

fn spec(target: &str, variant: &str, options: &[(&str, &str)]) -> RunSpec {
    RunSpec {
        target: target.into(),
        variant: variant.into(),
        options: options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        property: None,
    }
}

/// Valid starting points, with a weight each: fast targets often, the two libraries rarely.
fn seeds() -> Vec<(u64, Value)> {
    let file = |p: &str| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(p);
        serde_json::from_str::<Value>(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let v = |r: Repro| serde_json::from_str::<Value>(&r.to_json()).unwrap();
    let chord = spec("chord", "literal", &[("ids", "4"), ("swarm", "false")]);
    vec![
        (30, file("tests/golden/primary-backup-buggy.json")),
        (10, v(repro_of(spec("primary-backup", "fixed", &[("writes", "5")]), 3))),
        (20, v(failing(chord.clone()))),
        (5, v(repro_of(chord, 1))),
        (15, v(failing(spec("wal-ack", "buggy", &[])))),
        (5, v(repro_of(spec("torn-log", "fixed", &[]), 2))),
        (3, file("../../targets/omnipaxos/tests/counterexamples/0.2.0-accept-sync-suffix-offset.json")),
        (3, file("../../targets/raft-rs/tests/counterexamples/0.4.1-transfer-with-unapplied-conf-changes.json")),
    ]
}

fn pick<'a, T>(rng: &mut Rng, items: &'a [T]) -> &'a T {
    &items[rng.below(items.len() as u64) as usize]
}

/// Paths to every node of `v` (keys and indices), the root excluded.
fn paths(v: &Value, prefix: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    let children: Vec<(Value, &Value)> = match v {
        Value::Object(m) => m.iter().map(|(k, c)| (json!(k), c)).collect(),
        Value::Array(a) if a.len() <= 64 => {
            a.iter().enumerate().map(|(i, c)| (json!(i), c)).collect()
        }
        _ => Vec::new(),
    };
    for (seg, child) in children {
        prefix.push(seg);
        out.push(prefix.clone());
        paths(child, prefix, out);
        prefix.pop();
    }
}

/// The node at `path` (which [`paths`] found in `v`).
fn at<'a>(v: &'a mut Value, path: &[Value]) -> &'a mut Value {
    path.iter().fold(v, |node, seg| match seg {
        Value::String(k) => &mut node[k.as_str()],
        Value::Number(i) => &mut node[i.as_u64().unwrap() as usize],
        _ => unreachable!(),
    })
}

fn random_path(rng: &mut Rng, v: &Value) -> Vec<Value> {
    let mut all = Vec::new();
    paths(v, &mut Vec::new(), &mut all);
    pick(rng, &all).clone()
}

const EXTREMES: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775808",
    "1e308",
    "-1e308",
    "1.5",
    "1e-300",
    "100000",
    "100001",
    "1000000",
    "1000001",
    "3600000000000",
    "3600000000001",
    "1048576",
    "1048577",
    "99999999999",
];

const UNICODE: &[&str] = &[
    "\u{202e}kcab",
    "👻🔥",
    "a\u{0}b",
    "line\nbreak\r\n",
    "\u{301}\u{301}\u{301}",
    "\u{feff}",
    "\u{1b}[2J",
    "ünïcödé",
    "\\",
    "\"",
    "",
    " ",
    "\t",
    "\u{10ffff}",
];

const DECISION_STRINGS: &[&str] = &[
    "",
    " ",
    "0",
    "1 2 3",
    "0*99999999999",
    "5*0",
    "*",
    "1**2",
    "-1",
    "18446744073709551615",
    "18446744073709551616",
    "0*10000000",
    "0*10000001",
    "1e5",
    "0x10",
    "0*3 *4",
    "3*",
    "7*1*2",
    "\u{661}",
    "0*5000000 0*5000001",
    "99*100000",
];

fn wrong_type(rng: &mut Rng) -> Value {
    pick(
        rng,
        &[
            json!(null),
            json!(true),
            json!(0),
            json!(-7),
            json!(1.25),
            json!("text"),
            json!([]),
            json!({}),
            json!([1, "a", null]),
            json!({"num": 1, "den": 0}),
        ],
    )
    .clone()
}

fn extreme(rng: &mut Rng) -> Value {
    let text = *pick(rng, EXTREMES);
    serde_json::from_str(text).unwrap_or_else(|_| json!(text))
}

/// Sets the field at `path`, turning whatever is in the way into an object.
fn set(v: &mut Value, path: &[&str], new: Value) {
    let mut node = v;
    for key in path {
        if !node.is_object() {
            *node = json!({});
        }
        node = node.as_object_mut().unwrap().entry(key.to_string()).or_insert(Value::Null);
    }
    *node = new;
}

/// Scenario fields that the kernel relies on, set to values that break or stretch them.
fn scenario_semantics(rng: &mut Rng, v: &mut Value) {
    let rate = *pick(rng, &["drop", "duplicate", "delay", "crash", "pause", "partition"]);
    let latency_max = v["scenario"]["latency_max"].as_u64().unwrap_or(0);
    match rng.below(9) {
        0 => set(v, &["scenario", "rates", rate, "den"], json!(0)),
        1 => set(v, &["scenario", "rates", rate], json!({"num": 9, "den": 3})),
        2 => set(v, &["scenario", "latency_min"], json!(latency_max.saturating_add(1))),
        3 => set(v, &["scenario", "disk"], json!({"block_size": 0})),
        4 => set(v, &["scenario", "max_events"], extreme(rng)),
        5 => {
            let field = *pick(rng, &["fault_phase", "heal_phase", "outage_max", "delay_max"]);
            set(v, &["scenario", field], extreme(rng))
        }
        6 => {
            let field = *pick(rng, &["crashes", "drops", "partitions"]);
            set(v, &["scenario", "budget", field], extreme(rng))
        }
        7 => {
            let contract = *pick(rng, &["posix", "fsync", "nope", ""]);
            let disk = json!({"contract": contract, "eio": {"num": 1, "den": 2}, "budget": 3});
            set(v, &["scenario", "disk"], disk)
        }
        _ => set(v, &["scenario", "disk", "audit"], json!(pick(rng, &["posix", "durable", "x"]))),
    }
}

/// Spec fields: options out of their range or unknown, other targets, variants, properties.
fn spec_semantics(rng: &mut Rng, v: &mut Value) {
    let option = *pick(
        rng,
        &["writes", "ids", "steps", "flaps", "proposals", "r", "mode", "loss", "nodes", "bogus"],
    );
    match rng.below(7) {
        0 => set(v, &["spec", "options", option], json!(pick(rng, EXTREMES))),
        1 => {
            let ids = *pick(rng, &["4-6", "6-4", "1000", "2-", "-", "auto"]);
            set(v, &["spec", "options", "ids"], json!(ids))
        }
        2 => {
            let target = *pick(
                rng,
                &["primary-backup", "chord", "wal-ack", "torn-log", "snapshot-rename", "nope", ""],
            );
            set(v, &["spec", "target"], json!(target))
        }
        3 => {
            let variant =
                *pick(rng, &["buggy", "fixed", "literal", "corrected", "0.4.2", "0.2.3", "x"]);
            set(v, &["spec", "variant"], json!(variant))
        }
        4 => {
            let property = *pick(rng, &["HasPrimary", "AtMostOneRing", "Nope", "Agreement"]);
            set(v, &["spec", "property"], json!(property))
        }
        5 => {
            // Each option within its range, the combination refused by `prepare`.
            let options = pick(
                rng,
                &[
                    json!({"mode": "messages", "ids": "4"}),
                    json!({"r": "4", "ids": "4"}),
                    json!({"ids": "3", "initial": "5"}),
                    json!({"nodes": "2"}),
                    json!({"fused": "true"}),
                ],
            )
            .clone();
            set(v, &["spec", "options"], options)
        }
        // Legal but heavy: the largest workloads the bounds allow.
        _ => {
            let heavy = *pick(rng, &["writes", "steps", "flaps"]);
            set(v, &["spec", "options", heavy], json!("100000"))
        }
    }
}

/// Changes that keep the file valid, so that many inputs get as far as a run: other decisions,
/// legal rates and budgets, legal options, another seed, a wrong trace hash or outcome.
fn perturb_legally(rng: &mut Rng, v: &mut Value) {
    match rng.below(7) {
        0 => {
            let tokens: Vec<String> = (0..rng.below(300))
                .map(|_| match rng.below(3) {
                    0 => format!("{}*{}", rng.below(10), 1 + rng.below(50)),
                    _ => rng.below(12).to_string(),
                })
                .collect();
            set(v, &["decisions"], json!(tokens.join(" ")))
        }
        1 => {
            let rate = *pick(rng, &["drop", "duplicate", "delay", "crash", "pause", "partition"]);
            let den = 1 + rng.below(1000);
            let ratio = json!({"num": rng.below(den + 1), "den": den});
            set(v, &["scenario", "rates", rate], ratio)
        }
        2 => {
            let field = *pick(rng, &["crashes", "pauses", "partitions", "drops", "duplicates"]);
            set(v, &["scenario", "budget", field], json!(rng.below(50)))
        }
        3 => {
            let (key, value) =
                *pick(rng, &[("writes", "7"), ("ids", "4-6"), ("steps", "60"), ("swarm", "false")]);
            set(v, &["spec", "options", key], json!(value))
        }
        4 => set(v, &["seed"], json!(rng.next_u64())),
        5 => set(v, &["trace_hash"], json!(format!("{:016x}", rng.next_u64()))),
        _ => set(v, &["outcome"], json!({"kind": "pass"})),
    }
}

/// One mutation of the parsed document, of class `class` (0-8).
fn mutate_value(rng: &mut Rng, v: &mut Value, class: u64) {
    match class {
        0 => {
            let path = random_path(rng, v);
            let (last, parent) = path.split_last().unwrap();
            match (at(v, parent), last) {
                (Value::Object(m), Value::String(k)) => {
                    m.remove(k);
                }
                (Value::Array(a), Value::Number(i)) => {
                    a.remove(i.as_u64().unwrap() as usize);
                }
                _ => {}
            }
        }
        1 => *at(v, &random_path(rng, v)) = wrong_type(rng),
        2 => *at(v, &random_path(rng, v)) = extreme(rng),
        3 => *at(v, &random_path(rng, v)) = json!(pick(rng, UNICODE)),
        4 => *at(v, &random_path(rng, v)) = json!("__NEST__"),
        5 => set(v, &["decisions"], json!(pick(rng, DECISION_STRINGS))),
        6 => scenario_semantics(rng, v),
        7 => spec_semantics(rng, v),
        _ => perturb_legally(rng, v),
    }
}

/// One mutation of the text, of class `class` (0-2).
fn mutate_text(rng: &mut Rng, text: String, class: u64) -> Vec<u8> {
    let mut bytes = text.into_bytes();
    match class {
        0 => bytes.truncate(rng.below(bytes.len() as u64 + 1) as usize),
        1 => {
            for _ in 0..1 + rng.below(8) {
                let i = rng.below(bytes.len() as u64) as usize;
                bytes[i] ^= 1 << rng.below(8);
            }
        }
        2 => {
            // Duplicate one line (a field, in pretty-printed JSON).
            let text = String::from_utf8(bytes).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            let i = rng.below(lines.len() as u64) as usize;
            let mut out: Vec<&str> = lines[..=i].to_vec();
            out.extend_from_slice(&lines[i..]);
            bytes = out.join("\n").into_bytes();
        }
        _ => {}
    }
    bytes
}

/// Input `i`: a seed document, one to three mutations, and sometimes damage to the text.
fn input(seeds: &[(u64, Value)], i: u64) -> Vec<u8> {
    let mut rng = Rng::new(derive_seed(SEED, i));
    let total: u64 = seeds.iter().map(|s| s.0).sum();
    let mut w = rng.below(total);
    let mut v = Value::Null;
    for (weight, seed) in seeds {
        if w < *weight {
            v = seed.clone();
            break;
        }
        w -= weight;
    }
    // Eight classes of damage to the document, one of legal change (three times as likely),
    // three of damage to the text; sometimes a second change on top.
    let class = rng.below(14);
    match class {
        0..=7 => mutate_value(&mut rng, &mut v, class),
        8..=10 => mutate_value(&mut rng, &mut v, 8),
        _ => {}
    }
    if rng.chance(weft_core::Ratio::new(1, 4)) {
        let again = rng.below(9);
        mutate_value(&mut rng, &mut v, again);
    }
    let text = if rng.chance(weft_core::Ratio::new(1, 2)) {
        serde_json::to_string_pretty(&v).unwrap()
    } else {
        serde_json::to_string(&v).unwrap()
    };
    let depth = [3, 127, 128, 129, 5_000, 100_000][rng.below(6) as usize];
    let nest = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let text = text.replace("\"__NEST__\"", &nest);
    match class {
        11.. => mutate_text(&mut rng, text, class - 11),
        _ => text.into_bytes(),
    }
}

/// How far an input got: rejected by the reader, the registry, the spec check or `prepare`
/// (the CLI's exit 2), or run.
#[derive(Clone, Copy, Debug)]
enum Stage {
    Unreadable = 0,
    UnknownTarget = 1,
    BadSpec = 2,
    NotPrepared = 3,
    Ran = 4,
}

/// What replay, show or shrink do with one input (`mode` 0, 1, 2), through library calls.
fn exercise(path: &Path, mode: u64) -> Stage {
    let Ok(repro) = Repro::read(path) else { return Stage::Unreadable };
    let Ok(target) = registry::find(&repro.spec.target) else { return Stage::UnknownTarget };
    if weft_core::check_spec(target.as_ref(), &repro.spec).is_err() {
        return Stage::BadSpec;
    }
    let Ok(runner) = target.prepare(&repro.spec) else { return Stage::NotPrepared };
    match mode {
        0 => {
            weft_explore::replay(runner.as_ref(), &repro.scenario, &repro.decisions, false);
        }
        1 => {
            let r = weft_explore::replay(runner.as_ref(), &repro.scenario, &repro.decisions, true);
            let lines = vec![format!("{}", r.report.outcome)];
            let header = weft_report::html::Header { title: "fuzz", lines: &lines };
            weft_report::timeline::render(&r.events);
            weft_report::html::render(&header, &r.events);
            weft_report::shiviz::render(&r.events);
        }
        _ => {
            let slow = matches!(repro.spec.target.as_str(), "omnipaxos" | "raft-rs");
            let opts = ShrinkOptions { max_runs: if slow { 3 } else { 20 } };
            let _ = weft_explore::shrink(
                runner.as_ref(),
                &repro.scenario,
                &repro.decisions,
                &opts,
                &Quiet,
            );
        }
    }
    Stage::Ran
}

fn peak_rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap_or("VmHWM: 0 kB");
    line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).unwrap_or(0)
}

/// Saves a failing input and says where.
fn save(i: u64, bytes: &[u8], why: &str) -> String {
    let path = tmp("fuzz-failures").join(format!("input-{i}.json"));
    std::fs::write(&path, bytes).unwrap();
    format!("input {i} ({}): {why}", path.display())
}

/// Runs every `workers`-th input through [`exercise`]; returns the failures and how many
/// inputs ended at each [`Stage`].
#[allow(clippy::disallowed_methods)] // the wall clock bounds each input; it decides nothing
fn worker(seeds: &[(u64, Value)], worker: u64, workers: u64) -> (Vec<String>, [u64; 5]) {
    let dir = tmp("fuzz-inputs");
    let path = dir.join(format!("worker-{worker}.json"));
    let mut failures = Vec::new();
    let mut stages = [0; 5];
    for i in (worker..IN_PROCESS).step_by(workers as usize) {
        let bytes = input(seeds, i);
        std::fs::write(&path, &bytes).unwrap();
        let start = std::time::Instant::now();
        let result = std::panic::catch_unwind(|| exercise(&path, i % 3));
        let took = start.elapsed();
        match result {
            Ok(stage) => stages[stage as usize] += 1,
            Err(_) => failures.push(save(i, &bytes, "panicked (the CLI's exit 70)")),
        }
        if result.is_err() {
        } else if took > INPUT_TIME_BOUND {
            failures.push(save(i, &bytes, &format!("took {took:?}")));
        } else if peak_rss_kb() > MEMORY_BOUND_KB {
            failures.push(save(i, &bytes, &format!("memory high-water {} kB", peak_rss_kb())));
            break;
        }
    }
    (failures, stages)
}

#[test]
fn ten_thousand_hostile_repros_end_as_an_input_error_or_a_run() {
    let seeds = seeds();
    let results: Vec<(Vec<String>, [u64; 5])> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|w| {
                s.spawn({
                    let seeds = &seeds;
                    move || worker(seeds, w, 2)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let failures: Vec<String> = results.iter().flat_map(|r| r.0.clone()).collect();
    assert!(failures.is_empty(), "{} failing inputs:\n{}", failures.len(), failures.join("\n"));
    let mut stages = [0; 5];
    for (_, counts) in &results {
        for (total, n) in stages.iter_mut().zip(counts) {
            *total += n;
        }
    }
    // Not vacuous: every way of rejecting an input was taken, and many inputs ran.
    eprintln!("unreadable, unknown target, bad spec, not prepared, ran: {stages:?}");
    assert_eq!(stages.iter().sum::<u64>(), IN_PROCESS);
    assert!(stages[..4].iter().all(|&n| n >= 5), "{stages:?}");
    assert!(stages[Stage::Ran as usize] >= IN_PROCESS / 10, "{stages:?}");
}

/// Runs `weft ARGS` under an address-space limit; kills it at the time bound.
#[allow(clippy::disallowed_methods)] // the wall clock bounds each input; it decides nothing
fn bounded_weft(args: &[&str]) -> Result<i32, String> {
    let script = format!("ulimit -v {BINARY_VM_LIMIT_KB}; exec \"$0\" \"$@\"");
    let mut child = Command::new("bash")
        .args(["-c", &script, env!("CARGO_BIN_EXE_weft")])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code().ok_or_else(|| format!("killed by a signal: {status}"));
        }
        if start.elapsed() > INPUT_TIME_BOUND * 2 {
            let _ = child.kill();
            let _ = child.wait();
            return Err("did not end within its time bound".into());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn hostile_repros_through_the_binary_exit_0_to_4() {
    let seeds = seeds();
    let dir = tmp("fuzz-binary");
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2u64)
            .map(|w| {
                s.spawn({
                    let (seeds, dir) = (&seeds, &dir);
                    move || {
                        let mut failures = Vec::new();
                        for i in (w..THROUGH_BINARY).step_by(2) {
                            let i = IN_PROCESS + i;
                            let bytes = input(seeds, i);
                            let path = dir.join(format!("input-{w}.json"));
                            std::fs::write(&path, &bytes).unwrap();
                            let file = path.to_str().unwrap();
                            let out = dir.join(format!("out-{w}.json"));
                            let args: Vec<&str> = match i % 3 {
                                0 => vec!["replay", file],
                                1 => vec!["show", file],
                                _ => vec![
                                    "shrink",
                                    file,
                                    "--shrink-budget",
                                    "30",
                                    "-o",
                                    out.to_str().unwrap(),
                                ],
                            };
                            match bounded_weft(&args) {
                                Ok(code) if (0..=4).contains(&code) => {}
                                Ok(code) => failures.push(save(
                                    i,
                                    &bytes,
                                    &format!("{} exited {code}", args[0]),
                                )),
                                Err(why) => {
                                    failures.push(save(i, &bytes, &format!("{}: {why}", args[0])))
                                }
                            }
                            let _ = std::fs::remove_file(&out);
                        }
                        failures
                    }
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert!(failures.is_empty(), "{} failing inputs:\n{}", failures.len(), failures.join("\n"));
}
