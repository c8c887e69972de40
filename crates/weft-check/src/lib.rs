//! weft-check owns weft's checkers over what clients saw: a linearizability checker for client
//! histories against any sequential specification ([`linearizability`], with register and
//! key-value models) and synthetic histories for testing and benchmarking it ([`synth`]). It does
//! no IO, reads no clock and creates no thread.

pub mod linearizability;
pub mod synth;

pub use linearizability::{
    check, KeyValue, KvOp, Limits, Model, Operation, Register, RegisterOp, Verdict,
};
