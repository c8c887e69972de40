//! The HTML space-time diagram: one self-contained file (inline SVG, inline CSS and a few
//! lines of script, no external assets) that a person opens in a browser.
//!
//! One vertical lane per node (`<g class="lane">`), time flowing down with one row per event
//! (so the order is exact even when many events share an instant); an arrow
//! (`<line class="arrow">`) from each send to each delivery of that message (linked by
//! `Event.msg`), a cross for a dropped message, marks for crashes, restarts, pauses and
//! partitions, and the violating event on a red band. Hovering an event shows its line of the
//! text timeline; clicking it shows the message and the node's state (`Event.state`) in a panel.

use std::collections::BTreeMap;
use std::fmt::Write;
use weft_core::{Event, EventKind};

/// Rows drawn at most; longer traces are cut with a note (a shrunk repro is short).
pub const MAX_ROWS: usize = 20_000;

const LANE_W: usize = 150;
const ROW_H: usize = 16;
const TOP: usize = 40;
const LEFT: usize = 110;

/// What the page says about the run above the diagram.
pub struct Header<'a> {
    pub title: &'a str,
    /// Lines shown under the title (target, outcome, sizes, reproduce command…).
    pub lines: &'a [String],
}

pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Number of lanes: every node or peer mentioned, ids `0..n`.
pub fn node_count(events: &[Event]) -> usize {
    events
        .iter()
        .flat_map(|e| [e.node, e.peer])
        .flatten()
        .map(|n| n as usize + 1)
        .max()
        .unwrap_or(0)
}

fn lane_x(node: u32) -> usize {
    LEFT + node as usize * LANE_W + LANE_W / 2
}

fn row_y(row: usize) -> usize {
    TOP + row * ROW_H + ROW_H / 2
}

/// The whole page.
pub fn render(header: &Header<'_>, events: &[Event]) -> String {
    let shown = &events[..events.len().min(MAX_ROWS)];
    let nodes = node_count(shown);
    // Room on the right for the last lane's labels and for the violation's text.
    let width = (LEFT + nodes.max(1) * LANE_W + 180).max(900);
    let height = TOP + shown.len() * ROW_H + 20;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\">"
    );
    svg.push_str(
        "<defs><marker id=\"head\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" \
         markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" \
         fill=\"#36c\"/></marker></defs>\n",
    );
    // Lanes.
    for n in 0..nodes as u32 {
        let x = lane_x(n);
        let _ = writeln!(
            svg,
            "<g class=\"lane\" data-node=\"{n}\"><text x=\"{x}\" y=\"{}\" class=\"lane-name\">n{n}\
             </text><line x1=\"{x}\" y1=\"{TOP}\" x2=\"{x}\" y2=\"{}\" class=\"lane-line\"/></g>",
            TOP - 14,
            height - 10
        );
    }
    // Where each message was sent from: (row, node).
    let mut sent: BTreeMap<u64, (usize, u32)> = BTreeMap::new();
    let mut down: Vec<Option<usize>> = vec![None; nodes];
    for (row, e) in shown.iter().enumerate() {
        let y = row_y(row);
        let _ = writeln!(
            svg,
            "<text x=\"8\" y=\"{}\" class=\"time\">{}</text>",
            y + 4,
            escape(e.time.to_string().trim())
        );
        match (e.kind, e.node, e.msg) {
            (EventKind::Send | EventKind::Duplicate, Some(n), Some(id)) => {
                sent.insert(id, (row, n));
            }
            (EventKind::Deliver, Some(to), Some(id)) => {
                if let Some(&(from_row, from)) = sent.get(&id) {
                    let _ = writeln!(
                        svg,
                        "<line class=\"arrow\" data-msg=\"{id}\" x1=\"{}\" y1=\"{}\" x2=\"{}\" \
                         y2=\"{y}\" marker-end=\"url(#head)\"/>",
                        lane_x(from),
                        row_y(from_row),
                        lane_x(to)
                    );
                }
            }
            _ => {}
        }
        // Crashed stretches of a lane are drawn dashed red from crash to restart.
        match (e.kind, e.node) {
            (EventKind::Crash, Some(n)) => down[n as usize] = Some(row),
            (EventKind::Restart, Some(n)) => {
                if let Some(from) = down[n as usize].take() {
                    let x = lane_x(n);
                    let _ = writeln!(
                        svg,
                        "<line class=\"down\" x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{y}\"/>",
                        row_y(from)
                    );
                }
            }
            _ => {}
        }
    }
    for (n, from) in down.iter().enumerate() {
        if let Some(from) = from {
            let x = lane_x(n as u32);
            let _ = writeln!(
                svg,
                "<line class=\"down\" x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\"/>",
                row_y(*from),
                height - 10
            );
        }
    }
    // Event marks on top of arrows.
    for (row, e) in shown.iter().enumerate() {
        let y = row_y(row);
        let tip = escape(&crate::timeline::line(e));
        let kind = e.kind.name();
        let open = format!(
            "<g class=\"ev k-{kind}\" data-i=\"{row}\" onclick=\"pick({row})\"><title>{tip}</title>"
        );
        match e.node {
            None => {
                let cls = if e.kind == EventKind::Violation { "violation" } else { "global" };
                let _ = writeln!(
                    svg,
                    "{open}<rect class=\"{cls}\" x=\"{LEFT}\" y=\"{}\" width=\"{}\" height=\"{ROW_H}\"/>\
                     <text x=\"{}\" y=\"{}\" class=\"band-text\">{}</text></g>",
                    y - ROW_H / 2,
                    width - LEFT - 10,
                    LEFT + 4,
                    y + 4,
                    escape(&short(&e.summary, 120))
                );
            }
            Some(n) => {
                let x = lane_x(n);
                let mark = match e.kind {
                    EventKind::Drop => {
                        let toward = e.peer.map(|p| if p > n { 24 } else { -24 }).unwrap_or(0);
                        format!(
                            "<line class=\"drop-line\" x1=\"{x}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\"/>\
                             <path class=\"drop\" d=\"M{} {} l8 8 m0 -8 l-8 8\"/>",
                            x as i64 + toward,
                            x as i64 + toward - 4,
                            y - 4
                        )
                    }
                    EventKind::Crash => format!(
                        "<rect class=\"crash\" x=\"{}\" y=\"{}\" width=\"12\" height=\"12\"/>",
                        x - 6,
                        y - 6
                    ),
                    EventKind::Restart => {
                        format!("<path class=\"restart\" d=\"M{} {} l7 12 l-14 0 z\"/>", x, y - 6)
                    }
                    EventKind::Partition | EventKind::Heal => format!(
                        "<rect class=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"4\"/>",
                        if e.kind == EventKind::Partition { "partition" } else { "heal" },
                        x - LANE_W / 2 + 6,
                        y - 2,
                        LANE_W - 12
                    ),
                    EventKind::Pause | EventKind::Resume => format!(
                        "<rect class=\"{kind}\" x=\"{}\" y=\"{}\" width=\"10\" height=\"10\"/>",
                        x - 5,
                        y - 5
                    ),
                    _ => format!("<circle class=\"dot\" cx=\"{x}\" cy=\"{y}\" r=\"4\"/>"),
                };
                let gap =
                    if e.kind == EventKind::Drop && e.peer.is_some_and(|p| p > n) { 34 } else { 9 };
                let label = format!(
                    "<text x=\"{}\" y=\"{}\" class=\"label\">{}</text>",
                    x + gap,
                    y + 4,
                    escape(&short(&format!("{kind} {}", e.summary), 24))
                );
                let _ = writeln!(svg, "{open}{mark}{label}</g>");
            }
        }
    }
    svg.push_str("</svg>\n");

    let mut data = String::from("[");
    for (i, e) in shown.iter().enumerate() {
        if i > 0 {
            data.push(',');
        }
        let _ = write!(
            data,
            "[{},{},{},{},{},{}]",
            js(&e.time.to_string()),
            js(&e.node.map(|n| format!("n{n}")).unwrap_or_else(|| "-".into())),
            js(e.kind.name()),
            js(&e.peer.map(|p| format!("n{p}")).unwrap_or_default()),
            js(&e.summary),
            js(e.state.as_deref().unwrap_or(""))
        );
    }
    data.push(']');

    let mut page = String::new();
    page.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n");
    let _ = writeln!(page, "<title>{}</title>", escape(header.title));
    page.push_str(STYLE);
    page.push_str("</head><body>\n");
    let _ = writeln!(page, "<h1>{}</h1>", escape(header.title));
    for l in header.lines {
        let _ = writeln!(page, "<p class=\"meta\">{}</p>", escape(l));
    }
    page.push_str(
        "<p class=\"legend\"><span class=\"l-arrow\">→ delivered message</span> \
         <span class=\"l-drop\">× dropped</span> <span class=\"l-crash\">■ crash</span> \
         <span class=\"l-restart\">▲ restart</span> <span class=\"l-part\">▬ partition</span> \
         <span class=\"l-heal\">▬ heal</span> <span class=\"l-viol\">▬ violation</span> \
         — hover an event for its timeline line, click it for message and node state</p>\n",
    );
    if events.len() > shown.len() {
        let _ = writeln!(
            page,
            "<p class=\"meta\">showing the first {} of {} events</p>",
            shown.len(),
            events.len()
        );
    }
    page.push_str("<div id=\"wrap\"><div id=\"diagram\">\n");
    page.push_str(&svg);
    page.push_str(
        "</div><div id=\"panel\"><b>event</b><pre id=\"detail\">click an event</pre></div></div>\n",
    );
    let _ = writeln!(page, "<script>const EVENTS={data};");
    page.push_str(SCRIPT);
    page.push_str("</script>\n</body></html>\n");
    page
}

fn short(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(max - 1).collect();
        s.push('…');
        s
    }
}

/// A JavaScript string literal (JSON rules, with `<` escaped so `</script>` cannot appear).
fn js(text: &str) -> String {
    serde_json::to_string(text).expect("a string serialises").replace('<', "\\u003c")
}

const STYLE: &str = r#"<style>
body { font: 13px system-ui, sans-serif; margin: 16px; color: #222; }
h1 { font-size: 18px; margin: 0 0 6px; }
.meta { margin: 2px 0; font-family: ui-monospace, monospace; }
.legend span { margin-right: 10px; }
.l-arrow { color: #36c; } .l-drop, .l-crash, .l-viol { color: #c22; } .l-restart, .l-heal { color: #282; } .l-part { color: #d80; }
#wrap { display: flex; gap: 12px; align-items: flex-start; }
#diagram { flex: 1; overflow: auto; max-height: 80vh; border: 1px solid #ddd; }
#panel { position: sticky; top: 8px; width: 420px; border: 1px solid #ddd; padding: 8px; background: #fafafa; }
#detail { white-space: pre-wrap; word-break: break-word; margin: 4px 0 0; }
.lane-name { font-weight: bold; text-anchor: middle; }
.lane-line { stroke: #999; stroke-width: 1.5; }
.down { stroke: #c22; stroke-width: 3; stroke-dasharray: 4 3; }
.time { fill: #777; font: 10px ui-monospace, monospace; }
.label { fill: #444; font-size: 10px; }
.arrow { stroke: #36c; stroke-width: 1.2; }
.dot { fill: #555; }
.drop { stroke: #c22; stroke-width: 2; fill: none; }
.drop-line { stroke: #c22; stroke-dasharray: 2 2; }
.crash { fill: #c22; } .restart { fill: #282; }
.partition { fill: #d80; } .heal { fill: #282; }
.pause { fill: #d80; } .resume { fill: #282; }
.global { fill: #e8f4e8; } .violation { fill: #f8c8c8; stroke: #c22; }
.band-text { font-size: 11px; fill: #333; }
.k-violation .band-text { fill: #900; font-weight: bold; }
.ev { cursor: pointer; }
.ev:hover circle, .ev.sel circle { r: 6; fill: #000; }
.ev.sel rect { stroke: #000; stroke-width: 2; }
</style>
"#;

const SCRIPT: &str = r#"function pick(i) {
  const e = EVENTS[i];
  document.querySelectorAll('.ev.sel').forEach(g => g.classList.remove('sel'));
  const g = document.querySelector('.ev[data-i="' + i + '"]');
  if (g) g.classList.add('sel');
  document.getElementById('detail').textContent =
    '#' + i + '  ' + e[0] + '  ' + e[1] + '  ' + e[2] + (e[3] ? ' (peer ' + e[3] + ')' : '') +
    '\n\n' + e[4] + (e[5] ? '\n\nnode state after:\n' + e[5] : '');
}
const v = document.querySelector('.k-violation');
if (v) { pick(Number(v.dataset.i)); v.scrollIntoView({block: 'center', inline: 'start'}); }
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use weft_core::SimTime;

    fn ev(
        index: u64,
        node: Option<u32>,
        kind: EventKind,
        peer: Option<u32>,
        msg: Option<u64>,
    ) -> Event {
        Event {
            index,
            time: SimTime(index * 1000),
            node,
            kind,
            peer,
            msg,
            summary: format!("<{}>", kind.name()),
            state: Some("s".into()),
            hash: 0,
        }
    }

    #[test]
    fn lanes_arrows_and_escaping() {
        let events = vec![
            ev(0, Some(0), EventKind::Send, Some(2), Some(1)),
            ev(1, Some(0), EventKind::Drop, Some(1), Some(2)),
            ev(2, Some(2), EventKind::Deliver, Some(0), Some(1)),
            ev(3, Some(1), EventKind::Crash, None, None),
            ev(4, None, EventKind::Violation, None, None),
        ];
        let page = render(&Header { title: "t</script>", lines: &[] }, &events);
        assert_eq!(page.matches("<g class=\"lane\"").count(), 3);
        assert_eq!(page.matches("<line class=\"arrow\"").count(), 1);
        assert_eq!(page.matches("class=\"drop\"").count(), 1);
        assert!(page.contains("class=\"violation\""));
        assert!(!page.contains("<send>"), "summaries are escaped");
        assert_eq!(page.matches("</script>").count(), 1);
    }
}
