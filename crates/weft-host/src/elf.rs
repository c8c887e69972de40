//! Refuses binaries the shim cannot see into, before running them: statically linked ones
//! (no dynamic loader, so `LD_PRELOAD` is ignored) and Go binaries (which make system calls
//! directly, not through libc).

use std::path::Path;

/// Why a program cannot run under the shim, or `None` if it can (as far as its ELF says).
pub fn unsupported_reason(path: &Path) -> Option<String> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => return Some(format!("cannot read program {}: {e}", path.display())),
    };
    if bytes.starts_with(b"#!") {
        return None; // a script: its interpreter is what runs, and is checked by the kernel
    }
    if bytes.len() < 64 || &bytes[..4] != b"\x7fELF" {
        return Some(format!("{} is not an ELF executable", path.display()));
    }
    if bytes[4] != 2 || bytes[5] != 1 {
        return Some(format!("{} is not a 64-bit little-endian ELF", path.display()));
    }
    if find(&bytes, b"\xff Go buildinf:") {
        return Some(format!(
            "{} is a Go binary: Go makes system calls directly, bypassing libc and the shim",
            path.display()
        ));
    }
    let u16_at = |o: usize| u16::from_le_bytes([bytes[o], bytes[o + 1]]) as usize;
    let u64_at = |o: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&bytes[o..o + 8]);
        u64::from_le_bytes(w) as usize
    };
    let phoff = u64_at(32);
    let phentsize = u16_at(54);
    let phnum = u16_at(56);
    let mut interp = false;
    for i in 0..phnum {
        let o = phoff + i * phentsize;
        if o + 4 > bytes.len() {
            return Some(format!("{} has a truncated program header table", path.display()));
        }
        if u32::from_le_bytes([bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]]) == 3 {
            interp = true; // PT_INTERP
        }
    }
    if !interp {
        return Some(format!(
            "{} is statically linked: LD_PRELOAD cannot interpose its libc calls",
            path.display()
        ));
    }
    None
}

fn find(hay: &[u8], needle: &[u8]) -> bool {
    let n = needle.len();
    (0..hay.len().saturating_sub(n - 1)).any(|i| hay[i] == needle[0] && &hay[i..i + n] == needle)
}

/// [`unsupported_reason`], remembered per (path, size, modification time): explore runs the
/// same program thousands of times.
pub(crate) fn unsupported_reason_cached(path: &Path) -> Option<String> {
    use std::collections::BTreeMap;
    use std::sync::Mutex;
    type Key = (std::path::PathBuf, u64, Option<std::time::SystemTime>);
    static CACHE: Mutex<BTreeMap<Key, Option<String>>> = Mutex::new(BTreeMap::new());
    let Ok(meta) = std::fs::metadata(path) else { return unsupported_reason(path) };
    let key = (path.to_path_buf(), meta.len(), meta.modified().ok());
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    cache.entry(key).or_insert_with(|| unsupported_reason(path)).clone()
}

/// The input checks before a program is accepted for a run (a usage error, exit 2, when they
/// fail: unlike [`unsupported_reason`], which is about what the shim can see): it exists, is
/// an executable regular file, and is an ELF file or a `#!` script. A bare name (no `/`) is
/// looked up in `PATH` as a shell would (then, if not found there, in the current folder, as
/// before). Answers its absolute path, with the name as given (symlinks kept).
pub fn check_program(path: &Path) -> Result<std::path::PathBuf, String> {
    use std::io::Read;
    use std::os::unix::fs::PermissionsExt;
    let found = in_path(path);
    let path = found.as_deref().unwrap_or(path);
    let shown = path.display();
    if found.is_none() && is_bare(path) && !path.exists() {
        return Err(format!("program {shown}: not found in PATH or the current folder"));
    }
    let meta = std::fs::metadata(path).map_err(|e| format!("program {shown}: {e}"))?;
    if meta.is_dir() {
        return Err(format!("program {shown} is a directory, not an executable"));
    }
    if !meta.is_file() {
        return Err(format!("program {shown} is not a regular file"));
    }
    if meta.permissions().mode() & 0o111 == 0 {
        return Err(format!("program {shown} is not executable (no x permission)"));
    }
    let mut head = [0u8; 4];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .map_err(|e| format!("program {shown}: {e}"))?;
    if !(head[..n].starts_with(b"#!") || head[..n] == *b"\x7fELF") {
        return Err(format!("program {shown} is not an ELF executable or a #! script"));
    }
    // Absolute, but the name as given: programs dispatch on argv[0] (Debian's redis-server and
    // redis-sentinel are symlinks to redis-check-rdb, which behaves by the name it was run as).
    std::path::absolute(path).map_err(|e| format!("program {shown}: {e}"))
}

/// A name without a `/`, which a shell would look up in `PATH`.
fn is_bare(path: &Path) -> bool {
    !path.as_os_str().is_empty() && !path.as_os_str().as_encoded_bytes().contains(&b'/')
}

/// The first executable regular file named `path` in weft's own `PATH`, for a bare name. The
/// answer is recorded as an absolute path, so a replay does not depend on `PATH`.
fn in_path(path: &Path) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    if !is_bare(path) {
        return None;
    }
    // PATH only picks which file a bare name means, as a shell would; the pick is recorded as
    // an absolute path and a content hash, so no run or replay depends on it.
    #[allow(clippy::disallowed_methods)]
    let dirs = std::env::var_os("PATH")?;
    std::env::split_paths(&dirs).filter(|d| d.is_absolute()).map(|d| d.join(path)).find(|c| {
        std::fs::metadata(c).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// A stable 64-bit hash of the program's bytes (weft-core's `StableHasher`), which a repro
/// records so that a replay with a changed binary is refused. Remembered per (path, size,
/// modification time).
pub fn program_hash(path: &Path) -> Result<u64, String> {
    use std::collections::BTreeMap;
    use std::sync::Mutex;
    type Key = (std::path::PathBuf, u64, Option<std::time::SystemTime>);
    static CACHE: Mutex<BTreeMap<Key, u64>> = Mutex::new(BTreeMap::new());
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("program {shown}: {e}"))?;
    let key = (path.to_path_buf(), meta.len(), meta.modified().ok());
    if let Some(h) = CACHE.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(*h);
    }
    let bytes = std::fs::read(path).map_err(|e| format!("program {shown}: {e}"))?;
    let hash = weft_core::stable_hash(&bytes[..]);
    CACHE.lock().unwrap_or_else(|e| e.into_inner()).insert(key, hash);
    Ok(hash)
}
