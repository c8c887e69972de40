//! Tasks: [`spawn`] a future on the current node, await its [`JoinHandle`], give way with
//! [`yield_now`]. A panic in a task is not caught here: it unwinds to the kernel, which ends the
//! run as the target's crash (`TargetCrashed`), never weft's.

use crate::rt::{try_with_state, with_state, TaskId};
use std::cell::RefCell;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

struct JoinState<T> {
    result: Option<Result<T, JoinError>>,
    waiter: Option<Waker>,
}

/// Awaits a spawned task's output. Dropping it detaches the task (it keeps running), as in
/// tokio.
pub struct JoinHandle<T> {
    id: TaskId,
    state: Rc<RefCell<JoinState<T>>>,
}

/// Why a task has no output: it was aborted (or its node is gone).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JoinError {
    cancelled: bool,
}

impl JoinError {
    pub fn is_cancelled(&self) -> bool {
        self.cancelled
    }
    /// Always false: a panicking task crashes its node's run instead.
    pub fn is_panic(&self) -> bool {
        false
    }
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("task was cancelled")
    }
}

impl std::error::Error for JoinError {}

/// Spawns `fut` on the current node. It is first polled after the current task yields, in the
/// order the schedule decides.
pub fn spawn<F>(fut: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    let state = Rc::new(RefCell::new(JoinState { result: None, waiter: None }));
    let done = state.clone();
    let task = async move {
        let out = fut.await;
        let waiter = {
            let mut s = done.borrow_mut();
            s.result = Some(Ok(out));
            s.waiter.take()
        };
        if let Some(w) = waiter {
            w.wake();
        }
    };
    let id = with_state(|s| s.add_task(Box::pin(task)));
    JoinHandle { id, state }
}

impl<T> JoinHandle<T> {
    /// Cancels the task: it is dropped at once (its `Drop`s run) and the handle yields a
    /// cancelled [`JoinError`].
    pub fn abort(&self) {
        if self.state.borrow().result.is_some() {
            return;
        }
        let mut task = None;
        try_with_state(|s| task = s.tasks.remove(&self.id));
        drop(task);
        let waiter = {
            let mut s = self.state.borrow_mut();
            s.result.get_or_insert(Err(JoinError { cancelled: true }));
            s.waiter.take()
        };
        if let Some(w) = waiter {
            w.wake();
        }
    }

    pub fn is_finished(&self) -> bool {
        self.state.borrow().result.is_some()
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut s = self.state.borrow_mut();
        match s.result.take() {
            Some(r) => Poll::Ready(r),
            None => {
                s.waiter = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

/// Gives way: the task is woken again at once and polled after the others the schedule picks.
pub async fn yield_now() {
    let mut yielded = false;
    std::future::poll_fn(|cx| {
        if yielded {
            Poll::Ready(())
        } else {
            yielded = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    })
    .await
}
