//! Builds the four published omnipaxos versions this harness compares, side by side, each as
//! the wrapper library `omnipaxos_v0_2_N` that re-exports the published crate and the
//! `MemoryStorage` of the matching `omnipaxos_storage` (see `weft-pin` for why they cannot be
//! ordinary dependencies). Each wrapper's dependency graph is pinned by `locks/v0_2_N.lock`.

const VERSIONS: [&str; 4] = ["0.2.0", "0.2.1", "0.2.2", "0.2.3"];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    for version in VERSIONS {
        let ident = version.replace('.', "_");
        // omnipaxos_storage 0.2.0 does not compile without one of its persistent backends (its
        // persistent_storage module is gated only inside function bodies); 0.2.1 and 0.2.2
        // depend on sled unconditionally; 0.2.3 needs nothing. Only `MemoryStorage` is used.
        let storage_features = if version == "0.2.0" { ", features = [\"sled\"]" } else { "" };
        weft_pin::build(&weft_pin::Wrapper {
            name: &format!("omnipaxos_v{ident}"),
            manifest_tail: &format!(
                "[dependencies]\nomnipaxos = {{ version = \"={version}\", default-features = false }}\n\
                 omnipaxos_storage = {{ version = \"={version}\", default-features = false{storage_features} }}\n"
            ),
            lib_rs: "pub use omnipaxos::*;\npub use omnipaxos_storage::memory_storage::MemoryStorage;\n",
            build_rs: None,
            lock: &format!("locks/v{ident}.lock"),
        });
    }
    weft_pin::finish();
}
