//! Client histories of a run: the lines a process prints with
//! [`weft_check::history::PREFIX`] are history events, stamped with the virtual time and node
//! that printed them. At the end of a run that otherwise passed, the history is paired and
//! checked against the configured model; a violation becomes the run's outcome
//! (`SafetyViolation` of property `history`), with the checker's witness as its detail.

use super::World;
use weft_check::history::{self, Checked, Stamp, PREFIX};
use weft_core::{EventKind, Outcome};

/// What the trace shows for an output line: a history event in short form
/// (`history p3 ok add 17`), any other line as printed.
pub(super) fn summary(text: &str) -> String {
    let Some(json) = text.strip_prefix(PREFIX) else { return text.to_string() };
    match history::parse_event(json, Stamp::default(), 0) {
        Ok(e) => {
            let key = e.key.map(|k| format!(" {k}")).unwrap_or_default();
            let kind = format!("{:?}", e.kind).to_lowercase();
            format!("history p{} {kind} {}{key} {}", e.process, e.f, e.value)
        }
        Err(err) => format!("history (malformed: {err})"),
    }
}

impl World<'_> {
    /// `outcome`, or the history's violation when the run passed and a model is configured.
    pub(super) fn judge_history(&mut self, outcome: Outcome) -> Outcome {
        let Some(model) = self.cfg.history else { return outcome };
        if outcome != Outcome::Pass {
            return outcome;
        }
        let stamped = self
            .lines
            .iter()
            .map(|l| (l.text.as_str(), Stamp { time_ns: l.time.as_nanos(), node: l.node }));
        let verdict = match history::parse_lines(stamped).and_then(|e| history::pair(&e)) {
            Ok(ops) => history::check(model, &ops),
            Err(e) => Checked::Invalid(format!("{}: unusable history: {e}", model.name())),
        };
        let client = self.lines.iter().rev().find(|l| l.text.starts_with(PREFIX));
        let node = client.map_or(0, |l| l.node);
        match verdict {
            Checked::Unknown(why) => {
                let text = format!("history not checked: {why}");
                let t = text.clone();
                self.event(node, EventKind::Note, None, None, 0, || t);
                self.notes.push(text);
                Outcome::Pass
            }
            Checked::Valid(text) => {
                let t = text.clone();
                self.event(node, EventKind::Note, None, None, 0, || t);
                self.notes.push(text);
                Outcome::Pass
            }
            Checked::Invalid(detail) => {
                let d = detail.clone();
                self.event(node, EventKind::Violation, None, None, 0, || format!("history: {d}"));
                Outcome::SafetyViolation { property: "history".into(), detail }
            }
        }
    }
}
