//! weft-shim is the `LD_PRELOAD` library that makes an unmodified, dynamically linked Linux
//! program deterministic under weft-host. It interposes libc's public entry points for time,
//! randomness, sleeping and polling, UDP sockets and TCP-like streams, threads (creation,
//! mutexes, condition variables), process identity, signals and timers (in virtual time),
//! files under a node's data directories and their mappings (served from the host's simulated
//! disk), and (for the record) other file operations, and forwards every call that blocks,
//! sends or receives to the host over a shared-memory slot with a futex hand-off. Calls that
//! only read (the clocks, random bytes) never leave the process: virtual time is read from a
//! page the host updates, and random bytes come from a per-process stream the host seeds.
//! Raw system calls that would bypass the hooks are trapped with a seccomp filter and reported
//! to the host as unsupported, never silently run.
//!
//! Rules every module keeps, because it runs inside someone else's process: no allocation and
//! no panics in hooks (a panic in an `extern "C"` function aborts, it cannot unwind into C), a
//! `const` thread-local reentrancy guard, lazy initialisation (hooks can run before the
//! library constructor), and diagnostics through raw `write(2)` only. Without the host's
//! environment variables every hook passes straight through to libc.
//!
//! One module per family of calls; [`fdtable`] is the one place that knows what an fd is, and
//! [`slot`] the one that talks to the host. `#[no_mangle]` exports work from any module.

#![allow(clippy::missing_safety_doc)] // every export is a libc entry point with libc's contract
#![deny(clippy::undocumented_unsafe_blocks)]

/// libc's own implementation of a hooked symbol (`dlsym(RTLD_NEXT)`, cached per call site).
macro_rules! real {
    ($name:ident : fn($($t:ty),*) -> $r:ty) => {{
        static CACHE: core::sync::atomic::AtomicPtr<core::ffi::c_void> =
            core::sync::atomic::AtomicPtr::new(core::ptr::null_mut());
        let mut p = CACHE.load(core::sync::atomic::Ordering::Relaxed);
        if p.is_null() {
            let name = concat!(stringify!($name), "\0");
            // SAFETY: the name is a NUL-terminated literal; dlsym does not call our hooks.
            p = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr().cast()) };
            CACHE.store(p, core::sync::atomic::Ordering::Relaxed);
        }
        if p.is_null() {
            $crate::slot::diag(
                concat!("weft-shim: no next symbol for ", stringify!($name), "\n").as_bytes(),
            );
            $crate::sys::exit_group(127);
        }
        // SAFETY: p is libc's implementation of the symbol, whose C signature this matches.
        unsafe {
            core::mem::transmute::<*mut core::ffi::c_void, unsafe extern "C" fn($($t),*) -> $r>(p)
        }
    }};
}

#[path = "proto.rs"]
mod proto;
mod sys;

mod clockset;
mod clockwaits;
mod clone;
mod cpuid;
mod creds;
mod datadir;
mod diskcalls;
mod disklist;
mod disklock;
mod diskmmap;
mod diskstat;
mod diskstdio;
mod dl;
mod dprintf;
mod epoll;
mod exec;
mod execfds;
mod fdtable;
mod files;
mod filetimes;
mod fortify;
mod groups;
mod inetaddr;
mod internal_threads;
mod io;
mod local;
mod machine;
mod passfds;
mod passreal;
mod pidcalls;
mod pktinfo;

mod poll;
mod popen;
mod preload;
mod process;
mod procfs;
mod procpids;
mod random;
mod rawcalls;
mod scandir;
mod sendfile;
mod sharedkeys;
mod sigcompat;
mod sigfd;
mod signals;
mod sigsend;
mod slot;
mod sockets;
mod socktable;
mod splice;
mod stacks;
mod text;
mod threadexit;
mod threads;
mod time;
mod timers;
mod tsc;
mod vmspace;

/// What every hook module uses: C types, the protocol, the hand-off and the descriptor table.
mod prelude {
    pub(crate) use crate::fdtable::{self, FdKind};
    pub(crate) use crate::proto::*;
    pub(crate) use crate::slot::{
        active, handoff, local_call, ret_errno, set_errno, slot, unsupported, Guard,
    };
    pub(crate) use crate::sys;
    pub(crate) use core::ffi::{c_char, c_int, c_long, c_uint, c_ulong, c_void};
    pub(crate) use core::ptr;
    pub(crate) use core::sync::atomic::{AtomicI64, AtomicPtr, AtomicU32, AtomicU64, Ordering};
    pub(crate) use libc::{size_t, sockaddr, socklen_t, ssize_t};
}

/// The last byte of the shim's fixed 8 MiB extent (placed by `build.rs`'s linker script).
#[used]
#[link_section = ".weft_end"]
static WEFT_END: core::sync::atomic::AtomicU8 = core::sync::atomic::AtomicU8::new(0);
