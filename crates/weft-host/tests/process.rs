//! Child processes under the shim: each mode of `tests/c/fork.c` (fork and the wait family,
//! SIGCHLD, a pipe between parent and child, exec, system, posix_spawn) runs natively and
//! under the shim, and what the program observes must be the same line for line; a run is
//! deterministic (same seed: same output and trace hash).

mod common;
use std::process::Command;
use weft_core::{Decisions, NullObserver, Outcome, Scenario};

/// Lines the exec'd image prints to stderr (merged into the output under the shim only).
const STDERR_MARK: &str = "exec'd: realtime ";

fn shim_run(args: &[&str], seed: u64) -> weft_host::RunOutput {
    let cfg = common::config("fork", args, 1);
    let mut d = Decisions::random(seed);
    weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap()
}

fn parity(mode: &str) -> weft_host::RunOutput {
    parity_args(&[mode])
}

fn parity_args(args: &[&str]) -> weft_host::RunOutput {
    let mode = args[0];
    let bin = common::compile("fork", &[]);
    let native = Command::new(&bin).args(args).output().expect("run natively");
    assert!(native.status.success(), "native run of {mode} failed: {native:?}");
    let native = String::from_utf8(native.stdout).unwrap();
    let out = shim_run(args, 7);
    assert_eq!(out.report.outcome, Outcome::Pass, "under the shim: {:?}", out.lines);
    let shim: String = out
        .lines
        .iter()
        .filter(|l| !l.text.starts_with(STDERR_MARK))
        .map(|l| format!("{}\n", l.text))
        .collect();
    assert_eq!(shim, native, "mode {mode}: shim (left) vs native (right)");
    let again = shim_run(args, 7);
    assert_eq!(again.render(), out.render(), "mode {mode}: same seed, different output");
    assert_eq!(again.report.trace_hash, out.report.trace_hash, "mode {mode}: trace hash");
    out
}

/// A process-shared semaphore and a shared futex in memory mapped before a fork (PostgreSQL's
/// semaphores): the child's post and wake reach the parent (they once stalled it for good).
#[test]
fn process_shared_semaphores_and_futexes_wake_across_fork() {
    parity("pshared");
}

/// A named semaphore (`sem_open`) mapped at different addresses by a process and the image its
/// child execs: the parent's post reaches the waiting child, natively and under the shim (the
/// host matched waits by address, so the child waited for good).
#[test]
fn a_named_semaphore_mapped_at_two_addresses_wakes_across_processes() {
    let bin = common::compile("semopen", &["-pthread"]);
    let native = Command::new(&bin).output().expect("run natively");
    let lines = ["parent posts", "child maps it elsewhere 1", "child took the post"];
    let native = String::from_utf8(native.stdout).unwrap();
    for line in lines {
        assert!(native.contains(line), "natively: {native}");
    }
    let cfg = weft_host::HostConfig::new(bin, vec![], 1);
    let mut d = Decisions::random(1);
    let out = weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap();
    assert_eq!(
        common::passing_lines(&out),
        ["child maps it elsewhere 1", "parent posts", "child took the post"]
    );
}

/// Descriptors passed over a socketpair (`SCM_RIGHTS`) from parent to child: a pipe end, a
/// socketpair end and a file work in the child as natively, the parent sees EOF once the
/// child closes the passed write end, and a batch read with a plain `read` is discarded
/// (before, passing descriptors exited 4).
#[test]
fn descriptors_passed_over_a_socketpair_work_in_the_receiver() {
    passfd_like_native(&[]);
}

/// The same over a named `AF_UNIX` socket the child accepts on, which the kernel carries (as
/// Python's multiprocessing forkserver gets each new child's pipes): before, the simulated
/// pipe arrived as its bare placeholder, the parent read nothing from it, and Python's
/// forkserver died of `BrokenPipeError`.
#[test]
fn descriptors_passed_over_a_named_unix_socket_work_in_the_receiver() {
    passfd_like_native(&["named"]);
}

fn passfd_like_native(args: &[&str]) {
    let bin = common::compile("passfd", &[]);
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("passfd{args:?}"));
    std::fs::create_dir_all(&dir).unwrap();
    let native = Command::new(&bin).args(args).current_dir(&dir).output().expect("run natively");
    assert!(native.status.success(), "{native:?}");
    let args = args.iter().map(|a| a.to_string()).collect();
    let mut cfg = weft_host::HostConfig::new(bin, args, 1);
    cfg.work_dir = Some(dir.join("work"));
    for seed in 1..=3 {
        let mut d = Decisions::random(seed);
        let out = weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap();
        let mut shim = common::passing_lines(&out);
        let mut want: Vec<&str> = std::str::from_utf8(&native.stdout).unwrap().lines().collect();
        // Parent and child interleave as the seed has it: compare as sets of lines, and the
        // parent's own order.
        assert!(shim.contains(&"child got 3 descriptors with 'a'"), "{shim:?}");
        shim.sort_unstable();
        want.sort_unstable();
        assert_eq!(shim, want, "seed {seed}: shim (left) vs native (right)");
    }
}

/// A real `AF_UNIX` socket's peer credentials (`SO_PEERCRED`, `SCM_CREDENTIALS`) name the pids
/// `getpid` and `fork` answer, and a blocking receive on it waits in the host for the sender
/// (before, the kernel's pids leaked into libqb's names, and the receive blocked in the kernel
/// holding the baton: a 20 s stall).
#[test]
fn a_real_unix_sockets_peer_credentials_name_virtual_pids() {
    let bin = common::compile("peercred", &[]);
    let native = Command::new(&bin).output().expect("run natively");
    let native = String::from_utf8(native.stdout).unwrap();
    let want = ["SO_PEERCRED names this process: 1", "SCM_CREDENTIALS name the child: 1"];
    assert_eq!(native.lines().collect::<Vec<_>>(), want, "natively");
    let cfg = weft_host::HostConfig::new(bin, vec![], 1);
    let mut d = Decisions::random(1);
    let out = weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap();
    assert_eq!(common::passing_lines(&out), want);
}

#[test]
fn fork_and_the_wait_family() {
    parity("wait");
}

#[test]
fn sigchld_handler_runs_in_virtual_time() {
    parity("sigchld");
}

/// SIGCHLD's `si_code` and `si_status` tell how each child ended (an exit code, or the signal
/// that killed it), as natively; every child had been reported `CLD_EXITED` with status 0.
#[test]
fn sigchld_says_how_a_child_ended() {
    let out = parity("sigchldinfo");
    let lines = common::passing_lines(&out);
    assert!(lines.contains(&"child 2: CLD_KILLED status 15, its pid: 1"), "{lines:?}");
}

#[test]
fn pipe_between_parent_and_child() {
    parity("pipe");
}

#[test]
fn exec_keeps_the_shim() {
    let out = parity("exec");
    // The exec'd image reads the virtual clock (2026-01-01T00:00:00Z at the start of a run).
    let line = out.lines.iter().find(|l| l.text.starts_with(STDERR_MARK)).expect("exec'd line");
    let secs: i64 = line.text[STDERR_MARK.len()..].parse().unwrap();
    assert!((1_767_225_600..1_767_225_660).contains(&secs), "not virtual time: {}", line.text);
}

#[test]
fn execl_execlp_and_execle_keep_the_shim() {
    let out = parity("execl");
    let text: Vec<&str> = out.lines.iter().map(|l| l.text.as_str()).collect();
    assert!(text.contains(&"execl child: exited 12"), "{text:?}");
    assert!(text.contains(&"exec'd with WEFT_TEST_VAR=from execle, HOME unset"), "{text:?}");
}

#[test]
fn system_runs_the_shell_as_a_child() {
    parity("system");
}

#[test]
fn posix_spawn_and_spawnp() {
    parity("spawn");
}

#[test]
fn a_socket_shared_by_parent_and_child_stays_one_socket() {
    parity_args(&["socket", "47311"]);
}

#[test]
fn different_seeds_agree_on_what_the_program_sees() {
    let a = shim_run(&["wait"], 1);
    let b = shim_run(&["wait"], 2);
    assert_eq!(a.report.outcome, Outcome::Pass);
    let text =
        |o: &weft_host::RunOutput| o.lines.iter().map(|l| l.text.clone()).collect::<Vec<_>>();
    assert_eq!(text(&a), text(&b));
}

#[test]
fn popen_reads_and_writes_a_shell_child() {
    parity("popen");
}

#[test]
fn a_shell_pipeline_runs_on_simulated_pipes() {
    parity("pipeline");
}

/// A line a child starts and its parent finishes is one line, as on the terminal they share
/// natively (each process's output reaches the host through a pipe of its own, and a child's
/// unfinished line was printed as a line of its own when it ended).
#[test]
fn a_line_a_child_starts_and_its_parent_ends_is_one_line() {
    let script = "printf abc | cat; echo def; printf 'x y' | tr ' ' -; printf z; echo";
    let native = Command::new("/bin/sh").args(["-c", script]).output().expect("sh runs");
    let cfg = weft_host::HostConfig::new("/bin/sh", vec!["-c".into(), script.into()], 1);
    let mut d = Decisions::random(1);
    let out = weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap();
    let shim: String = out.lines.iter().map(|l| format!("{}\n", l.text)).collect();
    assert_eq!(shim, String::from_utf8_lossy(&native.stdout), "shim (left) vs native (right)");
}

/// dash's `wait` for a background job it killed: it blocks SIGCHLD with `sigprocmask`,
/// unblocks it with glibc's `sigsetmask`, and sleeps in `sigsuspend` until SIGCHLD comes. The
/// shim did not see `sigsetmask`, so the host kept SIGCHLD blocked and the run deadlocked.
#[test]
fn a_shell_waits_for_a_background_job_it_killed() {
    let script = "sleep 100 & sleep 1; kill $!; wait $!; echo status $?; wait; echo done";
    let cfg = weft_host::HostConfig::new("/bin/sh", vec!["-c".into(), script.into()], 1);
    assert_eq!(passing(&cfg, 1), ["Terminated", "status 143", "done"]);
}

/// `syscall(2)` with a pid-naming number (groups, sessions, priorities, limits, scheduling)
/// answers as the libc function does, on virtual pids: it had gone to the kernel, where the
/// virtual pid named no process of the run (or some other one on the machine).
#[test]
fn pid_naming_system_calls_made_through_syscall_use_virtual_pids() {
    let bin = common::compile("rawpids", &[]);
    let native = Command::new(&bin).output().expect("run natively");
    let out = calm(&common::config("rawpids", &[], 1), 1);
    let shim: String = common::passing_lines(&out).iter().map(|l| format!("{l}\n")).collect();
    assert_eq!(shim, String::from_utf8_lossy(&native.stdout), "shim (left) vs native (right)");
}

/// `/proc` names the node's processes by their virtual pids: a process's directory, `stat`
/// (pid, parent, state; `Z` once ended unwaited) and `cmdline` are there as natively, a pid no
/// process has is `ENOENT`, and a listing of `/proc` holds exactly the node's processes. The
/// kernel's `/proc` had no directory for a virtual pid (`ps -p $pid` said it was gone: Galera's
/// state transfer failed on it) and listed the machine's processes by real pid.
#[test]
fn proc_lists_and_describes_the_nodes_processes_by_virtual_pid() {
    let bin = common::compile("procpids", &[]);
    let native = Command::new(&bin).output().expect("run natively");
    let native = String::from_utf8_lossy(&native.stdout);
    let (native, listed) = native.rsplit_once("listed ").expect("the native run ends");
    assert!(listed.trim().parse::<u32>().unwrap() > 2, "the machine's processes: {listed}");
    let shim = passing(&common::config("procpids", &[], 1), 1);
    let (last, lines) = shim.split_last().unwrap();
    assert_eq!(lines.iter().map(|l| format!("{l}\n")).collect::<String>(), native);
    assert_eq!(last, "listed 1", "the node's one process is all /proc lists at the end");
}

/// procps's `ps -p` and `pgrep` find a shell's background job by the pid `$!` holds, with its
/// virtual parent, and `ps -p` says it is gone once killed and waited for (as Galera's
/// `wsrep_sst_rsync` checks its daemon), and `/proc/self` links to the virtual pid, the same
/// from every seed.
#[test]
fn ps_and_pgrep_see_a_background_job_by_its_virtual_pid() {
    let script = "sleep 100 & ps -o pid=,ppid=,stat=,comm= -p $!; pgrep -x sleep; kill $!; wait; \
                  ps -p $! >/dev/null || echo gone; readlink /proc/self";
    let cfg = weft_host::HostConfig::new("/bin/sh", vec!["-c".into(), script.into()], 1);
    for seed in [1, 2] {
        // ps pads its columns by the machine's pid_max: compare the fields.
        let lines = passing(&cfg, seed);
        let fields: Vec<String> =
            lines.iter().map(|l| l.split_whitespace().collect::<Vec<_>>().join(" ")).collect();
        let seen = ["20001 1000 S sleep", "20001", "gone", "20005"];
        assert_eq!(fields, seen, "the last: readlink's own pid");
    }
}

#[test]
fn a_close_on_exec_pipe_closes_at_the_exec() {
    parity("cloexec");
}

#[test]
fn a_pipe_and_a_socketpair_stay_simulated_across_exec() {
    parity("inherit");
}

#[test]
fn close_range_closes_simulated_descriptors_and_keeps_the_shim() {
    parity("closerange");
}

/// A child that `dup2`s over descriptor numbers up to its limit before an exec (GlusterFS's
/// runner gives its `gsyncd` child fixed descriptors) replaced the shim's own, and the image
/// it exec'd ran outside the simulation (the real host name and clock, and a passing run). The
/// shim's descriptor moves out of the way; with every number taken the exec is refused by name.
#[test]
fn a_dup2_onto_the_shims_descriptor_moves_it_and_the_exec_stays_simulated() {
    let out = shim_run(&["dup2over"], 7);
    assert_eq!(out.report.outcome, Outcome::Pass, "{}", out.render());
    let lines: Vec<&str> = out.lines.iter().map(|l| l.text.as_str()).collect();
    let want = [
        "exec'd image's host: n0",
        "dup2ing child: exited 0",
        "exec'd image's host: n0",
        "raw dup2ing child: exited 0",
    ];
    assert_eq!(lines, want);
    let all = shim_run(&["dup2all"], 7);
    let detail = match &all.report.outcome {
        Outcome::Unsupported { detail } => detail.clone(),
        other => panic!("expected unsupported, got {other:?}: {}", all.render()),
    };
    assert!(detail.contains("execve(): the program put another descriptor"), "{detail}");
}

#[test]
fn stdio_of_a_forked_child_on_pipes_is_served() {
    parity("redirect");
}

#[test]
fn a_full_pipe_makes_its_writer_wait() {
    parity("pipefull");
}

#[test]
fn waiting_for_a_child_before_reading_its_full_pipe_is_a_deadlock_named_so() {
    let out = shim_run(&["waitfirst"], 1);
    let detail = match &out.report.outcome {
        Outcome::Deadlock { detail } => detail.clone(),
        other => panic!("expected a deadlock, got {other:?}: {}", out.render()),
    };
    assert!(detail.contains("wait for a child"), "{detail}");
    assert!(detail.contains("write/send (waiting for its reader to make room)"), "{detail}");
}

#[test]
fn a_write_with_no_reader_raises_sigpipe() {
    parity("sigpipe");
}

/// What a node's own `LD_PRELOAD` names is loaded beside the shim (after it, so the shim's
/// hooks still win: the library sees the virtual pid), both from the group's environment and
/// from a shell's `LD_PRELOAD=… exec prog`; both had been replaced by the shim alone.
#[test]
fn a_users_ld_preload_is_kept_after_the_shim() {
    let lib = common::compile("preloadlib", &["-shared", "-fPIC"]);
    let lib = lib.to_str().unwrap();
    let loaded = "preloaded library loaded, pid 1000";
    let lines = |cfg: &weft_host::HostConfig| passing(cfg, 3);

    let mut cfg = weft_host::HostConfig::new("/bin/echo", vec!["main ran".into()], 1);
    cfg.groups[0].env.insert("LD_PRELOAD".into(), lib.into());
    assert_eq!(lines(&cfg), [loaded, "main ran"], "from the group's environment");

    let exec = format!("LD_PRELOAD={lib} exec /bin/echo main ran");
    let cfg = weft_host::HostConfig::new("/bin/sh", vec!["-c".into(), exec], 1);
    assert_eq!(lines(&cfg), [loaded, "main ran"], "from the shell's exec");
}

/// `cfg` run once, calm, from `seed`.
fn calm(cfg: &weft_host::HostConfig, seed: u64) -> weft_host::RunOutput {
    let mut d = Decisions::random(seed);
    weft_host::run_once(cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap()
}

/// The output lines of `cfg`'s calm run from `seed`, which must pass.
fn passing(cfg: &weft_host::HostConfig, seed: u64) -> Vec<String> {
    common::passing_lines(&calm(cfg, seed)).iter().map(|l| l.to_string()).collect()
}

fn prio(mode: &str) -> weft_host::RunOutput {
    calm(&common::config("prio", &[mode], 1), 1)
}

/// A node's program alone in its process group may set and read the group's priority (it is
/// its own: corosync does this when `sched_setscheduler` fails); it had exited 4. A group with
/// a child in it, and a user, reach processes the shim cannot name: still refused by name.
#[test]
fn the_priority_of_a_process_group_holding_the_caller_alone_is_its_own() {
    let out = prio("alone");
    assert_eq!(
        common::passing_lines(&out),
        [
            "set group 0: 0",
            "get group 0: 5 errno 0",
            "get process: 5",
            "set own group by id: 0",
            "get own group by id: 7",
            "unknown which: -1 errno EINVAL 1",
        ]
    );
    for (mode, named) in [
        ("child", "setpriority() of a process group with other processes in it"),
        ("user", "setpriority() of a user"),
    ] {
        let out = prio(mode);
        match &out.report.outcome {
            Outcome::Unsupported { detail } => assert!(detail.contains(named), "{detail}"),
            other => panic!("{mode}: expected a refusal, got {other:?}: {}", out.render()),
        }
    }
}

fn execstale(mode: &str) -> weft_host::RunOutput {
    calm(&common::config("execstale", &[mode], 1), 2)
}

/// An epoll instance, timerfd and signalfd left open across exec (Erlang's VM leaves two epoll
/// instances and two timerfds to `erl_child_setup`, which closes them first) had refused the
/// exec, exit 4. Their numbers now come across as stale rows: `dup2` over one and
/// `close_range` close them, fresh ones work in their place, as natively.
#[test]
fn epoll_timerfd_and_signalfd_left_open_across_exec_can_be_closed() {
    let bin = common::compile("execstale", &[]);
    let native = Command::new(&bin).arg("close").output().expect("run natively");
    let native = String::from_utf8(native.stdout).unwrap();
    let out = execstale("close");
    let shim: Vec<&str> = common::passing_lines(&out);
    assert_eq!(shim, native.lines().collect::<Vec<_>>());
    assert_eq!(shim.last(), Some(&"OK"), "{shim:?}");
}

/// Any other use of such a descriptor ends the run naming the call: what it was (an interest
/// list, an armed timer) stayed with the old image, and the kernel's placeholder would answer
/// something else, silently.
#[test]
fn using_an_epoll_or_timerfd_left_open_across_exec_is_refused_by_name() {
    for (mode, call) in [("epoll_wait", "epoll_wait()"), ("read", "read()")] {
        let out = execstale(mode);
        match &out.report.outcome {
            Outcome::Unsupported { detail } => {
                assert!(detail.contains(call), "{mode}: {detail}");
                assert!(detail.contains("left open across exec"), "{mode}: {detail}");
            }
            other => panic!("{mode}: expected a refusal, got {other:?}: {}", out.render()),
        }
    }
}

fn groups(seed: u64) -> Vec<String> {
    passing(&common::config("groups", &[], 1), seed)
}

/// Process groups and sessions are named by virtual pids: `getpgrp`, `getpgid` and `getsid`
/// answered the kernel's ids (weft's own group, or a real pid), different in every run, and
/// `setpgid` of a child handed the kernel a virtual pid. A node's program leads its group and
/// session, a child is in its parent's until it makes its own, and a parent can move a child
/// into a group of the child's own and back.
#[test]
fn process_groups_and_sessions_are_named_by_virtual_pids() {
    let lines = groups(1);
    assert_eq!(
        lines,
        [
            "main 1000: group 1000 session 1000 getpgid(0) 1000 getpgid(me) 1000",
            "child 20001: group 1000 session 1000",
            "child setsid: is own 1, session is own 1, group is own 1",
            "setpgid(0,0) of a session leader: -1 EPERM 1",
            "parent sees child 20001: group 20001 session 20001",
            "parent setpgid(d, d): 0",
            "parent setpgid(d, main's group): 0",
            "back in main's group: 1",
            "parent setpgid(d, 0): 0, group is its own 1",
            "getpgid(99999): -1 ESRCH 1",
            "second child 20002: group 20002",
        ]
    );
    assert_eq!(groups(2), lines, "another seed");
}

/// Signals to a process group (`killpg`, `kill(0)`, `kill(-pgid)`) reach every process of the
/// node in that group, the group named by virtual pids, and `kill(-1)` every process of the
/// node but the caller; they had ended the run, exit 4. (Not run natively here: `kill(0)`
/// would reach the test runner's own group, `kill(-1)` every process of its user. Natively, under
/// `setsid`, it prints the lines before `kill(-1)`, in an order the kernel's scheduler picks.)
#[test]
fn signals_to_a_process_group_reach_every_process_in_it() {
    for seed in [1, 2] {
        let mut lines = passing(&common::config("groupkill", &[], 1), seed);
        lines.sort_unstable();
        assert_eq!(
            lines,
            [
                "a got User defined signal 1",
                "b got User defined signal 1",
                "c got User defined signal 2",
                "d got User defined signal 1",
                "kill(-1, USR1): 0",
                "kill(-a) after a's group ended: -1 ESRCH 1",
                "kill(0, USR2): 0",
                "killpg(a's group, USR1): 0",
                "main got User defined signal 2",
                "main not signalled by kill(-1): 1",
            ],
            "seed {seed}"
        );
    }
}

fn filetimes(seed: u64) -> Vec<String> {
    let mut cfg = common::config("filetimes", &[], 1);
    // A fresh working directory per run, as `weft run` gives every node.
    cfg.work_dir = Some(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("filetimes-work"));
    passing(&cfg, seed)
}

/// A real file the run changes reads the virtual time weft first saw the change at, stamped
/// on it, whoever changed it (stdio's writes are inside libc, unseen): it had read the
/// machine's real time, different in every run (squid's `Last-Modified`). Unchanged, it keeps
/// its time; a file from before the run keeps its own.
#[test]
fn real_files_changed_during_the_run_read_virtual_times() {
    let lines = filetimes(1);
    assert_eq!(
        lines,
        [
            "made: modified at +0s",
            "untouched for 2 s: same time 1",
            "appended through stdio, looked at 1 s later: modified at +3s, accessed as modified 1, changed as modified 1",
            "read back later: modified at +3s, accessed as modified 1, changed as modified 1",
            "after a read: modified at +3s, accessed as modified 1, changed as modified 1",
            "directory made: modified at +4s, accessed as modified 1, changed as modified 1",
            "directory with a new entry: modified at +7s, accessed as modified 1, changed as modified 1",
            "statx: modified at +3s, birth time reported 0",
            "a file from before the run keeps its time: 1",
        ]
    );
    assert_eq!(filetimes(2), lines, "another seed");
}
