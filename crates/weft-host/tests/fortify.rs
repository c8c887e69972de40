//! Fortified calls: `tests/c/fortify.c` built with `-O2 -D_FORTIFY_SOURCE=2` (as Debian builds
//! everything) calls glibc's `_chk` twins of hooked functions, which make their system calls
//! inside libc; under the shim each must reach the hook (NSD's `__ppoll_chk` had ended its run
//! as a raw system call, exit 4). The program must import every twin (else the test would
//! prove nothing), see what it sees natively, and a length beyond its buffer must still be
//! glibc's "buffer overflow detected" abort.

mod common;
use std::process::Command;
use weft_core::{Decisions, NullObserver, Outcome, Scenario};

const FLAGS: &[&str] = &["-O2", "-D_FORTIFY_SOURCE=2"];

/// The fortified twins the program must import: every one the shim defines but `__pread64_chk`
/// (a `_FILE_OFFSET_BITS=64` build's) and `__fdelt_chk` (`FD_SET`: no system call, glibc's).
const TWINS: &[&str] = &[
    "__poll_chk",
    "__ppoll_chk",
    "__recv_chk",
    "__recvfrom_chk",
    "__read_chk",
    "__pread_chk",
    "__readlink_chk",
    "__gethostname_chk",
    "__getgroups_chk",
    "__dprintf_chk",
    "__vdprintf_chk",
    "__fdelt_chk",
];

const EXPECTED: &[&str] = &[
    "poll 1 revents 1",
    "read 10: dprintf 42",
    "ppoll 1 revents 1",
    "select 1 isset 1",
    "read 11: vdprintf ok",
    "recv 3: one",
    "recvfrom 3: two from the socket itself: 1",
    "pread 4: ELF",
    "readlink of a file -1",
    "gethostname 0",
    "getgroups counts 1",
    "dprintf to stdout 7",
];

fn run(args: &[&str]) -> weft_host::RunOutput {
    let bin = common::compile("fortify", FLAGS);
    let mut cfg = weft_host::HostConfig::new(bin, args.iter().map(|s| s.to_string()).collect(), 1);
    cfg.time_limit = weft_core::SimDuration::from_secs(30);
    let mut d = Decisions::random(5);
    weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap()
}

#[test]
fn the_program_imports_the_fortified_twins() {
    let bin = common::compile("fortify", FLAGS);
    let nm = Command::new("nm").args(["-D", "--undefined-only"]).arg(&bin).output();
    let nm = String::from_utf8(nm.expect("nm (binutils) is needed for this test").stdout).unwrap();
    let imported: Vec<&str> =
        nm.lines().filter_map(|l| l.split_whitespace().last()?.split('@').next()).collect();
    for twin in TWINS {
        assert!(imported.contains(twin), "{twin} not imported: {imported:?}");
    }
}

#[test]
fn fortified_calls_reach_the_hooks() {
    let bin = common::compile("fortify", FLAGS);
    let native = Command::new(&bin).output().expect("run natively");
    assert!(native.status.success(), "native run failed: {native:?}");
    assert_eq!(String::from_utf8(native.stdout).unwrap().lines().collect::<Vec<_>>(), EXPECTED);
    let out = run(&[]);
    assert_eq!(common::passing_lines(&out), EXPECTED);
}

#[test]
fn a_length_beyond_the_buffer_is_still_glibcs_abort() {
    let out = run(&["overflow"]);
    let detail = match &out.report.outcome {
        Outcome::TargetCrashed { detail } => detail.clone(),
        other => panic!("expected glibc's abort, got {other:?}: {}", out.render()),
    };
    assert!(detail.contains("signal 6"), "{detail}");
    let text: Vec<&str> = out.lines.iter().map(|l| l.text.as_str()).collect();
    assert!(text.iter().any(|l| l.contains("buffer overflow detected")), "{text:?}");
}
