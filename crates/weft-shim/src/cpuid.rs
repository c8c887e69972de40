//! The `cpuid` instruction, answered without `RDRAND` and `RDSEED`. Those two instructions
//! draw from the processor's own random source, which no hook or trap sees, and programs use
//! them when `cpuid` says they exist: libstdc++'s `std::random_device` by default (also where
//! libstdc++ is linked in statically, beyond the hook of [`crate::random`]), OpenSSL's and
//! Boost's generators. With `ARCH_SET_CPUID` off the instruction faults (`SIGSEGV`, the
//! handler of [`crate::tsc`]), and the answer is the processor's own with those two feature
//! bits cleared, so programs fall back to the system's source, which is the seeded stream.
//! glibc and the loader ask `cpuid` before the shim is loaded (their answers are the real
//! ones); the kernel turns the fault off at `exec` and a new image's shim turns it on again.
//! A program that runs `RDRAND` without asking `cpuid` first still escapes unseen.

use crate::prelude::*;

const ARCH_SET_CPUID: i64 = 0x1012;
/// Leaf 1, `ecx`: `RDRAND`.
const RDRAND: u32 = 1 << 30;
/// Leaf 7, subleaf 0, `ebx`: `RDSEED`.
const RDSEED: u32 = 1 << 18;

/// Makes `cpuid` fault in this thread and the ones it makes (true: it does). The caller has
/// installed the `SIGSEGV` handler.
pub(crate) fn trap() -> bool {
    set_faulting(true)
}

fn set_faulting(on: bool) -> bool {
    let args = [ARCH_SET_CPUID, i64::from(!on), 0, 0, 0, 0];
    // SAFETY: arch_prctl with an integer argument changes only this thread's flag.
    unsafe { sys::raw(libc::SYS_arch_prctl, args) == 0 }
}

/// If the faulting instruction at `pc` is `cpuid`, answers it in `g` (the registers) and steps
/// over it: true. False for any other instruction.
///
/// # Safety
/// `pc` is the address of an instruction the processor just fetched (readable), and `g` the
/// interrupted context's registers.
pub(crate) unsafe fn answer(pc: u64, g: &mut [i64]) -> bool {
    let at = pc as *const u8;
    if (*at, *at.add(1)) != (0x0f, 0xa2) {
        return false;
    }
    let (leaf, sub) = (g[libc::REG_RAX as usize] as u32, g[libc::REG_RCX as usize] as u32);
    set_faulting(false);
    let mut r = core::arch::x86_64::__cpuid_count(leaf, sub);
    set_faulting(true);
    match leaf {
        1 => r.ecx &= !RDRAND,
        7 if sub == 0 => r.ebx &= !RDSEED,
        _ => {}
    }
    // The instruction writes the 32-bit registers, which clears their upper halves.
    g[libc::REG_RAX as usize] = i64::from(r.eax);
    g[libc::REG_RBX as usize] = i64::from(r.ebx);
    g[libc::REG_RCX as usize] = i64::from(r.ecx);
    g[libc::REG_RDX as usize] = i64::from(r.edx);
    g[libc::REG_RIP as usize] = (pc + 2) as i64;
    true
}
