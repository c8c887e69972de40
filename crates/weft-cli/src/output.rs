//! Where findings go, so that none is lost or overwritten: the output folder is created and
//! proved writable before a campaign's first run; a campaign's file names carry a short hash
//! of everything that decides its runs; a repro file is written whole under a temporary name
//! unique to this process and then linked into place, which never replaces an existing file
//! (a different file already there makes it `NAME-2.json`, `NAME-3.json`, …).

use anyhow::{bail, Context, Result};
use std::hash::Hasher;
use std::path::{Path, PathBuf};
use weft_core::{RunSpec, Scenario, StableHasher};
use weft_report::Repro;

/// How many `-N` suffixes are tried before giving up.
const MAX_SUFFIX: u32 = 10_000;

/// Creates `dir` (and its parents) and checks that a file can be created in it.
pub fn prepare_dir(dir: &Path) -> Result<()> {
    let shown = dir.display();
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot write to output folder {shown}: cannot create it"))?;
    let probe = weft_report::temp_path(&dir.join("probe"));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .with_context(|| format!("cannot write to output folder {shown}"))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// `DIR/TARGET-VARIANT-seedS-runI-HASH.json`, where HASH (8 hex digits) is a stable hash of the
/// target, variant, options, property, scenario, strategy and campaign seed: two campaigns
/// that differ in any of them never pick the same name.
pub fn campaign_file(
    dir: &Path,
    spec: &RunSpec,
    scenario: &Scenario,
    strategy: &str,
    seed: u64,
    run_index: u64,
) -> PathBuf {
    let key = serde_json::json!({
        "spec": spec, "scenario": scenario, "strategy": strategy, "seed": seed,
    });
    let mut h = StableHasher::new();
    h.write(key.to_string().as_bytes());
    let hash = h.finish() >> 32;
    dir.join(format!("{}-{}-seed{seed}-run{run_index}-{hash:08x}.json", spec.target, spec.variant))
}

/// `x.json` with suffix `n`: `x-n.json`.
fn suffixed(path: &Path, n: u32) -> PathBuf {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let ext = path.extension().map(|e| format!(".{}", e.to_string_lossy())).unwrap_or_default();
    path.with_file_name(format!("{stem}-{n}{ext}"))
}

/// Writes `repro` at `path`, or at the first free suffixed name if a different file is there;
/// an identical file already at a name is kept and its name returned. Returns where it is.
pub fn write_new(repro: &Repro, path: &Path) -> Result<PathBuf> {
    let text = repro.to_json();
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot write {}", path.display()))?;
    }
    let tmp = weft_report::temp_path(path);
    std::fs::write(&tmp, &text).with_context(|| format!("cannot write {}", tmp.display()))?;
    let placed = place(&tmp, &text, path);
    let _ = std::fs::remove_file(&tmp);
    placed
}

/// Links the written `tmp` to the first name that is free or already holds `text`.
fn place(tmp: &Path, text: &str, path: &Path) -> Result<PathBuf> {
    for n in 1..=MAX_SUFFIX {
        let candidate = if n == 1 { path.to_path_buf() } else { suffixed(path, n) };
        match std::fs::hard_link(tmp, &candidate) {
            Ok(()) => return Ok(candidate),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                if same_content(&candidate, text) {
                    return Ok(candidate);
                }
            }
            // A file system without hard links: create the name exclusively and write into it
            // (never replaces, but an interrupted write can leave a partial file).
            Err(_) => match write_exclusive(&candidate, text) {
                Ok(()) => return Ok(candidate),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    if same_content(&candidate, text) {
                        return Ok(candidate);
                    }
                }
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot write {}", candidate.display()))
                }
            },
        }
    }
    bail!("cannot write {}: {MAX_SUFFIX} files of that name exist already", path.display())
}

fn write_exclusive(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(path)?;
    f.write_all(text.as_bytes())
}

fn same_content(path: &Path, text: &str) -> bool {
    let same_len = std::fs::metadata(path).is_ok_and(|m| m.len() == text.len() as u64);
    same_len && std::fs::read(path).is_ok_and(|bytes| bytes == text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(seed: u64) -> Repro {
        let text = include_str!("../tests/golden/primary-backup-buggy.json");
        let mut r = Repro::parse(text).unwrap();
        r.seed = seed;
        r
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("weft-output-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn an_existing_different_file_is_never_replaced() {
        let dir = scratch("noclobber");
        let path = dir.join("x.json");
        assert_eq!(write_new(&sample(1), &path).unwrap(), path);
        assert_eq!(write_new(&sample(1), &path).unwrap(), path, "identical: kept, not copied");
        assert_eq!(write_new(&sample(2), &path).unwrap(), dir.join("x-2.json"));
        assert_eq!(write_new(&sample(3), &path).unwrap(), dir.join("x-3.json"));
        assert_eq!(Repro::read(&path).unwrap().seed, 1);
        assert_eq!(Repro::read(&dir.join("x-2.json")).unwrap().seed, 2);
        let names: Vec<_> =
            std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 3, "no temporary file is left behind: {names:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn campaign_names_differ_in_every_input() {
        let spec = sample(1).spec;
        let sc = Scenario::default();
        let base = campaign_file(Path::new("d"), &spec, &sc, "random", 1, 0);
        let mut opt = spec.clone();
        opt.options.insert("writes".into(), "5".into());
        let mut prop = spec.clone();
        prop.property = Some("HasPrimary".into());
        let calm = Scenario::calm();
        for other in [
            campaign_file(Path::new("d"), &opt, &sc, "random", 1, 0),
            campaign_file(Path::new("d"), &prop, &sc, "random", 1, 0),
            campaign_file(Path::new("d"), &spec, &calm, "random", 1, 0),
            campaign_file(Path::new("d"), &spec, &sc, "swarm", 1, 0),
            campaign_file(Path::new("d"), &spec, &sc, "random", 2, 0),
        ] {
            assert_ne!(base, other);
        }
        let name = base.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("primary-backup-buggy-seed1-run0-"), "{name}");
    }

    #[test]
    fn an_unwritable_folder_is_refused_up_front() {
        let err = prepare_dir(Path::new("/proc/x")).unwrap_err();
        assert!(format!("{err:#}").contains("cannot write to output folder /proc/x"), "{err:#}");
    }
}
