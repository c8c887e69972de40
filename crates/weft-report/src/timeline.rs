//! The text timeline: one event per line, fixed columns, stable so people and scripts can grep
//! it: `index  time  node  event  summary`.
//!
//! ```text
//!      7     0.004000s   n1 deliver    n0→n1  Replicate { value: 1 }
//! ```

use weft_core::Event;

pub fn header() -> String {
    format!("{:>6} {:>13} {:>4} {:<10} {:<7} summary", "#", "time", "node", "event", "link")
}

pub fn line(e: &Event) -> String {
    let node = e.node.map(|n| format!("n{n}")).unwrap_or_else(|| "-".into());
    let link = match (e.kind, e.node, e.peer) {
        (weft_core::EventKind::Deliver, Some(n), Some(p)) => format!("n{p}→n{n}"),
        (_, Some(n), Some(p)) => format!("n{n}→n{p}"),
        _ => String::new(),
    };
    let mut s = format!(
        "{:>6} {:>13} {:>4} {:<10} {:<7} {}",
        e.index,
        e.time.to_string(),
        node,
        e.kind.name(),
        link,
        e.summary
    );
    if let Some(state) = &e.state {
        s.push_str("  | ");
        s.push_str(state);
    }
    s
}

/// The whole timeline, with a header line.
pub fn render(events: &[Event]) -> String {
    let mut out = header();
    out.push('\n');
    for e in events {
        out.push_str(&line(e));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_core::{EventKind, SimTime};

    #[test]
    fn fixed_columns() {
        let e = Event {
            index: 7,
            time: SimTime(4_000_000),
            node: Some(1),
            kind: EventKind::Deliver,
            peer: Some(0),
            msg: Some(3),
            summary: "Replicate { value: 1 }".into(),
            state: Some("backup store=[1]".into()),
            hash: 0,
        };
        assert_eq!(
            line(&e),
            "     7     0.004000s   n1 deliver    n0→n1   Replicate { value: 1 }  | backup store=[1]"
        );
    }
}
