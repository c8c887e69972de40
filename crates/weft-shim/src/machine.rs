//! The machine a simulated process runs on, the same on every real one: `uname` (node name
//! `n<id>`, a fixed kernel release), `gethostname`, the processor count (`sysconf`,
//! `get_nprocs`, `sched_getaffinity`, `sched_getcpu`), memory and uptime (`sysinfo`,
//! `sysconf(_SC_PHYS_PAGES)`: the node's memory limit, else 8 GiB) and the system files
//! programs read to tune themselves (`/proc/meminfo`, `/proc/uptime`, `/proc/loadavg`,
//! `/proc/cpuinfo`, `/proc/stat`, somaxconn, overcommit, transparent huge pages, the clock
//! source, the CPU lists, the cgroup) and its ids (`/etc/machine-id`, the boot id, fresh UUIDs
//! from `/proc/sys/kernel/random/uuid` out of the process's random stream).
//! The real machine's answers differ from one machine to the next and leak into what a program
//! sends: Redis's `INFO` carries the kernel release and the machine's memory, and sentinels
//! fetch it over the network, so a replay on another machine diverged. glibc's own callers
//! (`gethostname` through `uname`, `sysconf` through `sysinfo`) and raw calls reach the same
//! answers through the escape trap ([`trapped`]).

use crate::prelude::*;
use crate::text::Text;

/// The processors every simulated node has.
pub(crate) const CPUS: usize = 2;
/// The kernel release `uname` reports (Debian 12's kernel series).
const RELEASE: &[u8] = b"6.1.0-weft";
const VERSION: &[u8] = b"#1 SMP PREEMPT_DYNAMIC weft";
/// Memory where the node has no limit.
const DEFAULT_MEMORY: u64 = 8 << 30;
const PAGE: u64 = 4096;

/// This process's node, as the host answered at hello.
pub(crate) static NODE: AtomicU64 = AtomicU64::new(0);

/// The node's memory: its per-process limit (`RLIMIT_DATA`, set by the host from the cluster
/// file), else [`DEFAULT_MEMORY`].
fn memory() -> u64 {
    let mut r = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes one rlimit.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_DATA, &mut r) } == 0;
    match ok && r.rlim_cur != libc::RLIM_INFINITY && r.rlim_cur > 0 {
        true => r.rlim_cur,
        false => DEFAULT_MEMORY,
    }
}

/// Seconds since boot, as `CLOCK_BOOTTIME` counts them.
fn uptime_ns() -> u64 {
    crate::time::clock_value(libc::CLOCK_BOOTTIME).unwrap_or(MONOTONIC_BASE_NS)
}

/// Writes the node name `n<id>` with its NUL.
fn node_name(out: &mut [u8]) {
    let mut t = Text::new(out);
    t.put(b"n").num(NODE.load(Ordering::Relaxed)).put(b"\0");
}

/// Fills `u` as this machine's `uname` answer.
fn fill_uname(u: &mut libc::utsname) {
    // SAFETY: utsname is plain bytes.
    *u = unsafe { core::mem::zeroed() };
    let field = |f: &mut [c_char], s: &[u8]| {
        let n = f.len() - 1;
        for (d, &b) in f.iter_mut().zip(s.iter().take(n)) {
            *d = b as c_char;
        }
    };
    field(&mut u.sysname, b"Linux");
    // SAFETY: c_char and u8 have the same size and alignment.
    node_name(unsafe { &mut *(&mut u.nodename[..] as *mut [c_char] as *mut [u8]) });
    field(&mut u.release, RELEASE);
    field(&mut u.version, VERSION);
    field(&mut u.machine, b"x86_64");
    field(&mut u.domainname, b"(none)");
}

/// Fills `s` as this machine's `sysinfo` answer: no load, all memory free, no swap.
fn fill_sysinfo(s: &mut libc::sysinfo) {
    // SAFETY: sysinfo is plain integers.
    *s = unsafe { core::mem::zeroed() };
    s.uptime = (uptime_ns() / 1_000_000_000) as c_long;
    s.totalram = memory() as c_ulong;
    s.freeram = s.totalram;
    s.procs = 1;
    s.mem_unit = 1;
}

/// Writes the first [`CPUS`] bits of a CPU mask of `size` bytes at `mask`; answers the bytes
/// the kernel would (`EINVAL` where the mask is too small).
unsafe fn fill_affinity(size: usize, mask: *mut u8) -> i64 {
    if size < 8 || mask.is_null() {
        return -(libc::EINVAL as i64);
    }
    ptr::write_bytes(mask, 0, size);
    *mask = (1u8 << CPUS) - 1;
    8
}

#[no_mangle]
pub unsafe extern "C" fn uname(u: *mut libc::utsname) -> c_int {
    if !active() || u.is_null() {
        return real!(uname: fn(*mut libc::utsname) -> c_int)(u);
    }
    fill_uname(&mut *u);
    local_call();
    0
}

#[no_mangle]
pub unsafe extern "C" fn gethostname(name: *mut c_char, len: size_t) -> c_int {
    if !active() {
        return real!(gethostname: fn(*mut c_char, size_t) -> c_int)(name, len);
    }
    let mut own = [0u8; 24];
    node_name(&mut own);
    let n = own.iter().position(|&b| b == 0).unwrap_or(0) + 1;
    if len < n {
        return ret_errno(-(libc::ENAMETOOLONG as i64)) as c_int;
    }
    ptr::copy_nonoverlapping(own.as_ptr(), name.cast(), n);
    local_call();
    0
}

#[no_mangle]
pub unsafe extern "C" fn sysinfo(s: *mut libc::sysinfo) -> c_int {
    if !active() || s.is_null() {
        return real!(sysinfo: fn(*mut libc::sysinfo) -> c_int)(s);
    }
    fill_sysinfo(&mut *s);
    local_call();
    0
}

#[no_mangle]
pub unsafe extern "C" fn sysconf(name: c_int) -> c_long {
    if active() {
        match name {
            libc::_SC_NPROCESSORS_ONLN | libc::_SC_NPROCESSORS_CONF => return CPUS as c_long,
            libc::_SC_PHYS_PAGES | libc::_SC_AVPHYS_PAGES => return (memory() / PAGE) as c_long,
            _ => {}
        }
    }
    real!(sysconf: fn(c_int) -> c_long)(name)
}

#[no_mangle]
pub unsafe extern "C" fn get_nprocs() -> c_int {
    match active() {
        true => CPUS as c_int,
        false => real!(get_nprocs: fn() -> c_int)(),
    }
}

#[no_mangle]
pub unsafe extern "C" fn get_nprocs_conf() -> c_int {
    match active() {
        true => CPUS as c_int,
        false => real!(get_nprocs_conf: fn() -> c_int)(),
    }
}

#[no_mangle]
pub unsafe extern "C" fn get_phys_pages() -> c_long {
    match active() {
        true => (memory() / PAGE) as c_long,
        false => real!(get_phys_pages: fn() -> c_long)(),
    }
}

#[no_mangle]
pub unsafe extern "C" fn get_avphys_pages() -> c_long {
    match active() {
        true => (memory() / PAGE) as c_long,
        false => real!(get_avphys_pages: fn() -> c_long)(),
    }
}

#[no_mangle]
pub unsafe extern "C" fn sched_getaffinity(
    pid: libc::pid_t,
    size: size_t,
    mask: *mut libc::cpu_set_t,
) -> c_int {
    if !active() {
        return real!(sched_getaffinity: fn(libc::pid_t, size_t, *mut libc::cpu_set_t) -> c_int)(
            pid, size, mask,
        );
    }
    local_call();
    match fill_affinity(size, mask.cast()) {
        r if r < 0 => ret_errno(r) as c_int,
        _ => 0,
    }
}

#[no_mangle]
pub unsafe extern "C" fn sched_getcpu() -> c_int {
    match active() {
        true => 0,
        false => real!(sched_getcpu: fn() -> c_int)(),
    }
}

/// The escape trap's answer for a trapped `uname`, `sysinfo` or `sched_getaffinity` (from
/// glibc's own callers or a raw instruction), or None for any other call.
///
/// # Safety
/// `args` are the trapped call's arguments, pointing where that call would write.
pub(crate) unsafe fn trapped(nr: i64, args: &[i64; 6]) -> Option<i64> {
    match nr {
        libc::SYS_uname if args[0] != 0 => fill_uname(&mut *(args[0] as *mut libc::utsname)),
        libc::SYS_sysinfo if args[0] != 0 => fill_sysinfo(&mut *(args[0] as *mut libc::sysinfo)),
        libc::SYS_uname | libc::SYS_sysinfo => return Some(-(libc::EFAULT as i64)),
        libc::SYS_sched_getaffinity => {
            return Some(fill_affinity(args[1] as usize, args[2] as *mut u8));
        }
        _ => return None,
    }
    Some(0)
}

/// The system-wide file at absolute `path` as this machine has it, written to `out`; answers
/// its length, or None where `path` is not one of them (it is then read from the real machine).
pub(crate) fn file(path: &[u8], out: &mut [u8]) -> Option<usize> {
    let mut t = Text::new(out);
    let cpus = b"0-1\n";
    let fixed: &[u8] = match path {
        b"/proc/sys/net/core/somaxconn" => b"4096\n",
        b"/proc/sys/vm/overcommit_memory" => b"0\n",
        b"/sys/kernel/mm/transparent_hugepage/enabled" => b"always [madvise] never\n",
        b"/sys/kernel/mm/transparent_hugepage/defrag" => {
            b"always defer defer+madvise [madvise] never\n"
        }
        b"/sys/devices/system/clocksource/clocksource0/current_clocksource" => b"tsc\n",
        b"/sys/devices/system/cpu/online"
        | b"/sys/devices/system/cpu/possible"
        | b"/sys/devices/system/cpu/present" => cpus,
        b"/proc/sys/kernel/ostype" => b"Linux\n",
        // A 64-bit machine's default; procps pads its pid columns to this many digits.
        b"/proc/sys/kernel/pid_max" => b"4194304\n",
        b"/proc/sys/kernel/osrelease" => {
            t.put(RELEASE).put(b"\n");
            return Some(t.len());
        }
        b"/proc/sys/kernel/hostname" => {
            t.put(b"n").num(NODE.load(Ordering::Relaxed)).put(b"\n");
            return Some(t.len());
        }
        b"/proc/version" => {
            t.put(b"Linux version ").put(RELEASE).put(b" (weft) ").put(VERSION).put(b"\n");
            return Some(t.len());
        }
        b"/proc/loadavg" => b"0.00 0.00 0.00 1/1 1\n",
        b"/proc/uptime" => return Some(uptime(&mut t)),
        b"/proc/meminfo" => return Some(meminfo(&mut t)),
        b"/proc/cpuinfo" => return Some(cpuinfo(&mut t)),
        b"/proc/sys/kernel/random/entropy_avail" | b"/proc/sys/kernel/random/poolsize" => b"256\n",
        b"/proc/sys/kernel/random/uuid" => {
            let (hi, lo) = (crate::random::next_random(), crate::random::next_random());
            return Some(uuid(&mut t, hi, lo));
        }
        b"/proc/sys/kernel/random/boot_id" => {
            let hi = crate::random::mix(NODE.load(Ordering::Relaxed) ^ 0xB007_1D00);
            return Some(uuid(&mut t, hi, crate::random::mix(hi)));
        }
        b"/etc/machine-id" | b"/var/lib/dbus/machine-id" => {
            let hi = crate::random::mix(NODE.load(Ordering::Relaxed) ^ 0x3AC4_1DE0);
            lower_hex(&mut t, hi, 16);
            lower_hex(&mut t, crate::random::mix(hi), 16);
            t.put(b"\n");
            return Some(t.len());
        }
        b"/proc/stat" => return Some(stat(&mut t)),
        _ => return None,
    };
    t.put(fixed);
    Some(t.len())
}

/// `v`'s low `digits` hex digits in lower case, as the kernel and systemd write ids.
fn lower_hex(t: &mut Text<'_>, v: u64, digits: u32) {
    for k in (0..digits).rev() {
        t.put(&[b"0123456789abcdef"[((v >> (4 * k)) & 15) as usize]]);
    }
}

/// A version-4 UUID made of `hi` and `lo` (`8-4-4-4-12` hex digits and a newline, as
/// `/proc/sys/kernel/random/uuid` reads).
fn uuid(t: &mut Text<'_>, hi: u64, lo: u64) -> usize {
    let hi = (hi & !0xF000) | 0x4000; // the version nibble
    let lo = (lo & !(3 << 62)) | (2 << 62); // the RFC 4122 variant
    lower_hex(t, hi >> 32, 8);
    t.put(b"-");
    lower_hex(t, hi >> 16, 4);
    t.put(b"-");
    lower_hex(t, hi, 4);
    t.put(b"-");
    lower_hex(t, lo >> 48, 4);
    t.put(b"-");
    lower_hex(t, lo, 12);
    t.put(b"\n");
    t.len()
}

fn uptime(t: &mut Text<'_>) -> usize {
    let cs = uptime_ns() / 10_000_000;
    let frac = cs % 100;
    t.num(cs / 100).put(b".").put(&[b'0' + (frac / 10) as u8, b'0' + (frac % 10) as u8]);
    t.put(b" 0.00\n");
    t.len()
}

fn meminfo(t: &mut Text<'_>) -> usize {
    let kb = memory() >> 10;
    for name in [&b"MemTotal:"[..], b"MemFree:", b"MemAvailable:"] {
        t.put(name).put(b" ").num(kb).put(b" kB\n");
    }
    for name in [&b"Buffers:"[..], b"Cached:", b"SwapCached:", b"SwapTotal:", b"SwapFree:"] {
        t.put(name).put(b" 0 kB\n");
    }
    t.len()
}

/// The flags of x86-64's second baseline level (SSE4.2, POPCNT, CX16), which every machine
/// weft runs on has: a program that picks code by them picks what this one can run. glibc's
/// own choices (and a program's) by the `cpuid` instruction are the real machine's.
const FLAGS: &[u8] = b"fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat \
pse36 clflush mmx fxsr sse sse2 ht syscall nx lm constant_tsc rep_good nopl cpuid pni ssse3 \
cx16 sse4_1 sse4_2 popcnt hypervisor lahf_lm";

/// `/proc/cpuinfo` of [`CPUS`] processors, one core each (the count `sysconf` answers; the
/// real file named the real machine's processors, libuv's `uv_cpu_info` and Node's
/// `os.cpus()` count them).
fn cpuinfo(t: &mut Text<'_>) -> usize {
    for cpu in 0..CPUS as u64 {
        t.put(b"processor\t: ").num(cpu).put(b"\nvendor_id\t: weft\ncpu family\t: 6\n");
        t.put(b"model\t\t: 0\nmodel name\t: weft virtual CPU\nstepping\t: 0\n");
        t.put(b"cpu MHz\t\t: 2000.000\ncache size\t: 1024 KB\nphysical id\t: 0\n");
        t.put(b"siblings\t: ").num(CPUS as u64).put(b"\ncore id\t\t: ").num(cpu);
        t.put(b"\ncpu cores\t: ").num(CPUS as u64).put(b"\nfpu\t\t: yes\nflags\t\t: ");
        t.put(FLAGS).put(b"\nbogomips\t: 4000.00\nclflush size\t: 64\n");
        t.put(b"cache_alignment\t: 64\naddress sizes\t: 46 bits physical, 48 bits virtual\n\n");
    }
    t.len()
}

/// `/proc/stat` of an idle machine: every processor idle since boot (in the kernel's 100 ticks
/// a second, over the uptime `/proc/uptime` answers), the boot time (`btime`, which `ps` adds
/// to a process's start) that uptime before the virtual clock, one process running.
fn stat(t: &mut Text<'_>) -> usize {
    let ticks = uptime_ns() / 10_000_000;
    let line = |t: &mut Text<'_>, name: &[u8], idle: u64| {
        t.put(name).put(b" 0 0 0 ").num(idle).put(b" 0 0 0 0 0 0\n");
    };
    line(t, b"cpu ", ticks * CPUS as u64);
    for cpu in 0..CPUS as u64 {
        t.put(b"cpu").num(cpu);
        line(t, b"", ticks);
    }
    let boot = (REALTIME_BASE_NS - MONOTONIC_BASE_NS) / 1_000_000_000;
    t.put(b"intr 0\nctxt 0\nbtime ").num(boot).put(b"\nprocesses 1\n");
    t.put(b"procs_running 1\nprocs_blocked 0\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n");
    t.len()
}

/// `getloadavg`: the simulated machine's loads (`/proc/loadavg`'s), all 0; glibc reads the real
/// file with an internal `open` no hook sees.
#[no_mangle]
pub unsafe extern "C" fn getloadavg(loads: *mut f64, n: c_int) -> c_int {
    if let Some(_g) = Guard::enter() {
        if active() {
            if n < 0 {
                return -1;
            }
            let n = n.min(3);
            for i in 0..n as usize {
                *loads.add(i) = 0.0;
            }
            return n;
        }
    }
    real!(getloadavg: fn(*mut f64, c_int) -> c_int)(loads, n)
}
