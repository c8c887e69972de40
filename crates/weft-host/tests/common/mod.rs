//! Helpers shared by the integration tests: compile the C programs under `tests/c` with the
//! system `cc` (once per test binary), and build host configurations for them.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use weft_host::HostConfig;

/// Compiles `tests/c/{name}.c` with extra flags into the cargo test temp dir; cached.
pub fn compile(name: &str, flags: &[&str]) -> PathBuf {
    static CACHE: Mutex<BTreeMap<String, PathBuf>> = Mutex::new(BTreeMap::new());
    let key = format!("{name} {}", flags.join(" "));
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = cache.get(&key) {
        return p.clone();
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c").join(format!("{name}.c"));
    let suffix: String =
        flags.iter().map(|f| f.trim_start_matches('-').replace(['=', '/'], "_")).collect();
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}{suffix}"));
    let status = Command::new("cc")
        .args(["-O1", "-Wall", "-o"])
        .arg(&out)
        .arg(&src)
        .args(flags)
        .status()
        .expect("a C compiler (`cc`) is needed for these tests");
    assert!(status.success(), "cc failed for {}", src.display());
    cache.insert(key, out.clone());
    out
}

pub fn config(name: &str, args: &[&str], nodes: u32) -> HostConfig {
    let mut cfg =
        HostConfig::new(compile(name, &[]), args.iter().map(|s| s.to_string()).collect(), nodes);
    cfg.time_limit = weft_core::SimDuration::from_secs(30);
    cfg
}
