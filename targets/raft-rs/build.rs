//! Builds the two published raft-rs versions this harness compares, side by side, each as the
//! wrapper library `raft_v0_4_N` that re-exports the published `raft` crate and the `protobuf`
//! runtime it encodes configuration changes with (see `weft-pin` for why they cannot be
//! ordinary dependencies). Each wrapper's dependency graph is pinned by `locks/v0_4_N.lock`.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    for version in ["0.4.1", "0.4.2"] {
        let ident = version.replace('.', "_");
        // raft 0.4.1 generates its prost bindings with `protobuf-build 0.4`, which no longer
        // compiles against the newest `grpcio-compiler 0.5` it accepts: pinning the build
        // dependency to 0.5.0-alpha.6 with `prost-codec` (unified with protobuf-build's, since
        // both are build-time dependencies) restores the combination 0.4.1 was published with.
        // A `[build-dependencies]` entry takes part only when the package has a build script,
        // hence the empty one. 0.4.2 uses rust-protobuf only and needs no pin.
        let (pin, build_rs) = if version == "0.4.1" {
            (
                "\n[build-dependencies]\ngrpcio-compiler = { version = \"=0.5.0-alpha.6\", features = [\"prost-codec\"] }\n",
                Some("fn main() {}\n"),
            )
        } else {
            ("", None)
        };
        weft_pin::build(&weft_pin::Wrapper {
            name: &format!("raft_v{ident}"),
            manifest_tail: &format!(
                "[dependencies]\nraft = {{ version = \"={version}\", default-features = false }}\n\
                 protobuf = \"2\"\n{pin}"
            ),
            lib_rs: "pub use protobuf;\npub use raft::*;\n",
            build_rs,
            lock: &format!("locks/v{ident}.lock"),
        });
    }
    weft_pin::finish();
}
