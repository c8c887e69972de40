//! The baton's transport on the host side: pinning the host and the processes to CPUs (so
//! both sides of a hand-off may spin), and the futex calls the host sleeps and wakes with.

/// The host thread pinned to a CPU, with the mask to restore afterwards.
pub(super) struct Pinned {
    /// The host thread's CPU.
    pub(super) cpu: usize,
    /// The processes' CPU: another one the host thread may use, if there is one.
    pub(super) child_cpu: usize,
    old: libc::cpu_set_t,
}

impl Pinned {
    pub(super) fn restore(self) {
        // SAFETY: restoring this thread's previous affinity mask.
        unsafe {
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &self.old);
        }
    }
}

/// How many CPUs the calling thread may run on.
pub(super) fn allowed_cpus() -> usize {
    // SAFETY: querying this thread's affinity into a properly sized mask.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return 1;
        }
        libc::CPU_COUNT(&set).max(1) as usize
    }
}

/// Pins the calling thread to the CPU it is on, and chooses one CPU for every process: the next
/// one the thread was allowed to use, so that both sides of a hand-off can spin briefly on the
/// turn word instead of sleeping (a round trip well under a microsecond when the other side
/// answers quickly, against two context switches of several microseconds each). Only one
/// simulated thread runs at a time, so one CPU serves every process. With a single allowed
/// CPU everything shares it, and nobody spins.
pub(super) fn pin_current_thread() -> Option<Pinned> {
    // SAFETY: querying and setting this thread's affinity with properly sized masks.
    unsafe {
        let mut old: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut old) != 0 {
            return None;
        }
        let cpu = libc::sched_getcpu();
        if cpu < 0 {
            return None;
        }
        let cpu = cpu as usize;
        let n = libc::CPU_SETSIZE as usize;
        let child_cpu =
            (1..n).map(|k| (cpu + k) % n).find(|&c| libc::CPU_ISSET(c, &old)).unwrap_or(cpu);
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return None;
        }
        Some(Pinned { cpu, child_cpu, old })
    }
}

pub(super) fn futex_wait_timeout(word: &std::sync::atomic::AtomicU32, expected: u32, nanos: i64) {
    let ts = libc::timespec { tv_sec: 0, tv_nsec: nanos };
    // SAFETY: shared futex wait on a word of our mapping with a relative timeout.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word as *const _,
            libc::FUTEX_WAIT,
            expected,
            &ts as *const libc::timespec,
        );
    }
}

pub(super) fn futex_wake(word: &std::sync::atomic::AtomicU32) {
    // SAFETY: waking waiters on a word of our shared mapping.
    unsafe {
        libc::syscall(libc::SYS_futex, word as *const _, libc::FUTEX_WAKE, i32::MAX);
    }
}
