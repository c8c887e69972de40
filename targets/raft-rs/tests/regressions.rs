//! Frozen counterexamples: repro files found by `weft explore raft-rs --variant 0.4.1` and
//! shrunk by `weft shrink`, each replayed on the buggy and on the fixed version. A repro file is
//! the whole counterexample; `weft replay FILE` and `weft replay FILE --variant 0.4.2` run it
//! from the command line.

use weft_core::{Decisions, Event, EventKind, Outcome, Recorder, RunSpec, Runner, Target};
use weft_report::Repro;
use weft_target_raft_rs::RaftRs;

const TWO_LEADERS: &str =
    include_str!("counterexamples/0.4.1-transfer-with-unapplied-conf-changes.json");
const OLD_QUORUM: &str =
    include_str!("counterexamples/0.4.1-transfer-commits-with-the-old-quorum.json");

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

/// The first event at which the two versions' runs differ, from each run. Both replay the same
/// decisions, so everything before it is the same behaviour. Compared: time, node, kind, peer,
/// the message summary and the node's state line without the version (what a reader of the
/// two timelines would compare).
fn parting<'a>(buggy: &'a Recorder, fixed: &'a Recorder) -> (&'a Event, &'a Event) {
    let seen = |e: &Event| {
        let state = e.state.as_deref().unwrap_or_default();
        let state = state.replace("raft 0.4.1 ", "").replace("raft 0.4.2 ", "");
        (e.time, e.node, e.kind, e.peer, e.summary.clone(), state)
    };
    buggy
        .events
        .iter()
        .zip(&fixed.events)
        .find(|(a, b)| seen(a) != seen(b))
        .expect("the two versions' runs never part")
}

/// Checks that 0.4.1 and 0.4.2 part ways exactly where the fix is: at a `MsgTimeoutNow`
/// delivered to `node` while it still counts only the bootstrap voters, after which the node is
/// a candidate on 0.4.1 and still a follower on 0.4.2.
fn assert_parts_at_the_transfer(buggy: &Recorder, fixed: &Recorder, node: u32) {
    let (b, f) = parting(buggy, fixed);
    for e in [b, f] {
        assert_eq!(e.kind, EventKind::Deliver, "the runs part at another event: {e:?}");
        assert_eq!(e.node, Some(node), "{e:?}");
        assert!(e.summary.starts_with("MsgTimeoutNow"), "{e:?}");
        let state = e.state.as_deref().unwrap_or_default();
        assert!(state.contains("voters=[n0,n1,n2]"), "n{node} should count 3 voters: {state}");
    }
    let state = |e: &Event| e.state.clone().unwrap_or_default();
    assert!(state(b).contains(" candidate "), "0.4.1: {}", state(b));
    assert!(state(f).contains(" follower "), "0.4.2: {}", state(f));
}

/// The frozen repro `text` still fails on 0.4.1 exactly as recorded (outcome, violating
/// `property`, trace hash), passes every property on 0.4.2, and the two runs part exactly at a
/// `MsgTimeoutNow` delivered to `node`.
fn assert_frozen(text: &str, property: &str, node: u32) {
    let repro = Repro::parse(text).expect("the frozen repro parses");
    assert_eq!(repro.spec.variant, "0.4.1");
    let (outcome, hash, buggy) = replay(&repro, "0.4.1");
    assert_eq!(outcome, repro.outcome, "0.4.1 fails differently than when frozen");
    assert_eq!(hash, repro.trace_hash, "0.4.1 took another path than when frozen");
    assert_eq!(outcome.property(), Some(property));
    let (fixed_outcome, _, fixed) = replay(&repro, "0.4.2");
    assert_eq!(fixed_outcome, Outcome::Pass, "0.4.2 on the same decisions");
    assert_parts_at_the_transfer(&buggy, &fixed, node);
}

/// raft 0.4.1: a leader-transfer campaign ignores committed but unapplied configuration
/// changes (tikv/raft-rs #221, fixed by PR #225, commit 64571f0f, released in 0.4.2).
///
/// Postmortem. n1, leader of term 7, had committed and applied "add n4" (index 8) and was
/// committing "add n3" (index 9). n0 knew both entries committed (commit 9) but its apply step
/// lagged (applied 6), so its library still counted the three bootstrap voters. n0 asked for
/// leadership (a transfer request forwarded to n1), n1 found it caught up and sent it
/// `MsgTimeoutNow`. 0.4.1's `step_follower` handles `MsgTimeoutNow` by calling
/// `campaign(CAMPAIGN_TRANSFER)` directly, skipping the pending-configuration check that
/// `MsgHup` makes, so n0 campaigned for term 8 with the old configuration and won it with two
/// votes of three. Meanwhile the link n0 → n2 was cut for 10 ms, so n2, which had applied both
/// entries and counts five voters, heard nothing of term 8, timed out, and won term 8 with
/// the votes of n3 and n4, whom n0 never contacts. Two leaders in term 8, with disjoint
/// quorums from two configurations. 0.4.2's `MsgTimeoutNow` goes through `hup(true)`, which
/// refuses to campaign while committed configuration changes are unapplied; on the same
/// decisions n0 stays a follower and every property holds. The release diff also swaps the
/// protobuf runtime (prost to rust-protobuf), so the attribution rests on the trace: the test
/// checks that the two versions' runs are identical up to exactly that `MsgTimeoutNow`, where
/// 0.4.1 campaigns and 0.4.2 does not.
#[test]
fn raft_0_4_1_transfer_campaign_with_unapplied_conf_changes_elects_two_leaders() {
    assert_frozen(TWO_LEADERS, "OneLeaderPerTerm", 0);
}

/// raft 0.4.1, the same bug losing a committed entry without two leaders in one term.
///
/// Postmortem. n1, leader of term 3, had committed and applied "add n5" (index 9) and
/// "add n4" (index 10): five voters. n0 knew both committed (commit 10) but had applied only
/// up to index 8, so it counted the three bootstrap voters. A transfer made n1 send n0
/// `MsgTimeoutNow`; 0.4.1's n0 campaigned for term 4 with the old configuration, won with
/// n2's vote, and committed its term-4 entry at index 11 with the old quorum {n0, n2}; both
/// applied it. n1 never received that entry (the append to it was dropped). In the heal phase
/// n1 campaigned for term 5 with the new configuration, won with the votes of n3 and n4 (whom
/// n0 never contacts, and whose logs are empty), and committed *its* entry at index 11 with
/// {n1, n3, n4}. n0 and n1 applied different entries at index 11: a committed entry is lost,
/// although no term had two leaders. Shrunk with `weft shrink --passing-on 0.4.2`, so it
/// passes on the fixed version by construction. Here the two versions part earlier than the
/// loss, at the run's first transfer (0.178 s, to n1): n1's bootstrap configuration entries
/// (indexes 1–3) were committed but not yet applied, so 0.4.2 refuses that campaign as well,
/// although it would have been harmless (the bootstrap configuration is the one n1 counts);
/// the test checks that parting point.
#[test]
fn raft_0_4_1_transfer_campaign_commits_with_the_old_quorum() {
    assert_frozen(OLD_QUORUM, "CommittedKept", 1);
}
