//! Builds published versions of a library side by side, for harnesses that compare them.
//!
//! Cargo allows only one semver-compatible version of a crate per dependency graph, so
//! `omnipaxos =0.2.0` and `omnipaxos =0.2.1` (or `raft =0.4.1` and `raft =0.4.2`) cannot both
//! be dependencies of one package, nor of two packages in one workspace. A harness's build
//! script therefore calls [`build`] once per version: it writes a tiny wrapper crate (its own
//! workspace under `OUT_DIR`) that depends on exactly that published version, builds it with the
//! ordinary cargo client from crates.io under a lockfile the harness keeps in its repository (so
//! every machine builds the same transitive versions), and copies the resulting `.rlib` where
//! the harness finds it with `extern crate`. Nothing of the library's source is copied into the
//! repository. [`finish`] prints the link-search paths.
//!
//! This crate runs only inside build scripts; nothing here runs inside a simulation.

// A build script talks to cargo through environment variables (OUT_DIR, CARGO, RUSTC).
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// One wrapper crate to build.
pub struct Wrapper<'a> {
    /// Library name of the wrapper, e.g. `raft_v0_4_1`: the harness writes
    /// `extern crate raft_v0_4_1;`. The package is named `raft-v0_4_1` (as in the lockfile).
    pub name: &'a str,
    /// Everything of the wrapper's `Cargo.toml` after its `[package]` and `[lib]` sections:
    /// `[dependencies]`, and `[build-dependencies]` if a pin needs them.
    pub manifest_tail: &'a str,
    /// The wrapper's `lib.rs` (usually re-exports).
    pub lib_rs: &'a str,
    /// A `build.rs` for the wrapper, if it needs one (a `[build-dependencies]` pin only takes
    /// part in resolution when the package has a build script).
    pub build_rs: Option<&'a str>,
    /// Path, relative to the harness's manifest directory, of the lockfile pinning the
    /// wrapper's whole dependency graph. To create or refresh it, delete it and build: the
    /// generated lockfile is copied there (and the build asks to commit it).
    pub lock: &'a str,
}

fn env_path(key: &str) -> PathBuf {
    PathBuf::from(std::env::var_os(key).unwrap_or_else(|| panic!("cargo sets {key}")))
}

fn out_dir() -> PathBuf {
    env_path("OUT_DIR")
}

/// Builds `w` and copies its `.rlib` to `OUT_DIR/lib/lib{name}.rlib`. Panics (failing the
/// build with the reason) if cargo cannot build it.
pub fn build(w: &Wrapper<'_>) {
    let manifest_dir = env_path("CARGO_MANIFEST_DIR");
    let out = out_dir();
    let dir = out.join(format!("wrapper-{}", w.name));
    let target_dir = out.join("target");
    let lib_dir = out.join("lib");
    println!("cargo:rerun-if-changed={}", w.lock);
    std::fs::create_dir_all(&dir).expect("create wrapper dir");
    let build_line = if w.build_rs.is_some() { "build = \"build.rs\"\n" } else { "" };
    let manifest = format!(
        "[package]\nname = \"{}\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\
         {build_line}\n[lib]\nname = \"{}\"\npath = \"lib.rs\"\n\n{}\n\n[workspace]\n",
        w.name.replacen("_v", "-v", 1),
        w.name,
        w.manifest_tail.trim()
    );
    write_if_changed(&dir.join("Cargo.toml"), &manifest);
    write_if_changed(&dir.join("lib.rs"), w.lib_rs);
    if let Some(b) = w.build_rs {
        write_if_changed(&dir.join("build.rs"), b);
    }
    let lock_path = manifest_dir.join(w.lock);
    let locked = match std::fs::read_to_string(&lock_path) {
        Ok(lock) => {
            write_if_changed(&dir.join("Cargo.lock"), &lock);
            true
        }
        Err(_) => false,
    };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let mut cmd = Command::new(cargo);
    cmd.arg("build").arg("--release");
    if locked {
        cmd.arg("--locked");
    }
    cmd.arg("--manifest-path")
        .arg(dir.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir)
        .arg("--message-format=json")
        .env("RUSTC", rustc)
        // The outer build's wrappers (clippy, sccache) and flags are not for these builds.
        .env_remove("RUSTC_WRAPPER")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR")
        .stderr(Stdio::inherit());
    let output = cmd.output().expect("run cargo for a wrapper crate");
    assert!(output.status.success(), "building wrapper {} failed ({})", w.name, output.status);
    if !locked {
        std::fs::copy(dir.join("Cargo.lock"), &lock_path).expect("save the new lockfile");
        println!(
            "cargo:warning=created {}: commit it so every machine builds the same versions",
            w.lock
        );
    }
    // The target directory may hold older builds of the same wrapper (other hashes), which
    // `extern crate` would find ambiguous: copy the one just built to a directory of its own.
    let rlib = rlib_of(&String::from_utf8_lossy(&output.stdout), w.name)
        .unwrap_or_else(|| panic!("cargo reported no rlib for {}", w.name));
    std::fs::create_dir_all(&lib_dir).expect("create lib dir");
    std::fs::copy(&rlib, lib_dir.join(format!("lib{}.rlib", w.name))).expect("copy wrapper rlib");
}

/// Prints the link-search paths under which the harness finds every wrapper built by [`build`]
/// and their dependencies.
pub fn finish() {
    let out = out_dir();
    println!("cargo:rustc-link-search=crate={}", out.join("lib").display());
    println!(
        "cargo:rustc-link-search=dependency={}",
        out.join("target").join("release").join("deps").display()
    );
}

/// The `.rlib` path in cargo's JSON messages for the library named `name`.
fn rlib_of(messages: &str, name: &str) -> Option<String> {
    let (exact, hashed) = (format!("lib{name}.rlib"), format!("lib{name}-"));
    messages
        .lines()
        .filter(|l| l.contains("\"compiler-artifact\""))
        .flat_map(|l| l.split('"'))
        .find(|s| {
            let file = s.rsplit('/').next().unwrap_or(s);
            file == exact || (file.starts_with(&hashed) && file.ends_with(".rlib"))
        })
        .map(str::to_string)
}

fn write_if_changed(path: &Path, text: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text).expect("write wrapper file");
    }
}

#[cfg(test)]
mod tests {
    use super::rlib_of;

    #[test]
    fn finds_the_wrappers_rlib_among_cargo_messages() {
        let msgs = concat!(
            r#"{"reason":"compiler-artifact","filenames":["/t/release/deps/libraft-9f.rlib"]}"#,
            "\n",
            r#"{"reason":"compiler-artifact","filenames":["/t/release/deps/libraft_v0_4_1-ab.rlib","/t/x.rmeta"]}"#,
            "\n",
            r#"{"reason":"build-finished","success":true}"#,
        );
        assert_eq!(
            rlib_of(msgs, "raft_v0_4_1").as_deref(),
            Some("/t/release/deps/libraft_v0_4_1-ab.rlib")
        );
        assert_eq!(rlib_of(msgs, "raft_v0_4_2"), None);
    }
}
