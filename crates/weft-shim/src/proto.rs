//! The wire format between the shim and the host: one shared-memory region, a header the host
//! writes (virtual time) and one slot per simulated thread. This file is compiled into both
//! crates (`#[path]` include in weft-host) so the two sides cannot disagree; it holds plain
//! `#[repr(C)]` data and constants only.
//!
//! Hand-off protocol on a slot's `turn` futex word: the thread fills the request fields and
//! stores `TURN_HOST`; the host answers in the same fields and stores `TURN_THREAD`. Only one
//! simulated thread holds the baton at any time, so no field is ever written by both sides at
//! once.
//!
//! Waiting: a side waiting for the turn may spin on the word for a bounded number of
//! iterations (`Header::spin`; never when both sides share one CPU). Before it sleeps in
//! `FUTEX_WAIT` it ors `TURN_SLEEPING` into the word with a compare-and-swap, and the side
//! handing over the turn swaps the new value in and issues `FUTEX_WAKE` only when the old value
//! had that bit. Both are read-modify-writes of one word, so a wake is never lost: either the
//! hand-over comes first (the compare-and-swap fails and the waiter sees its turn) or the bit
//! does (the hand-over sees it and wakes). A waiter therefore compares `turn & !TURN_SLEEPING`
//! with the value it waits for: the other side may already have marked itself sleeping. The
//! host also sets the bit on a waiting thread that it will not resume next ("park"), so the
//! thread stops spinning and leaves the processes' CPU to the thread that runs next. When that
//! next thread sleeps, the host parks with `TURN_PASS` too: the parked thread, on the CPU the
//! next one needs, wakes it (`Slot::pass_to`) before it sleeps, where a wake from the host would
//! cross CPUs. Whoever's compare-and-swap on the parked thread's word wins decides who wakes:
//! if the thread marked itself sleeping first, the host's park fails and the host wakes.
//! Spinning and sleeping change how fast the turn passes, never who holds it.

#![allow(dead_code)] // each side uses its half

use core::sync::atomic::{AtomicU32, AtomicU64};

pub const MAGIC: u64 = 0x7765_6674_5348_4d31; // "weftSHM1"

/// Environment variables the host sets for every child.
pub const ENV_FD: &[u8] = b"WEFT_SHM_FD\0";
pub const ENV_SLOT: &[u8] = b"WEFT_SLOT\0";
/// The fd at which a process finds the region. The shim keeps it open there (close-on-exec,
/// cleared just for an `exec`), so an exec'd image maps the same region again.
pub const REGION_FD: i32 = 1021;

pub const MAX_SLOTS: usize = 256;
pub const DATA_MAX: usize = 65536;
pub const POLL_MAX: usize = 256;

/// Offsets of the simulated clocks: CLOCK_REALTIME reads `REALTIME_BASE_NS + now`, the
/// monotonic clocks `MONOTONIC_BASE_NS + now` (fixed, so runs are comparable everywhere).
pub const REALTIME_BASE_NS: u64 = 1_767_225_600 * 1_000_000_000; // 2026-01-01T00:00:00Z
pub const MONOTONIC_BASE_NS: u64 = 1_000 * 1_000_000_000;

/// After this many calls served without a hand-off (clock reads, random bytes) the shim
/// hands off anyway with `OP_SPIN`, so that the host charges their modelled cost and a loop
/// waiting for the clock to move sees it move.
pub const LOCAL_CALLS_MAX: u32 = 1 << 12;

pub const TURN_IDLE: u32 = 0;
pub const TURN_HOST: u32 = 1;
pub const TURN_THREAD: u32 = 2;
/// Or-ed into `turn` by (or for) a waiter that sleeps in `FUTEX_WAIT`: whoever changes the turn
/// next must wake it.
pub const TURN_SLEEPING: u32 = 4;
/// Or-ed in with `TURN_SLEEPING` by the host when it parks a thread: the thread must wake the
/// slot `Slot::pass_to` (whose turn the host has just given) before it sleeps, then clear this.
pub const TURN_PASS: u32 = 8;
/// The bits of `turn` that are not the turn itself.
pub const TURN_FLAGS: u32 = TURN_SLEEPING | TURN_PASS;

/// Spin iterations (one load and one `spin_loop` each: ~30 ns on the AMD EPYC VM this was
/// measured on) a side may spend waiting for the turn before it sleeps, when host and process
/// run on different CPUs. A futex sleep plus a cross-CPU wake costs ~10-25 µs there; a turn
/// that passes while the other side spins costs ~0.1 µs.
pub const SPIN_ITERS: u32 = 1000;

// Requests (`Slot::op`). Arguments in `Slot::args`, payload in `Slot::data`, peer address in
// `Slot::addr_ip`/`addr_port` (host byte order). Answers: `Slot::ret` (>= 0, or -errno).
/// First contact from a fresh process or a freshly exec'd image: `args[0]` = real pid.
/// Answer: `args[0]` = random seed, `args[1]` = the process's virtual pid (what `getpid`
/// answers: the same in every run), `args[2]` = its parent's (what `getppid` answers),
/// `args[3]` = its node (what `uname` names it after), `args[4]` = the machine's real time
/// the run began, in ns (older real file times are from before the run).
pub const OP_HELLO: u32 = 1;
/// Sleep until the absolute virtual time `args[0]` (ns).
pub const OP_SLEEP: u32 = 2;
/// A new simulated socket on fd `args[0]`: UDP, or a TCP-like stream when `args[1]` = 1.
pub const OP_SOCKET: u32 = 3;
/// `args[0]` fd; bind to `addr`; `args[1]` = the socket's `REUSE_*` options.
pub const OP_BIND: u32 = 4;
/// `args[0]` fd; default destination `addr` (UDP), or connect a stream to `addr`
/// (`args[1]` = 1 if non-blocking: answer -EINPROGRESS and let poll/SO_ERROR tell).
pub const OP_CONNECT: u32 = 5;
/// `args[0]` fd; answer in `addr`.
pub const OP_GETSOCKNAME: u32 = 6;
/// `args[0]` fd; `data[..len]` to `addr` (port 0 and ip 0 = connected peer).
pub const OP_SENDTO: u32 = 7;
/// `args[0]` fd, `args[1]` = 1 if non-blocking, `args[2]` = timeout ns (0 = none),
/// `args[3]` = capacity, `args[4]` = 1 to peek. Answer: data, `len`, source in `addr`; for a
/// datagram, the address it was sent to in `args[5]` (its `IP_PKTINFO`).
pub const OP_RECVFROM: u32 = 8;
/// `args[0]` = count, `args[1]` = absolute deadline ns or u64::MAX; `polls[..count]`;
/// `args[2]` = 1 if the caller also watches real descriptors (it is woken to look again when
/// another thread of its node has run), `args[3]` = 1 if this is such a second look that found
/// nothing (the caller ran no program code since its last request, so it is not activity),
/// `args[4]` = 1 for a blocking write's wait for room, `args[5]` = the epoll set (0: `poll` or
/// `select`). An epoll wait also carries one u64 per entry in `data`: 0, or the read
/// generation the entry last reported plus one (its read side counts only once the object was
/// written since); the answer puts each entry's current read generation plus one there (0: the
/// object has none). See `epoll::READ_SIDE`.
pub const OP_POLL: u32 = 9;
/// `args[0]` fd closed.
pub const OP_CLOSE: u32 = 10;
/// The process is exiting (`args[0]` = status if known, or -1); no answer is awaited.
pub const OP_EXIT: u32 = 11;
/// An escape: `args[0]` = syscall number (or -1), `args[1]` = address; `data` = a name.
/// No answer is awaited; the host ends the run as Unsupported.
pub const OP_UNSUPPORTED: u32 = 12;
/// Many local calls without a hand-off (a busy loop on the clock): only charges their cost.
pub const OP_SPIN: u32 = 13;
/// A yield point with no effect (thread switches).
pub const OP_YIELD: u32 = 14;
/// The calling thread is about to create a thread. Answer: the new thread's slot (>= 0).
/// The new thread waits for `TURN_THREAD` before running any of the program's code; the host
/// counts it runnable from the creator's next request on (by then it exists).
pub const OP_THREAD_NEW: u32 = 15;
/// The calling thread is ending; no answer is awaited.
pub const OP_THREAD_EXIT: u32 = 16;
/// Wait until the thread in slot `args[0]` has ended.
pub const OP_JOIN: u32 = 17;
/// The mutex at `args[0]` is held by another thread: wait until it is unlocked.
pub const OP_MUTEX_WAIT: u32 = 18;
/// The mutex at `args[0]` was just unlocked.
pub const OP_MUTEX_UNLOCK: u32 = 19;
/// Unlocked the mutex `args[1]`; wait on the condition variable `args[0]` until signalled or
/// until the absolute virtual time `args[2]` (u64::MAX = never). Answer 0 or -ETIMEDOUT.
pub const OP_COND_WAIT: u32 = 20;
/// Signal the condition variable `args[0]` (`args[1]` = 1: broadcast; `args[2]` = 1: a
/// process-shared object, so waiters on that address in every process of the node wake).
pub const OP_COND_SIGNAL: u32 = 21;
/// Creating the thread announced in slot `args[0]` failed: forget it.
pub const OP_THREAD_ABORT: u32 = 22;
/// A file operation that already ran natively, for the record (until the storage model
/// simulates files): `args[0]` = FILE_* kind, `args[1]` = fd, `args[2]`/`args[3]` = offset
/// and length where they apply, `args[4]` = the result (-errno on failure); `data` = path(s),
/// NUL-separated, `len` = their length.
pub const OP_FILE: u32 = 23;

/// Stream `args[0]` listens (`args[1]` = backlog, `args[2]` = its `REUSE_*` options).
pub const OP_LISTEN: u32 = 24;
/// Accept on listening stream `args[0]` into the new fd `args[1]` (`args[2]` = 1 if
/// non-blocking). Answer 0 and the peer in `addr`, or -errno.
pub const OP_ACCEPT: u32 = 25;
/// Shut down stream `args[0]` (`args[1]` = how).
pub const OP_SHUTDOWN: u32 = 26;
/// `args[0]` fd; answer the peer in `addr`.
pub const OP_GETPEERNAME: u32 = 27;
/// `args[0]` fd; answer (and clear) its pending error (SO_ERROR), as a positive errno or 0.
pub const OP_SOCKERR: u32 = 28;

/// A program's futex wait (through `syscall(SYS_futex)`, as Rust's std does): `args[0]` = the
/// address (already checked to hold the expected value), `args[1]` = absolute deadline ns or
/// u64::MAX. Answer 0 when woken, -ETIMEDOUT.
pub const OP_FUTEX_WAIT: u32 = 29;
/// Wake up to `args[1]` futex waiters on address `args[0]` (`args[2]` = 1: a shared futex,
/// without `FUTEX_PRIVATE_FLAG`: in every process of the node). Answer: how many were woken.
pub const OP_FUTEX_WAKE: u32 = 30;
/// Descriptor `args[1]` now refers to the socket `args[0]` refers to (`dup`, `dup2`, `dup3`,
/// `fcntl(F_DUPFD*)`, already done natively; a socket `args[1]` held was closed first by an
/// `OP_CLOSE`). Answer `args[1]`, or -EBADF.
pub const OP_DUP: u32 = 31;
/// A new pipe between the process's threads: read end `args[0]`, write end `args[1]` (real
/// descriptors hold the numbers). Its ends are then read and written with `OP_RECVFROM` and
/// `OP_SENDTO`, polled, closed and duplicated like sockets.
pub const OP_PIPE: u32 = 32;
/// A new eventfd at `args[0]` with the counter `args[1]` (`args[2]` = 1: `EFD_SEMAPHORE`);
/// read and written (8 bytes) like a pipe end.
pub const OP_EVENTFD: u32 = 33;
/// A new connected pair of `AF_UNIX` stream sockets, `args[0]` and `args[1]`; read, written
/// and shut down like a stream.
pub const OP_SOCKETPAIR: u32 = 34;

/// `SO_REUSEADDR` is set (in `OP_BIND` / `OP_LISTEN` `REUSE_*` options).
pub const REUSE_ADDR: u8 = 1;
/// `SO_REUSEPORT` is set.
pub const REUSE_PORT: u8 = 2;

/// The address spaces a socket takes part in (`OP_SOCKET`, `OP_BIND`, `OP_CONNECT` carry
/// them): an IPv4 socket is in `SPACE_V4`; an IPv6 socket in `SPACE_V6`, and in `SPACE_V4`
/// too unless `IPV6_V6ONLY` is set (it then also sends and receives IPv4 traffic, with
/// addresses shown as `::ffff:a.b.c.d`). Ports clash only within a space they share.
pub const SPACE_V4: u8 = 1;
pub const SPACE_V6: u8 = 2;
/// The node's IPv6 loopback `::1` in a slot's `addr_ip` (the only IPv6 address a simulated
/// node has; traffic to it stays on the node, in `SPACE_V6`).
pub const LOOPBACK6: u32 = 1;
/// Node `k`'s IPv4 address is `NODE_IP_BASE + k` (127.1.0.1, 127.1.0.2, …).
pub const NODE_IP_BASE: u32 = u32::from_be_bytes([127, 1, 0, 1]);
/// IPv4 `127.0.0.1`: a node's own loopback (traffic to it stays on the node).
pub const LOCALHOST: u32 = u32::from_be_bytes([127, 0, 0, 1]);

// Child processes (ops 40+; 31-39 are other families').
/// The calling thread is about to `fork`. Answer: the child's slot (>= 0) or -errno, and its
/// virtual pid in `args[1]`. The child, once forked, says `OP_HELLO` on that slot.
pub const OP_FORK: u32 = 40;
/// The fork announced by `OP_FORK` happened: `args[0]` = the child's real pid (or -errno: it
/// failed), `args[1]` = its slot. The host waits for the child's hello, then answers the
/// child's virtual pid.
pub const OP_FORKED: u32 = 41;
/// `waitpid`: `args[0]` = the virtual pid waited for (-1: any child), `args[1]` = 1 for
/// `WNOHANG`, `args[2]` = 1 for `WNOWAIT` (leave it waitable). Blocks until a matching child
/// has ended. Answer its virtual pid and real pid in `args[1]` (the shim then reaps it for
/// real, which cannot block), 0 (`WNOHANG`, none ended yet), or -ECHILD / -EINTR.
pub const OP_WAIT: u32 = 42;
// 43 and 44 (kill, signal handler) were the first signal ops; signals are 50+ now.

// Signals and timers (numbered from 50, clear of the other families). Signal `n` is bit
// `n - 1` of a mask (`u64`, signals 1..=64).
/// The program set the disposition of signal `args[0]`: `args[1]` = SIGDISP_*, `args[2]` = its
/// `sa_flags` (the host looks at `SA_RESTART` only through the shim, which restarts calls).
pub const OP_SIGACTION: u32 = 50;
/// The calling thread's signal mask: `args[0]` = `SIG_BLOCK`/`SIG_UNBLOCK`/`SIG_SETMASK`, or
/// -1 to only read it; `args[1]` = the set. Answer: `args[1]` = the mask before, `args[2]` =
/// the mask now, `args[3]` = the signals pending for the thread (its own and its process's).
pub const OP_SIGMASK: u32 = 51;
/// Send signal `args[1]` (0: only check that the target exists). `args[2]` = SIGTO_*: to the
/// process with virtual pid `args[0]` (0: the caller's), or to the calling thread, or to the
/// thread in slot `args[0]` of the caller's process. `args[3]` = 1: `sigqueue`'s, with the
/// value `args[4]` (`SI_QUEUE`). Answer 0, -ESRCH, -EINVAL.
pub const OP_KILL: u32 = 52;
/// Wait for a signal with the mask temporarily `args[0]` (sigsuspend; `pause` passes its own
/// mask). Answer -EINTR once a signal was delivered.
pub const OP_SIGSUSPEND: u32 = 53;
/// Wait until a signal in the set `args[0]` is pending, or the deadline `args[1]` (ns, or
/// u64::MAX), and take it. Answer its number with its `SigInfo` in `data`, or -EAGAIN.
pub const OP_SIGWAIT: u32 = 54;

/// A new timer: `args[0]` = TIMER_KIND_*; POSIX: `args[1]` = signal, `args[2]` =
/// `sigev_value`, `args[4]` = 1 for SIGEV_NONE; timerfd: `args[3]` = its fd. Answer: the id
/// (POSIX timers from 0; timerfd `fd` is `TIMERFD_ID_BASE + fd`).
pub const OP_TIMER_CREATE: u32 = 55;
/// Arm timer `args[0]` (`TIMER_ID_ITIMER_REAL`: the process's alarm/ITIMER_REAL) to expire at
/// the virtual time `args[1]` (ns; 0 disarms), then every `args[2]` ns (0: once). Answer:
/// `args[1]` = what was left of the old setting (0: disarmed), `args[2]` = its interval.
pub const OP_TIMER_SET: u32 = 56;
/// Timer `args[0]`: answer `args[1]` = time left (0: disarmed), `args[2]` = interval,
/// `args[3]` = overruns at its last expiration.
pub const OP_TIMER_GET: u32 = 57;
/// Delete timer `args[0]` (also: timerfd closed).
pub const OP_TIMER_DELETE: u32 = 58;
/// Read timerfd `args[0]` (`args[1]` = 1 if non-blocking): answer the expirations since the
/// last read (> 0), or -EAGAIN.
pub const OP_TIMERFD_READ: u32 = 59;

/// Signalfd `args[0]` reads the signals of mask `args[1]` (created or changed), or is closed
/// (`args[2]` = 1).
pub const OP_SIGNALFD: u32 = 60;
/// Read signalfd `args[0]` (`args[1]` = 1 if non-blocking), at most `args[2]` signals: answer
/// how many were taken, their `SigInfo`s in `data`, or -EAGAIN.
pub const OP_SIGNALFD_READ: u32 = 61;
/// Stage descriptors to pass (`SCM_RIGHTS`) with the next bytes written to socketpair end
/// `args[0]`: `args[1]` of them, i32 each in `data` (-1: drop batch `args[3]`, 0 the staged
/// one). Answer the batch's number (> 0). A read that takes those bytes answers the number in
/// `args[5]`. With `args[2]` = 1 the batch is only registered: the kernel carries its number
/// (a real socket, `passreal`).
pub const OP_PASS: u32 = 62;
/// Batch `args[0]` was received: `args[1]` new descriptor numbers (i32 each in `data`, -1 for
/// one not kept). Answer 0, and in `data` a byte per descriptor: 1 datagram socket, 2 stream
/// socket, 3 process-local object, 4 data-directory file, 0 not simulated.
pub const OP_ADOPT: u32 = 63;
/// The epoll set `args[0]` of the caller's process changed: its threads waiting on it (their
/// `OP_POLL` had `args[5]` = that set) answer [`TOUCHED`] at once and look again.
pub const OP_EPOLL_TOUCH: u32 = 64;
/// The virtual pid of the run's process whose real pid is `args[0]` (0: none of the run's),
/// also for a process group or session id, which is its leader's pid: a node's program leads
/// its own, as a service manager starts it.
pub const OP_VIRTUAL_PID: u32 = 65;
/// The real pid of the caller's node's process with virtual pid `args[0]`, or 0.
pub const OP_REAL_PID: u32 = 66;
/// The caller's node's processes as `/proc` lists them, running or ended but not yet waited
/// for: their virtual pids in `data`, ascending `u32`s. Answer: how many.
pub const OP_PROCS: u32 = 67;
/// What `/proc/<args[0]>/stat` says of the caller's node's process with that virtual pid.
/// Answer: its real pid (0: no such process), with `args[1]` its parent's virtual pid (1 for a
/// node's program, as a service manager's child), `args[2]` its group's and `args[3]` its
/// session's (0 once unreadable), `args[4]` = 1 when it has ended unwaited (a zombie).
pub const OP_PROC_INFO: u32 = 68;
/// The caller's node's sockets as `/proc/net/<args[0]>` lists them ([`NET_TCP`] and the rest):
/// those Linux has in its tables (listening, connecting or connected streams; bound datagram
/// sockets). Answer: how many, each a [`NET_RECORD`]-byte record in `data`: local address
/// `u32` (as a slot carries it), remote address `u32`, inode `u32`, local port `u16`, remote
/// port `u16`, Linux's `TCP_*` state `u8`, zero padding.
pub const OP_SOCKETS: u32 = 69;
/// The inode `/proc` shows for descriptor `args[1]` of the caller's node's process with
/// virtual pid `args[0]`, when it is a simulated socket (`socket:[N]`); 0 otherwise.
pub const OP_SOCK_INODE: u32 = 70;
/// `OP_SOCKETS` tables: IPv4 streams, IPv6 streams, IPv4 datagrams, IPv6 datagrams.
pub const NET_TCP: i64 = 0;
pub const NET_TCP6: i64 = 1;
pub const NET_UDP: i64 = 2;
pub const NET_UDP6: i64 = 3;
/// The size of an `OP_SOCKETS` record.
pub const NET_RECORD: usize = 20;
/// A simulated socket's inode is this plus its object's number: far above the small inode
/// numbers the machine's own init has for its sockets, which `ss -p` reads too.
pub const SOCK_INODE_BASE: u32 = 1 << 28;
/// The answer of a poll ended by `OP_EPOLL_TOUCH` (no errno is this large).
pub const TOUCHED: i64 = -(1 << 30);

// The simulated disk (ops 90+): calls on files under a node's data directories, served from
// the host's per-node disk model. Paths travel NUL-terminated in `data`: absolute and already
// normalised by the shim when `dirfd` is `AT_FDCWD`, else relative to the disk directory open
// at `dirfd`. Answers are `ret` (>= 0, or -errno); a call the model cannot serve ends the run
// as unsupported, naming it.
/// `args[0]` = DISK_* kind, the rest as each kind says.
pub const OP_DISK: u32 = 90;
/// Open: `args[1]` = the placeholder fd the shim holds the number with, `args[2]` = flags,
/// `args[3]` = dirfd. Answer the fd.
pub const DISK_OPEN: i64 = 1;
/// Read: `args[1]` = fd, `args[2]` = offset (-1: the fd's own, advanced), `args[3]` = length
/// (at most `DATA_MAX`), `args[4]` = 1 for the page-in of a mapping (no latent sector error is
/// drawn). Answer the count, bytes in `data`.
pub const DISK_READ: i64 = 2;
/// Write `data[..len]`: `args[1]` = fd, `args[2]` = offset (-1: the fd's own, or the end with
/// `O_APPEND`), `args[3]` = 1 when more of the same call follows (the host buffers the parts
/// and performs one write with the last). Answer the count (of all parts, with the last).
pub const DISK_WRITE: i64 = 3;
/// `lseek`: `args[1]` = fd, `args[2]` = offset, `args[3]` = whence. Answer the new offset.
pub const DISK_SEEK: i64 = 4;
/// `fsync`/`fdatasync` (`args[2]` = 1) of fd `args[1]`, a file or a directory.
pub const DISK_FSYNC: i64 = 5;
/// `ftruncate(args[1], args[2])`.
pub const DISK_TRUNCATE: i64 = 6;
/// `stat`: `args[1]` = fd (`args[3]` = 1: `fstat` of it) or dirfd with the path, `args[2]` =
/// `AT_*` flags. Answer 0 with `args[1]` = mode, `args[2]` = size, `args[3]` = inode number,
/// `args[4]` = link count.
pub const DISK_STAT: i64 = 7;
/// `renameat2`: `args[1]`/`args[2]` = the two dirfds, `args[3]` = flags; `data` = both paths.
pub const DISK_RENAME: i64 = 8;
/// `unlinkat`: `args[1]` = dirfd, `args[2]` = flags.
pub const DISK_UNLINK: i64 = 9;
/// `mkdirat`: `args[1]` = dirfd.
pub const DISK_MKDIR: i64 = 10;
/// `faccessat`: `args[1]` = dirfd, `args[2]` = mode.
pub const DISK_ACCESS: i64 = 11;
/// Directory entries of fd `args[1]` from its position, as `linux_dirent64` records in
/// `data`, at most `args[2]` bytes; the position moves past them. Answer the bytes (0: end).
pub const DISK_LIST: i64 = 12;
/// An advisory lock on fd `args[1]`: `args[2]` = 0 unlock, 1 shared (read), 2 exclusive
/// (write); bytes `[args[3], args[4])` (`u64::MAX`: to the end); `args[5]` = `LOCK_*` bits.
/// Answer 0, `-EAGAIN` for a conflict, or, with `LOCK_WAIT`, [`TOUCHED`] once the thread has
/// waited for a lock of the file to go (ask again). With `LOCK_QUERY` (`F_GETLK`) nothing is
/// changed: `args[1]` = the conflicting lock's kind (0: none), `args[2]` its start,
/// `args[3]` its length (0: to the end), `args[4]` its process's virtual pid (-1: none).
pub const DISK_LOCK: i64 = 13;
/// `DISK_LOCK` bits: a `flock` lock (whole file, owned by the open file description, apart
/// from record locks); an OFD record lock (owned by the description); wait for a conflicting
/// lock to go; only ask.
pub const LOCK_FLOCK: i64 = 1;
pub const LOCK_OFD: i64 = 2;
pub const LOCK_WAIT: i64 = 4;
pub const LOCK_QUERY: i64 = 8;
/// `fcntl(F_GETFL)` of fd `args[1]`: answer its status flags.
pub const DISK_GETFL: i64 = 14;
/// `sync`/`syncfs`: every file and directory of the node's disk becomes durable.
pub const DISK_SYNC: i64 = 15;
/// A shared mapping of fd `args[1]`'s file (`args[2]` = offset, `args[3]` = length,
/// `args[4]` = 1 when it is writable) begins.
/// Answer a token (> 0) naming it, and in `data` the NUL-terminated path of the real backing
/// file the host keeps alike with the model, which the shim maps instead.
pub const DISK_MAP: i64 = 16;
/// The mapping named by token `args[1]` ended (`munmap`).
pub const DISK_UNMAP: i64 = 17;
/// `linkat`: `args[1]`/`args[2]` = the two dirfds, `args[3]` = flags; `data` = both paths.
pub const DISK_LINK: i64 = 18;
/// `msync` of the mapping with token `args[1]`: its stores reach the model, and with
/// `args[2]` = 1 (`MS_SYNC`) the file becomes durable. Answer 0.
pub const DISK_MSYNC: i64 = 19;
/// The shared mapping with token `args[1]` became writable (`mprotect`). Answer 0.
pub const DISK_WRITABLE: i64 = 20;

/// The environment variable naming a node's data directories (absolute, `:`-separated).
pub const ENV_DATA_DIRS: &[u8] = b"WEFT_DATA_DIRS\0";

pub const TIMER_KIND_POSIX: i64 = 1;
pub const TIMER_KIND_FD: i64 = 2;
pub const TIMER_ID_ITIMER_REAL: i64 = -1;
pub const TIMERFD_ID_BASE: i64 = 1 << 32;

pub const SIGDISP_DEFAULT: i64 = 0;
pub const SIGDISP_IGNORE: i64 = 1;
pub const SIGDISP_HANDLER: i64 = 2;

pub const SIGTO_PROCESS: i64 = 0;
pub const SIGTO_SELF: i64 = 1;
pub const SIGTO_THREAD: i64 = 2;

/// The `si_code`s the host stamps (Linux's values).
pub const SI_USER: i32 = 0;
pub const SI_KERNEL: i32 = 0x80;
pub const SI_TIMER: i32 = -2;
pub const SI_TKILL: i32 = -6;
pub const SI_QUEUE: i32 = -1;

/// Signals the host delivers with one answer, at most.
pub const SIG_BATCH: usize = 32;

/// One delivered (or waited-for) signal: what `siginfo_t` tells a handler.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct SigInfo {
    pub signo: i32,
    pub code: i32,
    /// Sender's virtual pid (`kill`), or 0.
    pub pid: i32,
    /// POSIX timer id (`SI_TIMER`), or 0.
    pub timer: i32,
    /// Timer overruns (`SI_TIMER`).
    pub overrun: i32,
    /// `SIGCHLD`: the child's exit status (`CLD_EXITED`) or the signal that ended it.
    pub status: i32,
    /// `sigev_value` of a POSIX timer.
    pub value: u64,
}

pub const FILE_OPEN: i64 = 1;
pub const FILE_READ: i64 = 2;
pub const FILE_WRITE: i64 = 3;
pub const FILE_FSYNC: i64 = 4;
pub const FILE_FDATASYNC: i64 = 5;
pub const FILE_TRUNCATE: i64 = 6;
pub const FILE_CLOSE: i64 = 7;
pub const FILE_RENAME: i64 = 8;
pub const FILE_UNLINK: i64 = 9;

/// One entry of a poll request: fd, requested events, answered events.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct PollEntry {
    pub fd: i32,
    pub events: i16,
    pub revents: i16,
}

#[repr(C)]
pub struct Header {
    pub magic: u64,
    /// Virtual time in nanoseconds since the start of the run; written by the host only.
    pub now_ns: AtomicU64,
    /// How many iterations a thread may spin waiting for the host's answer before it sleeps
    /// (0: the host and the processes share a CPU, where spinning only delays the answer).
    /// Written by the host before it starts any process. Affects speed only, never a run.
    pub spin: AtomicU32,
}

#[repr(C)]
pub struct Slot {
    pub turn: AtomicU32,
    /// With `TURN_PASS`: the slot to wake. Written by the host before the `turn` update that
    /// publishes it.
    pub pass_to: AtomicU32,
    pub op: u32,
    /// Calls the process served locally (clock reads, random bytes) since its last hand-off,
    /// written by the thread with every request: the host charges them as modelled CPU time.
    /// Here, beside `op`, so that what a request writes stays in the slot's first cache line
    /// (`turn`, `op`, `args`) and the answer's line (`ret`, `nsig`) is written by the host
    /// only: a hand-off moves each line once each way.
    pub local_calls: u32,
    pub args: [i64; 6],
    pub ret: i64,
    pub addr_ip: u32,
    pub addr_port: u16,
    pub _pad: u16,
    pub len: u32,
    pub _pad2: u32,
    /// Signals delivered with this answer (`sigs[..nsig]`, written by the host before it hands
    /// the turn back; the shim runs their handlers or default actions and clears the count).
    /// An answer of `-EINTR` with `nsig > 0` means the blocking call was interrupted by them.
    pub nsig: u32,
    pub _pad3: u32,
    pub sigs: [SigInfo; SIG_BATCH],
    pub polls: [PollEntry; POLL_MAX],
    pub data: [u8; DATA_MAX],
}

/// Byte offset of slot `i` in the region.
pub const fn slot_offset(i: usize) -> usize {
    let h = (core::mem::size_of::<Header>() + 4095) & !4095;
    let s = (core::mem::size_of::<Slot>() + 4095) & !4095;
    h + i * s
}

/// Size of the whole region.
pub const REGION_SIZE: usize = slot_offset(MAX_SLOTS);
