//! The disk fault knobs fire, stay within their budget, and are off by default; a crash at a
//! storage call keeps the effects before the call and runs nothing after it.

use weft_core::{Contract, Decisions, EventKind, Ratio, Recorder, Scenario, SimDuration};
use weft_sim::{Ctx, Node, NodeId, SimSpec, TimerId};

/// On start: ten writes + fsyncs + reads of one file, observing each result.
struct Writer;

impl Node for Writer {
    type Msg = ();
    type Req = ();
    type Obs = String;
    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        for i in 0..10u8 {
            let w = ctx.disk().write("f", 0, &[b'a' + i; 8]);
            ctx.observe(format!("write {}", if w.is_ok() { "ok" } else { "err" }));
            let s = ctx.disk().fsync("f");
            ctx.observe(format!("fsync {}", if s.is_ok() { "ok" } else { "err" }));
            let r = ctx.disk().read("f");
            let shown = match r {
                Ok(b) if b == [b'a' + i; 8] => "ok".to_string(),
                Ok(b) => format!("bad {}", String::from_utf8_lossy(&b)),
                Err(_) => "err".into(),
            };
            ctx.observe(format!("read {shown}"));
        }
    }
    fn on_message(&mut self, _: NodeId, _: (), _: &mut Ctx<'_, Self>) {}
    fn on_timer(&mut self, _: TimerId, _: u64, _: &mut Ctx<'_, Self>) {}
    fn describe(&self) -> String {
        String::new()
    }
}

fn run(scenario: &Scenario, seed: u64) -> Vec<String> {
    let spec = SimSpec {
        nodes: 1,
        make: Box::new(|_| Writer),
        workload: Box::new(|_, _| Vec::new()),
        properties: Vec::new(),
        assumptions: Vec::new(),
        crash_gate: None,
        focus: None,
    };
    let mut rec = Recorder::default();
    spec.run(scenario, &mut Decisions::random(seed), &mut rec);
    rec.events
        .into_iter()
        .filter(|e| e.kind == EventKind::Observe)
        .map(|e| e.summary.trim_matches('"').to_string())
        .collect()
}

fn base() -> Scenario {
    Scenario {
        fault_phase: SimDuration::from_millis(10),
        heal_phase: SimDuration::from_millis(10),
        ..Scenario::calm()
    }
}

fn count(results: &[String], what: &str) -> usize {
    results.iter().filter(|r| r.starts_with(what)).count()
}

#[test]
fn knobs_are_off_by_default() {
    let r = run(&base(), 1);
    assert_eq!(r.len(), 30);
    assert!(r.iter().all(|x| x.ends_with("ok")), "{r:?}");
}

#[test]
fn each_knob_fires_within_its_budget() {
    type Knob = fn(&mut Scenario);
    // A misdirected write leaves the file wrong for every later read: its symptom outlives the
    // three faults.
    let knobs: [(&str, Knob, &str, usize); 6] = [
        ("eio", |s| s.disk.eio = Ratio::ONE, "write err", 3),
        ("enospc", |s| s.disk.enospc = Ratio::ONE, "write err", 3),
        ("latent", |s| s.disk.latent_error = Ratio::ONE, "read err", 3),
        ("corrupt", |s| s.disk.corrupt_read = Ratio::ONE, "read bad", 3),
        ("misdirect", |s| s.disk.misdirect = Ratio::ONE, "read bad", 10),
        ("fsync_drops_pages", |s| s.disk.fsync_drops_pages = Ratio::ONE, "fsync err", 3),
    ];
    for (name, set, symptom, most) in knobs {
        let mut s = base();
        set(&mut s);
        s.disk.budget = 3;
        let r = run(&s, 7);
        let n = count(&r, symptom);
        assert!((1..=most).contains(&n), "{name}: {n} × {symptom}");
        s.disk.budget = 0;
        assert_eq!(count(&run(&s, 7), symptom), 0, "{name} with budget 0");
    }
}

/// Writes a marker, sends nothing, then a second write: a crash at the second call keeps the
/// first (durable contract) and never runs the observation after it.
struct TwoCalls;

impl Node for TwoCalls {
    type Msg = ();
    type Req = ();
    type Obs = String;
    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        ctx.set_timer(SimDuration::from_millis(1), 0);
    }
    fn on_recover(&mut self, ctx: &mut Ctx<'_, Self>) {
        let seen = ctx.disk().read("f").map(|b| String::from_utf8_lossy(&b).into_owned());
        ctx.observe(format!("recovered {}", seen.unwrap_or_default()));
    }
    fn on_message(&mut self, _: NodeId, _: (), _: &mut Ctx<'_, Self>) {}
    fn on_timer(&mut self, _: TimerId, _: u64, ctx: &mut Ctx<'_, Self>) {
        let _ = ctx.disk().append("f", b"one;");
        ctx.observe("between".into());
        let _ = ctx.disk().append("f", b"two;");
        ctx.observe("after".into());
    }
    fn describe(&self) -> String {
        String::new()
    }
}

#[test]
fn a_crash_can_fall_between_two_storage_calls() {
    let mut s = base();
    s.disk.contract = Contract::Durable;
    s.disk.crash_at_call = Ratio::new(1, 2);
    s.budget.crashes = 1;
    s.restart = true;
    s.outage_max = SimDuration::from_millis(2);
    let spec = SimSpec {
        nodes: 1,
        make: Box::new(|_| TwoCalls),
        workload: Box::new(|_, _| Vec::new()),
        properties: Vec::new(),
        assumptions: Vec::new(),
        crash_gate: None,
        focus: None,
    };
    let mut between = false;
    for seed in 0..40 {
        let mut rec = Recorder::default();
        spec.run(&s, &mut Decisions::random(seed), &mut rec);
        let obs: Vec<&str> = rec
            .events
            .iter()
            .filter(|e| e.kind == EventKind::Observe)
            .map(|e| e.summary.as_str())
            .collect();
        if obs.first() == Some(&"\"between\"")
            && obs.get(1).is_some_and(|o| o.contains("recovered"))
        {
            assert_eq!(obs[1], "\"recovered one;\"", "{obs:?}");
            between = true;
        }
    }
    assert!(between, "some seed crashes at the second call");
}
