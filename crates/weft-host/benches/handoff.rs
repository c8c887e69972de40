//! `cargo bench -p weft-host`: what interception costs. Prints, in one run, the median cost of
//! a native call against an intercepted call's round trip through the host (and a call the
//! shim serves locally), the round trip against ptrace's and against two bare transport
//! floors measured right now, then a 3-node UDP ping-pong under the shim against the same
//! programs run natively on loopback, as ratios, with the load average before and after (a
//! loaded machine moves the spinning floors by 5x). Per-call costs are (run with N calls − run
//! with 0 calls) / N of whole-process wall time, so process start-up cancels out.
//!
//! Wall-clock reads are the point of a benchmark, hence the allowed `Instant::now`.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use weft_core::{Decisions, NullObserver, Outcome, Scenario, SimDuration};
use weft_host::HostConfig;

const REPEATS: usize = 5;
/// One ptrace-stopped system call's round trip on this machine (µs), measured once by hand; the
/// project's bar is an intercepted call at least 10x cheaper.
const PTRACE_US: f64 = 36.0;

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
    let mut cfg = HostConfig::new(bin, vec![], 3);
    cfg.port = 47123;
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

fn futex_wait(w: &std::sync::atomic::AtomicU32, v: u32) {
    // SAFETY: shared futex wait on a word of a MAP_SHARED mapping.
    unsafe { libc::syscall(libc::SYS_futex, w as *const _, libc::FUTEX_WAIT, v, 0usize) };
}

fn futex_wake(w: &std::sync::atomic::AtomicU32) {
    // SAFETY: waking waiters on a word of a MAP_SHARED mapping.
    unsafe { libc::syscall(libc::SYS_futex, w as *const _, libc::FUTEX_WAKE, 1) };
}

/// Pins the calling thread to `cpu`.
fn pin(cpu: usize) {
    // SAFETY: setting this thread's affinity with a properly sized mask.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// The CPU this thread is on and another one it may use, if any.
fn two_cpus() -> (usize, Option<usize>) {
    // SAFETY: querying this thread's affinity and CPU.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
        let cpu = libc::sched_getcpu().max(0) as usize;
        let n = libc::CPU_SETSIZE as usize;
        (cpu, (1..n).map(|k| (cpu + k) % n).find(|&c| libc::CPU_ISSET(c, &set)))
    }
}

/// A bare shared-memory ping-pong between this process and a forked child, the parent on
/// `parent_cpu` and the child on `child_cpu`, in µs per round trip. With `spin` = 0 each side
/// sleeps in FUTEX_WAIT and is woken every time (the old same-CPU transport's floor); otherwise
/// each side spins up to `spin` iterations first and a wake is issued only to a side that
/// announced it sleeps (the shim's protocol, without the host's work: the floor under it).
fn pingpong_us(rounds: u32, parent_cpu: usize, child_cpu: usize, spin: u32) -> f64 {
    use std::sync::atomic::{AtomicU32, Ordering};
    const SLEEPING: u32 = 4;
    let wait_for = |w: &AtomicU32, want: u32| {
        for _ in 0..spin {
            if w.load(Ordering::Acquire) & !SLEEPING == want {
                return;
            }
            std::hint::spin_loop();
        }
        loop {
            let v = w.load(Ordering::Acquire);
            if v & !SLEEPING == want {
                return;
            }
            if v & SLEEPING == 0
                && w.compare_exchange(v, v | SLEEPING, Ordering::AcqRel, Ordering::Acquire).is_err()
            {
                continue;
            }
            futex_wait(w, v | SLEEPING);
        }
    };
    let give = |w: &AtomicU32, v: u32| {
        if w.swap(v, Ordering::AcqRel) & SLEEPING != 0 {
            futex_wake(w);
        }
    };
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
        let mut old: libc::cpu_set_t = std::mem::zeroed();
        libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut old);
        pin(parent_cpu);
        let pid = libc::fork();
        if pid == 0 {
            pin(child_cpu);
            for _ in 0..rounds {
                wait_for(turn, 1);
                give(turn, 0);
            }
            libc::_exit(0);
        }
        let t = Instant::now();
        for _ in 0..rounds {
            give(turn, 1);
            wait_for(turn, 0);
        }
        let e = t.elapsed();
        libc::waitpid(pid, std::ptr::null_mut(), 0);
        libc::munmap(page, 4096);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &old);
        e.as_secs_f64() * 1e6 / rounds as f64
    }
}

fn main() {
    let bench = compile("bench");
    let pingpong = compile("pingpong");
    println!("weft-host benchmark (median of {REPEATS}; µs per call)");
    // Spinning transports measure the machine as much as the code: on a loaded one the floors
    // below move by 5x from run to run, so the load is part of the result.
    println!("  load average at start: {}", load_average());
    let n = 20_000;
    let native_getppid = per_call(&bench, "getppid", n * 10, false);
    let native_sleep0 = per_call(&bench, "sleep0", n, false);
    let native_clock = per_call(&bench, "clock", n * 10, false);
    let shim_sleep0 = per_call(&bench, "sleep0", n, true);
    let shim_clock = per_call(&bench, "clock", n * 10, true);
    let (cpu, other) = two_cpus();
    let futex_floor = median((0..REPEATS).map(|_| pingpong_us(n as u32, cpu, cpu, 0)).collect());
    let spin_floor = other.map(|other| {
        let spin = weft_host::SPIN_ITERS;
        median((0..REPEATS).map(|_| pingpong_us(n as u32, cpu, other, spin)).collect())
    });
    println!("  native getppid()              {native_getppid:8.3} µs");
    println!(
        "  bare futex ping-pong, 1 CPU   {futex_floor:8.3} µs  (sleep and wake every time: the \
         same-CPU transport's floor right now)"
    );
    match spin_floor {
        Some(f) => println!(
            "  bare spin ping-pong, 2 CPUs   {f:8.3} µs  (spin, then sleep: the floor under the \
             shim's transport right now)"
        ),
        None => println!(
            "  bare spin ping-pong, 2 CPUs        n/a  (one CPU allowed: the shim does not spin)"
        ),
    }
    println!("  native nanosleep(0)           {native_sleep0:8.3} µs");
    println!("  native clock_gettime (vDSO)   {native_clock:8.3} µs");
    println!(
        "  shim nanosleep(0) round trip  {shim_sleep0:8.3} µs  ({:.1}x native getppid)",
        shim_sleep0 / native_getppid
    );
    println!(
        "    against ptrace (~{PTRACE_US} µs): {:.1}x cheaper (the bar: 10x, {:.1} µs)",
        PTRACE_US / shim_sleep0,
        PTRACE_US / 10.0
    );
    println!(
        "    against the floors: {:.2}x the 1-CPU futex ping-pong{}",
        shim_sleep0 / futex_floor,
        spin_floor
            .map(|f| format!(", {:.1}x the 2-CPU spin ping-pong", shim_sleep0 / f))
            .unwrap_or_default()
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
        ["{id}", "{addr}", "{others}", &rounds.to_string(), "0"].map(String::from).to_vec(),
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
    println!("  load average at end: {}", load_average());
}

/// The first three fields of `/proc/loadavg` ("?" where it cannot be read).
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}
