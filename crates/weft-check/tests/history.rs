//! Client histories: parsing and pairing Jepsen-style JSON lines, the set checker (lost and
//! unexpected elements, `info` and `fail` adds) and the register / key-value checks with their
//! minimal witnesses. Every history here has a known answer.

use weft_check::history::{
    check, check_set, pair, parse_lines, Checked, HistoryError, HistoryModel, Op, SetError, Stamp,
    PREFIX,
};
use weft_check::synth::{lose_elements, set_history};

/// Events as (time in ms, node, JSON), with the prefix a process prints.
fn ops(events: &[(u64, u32, &str)]) -> Vec<Op> {
    let lines: Vec<(String, Stamp)> = events
        .iter()
        .map(|&(ms, node, json)| {
            (format!("{PREFIX}{json}"), Stamp { time_ns: ms * 1_000_000, node })
        })
        .collect();
    let events = parse_lines(lines.iter().map(|(t, s)| (t.as_str(), *s))).expect("parses");
    pair(&events).expect("pairs")
}

fn add(ms: u64, p: u64, kind: &str, v: u64) -> (u64, u32, String) {
    (ms, 1, format!(r#"{{"type":"{kind}","process":{p},"f":"add","value":{v}}}"#))
}

fn read(ms: u64, p: u64, kind: &str, v: &str) -> (u64, u32, String) {
    (ms, 1, format!(r#"{{"type":"{kind}","process":{p},"f":"read","value":{v}}}"#))
}

fn history(events: Vec<(u64, u32, String)>) -> Vec<Op> {
    let refs: Vec<(u64, u32, &str)> = events.iter().map(|(t, n, s)| (*t, *n, s.as_str())).collect();
    ops(&refs)
}

#[test]
fn lines_without_the_prefix_are_skipped_and_stamps_kept() {
    let lines = [
        ("ready", Stamp::default()),
        (r#"WEFT-HISTORY {"type":"invoke","f":"add","value":3}"#, Stamp { time_ns: 5, node: 2 }),
        (r#"WEFT-HISTORY {"type":"ok","f":"add","value":3}"#, Stamp { time_ns: 9, node: 2 }),
    ];
    let events = parse_lines(lines).unwrap();
    assert_eq!(events.len(), 2);
    let ops = pair(&events).unwrap();
    assert_eq!(ops.len(), 1);
    assert_eq!(ops[0].process, 2, "process defaults to the node");
    assert_eq!(ops[0].completed, Some(Stamp { time_ns: 9, node: 2 }));
}

#[test]
fn malformed_and_unpaired_events_are_errors_naming_the_line() {
    let bad = [("WEFT-HISTORY {\"type\":\"done\",\"f\":\"add\"}", Stamp::default())];
    assert!(matches!(parse_lines(bad), Err(HistoryError::Malformed { line: 1, .. })));
    let bad = [("WEFT-HISTORY not json", Stamp::default())];
    assert!(matches!(parse_lines(bad), Err(HistoryError::Malformed { .. })));
    let lines = [(r#"WEFT-HISTORY {"type":"ok","process":4,"f":"add"}"#, Stamp::default())];
    let events = parse_lines(lines).unwrap();
    assert!(matches!(pair(&events), Err(HistoryError::Pairing { process: 4, .. })));
    let two = [
        (r#"WEFT-HISTORY {"type":"invoke","process":1,"f":"add"}"#, Stamp::default()),
        (r#"WEFT-HISTORY {"type":"invoke","process":1,"f":"add"}"#, Stamp::default()),
    ];
    assert!(pair(&parse_lines(two).unwrap()).is_err(), "two open operations in one process");
}

#[test]
fn every_acknowledged_add_present_passes() {
    let h = history(vec![
        add(0, 0, "invoke", 1),
        add(1, 0, "ok", 1),
        add(2, 1, "invoke", 2),
        add(3, 1, "ok", 2),
        read(10, 0, "invoke", "null"),
        read(11, 0, "ok", "[1,2]"),
    ]);
    assert!(matches!(check(HistoryModel::Set, &h), Checked::Valid(_)));
}

#[test]
fn a_lost_acknowledged_add_is_named_with_when_it_was_acknowledged() {
    let h = history(vec![
        add(0, 0, "invoke", 1),
        add(1, 0, "ok", 1),
        add(2, 1, "invoke", 2),
        add(3, 1, "ok", 2),
        read(10, 0, "invoke", "null"),
        read(11, 0, "ok", "[1]"),
    ]);
    let Err(SetError::Witness(w)) = check_set(&h) else { panic!("must fail") };
    assert_eq!(w.lost.len(), 1);
    assert_eq!(w.lost[0].0, "2");
    assert_eq!(w.lost[0].2.time_ns, 3_000_000, "acknowledged at 3 ms");
    assert_eq!(w.acknowledged, 2);
    let text = w.to_string();
    assert!(text.contains("1 of 2 acknowledged adds lost: 2 (ok at 0.003000s n1"), "{text}");
}

#[test]
fn info_adds_may_be_present_or_absent() {
    for present in ["[1]", "[1,2]"] {
        let h = history(vec![
            add(0, 0, "invoke", 1),
            add(1, 0, "ok", 1),
            add(2, 1, "invoke", 2),
            add(5, 1, "info", 2),
            read(10, 0, "invoke", "null"),
            read(11, 0, "ok", present),
        ]);
        assert!(matches!(check(HistoryModel::Set, &h), Checked::Valid(_)), "{present}");
    }
    // Never completed counts as info.
    let h = history(vec![
        add(2, 1, "invoke", 2),
        read(10, 0, "invoke", "null"),
        read(11, 0, "ok", "[2]"),
    ]);
    assert!(matches!(check(HistoryModel::Set, &h), Checked::Valid(_)));
}

#[test]
fn a_failed_add_present_or_an_element_never_added_is_unexpected() {
    let h = history(vec![
        add(2, 1, "invoke", 2),
        add(3, 1, "fail", 2),
        read(10, 0, "invoke", "null"),
        read(11, 0, "ok", "[2,9]"),
    ]);
    let Err(SetError::Witness(w)) = check_set(&h) else { panic!("must fail") };
    assert!(w.lost.is_empty());
    assert_eq!(
        w.unexpected,
        vec![("2".into(), "every add of it failed"), ("9".into(), "never added")]
    );
}

#[test]
fn an_add_acknowledged_after_the_read_began_may_be_missing() {
    let h = history(vec![
        add(0, 1, "invoke", 2),
        read(10, 0, "invoke", "null"),
        add(12, 1, "ok", 2),
        read(13, 0, "ok", "[]"),
    ]);
    assert!(matches!(check(HistoryModel::Set, &h), Checked::Valid(_)));
}

#[test]
fn the_last_successful_read_is_the_final_one_and_none_is_unknown() {
    let h = history(vec![
        add(0, 0, "invoke", 1),
        add(1, 0, "ok", 1),
        read(10, 0, "invoke", "null"),
        read(11, 0, "ok", "[1]"),
        read(20, 0, "invoke", "null"),
        read(21, 0, "ok", "[]"),
    ]);
    assert!(matches!(check(HistoryModel::Set, &h), Checked::Invalid(_)));
    let h = history(vec![
        add(0, 0, "invoke", 1),
        add(1, 0, "ok", 1),
        read(10, 0, "invoke", "null"),
        read(11, 0, "fail", "null"),
    ]);
    assert!(matches!(check(HistoryModel::Set, &h), Checked::Unknown(_)));
}

#[test]
fn synthetic_set_histories_pass_and_lost_elements_are_all_found() {
    for seed in 0..20 {
        let mut h = set_history(seed, 500, 4);
        assert!(check_set(&h).is_ok(), "seed {seed}");
        let lost = lose_elements(&mut h, 7);
        let Err(SetError::Witness(w)) = check_set(&h) else { panic!("seed {seed} must fail") };
        let mut found: Vec<u64> = w.lost.iter().map(|(e, _, _)| e.parse().unwrap()).collect();
        found.sort_unstable();
        assert_eq!(found, lost, "seed {seed}");
    }
}

fn reg(ms: u64, p: u64, kind: &str, f: &str, v: &str) -> (u64, u32, String) {
    (ms, 0, format!(r#"{{"type":"{kind}","process":{p},"f":"{f}","value":{v}}}"#))
}

#[test]
fn register_histories_pass_and_fail() {
    let ok = history(vec![
        reg(0, 0, "invoke", "write", "1"),
        reg(1, 0, "ok", "write", "1"),
        reg(2, 1, "invoke", "read", "null"),
        reg(3, 1, "ok", "read", "1"),
        reg(4, 0, "invoke", "cas", "[1,2]"),
        reg(5, 0, "ok", "cas", "[1,2]"),
        reg(6, 1, "invoke", "read", "null"),
        reg(7, 1, "ok", "read", "2"),
    ]);
    assert!(matches!(check(HistoryModel::Register, &ok), Checked::Valid(_)));
    let stale = history(vec![
        reg(0, 0, "invoke", "write", "1"),
        reg(1, 0, "ok", "write", "1"),
        reg(2, 1, "invoke", "read", "null"),
        reg(3, 1, "ok", "read", "0"),
    ]);
    assert!(matches!(check(HistoryModel::Register, &stale), Checked::Invalid(_)));
}

#[test]
fn info_writes_are_pending_and_failed_ones_never_happened() {
    let info = history(vec![
        reg(0, 0, "invoke", "write", "5"),
        reg(1, 0, "info", "write", "5"),
        reg(2, 1, "invoke", "read", "null"),
        reg(3, 1, "ok", "read", "5"),
    ]);
    assert!(matches!(check(HistoryModel::Register, &info), Checked::Valid(_)));
    let failed = history(vec![
        reg(0, 0, "invoke", "write", "5"),
        reg(1, 0, "fail", "write", "5"),
        reg(2, 1, "invoke", "read", "null"),
        reg(3, 1, "ok", "read", "5"),
    ]);
    assert!(matches!(check(HistoryModel::Register, &failed), Checked::Invalid(_)));
}

#[test]
fn a_register_witness_is_the_failing_prefix_without_idle_reads() {
    // Forty good reads, then a stale read after a completed write, then more traffic.
    let mut ev = Vec::new();
    let mut t = 0;
    for _ in 0..40 {
        ev.push(reg(t, 1, "invoke", "read", "null"));
        ev.push(reg(t + 1, 1, "ok", "read", "0"));
        t += 2;
    }
    ev.push(reg(t, 0, "invoke", "write", "7"));
    ev.push(reg(t + 1, 0, "ok", "write", "7"));
    ev.push(reg(t + 2, 1, "invoke", "read", "null"));
    ev.push(reg(t + 3, 1, "ok", "read", "0"));
    for k in 0..40 {
        ev.push(reg(t + 4 + 2 * k, 0, "invoke", "write", "8"));
        ev.push(reg(t + 5 + 2 * k, 0, "ok", "write", "8"));
    }
    let Checked::Invalid(text) = check(HistoryModel::Register, &history(ev)) else {
        panic!("must fail")
    };
    assert!(text.contains("these 2 operations (of 82)"), "{text}");
    assert!(text.contains("write 7") && text.contains("read null -> ok 0"), "{text}");
}

#[test]
fn kv_keys_are_independent() {
    let kv = |ms, p, kind: &str, f: &str, k: &str, v: &str| {
        (ms, 0, format!(r#"{{"type":"{kind}","process":{p},"f":"{f}","key":{k},"value":{v}}}"#))
    };
    let ok = history(vec![
        kv(0, 0, "invoke", "write", "\"a\"", "1"),
        kv(1, 0, "ok", "write", "\"a\"", "1"),
        kv(2, 1, "invoke", "read", "\"b\"", "null"),
        kv(3, 1, "ok", "read", "\"b\"", "0"),
    ]);
    assert!(matches!(check(HistoryModel::Kv, &ok), Checked::Valid(_)));
    assert!(matches!(check(HistoryModel::Register, &ok), Checked::Invalid(_)), "one register");
    let no_key = history(vec![reg(0, 0, "invoke", "read", "null"), reg(1, 0, "ok", "read", "0")]);
    assert!(matches!(check(HistoryModel::Kv, &no_key), Checked::Unknown(_)));
}
