//! Which decision decides what: a repro's decision list read against the sites a replay drew
//! them at (`weft show --decisions`). Zero is every decision's simplest value (no fault, the
//! shortest latency, a quiet timer), so the decisions that are not zero are the story's
//! choices; the summary says where the rest of the list goes.

use std::collections::BTreeMap;
use std::fmt::Write;
use weft_core::{Site, SiteKind};

/// The decisions by kind of site, then every decision that is not zero with its index, site
/// and value. `sites[i]` is where the replay drew `values[i]`; values past the sites were
/// not drawn by the replay (the run ended first).
pub fn render(values: &[u64], sites: &[Site]) -> String {
    let mut out = String::new();
    let drawn = values.len().min(sites.len());
    let nonzero = values[..drawn].iter().filter(|&&v| v != 0).count();
    let _ = writeln!(
        out,
        "{} decisions, {nonzero} not zero (zero is each decision's simplest value)",
        values.len()
    );
    let mut by_kind: BTreeMap<Option<SiteKind>, (usize, usize)> = BTreeMap::new();
    for (v, s) in values.iter().zip(sites) {
        let e = by_kind.entry(s.kind()).or_default();
        e.0 += 1;
        e.1 += (*v != 0) as usize;
    }
    let _ = writeln!(out, "  {:<14} {:>9} {:>9}", "site kind", "decisions", "not zero");
    for (kind, (all, nz)) in &by_kind {
        let name = kind.map_or("unknown", |k| k.name());
        let _ = writeln!(out, "  {name:<14} {all:>9} {nz:>9}");
    }
    if values.len() > drawn {
        let _ = writeln!(out, "  {:<14} {:>9}", "not drawn", values.len() - drawn);
    }
    if nonzero > 0 {
        let _ = writeln!(out, "not zero (index: site = value):");
    }
    for (i, (v, s)) in values.iter().zip(sites).enumerate().filter(|(_, (v, _))| **v != 0) {
        let _ = writeln!(out, "  #{i:<6} {s} = {v}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_kind_and_lists_the_decisions_that_are_not_zero() {
        let sites = [Site::latency(0, 1), Site::fault_kind(), Site::latency(0, 1)];
        let text = render(&[0, 2, 7, 5], &sites);
        assert!(text.starts_with("4 decisions, 2 not zero"), "{text}");
        assert!(text.contains("  latency                2         1"), "{text}");
        assert!(text.contains("  fault                  1         1"), "{text}");
        assert!(text.contains("  not drawn              1"), "{text}");
        assert!(text.contains("  #1      fault = 2\n  #2      latency n0>n1 = 7\n"), "{text}");
        assert!(!text.contains("= 5"), "an undrawn value has no site: {text}");
    }
}
