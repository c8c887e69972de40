//! One node's runtime state: its tasks, the queue of woken tasks (in wake order), timers, the
//! effects waiting to be handed to the kernel, and requests (decisions, disk calls) that only
//! the driver can serve. Futures reach it through the thread-local *current* node, which the
//! driver sets for the length of one kernel event; handles store ids, never the state itself,
//! so a crashed node's tasks drop without touching anything.

use crate::net::{NetState, Wire};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Wake, Waker};
use weft_core::{SimDuration, SimTime};
use weft_sim::NodeId;

pub(crate) type TaskId = u64;
pub(crate) type BoxFuture = Pin<Box<dyn Future<Output = ()>>>;
pub(crate) type Shared = Rc<RefCell<State>>;

/// Woken tasks in the order they were woken, each at most once. Wakers must be `Send + Sync`,
/// so this one piece sits behind a mutex (never contended: one thread runs a node).
#[derive(Default)]
pub(crate) struct WakeQueue {
    pub ready: Vec<TaskId>,
    queued: BTreeSet<TaskId>,
}

impl WakeQueue {
    pub fn push(&mut self, id: TaskId) {
        if self.queued.insert(id) {
            self.ready.push(id);
        }
    }

    pub fn take(&mut self, index: usize) -> TaskId {
        let id = self.ready.remove(index);
        self.queued.remove(&id);
        id
    }
}

pub(crate) fn lock(q: &Mutex<WakeQueue>) -> MutexGuard<'_, WakeQueue> {
    q.lock().unwrap_or_else(|e| e.into_inner())
}

pub(crate) struct TaskWaker {
    pub id: TaskId,
    pub queue: Arc<Mutex<WakeQueue>>,
}

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref()
    }
    fn wake_by_ref(self: &Arc<Self>) {
        lock(&self.queue).push(self.id);
    }
}

/// An effect for the kernel, applied through `Ctx` after the poll that produced it.
pub(crate) enum Op {
    Send { to: NodeId, msg: Wire },
    SetTimer { key: u64, after: SimDuration },
    CancelTimer { key: u64 },
    Observe(String),
}

/// What a timer key stands for when it fires.
pub(crate) enum TimerSlot {
    Sleep(Option<Waker>),
    /// A stream's retransmission timeout.
    Rto(u64),
}

/// Something only the driver can do, because it needs the kernel's `Ctx`.
pub(crate) enum Request {
    Choose { n: u64, fair: bool, salt: u64 },
    Disk(crate::fs::DiskOp),
}

pub(crate) enum Reply {
    Value(u64),
    Disk(io::Result<Vec<u8>>),
}

pub(crate) struct State {
    pub id: NodeId,
    pub nodes: usize,
    pub now: SimTime,
    /// Distinguishes this incarnation's connections from a previous one's.
    pub boot: u64,
    pub tasks: BTreeMap<TaskId, Option<BoxFuture>>,
    next_task: TaskId,
    pub wake: Arc<Mutex<WakeQueue>>,
    pub ops: Vec<Op>,
    next_key: u64,
    pub timers: BTreeMap<u64, TimerSlot>,
    pub requests: Vec<(u64, Request, Waker)>,
    pub replies: BTreeMap<u64, Reply>,
    pub net: NetState,
    pub status: String,
    pub history: Vec<weft_check::history::Event>,
}

impl State {
    pub fn new(id: NodeId, nodes: usize, now: SimTime) -> State {
        State {
            id,
            nodes,
            now,
            boot: now.0 + 1,
            tasks: BTreeMap::new(),
            next_task: 0,
            wake: Arc::new(Mutex::new(WakeQueue::default())),
            ops: Vec::new(),
            next_key: 0,
            timers: BTreeMap::new(),
            requests: Vec::new(),
            replies: BTreeMap::new(),
            net: NetState::default(),
            status: String::new(),
            history: Vec::new(),
        }
    }

    /// Adds a task and queues it to be polled.
    pub fn add_task(&mut self, fut: BoxFuture) -> TaskId {
        let id = self.next_task;
        self.next_task += 1;
        self.tasks.insert(id, Some(fut));
        lock(&self.wake).push(id);
        id
    }

    pub fn key(&mut self) -> u64 {
        self.next_key += 1;
        self.next_key
    }

    /// Arms a kernel timer `after` from now; returns its key.
    pub fn set_timer(&mut self, after: SimDuration, slot: TimerSlot) -> u64 {
        let key = self.key();
        self.timers.insert(key, slot);
        self.ops.push(Op::SetTimer { key, after });
        key
    }

    pub fn cancel_timer(&mut self, key: u64) {
        if self.timers.remove(&key).is_some() {
            self.ops.push(Op::CancelTimer { key });
        }
    }

    pub fn submit(&mut self, req: Request, waker: Waker) -> u64 {
        let key = self.key();
        self.requests.push((key, req, waker));
        key
    }

    pub fn send(&mut self, to: NodeId, msg: Wire) {
        self.ops.push(Op::Send { to, msg });
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Shared>> = const { RefCell::new(None) };
}

/// Makes `shared` the current node until the guard drops (also when a task panics).
pub(crate) struct Enter(Option<Shared>);

impl Enter {
    pub fn new(shared: Shared) -> Enter {
        Enter(CURRENT.with(|c| c.replace(Some(shared))))
    }
}

impl Drop for Enter {
    fn drop(&mut self) {
        let prev = self.0.take();
        CURRENT.with(|c| *c.borrow_mut() = prev);
    }
}

fn current() -> Option<Shared> {
    CURRENT.with(|c| c.borrow().clone())
}

/// Runs `f` on the current node's state. Panics (a target bug, reported as its crash) when
/// called outside a weft-async node: from a plain thread, or from another runtime.
pub(crate) fn with_state<R>(f: impl FnOnce(&mut State) -> R) -> R {
    let shared = current().expect(
        "weft-async called outside a weft-async node (from a plain thread or another runtime)",
    );
    let mut s = shared.borrow_mut();
    f(&mut s)
}

/// Like [`with_state`], but does nothing outside a node: for `Drop` impls, which also run when
/// a crashed node's tasks are dropped.
pub(crate) fn try_with_state(f: impl FnOnce(&mut State)) {
    if let Some(shared) = current() {
        if let Ok(mut s) = shared.try_borrow_mut() {
            f(&mut s);
        }
    }
}
