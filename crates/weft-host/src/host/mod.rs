//! One deterministic run of N real processes: the world (virtual clock, simulated UDP sockets,
//! datagrams in flight), the baton, and how every way a run ends becomes an [`Outcome`].
//!
//! The loop: deliver what is due; wake every blocked thread whose condition now holds (in node
//! order); if some thread is runnable, let the decision source pick one and hand it the baton
//! until its next intercepted call; otherwise advance virtual time to the next deadline or
//! arrival. Time never moves while anything can run, so a run is a function of the decisions.
//!
//! Requests are served by one handler per operation (`op_*`), each in its family's module:
//! [`time`], [`sockets`] and [`stream`], [`local`] (pipes, eventfds, socketpairs), [`poll`],
//! [`threads`], [`process`] and [`children`], [`signals`], [`timers`], [`files`], [`disk`]
//! (files under the nodes' data directories, on the simulated disk) with [`disknames`] (their
//! namespace calls) and [`diskmap`] (shared mappings of them); [`wake`] decides which
//! blocked threads may run again;
//! injected faults live in [`faults`], and [`fds`] owns what each (process, fd) refers to.

mod busy;
mod children;
mod disk;
mod disklocks;
mod diskmap;
mod disknames;
mod faults;
mod fds;
mod files;
mod history;
mod local;
mod passing;
mod pin;
mod poll;
mod process;
mod procinfo;
mod signals;
mod sockets;
mod socktable;
mod stall;
mod stream;
mod threads;
mod time;
mod timers;
mod wait;
mod wake;
use wait::Wait;

use crate::config::{HostConfig, OnIdle};
use crate::proto::*;
use crate::region::Region;
use crate::spawn::{self, SpawnSpec};
use faults::Timed;
use pin::{allowed_cpus, futex_wait_timeout, futex_wake, pin_current_thread};
use process::blocked_in;
use sockets::{Flight, EPHEMERAL_PORT_FIRST};
use std::collections::BTreeMap;
use std::hash::Hasher;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::Ordering;
use weft_core::{
    derive_seed, Decisions, Event, EventKind, Observer, Outcome, RunReport, Scenario, SimTime,
    Site, StableHasher, TraceHasher,
};
use weft_sim::faults::{Fault, FaultCounts};
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

use crate::proto::LOCALHOST;
/// The first simulated address: node `i` is `127.1.0.(i + 1)`. Loopback on purpose: were a
/// datagram ever to escape, it could not leave the machine.
pub use crate::proto::NODE_IP_BASE;

/// Real-time bound on one hand-off (a program in a busy loop with no intercepted call).
const WALL_STALL_SECS: u64 = 20;

/// What `getpid()` answers in node `node`'s process when it first starts (in every run); a
/// restarted node's process gets a fresh one, as from the kernel.
pub fn virtual_pid(node: u32) -> u32 {
    1000 + node
}

pub fn format_ip(ip: u32) -> String {
    let b = ip.to_be_bytes();
    format!("{}.{}.{}.{}", b[0], b[1], b[2], b[3])
}

/// A simulated process: a node's own program, or a child one of its processes forked.
struct Proc {
    node: u32,
    pid: libc::pid_t,
    /// What `getpid` answers in it.
    vpid: u32,
    out: OwnedFd,
    partial: Vec<u8>,
    alive: bool,
    /// Hand-offs made by this process's threads so far.
    steps: u64,
    sig: signals::ProcSignals,
    /// The process that forked it, while that one lives (None: a node's own program).
    parent: Option<usize>,
    /// A forked child is not the host's child: its end is seen through this pidfd.
    pidfd: Option<OwnedFd>,
    /// Ended, and not yet waited for by its parent.
    zombie: bool,
    /// The status it announced when exiting (`OP_EXIT`), if it did.
    announced: Option<i64>,
    /// Its descriptor table in `fds` (`node` for a node's own program).
    table: u32,
}

/// A simulated thread: the unit the baton passes between.
struct Thread {
    proc: usize,
    slot: usize,
    wait: Wait,
    sig: signals::ThreadSignals,
    /// Modelled CPU time ([`busy`]).
    cpu: busy::Cpu,
}

enum Resumed {
    Request(u32),
    Died(i32),
    Stalled,
    /// A task of the process burned CPU without handing off: where it spins.
    Spinning(String),
}

/// The thread whose request is being served.
#[derive(Clone, Copy)]
struct Caller {
    /// Thread index.
    t: usize,
    /// Its process.
    p: usize,
    /// Its process's node.
    node: u32,
}

/// What a request handler decided for the thread that made the request.
enum Reply {
    /// Answer this return value; the thread may run.
    Ret(i64),
    /// The thread blocks until its condition holds (`wake_blocked` answers it).
    Block(Wait),
    /// The handler has settled the thread itself (it exited, or its process is gone).
    Settled,
}

/// The world of one run.
pub(crate) struct World<'a> {
    cfg: &'a HostConfig,
    shim: &'a Path,
    region: Region,
    procs: Vec<Proc>,
    threads: Vec<Thread>,
    /// What every (process, fd) refers to.
    fds: fds::Fds,
    /// The bytes in the processes' pipes and socketpairs.
    pipes: local::Pipes,
    /// Each node's simulated disk (its data directories).
    disks: disk::Disks,
    flights: BTreeMap<(SimTime, u64), Flight>,
    conns: BTreeMap<u64, stream::Conn>,
    segments: BTreeMap<(SimTime, u64), stream::Segment>,
    /// Every process's timers, by (process, timer id).
    timers: BTreeMap<(usize, i64), timers::Timer>,
    /// The armed ones by (deadline, process, timer id), so that finding none due is O(1).
    timer_queue: std::collections::BTreeSet<(SimTime, usize, i64)>,
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
    /// Per node: whether partitions may cut its links (its group's `in_partitions`).
    partitionable: Vec<bool>,
    /// Every split partition injected so far, `(side, rest)`, emptied when it heals.
    splits: Vec<(Vec<u32>, Vec<u32>)>,
    /// The run's working folder, absolute and resolved (paths below it are hashed relative).
    work_prefix: Option<Vec<u8>>,
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
    /// Every id mapped in the processes' user namespaces.
    all_users: bool,
    /// The run's hosts file (`hostsfile`), with a name for every node.
    hosts: Option<std::ffi::CString>,
    /// The loader's cache at a machine-independent size (`ldcache`).
    ld_cache: Option<std::ffi::CString>,
    /// Descriptors being passed between processes (`passing`).
    passing: passing::Passing,
    /// The real time the run began ([`real_now_ns`]), which every process's hello gets.
    started: i64,
}

/// Whether the namespaces map every id: asked for (the default) and weft runs as root; else a
/// note says what a node cannot do.
fn all_users(cfg: &HostConfig, notes: &mut Vec<String>) -> bool {
    if cfg.users != crate::config::Users::All {
        return false;
    }
    let root = crate::idmap::can_map_all();
    if !root {
        notes.push(
            "weft is not root: a node's namespace maps only weft's own user (files of other \
             users refuse access; a privilege drop is kept by the shim)"
                .to_string(),
        );
    }
    root
}

/// Runs the configured program once. Never panics on the target's behaviour: process exits,
/// crashes, hangs and escapes are outcomes.
pub(crate) fn run(
    cfg: &HostConfig,
    shim: &Path,
    scenario: &Scenario,
    decisions: &mut Decisions,
    obs: &mut dyn Observer,
    started: i64,
) -> io::Result<RunOutput> {
    let mut notes = Vec::new();
    if let Some(reason) = cfg.unsupported_reason().or_else(|| disk::unmodelled(cfg, scenario)) {
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
    let all_users = netns && all_users(cfg, &mut notes);
    if netns && !crate::privrun::available() {
        notes.push(
            "the kernel refused an overlay on /run: nodes share the machine's /run (pid files \
             and sockets under fixed names meet, and what a run leaves there stays)"
                .to_string(),
        );
    }
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
        fds: fds::Fds::default(),
        pipes: local::Pipes::default(),
        disks: disk::Disks::new(cfg, scenario.disk.block_size),
        flights: BTreeMap::new(),
        conns: BTreeMap::new(),
        segments: BTreeMap::new(),
        timers: BTreeMap::new(),
        timer_queue: std::collections::BTreeSet::new(),
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
        partitionable: cfg.partitionable(),
        splits: Vec::new(),
        work_prefix: cfg.work_prefix(),
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
        all_users,
        hosts: netns.then(|| crate::hostsfile::prepare(cfg)).flatten(),
        ld_cache: netns.then(crate::ldcache::prepare).flatten(),
        passing: Default::default(),
        started,
    };
    let result = world.run_loop();
    world.kill_all();
    if let Some(p) = pin {
        p.restore();
    }
    let outcome = world.judge_history(result?);
    let faults = world.counts.total();
    let report = report(outcome, world.hasher.value(), world.hasher.events(), faults, world.now);
    Ok(RunOutput { report, lines: world.lines, notes: world.notes })
}

/// The kernel's file-time clock (`CLOCK_REALTIME_COARSE`, which stamps file changes; a finer
/// stamp is never earlier), in ns since the epoch: read once as a run starts, before its
/// directories are made, so a process can tell a real file's times from that run (at or
/// after it) from older ones and from the virtual times weft sets (see the shim's
/// `filetimes`). It never reaches the run as a time.
pub(crate) fn real_now_ns() -> i64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a clock read into a local.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME_COARSE, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

fn report(outcome: Outcome, hash: u64, events: u64, faults: u64, end: SimTime) -> RunReport {
    RunReport { outcome, trace_hash: hash, events, faults, end_time: end, sometimes: Vec::new() }
}

/// How many hand-offs a run may make per event of its `max_events` budget.
const STEPS_PER_EVENT: u64 = 64;

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
            self.timers_due();
            self.wake_blocked();
            // Reused from step to step: this loop runs once per hand-off.
            self.runnable.clear();
            for t in 0..self.threads.len() {
                if matches!(self.threads[t].wait, Wait::Ready)
                    && self.cpu_free(t)
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
            // Trace events bound the run, since that is what a report counts and what the
            // shrinker caps a candidate at (the best so far's events + 64); hand-offs too, as
            // a backstop, but far more loosely: a real program makes many intercepted calls
            // per recorded event (redis-sentinel about 11), and a hand-off cap at the event
            // cap ended every shrink candidate after a tenth of its run.
            if self.steps >= self.scenario.max_events.saturating_mul(STEPS_PER_EVENT) {
                return Ok(Outcome::BudgetExhausted {
                    detail: format!("{} intercepted calls", self.steps),
                });
            }
            if self.hasher.events() >= self.scenario.max_events {
                return Ok(Outcome::BudgetExhausted {
                    detail: format!("{} events", self.hasher.events()),
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
            let n = self.runnable.len() as u64;
            let pick = self.runnable[self.decisions.at(Site::schedule()).choose(n) as usize];
            self.steps += 1;
            self.steps_since_advance += 1;
            self.step(pick);
        }
    }

    /// Gives the baton to `p` and handles what it asks next.
    fn step(&mut self, t: usize) {
        self.attach_signals(t);
        let s = self.slot(t);
        let p = self.threads[t].proc;
        // SAFETY: `t` is waiting on its turn word; storing TURN_THREAD hands it the baton.
        let turn = unsafe { &(*s).turn };
        let asleep = turn.swap(TURN_THREAD, Ordering::AcqRel) & TURN_SLEEPING != 0;
        let passed = self.park_last_stepped(t, asleep);
        if asleep && !passed {
            futex_wake(turn);
        }
        self.procs[p].steps += 1;
        match self.wait_for_request(t) {
            Resumed::Request(op) => self.handle(t, op),
            Resumed::Died(status) => self.died(p, status),
            Resumed::Spinning(place) => {
                let node = self.procs[p].node;
                self.fail(Outcome::Deadlock {
                    detail: format!(
                        "node {node} spins without an intercepted call at {}: {place}",
                        self.now
                    ),
                });
            }
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
        let mut sample: Option<stall::Sample> = None;
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
            let last = started.elapsed().as_secs() >= WALL_STALL_SECS;
            if let Some(place) = self.spin_check(p, started.elapsed(), last, &mut sample) {
                return Resumed::Spinning(place);
            }
            if last {
                return Resumed::Stalled;
            }
        }
    }

    /// Serves request `op` of thread `t`: one handler per operation, in its family's module.
    fn handle(&mut self, t: usize, op: u32) {
        let p = self.threads[t].proc;
        let c = Caller { t, p, node: self.procs[p].node };
        self.fds.enter(c.node, self.procs[p].table);
        // Threads `t` created are alive now that it is back.
        for x in self.threads.iter_mut() {
            if matches!(x.wait, Wait::Unborn(u) if u == t) {
                x.wait = Wait::Ready;
            }
        }
        let s = self.slot(t);
        // SAFETY: the process holds TURN_HOST and waits: the slot's fields are ours until we
        // hand the baton back.
        let slot = unsafe { &mut *s };
        if op != OP_HELLO {
            self.charge(t, slot.local_calls);
        }
        let reply = match op {
            OP_SPIN | OP_YIELD => Reply::Ret(0),
            OP_HELLO => self.op_exec_hello(c, slot),
            OP_FORK => self.op_fork(c, slot),
            OP_FORKED => self.op_forked(c, slot),
            OP_WAIT => self.op_wait(c, slot),
            OP_SLEEP => self.op_sleep(c, slot),
            OP_SOCKET => self.op_socket(c, slot),
            OP_CLOSE => self.op_close(c, slot),
            OP_DUP => self.op_dup(c, slot),
            OP_PIPE => self.op_pipe(c, slot),
            OP_EVENTFD => self.op_eventfd(c, slot),
            OP_SOCKETPAIR => self.op_socketpair(c, slot),
            OP_LISTEN => self.op_listen(c, slot),
            OP_ACCEPT => self.op_accept(c, slot),
            OP_SHUTDOWN => self.op_shutdown(c, slot),
            OP_GETPEERNAME => self.op_getpeername(c, slot),
            OP_SOCKERR => self.op_sockerr(c, slot),
            OP_BIND => self.op_bind(c, slot),
            OP_CONNECT => self.op_connect(c, slot),
            OP_GETSOCKNAME => self.op_getsockname(c, slot),
            OP_SENDTO => self.op_sendto(c, slot),
            OP_PASS => self.op_pass(c, slot),
            OP_ADOPT => self.op_adopt(c, slot),
            OP_EPOLL_TOUCH => self.op_epoll_touch(c, slot),
            OP_VIRTUAL_PID => self.op_virtual_pid(c, slot),
            OP_REAL_PID => self.op_real_pid(c, slot),
            OP_PROCS => self.op_procs(c, slot),
            OP_PROC_INFO => self.op_proc_info(c, slot),
            OP_SOCKETS => self.op_sockets(c, slot),
            OP_SOCK_INODE => self.op_sock_inode(c, slot),
            OP_RECVFROM => self.op_recvfrom(c, slot),
            OP_POLL => self.op_poll(c, slot),
            OP_EXIT => self.op_exit(c, slot),
            OP_THREAD_NEW => self.op_thread_new(c, slot),
            OP_THREAD_EXIT => Reply::Block(Wait::Gone),
            OP_THREAD_ABORT => self.op_thread_abort(c, slot),
            OP_FILE => self.op_file(c, slot),
            OP_DISK => self.op_disk(c, slot),
            OP_JOIN => self.op_join(c, slot),
            OP_MUTEX_WAIT => Reply::Block(Wait::Mutex(slot.args[0] as u64)),
            OP_MUTEX_UNLOCK => self.op_mutex_unlock(c, slot),
            OP_COND_WAIT => self.op_cond_wait(c, slot),
            OP_FUTEX_WAIT => self.op_futex_wait(c, slot),
            OP_FUTEX_WAKE => self.op_futex_wake(c, slot),
            OP_COND_SIGNAL => self.op_cond_signal(c, slot),
            OP_SIGACTION => self.op_sigaction(c, slot),
            OP_SIGMASK => self.op_sigmask(c, slot),
            OP_KILL => self.op_kill(c, slot),
            OP_SIGSUSPEND => self.op_sigsuspend(c, slot),
            OP_SIGWAIT => self.op_sigwait(c, slot),
            OP_TIMER_CREATE => self.op_timer_create(c, slot),
            OP_TIMER_SET => self.op_timer_set(c, slot),
            OP_TIMER_GET => self.op_timer_get(c, slot),
            OP_TIMER_DELETE => self.op_timer_delete(c, slot),
            OP_TIMERFD_READ => self.op_timerfd_read(c, slot),
            OP_SIGNALFD => self.op_signalfd(c, slot),
            OP_SIGNALFD_READ => self.op_signalfd_read(c, slot),
            OP_UNSUPPORTED => self.op_unsupported(c, slot),
            other => self.op_unknown(c, other),
        };
        match reply {
            Reply::Ret(ret) => {
                slot.ret = ret;
                self.threads[t].wait = Wait::Ready;
            }
            Reply::Block(wait) => self.threads[t].wait = wait,
            Reply::Settled => {}
        }
    }

    /// Answers `ret` to blocked thread `t` (not the one whose slot `handle` holds).
    fn answer(&mut self, t: usize, ret: i64) {
        let s = self.slot(t);
        // SAFETY: `t` waits for TURN_THREAD; its slot is ours.
        unsafe { (*s).ret = ret };
        self.threads[t].wait = Wait::Ready;
    }
}
