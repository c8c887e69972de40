//! The node's processes in `/proc`, by virtual pid: `/proc/<pid>/…` of a process of the node
//! reaches that process's real files (its own: `/proc/self`), one naming no process of the node
//! is `ENOENT`, as on a machine with only those processes; `/proc/<pid>/stat` tells its virtual
//! pid, parent, group, session and state; and a listing of `/proc` holds the node's processes'
//! virtual pids (running, or ended unwaited) after the kernel's other entries. The kernel's pids
//! differ from run to run and name other processes, so `ps -p $pid`, `pgrep` and a
//! `[ -d /proc/$pid ]` check had looked at the wrong process, or none. Pid 1 — the parent of a
//! node's program, as a service manager — stays the machine's own init.

use crate::prelude::*;
use crate::text::Text;

/// Paths longer than this are passed on as they are.
const PATH_BUF: usize = 512;

/// The process `/proc/<pid>/…` names, when `p` is such a path (or `<pid>/…` in a working
/// directory of `/proc`, as sysvinit's `pidof` reads): (pid, the rest after it).
fn split(p: &[u8]) -> Option<(i64, &[u8])> {
    let relative = p.first().is_some_and(u8::is_ascii_digit);
    // SAFETY: a check of the working directory, only for a path that starts with a digit.
    let rest = if relative && unsafe { in_proc() } { p } else { p.strip_prefix(b"/proc/")? };
    let end = rest.iter().position(|&b| b == b'/').unwrap_or(rest.len());
    let (who, tail) = rest.split_at(end);
    Some((number(who)?, tail))
}

/// A decimal number of one to nine digits (a pid or a descriptor in a `/proc` path).
fn number(s: &[u8]) -> Option<i64> {
    let ok = !s.is_empty() && s.len() <= 9 && s.iter().all(u8::is_ascii_digit);
    ok.then(|| s.iter().fold(0i64, |n, &d| n * 10 + (d - b'0') as i64))
}

/// The process a `/proc/<pid>/…` or `/proc/self/…` path names (`self`: the caller's virtual
/// pid), and the rest after it.
pub(crate) unsafe fn pid_path(p: &[u8]) -> Option<(i64, &[u8])> {
    match p.strip_prefix(b"/proc/self") {
        Some(rest) if rest.first().is_none_or(|&b| b == b'/') => {
            Some((crate::slot::VPID.load(Ordering::Relaxed), rest))
        }
        _ => split(p),
    }
}

/// The descriptor a `/proc/<pid>/fd/<n>` (or `/proc/self/fd/<n>`) path names: (pid, fd).
pub(crate) unsafe fn fd_path(p: &[u8]) -> Option<(i64, i64)> {
    let (pid, rest) = pid_path(p)?;
    Some((pid, number(rest.strip_prefix(b"/fd/")?)?))
}

/// Whether the working directory is `/proc`.
unsafe fn in_proc() -> bool {
    let mut cwd = [0u8; 8];
    let n = sys::raw_ret(libc::SYS_getcwd, [cwd.as_mut_ptr() as i64, cwd.len() as i64, 0, 0, 0, 0]);
    n == 6 && &cwd[..6] == b"/proc\0"
}

/// Whom a virtual pid names in `/proc`.
enum Whom {
    /// The machine's init (pid 1): the real one.
    Init,
    /// The caller's own process (or a thread of it).
    Own,
    /// Another process of the node, as the host describes it.
    Other(Info),
    /// No process of the node.
    Missing,
}

/// The host's word on a process of the node.
#[derive(Clone, Copy)]
struct Info {
    real: i64,
    ppid: u64,
    pgrp: u64,
    sid: u64,
    zombie: bool,
}

/// Whom `pid` names: one question to the host at most (none for init or the caller itself).
unsafe fn whom(pid: i64) -> Whom {
    if pid == 1 {
        return Whom::Init;
    }
    if pid == crate::slot::VPID.load(Ordering::Relaxed)
        || crate::sigsend::slot_of_tid(pid as libc::pid_t).is_some()
    {
        return Whom::Own;
    }
    info(pid).map_or(Whom::Missing, Whom::Other)
}

/// Runs `call` on the path the kernel knows for `path` (see the module's text); a path that
/// names no process of the node answers `fail` with `ENOENT`. Only under weft.
pub(crate) unsafe fn real_path<R>(
    path: *const c_char,
    fail: R,
    call: impl FnOnce(*const c_char) -> R,
) -> R {
    let p = if path.is_null() { &[][..] } else { core::ffi::CStr::from_ptr(path).to_bytes() };
    let Some((pid, rest)) = split(p) else {
        return call(path);
    };
    let Some(_g) = Guard::enter() else {
        return call(path);
    };
    if !active() || rest.len() + 32 > PATH_BUF {
        return call(path);
    }
    let mut buf = [0u8; PATH_BUF];
    let mut t = Text::new(&mut buf);
    t.put(b"/proc/");
    match whom(pid) {
        Whom::Init => return call(path),
        Whom::Missing => {
            set_errno(libc::ENOENT);
            return fail;
        }
        Whom::Own => t.put(b"self"),
        Whom::Other(i) => t.num(i.real as u64),
    };
    t.put(rest).put(b"\0");
    call(buf.as_ptr().cast())
}

/// Whether `p` is a `/proc/<pid>…` path whose pid no process of the node has.
pub(crate) unsafe fn names_no_process(p: &[u8]) -> bool {
    split(p).is_some_and(|(pid, _)| matches!(whom(pid), Whom::Missing))
}

/// The files of a process that tell its ids, written from the host's word.
#[derive(Clone, Copy, PartialEq)]
enum IdFile {
    Stat,
    Status,
}

/// What `/proc/<pid>/stat` and `status` say of a process.
struct Seen {
    pid: u64,
    info: Info,
    state: u8,
}

/// The file and process `p` names, when it is a `stat` or `status` of `/proc/self` or a pid:
/// the process is `None` when no process of the node has that pid.
unsafe fn id_file(p: &[u8]) -> Option<(IdFile, Option<Seen>)> {
    let own = crate::slot::VPID.load(Ordering::Relaxed);
    let (pid, file) = pid_path(p)?;
    let file = match file {
        b"/stat" => IdFile::Stat,
        b"/status" => IdFile::Status,
        _ => return None,
    };
    let asked = match whom(pid) {
        Whom::Missing => None,
        Whom::Init => Some(Info { real: 1, ppid: 0, pgrp: 1, sid: 1, zombie: false }),
        Whom::Own => own_info(own),
        Whom::Other(i) => Some(i),
    };
    let seen = asked.map(|i| {
        let state = if i.zombie {
            b'Z'
        } else if pid == own {
            b'R'
        } else {
            b'S'
        };
        Seen { pid: pid as u64, info: i, state }
    });
    Some((file, seen))
}

/// `readlink("/proc/self")`: the caller's virtual pid, as its `getpid` answers (the kernel's is
/// the real one), truncated to `len` as `readlink` does; `None` for any other path.
pub(crate) unsafe fn self_link(path: *const c_char, buf: *mut u8, len: size_t) -> Option<ssize_t> {
    if path.is_null() || !matches!(core::ffi::CStr::from_ptr(path).to_bytes(), b"/proc/self") {
        return None;
    }
    let mut digits = [0u8; 20];
    let mut t = Text::new(&mut digits);
    t.num(crate::slot::VPID.load(Ordering::Relaxed) as u64);
    let n = t.len().min(len);
    ptr::copy_nonoverlapping(digits.as_ptr(), buf, n);
    Some(n as ssize_t)
}

/// `/proc/<pid>/stat` or `status` (or `/proc/self`'s) as the node's process sees it, into
/// `out`: its length, `Some(None)` for no process of the node, `None` when `p` is not such a
/// file. The ids are virtual; times, memory and faults are zero (they vary from run to run).
pub(crate) unsafe fn id_file_content(p: &[u8], out: &mut [u8]) -> Option<Option<usize>> {
    let (file, seen) = id_file(p)?;
    let Some(seen) = seen else {
        return Some(None);
    };
    let mut comm = [0u8; 64];
    let n = comm_of(seen.info.real, &mut comm);
    let mut t = Text::new(out);
    if file == IdFile::Stat {
        t.num(seen.pid).put(b" (").put(&comm[..n]).put(b") ").put(&[seen.state]).put(b" ");
        t.num(seen.info.ppid)
            .put(b" ")
            .num(seen.info.pgrp)
            .put(b" ")
            .num(seen.info.sid)
            .put(STAT_TAIL);
    } else {
        status(&mut t, &seen, &comm[..n]);
    }
    Some(Some(t.len()))
}

/// A `status` file: the kernel's, line by line, with the ids virtual, the state as `stat`
/// tells it, and the figures that vary from run to run (memory, context switches) zero.
unsafe fn status(t: &mut Text, seen: &Seen, comm: &[u8]) {
    let state: &[u8] = match seen.state {
        b'Z' => b"Z (zombie)",
        b'R' => b"R (running)",
        _ => b"S (sleeping)",
    };
    let mut real = [0u8; 4096];
    let n = read_proc(seen.info.real, b"/status\0", &mut real);
    for line in real[..n].split_inclusive(|&b| b == b'\n') {
        let key = &line[..line.iter().position(|&b| b == b':').unwrap_or(0)];
        let value = |t: &mut Text, v: &[u8]| {
            t.put(key).put(b":\t").put(v).put(b"\n");
        };
        match key {
            b"Name" => value(t, comm),
            b"State" => value(t, state),
            b"Tgid" | b"Pid" | b"NStgid" | b"NSpid" => {
                t.put(key).put(b":\t").num(seen.pid).put(b"\n");
            }
            b"PPid" => {
                t.put(key).put(b":\t").num(seen.info.ppid).put(b"\n");
            }
            b"NSpgid" => {
                t.put(key).put(b":\t").num(seen.info.pgrp).put(b"\n");
            }
            b"NSsid" => {
                t.put(key).put(b":\t").num(seen.info.sid).put(b"\n");
            }
            b"Ngid" | b"TracerPid" => value(t, b"0"),
            b"voluntary_ctxt_switches" | b"nonvoluntary_ctxt_switches" => value(t, b"0"),
            _ if key.starts_with(b"Vm") || key.starts_with(b"Rss") || key == b"HugetlbPages" => {
                value(t, b"       0 kB");
            }
            _ => {
                t.put(line);
            }
        }
    }
}

/// After pid, comm, state, parent, group and session: no terminal, no faults, no CPU time,
/// priority 20, nice 0, one thread, then 31 zero fields (start time, vsize and rss among them),
/// 52 fields in all, as Linux writes.
const STAT_TAIL: &[u8] = b" 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 \
0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n";

/// [`info`] for the caller's own process; without asking the host when it leads its group and
/// session (a node's program does), since Redis reads its `stat` every tenth of a second.
unsafe fn own_info(own: i64) -> Option<Info> {
    let real = sys::raw_ret(libc::SYS_getpid, [0; 6]);
    let pgrp = sys::raw_ret(libc::SYS_getpgid, [0; 6]);
    let sid = sys::raw_ret(libc::SYS_getsid, [0; 6]);
    if pgrp != real || sid != real {
        return info(own);
    }
    let ppid = crate::slot::PPID.load(Ordering::Relaxed) as u64;
    Some(Info { real, ppid, pgrp: own as u64, sid: own as u64, zombie: false })
}

/// The host's word on the node's process `pid` (running, or ended unwaited).
unsafe fn info(pid: i64) -> Option<Info> {
    slot().args[0] = pid;
    let real = handoff(OP_PROC_INFO);
    let a = slot().args;
    let (ppid, pgrp, sid, zombie) = (a[1] as u64, a[2] as u64, a[3] as u64, a[4] != 0);
    (real > 0).then_some(Info { real, ppid, pgrp, sid, zombie })
}

/// The kernel's `comm` of real process `real` (the program's name, as it set it), into `out`.
unsafe fn comm_of(real: i64, out: &mut [u8; 64]) -> usize {
    let n = read_proc(real, b"/comm\0", &mut out[..63]);
    if n > 0 && out[n - 1] == b'\n' {
        n - 1
    } else {
        n
    }
}

/// Reads the kernel's `/proc/<real><file>` (`file` NUL-terminated) into `out`: the length.
unsafe fn read_proc(real: i64, file: &[u8], out: &mut [u8]) -> usize {
    let mut path = [0u8; 48];
    Text::new(&mut path).put(b"/proc/").num(real as u64).put(file);
    let fd =
        sys::raw_ret(libc::SYS_open, [path.as_ptr() as i64, libc::O_RDONLY as i64, 0, 0, 0, 0]);
    if fd < 0 {
        return 0;
    }
    let (buf, cap) = (out.as_mut_ptr() as i64, out.len() as i64);
    let n = sys::raw_ret(libc::SYS_read, [fd, buf, cap, 0, 0, 0]).max(0);
    sys::raw_ret(libc::SYS_close, [fd, 0, 0, 0, 0, 0]);
    n as usize
}

/// Whether `fd` is open on `/proc` itself (procfs's root, inode 1).
pub(crate) unsafe fn is_proc_root(fd: c_int) -> bool {
    let mut fs: libc::statfs = core::mem::zeroed();
    let mut st: libc::stat = core::mem::zeroed();
    let fs_ok = sys::raw_ret(libc::SYS_fstatfs, [fd as i64, &mut fs as *mut _ as i64, 0, 0, 0, 0]);
    let st_ok = sys::raw_ret(libc::SYS_fstat, [fd as i64, &mut st as *mut _ as i64, 0, 0, 0, 0]);
    fs_ok == 0 && st_ok == 0 && fs.f_type == libc::PROC_SUPER_MAGIC && st.st_ino == 1
}

/// Whether `path` names `/proc` itself (`.` in a working directory of `/proc`).
pub(crate) unsafe fn is_proc_root_path(path: *const c_char) -> bool {
    if path.is_null() {
        return false;
    }
    match core::ffi::CStr::from_ptr(path).to_bytes() {
        b"/proc" | b"/proc/" => true,
        b"." | b"./" => in_proc(),
        _ => false,
    }
}

/// Up to `out.len()` bytes of `linux_dirent64` records of the simulated `/proc` listing, from
/// where `fd` (open on `/proc`) stands, which then moves past them: `.`, `..`, the kernel's
/// entries that are not processes, then the node's processes' virtual pids. Its entries are
/// numbered in order (the offset is the next one's number), each with its number as inode.
pub(crate) unsafe fn list(fd: c_int, out: &mut [u8]) -> usize {
    let at = sys::raw_ret(libc::SYS_lseek, [fd as i64, 0, libc::SEEK_CUR as i64, 0, 0, 0]).max(0);
    let mut names = [0u8; 8192];
    let named = kernel_entries(&mut names);
    slot().args[0] = 0;
    let pids = handoff(OP_PROCS).max(0) as usize;
    let mut vpids = [0u32; 256];
    let pids = pids.min(vpids.len());
    for (k, v) in vpids[..pids].iter_mut().enumerate() {
        *v = u32::from_ne_bytes(slot().data[k * 4..k * 4 + 4].try_into().unwrap());
    }
    let mut put = Records { out, len: 0, next: 0, from: at as u64 };
    for rec in names[..named].chunks_exact(ENTRY) {
        let n = rec[1..].iter().position(|&b| b == 0).unwrap_or(ENTRY - 1);
        if !put.add(&rec[1..1 + n], rec[0]) {
            break;
        }
    }
    for &v in &vpids[..pids] {
        let mut digits = [0u8; 12];
        let mut t = Text::new(&mut digits);
        t.num(v as u64);
        let n = t.len();
        if !put.add(&digits[..n], libc::DT_DIR) {
            break;
        }
    }
    let next = put.next.max(at as u64);
    sys::raw_ret(libc::SYS_lseek, [fd as i64, next as i64, libc::SEEK_SET as i64, 0, 0, 0]);
    put.len
}

/// One name of the kernel's listing: its `d_type`, then the name, NUL-padded.
const ENTRY: usize = 64;

/// `.`, `..` and the kernel's `/proc` entries that are not processes, in its order, as
/// `ENTRY`-byte records in `names`: how many bytes.
unsafe fn kernel_entries(names: &mut [u8; 8192]) -> usize {
    let mut len = 0;
    for dot in [&b"."[..], b".."] {
        names[len] = libc::DT_DIR;
        names[len + 1..len + 1 + dot.len()].copy_from_slice(dot);
        len += ENTRY;
    }
    let flags = (libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) as i64;
    let fd = sys::raw_ret(libc::SYS_open, [c"/proc".as_ptr() as i64, flags, 0, 0, 0, 0]);
    if fd < 0 {
        return len;
    }
    let mut buf = [0u8; 4096];
    loop {
        let n = sys::raw_ret(libc::SYS_getdents64, [fd, buf.as_mut_ptr() as i64, 4096, 0, 0, 0]);
        if n <= 0 {
            break;
        }
        let mut at = 0;
        while at < n as usize {
            let reclen = u16::from_ne_bytes([buf[at + 16], buf[at + 17]]) as usize;
            let name = &buf[at + 19..at + reclen];
            let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
            let process = name.first().is_some_and(u8::is_ascii_digit);
            let dots = name == b"." || name == b"..";
            if !process && !dots && name.len() < ENTRY && len + ENTRY <= names.len() {
                names[len..len + ENTRY].fill(0);
                names[len] = buf[at + 18];
                names[len + 1..len + 1 + name.len()].copy_from_slice(name);
                len += ENTRY;
            }
            at += reclen;
        }
    }
    sys::raw_ret(libc::SYS_close, [fd, 0, 0, 0, 0, 0]);
    len
}

/// `linux_dirent64` records written from entry number `from` on, while they fit.
struct Records<'a> {
    out: &'a mut [u8],
    len: usize,
    /// The number of the entry to consider next.
    next: u64,
    from: u64,
}

impl Records<'_> {
    /// Adds entry `next` (when at or past `from`); false once `out` is full.
    fn add(&mut self, name: &[u8], kind: u8) -> bool {
        let k = self.next;
        if k < self.from {
            self.next += 1;
            return true;
        }
        let reclen = (19 + name.len() + 1).next_multiple_of(8);
        if self.len + reclen > self.out.len() {
            return false;
        }
        let r = &mut self.out[self.len..self.len + reclen];
        r.fill(0);
        r[0..8].copy_from_slice(&(k + 1).to_ne_bytes());
        r[8..16].copy_from_slice(&(k as i64 + 1).to_ne_bytes());
        r[16..18].copy_from_slice(&(reclen as u16).to_ne_bytes());
        r[18] = kind;
        r[19..19 + name.len()].copy_from_slice(name);
        self.len += reclen;
        self.next += 1;
        true
    }
}
