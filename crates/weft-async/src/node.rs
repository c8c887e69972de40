//! [`AsyncNode`]: the `weft_sim::Node` that hosts one async entry function per node, and the
//! driver that runs its executor for one kernel event. After the event is applied (a message
//! into a socket, a timer into a sleep), the driver serves pending requests (decisions, disk
//! calls), hands effects to the kernel, and polls one ready task — the one the schedule
//! decision picks among all ready tasks, in wake order (0 = first woken) — until no task is
//! ready. A crash drops the node and with it every task; the factory builds a fresh one and the
//! kernel's restart reruns the entry function, whose disk kept what the contract allows.

use crate::net::Wire;
use crate::rt::{lock, Enter, Op, Reply, Request, Shared, State, TaskWaker, TimerSlot, WakeQueue};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use weft_check::history::{check, pair, Checked, Event, HistoryModel};
use weft_sim::{Ctx, Node, NodeId, SimSpec, TimerId};

/// A node's entry function: called with the node's id at start and after every restart.
pub type Entry = Arc<dyn Fn(NodeId) -> Pin<Box<dyn Future<Output = ()>>> + Send + Sync>;

/// The node decision stream the schedule draws from (which ready task runs next), so a
/// shrinker can simplify the task order separately from the node's other choices.
pub const SCHEDULE_STREAM: u32 = 0x5c;

/// Polls in one kernel event after which the node is reported as livelocked: tasks that keep
/// waking each other (a `yield_now` loop, a loop waiting on the real clock) never let virtual
/// time advance.
const MAX_POLLS: u64 = 100_000;

/// Real time one poll may take before the task is reported as blocking its thread. This is a
/// real-time check, like the host's stall watchdog: it never fires in a run whose polls are
/// quick, and it cannot see a poll that never returns (a deadlocked std mutex).
const BLOCKED_AFTER: Duration = Duration::from_secs(2);

/// What an async node reports to the run's history: client-history events, as JSON lines.
#[derive(Clone)]
pub enum AsyncObs {
    History(String),
}

impl std::fmt::Debug for AsyncObs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AsyncObs::History(line) => write!(f, "history {line}"),
        }
    }
}

/// One simulated node running async code.
pub struct AsyncNode {
    id: NodeId,
    entry: Entry,
    shared: Option<Shared>,
    /// Kernel timer ids by runtime key, for cancellation.
    kernel: BTreeMap<u64, TimerId>,
    verdict: RefCell<Option<(usize, Result<(), String>)>>,
}

impl AsyncNode {
    pub fn new(id: NodeId, entry: Entry) -> AsyncNode {
        AsyncNode { id, entry, shared: None, kernel: BTreeMap::new(), verdict: RefCell::new(None) }
    }

    /// The status line set with [`crate::set_status`].
    pub fn status(&self) -> String {
        self.shared.as_ref().map(|s| s.borrow().status.clone()).unwrap_or_default()
    }

    /// Tasks alive on this node.
    pub fn tasks(&self) -> usize {
        self.shared.as_ref().map_or(0, |s| s.borrow().tasks.len())
    }

    /// The client-history events recorded on this node, in order.
    pub fn history(&self) -> Vec<Event> {
        self.shared.as_ref().map(|s| s.borrow().history.clone()).unwrap_or_default()
    }

    /// Checks this node's client history against `model`: `Err(witness)` on a violation.
    /// Checked again only when the history grew (properties run after every event). A check
    /// that cannot decide (a search budget ran out) passes.
    pub fn check_history(&self, model: HistoryModel) -> Result<(), String> {
        let Some(shared) = self.shared.as_ref() else { return Ok(()) };
        let s = shared.borrow();
        if let Some((len, verdict)) = &*self.verdict.borrow() {
            if *len == s.history.len() {
                return verdict.clone();
            }
        }
        let verdict = match pair(&s.history) {
            Err(e) => Err(format!("malformed history: {e}")),
            Ok(ops) => match check(model, &ops) {
                Checked::Invalid(witness) => Err(witness),
                Checked::Valid(_) | Checked::Unknown(_) => Ok(()),
            },
        };
        *self.verdict.borrow_mut() = Some((s.history.len(), verdict.clone()));
        verdict
    }

    fn drive(&mut self, ctx: &mut Ctx<'_, Self>, event: impl FnOnce(&mut State)) {
        let shared = self.shared.clone().expect("node started");
        let _enter = Enter::new(shared.clone());
        let queue = {
            let mut s = shared.borrow_mut();
            s.now = ctx.now();
            event(&mut s);
            s.wake.clone()
        };
        let mut polls = 0u64;
        loop {
            self.serve(&shared, ctx);
            self.flush(&shared, ctx);
            let ready = lock(&queue).ready.len();
            if ready == 0 {
                break;
            }
            let pick = if ready > 1 { ctx.choose_at(SCHEDULE_STREAM, ready as u64) } else { 0 };
            let id = lock(&queue).take(pick as usize);
            polls += 1;
            assert!(
                polls <= MAX_POLLS,
                "livelock: node {} polled its tasks {MAX_POLLS} times at {} without virtual time \
                 advancing (a loop around yield_now, or one waiting on the real clock?)",
                self.id,
                ctx.now().to_string().trim()
            );
            poll_task(&shared, &queue, id, self.id);
        }
    }

    /// Serves the requests tasks left (decisions, disk calls) and wakes their tasks.
    fn serve(&mut self, shared: &Shared, ctx: &mut Ctx<'_, Self>) {
        loop {
            let requests = std::mem::take(&mut shared.borrow_mut().requests);
            if requests.is_empty() {
                return;
            }
            for (key, req, waker) in requests {
                let reply = match req {
                    Request::Choose { n, fair: true, salt } => {
                        Reply::Value(ctx.fair_choose(n, salt))
                    }
                    Request::Choose { n, .. } => Reply::Value(ctx.choose(n)),
                    Request::Disk(op) => Reply::Disk(op.run(&mut ctx.disk())),
                };
                shared.borrow_mut().replies.insert(key, reply);
                waker.wake();
            }
        }
    }

    /// Hands the effects tasks produced to the kernel, in order.
    fn flush(&mut self, shared: &Shared, ctx: &mut Ctx<'_, Self>) {
        let ops = std::mem::take(&mut shared.borrow_mut().ops);
        for op in ops {
            match op {
                Op::Send { to, msg } => ctx.send(to, msg),
                Op::SetTimer { key, after } => {
                    let id = ctx.set_timer(after, key);
                    self.kernel.insert(key, id);
                }
                Op::CancelTimer { key } => {
                    if let Some(id) = self.kernel.remove(&key) {
                        ctx.cancel_timer(id);
                    }
                }
                Op::Observe(line) => ctx.observe(AsyncObs::History(line)),
            }
        }
    }
}

/// Polls task `id` once, outside any borrow of the state (the task borrows it itself).
fn poll_task(shared: &Shared, queue: &Arc<Mutex<WakeQueue>>, id: u64, node: NodeId) {
    let fut = shared.borrow_mut().tasks.get_mut(&id).and_then(|slot| slot.take());
    let Some(mut fut) = fut else { return };
    let waker = Waker::from(Arc::new(TaskWaker { id, queue: queue.clone() }));
    let mut cx = Context::from_waker(&waker);
    // A documented real-time exception (see `BLOCKED_AFTER`): it only reports a poll that
    // blocked the thread, and never changes a run whose polls return promptly.
    #[allow(clippy::disallowed_methods)]
    let started = std::time::Instant::now();
    let result = fut.as_mut().poll(&mut cx);
    let spent = started.elapsed();
    assert!(
        spent < BLOCKED_AFTER,
        "a task of node {node} blocked its thread for {:.1}s of real time in one poll \
         (std::thread::sleep, a blocking lock or real IO inside async code?)",
        spent.as_secs_f64()
    );
    let finished = {
        let mut s = shared.borrow_mut();
        match (result, s.tasks.get_mut(&id)) {
            (Poll::Pending, Some(slot)) => {
                *slot = Some(fut);
                None
            }
            (Poll::Ready(()), Some(_)) => {
                s.tasks.remove(&id);
                Some(fut)
            }
            // Aborted while it ran.
            (_, None) => Some(fut),
        }
    };
    drop(finished);
}

impl Node for AsyncNode {
    type Msg = Wire;
    type Req = ();
    type Obs = AsyncObs;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        let shared = Rc::new(RefCell::new(State::new(self.id, ctx.nodes(), ctx.now())));
        self.shared = Some(shared.clone());
        self.kernel.clear();
        let fut = {
            let _enter = Enter::new(shared.clone());
            (self.entry)(self.id)
        };
        self.drive(ctx, |s| {
            s.add_task(fut);
        });
    }

    fn on_message(&mut self, from: NodeId, msg: Wire, ctx: &mut Ctx<'_, Self>) {
        self.drive(ctx, |s| s.on_wire(from, msg));
    }

    fn on_timer(&mut self, _timer: TimerId, tag: u64, ctx: &mut Ctx<'_, Self>) {
        self.kernel.remove(&tag);
        self.drive(ctx, |s| match s.timers.remove(&tag) {
            Some(TimerSlot::Sleep(Some(w))) => w.wake(),
            Some(TimerSlot::Rto(cid)) => s.on_rto(cid),
            Some(TimerSlot::Sleep(None)) | None => {}
        });
    }

    fn describe(&self) -> String {
        let status = self.status();
        if status.is_empty() {
            format!("tasks={}", self.tasks())
        } else {
            format!("{status} tasks={}", self.tasks())
        }
    }
}

/// Wraps an async function of the node id as an [`Entry`].
pub fn entry<F, Fut>(f: F) -> Entry
where
    F: Fn(NodeId) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + 'static,
{
    Arc::new(move |id| Box::pin(f(id)))
}

/// A world of `nodes` async nodes running `entry`, with no workload (clients are tasks),
/// no properties and no assumptions yet: push them onto the returned spec.
pub fn world(nodes: usize, entry: Entry) -> SimSpec<AsyncNode> {
    SimSpec {
        nodes,
        make: Box::new(move |id| AsyncNode::new(id, entry.clone())),
        workload: Box::new(|_, _| Vec::new()),
        properties: Vec::new(),
        assumptions: Vec::new(),
        crash_gate: None,
        focus: None,
    }
}
