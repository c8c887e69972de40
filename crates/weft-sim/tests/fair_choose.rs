//! `Ctx::fair_choose` is a decision during the fault phase and, once faults stop, a value the
//! decision source does not control (so an adversarial search cannot livelock a randomised
//! protocol and call it a liveness bug), yet still a deterministic function of the run.

use weft_core::{Decisions, EventKind, Recorder, Runner, Scenario, SimDuration};
use weft_sim::{Ctx, Node, NodeId, Phase, SimRunner, SimSpec, TimerId};

struct Drawer;
impl Node for Drawer {
    type Msg = ();
    type Req = ();
    type Obs = (bool, u64);
    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        ctx.set_timer(SimDuration::from_millis(10), 0);
    }
    fn on_message(&mut self, _: NodeId, _: (), _: &mut Ctx<'_, Self>) {}
    fn on_timer(&mut self, _: TimerId, _: u64, ctx: &mut Ctx<'_, Self>) {
        let fault = ctx.phase() == Phase::Fault;
        let v = ctx.fair_choose(10, 7);
        ctx.observe((fault, v));
        ctx.set_timer(SimDuration::from_millis(10), 0);
    }
    fn describe(&self) -> String {
        String::new()
    }
}

fn runner() -> SimRunner<Drawer> {
    SimRunner {
        sim: SimSpec {
            nodes: 2,
            make: Box::new(|_| Drawer),
            workload: Box::new(|_, _| Vec::new()),
            properties: Vec::new(),
            assumptions: Vec::new(),
            crash_gate: None,
            focus: None,
        },
        scenario: Scenario {
            fault_phase: SimDuration::from_millis(200),
            heal_phase: SimDuration::from_millis(200),
            ..Scenario::calm()
        },
    }
}

/// The draws of one run, split by phase, and the number of decisions it consumed.
fn draws(seed: u64) -> (Vec<u64>, Vec<u64>, usize) {
    let r = runner();
    let mut rec = Recorder::default();
    let mut d = Decisions::random(seed);
    r.run(&r.default_scenario(), &mut d, &mut rec);
    let (mut fault, mut heal) = (Vec::new(), Vec::new());
    for e in rec.events.iter().filter(|e| e.kind == EventKind::Observe) {
        // The observation's Debug text: `(true, 3)`.
        let (phase, v) = e.summary.trim_matches(|c| c == '(' || c == ')').split_once(", ").unwrap();
        let v: u64 = v.parse().unwrap();
        assert!(v < 10, "drawn {v}, out of range");
        if phase == "true" {
            fault.push(v)
        } else {
            heal.push(v)
        }
    }
    (fault, heal, d.len())
}

#[test]
fn fair_choose_is_a_decision_only_while_faults_may_happen() {
    let (fault_a, heal_a, decisions_a) = draws(1);
    let (fault_b, heal_b, _) = draws(2);
    assert!(!fault_a.is_empty() && !heal_a.is_empty());
    // Fault phase: decisions, so two seeds draw differently.
    assert_ne!(fault_a, fault_b);
    // Heal phase: not decisions (the log holds only the fault-phase draws, plus the kernel's
    // own), the same whatever the seed, and not a constant.
    assert!(decisions_a >= fault_a.len());
    assert!(decisions_a < fault_a.len() + heal_a.len());
    assert_eq!(heal_a, heal_b);
    assert!(heal_a.iter().any(|&v| v != heal_a[0]), "heal-phase draws are all {}", heal_a[0]);
}
