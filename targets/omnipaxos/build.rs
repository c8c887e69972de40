//! Builds the four published omnipaxos versions this harness compares, side by side.
//!
//! Cargo allows only one semver-compatible version of a crate per dependency graph, so
//! `omnipaxos =0.2.0` and `omnipaxos =0.2.1` cannot both be dependencies of this package (nor
//! of any two packages in one workspace). Each version is therefore built by cargo itself — the
//! ordinary client, from crates.io — in its own tiny generated workspace under `OUT_DIR`, as a
//! wrapper library `omnipaxos_v0_2_N` that re-exports the published crate and the
//! `MemoryStorage` of the matching `omnipaxos_storage`. All four builds share
//! one target directory, and this package finds them with `extern crate` through a link-search
//! path. Nothing of omnipaxos's source is copied into this repository.

// A build script talks to cargo through environment variables (OUT_DIR, CARGO, RUSTC); nothing
// here runs inside a simulation.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::Command;

const VERSIONS: [&str; 4] = ["0.2.0", "0.2.1", "0.2.2", "0.2.3"];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let target_dir = out.join("target");
    let lib_dir = out.join("lib");
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    for version in VERSIONS {
        let ident = version.replace('.', "_");
        let dir = out.join(format!("omnipaxos-v{ident}"));
        write_wrapper(&dir, version, &ident);
        let mut cmd = Command::new(&cargo);
        cmd.arg("build")
            .arg("--release")
            .arg("--manifest-path")
            .arg(dir.join("Cargo.toml"))
            .arg("--target-dir")
            .arg(&target_dir)
            .env("RUSTC", &rustc)
            // The outer build's wrappers (clippy, sccache) and flags are not for these builds.
            .env_remove("RUSTC_WRAPPER")
            .env_remove("RUSTC_WORKSPACE_WRAPPER")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("CARGO_BUILD_TARGET_DIR");
        cmd.arg("--message-format=json").stderr(std::process::Stdio::inherit());
        let output = cmd.output().expect("run cargo for an omnipaxos wrapper");
        assert!(output.status.success(), "building omnipaxos {version} failed ({})", output.status);
        // The target directory may hold older builds of the same wrapper (other hashes), which
        // `extern crate` would find ambiguous: copy the one just built to a directory of its own.
        let rlib =
            rlib_of(&String::from_utf8_lossy(&output.stdout), &format!("omnipaxos_v{ident}"))
                .unwrap_or_else(|| panic!("cargo reported no rlib for omnipaxos {version}"));
        std::fs::create_dir_all(&lib_dir).expect("create lib dir");
        std::fs::copy(&rlib, lib_dir.join(format!("libomnipaxos_v{ident}.rlib")))
            .expect("copy wrapper rlib");
    }
    println!("cargo:rustc-link-search=crate={}", lib_dir.display());
    println!("cargo:rustc-link-search=dependency={}", target_dir.join("release/deps").display());
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

fn write_wrapper(dir: &Path, version: &str, ident: &str) {
    std::fs::create_dir_all(dir).expect("create wrapper dir");
    // omnipaxos_storage 0.2.0 does not compile without one of its persistent backends (its
    // persistent_storage module is gated only inside function bodies); 0.2.1 and 0.2.2 depend on
    // sled unconditionally; 0.2.3 needs nothing. Only `MemoryStorage` is used.
    let storage_features = if version == "0.2.0" { ", features = [\"sled\"]" } else { "" };
    let manifest = format!(
        "[package]\nname = \"omnipaxos-v{ident}\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
         publish = false\n\n[lib]\nname = \"omnipaxos_v{ident}\"\npath = \"lib.rs\"\n\n\
         [dependencies]\nomnipaxos = {{ version = \"={version}\", default-features = false }}\n\
         omnipaxos_storage = {{ version = \"={version}\", default-features = false{storage_features} }}\n\n\
         [workspace]\n"
    );
    write_if_changed(&dir.join("Cargo.toml"), &manifest);
    write_if_changed(
        &dir.join("lib.rs"),
        "pub use omnipaxos::*;\npub use omnipaxos_storage::memory_storage::MemoryStorage;\n",
    );
}

fn write_if_changed(path: &Path, text: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text).expect("write wrapper file");
    }
}
