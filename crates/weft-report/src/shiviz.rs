//! A ShiViz-compatible log of a trace, with vector clocks computed from sends and deliveries.
//!
//! Each node is a host; every event on a node ticks its own entry; a delivery first merges the
//! clock the sender had when it sent that message (linked by `Event.msg`). Events with no node
//! (the heal phase starting, the violation) belong to a host named `world` that has seen every
//! event before it, so they sit after everything that happened. The first line is the parsing
//! regular expression to paste into ShiViz; the log follows after an empty line, one event per
//! line: `host {"host":n,…} event text`.

use std::collections::BTreeMap;
use std::fmt::Write;
use weft_core::{Event, EventKind};

/// The regular expression ShiViz needs to parse [`render`]'s lines.
pub const REGEX: &str = r"(?<host>\S+) (?<clock>\{.*?\}) (?<event>.*)";

type Clock = BTreeMap<String, u64>;

fn merge(into: &mut Clock, other: &Clock) {
    for (k, &v) in other {
        let e = into.entry(k.clone()).or_default();
        *e = (*e).max(v);
    }
}

/// The vector clock of each event, in trace order, with its host name.
pub fn clocks(events: &[Event]) -> Vec<(String, Clock)> {
    let mut hosts: BTreeMap<String, Clock> = BTreeMap::new();
    let mut sent: BTreeMap<u64, Clock> = BTreeMap::new();
    let mut out = Vec::with_capacity(events.len());
    for e in events {
        let host = e.node.map(|n| format!("n{n}")).unwrap_or_else(|| "world".into());
        let mut clock = hosts.get(&host).cloned().unwrap_or_default();
        match (e.kind, e.msg) {
            (EventKind::Deliver, Some(id)) => {
                if let Some(c) = sent.get(&id) {
                    merge(&mut clock, c);
                }
            }
            _ if e.node.is_none() => {
                for c in hosts.values() {
                    merge(&mut clock, c);
                }
            }
            _ => {}
        }
        *clock.entry(host.clone()).or_default() += 1;
        if let (EventKind::Send | EventKind::Duplicate, Some(id)) = (e.kind, e.msg) {
            sent.insert(id, clock.clone());
        }
        hosts.insert(host.clone(), clock.clone());
        out.push((host, clock));
    }
    out
}

pub fn render(events: &[Event]) -> String {
    let mut s = String::new();
    s.push_str(REGEX);
    s.push_str("\n\n");
    for (e, (host, clock)) in events.iter().zip(clocks(events)) {
        let json = serde_json::to_string(&clock).expect("a clock serialises");
        let link = match (e.kind, e.peer) {
            (EventKind::Deliver, Some(p)) => format!(" from n{p}"),
            (_, Some(p)) => format!(" to n{p}"),
            _ => String::new(),
        };
        let text = format!("{} {}{link}: {}", e.time.to_string().trim(), e.kind.name(), e.summary);
        let _ = writeln!(s, "{host} {json} {}", text.replace('\n', " "));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_core::SimTime;

    fn ev(node: Option<u32>, kind: EventKind, peer: Option<u32>, msg: Option<u64>) -> Event {
        Event {
            index: 0,
            time: SimTime(0),
            node,
            kind,
            peer,
            msg,
            summary: "x".into(),
            state: None,
            hash: 0,
        }
    }

    #[test]
    fn deliveries_merge_the_senders_clock() {
        let events = vec![
            ev(Some(0), EventKind::Start, None, None),
            ev(Some(0), EventKind::Send, Some(1), Some(7)),
            ev(Some(1), EventKind::Start, None, None),
            ev(Some(1), EventKind::Deliver, Some(0), Some(7)),
            ev(None, EventKind::Violation, None, None),
        ];
        let c = clocks(&events);
        let get = |i: usize, h: &str| c[i].1.get(h).copied().unwrap_or(0);
        assert_eq!((get(1, "n0"), get(1, "n1")), (2, 0));
        assert_eq!((get(3, "n0"), get(3, "n1")), (2, 2));
        assert_eq!((get(4, "n0"), get(4, "n1"), get(4, "world")), (2, 2, 1));
        let text = render(&events);
        assert!(text.starts_with(REGEX));
        assert!(text.contains("n1 {\"n0\":2,\"n1\":2} 0.000000s deliver from n0: x"), "{text}");
    }
}
