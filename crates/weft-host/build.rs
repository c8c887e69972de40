//! Builds the shim (`crates/weft-shim`, a cdylib) with a nested `cargo build --release` into
//! this crate's OUT_DIR and hands its path to the library, which embeds the bytes. So every
//! user of weft-host (the CLI, the tests on a clean clone, the benchmark) carries a shim that
//! matches its own protocol, without a separate build step. The shim is built with
//! `panic = "abort"` because a panic must never unwind into the C program it runs inside.

// A build script's inputs arrive in the environment; that is cargo's interface, not a run's.
#![allow(clippy::disallowed_methods)]

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let manifest_dir =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let shim = manifest_dir.join("../weft-shim");
    println!("cargo:rerun-if-changed={}", shim.join("src").display());
    println!("cargo:rerun-if-changed={}", shim.join("Cargo.toml").display());
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    let target_dir = out.join("shim-target");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--release", "--quiet", "--lib", "--manifest-path"])
        .arg(shim.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir)
        .args(["--config", "profile.release.panic=\"abort\""])
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .status()
        .expect("cannot run cargo to build weft-shim");
    assert!(status.success(), "building weft-shim failed");
    let so = target_dir.join("release/libweft_shim.so");
    assert!(so.exists(), "weft-shim built but {} is missing", so.display());
    println!("cargo:rustc-env=WEFT_SHIM_SO={}", so.display());
}
