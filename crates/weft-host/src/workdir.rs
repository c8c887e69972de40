//! Fresh working directories: each run gets `WORK_DIR/slotK/nID` (and `var-tmp/nID`, the
//! node's `/var/tmp`: [`crate::privvartmp`]), emptied when the run starts, where `slotK` is the lowest slot no other run holds right now — in this process
//! (a set) or in another weft process using the same folder (an exclusive `flock` on
//! `slotK.lock`, held for the run). A sequential run (`weft run`, `weft replay`, `--jobs 1`)
//! with nothing else running in that folder gets `slot0`, so the paths a program sees repeat
//! from run to run; the last run's files stay for inspection.
//!
//! Where the kernel gives a process its own user namespace, it also gets its own mount
//! namespace in which the run's folder is bound at the fixed [`VIEW_DIR`]: the process's
//! working directory is `/tmp/weft-run/nID` whatever the real folder (`--out`, the slot, the
//! checkout) is, so a program that writes its absolute path into a file, or reads it back,
//! does the same in every run of the seed, wherever it runs ([`View`]).

use crate::config::HostConfig;
use std::collections::BTreeSet;
use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// Where every process sees its run's folder (an empty directory on the real file system,
/// made by the first run; each process binds its own run's folder over it, privately).
pub const VIEW_DIR: &str = "/tmp/weft-run";

/// The bind a process makes before its program starts, as NUL-terminated paths built before
/// the fork: the real run folder, [`VIEW_DIR`], and the node's working directory under it.
#[derive(Clone, Debug)]
pub(crate) struct View {
    pub(crate) real: CString,
    pub(crate) at: CString,
    pub(crate) cwd: CString,
    /// The node's `/var/tmp` under the view ([`crate::privvartmp`]).
    pub(crate) var_tmp: CString,
}

impl View {
    pub(crate) fn new(real: &Path, at: &Path, node: u32) -> View {
        let c = |p: &Path| CString::new(p.as_os_str().as_bytes()).unwrap_or_default();
        let var_tmp = crate::privvartmp::folder(at, node);
        View {
            real: c(real),
            at: c(at),
            cwd: c(&at.join(format!("n{node}"))),
            var_tmp: c(&var_tmp),
        }
    }
}

/// Whether processes can see their run's folder at [`VIEW_DIR`] here: the directory exists
/// (made if missing) and a process started as simulated ones are (user, network and mount
/// namespace) can bind a folder there. Probed once.
fn view_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        if std::fs::create_dir_all(VIEW_DIR).is_err() {
            return false;
        }
        let probe = View::new(Path::new(VIEW_DIR), Path::new(VIEW_DIR), 0);
        crate::spawn::probe_view(&probe)
    })
}

/// Slots held by runs in flight, per work folder.
static HELD: Mutex<BTreeSet<(PathBuf, usize)>> = Mutex::new(BTreeSet::new());

/// A slot held for one run; released when dropped.
pub(crate) struct RunDir {
    key: Option<(PathBuf, usize)>,
    /// The slot's lock file, locked for as long as this is alive.
    _lock: Option<std::fs::File>,
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
    let Some(base) = &cfg.work_dir else { return Ok((run, RunDir { key: None, _lock: None })) };
    std::fs::create_dir_all(base)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", base.display())))?;
    let (slot, lock) = {
        let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
        let mut k = 0;
        loop {
            if !held.contains(&(base.clone(), k)) {
                if let Some(lock) = lock_slot(base, k)? {
                    held.insert((base.clone(), k));
                    break (k, lock);
                }
            }
            k += 1;
        }
    };
    let claim = RunDir { key: Some((base.clone(), slot)), _lock: Some(lock) };
    let dir = base.join(format!("slot{slot}"));
    let context = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", dir.display()));
    match std::fs::remove_dir_all(&dir) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(context(e)),
        _ => {}
    }
    for node in 0..cfg.nodes {
        std::fs::create_dir_all(dir.join(format!("n{node}"))).map_err(context)?;
        let var_tmp = crate::privvartmp::folder(&dir, node);
        std::fs::create_dir_all(&var_tmp).map_err(context)?;
        // As the machine's /var/tmp: anyone may make files there, only owners remove them.
        let sticky = std::os::unix::fs::PermissionsExt::from_mode(0o1777);
        std::fs::set_permissions(&var_tmp, sticky).map_err(context)?;
    }
    run.run_view = cfg.netns == crate::config::Netns::Auto && view_available();
    run.run_dir = Some(dir);
    Ok((run, claim))
}

/// Locks `base/slotK.lock` without waiting; `None` if another process holds it.
fn lock_slot(base: &std::path::Path, k: usize) -> io::Result<Option<std::fs::File>> {
    use std::os::fd::AsRawFd;
    let path = base.join(format!("slot{k}.lock"));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    // SAFETY: flock on a descriptor this function owns; the lock lives as long as the file.
    let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    Ok((r == 0).then_some(file))
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

    #[test]
    fn a_slot_locked_by_another_process_is_skipped() {
        let base = std::env::temp_dir().join(format!("weft-workdir-lock-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        let mut cfg = HostConfig::new("/bin/true", Vec::new(), 1);
        cfg.work_dir = Some(base.clone());
        // Another open file description holding slot0's lock is what another weft process is.
        let other = lock_slot(&base, 0).unwrap().expect("slot0 is free");
        let (a, held) = claim(&cfg).unwrap();
        assert_eq!(a.run_dir, Some(base.join("slot1")), "slot0 belongs to the other process");
        drop((held, other));
        let (b, _held) = claim(&cfg).unwrap();
        assert_eq!(b.run_dir, Some(base.join("slot0")));
        let _ = std::fs::remove_dir_all(&base);
    }
}
