//! `rdtsc` and `rdtscp` in virtual time. The time-stamp counter is read by an instruction, not
//! a call, so no hook sees it: MariaDB seeds each connection's random generator with it (its
//! handshake scramble differed from run to run) and OpenSSL mixes it into its entropy. With
//! `PR_SET_TSC` = `PR_TSC_SIGSEGV` the instruction faults instead (`SIGSEGV`, `si_code` =
//! `SI_KERNEL`), and the shim's handler answers it: `CLOCK_MONOTONIC`'s virtual reading in
//! nanoseconds (a 1 GHz counter), `rdtscp`'s processor id 0, then the next instruction. The
//! vDSO's clock functions read the counter too (glibc's own calls of them, which no hook
//! sees): there the handler reads the real counter, with the trap off for that one read, so
//! they work as before. Every other `SIGSEGV` goes to the program's disposition, which
//! `signals` records without installing it: the program's handler is called with the same
//! arguments (and its changes to the context take effect, as the JVM's null checks need), and
//! the default or an ignored one ends the process by `SIGSEGV` as natively. The same handler
//! answers a faulting `cpuid` ([`crate::cpuid`]).

use crate::prelude::*;
use core::sync::atomic::AtomicBool;

/// Whether the counter faults in this process (the handler is installed).
static TRAPPING: AtomicBool = AtomicBool::new(false);
/// The vDSO's address range, where the real counter is read.
static VDSO: [AtomicU64; 2] = [const { AtomicU64::new(0) }; 2];

/// `si_code` of a general-protection fault (the kernel's `SI_KERNEL`).
const SI_KERNEL: c_int = 0x80;

/// Whether `SIGSEGV` is the shim's in the kernel (then `signals` keeps the program's
/// disposition without installing it).
pub(crate) fn trapping() -> bool {
    TRAPPING.load(Ordering::Relaxed)
}

/// Installs the handler and makes the counter fault, in every image (the flag survives fork,
/// the handler does not survive exec). Without either, the counter stays the kernel's.
pub(crate) fn install() {
    let real_sigaction =
        real!(sigaction: fn(c_int, *const libc::sigaction, *mut libc::sigaction) -> c_int);
    // SAFETY: installing an SA_SIGINFO handler with a valid function pointer; prctl on this
    // process; getauxval reads the auxiliary vector.
    unsafe {
        let mut sa: libc::sigaction = core::mem::zeroed();
        sa.sa_sigaction = on_sigsegv as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO | libc::SA_NODEFER | libc::SA_ONSTACK | libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        if real_sigaction(libc::SIGSEGV, &sa, ptr::null_mut()) != 0 {
            return;
        }
        note_vdso(libc::getauxval(libc::AT_SYSINFO_EHDR) as usize);
        let set = [libc::PR_SET_TSC as i64, libc::PR_TSC_SIGSEGV as i64, 0, 0, 0, 0];
        let counter = sys::raw(libc::SYS_prctl, set) == 0;
        // Both traps answer in this handler (`cpuid`'s: crate::cpuid).
        if crate::cpuid::trap() | counter {
            TRAPPING.store(true, Ordering::Relaxed);
        } else {
            crate::signals::kernel_default(libc::SIGSEGV);
        }
    }
}

/// Turns the trap off before an `exec` (`trap` false) and back on if it failed (`trap` true):
/// the flag outlives `exec`, the handler does not, and the new image's loader reads the
/// counter before its shim is there to answer (every exec'd program died of `SIGSEGV`).
pub(crate) fn across_exec(trap: bool) {
    if trapping() {
        let mode = if trap { libc::PR_TSC_SIGSEGV } else { libc::PR_TSC_ENABLE };
        // SAFETY: a plain prctl on this thread.
        unsafe { sys::raw(libc::SYS_prctl, [libc::PR_SET_TSC as i64, mode as i64, 0, 0, 0, 0]) };
    }
}

/// Records the vDSO's extent from its ELF program headers (its loadable segments).
unsafe fn note_vdso(base: usize) {
    if base == 0 {
        return;
    }
    let eh = &*(base as *const libc::Elf64_Ehdr);
    let mut end = base;
    for i in 0..eh.e_phnum as usize {
        let ph = &*((base + eh.e_phoff as usize + i * eh.e_phentsize as usize)
            as *const libc::Elf64_Phdr);
        if ph.p_type == libc::PT_LOAD {
            end = end.max(base + (ph.p_vaddr + ph.p_memsz) as usize);
        }
    }
    VDSO[0].store(base as u64, Ordering::Relaxed);
    VDSO[1].store(end as u64, Ordering::Relaxed);
}

/// The real counter, read with the trap off for this one instruction.
fn real_counter() -> u64 {
    let on = [libc::PR_SET_TSC as i64, libc::PR_TSC_ENABLE as i64, 0, 0, 0, 0];
    let off = [libc::PR_SET_TSC as i64, libc::PR_TSC_SIGSEGV as i64, 0, 0, 0, 0];
    // SAFETY: prctl on this thread; rdtsc is allowed between the two.
    unsafe {
        sys::raw(libc::SYS_prctl, on);
        let v = core::arch::x86_64::_rdtsc();
        sys::raw(libc::SYS_prctl, off);
        v
    }
}

/// The counter for an instruction at `pc`: real inside the vDSO, virtual elsewhere.
fn counter_at(pc: u64) -> u64 {
    if (VDSO[0].load(Ordering::Relaxed)..VDSO[1].load(Ordering::Relaxed)).contains(&pc) {
        return real_counter();
    }
    if active() {
        local_call(); // a loop that waits for the counter to move sees time pass
        MONOTONIC_BASE_NS + crate::time::now_ns()
    } else {
        real_counter()
    }
}

/// The length of the counter-reading instruction at `pc` (`rdtsc` 2, `rdtscp` 3), or 0.
unsafe fn counter_instruction(pc: *const u8) -> usize {
    match (*pc, *pc.add(1)) {
        (0x0f, 0x31) => 2,
        (0x0f, 0x01) if *pc.add(2) == 0xf9 => 3,
        _ => 0,
    }
}

extern "C" fn on_sigsegv(sig: c_int, info: *mut libc::siginfo_t, ctx: *mut c_void) {
    // SAFETY: the kernel passes a siginfo and a ucontext_t; a general-protection fault's pc is
    // an instruction the processor just fetched, so its bytes are readable.
    unsafe {
        let uc = &mut *(ctx as *mut libc::ucontext_t);
        let g = &mut uc.uc_mcontext.gregs;
        let pc = g[libc::REG_RIP as usize] as u64;
        if (*info).si_code == SI_KERNEL {
            if crate::cpuid::answer(pc, &mut g[..]) {
                return;
            }
            let len = counter_instruction(pc as *const u8);
            if len > 0 {
                let v = counter_at(pc);
                g[libc::REG_RAX as usize] = (v & 0xffff_ffff) as i64;
                g[libc::REG_RDX as usize] = (v >> 32) as i64;
                if len == 3 {
                    g[libc::REG_RCX as usize] = 0;
                }
                g[libc::REG_RIP as usize] = (pc + len as u64) as i64;
                return;
            }
        }
        if (*info).si_code > 0 && crate::signals::program_blocks(sig) {
            // A fault with the signal blocked ends the process, as Linux forces it.
            crate::signals::kernel_default(sig);
            return;
        }
        crate::signals::run_fault_handler(sig, info, ctx);
    }
}
