//! Objects local to a process, shared by its threads: pipes, eventfds and socketpair ends
//! (`AF_UNIX`, `SOCK_STREAM`). They live in the host, so a thread that waits on one (`read`,
//! `poll`, `epoll_wait`, `select`) blocks until another thread makes it ready, instead of
//! polling a real descriptor again and again. A pipe holds 64 KiB and a socketpair direction
//! 208 KiB (Linux's defaults): a write takes what fits, all or nothing for a pipe write of at
//! most `PIPE_BUF` bytes, and answers `EAGAIN` when nothing does (the shim then waits for
//! `POLLOUT` on a blocking descriptor); a pipe is writable while `PIPE_BUF` bytes fit, a
//! socketpair while anything does. An eventfd write that would overflow the counter answers
//! `EAGAIN` instead of blocking.

use super::fds::Object;
use super::*;
use std::collections::VecDeque;

/// A pipe (one direction of bytes): its node and number there.
pub(super) type PipeId = (u32, u64);

/// What a process-local descriptor refers to.
pub(super) enum Local {
    PipeRead(PipeId),
    PipeWrite(PipeId),
    /// One end of a socketpair: reads `rx`, writes `tx`; `shut_*` after `shutdown`.
    Unix {
        rx: PipeId,
        tx: PipeId,
        shut_rd: bool,
        shut_wr: bool,
    },
    EventFd {
        count: u64,
        semaphore: bool,
        /// Writes ever made (its read generation: each is a new edge for `EPOLLET`).
        writes: u64,
    },
}

/// The bytes in one pipe, how many it holds, and how many objects read and write it.
struct Pipe {
    buf: VecDeque<u8>,
    cap: usize,
    readers: u32,
    writers: u32,
    /// Bytes ever written and read.
    written: u64,
    read: u64,
    /// Descriptors passed with the byte at a position (`passing`): (position, batch).
    marks: VecDeque<(u64, u64)>,
}

/// What a pipe holds (Linux's default, 16 pages).
const PIPE_CAPACITY: usize = 65536;
/// What one direction of a socketpair holds (Linux's default `SO_SNDBUF` for `AF_UNIX`).
const UNIX_CAPACITY: usize = 212_992;
/// Pipe writes up to this size are atomic (`PIPE_BUF`).
const PIPE_BUF: usize = 4096;

/// Every pipe of every process.
#[derive(Default)]
pub(super) struct Pipes {
    pipes: BTreeMap<PipeId, Pipe>,
    next: u64,
    /// Batches of passed descriptors whose pipe went before they were read (released by
    /// `passing`).
    pub(super) unread: Vec<u64>,
}

impl Pipes {
    fn open(&mut self, node: u32, cap: usize) -> PipeId {
        self.next += 1;
        let id = (node, self.next);
        let pipe = Pipe {
            buf: VecDeque::new(),
            cap,
            readers: 1,
            writers: 1,
            written: 0,
            read: 0,
            marks: VecDeque::new(),
        };
        self.pipes.insert(id, pipe);
        id
    }

    /// Batch `batch` of passed descriptors arrives with the first of the last `n` bytes
    /// written to `id`.
    pub(super) fn mark(&mut self, id: PipeId, n: usize, batch: u64) {
        if let Some(p) = self.pipes.get_mut(&id) {
            p.marks.push_back((p.written - n as u64, batch));
        }
    }

    /// One reader (`read`) or writer of `id` is gone; the pipe goes with the last of both.
    fn drop_end(&mut self, id: PipeId, read: bool) {
        let Some(p) = self.pipes.get_mut(&id) else { return };
        if read {
            p.readers -= 1;
        } else {
            p.writers -= 1;
        }
        if p.readers == 0 && p.writers == 0 {
            let gone = self.pipes.remove(&id).expect("pipe");
            self.unread.extend(gone.marks.iter().map(|m| m.1));
        }
    }

    /// Forgets the pipes of `node` (its process is gone).
    pub(super) fn close_node(&mut self, node: u32) {
        self.pipes.retain(|k, _| k.0 != node);
    }
}

/// The largest eventfd counter value.
const EVENTFD_MAX: u64 = u64::MAX - 1;

impl World<'_> {
    /// A new pipe: read end `args[0]`, write end `args[1]`.
    pub(super) fn op_pipe(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let (r, w) = (slot.args[0] as i32, slot.args[1] as i32);
        self.close_fd(c.node, r);
        self.close_fd(c.node, w);
        let p = self.pipes.open(c.node, PIPE_CAPACITY);
        self.fds.open_local(c.node, r, Local::PipeRead(p));
        self.fds.open_local(c.node, w, Local::PipeWrite(p));
        Reply::Ret(0)
    }

    /// A new eventfd at `args[0]`, counting from `args[1]` (`args[2]` = 1: semaphore mode).
    pub(super) fn op_eventfd(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let fd = slot.args[0] as i32;
        self.close_fd(c.node, fd);
        let (count, semaphore) = (slot.args[1] as u64, slot.args[2] != 0);
        let local = Local::EventFd { count, semaphore, writes: 0 };
        self.fds.open_local(c.node, fd, local);
        Reply::Ret(0)
    }

    /// A new connected pair of stream sockets, `args[0]` and `args[1]`.
    pub(super) fn op_socketpair(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let (a, b) = (slot.args[0] as i32, slot.args[1] as i32);
        self.close_fd(c.node, a);
        self.close_fd(c.node, b);
        let (ab, ba) =
            (self.pipes.open(c.node, UNIX_CAPACITY), self.pipes.open(c.node, UNIX_CAPACITY));
        let end = |rx, tx| Local::Unix { rx, tx, shut_rd: false, shut_wr: false };
        self.fds.open_local(c.node, a, end(ba, ab));
        self.fds.open_local(c.node, b, end(ab, ba));
        Reply::Ret(0)
    }

    /// The pipe `fd` of `node`'s process writes (a socketpair end's or a pipe's write end).
    pub(super) fn local_tx(&self, node: u32, fd: i32) -> Option<PipeId> {
        match self.fds.local(node, fd)? {
            Local::PipeWrite(p) | Local::Unix { tx: p, .. } => Some(*p),
            _ => None,
        }
    }

    /// The last descriptor of a local object was closed.
    pub(super) fn local_closed(&mut self, obj: Object) {
        let Object::Local(local) = obj else { return };
        match local {
            Local::PipeRead(p) => self.pipes.drop_end(p, true),
            Local::PipeWrite(p) => self.pipes.drop_end(p, false),
            Local::Unix { rx, tx, shut_rd, shut_wr } => {
                if !shut_rd {
                    self.pipes.drop_end(rx, true);
                }
                if !shut_wr {
                    self.pipes.drop_end(tx, false);
                }
            }
            Local::EventFd { .. } => {}
        }
    }

    /// read() of a local object into the slot: Some(answer), or None while nothing is there
    /// and someone could still write.
    pub(super) fn local_try_read(
        &mut self,
        node: u32,
        fd: i32,
        peek: bool,
        cap: usize,
        slot: &mut Slot,
    ) -> Option<i64> {
        // No batch of passed descriptors unless this read takes one (`passing`); the slot
        // still holds the request's arguments (a poll's epoll tag among them).
        slot.args[5] = 0;
        let rx = match self.fds.local_mut(node, fd)? {
            Local::PipeRead(p) | Local::Unix { rx: p, shut_rd: false, .. } => *p,
            Local::Unix { .. } => return Some(0),
            Local::PipeWrite(_) => return Some(-(libc::EBADF as i64)),
            Local::EventFd { count, semaphore, .. } => {
                if cap < 8 {
                    return Some(-(libc::EINVAL as i64));
                }
                if *count == 0 {
                    return None;
                }
                let v = if *semaphore { 1 } else { *count };
                if !peek {
                    *count -= v;
                }
                slot.data[..8].copy_from_slice(&v.to_le_bytes());
                slot.len = 8;
                return Some(8);
            }
        };
        slot.addr_ip = 0;
        slot.addr_port = 0;
        let pipe = self.pipes.pipes.get_mut(&rx)?;
        if pipe.buf.is_empty() {
            slot.len = 0;
            return (pipe.writers == 0 || cap == 0).then_some(0);
        }
        // A read stops before bytes that carry passed descriptors, and one that starts at them
        // takes the descriptors (as Linux's AF_UNIX stream reads do).
        let (at, next) = (pipe.read, pipe.marks.iter().map(|m| m.0));
        let taking = pipe.marks.front().filter(|m| m.0 == at).map(|m| m.1);
        let stop = next.filter(|&m| m > at).min().map_or(usize::MAX, |m| (m - at) as usize);
        let n = cap.min(pipe.buf.len()).min(DATA_MAX).min(stop);
        for (i, b) in pipe.buf.iter().take(n).enumerate() {
            slot.data[i] = *b;
        }
        if !peek {
            pipe.buf.drain(..n);
            pipe.read += n as u64;
            if let Some(batch) = taking.filter(|_| n > 0) {
                pipe.marks.pop_front();
                slot.args[5] = batch as i64;
            }
        }
        slot.len = n as u32;
        Some(n as i64)
    }

    /// write() to a local object: the bytes taken, or -errno.
    pub(super) fn local_write(&mut self, node: u32, fd: i32, data: &[u8]) -> i64 {
        // `pipe`: POSIX makes a pipe write of at most PIPE_BUF bytes all or nothing.
        let (tx, pipe) = match self.fds.local_mut(node, fd) {
            None => return -(libc::EBADF as i64),
            Some(Local::PipeWrite(p)) => (*p, true),
            Some(Local::Unix { tx: p, shut_wr: false, .. }) => (*p, false),
            Some(Local::Unix { .. }) => return -(libc::EPIPE as i64),
            Some(Local::PipeRead(_)) => return -(libc::EBADF as i64),
            Some(Local::EventFd { count, writes, .. }) => {
                let Some(bytes) = data.get(..8) else { return -(libc::EINVAL as i64) };
                let v = u64::from_le_bytes(bytes.try_into().expect("8 bytes"));
                if v == u64::MAX {
                    return -(libc::EINVAL as i64);
                }
                if v > EVENTFD_MAX - *count {
                    return -(libc::EAGAIN as i64);
                }
                *count += v;
                *writes += 1;
                return 8;
            }
        };
        match self.pipes.pipes.get_mut(&tx) {
            Some(p) if p.readers > 0 => {
                let space = p.cap.saturating_sub(p.buf.len());
                let atomic = pipe && data.len() <= PIPE_BUF;
                if !data.is_empty() && (space == 0 || (atomic && space < data.len())) {
                    return -(libc::EAGAIN as i64);
                }
                let n = data.len().min(space);
                p.buf.extend(&data[..n]);
                p.written += n as u64;
                n as i64
            }
            _ => -(libc::EPIPE as i64),
        }
    }

    /// shutdown() of a socketpair end.
    pub(super) fn local_shutdown(&mut self, node: u32, fd: i32, how: i32) -> i64 {
        let Some(Local::Unix { rx, tx, shut_rd, shut_wr }) = self.fds.local_mut(node, fd) else {
            return -(libc::ENOTSOCK as i64);
        };
        let (rx, tx) = (*rx, *tx);
        let rd = how != libc::SHUT_WR && !std::mem::replace(shut_rd, how != libc::SHUT_WR);
        let wr = how != libc::SHUT_RD && !std::mem::replace(shut_wr, how != libc::SHUT_RD);
        if rd {
            self.pipes.drop_end(rx, true);
        }
        if wr {
            self.pipes.drop_end(tx, false);
        }
        0
    }

    /// How often the object `fd` reads from was written (None: not a local object that reads):
    /// each write is a new edge for an `EPOLLET` waiter on Linux, also when it finds bytes or a
    /// count there already.
    pub(super) fn read_generation(&self, node: u32, fd: i32) -> Option<u64> {
        match self.fds.local(node, fd)? {
            Local::PipeRead(p) | Local::Unix { rx: p, .. } => {
                Some(self.pipes.pipes.get(p)?.written)
            }
            Local::EventFd { writes, .. } => Some(*writes),
            Local::PipeWrite(_) => None,
        }
    }

    /// poll() readiness of a local object (None: `fd` is not one).
    pub(super) fn local_revents(&self, node: u32, fd: i32, events: i16) -> Option<i16> {
        let pipe = |id: &PipeId| self.pipes.pipes.get(id);
        let mut re = 0;
        match self.fds.local(node, fd)? {
            Local::PipeRead(p) => {
                if pipe(p).is_some_and(|p| !p.buf.is_empty()) {
                    re |= libc::POLLIN;
                }
                if pipe(p).is_none_or(|p| p.writers == 0) {
                    re |= libc::POLLHUP;
                }
            }
            Local::PipeWrite(p) => match pipe(p) {
                Some(p) if p.readers == 0 => re |= libc::POLLERR,
                Some(p) if p.cap - p.buf.len() >= PIPE_BUF => re |= libc::POLLOUT,
                Some(_) => {}
                None => re |= libc::POLLERR,
            },
            Local::Unix { rx, tx, shut_rd, shut_wr } => {
                let (rx, tx) = (pipe(rx), pipe(tx));
                let ended = *shut_rd || rx.is_none_or(|p| p.writers == 0);
                if ended || rx.is_some_and(|p| !p.buf.is_empty()) {
                    re |= libc::POLLIN;
                }
                if ended {
                    re |= libc::POLLRDHUP;
                }
                if *shut_wr || tx.is_none_or(|p| p.readers == 0 || p.buf.len() < p.cap) {
                    re |= libc::POLLOUT;
                }
                if ended && (*shut_wr || tx.is_none_or(|p| p.readers == 0)) {
                    re |= libc::POLLHUP;
                }
            }
            Local::EventFd { count, .. } => {
                if *count > 0 {
                    re |= libc::POLLIN;
                }
                if *count < EVENTFD_MAX {
                    re |= libc::POLLOUT;
                }
            }
        }
        Some(re & (events | libc::POLLERR | libc::POLLHUP | libc::POLLNVAL))
    }
}
