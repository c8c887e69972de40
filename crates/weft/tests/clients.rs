//! In-process clients: operations go over the simulated network to servers, time out, retry on
//! another server and end as invoke / ok / fail / info in the history that `history::register`
//! checks. A replica serving reads from its own copy is caught through its clients; forwarding
//! reads ("elsewhere") passes; a server that never answers leaves every operation `info` after
//! its retries.

use weft::clients::{Answer, Call, ClientPolicy, Cluster, Op, ServerCtx, Service};
use weft::history::Kind;
use weft::{Decisions, NodeId, Outcome, Scenario, SimTime, Target, World};

/// Server 0 is the primary; server 1 a replica that answers reads from its copy (`stale`) or
/// sends clients elsewhere. `mute`: no server ever answers.
struct Register {
    id: NodeId,
    value: u64,
    stale: bool,
    mute: bool,
}

impl Service for Register {
    type Msg = u64;
    fn on_message(&mut self, _from: NodeId, value: u64, _ctx: &mut ServerCtx<'_, '_, Self>) {
        self.value = value;
    }
    fn on_call(&mut self, call: Call, ctx: &mut ServerCtx<'_, '_, Self>) {
        if self.mute {
            return;
        }
        let answer = match (self.id, call.op.f, call.op.value) {
            (0, "write", Some(v)) => {
                self.value = v;
                ctx.send(1, v);
                Answer::Ok(None)
            }
            (0, _, _) => Answer::Ok(Some(self.value)),
            (_, "read", _) if self.stale => Answer::Ok(Some(self.value)),
            _ => Answer::Elsewhere,
        };
        ctx.answer(&call, answer);
    }
    fn describe(&self) -> String {
        format!("value {}", self.value)
    }
}

/// Two servers and two client nodes (2, 3); eight operations alternating write and read.
fn world() -> World<Cluster<Register>> {
    World::new("clients", 4, |cfg, id| {
        let (stale, mute) = (cfg.is("stale"), cfg.is("mute"));
        Cluster::make(id, 2, ClientPolicy::default(), |id| Register { id, value: 0, stale, mute })
    })
    .variant("stale", "the replica answers reads from its copy")
    .variant("forward", "the replica sends reads elsewhere")
    .variant("mute", "no server answers")
    .workload(|_| {
        Box::new(|d: &mut Decisions, _: &Scenario| {
            let op = |i: u64| match i % 2 {
                0 => Op { f: "write", key: None, value: Some(i + 1) },
                _ => Op { f: "read", key: None, value: None },
            };
            (0..8)
                .map(|i| {
                    (SimTime(i * 50_000_000 + d.choose(40) * 1_000_000), 2 + (i % 2) as u32, op(i))
                })
                .collect()
        })
    })
    .scenario(|_, s| s.budget.crashes = 0)
    .always("Linearizable", weft::history::register)
}

#[test]
fn a_stale_replica_is_caught_through_its_clients_and_forwarding_passes() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("clients");
    let _ = std::fs::remove_dir_all(&dir);
    let found = weft::check(world()).variant("stale").runs(2000).regressions(&dir).run();
    let Err(weft::Failure::Violation(v)) = found else { panic!("{found:?}") };
    assert!(v.outcome.to_string().contains("not linearizable"), "{}", v.outcome);
    let timeline = weft::draw(&world(), &v.repro, &dir.join("stale.html")).unwrap();
    assert!(timeline.contains("Call {") && timeline.contains("Answer {"), "{timeline}");
    weft::check(world()).variant("forward").runs(2000).regressions(&dir).assert();
}

#[test]
fn unanswered_operations_time_out_retry_and_end_unknown() {
    let spec =
        weft::RunSpec { target: "clients".into(), variant: "mute".into(), ..Default::default() };
    let runner = world().prepare(&spec).unwrap();
    let mut rec = weft::core::Recorder::default();
    let report = runner.run(&Scenario::calm(), &mut Decisions::random(1), &mut rec);
    assert_eq!(report.outcome, Outcome::Pass);
    let sent = |e: &&weft::core::Event| e.kind == weft::core::EventKind::Send;
    let calls = rec.events.iter().filter(sent).filter(|e| e.summary.starts_with("Call {")).count();
    let infos = rec.events.iter().filter(|e| e.summary.contains("kind: Info")).count();
    // Every operation: the first attempt and two retries, then `info`.
    assert_eq!((calls, infos), (8 * 3, 8), "{calls} calls, {infos} infos");
    assert!(rec.events.iter().all(|e| !e.summary.contains(&format!("{:?}", Kind::Ok))));
}
