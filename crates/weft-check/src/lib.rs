//! weft-check owns weft's checkers over what clients saw: a linearizability checker for client
//! histories against any sequential specification ([`linearizability`], with register and
//! key-value models), and the paired buggy-versus-fixed evaluation of a target's variants
//! ([`eval`]). It does no IO and reads no clock; `eval` runs campaigns on scoped threads and
//! merges their results by campaign index, so its report does not depend on thread timing.

pub mod eval;
pub mod linearizability;
pub mod synth;

pub use eval::{evaluate, wilson95, CampaignEnd, Difference, EvalOptions, Evaluation, VariantEval};
pub use linearizability::{
    check, KeyValue, KvOp, Limits, Model, Operation, Register, RegisterOp, Verdict,
};
