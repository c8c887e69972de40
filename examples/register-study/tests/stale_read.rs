//! From `cargo test`: the buggy register serves a stale read, the fixed one passes.
fn check(variant: &str) -> weft::Checker {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(variant);
    let _ = std::fs::remove_dir_all(&dir); // (a user keeps the crate's weft-regressions/)
    weft::check(register_study::world())
        .variant(variant)
        .runs(2000)
        .seed_from_env()
        .regressions(dir)
}

#[test]
fn buggy_reads_are_stale() {
    let failure = check("buggy").shrink_runs(2000).run().expect_err("a stale read");
    assert!(failure.to_string().contains("not linearizable"), "{failure}");
}

#[test]
fn fixed_reads_are_linearizable() {
    check("fixed").runs(300).assert();
}
