//! The corpus exchange of coverage shards through a shared folder (`weft_explore::GenerationSync`):
//! `OUT/sync-HASH/` (HASH names the campaign and weft version, as the `found-` files do), one
//! file per shard and generation, written whole (temporary name, then rename).
//!
//! - `gen-G-shard-K.json`: shard K's part of generation G (JSON of `GenerationPart`). A shard
//!   that has read every part of G deletes its own part of G-1: every shard has read it, since
//!   none publishes G before it has read all of G-1.
//! - `abort-shard-K.txt`: shard K gave up (a timeout, an unreadable part, Ctrl-C), with why.
//!   The others stop within 0.1 s instead of waiting out their timeout. A shard deletes its own
//!   abort file when it starts.
//!
//! A shard waiting for the others polls (from 50 µs, doubling up to 1 ms between looks). If no
//! missing part arrives for the timeout (`--sync-timeout`), it stops with an error naming the
//! shards it waited for: they died, hang, or never started. It never waits forever.

use super::progress;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use weft_explore::{GenerationPart, GenerationSync, Shard, SyncError};

/// Longest pause between two looks at the folder.
const NAP_MAX: Duration = Duration::from_millis(1);
/// How often a waiting shard looks for the others' abort files.
const ABORT_POLL: Duration = Duration::from_millis(100);

/// A shard's side of the exchange folder.
pub(crate) struct FolderSync {
    dir: PathBuf,
    shard: Shard,
    timeout: Duration,
    /// Time spent in `gather` (nanoseconds) and how many generations were gathered: the
    /// barrier's cost, reported at the end.
    waited_nanos: AtomicU64,
    gathered: AtomicU64,
}

impl FolderSync {
    /// Creates the folder `out_dir/sync-HASH` and clears this shard's old abort file.
    pub(crate) fn new(
        out_dir: &Path,
        hash: u64,
        shard: Shard,
        timeout: Duration,
    ) -> Result<FolderSync> {
        let dir = out_dir.join(format!("sync-{hash:016x}"));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let sync = FolderSync {
            dir,
            shard,
            timeout,
            waited_nanos: AtomicU64::new(0),
            gathered: AtomicU64::new(0),
        };
        match std::fs::remove_file(sync.abort_path(shard.index)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).context("cannot clear this shard's old abort file");
            }
            _ => {}
        }
        Ok(sync)
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The total wait at generation ends and how many there were.
    pub(crate) fn waited(&self) -> (Duration, u64) {
        let nanos = self.waited_nanos.load(Ordering::Relaxed);
        (Duration::from_nanos(nanos), self.gathered.load(Ordering::Relaxed))
    }

    fn part_path(&self, generation: u64, index: u64) -> PathBuf {
        self.dir.join(format!("gen-{generation}-shard-{index}.json"))
    }

    fn abort_path(&self, index: u64) -> PathBuf {
        self.dir.join(format!("abort-shard-{index}.txt"))
    }

    /// Tells the other shards that this one gave up, and why (best effort: they time out else).
    pub(crate) fn abort(&self, why: &str) {
        let path = self.abort_path(self.shard.index);
        let tmp = weft_report::temp_path(&path);
        if std::fs::write(&tmp, format!("{why}\n")).is_ok() {
            let _ = std::fs::rename(&tmp, &path);
        }
    }

    /// Shard `index`'s part of `generation`, if it is there yet.
    fn read(&self, generation: u64, index: u64) -> Result<Option<GenerationPart>, SyncError> {
        let path = self.part_path(generation, index);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(SyncError(format!("cannot read {}: {e}", path.display()))),
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| SyncError(format!("{}: not a generation part ({e})", path.display())))
    }

    /// The first other shard that left an abort file, with its reason. Any shard's: one that
    /// published this generation but gave up waiting will not publish the next.
    fn aborted(&self) -> Option<(u64, String)> {
        (0..self.shard.count).filter(|&k| k != self.shard.index).find_map(|k| {
            let why = std::fs::read_to_string(self.abort_path(k)).ok()?;
            Some((k, why.trim().to_string()))
        })
    }

    fn shards(&self, list: &[u64]) -> String {
        let shown: Vec<String> =
            list.iter().take(8).map(|k| format!("{k}/{}", self.shard.count)).collect();
        let more = if list.len() > 8 { ", …" } else { "" };
        format!("{}{more}", shown.join(", "))
    }

    /// Why the wait for `generation` ended without every part.
    fn give_up(&self, generation: u64, missing: &[u64]) -> Option<SyncError> {
        let shards = self.shards(missing);
        if progress::was_interrupted() {
            return Some(SyncError(format!(
                "interrupted while waiting for shard {shards} to finish generation {generation}"
            )));
        }
        let (k, why) = self.aborted()?;
        Some(SyncError(format!("shard {k}/{} gave up: {why}", self.shard.count)))
    }

    fn timed_out(&self, generation: u64, missing: &[u64]) -> SyncError {
        SyncError(format!(
            "waited {:.0}s for shard {} to finish generation {generation} (runs from {}) in {}: \
             it died, hangs or never started (coverage shards must all run at once; \
             --sync-timeout sets the wait)",
            self.timeout.as_secs_f64(),
            self.shards(missing),
            generation.saturating_mul(weft_explore::GENERATION),
            self.dir.display()
        ))
    }
}

impl GenerationSync for FolderSync {
    fn publish(&self, part: &GenerationPart) -> Result<(), SyncError> {
        let path = self.part_path(part.generation, part.shard.index);
        let tmp = weft_report::temp_path(&path);
        let text = serde_json::to_vec(part).map_err(|e| SyncError(e.to_string()))?;
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, &path))
            .map_err(|e| SyncError(format!("cannot write {}: {e}", path.display())))
    }

    #[allow(clippy::disallowed_methods)] // the CLI owns the wall clock: the wait's bound
    fn gather(&self, generation: u64) -> Result<Vec<GenerationPart>, SyncError> {
        let count = self.shard.count;
        let mut parts: Vec<Option<GenerationPart>> = (0..count).map(|_| None).collect();
        let start = Instant::now();
        let (mut last_news, mut last_abort_look) = (start, start);
        let mut nap = Duration::from_micros(50);
        loop {
            for k in 0..count {
                if parts[k as usize].is_none() {
                    if let Some(p) = self.read(generation, k)? {
                        parts[k as usize] = Some(p);
                        last_news = Instant::now();
                    }
                }
            }
            let missing: Vec<u64> = (0..count).filter(|&k| parts[k as usize].is_none()).collect();
            if missing.is_empty() {
                if generation > 0 {
                    let _ = std::fs::remove_file(self.part_path(generation - 1, self.shard.index));
                }
                let nanos = start.elapsed().as_nanos().min(u64::MAX as u128) as u64;
                self.waited_nanos.fetch_add(nanos, Ordering::Relaxed);
                self.gathered.fetch_add(1, Ordering::Relaxed);
                return Ok(parts.into_iter().flatten().collect());
            }
            if last_abort_look.elapsed() >= ABORT_POLL || progress::was_interrupted() {
                last_abort_look = Instant::now();
                if let Some(e) = self.give_up(generation, &missing) {
                    return Err(e);
                }
            }
            if last_news.elapsed() >= self.timeout {
                return Err(self.timed_out(generation, &missing));
            }
            std::thread::sleep(nap);
            nap = (nap * 2).min(NAP_MAX);
        }
    }
}
