//! weft-report owns what weft hands back to people and tools: the versioned repro file
//! ([`Repro`]), the fixed-column text timeline ([`timeline`]) and the self-contained HTML
//! space-time diagram. It formats; it decides nothing about runs.

pub mod repro;
pub mod timeline;

pub use repro::{Provenance, Repro, ReproError, Sizes, FORMAT, FORMAT_VERSION};
