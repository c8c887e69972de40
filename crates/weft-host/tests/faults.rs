//! Faults from weft-sim's shared models applied to real processes: crashes (with restart),
//! pauses, partitions and message faults stay within the scenario's budget, show in the
//! trace, and replay exactly.

mod common;
use weft_core::{Decisions, EventKind, Ratio, Recorder, Scenario, SimDuration};

fn faulty() -> Scenario {
    let mut s = Scenario::calm();
    s.rates.crash = Ratio::new(1, 15);
    s.rates.pause = Ratio::new(1, 15);
    s.rates.partition = Ratio::new(1, 15);
    s.rates.drop = Ratio::new(1, 5);
    s.budget.crashes = 1;
    s.budget.pauses = 1;
    s.budget.partitions = 1;
    s.budget.drops = 3;
    s.outage_max = SimDuration::from_millis(50);
    s.fault_phase = SimDuration::from_millis(200);
    s
}

#[test]
fn faults_hit_real_processes_within_budget_and_replay() {
    let cfg = common::config("pingpong", &["{id}", "{addr}", "{others}", "5"], 3);
    let s = faulty();
    let mut kinds_seen = std::collections::BTreeSet::new();
    for seed in 0..6 {
        let mut rec = Recorder::default();
        let mut d = Decisions::random(seed);
        let out = weft_host::run_once(&cfg, &s, &mut d, &mut rec).unwrap();
        let count = |k: EventKind| rec.events.iter().filter(|e| e.kind == k).count();
        assert!(count(EventKind::Crash) <= 1, "crash budget");
        assert!(count(EventKind::Pause) <= 1, "pause budget");
        assert!(count(EventKind::Partition) <= 1, "partition budget");
        assert!(
            count(EventKind::Drop) >= rec.events.iter().filter(|e| e.summary == "dropped").count()
        );
        assert!(rec.events.iter().filter(|e| e.summary == "dropped").count() <= 3, "drop budget");
        assert_eq!(count(EventKind::Crash), count(EventKind::Restart), "crashed nodes restart");
        for k in [EventKind::Crash, EventKind::Pause, EventKind::Partition] {
            if count(k) > 0 {
                kinds_seen.insert(k.name());
            }
        }
        let mut again = Decisions::replay(d.log().to_vec());
        let replay =
            weft_host::run_once(&cfg, &s, &mut again, &mut weft_core::NullObserver).unwrap();
        assert_eq!(replay.report, out.report, "seed {seed} replays");
        assert_eq!(replay.render(), out.render());
    }
    assert_eq!(kinds_seen.len(), 3, "every fault kind shows in six seeds: {kinds_seen:?}");
}
