//! Real-machine facts that reach a program through libc paths other than the clock and random
//! calls (`tests/c/leaks.c`): a `mkstemp` or `mkdtemp` name, `getrusage`, a process's own `/proc` memory
//! files and `stat`. Redis Sentinel's config rewrite and Redis's `INFO` read them, and each made two runs
//! of one seed differ. Under the shim they are the same in every run, and virtual.

mod common;
use weft_core::{Decisions, NullObserver, Outcome, Scenario};

fn run(dir: &str) -> Vec<String> {
    let cfg = common::config("leaks", &[dir], 1);
    let mut d = Decisions::random(3);
    let out = weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap();
    assert_eq!(out.report.outcome, Outcome::Pass, "{:?}", out.lines);
    out.lines.iter().map(|l| l.text.clone()).collect()
}

#[test]
fn temp_names_rusage_and_proc_memory_are_the_same_in_every_run() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("leaks-tmp");
    std::fs::create_dir_all(&dir).unwrap();
    let dir = dir.to_str().unwrap();
    let a = run(dir);
    let b = run(dir);
    assert_eq!(a, b, "two runs of one seed");
    assert!(a[0].starts_with("mkstemp ok -> conf."), "{a:?}");
    assert!(a[1].starts_with("rusage user 0.") && a[1].ends_with("sys 0.000000 maxrss 0"), "{a:?}");
    assert_eq!(a[2], "/proc/self/statm: 14 bytes: 0 0 0 0 0 0 0 ", "{a:?}");
    // Its own `stat` by its virtual pid: that pid, its name, running, parent 1, leading its
    // group and session, no terminal, and zero times and memory.
    let (_, stat) = a[3].split_once(" bytes: ").unwrap();
    assert!(stat.starts_with("1000 (leaks) R 1 1000 1000 0 -1 0 "), "{a:?}");
    assert_eq!(stat.split(' ').filter(|f| !f.is_empty()).count(), 52, "{a:?}");
    assert!(a[4].starts_with("mkdtemp ok -> dir."), "{a:?}");
}
