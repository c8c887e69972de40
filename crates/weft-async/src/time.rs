//! Virtual time with the shape of `tokio::time`: [`Instant::now`] is the kernel's simulated
//! clock, [`sleep`]/[`sleep_until`] arm a kernel timer, [`interval`] ticks at a fixed period
//! (missed ticks burst, tokio's default), [`timeout`] races a future against a sleep. Nothing
//! here reads the real clock; time moves only between kernel events.

use crate::rt::{try_with_state, with_state, TimerSlot};
use std::fmt;
use std::future::Future;
use std::ops::{Add, AddAssign, Sub};
use std::pin::Pin;
use std::task::{Context, Poll};
pub use std::time::Duration;
use weft_core::{SimDuration, SimTime};

/// A point in virtual time (nanoseconds since the run started).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(SimTime);

fn sim(d: Duration) -> SimDuration {
    SimDuration::from_nanos(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

impl Instant {
    pub fn now() -> Instant {
        Instant(with_state(|s| s.now))
    }
    pub fn from_sim(t: SimTime) -> Instant {
        Instant(t)
    }
    pub fn as_sim(self) -> SimTime {
        self.0
    }
    pub fn duration_since(&self, earlier: Instant) -> Duration {
        Duration::from_nanos(self.0 .0.saturating_sub(earlier.0 .0))
    }
    pub fn saturating_duration_since(&self, earlier: Instant) -> Duration {
        self.duration_since(earlier)
    }
    pub fn elapsed(&self) -> Duration {
        Instant::now().duration_since(*self)
    }
    pub fn checked_add(&self, d: Duration) -> Option<Instant> {
        self.0 .0.checked_add(sim(d).0).map(|n| Instant(SimTime(n)))
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, d: Duration) -> Instant {
        Instant(SimTime(self.0 .0.saturating_add(sim(d).0)))
    }
}

impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

impl Sub for Instant {
    type Output = Duration;
    fn sub(self, o: Instant) -> Duration {
        self.duration_since(o)
    }
}

/// Completes at its deadline. Dropping it cancels its kernel timer.
pub struct Sleep {
    deadline: SimTime,
    key: Option<u64>,
}

/// Sleeps for `d` of virtual time.
pub fn sleep(d: Duration) -> Sleep {
    Sleep { deadline: with_state(|s| s.now) + sim(d), key: None }
}

/// Sleeps until `deadline` (at once if it has passed).
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep { deadline: deadline.0, key: None }
}

impl Sleep {
    pub fn deadline(&self) -> Instant {
        Instant(self.deadline)
    }
    pub fn is_elapsed(&self) -> bool {
        with_state(|s| s.now >= self.deadline)
    }
    /// Moves the deadline (re-arming the timer on the next poll).
    pub fn reset(mut self: Pin<&mut Self>, deadline: Instant) {
        self.cancel();
        self.deadline = deadline.0;
    }
    fn cancel(&mut self) {
        if let Some(key) = self.key.take() {
            try_with_state(|s| s.cancel_timer(key));
        }
    }
}

impl Future for Sleep {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let deadline = self.deadline;
        let key = self.key;
        let done = with_state(|s| {
            if s.now >= deadline {
                if let Some(k) = key {
                    s.cancel_timer(k);
                }
                return Ok(());
            }
            match key.and_then(|k| s.timers.get_mut(&k)) {
                Some(TimerSlot::Sleep(w)) => {
                    *w = Some(cx.waker().clone());
                    Err(None)
                }
                _ => {
                    let after = deadline.since(s.now);
                    Err(Some(s.set_timer(after, TimerSlot::Sleep(Some(cx.waker().clone())))))
                }
            }
        });
        match done {
            Ok(()) => {
                self.key = None;
                Poll::Ready(())
            }
            Err(new_key) => {
                if new_key.is_some() {
                    self.key = new_key;
                }
                Poll::Pending
            }
        }
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        self.cancel();
    }
}

/// A future did not finish within its [`timeout`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elapsed(());

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("deadline has elapsed")
    }
}

impl std::error::Error for Elapsed {}

impl From<Elapsed> for std::io::Error {
    fn from(_: Elapsed) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::TimedOut, "deadline has elapsed")
    }
}

/// `fut`, or [`Elapsed`] if `d` passes first. The future is polled first, as in tokio.
pub struct Timeout<F> {
    fut: Pin<Box<F>>,
    sleep: Sleep,
}

pub fn timeout<F: Future>(d: Duration, fut: F) -> Timeout<F> {
    Timeout { fut: Box::pin(fut), sleep: sleep(d) }
}

pub fn timeout_at<F: Future>(deadline: Instant, fut: F) -> Timeout<F> {
    Timeout { fut: Box::pin(fut), sleep: sleep_until(deadline) }
}

impl<F: Future> Future for Timeout<F> {
    type Output = Result<F::Output, Elapsed>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Poll::Ready(v) = self.fut.as_mut().poll(cx) {
            return Poll::Ready(Ok(v));
        }
        match Pin::new(&mut self.sleep).poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(Elapsed(()))),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// Ticks every `period`; the first tick completes at once.
pub struct Interval {
    next: SimTime,
    period: SimDuration,
    sleep: Option<Sleep>,
}

pub fn interval(period: Duration) -> Interval {
    interval_at(Instant::now(), period)
}

pub fn interval_at(start: Instant, period: Duration) -> Interval {
    assert!(!period.is_zero(), "`period` must be non-zero");
    Interval { next: start.0, period: sim(period), sleep: None }
}

impl Interval {
    /// Completes at the next tick and returns its scheduled instant.
    pub async fn tick(&mut self) -> Instant {
        let at = self.next;
        let sleep = self.sleep.get_or_insert_with(|| sleep_until(Instant(at)));
        sleep.await;
        self.sleep = None;
        self.next = at + self.period;
        Instant(at)
    }

    pub fn period(&self) -> Duration {
        Duration::from_nanos(self.period.0)
    }

    /// The next tick is one period from now.
    pub fn reset(&mut self) {
        self.sleep = None;
        self.next = with_state(|s| s.now) + self.period;
    }
}
