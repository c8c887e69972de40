//! A process's limits and where its mappings land are the same whatever machine weft runs on
//! (`tests/c/layout.c`): each node starts with fixed resource limits, not weft's own (Redis
//! sizes `maxclients` by `RLIMIT_NOFILE` and logs it; the stack limit moves every mapping), and
//! `mmap` places mappings top-down in the shim's own arena, not wherever the kernel's layout
//! (its version, the libraries' sizes) would put them. Nor does a node inherit what its
//! launcher leaves behind: descriptors without close-on-exec (a shell's, a CI runner's: each
//! shifts the numbers the program's own descriptors get), ignored signals, a umask. This test
//! binary lowers its own limits and leaves such state first, as another machine or launcher
//! would.

mod common;
use weft_core::{Decisions, NullObserver, Outcome, Scenario};

fn lower_own_limits() {
    let set = |resource, soft: u64| {
        let mut r = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit and setrlimit on local structs.
        unsafe {
            libc::getrlimit(resource, &mut r);
            r.rlim_cur = soft.min(r.rlim_max);
            assert_eq!(libc::setrlimit(resource, &r), 0);
        }
    };
    set(libc::RLIMIT_NOFILE, 200);
    set(libc::RLIMIT_STACK, 32 << 20);
    set(libc::RLIMIT_CORE, 4096);
}

/// A descriptor open without close-on-exec, SIGHUP ignored and umask 077, as a shell or a CI
/// runner may leave them.
fn leave_launcher_state() {
    // SAFETY: open, signal and umask on constants; the fd is left open on purpose.
    unsafe {
        assert!(libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY) >= 0);
        libc::signal(libc::SIGHUP, libc::SIG_IGN);
        libc::umask(0o077);
    }
}

#[test]
fn limits_and_mapping_addresses_do_not_depend_on_the_machine() {
    lower_own_limits();
    leave_launcher_state();
    let cfg = common::config("layout", &[], 1);
    let mut d = Decisions::random(3);
    let out = weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap();
    assert_eq!(out.report.outcome, Outcome::Pass, "{:?}", out.lines);
    let text: Vec<&str> = out.lines.iter().map(|l| l.text.as_str()).collect();
    assert_eq!(text[..3], ["nofile: 1024 16384", "stack: 8388608 -1", "core: 0 -1"]);
    let hex = |s: &str| usize::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    let at: Vec<usize> = text[3].strip_prefix("maps: ").unwrap().split(' ').map(hex).collect();
    let (top, mib, page) = (0x7e00_0000_0000usize, 1usize << 20, 4096usize);
    // The shim's own mappings come first, a few MiB under the arena's top.
    assert!(at[0] < top && at[0] > top - 64 * mib, "{:#x}", at[0]);
    let a = at[0];
    let want = [a, a - 3 * mib, a + mib - page, a - 5 * mib, a - 13 * mib];
    assert_eq!(at, want, "top-down first fit: {}", text[3]);
    assert_eq!(text[4], "failed move: 1 14", "EFAULT, as the kernel answers");
    let after = hex(text[5].strip_prefix("after: ").unwrap());
    assert_eq!(after, a - 4 * mib, "the failed move's reservation was given back");
    assert_eq!(text[6], "inherited: fd 3, 0 open, SIGHUP default, umask 022");
    assert_eq!(text[7], "shim extent: 0x800001", "the shim's fixed extent (weft-shim's build.rs)");
}
