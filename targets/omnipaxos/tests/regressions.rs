//! Frozen counterexamples: decision lists found by a seeded search on the published crates and
//! shrunk by hand-rolled deletion (`examples/freeze.rs`), each replayed on the buggy and on the
//! fixed version. A decision list is the whole counterexample: with the target's default
//! scenario it replays bit for bit (`weft replay` once the CLI knows this target).

use weft_core::{Decisions, NullObserver, Outcome, RunSpec, Target};
use weft_target_omnipaxos::OmniPaxos;

fn replay(variant: &str, list: &str) -> Outcome {
    let spec = RunSpec {
        target: "omnipaxos".into(),
        variant: variant.into(),
        property: Some("Agreement".into()),
        ..RunSpec::default()
    };
    let runner = OmniPaxos.prepare(&spec).expect("valid spec");
    let list: Vec<u64> =
        list.split_whitespace().map(|w| w.parse().expect("decision list holds numbers")).collect();
    runner.run(&runner.default_scenario(), &mut Decisions::replay(list), &mut NullObserver).outcome
}

fn assert_diverges(variant: &str, list: &str, expected: &str) {
    match replay(variant, list) {
        Outcome::SafetyViolation { property, detail } => {
            assert_eq!(property, "Agreement");
            assert_eq!(detail, expected, "{variant} fails differently than when frozen");
        }
        other => panic!("{variant} no longer violates Agreement: {other}"),
    }
}

fn assert_agrees(variant: &str, list: &str) {
    let outcome = replay(variant, list);
    assert_ne!(outcome.property(), Some("Agreement"), "{variant}: {outcome}");
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
    let list = include_str!("counterexamples/0.2.0-accept-sync-suffix-offset.txt");
    assert_diverges(
        "0.2.0",
        list,
        "n0 and n2 decided different entries at index 20: 1000001 vs 1000000",
    );
    assert_agrees("0.2.1", list);
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
    let list = include_str!("counterexamples/0.2.2-promise-suffix-offset.txt");
    assert_diverges("0.2.2", list, "n0 and n1 decided different entries at index 9: 7 vs 10");
    assert_agrees("0.2.3", list);
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
    let list = include_str!("counterexamples/0.2.1-promise-suffix-offset.txt");
    let detail = "n0 and n1 decided different entries at index 13: 15 vs 10";
    assert_diverges("0.2.1", list, detail);
    assert_diverges("0.2.0", list, detail);
    assert_agrees("0.2.3", list);
}
