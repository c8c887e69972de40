//! The machine a process sees under the shim is the simulated one, the same on every real
//! machine (`tests/c/machine.c`): a node named after its number, a fixed kernel release, two
//! processors (also in `/proc/cpuinfo` and `/proc/stat`), the node's memory limit as its memory,
//! no load, virtual uptime and boot time, and the system
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
        "/proc/cpuinfo: 2 x processor\t: 0",
        "/proc/cpuinfo: 2 x flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov \
         pat pse36 clflush mmx fxsr sse sse2 ht syscall nx lm constant_tsc rep_good nopl cpuid pni \
         ssse3 cx16 sse4_1 sse4_2 popcnt hypervisor lahf_lm",
        "/proc/stat: 3 x cpu  0 0 0 200000 0 0 0 0 0 0",
        "/proc/stat: 1 x btime 1767224600",
        "/proc/sys/kernel/random/boot_id: e0985edd-3c25-4aaa-b59c-9ca6e9684225",
        "/etc/machine-id: fb1b31e908ca093548d1fd69431a1a8e",
        "/proc/sys/kernel/random/entropy_avail: 256",
        "uuid: version 4 variant 8, fresh 1, length 37",
        "clock on libc's handle: 1767225600 1767225600",
    ];
    assert_eq!(lines(1), want);
    let node0 = lines(0);
    assert_eq!(node0[1], "hostname: n0", "each node has its own name");
    let id = |l: &[String]| l.iter().find(|l| l.starts_with("/etc/machine-id")).cloned();
    assert_ne!(id(&node0), id(&lines(1)), "each node has its own machine id");
}
