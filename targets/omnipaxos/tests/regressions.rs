//! Frozen counterexamples: repro files found by a seeded search on the published crates and
//! shrunk by a deletion that keeps them failing on the buggy version and passing on the fixed
//! one (what `weft shrink --passing-on` now does), each replayed on both versions here. From
//! the command line: `weft replay FILE` (the violation recurs) and `weft replay FILE --variant
//! FIXED` (it passes).

use weft_core::{Decisions, NullObserver, Outcome, RunSpec, Target};
use weft_report::Repro;
use weft_target_omnipaxos::OmniPaxos;

/// Replays `repro`'s decisions on `variant` (its property selection, `Agreement`) and returns
/// the outcome and the trace hash.
fn replay(variant: &str, repro: &str) -> (Outcome, u64) {
    let repro = Repro::parse(repro).expect("the frozen repro parses");
    let spec = RunSpec { variant: variant.into(), ..repro.spec.clone() };
    let runner = OmniPaxos.prepare(&spec).expect("valid spec");
    let mut d = Decisions::replay(repro.decisions.clone());
    let report = runner.run(&repro.scenario, &mut d, &mut NullObserver);
    (report.outcome, report.trace_hash)
}

fn assert_diverges(variant: &str, repro: &str, expected: &str) {
    match replay(variant, repro).0 {
        Outcome::SafetyViolation { property, detail } => {
            assert_eq!(property, "Agreement");
            assert_eq!(detail, expected, "{variant} fails differently than when frozen");
        }
        other => panic!("{variant} no longer violates Agreement: {other}"),
    }
}

fn assert_agrees(variant: &str, repro: &str) {
    let outcome = replay(variant, repro).0;
    assert_ne!(outcome.property(), Some("Agreement"), "{variant}: {outcome}");
}

/// The repro still replays on the version it was recorded on with the recorded trace hash, so
/// `weft replay FILE` reports "reproduced".
fn assert_replays_as_recorded(repro: &str) {
    let r = Repro::parse(repro).expect("the frozen repro parses");
    let (outcome, hash) = replay(&r.spec.variant, repro);
    assert_eq!((outcome, hash), (r.outcome.clone(), r.trace_hash), "{}", r.spec.variant);
}

/// omnipaxos 0.2.0, `AcceptSync` suffix at the wrong index (upstream PR #112, commit 443b6076,
/// released in 0.2.1).
///
/// Postmortem. Servers n1 and n2 both accepted entries 0..20 in round (1, n1); n1 also accepted
/// entry 20 (value 1000001), whose `AcceptDecide` to n2 was still in flight when a link flap
/// between n0 and n1 ended and n0 took over with round (2, n0). n1 promised with
/// `accepted_idx 21`, n2 with `accepted_idx 20`, both with `n_accepted = (1, n1)`. In
/// `send_accsync`, 0.2.0 takes a follower whose promise has the same `n_accepted` as the most
/// advanced promise to hold as many entries as that promise (`prev_round_max_accepted_idx`,
/// 21), so n2 received `AcceptSync { sync_idx: 21, suffix: [1000000] }` while holding only 20
/// entries; the suffix landed at index 20. n0 decided `[.., 1000001, 1000000]`, n2 decided
/// `[.., 1000000, 1000002]`. The fix sends from `min(prev_round_max_accepted_idx,
/// followers_accepted_idx)`; it is the only code difference between the two published crates,
/// so the different outcome on the same decisions is due to that line.
#[test]
fn omnipaxos_0_2_0_accept_sync_suffix_lands_at_the_wrong_index() {
    let repro = include_str!("counterexamples/0.2.0-accept-sync-suffix-offset.json");
    assert_replays_as_recorded(repro);
    assert_diverges(
        "0.2.0",
        repro,
        "n0 and n2 decided different entries at index 20: 1000001 vs 1000000",
    );
    assert_agrees("0.2.1", repro);
}

/// omnipaxos 0.2.2, promise suffix applied at the wrong index by the new leader (gone in 0.2.3,
/// where `Promise` carries a `LogSync` with an explicit `sync_idx`).
///
/// Postmortem. n1 held 9 entries (decided 8, `n_accepted = (1, n2)`) when it started round
/// (2, n1). n2 had meanwhile followed n0's round (2, n0) and decided 12 entries. n2's promise
/// to n1 therefore carried the suffix from n1's decided index 8, `[10, 7, 18, 5]`, with
/// `decided_idx 12`. In `handle_majority_promises` 0.2.2 first raises the leader's decided
/// index to the largest promised one (12) and then appends the suffix with
/// `append_on_decided_prefix`, i.e. after what n1 already holds rather than at index 8 where
/// the suffix begins: n1's log became `[.., 10, 10, 7, 18, 5]` and its decided prefix disagreed
/// with n0's at index 9 (10 vs 7). 0.2.3 replaced the bare `suffix` of `Promise` and
/// `AcceptSync` with `LogSync { suffix, sync_idx, .. }`, so the receiver applies the entries at
/// the index the sender computed them from; the same decisions then keep all logs prefixes of
/// one another. Unlike 0.2.0 → 0.2.1 the diff between these releases is large (index types,
/// batching, the leader-election rewrite), so the attribution rests on this trace, not on a
/// one-line diff.
#[test]
fn omnipaxos_0_2_2_promise_suffix_lands_after_the_decided_prefix() {
    let repro = include_str!("counterexamples/0.2.2-promise-suffix-offset.json");
    assert_replays_as_recorded(repro);
    assert_diverges("0.2.2", repro, "n0 and n1 decided different entries at index 9: 7 vs 10");
    assert_agrees("0.2.3", repro);
}

/// omnipaxos 0.2.1: the same promise-suffix bug as 0.2.2, which PR #112 did not touch (the
/// "second bug" of 0.2.1, gone by 0.2.3).
///
/// Postmortem. n1 held 13 entries (decided 12, `n_accepted = (0, n2)`) when it started round
/// (2, n1); n2 had meanwhile followed n0's round (1, n0) to 20 decided entries. n2's promise
/// carried the suffix from n1's decided index 12, `[10, 15, 8, ...]`, with `decided_idx 20`.
/// n1 raised its decided index to 20 and appended the suffix after the 13 entries it held, so
/// index 13 became 10 again where n0 has 15. The same decisions fail identically on 0.2.0,
/// whose promise handling is the same code: PR #112 fixed `AcceptSync` only. This is why the
/// 0.2.0 → 0.2.1 comparison counts seeds that fail only on 0.2.0.
#[test]
fn omnipaxos_0_2_1_promise_suffix_lands_after_the_accepted_entries() {
    let repro = include_str!("counterexamples/0.2.1-promise-suffix-offset.json");
    assert_replays_as_recorded(repro);
    let detail = "n0 and n1 decided different entries at index 13: 15 vs 10";
    assert_diverges("0.2.1", repro, detail);
    assert_diverges("0.2.0", repro, detail);
    assert_agrees("0.2.3", repro);
}
