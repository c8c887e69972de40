//! One deterministic run of N real processes: the world (virtual clock, simulated UDP sockets,
//! datagrams in flight), the baton, and how every way a run ends becomes an [`Outcome`].
//!
//! The loop: deliver what is due; wake every blocked thread whose condition now holds (in node
//! order); if some thread is runnable, let the decision source pick one and hand it the baton
//! until its next intercepted call; otherwise advance virtual time to the next deadline or
//! arrival. Time never moves while anything can run, so a run is a function of the decisions.

mod stream;

use crate::config::{HostConfig, OnIdle};

use crate::proto::*;
use crate::region::Region;
use crate::spawn::{self, SpawnSpec};
use std::collections::{BTreeMap, VecDeque};
use std::hash::Hasher;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::Ordering;
use weft_core::{
    derive_seed, Decisions, Event, EventKind, Observer, Outcome, RunReport, Scenario, SimTime,
    StableHasher, TraceHasher,
};
use weft_sim::faults::{self, Fault, FaultCounts};
use weft_sim::net::{Fate, Network};

/// One line a process printed (stdout and stderr share one pipe), stamped with the virtual
/// time of the hand-off at which the host read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputLine {
    pub time: SimTime,
    pub node: u32,
    pub text: String,
}

impl std::fmt::Display for OutputLine {
    /// `   0.012000s n1 | text`: fixed columns, greppable.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} n{} | {}", self.time, self.node, self.text)
    }
}

/// Everything one run produced.
#[derive(Clone, Debug)]
pub struct RunOutput {
    pub report: RunReport,
    /// Every process's output lines, in the (deterministic) order they were read.
    pub lines: Vec<OutputLine>,
    /// Environment notes (e.g. "no network namespace"), not part of the trace.
    pub notes: Vec<String>,
}

impl RunOutput {
    /// Every output line in `time node | text` form, one per line: what `weft run` prints.
    /// Byte-identical for the same program, config, scenario and decisions.
    pub fn render(&self) -> String {
        self.lines.iter().map(|l| format!("{l}\n")).collect()
    }
}

/// The first simulated address: node `i` is `127.1.0.(i + 1)`. Loopback on purpose: were a
/// datagram ever to escape, it could not leave the machine.
pub const NODE_IP_BASE: u32 = u32::from_be_bytes([127, 1, 0, 1]);
const LOCALHOST: u32 = u32::from_be_bytes([127, 0, 0, 1]);
const EPHEMERAL_PORT_FIRST: u16 = 49152;
const QUEUE_MAX: usize = 1024;
/// Real-time bound on one hand-off (a program in a busy loop with no intercepted call).
const WALL_STALL_SECS: u64 = 20;

/// What `getpid()` answers in node `node`'s process (in every run, and after a restart).
pub fn virtual_pid(node: u32) -> u32 {
    1000 + node
}

pub fn node_ip(node: u32) -> u32 {
    NODE_IP_BASE + node
}

pub fn format_ip(ip: u32) -> String {
    let b = ip.to_be_bytes();
    format!("{}.{}.{}.{}", b[0], b[1], b[2], b[3])
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wait {
    /// Spawned; waiting for the process's hello.
    Hello,
    /// Its answer is in its slot; it may run.
    Ready,
    Sleep(SimTime),
    Recv {
        fd: i32,
        deadline: Option<SimTime>,
        peek: bool,
        cap: usize,
    },
    /// In accept() on listening stream `fd`, into the new fd `newfd`.
    Accept {
        fd: i32,
        newfd: i32,
    },
    /// In a blocking connect() of stream `fd`.
    Connect {
        fd: i32,
    },
    /// `retry`: the thread also watches real descriptors of its process (pipes, eventfds) and
    /// looks again once any other thread of its process has run (only they can change them).
    Poll {
        count: usize,
        deadline: Option<SimTime>,
        retry: Option<u64>,
    },
    /// Created by thread `.0`, which has not yet returned from creating it: runnable from
    /// that thread's next request on.
    Unborn(usize),
    /// Until the thread with this index has ended.
    Join(usize),
    /// Until the mutex at this address (in its process) is unlocked.
    Mutex(u64),
    /// In a futex wait on this address (in its process) until woken, or the deadline.
    Futex {
        addr: u64,
        deadline: Option<SimTime>,
    },
    /// Until the condition variable at this address is signalled, or the deadline.
    Cond {
        addr: u64,
        deadline: Option<SimTime>,
    },
    Gone,
}

impl Wait {
    fn cond_addr(self) -> Option<u64> {
        match self {
            Wait::Cond { addr, .. } => Some(addr),
            _ => None,
        }
    }

    fn deadline(self) -> Option<SimTime> {
        match self {
            Wait::Sleep(t) => Some(t),
            Wait::Recv { deadline, .. }
            | Wait::Poll { deadline, .. }
            | Wait::Cond { deadline, .. }
            | Wait::Futex { deadline, .. } => deadline,
            _ => None,
        }
    }
}

/// A simulated process (one node).
struct Proc {
    node: u32,
    pid: libc::pid_t,
    out: OwnedFd,
    partial: Vec<u8>,
    alive: bool,
    /// Hand-offs made by this process's threads so far.
    steps: u64,
}

/// A simulated thread: the unit the baton passes between.
struct Thread {
    proc: usize,
    slot: usize,
    wait: Wait,
}

struct Datagram {
    src_ip: u32,
    src_port: u16,
    data: Vec<u8>,
}

#[derive(Default)]
struct Sock {
    port: u16,
    peer: Option<(u32, u16)>,
    queue: VecDeque<Datagram>,
    /// Stream sockets only.
    stream: Option<stream::Stream>,
    /// Pending error for SO_ERROR (a failed non-blocking connect).
    err: i32,
}

struct Flight {
    from: u32,
    to: u32,
    port: u16,
    msg: u64,
    dgram: Datagram,
}

/// The end of an injected fault, due at a virtual time.
#[derive(Clone, Copy, Debug)]
enum Timed {
    Start(u32),
    Restart(u32),
    Resume(u32),
    Reconnect(u32),
    Uncut(u32, u32),
}

enum Resumed {
    Request(u32),
    Died(i32),
    Stalled,
}

/// The world of one run.
pub(crate) struct World<'a> {
    cfg: &'a HostConfig,
    shim: &'a Path,
    region: Region,
    procs: Vec<Proc>,
    threads: Vec<Thread>,
    socks: BTreeMap<(u32, i32), Sock>,
    flights: BTreeMap<(SimTime, u64), Flight>,
    conns: BTreeMap<u64, stream::Conn>,
    segments: BTreeMap<(SimTime, u64), stream::Segment>,
    now: SimTime,
    seq: u64,
    next_port: Vec<u16>,
    net: Network,
    counts: FaultCounts,
    /// Per node: paused (not scheduled) until the matching `Timed::Resume`.
    paused: Vec<bool>,
    /// Per node: crashed, waiting for a restart.
    down: Vec<bool>,
    /// Fault endings due at a time: restarts, resumes, heals.
    timed: BTreeMap<(SimTime, u64), Timed>,
    /// The heal phase has begun (faults ended, nothing new injected).
    healed: bool,
    hasher: TraceHasher,
    /// Scratch: the runnable threads of the current step.
    runnable: Vec<usize>,
    /// Scratch: which nodes are up, for the fault model.
    up_scratch: Vec<bool>,
    /// The thread stepped last (it may still be spinning for its answer).
    last_stepped: Option<usize>,
    steps: u64,
    steps_since_advance: u64,
    lines: Vec<OutputLine>,
    notes: Vec<String>,
    outcome: Option<Outcome>,
    obs: &'a mut dyn Observer,
    decisions: &'a mut Decisions,
    scenario: &'a Scenario,
    /// The CPU every process is pinned to (`None`: not pinned).
    cpu: Option<usize>,
    /// Iterations the host spins waiting for a request before it sleeps (0: the processes run
    /// on the host's CPU, so they cannot answer while it spins).
    spin: u32,
    netns: bool,
}

/// Runs the configured program once. Never panics on the target's behaviour: process exits,
/// crashes, hangs and escapes are outcomes.
pub(crate) fn run(
    cfg: &HostConfig,
    shim: &Path,
    scenario: &Scenario,
    decisions: &mut Decisions,
    obs: &mut dyn Observer,
) -> io::Result<RunOutput> {
    let mut notes = Vec::new();
    if let Some(reason) = cfg.unsupported_reason() {
        return Ok(RunOutput {
            report: report(Outcome::Unsupported { detail: reason }, 0, 0, 0, SimTime::ZERO),
            lines: Vec::new(),
            notes,
        });
    }
    if cfg.nodes as usize > MAX_SLOTS {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("at most {MAX_SLOTS} nodes (asked for {})", cfg.nodes),
        ));
    }
    let netns = match cfg.netns {
        crate::config::Netns::Off => false,
        crate::config::Netns::Auto => {
            let ok = spawn::netns_available();
            if !ok {
                notes.push(
                    "no user+network namespace here: processes share the host's network \
                     (an escaped call could reach it)"
                        .to_string(),
                );
            }
            ok
        }
    };
    let pin = if cfg.pin_cpu { pin_current_thread() } else { None };
    // Spin only when the processes can run beside the host: pinned to another CPU, or not
    // pinned at all with two CPUs or more (the scheduler spreads two busy threads over them).
    let spin = match &pin {
        Some(p) if p.child_cpu == p.cpu => 0,
        None if allowed_cpus() < 2 => 0,
        _ => SPIN_ITERS,
    };
    let region = Region::new()?;
    region.set_spin(spin);
    let mut world = World {
        cfg,
        shim,
        region,
        procs: Vec::new(),
        threads: Vec::new(),
        socks: BTreeMap::new(),
        flights: BTreeMap::new(),
        conns: BTreeMap::new(),
        segments: BTreeMap::new(),
        now: SimTime::ZERO,
        seq: 0,
        next_port: vec![EPHEMERAL_PORT_FIRST; cfg.nodes as usize],
        net: Network::new(cfg.nodes as usize),
        counts: FaultCounts::default(),
        paused: vec![false; cfg.nodes as usize],
        down: vec![false; cfg.nodes as usize],
        timed: BTreeMap::new(),
        healed: false,
        hasher: TraceHasher::new(),
        runnable: Vec::new(),
        up_scratch: Vec::new(),
        last_stepped: None,
        steps: 0,
        steps_since_advance: 0,
        lines: Vec::new(),
        notes,
        outcome: None,
        obs,
        decisions,
        scenario,
        cpu: pin.as_ref().map(|p| p.child_cpu),
        spin,
        netns,
    };
    let result = world.run_loop();
    world.kill_all();
    if let Some(p) = pin {
        p.restore();
    }
    let outcome = result?;
    let faults = world.counts.total();
    let report = report(outcome, world.hasher.value(), world.hasher.events(), faults, world.now);
    Ok(RunOutput { report, lines: world.lines, notes: world.notes })
}

fn report(outcome: Outcome, hash: u64, events: u64, faults: u64, end: SimTime) -> RunReport {
    RunReport { outcome, trace_hash: hash, events, faults, end_time: end, sometimes: Vec::new() }
}

struct Pinned {
    /// The host thread's CPU.
    cpu: usize,
    /// The processes' CPU: another one the host thread may use, if there is one.
    child_cpu: usize,
    old: libc::cpu_set_t,
}

impl Pinned {
    fn restore(self) {
        // SAFETY: restoring this thread's previous affinity mask.
        unsafe {
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &self.old);
        }
    }
}

/// How many CPUs the calling thread may run on.
fn allowed_cpus() -> usize {
    // SAFETY: querying this thread's affinity into a properly sized mask.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return 1;
        }
        libc::CPU_COUNT(&set).max(1) as usize
    }
}

/// Pins the calling thread to the CPU it is on, and chooses one CPU for every process: the next
/// one the thread was allowed to use, so that both sides of a hand-off can spin briefly on the
/// turn word instead of sleeping (a round trip well under a microsecond when the other side
/// answers quickly, against two context switches of several microseconds each). Only one
/// simulated thread runs at a time, so one CPU serves every process. With a single allowed
/// CPU everything shares it, and nobody spins.
fn pin_current_thread() -> Option<Pinned> {
    // SAFETY: querying and setting this thread's affinity with properly sized masks.
    unsafe {
        let mut old: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut old) != 0 {
            return None;
        }
        let cpu = libc::sched_getcpu();
        if cpu < 0 {
            return None;
        }
        let cpu = cpu as usize;
        let n = libc::CPU_SETSIZE as usize;
        let child_cpu =
            (1..n).map(|k| (cpu + k) % n).find(|&c| libc::CPU_ISSET(c, &old)).unwrap_or(cpu);
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return None;
        }
        Some(Pinned { cpu, child_cpu, old })
    }
}

fn futex_wait_timeout(word: &std::sync::atomic::AtomicU32, expected: u32, nanos: i64) {
    let ts = libc::timespec { tv_sec: 0, tv_nsec: nanos };
    // SAFETY: shared futex wait on a word of our mapping with a relative timeout.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word as *const _,
            libc::FUTEX_WAIT,
            expected,
            &ts as *const libc::timespec,
        );
    }
}

fn futex_wake(word: &std::sync::atomic::AtomicU32) {
    // SAFETY: waking waiters on a word of our shared mapping.
    unsafe {
        libc::syscall(libc::SYS_futex, word as *const _, libc::FUTEX_WAKE, i32::MAX);
    }
}

fn signal_name(sig: i32) -> String {
    // SAFETY: strsignal returns a static or thread-local NUL-terminated string.
    let p = unsafe { libc::strsignal(sig) };
    if p.is_null() {
        return format!("signal {sig}");
    }
    // SAFETY: non-null NUL-terminated string from libc.
    let s = unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy().into_owned();
    format!("signal {sig} ({s})")
}

impl World<'_> {
    fn slot(&self, t: usize) -> *mut Slot {
        self.region.slot(self.threads[t].slot)
    }

    fn event(
        &mut self,
        node: u32,
        kind: EventKind,
        peer: Option<u32>,
        msg: Option<u64>,
        payload: u64,
        summary: impl FnOnce() -> String,
    ) {
        self.hasher.event(self.now, node, kind, peer.unwrap_or(u32::MAX), payload);
        if self.obs.wants_events() {
            self.obs.event(Event {
                index: self.hasher.events() - 1,
                time: self.now,
                node: Some(node),
                kind,
                peer,
                msg,
                summary: summary(),
                state: None,
                hash: self.hasher.value(),
            });
        }
    }

    fn fail(&mut self, outcome: Outcome) {
        if self.outcome.is_none() {
            self.outcome = Some(outcome);
        }
    }

    fn run_loop(&mut self) -> io::Result<Outcome> {
        for node in 0..self.cfg.nodes {
            match self.cfg.start_at(node) {
                Some(at) => self.after(SimTime::ZERO + at, Timed::Start(node)),
                None => self.start(node)?,
            }
            if let Some(o) = self.outcome.take() {
                return Ok(o);
            }
        }
        loop {
            if let Some(o) = self.outcome.take() {
                return Ok(o);
            }
            self.timed_due()?;
            self.deliver_due();
            self.deliver_segments();
            self.wake_blocked();
            // Reused from step to step: this loop runs once per hand-off.
            self.runnable.clear();
            for t in 0..self.threads.len() {
                if self.threads[t].wait == Wait::Ready
                    && !self.paused[self.procs[self.threads[t].proc].node as usize]
                {
                    self.runnable.push(t);
                }
            }
            if self.runnable.is_empty() {
                if let Some(o) = self.advance() {
                    return Ok(o);
                }
                continue;
            }
            if self.steps >= self.scenario.max_events {
                return Ok(Outcome::BudgetExhausted {
                    detail: format!("{} intercepted calls", self.steps),
                });
            }
            if self.steps_since_advance >= self.cfg.hang_events {
                return Ok(Outcome::Deadlock {
                    detail: format!(
                        "hang: {} intercepted calls without virtual time advancing at {}",
                        self.steps_since_advance, self.now
                    ),
                });
            }
            if self.fault_opportunity() {
                continue;
            }
            let pick = self.runnable[self.decisions.choose(self.runnable.len() as u64) as usize];
            self.steps += 1;
            self.steps_since_advance += 1;
            self.step(pick);
        }
    }

    /// Spawns node `node` and waits for its hello (the process then waits for the baton).
    fn start(&mut self, node: u32) -> io::Result<()> {
        let slot = node as usize;
        self.region.reset_slot(slot);
        let launch = self.cfg.launch(node);
        let spawned = spawn::spawn(&SpawnSpec {
            launch: &launch,
            shim: self.shim,
            region_fd: self.region.fd(),
            slot,
            cpu: self.cpu,
            netns: self.netns,
            ip: node_ip(node),
        })?;
        self.procs.push(Proc {
            node,
            pid: spawned.pid,
            out: spawned.out,
            partial: Vec::new(),
            alive: true,
            steps: 0,
        });
        let p = self.procs.len() - 1;
        self.threads.push(Thread { proc: p, slot, wait: Wait::Hello });
        let t = self.threads.len() - 1;
        self.event(node, EventKind::Start, None, None, 0, || {
            format!("start {} as {}", launch.program.display(), format_ip(node_ip(node)))
        });
        match self.wait_for_request(t) {
            Resumed::Request(OP_HELLO) => {
                let seed = derive_seed(self.decisions.choose(u64::MAX), node as u64);
                let s = self.slot(t);
                // SAFETY: the process waits for TURN_THREAD; the host owns the slot fields.
                unsafe {
                    (*s).args[0] = seed as i64;
                    (*s).args[1] = virtual_pid(node) as i64;
                    (*s).ret = 0;
                }
                self.threads[t].wait = Wait::Ready;
            }
            Resumed::Request(op) => self.handle(t, op),
            Resumed::Died(status) => {
                self.died(p, status);
                self.fail(Outcome::Unsupported {
                    detail: format!(
                        "node {node} ended before the shim made contact (is it setuid, or \
                         does it not load libc dynamically?)"
                    ),
                });
            }
            Resumed::Stalled => self.fail(Outcome::Unsupported {
                detail: format!(
                    "node {node} never contacted the host within {WALL_STALL_SECS}s: the shim \
                     did not load"
                ),
            }),
        }
        Ok(())
    }

    /// Gives the baton to `p` and handles what it asks next.
    fn step(&mut self, t: usize) {
        let s = self.slot(t);
        // SAFETY: `t` is waiting on its turn word; storing TURN_THREAD hands it the baton.
        let turn = unsafe { &(*s).turn };
        let asleep = turn.swap(TURN_THREAD, Ordering::AcqRel) & TURN_SLEEPING != 0;
        let passed = self.park_last_stepped(t, asleep);
        if asleep && !passed {
            futex_wake(turn);
        }
        let p = self.threads[t].proc;
        self.procs[p].steps += 1;
        match self.wait_for_request(t) {
            Resumed::Request(op) => self.handle(t, op),
            Resumed::Died(status) => self.died(p, status),
            Resumed::Stalled => {
                let node = self.procs[p].node;
                let blocked = blocked_in(self.procs[p].pid);
                self.fail(Outcome::Deadlock {
                    detail: format!(
                        "node {node} ran {WALL_STALL_SECS}s of real time without an intercepted \
                         call at {} ({blocked})",
                        self.now
                    ),
                });
            }
        }
    }

    /// When another thread than the last one runs next: tells the last one, which may be
    /// spinning for its answer on the CPU the next one needs, to sleep instead (`TURN_SLEEPING`
    /// set on its behalf; it is then woken when its turn comes). If `next` sleeps, the parked
    /// thread is also asked to wake it (`TURN_PASS`), from the CPU they share; answers whether
    /// it took that on (else the caller wakes `next`). Setting the bits on a thread that waits
    /// for the host is always safe: it can only make that thread wake `next` and sleep.
    fn park_last_stepped(&mut self, next: usize, next_asleep: bool) -> bool {
        let Some(last) = self.last_stepped.replace(next) else { return false };
        if last == next || self.threads[last].wait == Wait::Gone {
            return false;
        }
        let s = self.slot(last);
        // SAFETY: the slot's atomics live in the live mapping.
        let (turn, pass_to) = unsafe { (&(*s).turn, &(*s).pass_to) };
        let mut parked = TURN_HOST | TURN_SLEEPING;
        if next_asleep && self.spin > 0 {
            pass_to.store(self.threads[next].slot as u32, Ordering::Relaxed);
            parked |= TURN_PASS;
        }
        turn.compare_exchange(TURN_HOST, parked, Ordering::AcqRel, Ordering::Relaxed).is_ok()
            && parked & TURN_PASS != 0
    }

    /// Waits until thread `t` stores TURN_HOST (a request), dies, or stalls: spins first when
    /// the processes run on another CPU, then sleeps (announced with TURN_SLEEPING, so the
    /// thread wakes us; see proto.rs), waking every 2 ms to notice a death or a stall.
    fn wait_for_request(&mut self, t: usize) -> Resumed {
        let p = self.threads[t].proc;
        let s = self.slot(t);
        // SAFETY: the turn word is an atomic in the live mapping.
        let turn = unsafe { &(*s).turn };
        let requested = |v: u32| v & !TURN_FLAGS == TURN_HOST;
        let mut spins = 0;
        while spins < self.spin && !requested(turn.load(Ordering::Acquire)) {
            std::hint::spin_loop();
            spins += 1;
        }
        // Read on the first sleep only: a request that comes while spinning needs no clock.
        let mut started = None;
        loop {
            let v = turn.load(Ordering::Acquire);
            if requested(v) {
                self.drain(p);
                // SAFETY: the process has handed us the baton; the slot is ours to read.
                return Resumed::Request(unsafe { (*s).op });
            }
            if v & TURN_SLEEPING == 0
                && turn
                    .compare_exchange(v, v | TURN_SLEEPING, Ordering::AcqRel, Ordering::Acquire)
                    .is_err()
            {
                continue; // the word changed: look again
            }
            #[allow(clippy::disallowed_methods)] // real-time stall watchdog, not simulated time
            let started = *started.get_or_insert_with(std::time::Instant::now);
            futex_wait_timeout(turn, v | TURN_SLEEPING, 2_000_000);
            if requested(turn.load(Ordering::Acquire)) {
                continue;
            }
            // A wake passed to a parked thread is lost if that thread's process died first:
            // wake again (a thread woken for nothing looks at its turn and sleeps again).
            futex_wake(turn);
            self.drain(p);
            if let Some(status) = self.try_reap(p) {
                return Resumed::Died(status);
            }
            if started.elapsed().as_secs() >= WALL_STALL_SECS {
                return Resumed::Stalled;
            }
        }
    }

    fn try_reap(&mut self, p: usize) -> Option<i32> {
        let mut status = 0;
        let r = spawn::reap(self.procs[p].pid, &mut status, libc::WNOHANG);
        (r == self.procs[p].pid).then_some(status)
    }

    /// Reads everything `p` has written so far and turns complete lines into output events.
    /// Called at every hand-off, so it reads straight into `partial`'s spare capacity (no
    /// buffer to clear) and usually costs one `read` that finds the pipe empty.
    fn drain(&mut self, p: usize) {
        let proc = &mut self.procs[p];
        loop {
            proc.partial.reserve(8192);
            let spare = proc.partial.spare_capacity_mut();
            // SAFETY: reading at most `spare.len()` bytes into the vector's spare capacity from
            // our non-blocking pipe end.
            let n =
                unsafe { libc::read(proc.out.as_raw_fd(), spare.as_mut_ptr().cast(), spare.len()) };
            if n <= 0 {
                break;
            }
            let len = proc.partial.len() + n as usize;
            // SAFETY: `read` initialised the first `n` bytes of the spare capacity.
            unsafe { proc.partial.set_len(len) };
        }
        while let Some(i) = self.procs[p].partial.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.procs[p].partial.drain(..=i).collect();
            self.emit_line(p, &line[..line.len() - 1]);
        }
    }

    fn emit_line(&mut self, p: usize, bytes: &[u8]) {
        let node = self.procs[p].node;
        let text = String::from_utf8_lossy(bytes).into_owned();
        let mut h = StableHasher::new();
        h.write(bytes);
        let t = text.clone();
        self.event(node, EventKind::Observe, None, None, h.finish(), || t);
        if let Some(pattern) = &self.cfg.forbid {
            if text.contains(pattern.as_str()) {
                let detail = format!("node {node} printed `{text}` at {}", self.now);
                let d = detail.clone();
                self.event(node, EventKind::Violation, None, None, 0, || {
                    format!("no_forbidden_output: {d}")
                });
                self.fail(Outcome::SafetyViolation {
                    property: "no_forbidden_output".into(),
                    detail,
                });
            }
        }
        self.lines.push(OutputLine { time: self.now, node, text });
    }

    /// A process ended (`status` from waitpid).
    fn died(&mut self, p: usize, status: i32) {
        self.drain(p);
        if !self.procs[p].partial.is_empty() {
            let rest = std::mem::take(&mut self.procs[p].partial);
            self.emit_line(p, &rest);
        }
        let node = self.procs[p].node;
        self.mark_gone(p);
        let fds: Vec<(u32, i32)> =
            self.socks.range((node, i32::MIN)..=(node, i32::MAX)).map(|(k, _)| *k).collect();
        for k in fds {
            // As the kernel does at exit: connected streams end with a FIN.
            self.stream_close(k.0, k.1);
            self.socks.remove(&k);
        }
        if libc::WIFEXITED(status) {
            let code = libc::WEXITSTATUS(status);
            self.event(node, EventKind::Note, None, None, code as u64, || format!("exit {code}"));
            if !self.cfg.exit_ok(node, code) {
                let limit = self.cfg.limit_outcome(node, self.procs[p].pid, status, self.now);
                self.fail(limit.unwrap_or(Outcome::TargetCrashed {
                    detail: format!("node {node} exited with status {code} at {}", self.now),
                }));
            }
        } else if libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGSYS {
            // The seccomp trap fired while the program had SIGSYS blocked or ignored, so the
            // kernel killed it instead of letting the shim report the call.
            self.event(node, EventKind::Crash, None, None, libc::SIGSYS as u64, || {
                "killed by SIGSYS".into()
            });
            self.fail(Outcome::Unsupported {
                detail: format!(
                    "node {node} made a raw system call the shim traps while SIGSYS was blocked \
                     or ignored (killed by SIGSYS at {})",
                    self.now
                ),
            });
        } else if libc::WIFSIGNALED(status) {
            let sig = libc::WTERMSIG(status);
            self.event(node, EventKind::Crash, None, None, sig as u64, || {
                format!("killed by {}", signal_name(sig))
            });
            let limit = self.cfg.limit_outcome(node, self.procs[p].pid, status, self.now);
            self.fail(limit.unwrap_or(Outcome::TargetCrashed {
                detail: format!("node {node} was killed by {} at {}", signal_name(sig), self.now),
            }));
        }
    }

    /// The process announced its exit: wait (in real time, nothing else runs) until it is gone.
    fn await_exit(&mut self, p: usize) {
        #[allow(clippy::disallowed_methods)] // real-time bound on a process's exit path
        let started = std::time::Instant::now();
        loop {
            self.drain(p);
            if let Some(status) = self.try_reap(p) {
                self.died(p, status);
                return;
            }
            if started.elapsed().as_secs() >= WALL_STALL_SECS {
                // SAFETY: killing our own child.
                unsafe { libc::kill(self.procs[p].pid, libc::SIGKILL) };
            }
            std::thread::sleep(std::time::Duration::from_micros(20));
        }
    }

    /// Process `p` no longer exists, nor do its threads.
    fn mark_gone(&mut self, p: usize) {
        self.procs[p].alive = false;
        for t in self.threads.iter_mut().filter(|t| t.proc == p) {
            t.wait = Wait::Gone;
        }
    }

    fn kill_all(&mut self) {
        for p in 0..self.procs.len() {
            if self.procs[p].alive {
                let mut status = 0;
                // SAFETY: killing and reaping our own child.
                unsafe {
                    libc::kill(self.procs[p].pid, libc::SIGKILL);
                    libc::waitpid(self.procs[p].pid, &mut status, 0);
                }
                self.mark_gone(p);
            }
        }
    }

    fn handle(&mut self, t: usize, op: u32) {
        let s = self.slot(t);
        let p = self.threads[t].proc;
        let node = self.procs[p].node;
        // Threads `t` created are alive now that it is back.
        for x in self.threads.iter_mut() {
            if x.wait == Wait::Unborn(t) {
                x.wait = Wait::Ready;
            }
        }
        // SAFETY: the process holds TURN_HOST and waits: the slot's fields are ours until we
        // hand the baton back.
        let slot = unsafe { &mut *s };
        let fd = slot.args[0] as i32;
        // Answers `$ret` to `p`, which may then run (through `slot`, the one live reference).
        macro_rules! ready {
            ($ret:expr) => {{
                let ret = $ret;
                slot.ret = ret;
                self.threads[t].wait = Wait::Ready;
            }};
        }
        match op {
            OP_SLEEP => {
                let until = SimTime(slot.args[0] as u64);
                if until <= self.now {
                    ready!(0);
                } else {
                    self.threads[t].wait = Wait::Sleep(until);
                }
            }
            OP_SPIN | OP_YIELD | OP_HELLO => ready!(0),
            OP_SOCKET => {
                let stream = (slot.args[1] != 0).then_some(stream::Stream::Fresh);
                self.socks.insert((node, fd), Sock { stream, ..Sock::default() });
                ready!(0);
            }
            OP_CLOSE => {
                self.stream_close(node, fd);
                self.socks.remove(&(node, fd));
                ready!(0);
            }
            OP_LISTEN => {
                let r = self.stream_listen(node, fd);
                ready!(r);
            }
            OP_ACCEPT => {
                let newfd = slot.args[1] as i32;
                let nonblock = slot.args[2] != 0;
                match self.stream_accept(node, fd, newfd, slot) {
                    Some(r) => ready!(r),
                    None if nonblock => ready!(-(libc::EAGAIN as i64)),
                    None => self.threads[t].wait = Wait::Accept { fd, newfd },
                }
            }
            OP_SHUTDOWN => {
                let r = self.stream_shutdown(node, fd, slot.args[1] as i32);
                ready!(r);
            }
            OP_GETPEERNAME => {
                let r = match self.socks.get(&(node, fd)) {
                    None => -(libc::EBADF as i64),
                    Some(sock) => {
                        match (sock.stream.is_some(), self.stream_peer(node, fd), sock.peer) {
                            (true, Some((ip, port)), _) | (false, _, Some((ip, port))) => {
                                slot.addr_ip = ip;
                                slot.addr_port = port;
                                0
                            }
                            _ => -(libc::ENOTCONN as i64),
                        }
                    }
                };
                ready!(r);
            }
            OP_SOCKERR => {
                let r = match self.socks.get_mut(&(node, fd)) {
                    Some(s) => std::mem::take(&mut s.err) as i64,
                    None => libc::EBADF as i64,
                };
                ready!(r);
            }
            OP_BIND => {
                let r = self.bind(node, fd, slot.addr_ip, slot.addr_port);
                ready!(r);
            }
            OP_CONNECT if self.socks.get(&(node, fd)).is_some_and(|s| s.stream.is_some()) => {
                let ip = if slot.addr_ip == LOCALHOST { node_ip(node) } else { slot.addr_ip };
                let nonblock = slot.args[1] != 0;
                match self.stream_connect(node, fd, ip, slot.addr_port, nonblock) {
                    Some(r) => ready!(r),
                    None => self.threads[t].wait = Wait::Connect { fd },
                }
            }
            OP_CONNECT => {
                let r = if !self.socks.contains_key(&(node, fd)) {
                    -(libc::EBADF as i64)
                } else {
                    self.autobind(node, fd);
                    let ip = if slot.addr_ip == LOCALHOST { node_ip(node) } else { slot.addr_ip };
                    if let Some(sock) = self.socks.get_mut(&(node, fd)) {
                        sock.peer = Some((ip, slot.addr_port));
                    }
                    0
                };
                ready!(r);
            }
            OP_GETSOCKNAME => {
                let r = match self.socks.get(&(node, fd)) {
                    None => -(libc::EBADF as i64),
                    Some(sock) => {
                        slot.addr_ip = if sock.port == 0 { 0 } else { node_ip(node) };
                        slot.addr_port = sock.port;
                        0
                    }
                };
                ready!(r);
            }
            OP_SENDTO if self.socks.get(&(node, fd)).is_some_and(|s| s.stream.is_some()) => {
                let len = (slot.len as usize).min(DATA_MAX);
                let r = self.stream_send(node, fd, &slot.data[..len]);
                ready!(r);
            }
            OP_SENDTO => {
                let r = self.sendto(node, slot);
                ready!(r);
            }
            OP_RECVFROM => {
                let nonblock = slot.args[1] != 0;
                let deadline = (slot.args[2] > 0).then_some(SimTime(slot.args[2] as u64));
                let peek = slot.args[4] != 0;
                let cap = slot.args[3].max(0) as usize;
                if !self.socks.contains_key(&(node, fd)) {
                    ready!(-(libc::EBADF as i64));
                } else if let Some(r) = self.try_recv(node, fd, peek, cap, slot) {
                    ready!(r);
                } else if nonblock || deadline.is_some_and(|d| d <= self.now) {
                    ready!(-(libc::EAGAIN as i64));
                } else {
                    self.threads[t].wait = Wait::Recv { fd, deadline, peek, cap };
                }
            }
            OP_POLL => {
                let count = (slot.args[0] as usize).min(POLL_MAX);
                let deadline =
                    (slot.args[1] as u64 != u64::MAX).then_some(SimTime(slot.args[1] as u64));
                let n = self.poll_ready(node, slot, count);
                if n > 0 || deadline.is_some_and(|d| d <= self.now) {
                    ready!(n as i64);
                } else {
                    let retry = (slot.args[2] != 0).then_some(self.procs[p].steps);
                    self.threads[t].wait = Wait::Poll { count, deadline, retry };
                }
            }
            OP_EXIT => self.await_exit(p),
            OP_THREAD_NEW => match self.free_slot() {
                None => ready!(-(libc::EAGAIN as i64)),
                Some(k) => {
                    self.region.reset_slot(k);
                    // The new thread waits for the baton before running any program code.
                    self.threads.push(Thread { proc: p, slot: k, wait: Wait::Unborn(t) });
                    let n = self.threads.len() - 1;
                    self.event(node, EventKind::Note, None, None, n as u64, || {
                        format!("thread {n} created")
                    });
                    ready!(k as i64);
                }
            },
            OP_THREAD_EXIT => self.threads[t].wait = Wait::Gone,
            OP_FILE => {
                let len = (slot.len as usize).min(DATA_MAX);
                let mut h = StableHasher::new();
                for a in &slot.args[..5] {
                    h.write_u64(*a as u64);
                }
                h.write(&slot.data[..len]);
                let summary = file_summary(slot);
                self.event(node, EventKind::Note, None, None, h.finish(), || summary);
                ready!(0);
            }
            OP_THREAD_ABORT => {
                let k = slot.args[0] as usize;
                for x in self.threads.iter_mut() {
                    // Already made runnable above, as every thread `t` created is.
                    if x.slot == k && x.proc == p && x.wait != Wait::Gone {
                        x.wait = Wait::Gone;
                    }
                }
                ready!(0);
            }
            OP_JOIN => {
                let k = slot.args[0] as usize;
                match self.threads.iter().rposition(|x| x.proc == p && x.slot == k) {
                    Some(j) if self.threads[j].wait != Wait::Gone => {
                        self.threads[t].wait = Wait::Join(j)
                    }
                    _ => ready!(0),
                }
            }
            OP_MUTEX_WAIT => self.threads[t].wait = Wait::Mutex(slot.args[0] as u64),
            OP_MUTEX_UNLOCK => {
                self.wake_mutex(p, slot.args[0] as u64);
                ready!(0);
            }
            OP_COND_WAIT => {
                self.wake_mutex(p, slot.args[1] as u64);
                let deadline =
                    (slot.args[2] as u64 != u64::MAX).then_some(SimTime(slot.args[2] as u64));
                let addr = slot.args[0] as u64;
                if deadline.is_some_and(|d| d <= self.now) {
                    ready!(-(libc::ETIMEDOUT as i64));
                } else {
                    self.threads[t].wait = Wait::Cond { addr, deadline };
                }
            }
            OP_FUTEX_WAIT => {
                let addr = slot.args[0] as u64;
                let deadline =
                    (slot.args[1] as u64 != u64::MAX).then_some(SimTime(slot.args[1] as u64));
                if deadline.is_some_and(|d| d <= self.now) {
                    ready!(-(libc::ETIMEDOUT as i64));
                } else {
                    self.threads[t].wait = Wait::Futex { addr, deadline };
                }
            }
            OP_FUTEX_WAKE => {
                let addr = slot.args[0] as u64;
                let mut waiters: Vec<usize> = (0..self.threads.len())
                    .filter(|&j| {
                        self.threads[j].proc == p
                            && matches!(self.threads[j].wait, Wait::Futex { addr: a, .. } if a == addr)
                    })
                    .collect();
                let n = (slot.args[1].max(0) as usize).min(waiters.len());
                // Which waiters a partial wake picks is a decision (0: the earliest created thread).
                let mut woken = 0;
                while woken < n {
                    let i = self.decisions.choose(waiters.len() as u64) as usize;
                    let j = waiters.remove(i);
                    self.answer(j, 0);
                    woken += 1;
                }
                ready!(woken as i64);
            }
            OP_COND_SIGNAL => {
                let addr = slot.args[0] as u64;
                let waiters: Vec<usize> = (0..self.threads.len())
                    .filter(|&j| {
                        self.threads[j].proc == p && self.threads[j].wait.cond_addr() == Some(addr)
                    })
                    .collect();
                let woken: Vec<usize> = if slot.args[1] != 0 || waiters.len() <= 1 {
                    waiters
                } else {
                    vec![waiters[self.decisions.choose(waiters.len() as u64) as usize]]
                };
                for j in woken {
                    self.answer(j, 0);
                }
                ready!(0);
            }
            OP_UNSUPPORTED => {
                let len = (slot.len as usize).min(DATA_MAX);
                let what = String::from_utf8_lossy(&slot.data[..len]).into_owned();
                let detail = format!("node {node}: {what}");
                self.event(node, EventKind::Note, None, None, slot.args[0] as u64, || {
                    format!("unsupported: {what}")
                });
                self.fail(Outcome::Unsupported { detail });
                // SAFETY: killing our own child, which does not wait for an answer.
                unsafe { libc::kill(self.procs[p].pid, libc::SIGKILL) };
                let mut status = 0;
                // SAFETY: reaping our own child.
                unsafe { libc::waitpid(self.procs[p].pid, &mut status, 0) };
                self.mark_gone(p);
            }
            other => {
                self.fail(Outcome::Unsupported {
                    detail: format!("node {node}: unknown request {other} (shim/host mismatch)"),
                });
            }
        }
    }

    /// Answers `ret` to blocked thread `t` (not the one whose slot `handle` holds).
    fn answer(&mut self, t: usize, ret: i64) {
        let s = self.slot(t);
        // SAFETY: `t` waits for TURN_THREAD; its slot is ours.
        unsafe { (*s).ret = ret };
        self.threads[t].wait = Wait::Ready;
    }

    /// Wakes every thread of process `p` waiting for the mutex at `addr` (they retry), also
    /// those in a timed lock (waiting on the address as on a condition variable).
    fn wake_mutex(&mut self, p: usize, addr: u64) {
        for j in 0..self.threads.len() {
            let w = self.threads[j].wait;
            if self.threads[j].proc == p && (w == Wait::Mutex(addr) || w.cond_addr() == Some(addr))
            {
                self.answer(j, 0);
            }
        }
    }

    /// The lowest slot no live thread uses (slots below `nodes` belong to main threads).
    fn free_slot(&self) -> Option<usize> {
        (self.cfg.nodes as usize..MAX_SLOTS)
            .find(|&k| !self.threads.iter().any(|t| t.slot == k && t.wait != Wait::Gone))
    }

    fn bind(&mut self, node: u32, fd: i32, ip: u32, port: u16) -> i64 {
        if !self.socks.contains_key(&(node, fd)) {
            return -(libc::EBADF as i64);
        }
        if ip != 0 && ip != node_ip(node) && ip != LOCALHOST {
            return -(libc::EADDRNOTAVAIL as i64);
        }
        if self.socks[&(node, fd)].port != 0 {
            return -(libc::EINVAL as i64);
        }
        let port = if port == 0 { self.ephemeral(node) } else { port };
        if self.port_owner(node, port).is_some() {
            return -(libc::EADDRINUSE as i64);
        }
        if let Some(s) = self.socks.get_mut(&(node, fd)) {
            s.port = port;
        }
        0
    }

    fn port_owner(&self, node: u32, port: u16) -> Option<i32> {
        self.socks
            .range((node, i32::MIN)..=(node, i32::MAX))
            .find(|(_, s)| s.port == port)
            .map(|(k, _)| k.1)
    }

    fn ephemeral(&mut self, node: u32) -> u16 {
        loop {
            let port = self.next_port[node as usize];
            self.next_port[node as usize] =
                if port == u16::MAX { EPHEMERAL_PORT_FIRST } else { port + 1 };
            if self.port_owner(node, port).is_none() {
                return port;
            }
        }
    }

    fn autobind(&mut self, node: u32, fd: i32) {
        if self.socks.get(&(node, fd)).is_some_and(|s| s.port == 0) {
            let port = self.ephemeral(node);
            if let Some(s) = self.socks.get_mut(&(node, fd)) {
                s.port = port;
            }
        }
    }

    /// The node an address belongs to (localhost and the node's own address are itself).
    fn node_of(&self, from: u32, ip: u32) -> Option<u32> {
        if ip == LOCALHOST {
            return Some(from);
        }
        let n = ip.wrapping_sub(NODE_IP_BASE);
        (ip >= NODE_IP_BASE && n < self.cfg.nodes).then_some(n)
    }

    fn sendto(&mut self, node: u32, slot: &mut Slot) -> i64 {
        let fd = slot.args[0] as i32;
        let Some(sock) = self.socks.get(&(node, fd)) else { return -(libc::EBADF as i64) };
        let (ip, port) = if slot.addr_ip == 0 && slot.addr_port == 0 {
            match sock.peer {
                Some(peer) => peer,
                None => return -(libc::EDESTADDRREQ as i64),
            }
        } else {
            (slot.addr_ip, slot.addr_port)
        };
        self.autobind(node, fd);
        let src_port = self.socks[&(node, fd)].port;
        let len = (slot.len as usize).min(DATA_MAX);
        let data = slot.data[..len].to_vec();
        let mut h = StableHasher::new();
        h.write(&data);
        let payload = h.finish();
        let Some(to) = self.node_of(node, ip) else {
            // No such host in the simulated network: UDP loses it silently.
            self.event(node, EventKind::Drop, None, None, payload, || {
                format!("{len} bytes to {}:{port}: no such node", format_ip(ip))
            });
            return len as i64;
        };
        self.seq += 1;
        let msg = self.seq;
        self.event(node, EventKind::Send, Some(to), Some(msg), payload, || {
            format!("{len} bytes :{src_port} -> n{to}:{port}")
        });
        let faulty = !self.healed;
        let fate = self.net.route(
            (node, to),
            self.now,
            self.scenario,
            faulty,
            &mut self.counts,
            self.decisions,
        );
        let arrivals = match fate {
            Fate::Cut => {
                self.event(node, EventKind::Drop, Some(to), Some(msg), payload, || {
                    "lost: link cut".into()
                });
                vec![]
            }
            Fate::Drop => {
                self.event(node, EventKind::Drop, Some(to), Some(msg), payload, || {
                    "dropped".into()
                });
                vec![]
            }
            Fate::Deliver(at) => vec![at],
            Fate::Duplicate(a, b) => {
                self.event(node, EventKind::Duplicate, Some(to), Some(msg), payload, || {
                    "duplicated".into()
                });
                vec![a, b]
            }
        };
        for at in arrivals {
            self.seq += 1;
            let dgram = Datagram { src_ip: node_ip(node), src_port, data: data.clone() };
            self.flights.insert((at, self.seq), Flight { from: node, to, port, msg, dgram });
        }
        len as i64
    }

    /// Receives on `fd` into the slot: a datagram popped (or peeked), or stream bytes. None if
    /// nothing is there yet.
    fn try_recv(
        &mut self,
        node: u32,
        fd: i32,
        peek: bool,
        cap: usize,
        slot: &mut Slot,
    ) -> Option<i64> {
        let sock = self.socks.get_mut(&(node, fd))?;
        if sock.stream.is_some() {
            return self.stream_try_recv(node, fd, peek, cap, slot);
        }
        if peek {
            write_dgram(slot, sock.queue.front()?);
        } else {
            write_dgram(slot, &sock.queue.pop_front()?);
        }
        Some(slot.ret)
    }

    fn poll_ready(&self, node: u32, slot: &mut Slot, count: usize) -> usize {
        let mut n = 0;
        for e in slot.polls[..count].iter_mut() {
            e.revents = 0;
            if e.fd < 0 {
                continue;
            }
            match self.socks.get(&(node, e.fd)) {
                None => e.revents = libc::POLLNVAL,
                Some(s) if s.stream.is_some() => {
                    e.revents = self.stream_revents(node, e.fd, e.events)
                }
                Some(s) => {
                    if e.events & libc::POLLIN != 0 && !s.queue.is_empty() {
                        e.revents |= libc::POLLIN;
                    }
                    if e.events & libc::POLLOUT != 0 {
                        e.revents |= libc::POLLOUT;
                    }
                }
            }
            if e.revents != 0 {
                n += 1;
            }
        }
        n
    }

    fn deliver_due(&mut self) {
        while let Some(entry) = self.flights.first_entry() {
            if entry.key().0 > self.now {
                break;
            }
            let f = entry.remove();
            let payload = {
                let mut h = StableHasher::new();
                h.write(&f.dgram.data);
                h.finish()
            };
            let alive = self.procs.iter().any(|p| p.node == f.to && p.alive);
            let owner = if alive { self.port_owner(f.to, f.port) } else { None };
            let Some(fd) = owner else {
                self.event(f.to, EventKind::Drop, Some(f.from), Some(f.msg), payload, || {
                    format!("nothing bound to port {} on n{}", f.port, f.to)
                });
                continue;
            };
            let len = f.dgram.data.len();
            let sock = self.socks.get_mut(&(f.to, fd)).expect("owner exists");
            if sock.queue.len() >= QUEUE_MAX {
                self.event(f.to, EventKind::Drop, Some(f.from), Some(f.msg), payload, || {
                    "receive queue full".into()
                });
                continue;
            }
            sock.queue.push_back(f.dgram);
            self.event(f.to, EventKind::Deliver, Some(f.from), Some(f.msg), payload, || {
                format!("{len} bytes from n{} -> :{}", f.from, f.port)
            });
        }
    }

    /// Makes every blocked thread whose condition holds runnable, in creation order.
    fn wake_blocked(&mut self) {
        for t in 0..self.threads.len() {
            let node = self.procs[self.threads[t].proc].node;
            let s = self.slot(t);
            // SAFETY: blocked processes wait for TURN_THREAD; their slots are ours.
            let slot = unsafe { &mut *s };
            match self.threads[t].wait {
                Wait::Sleep(until) if until <= self.now => {
                    slot.ret = 0;
                    self.threads[t].wait = Wait::Ready;
                }
                Wait::Accept { .. } | Wait::Connect { .. } => {
                    self.wake_stream_waiter(t, node, slot)
                }
                Wait::Recv { fd, deadline, peek, cap } => {
                    if let Some(r) = self.try_recv(node, fd, peek, cap, slot) {
                        slot.ret = r;
                        self.threads[t].wait = Wait::Ready;
                    } else if !self.socks.contains_key(&(node, fd)) {
                        slot.ret = -(libc::EBADF as i64);
                        self.threads[t].wait = Wait::Ready;
                    } else if deadline.is_some_and(|d| d <= self.now) {
                        slot.ret = -(libc::EAGAIN as i64);
                        self.threads[t].wait = Wait::Ready;
                    }
                }
                Wait::Poll { count, deadline, retry } => {
                    let n = self.poll_ready(node, slot, count);
                    let look_again =
                        retry.is_some_and(|s| s != self.procs[self.threads[t].proc].steps);
                    if n > 0 || look_again || deadline.is_some_and(|d| d <= self.now) {
                        slot.ret = n as i64;
                        self.threads[t].wait = Wait::Ready;
                    }
                }
                Wait::Join(j) if self.threads[j].wait == Wait::Gone => {
                    slot.ret = 0;
                    self.threads[t].wait = Wait::Ready;
                }
                Wait::Futex { deadline: Some(d), .. } if d <= self.now => {
                    slot.ret = -(libc::ETIMEDOUT as i64);
                    self.threads[t].wait = Wait::Ready;
                }
                Wait::Cond { deadline: Some(d), .. } if d <= self.now => {
                    slot.ret = -(libc::ETIMEDOUT as i64);
                    self.threads[t].wait = Wait::Ready;
                }
                _ => {}
            }
        }
    }

    /// Nothing can run: move virtual time to the next deadline or arrival, or end the run.
    fn advance(&mut self) -> Option<Outcome> {
        let next_flight = self.flights.keys().next().map(|k| k.0);
        let next_segment = self.segments.keys().next().map(|k| k.0);
        let next_flight = match (next_flight, next_segment) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let next_deadline = self
            .threads
            .iter()
            .filter_map(|t| t.wait.deadline())
            .chain(self.timed.keys().next().map(|k| k.0))
            .chain(self.heal_pending().then_some(SimTime::ZERO + self.scenario.fault_phase))
            .min();
        let next = match (next_flight, next_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let live = self.threads.iter().filter(|t| t.wait != Wait::Gone).count();
        let limit = SimTime::ZERO + self.cfg.time_limit;
        match next {
            None if live == 0 => Some(Outcome::Pass),
            None => match self.cfg.on_idle {
                OnIdle::Pass => Some(Outcome::Pass),
                OnIdle::Deadlock => Some(Outcome::Deadlock {
                    detail: format!(
                        "at {}: {live} thread(s) blocked with no timer and nothing in flight",
                        self.now
                    ),
                }),
            },
            Some(t) if t > limit => {
                self.set_now(limit);
                Some(Outcome::Pass)
            }
            Some(t) => {
                self.set_now(t);
                None
            }
        }
    }

    /// One fault opportunity (per scheduling step, in the fault phase). True if a fault was
    /// injected, so the caller re-evaluates who can run.
    fn fault_opportunity(&mut self) -> bool {
        if self.healed {
            return false;
        }
        let nodes = self.cfg.nodes as usize;
        // Reused from step to step: this runs once per hand-off.
        let up = &mut self.up_scratch;
        up.clear();
        up.resize(nodes, false);
        for p in self.procs.iter().filter(|p| p.alive) {
            up[p.node as usize] = true;
        }
        let Some(fault) =
            faults::opportunity(self.scenario, &mut self.counts, up, self.decisions, &mut |_| true)
        else {
            return false;
        };
        let now = self.now;
        match fault {
            Fault::Crash { node, outage } => {
                self.crash(node);
                if let Some(d) = outage {
                    self.after(now + d, Timed::Restart(node));
                }
            }
            Fault::Pause { node, duration } => {
                self.paused[node as usize] = true;
                self.event(node, EventKind::Pause, None, None, duration.as_nanos(), || {
                    format!("paused for {duration}")
                });
                self.after(now + duration, Timed::Resume(node));
            }
            Fault::Isolate { node, duration } => {
                self.net.isolate(node, true);
                self.event(node, EventKind::Partition, None, None, duration.as_nanos(), || {
                    format!("isolated for {duration}")
                });
                self.after(now + duration, Timed::Reconnect(node));
            }
            Fault::CutLink { from, to, duration } => {
                self.net.set_cut(from, to, true);
                self.event(from, EventKind::Partition, Some(to), None, duration.as_nanos(), || {
                    format!("link n{from} -> n{to} cut for {duration}")
                });
                self.after(now + duration, Timed::Uncut(from, to));
            }
        }
        true
    }

    fn after(&mut self, at: SimTime, what: Timed) {
        self.seq += 1;
        self.timed.insert((at, self.seq), what);
    }

    /// Kills node `node`'s process (an injected crash: not a failure of the target).
    fn crash(&mut self, node: u32) {
        let Some(p) = self.procs.iter().rposition(|p| p.node == node && p.alive) else { return };
        self.drain(p);
        if !self.procs[p].partial.is_empty() {
            let rest = std::mem::take(&mut self.procs[p].partial);
            self.emit_line(p, &rest);
        }
        let mut status = 0;
        // SAFETY: killing and reaping our own child; all its threads wait for the baton.
        unsafe {
            libc::kill(self.procs[p].pid, libc::SIGKILL);
            libc::waitpid(self.procs[p].pid, &mut status, 0);
        }
        self.mark_gone(p);
        self.reset_node_streams(node);
        self.socks.retain(|k, _| k.0 != node);
        self.down[node as usize] = true;
        self.event(node, EventKind::Crash, None, None, 0, || "crashed (injected)".into());
    }

    fn restart(&mut self, node: u32) -> io::Result<()> {
        if !std::mem::replace(&mut self.down[node as usize], false) {
            return Ok(());
        }
        self.event(node, EventKind::Restart, None, None, 0, || "restart".into());
        self.start(node)
    }

    /// Ends the faults that are due, and all of them when the heal phase begins.
    fn timed_due(&mut self) -> io::Result<()> {
        while let Some(entry) = self.timed.first_entry() {
            if entry.key().0 > self.now {
                break;
            }
            match entry.remove() {
                Timed::Start(node) => self.start(node)?,
                Timed::Restart(node) => self.restart(node)?,
                Timed::Resume(node) => self.resume(node),
                Timed::Reconnect(node) => {
                    self.net.isolate(node, false);
                    self.event(node, EventKind::Heal, None, None, 0, || "reconnected".into());
                }
                Timed::Uncut(from, to) => {
                    self.net.set_cut(from, to, false);
                    self.event(from, EventKind::Heal, Some(to), None, 0, || "link restored".into());
                }
            }
        }
        if !self.healed && self.now >= SimTime::ZERO + self.scenario.fault_phase {
            self.healed = true;
            if self.net.any_cut() {
                self.net.heal_all();
                self.event(0, EventKind::Heal, None, None, 1, || {
                    "heal phase: links restored".into()
                });
            }
            self.timed.retain(|_, t| matches!(t, Timed::Restart(_) | Timed::Start(_)));
            for node in 0..self.cfg.nodes {
                self.resume(node);
                if self.scenario.restart {
                    self.restart(node)?;
                }
            }
        }
        Ok(())
    }

    /// Whether the start of the heal phase would change anything.
    fn heal_pending(&self) -> bool {
        !self.healed
            && (self.net.any_cut()
                || self.paused.iter().any(|&p| p)
                || (self.scenario.restart && self.down.iter().any(|&d| d)))
    }

    fn resume(&mut self, node: u32) {
        if std::mem::replace(&mut self.paused[node as usize], false) {
            self.event(node, EventKind::Resume, None, None, 0, || "resumed".into());
        }
    }

    fn set_now(&mut self, t: SimTime) {
        assert!(t >= self.now, "virtual time went backwards");
        if t > self.now {
            self.steps_since_advance = 0;
        }
        self.now = t;
        self.region.set_now(t.as_nanos());
    }
}

/// One line for a recorded file operation: `write fd=3 len=5 -> 5`, `open /x/y -> fd 3`.
fn file_summary(slot: &Slot) -> String {
    let len = (slot.len as usize).min(DATA_MAX);
    let mut paths = slot.data[..len].split(|&b| b == 0).map(|p| String::from_utf8_lossy(p));
    let path = paths.next().unwrap_or_default();
    let (fd, a, b, r) = (slot.args[1], slot.args[2], slot.args[3], slot.args[4]);
    let result = if r < 0 { format!("error {}", -r) } else { r.to_string() };
    match slot.args[0] {
        FILE_OPEN => format!("file open {path} flags={a:#o} -> {result}"),
        FILE_READ if a >= 0 => format!("file pread fd={fd} at={a} len={b} -> {result}"),
        FILE_READ => format!("file read fd={fd} len={b} -> {result}"),
        FILE_WRITE if a >= 0 => format!("file pwrite fd={fd} at={a} len={b} -> {result}"),
        FILE_WRITE => format!("file write fd={fd} len={b} -> {result}"),
        FILE_FSYNC => format!("file fsync fd={fd} -> {result}"),
        FILE_FDATASYNC => format!("file fdatasync fd={fd} -> {result}"),
        FILE_TRUNCATE => format!("file ftruncate fd={fd} len={a} -> {result}"),
        FILE_CLOSE => format!("file close fd={fd}"),
        FILE_RENAME => {
            format!("file rename {path} -> {} -> {result}", paths.next().unwrap_or_default())
        }
        FILE_UNLINK => format!("file unlink {path} -> {result}"),
        k => format!("file op {k}"),
    }
}

/// What the threads of a stalled process are doing in the kernel (from /proc), for the report.
fn blocked_in(pid: libc::pid_t) -> String {
    let mut calls = Vec::new();
    if let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for task in dir.flatten() {
            let text = std::fs::read_to_string(task.path().join("syscall")).unwrap_or_default();
            let call = match text.split_whitespace().next() {
                Some("running") => "running user code (a busy loop?)".to_string(),
                Some("202") => "blocked in futex (a lock the shim does not see?)".to_string(),
                Some(n) => format!("blocked in system call {n}"),
                None => continue,
            };
            if !calls.contains(&call) {
                calls.push(call);
            }
        }
    }
    if calls.is_empty() {
        "state unknown".into()
    } else {
        calls.join("; ")
    }
}

fn write_dgram(slot: &mut Slot, d: &Datagram) {
    let n = d.data.len().min(DATA_MAX);
    slot.data[..n].copy_from_slice(&d.data[..n]);
    slot.len = n as u32;
    slot.addr_ip = d.src_ip;
    slot.addr_port = d.src_port;
    slot.ret = n as i64;
}
