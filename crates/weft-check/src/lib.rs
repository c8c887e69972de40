//! weft-check owns weft's checkers over what clients saw: client histories in Jepsen's model
//! ([`history`]: events, pairing, the set checker, register and key-value checks with minimal
//! witnesses), a linearizability checker against any sequential specification
//! ([`linearizability`], with register and key-value models) and synthetic histories for testing
//! and benchmarking them ([`synth`]). It does no IO, reads no clock and creates no thread.

pub mod history;
pub mod linearizability;
pub mod synth;

pub use linearizability::{
    check, KeyValue, KvOp, Limits, Model, Operation, Register, RegisterOp, Verdict,
};
