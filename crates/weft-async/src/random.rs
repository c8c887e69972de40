//! Randomness for async code, drawn from the run's decision source so it replays and shrinks:
//! [`choose`] is a plain decision (0 = the simplest value); [`fair`] is for randomness the
//! protocol's liveness relies on (an election timeout), which the search controls only during
//! the fault phase (see `weft_sim::Ctx::fair_choose`). Both are futures: the draw happens
//! between polls, where the driver holds the kernel's context.

use crate::rt::{with_state, Reply, Request};
use std::task::Poll;

async fn ask(req: Request) -> Reply {
    let mut req = Some(req);
    let mut key = None;
    std::future::poll_fn(|cx| {
        with_state(|s| match key {
            None => {
                key = Some(s.submit(req.take().expect("asked once"), cx.waker().clone()));
                Poll::Pending
            }
            Some(k) => match s.replies.remove(&k) {
                Some(r) => Poll::Ready(r),
                None => Poll::Pending,
            },
        })
    })
    .await
}

pub(crate) async fn ask_disk(op: crate::fs::DiskOp) -> std::io::Result<Vec<u8>> {
    match ask(Request::Disk(op)).await {
        Reply::Disk(r) => r,
        Reply::Value(_) => unreachable!("a disk request gets a disk reply"),
    }
}

/// A value in `0..n` chosen by the decision source (`n` > 0).
pub async fn choose(n: u64) -> u64 {
    assert!(n > 0, "choose(0): no alternatives");
    match ask(Request::Choose { n, fair: false, salt: 0 }).await {
        Reply::Value(v) => v,
        Reply::Disk(_) => unreachable!("a choice gets a value"),
    }
}

/// A value in `0..n` the protocol's liveness may rely on; `salt` separates independent draws
/// at the same instant.
pub async fn fair(n: u64, salt: u64) -> u64 {
    assert!(n > 0, "fair(0): no alternatives");
    match ask(Request::Choose { n, fair: true, salt }).await {
        Reply::Value(v) => v,
        Reply::Disk(_) => unreachable!("a choice gets a value"),
    }
}
