//! weft-report owns what weft hands back to people and tools: the versioned repro file
//! ([`Repro`]), the fixed-column text timeline ([`timeline`]), the self-contained HTML
//! space-time diagram ([`html`]), which decision decides what ([`decisions`]) and a ShiViz
//! log with computed vector clocks ([`shiviz`]). It formats; it decides nothing about runs.

pub mod decisions;
pub mod html;
pub mod repro;
pub mod shiviz;
pub mod timeline;

pub use repro::{
    temp_path, Provenance, Repro, ReproError, Sizes, FORMAT, FORMAT_VERSION, MAX_DECISIONS,
    MAX_FILE_BYTES,
};
