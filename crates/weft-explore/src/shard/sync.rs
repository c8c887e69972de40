//! The corpus exchange of sharded coverage-guided search: what a shard publishes when it ends a
//! generation ([`GenerationPart`]) and the transport that carries parts between the shards
//! ([`GenerationSync`]; the CLI's is a shared folder, the tests' is in memory).
//!
//! A part holds only what the other shards need to rebuild the corpus exactly as one machine
//! would: the runs that may have reached a feature new to the campaign (their features outside
//! the campaign's set at the generation's start, decisions and decision bounds), the lowest
//! failing index and whether the shard stops. Everything else stays in the shard's ledger.

use super::Shard;
use serde::{Deserialize, Serialize};

/// A run of a generation that may add to the corpus.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Candidate {
    /// Its campaign run index.
    pub index: u64,
    /// Its features that the campaign had not reached when the generation began, sorted.
    pub features: Vec<u64>,
    pub decisions: Vec<u64>,
    pub bounds: Vec<u64>,
}

/// One shard's share of one generation, as the other shards see it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GenerationPart {
    pub generation: u64,
    pub shard: Shard,
    /// In increasing index order.
    pub candidates: Vec<Candidate>,
    /// The lowest campaign index of a failing run the shard made in this generation.
    pub failed: Option<u64>,
    /// The shard stops after this generation (its time budget ended, or Ctrl-C).
    pub stop: bool,
}

/// Why the exchange failed: a peer that never came (timeout), gave up, or an unreadable part.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SyncError(pub String);

/// Carries generation parts between the shards of one campaign.
pub trait GenerationSync: Sync {
    /// Makes this shard's part of a generation visible to the others.
    fn publish(&self, part: &GenerationPart) -> Result<(), SyncError>;
    /// Every shard's part of `generation`, this shard's included. Waits for them; the
    /// implementation bounds the wait and names the shard that did not come.
    fn gather(&self, generation: u64) -> Result<Vec<GenerationPart>, SyncError>;
}

/// Checks that `parts` are exactly shards 0..N-1 of `generation`, and puts them in shard order.
pub(crate) fn check_parts(
    mut parts: Vec<GenerationPart>,
    generation: u64,
    count: u64,
) -> Result<Vec<GenerationPart>, SyncError> {
    parts.sort_by_key(|p| p.shard.index);
    let expected = (0..count).map(|index| Shard { index, count });
    if parts.len() as u64 != count || !parts.iter().map(|p| p.shard).eq(expected) {
        let got: Vec<String> = parts.iter().map(|p| p.shard.to_string()).collect();
        return Err(SyncError(format!(
            "generation {generation}: expected one part from each of {count} shards, got [{}]",
            got.join(", ")
        )));
    }
    if let Some(p) = parts.iter().find(|p| p.generation != generation) {
        return Err(SyncError(format!(
            "shard {} sent generation {} where {generation} was expected",
            p.shard, p.generation
        )));
    }
    Ok(parts)
}

/// An in-memory exchange for shards running as threads of one process (tests).
#[cfg(test)]
pub(crate) mod memory {
    use super::*;
    use std::collections::BTreeMap;
    use std::sync::{Condvar, Mutex};

    #[derive(Default)]
    pub(crate) struct Board {
        parts: Mutex<BTreeMap<(u64, u64), GenerationPart>>,
        changed: Condvar,
        pub(crate) count: u64,
    }

    impl Board {
        pub(crate) fn new(count: u64) -> Board {
            Board { count, ..Board::default() }
        }
    }

    impl GenerationSync for Board {
        fn publish(&self, part: &GenerationPart) -> Result<(), SyncError> {
            let mut parts = self.parts.lock().expect("board poisoned");
            parts.insert((part.generation, part.shard.index), part.clone());
            self.changed.notify_all();
            Ok(())
        }

        fn gather(&self, generation: u64) -> Result<Vec<GenerationPart>, SyncError> {
            let mut parts = self.parts.lock().expect("board poisoned");
            loop {
                let have: Vec<GenerationPart> = parts
                    .range((generation, 0)..(generation + 1, 0))
                    .map(|(_, p)| p.clone())
                    .collect();
                if have.len() as u64 == self.count {
                    return check_parts(have, generation, self.count);
                }
                parts = self.changed.wait(parts).expect("board poisoned");
            }
        }
    }
}
