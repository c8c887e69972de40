//! The machine a process sees under the shim is the simulated one, the same on every real
//! machine (`tests/c/machine.c`): a node named after its number, a fixed kernel release, two
//! processors, the node's memory limit as its memory, no load, virtual uptime, and the system
//! files programs tune themselves by — through libc's entry points, glibc's own callers
//! (`gethostname` and `sysconf` reach the kernel through `uname` and `sysinfo`) and
//! `syscall(2)`; and the clock a program finds on libc's own handle (`dlsym`, as Python's
//! `ctypes` does) is the virtual one. Without this a replay on another machine diverged (Redis's `INFO` names the
//! kernel and the machine's memory, and sentinels send it over the network).

mod common;
use weft_core::{Decisions, NullObserver, Outcome, Scenario};

fn lines(node: u32) -> Vec<String> {
    let mut cfg = common::config("machine", &[], 2);
    cfg.groups[0].limits.memory_bytes = 1 << 30;
    let mut d = Decisions::random(7);
    let out = weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap();
    assert_eq!(out.report.outcome, Outcome::Pass, "{:?}", out.lines);
    out.lines.iter().filter(|l| l.node == node).map(|l| l.text.clone()).collect()
}

#[test]
fn every_node_sees_the_simulated_machine_not_the_real_one() {
    let want = [
        "uname: Linux n1 6.1.0-weft #1 SMP PREEMPT_DYNAMIC weft x86_64",
        "hostname: n1",
        "raw uname: n1 6.1.0-weft",
        "cpus: 2 2 2 2",
        "affinity: 2",
        "raw affinity: 8 2",
        "pages: 262144 262144",
        "sysinfo: ram 1073741824 free 1073741824 swap 0 uptime 1000 unit 1",
        "/proc/meminfo: MemTotal: 1048576 kB",
        "/proc/uptime: 1000.00 0.00",
        "/proc/loadavg: 0.00 0.00 0.00 1/1 1",
        "/proc/version: Linux version 6.1.0-weft (weft) #1 SMP PREEMPT_DYNAMIC weft",
        "/proc/sys/kernel/hostname: n1",
        "/proc/sys/kernel/osrelease: 6.1.0-weft",
        "/proc/sys/kernel/pid_max: 4194304",
        "/proc/sys/net/core/somaxconn: 4096",
        "/proc/sys/vm/overcommit_memory: 0",
        "/sys/kernel/mm/transparent_hugepage/enabled: always [madvise] never",
        "/sys/devices/system/cpu/online: 0-1",
        "/proc/self/cgroup: 0::/",
        "clock on libc's handle: 1767225600 1767225600",
    ];
    assert_eq!(lines(1), want);
    assert_eq!(lines(0)[1], "hostname: n0", "each node has its own name");
}
