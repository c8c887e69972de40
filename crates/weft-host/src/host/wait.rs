//! What a simulated thread waits for: the one state the run loop, the wake decision and
//! every blocking call's handler share, and what each wait is called and when it times out.

use super::SimTime;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Wait {
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
        /// A blocking write or send waiting for room (the shim's wait for `POLLOUT`).
        write: bool,
    },
    /// Created by thread `.0`, which has not yet returned from creating it: runnable from
    /// that thread's next request on.
    Unborn(usize),
    /// Until the thread with this index has ended.
    Join(usize),
    /// In `waitpid` until a child (virtual pid `sel`, or any when -1) has ended.
    Child {
        sel: i64,
        nowait: bool,
    },
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
    /// In sigsuspend/pause until a signal is delivered.
    Suspend,
    /// In sigwait for a signal of `set` (a mask), or the deadline.
    Sigwait {
        set: u64,
        deadline: Option<SimTime>,
    },
    /// In `F_SETLKW` or a blocking `flock` until a lock of `inode` on `node` goes.
    DiskLock {
        node: u32,
        inode: usize,
    },
    /// In a blocking read of timerfd `fd` until it has expired.
    TimerfdRead {
        fd: i32,
    },
    /// In a blocking read of signalfd `fd` (for up to `max` signals).
    SignalfdRead {
        fd: i32,
        max: usize,
    },
    Gone,
}

impl Wait {
    /// The call a thread waiting so is in, as a person would name it.
    pub(super) fn call(self) -> &'static str {
        match self {
            Wait::Hello | Wait::Ready | Wait::Unborn(_) | Wait::Gone => "nothing",
            Wait::Sleep(_) => "sleep",
            Wait::Recv { .. } => "read/recv",
            Wait::Accept { .. } => "accept",
            Wait::Connect { .. } => "connect",
            Wait::Poll { write: true, .. } => "write/send (waiting for its reader to make room)",
            Wait::Poll { .. } => "poll/select/epoll_wait",
            Wait::Join(_) => "pthread_join",
            Wait::Child { .. } => "wait for a child",
            Wait::Mutex(_) => "a mutex",
            Wait::DiskLock { .. } => "a file lock (fcntl F_SETLKW/flock)",
            Wait::Futex { .. } => "futex",
            Wait::Cond { .. } => "a condition variable",
            Wait::Suspend => "sigsuspend/pause",
            Wait::Sigwait { .. } => "sigwait",
            Wait::TimerfdRead { .. } => "read of a timerfd",
            Wait::SignalfdRead { .. } => "read of a signalfd",
        }
    }

    pub(super) fn cond_addr(self) -> Option<u64> {
        match self {
            Wait::Cond { addr, .. } => Some(addr),
            _ => None,
        }
    }

    pub(super) fn deadline(self) -> Option<SimTime> {
        match self {
            Wait::Sleep(t) => Some(t),
            Wait::Recv { deadline, .. }
            | Wait::Poll { deadline, .. }
            | Wait::Cond { deadline, .. }
            | Wait::Futex { deadline, .. }
            | Wait::Sigwait { deadline, .. } => deadline,
            _ => None,
        }
    }
}
