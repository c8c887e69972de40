//! Gives the shim a fixed extent in memory. The loader maps every library below the ones
//! before it, so the shim's size (a preloaded library, mapped before libc and the program's
//! other libraries) used to decide where all of them, and everything the kernel placed after
//! them, landed: each change of the shim's code moved a real program's addresses, and with
//! them an address-dependent program's interleaving (the Redis Sentinel golden was
//! re-recorded after every shim change). A linker-script fragment puts a one-byte section
//! (`.weft_end`, in `src/lib.rs`) after `.bss` at 8 MiB, so the mapping ends there whatever
//! the code's size (the span between is zero-fill memory nothing touches).

// A build script's inputs arrive in the environment; that is cargo's interface, not a run's.
#![allow(clippy::disallowed_methods)]

use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    let script = out.join("weft_end.ld");
    let text = "SECTIONS\n{\n  .weft_end 0x800000 (NOLOAD) : { KEEP(*(.weft_end)) }\n}\nINSERT AFTER .bss;\n";
    std::fs::write(&script, text).expect("cannot write the linker script fragment");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-T,{}", script.display());
    println!("cargo:rerun-if-changed=build.rs");
}
