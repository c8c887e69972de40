//! Thread stacks come from the shim's arena (`crates/weft-shim/src/stacks.rs`), not from
//! glibc's internal `mmap`, which the kernel places by its own version's rules: a thread's
//! stack, and the TLS glibc keeps at its top, land at the same address on every machine.
//! Joined and ended detached threads give theirs back, at simulated steps only
//! (`tests/c/stacks.c`).

mod common;
use weft_core::{Decisions, NullObserver, Scenario};

#[test]
fn thread_stacks_are_placed_in_the_arena_and_given_back() {
    let cfg = common::config("stacks", &[], 1);
    let run = |seed| {
        let mut d = Decisions::random(seed);
        weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap()
    };
    let out = run(1);
    assert_eq!(
        common::passing_lines(&out),
        [
            "joined: in arena 1, reused 1",
            "detached: in arena 1, reused 1",
            "given: kept 1",
            "200 detached: 200 in arena",
        ]
    );
    assert_eq!(run(1).report.trace_hash, out.report.trace_hash, "same seed, same run");
}
