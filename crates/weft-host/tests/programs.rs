//! End-to-end runs of the C programs in `tests/c` under the host: outcomes, determinism,
//! replay, a planted bug found and its fix passing, and escapes refused as Unsupported.

mod common;
use weft_core::{Decisions, NullObserver, Outcome, Recorder, RunSpec, Scenario, Target};
use weft_host::{HostConfig, ProcessTarget, RunOutput};

fn run(cfg: &HostConfig, scenario: &Scenario, seed: u64) -> RunOutput {
    let mut d = Decisions::random(seed);
    weft_host::run_once(cfg, scenario, &mut d, &mut NullObserver).expect("host error")
}

fn pingpong() -> HostConfig {
    common::config("pingpong", &["{id}", "{addr}", "{others}"], 3)
}

#[test]
fn pingpong_passes_with_virtual_times() {
    let out = run(&pingpong(), &Scenario::calm(), 1);
    assert_eq!(out.report.outcome, Outcome::Pass, "{}", out.render());
    let text = out.render();
    assert_eq!(text.matches("'pong").count(), 6, "{text}");
    assert!(text.contains("n0 | done after"), "{text}");
    assert!(text.contains("n2 | node 2 up as pid 1002,"), "virtual pids: {text}");
    // Latency is 1..10 ms per hop: three rounds with a 10 ms pause are well under 100 ms.
    assert!(out.report.end_time.as_nanos() < 100_000_000, "{text}");
}

#[test]
fn same_seed_same_trace_and_bytes_other_seed_differs() {
    let cfg = pingpong();
    let a = run(&cfg, &Scenario::default(), 42);
    let b = run(&cfg, &Scenario::default(), 42);
    assert_eq!(a.report, b.report);
    assert_eq!(a.render(), b.render());
    let c = run(&cfg, &Scenario::default(), 43);
    assert_ne!(a.report.trace_hash, c.report.trace_hash);
    assert_ne!(a.render(), c.render());
}

#[test]
fn recorded_decisions_replay_the_run() {
    let cfg = pingpong();
    let first = weft_host::run_program(&cfg, &Scenario::default(), 9, None).unwrap();
    let again =
        weft_host::run_program(&cfg, &Scenario::default(), 0, Some(first.decisions.clone()))
            .unwrap();
    assert_eq!(first.output.report, again.output.report);
    assert_eq!(first.output.render(), again.output.render());
}

#[test]
fn planted_election_bug_is_found_and_the_fix_passes() {
    let buggy = {
        let mut c = common::config("election", &["{id}", "{addr}", "{others}"], 3);
        c.forbid = Some("SPLIT BRAIN".into());
        c
    };
    let mut fixed = buggy.clone();
    fixed.groups[0].args.push("--fixed".into());
    let scenario = Scenario::calm();
    let found = (0..40).find(|&seed| {
        matches!(run(&buggy, &scenario, seed).report.outcome, Outcome::SafetyViolation { .. })
    });
    let seed = found.expect("the split brain should show within 40 seeds");
    let out = run(&buggy, &scenario, seed);
    match &out.report.outcome {
        Outcome::SafetyViolation { property, detail } => {
            assert_eq!(property, "no_forbidden_output");
            assert!(detail.contains("SPLIT BRAIN"), "{detail}");
        }
        other => panic!("replay of seed {seed} gave {other:?}"),
    }
    for seed in 0..=seed.max(10) {
        let out = run(&fixed, &scenario, seed);
        assert_eq!(out.report.outcome, Outcome::Pass, "fixed election, seed {seed}");
        let leaders = out.lines.iter().filter(|l| l.text.starts_with("LEADER")).count();
        assert_eq!(leaders, 1, "fixed election elects exactly one leader (seed {seed})");
    }
}

fn outcome_detail(o: &Outcome) -> String {
    format!("{o:?}")
}

#[test]
fn static_binary_is_unsupported() {
    let mut cfg = pingpong();
    cfg.groups[0].program = common::compile("pingpong", &["-static"]);
    let o = run(&cfg, &Scenario::calm(), 1).report.outcome;
    assert!(matches!(o, Outcome::Unsupported { .. }), "{o:?}");
    assert!(outcome_detail(&o).contains("statically linked"), "{o:?}");
}

#[test]
fn raw_getrandom_is_trapped_as_unsupported() {
    let cfg = common::config("rawrandom", &[], 1);
    let out = run(&cfg, &Scenario::calm(), 1);
    let o = &out.report.outcome;
    assert!(matches!(o, Outcome::Unsupported { .. }), "{o:?} {:?}", out.lines);
    let d = outcome_detail(o);
    assert!(d.contains("getrandom") && d.contains("raw syscall instruction"), "{d}");
    assert!(!out.render().contains("raw getrandom returned"), "the escape ran");
}

/// Through `syscall(2)` (the Rust getrandom crate 0.2) the number is served as getrandom():
/// the same bytes for the same seed, other bytes for another.
#[test]
fn getrandom_through_syscall_fn_is_served_deterministically() {
    let cfg = common::config("rawrandom", &["fn"], 1);
    let line = |seed| {
        let out = run(&cfg, &Scenario::calm(), seed);
        assert_eq!(out.report.outcome, Outcome::Pass, "{:?}", out.lines);
        let text = out.render();
        let l =
            text.lines().find(|l| l.contains("syscall(2) getrandom returned 8")).map(str::to_owned);
        l.unwrap_or_else(|| panic!("no answer in {text}"))
    };
    assert_eq!(line(1), line(1));
    assert_ne!(line(1), line(2));
}

#[test]
fn crashes_bad_exits_hangs_and_deadlocks_are_outcomes() {
    let kind = |mode: &str| {
        let mut cfg = common::config("crash", &[mode], 1);
        cfg.hang_events = 50;
        run(&cfg, &Scenario::calm(), 1).report.outcome
    };
    let segv = kind("segv");
    assert!(
        matches!(&segv, Outcome::TargetCrashed { detail } if detail.contains("signal 11")),
        "{segv:?}"
    );
    let exit3 = kind("exit3");
    assert!(
        matches!(&exit3, Outcome::TargetCrashed { detail } if detail.contains("status 3")),
        "{exit3:?}"
    );
    // A busy wait on the clock is not a hang: modelled call latency moves virtual time.
    let spin = kind("spin");
    assert_eq!(spin, Outcome::Pass, "a clock loop ends once the second has turned");
    // The simulated machine's kernel has neither io_uring nor Linux AIO, as a kernel built
    // without them: programs fall back (they had ended the run, exit 4).
    for (mode, line) in [("uring", "io_uring_setup -1 ENOSYS 1"), ("aio", "io_setup -1 ENOSYS 1")] {
        let mut cfg = common::config("crash", &[mode], 1);
        cfg.hang_events = 50;
        let out = run(&cfg, &Scenario::calm(), 1);
        assert_eq!(common::passing_lines(&out), [&format!("mode {mode}"), line]);
    }
    // The refusal names the process (command and virtual pid: a node may run many) and the
    // socket type and protocol asked, so a user knows what met it.
    let raw = kind("raw");
    assert!(
        matches!(&raw, Outcome::Unsupported { detail }
            if detail.starts_with("node 0 (crash, pid 1000): ")
                && detail.contains("socket(AF_INET, SOCK_RAW, protocol 1)")),
        "{raw:?}"
    );
    let packet = kind("packet");
    assert!(
        matches!(&packet, Outcome::Unsupported { detail } if detail.contains("AF_PACKET")),
        "{packet:?}"
    );
    let block = kind("block");
    assert!(
        matches!(&block, Outcome::Deadlock { detail }
            if detail.contains("blocked") && detail.contains("(n0 read/recv)")
                && detail.contains("--on-idle pass")),
        "names where it waits and how a server's idle is a pass: {block:?}"
    );
}

#[test]
fn process_target_runs_through_the_generic_interface() {
    let bin = common::compile("pingpong", &[]);
    let mut spec =
        RunSpec { target: "process".into(), variant: "default".into(), ..Default::default() };
    spec.options.insert("program".into(), bin.display().to_string());
    spec.options.insert(
        "args".into(),
        weft_host::join_args(&["{id}".into(), "{addr}".into(), "{others}".into()]),
    );
    spec.options.insert("nodes".into(), "2".into());
    let runner = ProcessTarget.prepare(&spec).unwrap();
    let mut rec = Recorder::default();
    let mut d = Decisions::random(5);
    let report = runner.run(&Scenario::calm(), &mut d, &mut rec);
    assert_eq!(report.outcome, Outcome::Pass);
    assert_eq!(rec.events.len() as u64, report.events);
    assert_eq!(rec.events.last().unwrap().hash, report.trace_hash);
    assert!(rec.events.iter().any(|e| e.kind == weft_core::EventKind::Deliver));

    spec.options.insert("nodes".into(), "zero".into());
    assert!(ProcessTarget.prepare(&spec).is_err());
}

/// The seccomp filter outlives `exec`, the SIGSYS handler does not: in an exec'd image, a
/// library initialised before the shim whose constructor allocates (glibc then draws its
/// malloc tcache key with getrandom) was killed by SIGSYS ("Bad system call"; PostgreSQL's
/// initdb under runuser). That one call is let through.
#[test]
fn a_library_constructor_that_allocates_runs_in_an_exec_d_image() {
    let lib = common::compile("ctorlib", &["-shared", "-fPIC"]);
    let main = common::compile("ctormain", &[lib.to_str().unwrap()]);
    let exec = format!("exec {}", main.display());
    let cfg = HostConfig::new("/bin/sh", vec!["-c".into(), exec], 1);
    let out = run(&cfg, &Scenario::calm(), 1);
    assert_eq!(out.report.outcome, Outcome::Pass, "{}", out.render());
    assert!(out.render().contains("constructor allocated 1; main ran"), "{}", out.render());
}

/// A library is initialised before the preloaded shim's constructor: a `getpid` in its
/// constructor, made before any other hook had set the shim up, answered the real pid, which
/// differs from run to run.
#[test]
fn a_library_constructor_sees_the_virtual_pid() {
    let lib = common::compile("preloadlib", &["-shared", "-fPIC"]);
    let link = format!("-Wl,--no-as-needed,{}", lib.display());
    let cfg = HostConfig::new(common::compile("pidmain", &[&link]), Vec::new(), 1);
    let out = run(&cfg, &Scenario::calm(), 1);
    let lines = common::passing_lines(&out);
    assert_eq!(lines, ["preloaded library loaded, pid 1000", "main: pid 1000"]);
}
