//! Fresh working directories: each run gets `WORK_DIR/slotK/nID`, emptied when the run
//! starts, where `slotK` is the lowest slot no other run in this process holds right now. A
//! sequential run (`weft run`, `weft replay`, `--jobs 1`) always gets `slot0`, so the paths a
//! program sees repeat from run to run; the last run's files stay for inspection.

use crate::config::HostConfig;
use std::collections::BTreeSet;
use std::io;
use std::path::PathBuf;
use std::sync::Mutex;

/// Slots held by runs in flight, per work folder.
static HELD: Mutex<BTreeSet<(PathBuf, usize)>> = Mutex::new(BTreeSet::new());

/// A slot held for one run; released when dropped.
pub(crate) struct RunDir {
    key: Option<(PathBuf, usize)>,
}

impl Drop for RunDir {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            HELD.lock().unwrap_or_else(|e| e.into_inner()).remove(&key);
        }
    }
}

/// Claims a slot under `cfg.work_dir` and makes an empty directory per node in it; answers
/// the configuration for this run (`run_dir` set) and the claim.
pub(crate) fn claim(cfg: &HostConfig) -> io::Result<(HostConfig, RunDir)> {
    let mut run = cfg.clone();
    let Some(base) = &cfg.work_dir else { return Ok((run, RunDir { key: None })) };
    let slot = {
        let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
        let slot = (0..).find(|k| !held.contains(&(base.clone(), *k))).expect("a free slot");
        held.insert((base.clone(), slot));
        slot
    };
    let claim = RunDir { key: Some((base.clone(), slot)) };
    let dir = base.join(format!("slot{slot}"));
    let context = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", dir.display()));
    match std::fs::remove_dir_all(&dir) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(context(e)),
        _ => {}
    }
    for node in 0..cfg.nodes {
        std::fs::create_dir_all(dir.join(format!("n{node}"))).map_err(context)?;
    }
    run.run_dir = Some(dir);
    Ok((run, claim))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concurrent_runs_get_their_own_fresh_slots() {
        let base = std::env::temp_dir().join(format!("weft-workdir-test-{}", std::process::id()));
        let mut cfg = HostConfig::new("/bin/true", Vec::new(), 2);
        cfg.work_dir = Some(base.clone());
        let (a, held_a) = claim(&cfg).unwrap();
        let (b, held_b) = claim(&cfg).unwrap();
        assert_eq!(a.run_dir, Some(base.join("slot0")));
        assert_eq!(b.run_dir, Some(base.join("slot1")));
        std::fs::write(base.join("slot0/n1/left-over"), "x").unwrap();
        drop(held_a);
        let (c, _held_c) = claim(&cfg).unwrap();
        assert_eq!(c.run_dir, Some(base.join("slot0")), "a released slot is reused");
        assert!(!base.join("slot0/n1/left-over").exists(), "and emptied");
        assert!(base.join("slot0/n1").is_dir() && base.join("slot1/n0").is_dir());
        drop(held_b);
        let _ = std::fs::remove_dir_all(&base);
    }
}
