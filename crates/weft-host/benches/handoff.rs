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

/// The floor under any futex hand-off on this machine right now: a bare shared-memory + futex
/// ping-pong between this process and a forked child, both pinned to one CPU. Reported beside
/// the shim's round trip so a loaded machine does not hide the shim's own overhead.
fn futex_pingpong_us(rounds: u32) -> f64 {
    use std::sync::atomic::{AtomicU32, Ordering};
    fn wait(w: &AtomicU32, v: u32) {
        // SAFETY: shared futex wait on a word of a MAP_SHARED mapping.
        unsafe { libc::syscall(libc::SYS_futex, w as *const _, libc::FUTEX_WAIT, v, 0usize) };
    }
    fn wake(w: &AtomicU32) {
        // SAFETY: waking waiters on a word of a MAP_SHARED mapping.
        unsafe { libc::syscall(libc::SYS_futex, w as *const _, libc::FUTEX_WAKE, 1) };
    }
    // SAFETY: a fresh shared anonymous page; checked for failure.
    let page = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    assert_ne!(page, libc::MAP_FAILED);
    // SAFETY: the page is zeroed and aligned; an AtomicU32 at its start is valid.
    let turn = unsafe { &*(page as *const AtomicU32) };
    // SAFETY: pinning this thread, then forking a child that only touches the shared page and
    // exits with _exit (the benchmark's main thread is the only thread).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(libc::sched_getcpu() as usize, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        let pid = libc::fork();
        if pid == 0 {
            for _ in 0..rounds {
                while turn.load(Ordering::Acquire) != 1 {
                    wait(turn, 0);
                }
                turn.store(0, Ordering::Release);
                wake(turn);
            }
            libc::_exit(0);
        }
        let t = Instant::now();
        for _ in 0..rounds {
            turn.store(1, Ordering::Release);
            wake(turn);
            while turn.load(Ordering::Acquire) != 0 {
                wait(turn, 1);
            }
        }
        let e = t.elapsed();
        libc::waitpid(pid, std::ptr::null_mut(), 0);
        libc::munmap(page, 4096);
        e.as_secs_f64() * 1e6 / rounds as f64
    }
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
    let floor = median((0..REPEATS).map(|_| futex_pingpong_us(n as u32)).collect());
    println!("  native getppid()              {native_getppid:8.3} µs");
    println!("  bare futex ping-pong, pinned  {floor:8.3} µs  (the transport's floor right now)");
    println!("  native nanosleep(0)           {native_sleep0:8.3} µs");
    println!("  native clock_gettime (vDSO)   {native_clock:8.3} µs");
    println!(
        "  shim nanosleep(0) round trip  {shim_sleep0:8.3} µs  ({:.1}x native getppid, {:.1}x the \
         futex floor; ptrace ~36 µs)",
        shim_sleep0 / native_getppid,
        shim_sleep0 / floor
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
