//! Frozen counterexamples: repro files found by `weft explore raft-rs --variant 0.4.1` and
//! shrunk by `weft shrink`, each replayed on the buggy and on the fixed version. A repro file is
//! the whole counterexample; `weft replay FILE` and `weft replay FILE --variant 0.4.2` run it
//! from the command line.

use weft_core::{Decisions, EventKind, Outcome, Recorder, RunSpec, Runner, Target};
use weft_report::Repro;
use weft_target_raft_rs::RaftRs;

const TWO_LEADERS: &str =
    include_str!("counterexamples/0.4.1-transfer-with-unapplied-conf-changes.json");

/// Replays `repro`'s decisions on `variant`, checking every property (not only the one the
/// repro was found for), and returns the outcome and the recorded events.
fn replay(repro: &Repro, variant: &str) -> (Outcome, u64, Recorder) {
    let spec = RunSpec { variant: variant.into(), property: None, ..repro.spec.clone() };
    let runner: Box<dyn Runner> = RaftRs.prepare(&spec).expect("valid spec");
    let mut rec = Recorder::default();
    let report =
        runner.run(&repro.scenario, &mut Decisions::replay(repro.decisions.clone()), &mut rec);
    (report.outcome, report.trace_hash, rec)
}

/// The state line of `node` right after it handled the first `MsgTimeoutNow` delivered to it.
fn after_timeout_now(rec: &Recorder, node: u32) -> String {
    rec.events
        .iter()
        .find(|e| {
            e.kind == EventKind::Deliver
                && e.node == Some(node)
                && e.summary.contains("MsgTimeoutNow")
        })
        .and_then(|e| e.state.clone())
        .unwrap_or_else(|| panic!("no MsgTimeoutNow reached n{node}"))
}

/// raft 0.4.1: a leader-transfer campaign ignores committed but unapplied configuration
/// changes (tikv/raft-rs #221, fixed by PR #225, commit 64571f0f, released in 0.4.2).
///
/// Postmortem. n0, leader of term 3, had committed and applied "add n4" (index 6) and
/// "add n3" (index 8): it counts five voters. n1 had both entries in its log and knew them
/// committed (commit 8) but its apply step lagged (applied 3), so its library still counted
/// the three bootstrap voters. A leader-transfer request reached n0, which found n1 caught up
/// and sent it `MsgTimeoutNow`. 0.4.1's `step_follower` handles `MsgTimeoutNow` by calling
/// `campaign(CAMPAIGN_TRANSFER)` directly, skipping the pending-configuration check that
/// `MsgHup` makes, so n1 campaigned for term 4 with the old configuration and won it with
/// two votes of three (its own and n0's). Meanwhile the link n1 → n2 was cut, so n2 heard
/// nothing of term 4, timed out, and campaigned for term 4 with the new configuration: n3 and
/// n4, which n1 does not count as voters and so never contacted, gave it three votes of five.
/// Two leaders in term 4, with disjoint quorums from two configurations. 0.4.2's
/// `MsgTimeoutNow` goes through `hup(true)`, which refuses to campaign while committed
/// configuration changes are unapplied; on the same decisions n1 stays a follower and every
/// property holds. The release diff also swaps the protobuf runtime (prost to rust-protobuf),
/// so the attribution rests on the trace: the test checks that the two versions part ways at
/// exactly that `MsgTimeoutNow`.
#[test]
fn raft_0_4_1_transfer_campaign_with_unapplied_conf_changes_elects_two_leaders() {
    let repro = Repro::parse(TWO_LEADERS).expect("the frozen repro parses");
    assert_eq!(repro.spec.variant, "0.4.1");

    let (outcome, hash, buggy) = replay(&repro, "0.4.1");
    assert_eq!(outcome, repro.outcome, "0.4.1 fails differently than when frozen");
    assert_eq!(hash, repro.trace_hash, "0.4.1 took another path than when frozen");
    assert_eq!(outcome.property(), Some("OneLeaderPerTerm"));

    let (fixed_outcome, _, fixed) = replay(&repro, "0.4.2");
    assert_eq!(fixed_outcome, Outcome::Pass, "0.4.2 on the same decisions");

    // Both versions reach the transfer with n1 knowing more configuration than it applied;
    // 0.4.1 campaigns, 0.4.2 declines.
    let (before, after) = (after_timeout_now(&buggy, 1), after_timeout_now(&fixed, 1));
    for state in [&before, &after] {
        assert!(state.contains("voters=[n0,n1,n2]"), "n1 should still count 3 voters: {state}");
    }
    assert!(before.contains(" candidate "), "0.4.1: {before}");
    assert!(after.contains(" follower "), "0.4.2: {after}");
}
