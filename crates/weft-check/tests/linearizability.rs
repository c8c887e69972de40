//! Known linearizable and non-linearizable histories, and a cross-check of the search against
//! brute-force enumeration of every real-time-respecting order on small random histories.

use weft_check::linearizability::{
    check, KeyValue, KvOp, Limits, Model, Operation, Register, RegisterOp, Verdict,
};
use weft_check::synth::{corrupt_a_read, kv_history, Shape};
use weft_core::Rng;

fn op<I>(client: u64, input: I, call: u64, ret: u64, output: u64) -> Operation<I, u64> {
    Operation { client, input, call, ret: Some(ret), output: Some(output) }
}

fn pending<I>(client: u64, input: I, call: u64) -> Operation<I, u64> {
    Operation { client, input, call, ret: None, output: None }
}

fn linearizable<M: Model>(m: &M, h: &[Operation<M::Input, M::Output>]) -> bool {
    match check(m, h, Limits::default()) {
        Verdict::Linearizable => true,
        Verdict::NotLinearizable { .. } => false,
        Verdict::Unknown { key } => panic!("search budget ran out on key {key}"),
    }
}

use RegisterOp::{Read, Write};

#[test]
fn sequential_read_after_write_is_linearizable() {
    let h = [op(0, Write(1), 0, 1, 0), op(1, Read, 2, 3, 1)];
    assert!(linearizable(&Register, &h));
}

#[test]
fn stale_read_after_a_completed_write_is_not() {
    let h = [op(0, Write(1), 0, 1, 0), op(1, Read, 2, 3, 0)];
    assert!(!linearizable(&Register, &h));
}

#[test]
fn reads_during_a_write_may_see_old_then_new() {
    let h = [op(0, Write(1), 0, 10, 0), op(1, Read, 1, 2, 0), op(2, Read, 3, 4, 1)];
    assert!(linearizable(&Register, &h));
}

#[test]
fn new_then_old_during_a_write_is_not() {
    let h = [op(0, Write(1), 0, 10, 0), op(1, Read, 1, 2, 1), op(2, Read, 3, 4, 0)];
    assert!(!linearizable(&Register, &h));
}

#[test]
fn operations_touching_at_one_instant_are_concurrent() {
    // The read returns at 5, exactly when the write is called: either order is allowed.
    let h = [op(0, Read, 0, 5, 7), op(1, Write(7), 5, 6, 0)];
    assert!(linearizable(&Register, &h));
}

#[test]
fn a_pending_write_may_or_may_not_take_effect() {
    let seen = [pending(0, Write(1), 0), op(1, Read, 5, 6, 1)];
    assert!(linearizable(&Register, &seen));
    let unseen = [pending(0, Write(1), 0), op(1, Read, 5, 6, 0)];
    assert!(linearizable(&Register, &unseen));
    let flicker = [pending(0, Write(1), 0), op(1, Read, 5, 6, 1), op(1, Read, 7, 8, 0)];
    assert!(!linearizable(&Register, &flicker));
}

#[test]
fn keys_are_independent_but_each_must_be_linearizable() {
    let ok = [
        op(0, KvOp::Put(1, 5), 0, 1, 0),
        op(1, KvOp::Get(2), 2, 3, 0),
        op(1, KvOp::Get(1), 4, 5, 5),
    ];
    assert!(linearizable(&KeyValue, &ok));
    let bad = [op(0, KvOp::Put(1, 5), 0, 1, 0), op(1, KvOp::Get(1), 4, 5, 0)];
    match check(&KeyValue, &bad, Limits::default()) {
        Verdict::NotLinearizable { key, ops } => assert_eq!((key, ops), (1, vec![0, 1])),
        other => panic!("expected a violation on key 1, got {other:?}"),
    }
}

#[test]
fn two_compare_and_sets_from_the_same_value_cannot_both_win() {
    let h = [op(0, KvOp::Cas(3, 0, 5), 0, 10, 1), op(1, KvOp::Cas(3, 0, 6), 1, 9, 1)];
    assert!(!linearizable(&KeyValue, &h));
    let one_wins = [op(0, KvOp::Cas(3, 0, 5), 0, 10, 1), op(1, KvOp::Cas(3, 0, 6), 1, 9, 0)];
    assert!(linearizable(&KeyValue, &one_wins));
}

#[test]
fn the_step_budget_is_an_answer_of_its_own() {
    let h =
        kv_history(3, Shape { ops: 200, clients: 8, keys: 1, duration_max: 40, put_percent: 30 });
    assert!(matches!(check(&KeyValue, &h, Limits { steps: 5 }), Verdict::Unknown { key: 0 }));
}

#[test]
fn synthetic_histories_are_linearizable_until_corrupted() {
    for seed in 0..20 {
        let shape = Shape { ops: 2_000, clients: 6, keys: 8, duration_max: 30, put_percent: 30 };
        let mut h = kv_history(seed, shape);
        assert!(linearizable(&KeyValue, &h), "seed {seed}: generated history rejected");
        corrupt_a_read(&mut h).expect("has a get");
        assert!(!linearizable(&KeyValue, &h), "seed {seed}: corrupted history accepted");
    }
}

/// Every order of `h`'s operations that respects real time (and drops any subset of pending
/// operations), checked against the model directly.
fn brute_force<M: Model>(m: &M, h: &[Operation<M::Input, M::Output>]) -> bool {
    fn go<M: Model>(
        m: &M,
        h: &[Operation<M::Input, M::Output>],
        done: &mut Vec<bool>,
        state: M::State,
    ) -> bool {
        let left: Vec<usize> = (0..h.len()).filter(|&i| !done[i]).collect();
        if left.iter().all(|&i| h[i].ret.is_none()) {
            return true;
        }
        for &i in &left {
            // i may go next only if no other remaining operation returned before i was called.
            let blocked = left.iter().any(|&j| j != i && h[j].ret.is_some_and(|r| r < h[i].call));
            if blocked {
                continue;
            }
            let output = if h[i].ret.is_some() { h[i].output.as_ref() } else { None };
            if let Some(next) = m.step(&state, &h[i].input, output) {
                done[i] = true;
                let ok = go(m, h, done, next);
                done[i] = false;
                if ok {
                    return true;
                }
            }
        }
        false
    }
    go(m, h, &mut vec![false; h.len()], m.init())
}

#[test]
fn agrees_with_brute_force_on_small_random_register_histories() {
    let mut rng = Rng::new(42);
    let (mut yes, mut no) = (0, 0);
    for _ in 0..3_000 {
        let n = 1 + rng.below(6) as usize;
        let h: Vec<Operation<RegisterOp, u64>> = (0..n)
            .map(|c| {
                let call = rng.below(10);
                let input = if rng.below(2) == 0 { Read } else { Write(1 + rng.below(2)) };
                if rng.below(8) == 0 {
                    pending(c as u64, input, call)
                } else {
                    let out = if input == Read { rng.below(3) } else { 0 };
                    op(c as u64, input, call, call + rng.below(6), out)
                }
            })
            .collect();
        let expected = brute_force(&Register, &h);
        assert_eq!(linearizable(&Register, &h), expected, "history {h:?}");
        if expected {
            yes += 1
        } else {
            no += 1
        }
    }
    // Both answers must be well represented, or the cross-check proves little.
    assert!(yes > 500 && no > 500, "{yes} linearizable, {no} not");
}
