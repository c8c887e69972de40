//! Raw system calls, futexes, and the escape trap (a seccomp filter plus a SIGSYS handler).
//!
//! The filter traps the system calls the shim virtualises when they are made from anywhere but
//! the shim's own `syscall` instruction (in [`raw_ret`]), so the shim's pass-through calls run
//! while a program's raw `syscall(SYS_getrandom, …)` or an unhooked libc path is caught and
//! reported as unsupported. One libc-internal call is emulated instead of reported: glibc's
//! malloc seeds its tcache key with `getrandom`, which is harmless once the bytes come from the
//! process's deterministic stream.
//!
//! Threads and processes made by raw system calls are trapped too: `fork` and `vfork` from
//! anywhere but the stub, `clone3` from anywhere but the stub and glibc's `__clone3`, `clone`
//! with `CLONE_VM` from anywhere but the stub and glibc's `clone()`, and `clone` without it
//! from anywhere but the stub and glibc's `_Fork`. glibc's own `clone3` (in `pthread_create`)
//! is told ENOSYS, so glibc uses `clone`, whose flags a filter can read (`clone3` keeps them
//! in memory a filter cannot). The SIGSYS handler simulates a trapped fork-like call (no
//! `CLONE_VM`: `fork`, `vfork`, `clone`, `clone3`) as a fork (`clone::trapped`) and reports
//! the rest. glibc's code is recognised by the offset of its `syscall` within its page (the
//! same in every image), so a raw call whose instruction happens to sit at the same offset
//! (1 in 4096) is not caught.

use core::ffi::{c_int, c_void};
use core::sync::atomic::AtomicU32;

/// A raw system call; answers the kernel's result (`-errno` on failure).
///
/// Never inlined: the seccomp filter allows the trapped calls only from this function's code.
#[inline(never)]
pub unsafe fn raw_ret(nr: i64, a: [i64; 6]) -> i64 {
    let ret: i64;
    // SAFETY: the x86-64 Linux system call ABI; the caller vouches for the arguments.
    core::arch::asm!(
        "syscall",
        inlateout("rax") nr => ret,
        in("rdi") a[0], in("rsi") a[1], in("rdx") a[2],
        in("r10") a[3], in("r8") a[4], in("r9") a[5],
        lateout("rcx") _, lateout("r11") _,
        options(nostack)
    );
    ret
}

/// A raw system call with libc's convention (-1 and errno on failure).
pub unsafe fn raw(nr: i64, a: [i64; 6]) -> i64 {
    let r = raw_ret(nr, a);
    if r < 0 && r > -4096 {
        *libc::__errno_location() = (-r) as c_int;
        -1
    } else {
        r
    }
}

pub fn exit_group(status: c_int) -> ! {
    loop {
        // SAFETY: exit_group takes one integer and does not return.
        unsafe { raw_ret(libc::SYS_exit_group, [status as i64, 0, 0, 0, 0, 0]) };
    }
}

/// Waits while `*word == expected` (spurious wake-ups are fine: callers loop).
pub fn futex_wait(word: &AtomicU32, expected: u32) {
    // Raw, not libc's syscall(): the shim interposes that symbol (for programs' futexes), and
    // its own hand-off must never go through the simulation.
    let args = [word as *const AtomicU32 as i64, libc::FUTEX_WAIT as i64, expected as i64, 0, 0, 0];
    // SAFETY: a shared (not private) futex wait on a word of the shared mapping.
    unsafe { raw_ret(libc::SYS_futex, args) };
}

pub fn futex_wake(word: &AtomicU32) {
    let args = [word as *const AtomicU32 as i64, libc::FUTEX_WAKE as i64, i32::MAX as i64, 0, 0, 0];
    // SAFETY: waking waiters on a word of the shared mapping.
    unsafe { raw_ret(libc::SYS_futex, args) };
}

/// System calls that must not run unobserved: the shim serves them, so one reaching the
/// kernel from elsewhere is an escape.
const TRAPPED: &[(i64, &[u8])] = &[
    (libc::SYS_getrandom, b"getrandom"),
    (libc::SYS_clock_gettime, b"clock_gettime"),
    (libc::SYS_gettimeofday, b"gettimeofday"),
    (libc::SYS_time, b"time"),
    (libc::SYS_nanosleep, b"nanosleep"),
    (libc::SYS_clock_nanosleep, b"clock_nanosleep"),
    (libc::SYS_socket, b"socket"),
    (libc::SYS_bind, b"bind"),
    (libc::SYS_connect, b"connect"),
    (libc::SYS_sendto, b"sendto"),
    (libc::SYS_recvfrom, b"recvfrom"),
    (libc::SYS_sendmsg, b"sendmsg"),
    (libc::SYS_recvmsg, b"recvmsg"),
    (libc::SYS_sendmmsg, b"sendmmsg"),
    (libc::SYS_recvmmsg, b"recvmmsg"),
    (libc::SYS_poll, b"poll"),
    (libc::SYS_ppoll, b"ppoll"),
    (libc::SYS_select, b"select"),
    (libc::SYS_pselect6, b"pselect6"),
    (libc::SYS_epoll_wait, b"epoll_wait"),
    (libc::SYS_epoll_pwait, b"epoll_pwait"),
    (libc::SYS_epoll_pwait2, b"epoll_pwait2"),
    // The simulated machine's kernel has neither io_uring nor Linux AIO (their completions
    // would come in real time, and a wait for them in `io_getevents` blocked unseen): the
    // handler answers `ENOSYS`, as a kernel built without them does, and programs fall back
    // (libuv to epoll, MariaDB's InnoDB to its own threads).
    (libc::SYS_io_uring_setup, b"io_uring_setup"),
    (libc::SYS_io_setup, b"io_setup"),
    // Replacing the image must keep the shim, and waiting for a child must happen in virtual
    // time: both only through the hooks.
    (libc::SYS_execve, b"execve"),
    (libc::SYS_execveat, b"execveat"),
    (libc::SYS_wait4, b"wait4"),
    (libc::SYS_waitid, b"waitid"),
    // Every process must be seen (`clone` and `clone3` have their own tests in the filter);
    // glibc 2.34+ never makes these two.
    (libc::SYS_fork, b"fork"),
    (libc::SYS_vfork, b"vfork"),
    // What the machine is differs between real ones: answered as `machine` simulates it.
    (libc::SYS_uname, b"uname"),
    (libc::SYS_sysinfo, b"sysinfo"),
    (libc::SYS_sched_getaffinity, b"sched_getaffinity"),
    // The clock's discipline and setters: reads answer the virtual clock, writes are refused
    // by name (`crate::clockset`). glibc's `adjtimex`, `ntp_adjtime` and `ntp_gettime` all
    // make `clock_adjtime` inside libc, where no hook sees them.
    (libc::SYS_adjtimex, b"adjtimex"),
    (libc::SYS_clock_adjtime, b"clock_adjtime"),
    (libc::SYS_settimeofday, b"settimeofday"),
    (libc::SYS_clock_settime, b"clock_settime"),
    // Closing simulated descriptors must reach the host: served by the handler.
    (libc::SYS_close_range, b"close_range"),
    // A queued signal names a virtual pid (`sigqueue` is hooked; the raw call is an escape).
    (libc::SYS_rt_sigqueueinfo, b"rt_sigqueueinfo"),
    (libc::SYS_rt_tgsigqueueinfo, b"rt_tgsigqueueinfo"),
];

fn trapped_name(nr: i64) -> &'static [u8] {
    match nr {
        libc::SYS_clone => return b"clone",
        libc::SYS_clone3 => return b"clone3",
        _ => {}
    }
    TRAPPED.iter().find(|t| t.0 == nr).map(|t| t.1).unwrap_or(b"?")
}

/// The offsets within a page of the addresses after glibc's three process-making `syscall`
/// instructions (what the filter sees as the instruction pointer): `clone`'s (in `clone()`),
/// `clone3`'s (in the internal `__clone3`) and the fork's (`clone` without `CLONE_VM`, in
/// `_Fork`, which `fork`, `daemon` and `forkpty` reach). An offset, unlike an address, is the
/// same in every image that maps this libc, so a filter inherited across `exec` still
/// recognises it. `None` where the code is not as expected.
#[derive(Clone, Copy)]
struct LibcOffsets {
    clone: Option<u32>,
    clone3: Option<u32>,
    fork: Option<u32>,
}

fn libc_clone_offsets() -> LibcOffsets {
    // mov $SYS_clone, %eax; syscall — and the same for SYS_clone3 (435).
    const CLONE: [u8; 7] = [0xb8, 56, 0, 0, 0, 0x0f, 0x05];
    const CLONE3: [u8; 7] = [0xb8, 0xb3, 0x01, 0, 0, 0x0f, 0x05];
    let none = LibcOffsets { clone: None, clone3: None, fork: None };
    let Some((text, clone_at)) = libc_text() else { return none };
    let offset = |at: usize| ((text.as_ptr() as usize + at + 7) & 0xfff) as u32;
    let first = |from: usize, len: usize, what: &[u8; 7]| {
        let to = (from + len).min(text.len());
        text[from.min(to)..to].windows(7).position(|w| w == what).map(|at| offset(from + at))
    };
    // `clone()`'s own (`_Fork` has the same two instructions elsewhere).
    let clone = first(clone_at, 128, &CLONE);
    // `_Fork`'s (exported since glibc 2.34; older ones fork from `fork` itself).
    let fork = ["_Fork", "fork"].iter().find_map(|name| {
        let at = libc_symbol(name, text)?;
        first(at, 128, &CLONE)
    });
    // `__clone3`'s (not exported, so not found by name): the first one near `clone()` (glibc
    // links the two side by side), else anywhere (a slow scan of all of libc's code).
    const NEAR: usize = 64 << 10;
    let clone3 = first(clone_at.saturating_sub(NEAR), 2 * NEAR, &CLONE3)
        .or_else(|| first(0, text.len(), &CLONE3));
    LibcOffsets { clone, clone3, fork }
}

/// Where libc's function `name` starts within `text`, if it is there.
fn libc_symbol(name: &str, text: &[u8]) -> Option<usize> {
    let mut buf = [0u8; 16];
    buf[..name.len()].copy_from_slice(name.as_bytes());
    // SAFETY: dlsym (the next definition, libc's, not the shim's) with a NUL-terminated name.
    let addr = unsafe { libc::dlsym(libc::RTLD_NEXT, buf.as_ptr().cast()) } as usize;
    let start = text.as_ptr() as usize;
    (start..start + text.len()).contains(&addr).then(|| addr - start)
}

/// The executable segment of the libc that holds `clone()`, and where in it `clone()` starts.
fn libc_text() -> Option<(&'static [u8], usize)> {
    struct Find {
        addr: usize,
        text: (usize, usize),
    }
    unsafe extern "C" fn each(info: *mut libc::dl_phdr_info, _: usize, data: *mut c_void) -> c_int {
        // SAFETY: dl_iterate_phdr passes a valid info and our `Find`.
        let (info, find) = unsafe { (&*info, &mut *(data as *mut Find)) };
        for i in 0..info.dlpi_phnum as usize {
            // SAFETY: `dlpi_phdr` has `dlpi_phnum` entries.
            let ph = unsafe { &*info.dlpi_phdr.add(i) };
            let start = info.dlpi_addr as usize + ph.p_vaddr as usize;
            let end = start + ph.p_memsz as usize;
            let text = ph.p_type == libc::PT_LOAD && ph.p_flags & libc::PF_X != 0;
            if text && (start..end).contains(&find.addr) {
                find.text = (start, end);
                return 1;
            }
        }
        0
    }
    // SAFETY: dlsym (the next `clone`, libc's, not the shim's) with a NUL-terminated name.
    let addr = unsafe { libc::dlsym(libc::RTLD_NEXT, c"clone".as_ptr()) } as usize;
    if addr == 0 {
        return None;
    }
    let mut find = Find { addr, text: (0, 0) };
    // SAFETY: the callback only reads what it is given and writes our `Find`.
    unsafe { libc::dl_iterate_phdr(Some(each), &mut find as *mut Find as *mut c_void) };
    let (start, end) = find.text;
    if end <= start {
        return None;
    }
    // SAFETY: a loaded, readable and executable segment of libc, mapped for the process's life.
    let text = unsafe { core::slice::from_raw_parts(start as *const u8, end - start) };
    Some((text, addr - start))
}

const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;

fn stmt(code: u16, k: u32) -> libc::sock_filter {
    libc::sock_filter { code, jt: 0, jf: 0, k }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

/// Installs the SIGSYS handler and the seccomp filter. Prints a note and carries on without
/// the trap where the kernel refuses (escapes then go undetected, which the note says).
pub fn install_escape_trap() {
    // libc's own sigaction: the shim's `sigaction` records a program's SIGSYS handler only.
    let real_sigaction =
        real!(sigaction: fn(c_int, *const libc::sigaction, *mut libc::sigaction) -> c_int);
    // SAFETY: installing a SA_SIGINFO handler with a valid function pointer.
    unsafe {
        let mut sa: libc::sigaction = core::mem::zeroed();
        sa.sa_sigaction = on_sigsys as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO | libc::SA_NODEFER;
        libc::sigemptyset(&mut sa.sa_mask);
        if real_sigaction(libc::SIGSYS, &sa, core::ptr::null_mut()) != 0 {
            crate::slot::diag(
                b"weft-shim: note: no SIGSYS handler; raw system calls go undetected\n",
            );
            return;
        }
    }
    let start = raw_ret as *const () as usize as u64;
    let end = start + 256;
    if start >> 32 != end >> 32 {
        crate::slot::diag(
            b"weft-shim: note: syscall stub straddles 4 GiB; raw system calls go undetected\n",
        );
        return;
    }
    const LD_W_ABS: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
    const JEQ: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
    const JGE: u16 = (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16;
    const JSET: u16 = (libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K) as u16;
    const AND: u16 = (libc::BPF_ALU | libc::BPF_AND | libc::BPF_K) as u16;
    const RET: u16 = (libc::BPF_RET | libc::BPF_K) as u16;
    const JA: u16 = (libc::BPF_JMP | libc::BPF_JA) as u16;
    const TAX: u16 = (libc::BPF_MISC | libc::BPF_TAX) as u16;
    const TXA: u16 = (libc::BPF_MISC | libc::BPF_TXA) as u16;
    let offsets = libc_clone_offsets();
    if offsets.clone.is_none() || offsets.clone3.is_none() {
        crate::slot::diag(
            b"weft-shim: note: glibc's clone code not recognised; raw thread clones go undetected\n",
        );
    }
    if offsets.fork.is_none() {
        crate::slot::diag(
            b"weft-shim: note: glibc's fork code not recognised; raw fork-like clones go undetected\n",
        );
    }
    let n = TRAPPED.len();
    let clone_at = 4 + n; // `clone`: trapped unless glibc's thread or fork
    let clone3_at = clone_at + 10; // `clone3`: trapped, or ENOSYS for glibc's
    let enosys_at = clone3_at + 4;
    let allow_at = enosys_at + 1; // not trapped
    let getrandom_at = allow_at + 1; // glibc malloc's tcache key: allowed
    let check_at = getrandom_at + 5; // the IP check
    let mut prog = [stmt(0, 0); 80];
    let mut i = 0;
    let mut push = |f: libc::sock_filter| {
        prog[i] = f;
        i += 1;
    };
    // Relative distance from the instruction being pushed at `from` to `to`.
    let to = |from: usize, to: usize| (to - from - 1) as u8;
    // [0] arch check
    push(stmt(LD_W_ABS, 4));
    push(jump(JEQ, AUDIT_ARCH_X86_64, 1, 0));
    push(stmt(RET, libc::SECCOMP_RET_ALLOW));
    // [3] syscall number
    push(stmt(LD_W_ABS, 0));
    // [4 .. 4+n) one test per trapped call: jump to the IP check, else fall through.
    for (k, t) in TRAPPED.iter().enumerate() {
        let then = if t.0 == libc::SYS_getrandom { getrandom_at } else { check_at };
        push(jump(JEQ, t.0 as u32, to(4 + k, then), 0));
    }
    // Both tests are off (a number no call has) unless glibc's code was recognised.
    let (clone_nr, clone3_nr) = match (offsets.clone, offsets.clone3) {
        (Some(_), Some(_)) => (libc::SYS_clone as u32, libc::SYS_clone3 as u32),
        _ => (u32::MAX, u32::MAX),
    };
    // [clone_at] `clone` with CLONE_VM (a thread, or a vfork) is trapped unless it comes from
    // glibc's `clone()` (pthread_create's fallback; the program's own calls of it reach the
    // shim's hook first); without it (a fork) unless it comes from glibc's `_Fork` (the
    // shim's `fork` calls it; the program's own calls of `fork` and `_Fork` reach the hooks).
    // The shim's stub may make either (the IP check). A trapped fork is simulated by the
    // SIGSYS handler. If `_Fork` was not recognised, forks are let through as before.
    push(jump(JEQ, clone_nr, 0, to(clone_at, clone3_at)));
    push(stmt(LD_W_ABS, 8)); // instruction pointer, low word, within its page
    push(stmt(AND, 0xfff));
    push(stmt(TAX, 0));
    push(stmt(LD_W_ABS, 16)); // args[0], low word: the flags
    push(jump(JSET, libc::CLONE_VM as u32, 0, 2));
    push(stmt(TXA, 0)); // [clone_at + 6] a thread: glibc's clone()?
    let off = offsets.clone.unwrap_or(0);
    push(jump(JEQ, off, to(clone_at + 7, allow_at), to(clone_at + 7, check_at)));
    push(stmt(TXA, 0)); // [clone_at + 8] a fork: glibc's _Fork?
    push(match offsets.fork {
        Some(off) => jump(JEQ, off, to(clone_at + 9, allow_at), to(clone_at + 9, check_at)),
        None => stmt(JA, to(clone_at + 9, allow_at) as u32),
    });
    // [clone3_at] glibc's own `clone3` (pthread_create, posix_spawn) is told ENOSYS, so glibc
    // falls back to `clone`, whose flags the filter can read (`clone3` keeps them in memory).
    // A trap would not do: glibc makes it with every signal blocked, SIGSYS too. Any other
    // is trapped; the SIGSYS handler simulates one without CLONE_VM as a fork.
    push(jump(JEQ, clone3_nr, 0, to(clone3_at, allow_at)));
    push(stmt(LD_W_ABS, 8));
    push(stmt(AND, 0xfff));
    let off3 = offsets.clone3.unwrap_or(0);
    push(jump(JEQ, off3, to(clone3_at + 3, enosys_at), to(clone3_at + 3, check_at)));
    // [enosys_at]
    push(stmt(RET, libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32));
    // [allow_at] not trapped
    push(stmt(RET, libc::SECCOMP_RET_ALLOW));
    // [getrandom_at] 8 bytes with GRND_NONBLOCK is glibc malloc's tcache key, drawn when the
    // first allocation is made: in an exec'd image that can be in another library's
    // constructor, before the shim's has installed the SIGSYS handler, and the trap would kill
    // the process (the filter outlives exec; the handler does not). It only marks freed
    // chunks, and in a first image it is drawn for real before the filter exists anyway.
    push(stmt(LD_W_ABS, 24)); // args[1], low word: the length
    push(jump(JEQ, 8, 0, to(getrandom_at + 1, check_at)));
    push(stmt(LD_W_ABS, 32)); // args[2], low word: the flags
    push(jump(JEQ, libc::GRND_NONBLOCK, 0, to(getrandom_at + 3, check_at)));
    push(stmt(RET, libc::SECCOMP_RET_ALLOW));
    // [check_at] IP check: high word, then start <= low < end.
    push(stmt(LD_W_ABS, 12));
    push(jump(JEQ, (start >> 32) as u32, 0, 4));
    push(stmt(LD_W_ABS, 8));
    push(jump(JGE, start as u32, 0, 2));
    push(jump(JGE, end as u32, 1, 0));
    push(stmt(RET, libc::SECCOMP_RET_ALLOW));
    push(stmt(RET, libc::SECCOMP_RET_TRAP));
    let fprog = libc::sock_fprog { len: i as u16, filter: prog.as_ptr() as *mut libc::sock_filter };
    // SAFETY: prctl with documented arguments; `fprog` points at `i` initialised instructions.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
            || libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &fprog as *const _) != 0
        {
            crate::slot::diag(
                b"weft-shim: note: seccomp refused; raw system calls go undetected\n",
            );
        }
    }
}

/// Whether `nr` makes a thread or process (the SIGSYS handler simulates the fork-like ones).
fn is_process_call(nr: i64) -> bool {
    matches!(nr, libc::SYS_clone | libc::SYS_clone3 | libc::SYS_fork | libc::SYS_vfork)
}

/// A socket option of a real descriptor (-1 when it is not a socket).
fn real_sockopt(fd: c_int, name: c_int) -> c_int {
    let mut v: c_int = -1;
    let mut len = core::mem::size_of::<c_int>() as libc::socklen_t;
    let q = [
        fd as i64,
        libc::SOL_SOCKET as i64,
        name as i64,
        &mut v as *mut c_int as i64,
        &mut len as *mut libc::socklen_t as i64,
        0,
    ];
    // SAFETY: getsockopt into a local int; not a trapped call.
    if unsafe { raw_ret(libc::SYS_getsockopt, q) } != 0 {
        return -1;
    }
    v
}

/// Whether a trapped socket call made inside libc touches neither a simulated socket nor the
/// real IPv4/IPv6 network (so it may run as is). An IP datagram socket may be made and
/// connected (glibc's `getaddrinfo` does so to sort its answers by source address: a UDP
/// connect sends nothing); sending on one is not harmless.
fn harmless_socket_call(nr: i64, args: &[i64; 6]) -> bool {
    let inet = |domain: i64| domain == libc::AF_INET as i64 || domain == libc::AF_INET6 as i64;
    let dgram = |ty: i64| ty & 0xf == libc::SOCK_DGRAM as i64;
    match nr {
        libc::SYS_socket => !inet(args[0]) || dgram(args[1]),
        libc::SYS_connect => {
            let fd = args[0] as c_int;
            let real_dgram = dgram(real_sockopt(fd, libc::SO_TYPE) as i64);
            !crate::fdtable::is_sim(fd)
                && (!inet(real_sockopt(fd, libc::SO_DOMAIN) as i64) || real_dgram)
        }
        libc::SYS_bind
        | libc::SYS_sendto
        | libc::SYS_recvfrom
        | libc::SYS_sendmsg
        | libc::SYS_recvmsg
        | libc::SYS_sendmmsg
        | libc::SYS_recvmmsg => {
            let fd = args[0] as c_int;
            if crate::fdtable::is_sim(fd) {
                return false;
            }
            let domain = real_sockopt(fd, libc::SO_DOMAIN);
            domain >= 0 && !inet(domain as i64)
        }
        _ => false,
    }
}

/// The answer of a trapped call the handler serves itself, wherever it was made from:
/// `close_range` (simulated descriptors must be closed for the host too), io_uring and Linux
/// AIO (`ENOSYS`: the simulated machine's kernel has neither), the clock's discipline
/// (`clockset`) and what `machine` simulates.
///
/// # Safety
/// In the SIGSYS handler, with the trapped call's arguments.
unsafe fn served(nr: i64, args: &[i64; 6]) -> Option<i64> {
    if nr == libc::SYS_close_range {
        let (first, last, flags) = (args[0] as u32, args[1] as u32, args[2] as c_int);
        let r = crate::io::close_range_served(first, last, flags);
        return Some(if r < 0 { -(*libc::__errno_location() as i64) } else { 0 });
    }
    if nr == libc::SYS_io_uring_setup || nr == libc::SYS_io_setup {
        return Some(-(libc::ENOSYS as i64));
    }
    crate::clockset::trapped(nr, args).or_else(|| crate::machine::trapped(nr, args))
}

/// SIGSYS from the filter: emulate libc's own `getrandom`, let libc's own non-IP socket calls run, report anything
/// else.
extern "C" fn on_sigsys(_sig: c_int, info: *mut libc::siginfo_t, ctx: *mut c_void) {
    // SAFETY: the kernel passes a SIGSYS siginfo (call address at byte 16, syscall number at
    // 24, per `struct siginfo`'s `_sigsys` member) and a ucontext_t.
    unsafe {
        let raw = info as *const u8;
        let addr = *(raw.add(16) as *const usize);
        let nr = *(raw.add(24) as *const c_int) as i64;
        let uc = &mut *(ctx as *mut libc::ucontext_t);
        let mut dl: libc::Dl_info = core::mem::zeroed();
        let known = libc::dladdr(addr as *const c_void, &mut dl) != 0;
        let in_libc = crate::dl::in_libc(addr as *mut c_void);
        let via_syscall_fn = known
            && !dl.dli_sname.is_null()
            && core::ffi::CStr::from_ptr(dl.dli_sname).to_bytes() == b"syscall";
        if is_process_call(nr) && crate::clone::trapped(nr, uc) {
            return; // simulated as a fork
        }
        let g = &mut uc.uc_mcontext.gregs;
        if nr == libc::SYS_getrandom && in_libc && !via_syscall_fn {
            let buf = g[libc::REG_RDI as usize] as *mut u8;
            let len = g[libc::REG_RSI as usize] as usize;
            crate::random::random_for_trap(buf, len);
            g[libc::REG_RAX as usize] = len as i64;
            return;
        }
        let args = [
            g[libc::REG_RDI as usize],
            g[libc::REG_RSI as usize],
            g[libc::REG_RDX as usize],
            g[libc::REG_R10 as usize],
            g[libc::REG_R8 as usize],
            g[libc::REG_R9 as usize],
        ];
        if let Some(r) = served(nr, &args) {
            g[libc::REG_RAX as usize] = r;
            return;
        }
        if in_libc && !via_syscall_fn && harmless_socket_call(nr, &args) {
            // glibc's own use of netlink or Unix sockets (getaddrinfo's AI_ADDRCONFIG, syslog):
            // nothing simulated is involved, so run it from the shim's stub as it was asked.
            g[libc::REG_RAX as usize] = raw_ret(nr, args);
            return;
        }
        let mut msg = [0u8; 160];
        let mut m = 0;
        let mut put = |s: &[u8]| {
            for &b in s {
                if m < msg.len() {
                    msg[m] = b;
                    m += 1;
                }
            }
        };
        put(b"raw system call ");
        put(trapped_name(nr));
        put(if via_syscall_fn {
            b" made through syscall(2), bypassing the shim's hooks"
        } else if in_libc {
            b" made inside libc by an unhooked function"
        } else {
            b" made by a raw syscall instruction outside libc"
        });
        if known && !dl.dli_sname.is_null() && !via_syscall_fn {
            put(b" (in ");
            put(core::ffi::CStr::from_ptr(dl.dli_sname).to_bytes());
            put(b")");
        }
        crate::slot::report_escape(nr, addr as i64, &msg[..m]);
    }
}
