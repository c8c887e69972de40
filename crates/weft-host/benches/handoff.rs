//! `cargo bench -p weft-host`: what interception costs. Prints, in one run, the median cost of
//! a native call against an intercepted call's round trip through the host (and a call the
//! shim serves locally), then a 3-node UDP ping-pong under the shim against the same programs
//! run natively on loopback, as ratios. Per-call costs are (run with N calls − run with 0
//! calls) / N of whole-process wall time, so process start-up cancels out.
//!
//! Wall-clock reads are the point of a benchmark, hence the allowed `Instant::now`.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use weft_core::{Decisions, NullObserver, Outcome, Scenario, SimDuration};
use weft_host::HostConfig;

const REPEATS: usize = 5;

fn compile(name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/c/{name}.c"));
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("bench-{name}"));
    let ok = Command::new("cc").args(["-O2", "-o"]).arg(&out).arg(&src).status().unwrap();
    assert!(ok.success(), "cc {name}");
    out
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn native(bin: &Path, args: &[String]) -> Duration {
    let t = Instant::now();
    let ok = Command::new(bin).args(args).stdout(Stdio::null()).status().unwrap();
    assert!(ok.success());
    t.elapsed()
}

fn shimmed(cfg: &HostConfig) -> Duration {
    let t = Instant::now();
    let mut d = Decisions::random(1);
    let out = weft_host::run_once(cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap();
    let e = t.elapsed();
    assert_eq!(out.report.outcome, Outcome::Pass, "{:?}", out.lines);
    e
}

/// Median per-call cost in µs of `mode` natively or under the shim.
fn per_call(bin: &Path, mode: &str, n: u64, under_shim: bool) -> f64 {
    let run = |count: u64| {
        let args = vec![mode.to_string(), count.to_string()];
        if under_shim {
            shimmed(&HostConfig::new(bin, args, 1))
        } else {
            native(bin, &args)
        }
    };
    median(
        (0..REPEATS)
            .map(|_| {
                let base = run(0);
                let full = run(n);
                full.saturating_sub(base).as_secs_f64() * 1e6 / n as f64
            })
            .collect(),
    )
}

fn pingpong_native(bin: &Path, rounds: u32) -> Duration {
    let cfg = HostConfig { port: 47123, ..HostConfig::new(bin, vec![], 3) };
    let args = |id: u32| {
        let mut a = vec![id.to_string(), cfg.addr(id)];
        a.push((0..3).filter(|&n| n != id).map(|n| cfg.addr(n)).collect::<Vec<_>>().join(","));
        a.extend([rounds.to_string(), "0".to_string()]);
        a
    };
    let t = Instant::now();
    let mut echo: Vec<_> = (1..3)
        .map(|id| Command::new(bin).args(args(id)).stdout(Stdio::null()).spawn().unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(20)); // let the echo servers bind
    let ok = Command::new(bin).args(args(0)).stdout(Stdio::null()).status().unwrap();
    for c in &mut echo {
        c.wait().unwrap();
    }
    assert!(ok.success());
    t.elapsed().saturating_sub(Duration::from_millis(20))
}

fn main() {
    let bench = compile("bench");
    let pingpong = compile("pingpong");
    println!("weft-host benchmark (median of {REPEATS}; µs per call)");
    let n = 20_000;
    let native_getppid = per_call(&bench, "getppid", n * 10, false);
    let native_sleep0 = per_call(&bench, "sleep0", n, false);
    let native_clock = per_call(&bench, "clock", n * 10, false);
    let shim_sleep0 = per_call(&bench, "sleep0", n, true);
    let shim_clock = per_call(&bench, "clock", n * 10, true);
    println!("  native getppid()              {native_getppid:8.3} µs");
    println!("  native nanosleep(0)           {native_sleep0:8.3} µs");
    println!("  native clock_gettime (vDSO)   {native_clock:8.3} µs");
    println!(
        "  shim nanosleep(0) round trip  {shim_sleep0:8.3} µs  ({:.1}x native getppid; ptrace ~36 µs)",
        shim_sleep0 / native_getppid
    );
    println!(
        "  shim clock_gettime (local)    {shim_clock:8.3} µs  ({:.1}x native vDSO)",
        shim_clock / native_clock
    );

    let rounds = 300;
    let nat =
        median((0..REPEATS).map(|_| pingpong_native(&pingpong, rounds).as_secs_f64()).collect());
    let mut cfg = HostConfig::new(
        &pingpong,
        ["{id}", "{addr}", "{peers}", &rounds.to_string(), "0"].map(String::from).to_vec(),
        3,
    );
    cfg.time_limit = SimDuration::from_secs(600);
    let sim = median((0..REPEATS).map(|_| shimmed(&cfg).as_secs_f64()).collect());
    println!(
        "  3-node ping-pong, {rounds} rounds: native {:.1} ms, shim {:.1} ms  (ratio {:.2}x)",
        nat * 1e3,
        sim * 1e3,
        sim / nat
    );
}
