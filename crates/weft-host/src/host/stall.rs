//! Telling a thread that spins without a single intercepted call from one that is merely slow.
//! While the host waits for a request it samples, in real time, the CPU time every task of the
//! process has used since the first sample: a task that has burned [`SPIN_CPU`] of CPU since,
//! and is running, spins in user code (the run can never advance); at the real-time backstop
//! (`WALL_STALL_SECS`) a task that burned a sixteenth of the time since is named as spinning
//! too (a spinner sharing a loaded machine's CPU gets little of it). The report names the task
//! and where it spins: its program counter, read through ptrace, as `object+offset` and the
//! function the object's symbol table puts there. Real time decides only *that* a run that
//! cannot finish is ended; a run that completes never reaches this code, unless a thread
//! computes for seconds of CPU without one intercepted call: that looks the same. The bar was
//! an eighth of a CPU over 2 s, which named a thread computing for a second and a half (a
//! key generation, a big regular expression) as spinning, more readily on a loaded machine;
//! it is now seconds of CPU (`weft check-determinism` says how each run ended when two differ).

use std::time::Duration;

/// Real time between CPU samples.
pub(super) const SPIN_WINDOW: Duration = Duration::from_secs(1);
/// CPU time a running task may burn without an intercepted call before it counts as spinning.
pub(super) const SPIN_CPU: Duration = Duration::from_secs(4);
/// Real time waited before the first sample (a request usually comes long before).
pub(super) const SPIN_FIRST_SAMPLE: Duration = Duration::from_secs(1);

/// A process whose CPU-time limit is at most this many seconds is left to its limit.
const CPU_LIMIT_DEFERS_SECS: u64 = 10;

/// When the first CPU sample was taken (real time waited so far), the sample, and when the
/// next comparison is due.
pub(super) type Sample = (Duration, Vec<Task>, Duration);

/// A task's CPU time (user + system, clock ticks) and whether it was running or runnable
/// (state `R`) when sampled.
pub(super) type Task = (libc::pid_t, u64, bool);

/// CPU time and state of every task of `pid`, by task id.
pub(super) fn cpu_ticks(pid: libc::pid_t) -> Vec<Task> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    let mut out: Vec<Task> = dir
        .flatten()
        .filter_map(|e| {
            let tid: libc::pid_t = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
            let rest = &stat[stat.rfind(')')? + 2..];
            let f: Vec<&str> = rest.split_whitespace().collect();
            let ticks = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
            Some((tid, ticks, *f.first()? == "R"))
        })
        .collect();
    out.sort_unstable();
    out
}

/// The running (or runnable) task that used at least `bar` of CPU between the samples (a task
/// asleep at the second is not spinning: under load a thread that worked a while before it
/// blocked in a wait was named once).
pub(super) fn spinner(before: &[Task], after: &[Task], bar: Duration) -> Option<libc::pid_t> {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    let bar = (bar.as_millis() as u64 * hz / 1000).max(1);
    after
        .iter()
        .filter_map(|&(tid, t, running)| {
            let (_, t0, _) = before.iter().find(|b| b.0 == tid)?;
            (running && t.saturating_sub(*t0) >= bar).then_some(tid)
        })
        .next()
}

/// Where task `tid` of `pid` is: `pc 0x… in object+0x… (function)`, or why that is unknown.
pub(super) fn location(pid: libc::pid_t, tid: libc::pid_t) -> String {
    let Some(pc) = program_counter(tid) else {
        return "its program counter could not be read".into();
    };
    let Some((path, start, offset)) = mapping_of(pid, pc) else {
        return format!("pc {pc:#x}");
    };
    let rel = pc - start + offset;
    let func = crate::symbols::function_at(std::path::Path::new(&path), pc, start, offset)
        .map(|f| format!(" in {f}"))
        .unwrap_or_default();
    format!("pc {pc:#x}{func} ({path}+{rel:#x})")
}

/// Stops `tid` briefly with ptrace to read its instruction pointer, then lets it go.
fn program_counter(tid: libc::pid_t) -> Option<u64> {
    // SAFETY: plain ptrace requests on a task of a process this host started; the task is
    // detached again before returning, whatever happens.
    unsafe {
        if libc::ptrace(libc::PTRACE_SEIZE, tid, 0, 0) != 0 {
            return None;
        }
        let mut pc = None;
        if libc::ptrace(libc::PTRACE_INTERRUPT, tid, 0, 0) == 0 {
            let mut status = 0;
            if libc::waitpid(tid, &mut status, libc::__WALL) == tid {
                let mut regs: libc::user_regs_struct = core::mem::zeroed();
                if libc::ptrace(libc::PTRACE_GETREGS, tid, 0, &mut regs) == 0 {
                    pc = Some(regs.rip);
                }
            }
        }
        libc::ptrace(libc::PTRACE_DETACH, tid, 0, 0);
        pc
    }
}

/// The file mapping that holds `addr`: (path, mapping start, file offset of the start).
fn mapping_of(pid: libc::pid_t, addr: u64) -> Option<(String, u64, u64)> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).ok()?;
    maps.lines().find_map(|line| {
        let mut f = line.split_whitespace();
        let (range, _perms, offset) = (f.next()?, f.next()?, f.next()?);
        let path = f.nth(2)?;
        let (lo, hi) = range.split_once('-')?;
        let (lo, hi) = (u64::from_str_radix(lo, 16).ok()?, u64::from_str_radix(hi, 16).ok()?);
        ((lo..hi).contains(&addr) && path.starts_with('/'))
            .then(|| Some((path.to_string(), lo, u64::from_str_radix(offset, 16).ok()?)))
            .flatten()
    })
}

impl super::World<'_> {
    /// Called while waiting `waited` (real time) for process `p`'s request: takes the first
    /// CPU sample after [`SPIN_FIRST_SAMPLE`], compares every [`SPIN_WINDOW`] after, and names
    /// the task that has burned [`SPIN_CPU`] since (at the backstop `last`, a sixteenth of the
    /// time since will do).
    pub(super) fn spin_check(
        &self,
        p: usize,
        waited: Duration,
        last: bool,
        sample: &mut Option<Sample>,
    ) -> Option<String> {
        let pid = self.procs[p].pid;
        // A CPU limit this short ends a spinner by itself, as the user asked (resource_limit).
        let cpu_limit = self.cfg.group_of(self.procs[p].node).0.limits.cpu_secs;
        if cpu_limit > 0 && cpu_limit <= CPU_LIMIT_DEFERS_SECS {
            return None;
        }
        match sample {
            None if waited >= SPIN_FIRST_SAMPLE => {
                *sample = Some((waited, cpu_ticks(pid), waited + SPIN_WINDOW))
            }
            Some((at, first, next)) if waited >= *next || last => {
                let bar = if last { (waited - *at) / 16 } else { SPIN_CPU };
                *next = waited + SPIN_WINDOW;
                let tid = spinner(first, &cpu_ticks(pid), bar)?;
                let which =
                    if tid == pid { "main thread".to_string() } else { format!("thread {tid}") };
                return Some(format!("{which} at {}", location(pid, tid)));
            }
            _ => {}
        }
        None
    }
}
