//! Signals in virtual time: each scenario of `tests/c/signals.c` runs natively and under the
//! shim and must observe the same (handlers, masks, EINTR and SA_RESTART, default actions);
//! runs are deterministic, and a real signal from the kernel never reaches the program.

mod common;
use std::os::unix::process::ExitStatusExt;
use std::process::Command;
use weft_core::{Decisions, NullObserver, Outcome, Scenario};
use weft_host::RunOutput;

fn native(scenario: &str) -> (String, std::process::ExitStatus) {
    native_of("signals", scenario)
}

fn native_of(prog: &str, scenario: &str) -> (String, std::process::ExitStatus) {
    let bin = common::compile(prog, &[]);
    let out = Command::new(&bin).arg(scenario).output().expect("run natively");
    (String::from_utf8(out.stdout).unwrap(), out.status)
}

fn shim(scenario: &str, seed: u64) -> RunOutput {
    shim_of("signals", scenario, seed)
}

fn shim_of(prog: &str, scenario: &str, seed: u64) -> RunOutput {
    let cfg = common::config(prog, &[scenario], 1);
    let mut d = Decisions::random(seed);
    weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap()
}

fn text(out: &RunOutput) -> String {
    out.lines.iter().map(|l| format!("{}\n", l.text)).collect()
}

fn parity(scenario: &str) {
    parity_of("signals", scenario);
}

fn parity_of(prog: &str, scenario: &str) {
    let (want, status) = native_of(prog, scenario);
    assert!(status.success(), "native run of {scenario} failed: {status:?}");
    let out = shim_of(prog, scenario, 7);
    assert_eq!(out.report.outcome, Outcome::Pass, "under the shim: {:?}", out.lines);
    assert_eq!(text(&out), want, "scenario {scenario}: shim (left) vs native (right)");
}

/// Real-time signals queue, each instance with its own value, delivered lowest signal first
/// and each signal's in the order sent (`sigwaitinfo` takes one instance); a second instance
/// had merged into the first, as a standard signal's does.
#[test]
fn real_time_signals_queue_every_instance() {
    parity("rtqueue");
}

/// glibc's BSD and System V signal calls, `siginterrupt` and `sigqueue` act on the simulated
/// masks and dispositions: glibc makes them with internal calls no hook saw, so the host's
/// mask and the program's parted (dash's `wait` never woke), and `sigqueue` went to whatever
/// real process had the virtual pid's number.
#[test]
fn older_signal_calls_and_sigqueue_match_native() {
    parity_of("sigcompat", "compat");
}

/// A blocking `wait` that its child's end satisfies answers that child, SIGCHLD's handler run
/// on the way back, as on Linux: it had answered `EINTR`, and the program's next `waitpid(-1)`
/// got the first child instead of the one it had just killed.
#[test]
fn a_wait_its_child_satisfies_answers_the_child_rather_than_eintr() {
    parity_of("sigcompat", "childwait");
}

/// A program's own `sigaction` over glibc's `__sigaction` (the BEAM's) works: the shim's
/// `__sigaction` had called back into it through the exported symbol, without end (Erlang's VM
/// died of `SIGSEGV` at start).
#[test]
fn a_programs_own_sigaction_over_glibcs_works() {
    parity_of("sigcompat", "interposed");
}

#[test]
fn raise_runs_an_siginfo_handler() {
    parity("raise");
}

#[test]
fn kill_of_own_pid_and_bad_signals() {
    parity("kill");
}

#[test]
fn masked_signal_stays_pending_until_unblocked() {
    parity("mask");
}

#[test]
fn ignored_signals_are_discarded() {
    parity("ignore");
}

#[test]
fn handled_signal_interrupts_nanosleep() {
    parity("eintr");
}

#[test]
fn handled_signal_interrupts_recv_without_sa_restart() {
    parity("recv");
}

#[test]
fn sa_restart_restarts_recv() {
    parity("recv-restart");
}

#[test]
fn sigsuspend_waits_and_restores_the_mask() {
    parity("suspend");
}

#[test]
fn sigwaitinfo_takes_a_blocked_signal() {
    parity("sigwait");
}

#[test]
fn signalfd_reads_raised_and_sent_signals_in_read_poll_and_epoll() {
    parity("signalfd");
}

/// A SIGCHLD handler that writes to a pipe in an epoll set which also holds a real descriptor
/// wakes the wait (EINTR, then the pipe), on every seed. The signal could come with the
/// answer that made the waiter look at its real descriptors again; the shim queued it for the
/// hook's return and waited on, so the handler never ran and its write never came (Python's
/// multiprocessing forkserver, with `signal.set_wakeup_fd`, never saw a child end).
#[test]
fn a_signal_ends_an_epoll_wait_that_also_watches_real_descriptors() {
    // Natively the same, once the parent waits before the child ends (the child sleeps 50 ms
    // first; on a loaded machine the parent can still be late, and then no EINTR is seen, so
    // the native run is not the reference).
    let (native_out, status) = native("selfpipe");
    assert!(status.success(), "{status:?}");
    assert!(native_out.contains("the pipe woke epoll_wait"), "{native_out}");
    let want = "epoll_wait: EINTR\nthe pipe woke epoll_wait\nchild exit 3\n";
    for seed in 1..=8 {
        let cfg = common::config("signals", &["selfpipe"], 1);
        let mut d = Decisions::random(seed);
        let out = weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap();
        assert_eq!(out.report.outcome, Outcome::Pass, "seed {seed}: {:?}", out.lines);
        assert_eq!(text(&out), want, "seed {seed}");
    }
}

#[test]
fn sigterm_default_action_kills_the_process() {
    let (want, status) = native("term");
    assert_eq!(status.signal(), Some(libc::SIGTERM), "natively: {status:?}");
    let out = shim("term", 7);
    assert_eq!(text(&out), want);
    assert!(
        matches!(&out.report.outcome, Outcome::TargetCrashed { detail } if detail.contains("signal 15")),
        "{:?}",
        out.report.outcome
    );
}

#[test]
fn a_real_signal_from_the_kernel_never_reaches_the_program() {
    let (want, _) = native("real");
    assert_eq!(want, "real: handled=1\n", "natively the kernel delivers it");
    let out = shim("real", 7);
    assert_eq!(out.report.outcome, Outcome::Pass);
    assert_eq!(text(&out), "real: handled=0\n");
}

#[test]
fn same_seed_same_trace() {
    for scenario in ["eintr", "suspend", "recv-restart", "signalfd"] {
        let a = shim(scenario, 3);
        let b = shim(scenario, 3);
        assert_eq!(a.report.trace_hash, b.report.trace_hash, "{scenario}");
        assert_eq!(a.render(), b.render(), "{scenario}");
    }
}
