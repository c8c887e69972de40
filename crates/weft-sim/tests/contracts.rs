//! The persistence contracts are nested: for random operation traces and every crash point,
//! every crash state `durable` can produce, `fsync` can produce, and every one `fsync` can
//! produce, `posix` can produce. Crash states are enumerated exhaustively (every decision list),
//! and `Disk::allows` must agree with the enumeration.

use std::collections::BTreeSet;
use weft_core::{Contract, Decisions, Rng};
use weft_sim::{CrashState, Disk};

/// Every crash state `contract` allows for `disk`, by enumerating all decision lists.
fn all_crash_states(disk: &Disk, contract: Contract) -> BTreeSet<CrashState> {
    let mut out = BTreeSet::new();
    let mut list: Vec<u64> = Vec::new();
    loop {
        let mut d = Decisions::replay(list.clone());
        let (state, _) = disk.clone().crash(contract, &mut d);
        out.insert(state);
        let (log, bounds) = (d.log().to_vec(), d.bounds().to_vec());
        // Odometer: bump the last decision that has room, drop everything after it.
        match (0..log.len()).rev().find(|&i| log[i] + 1 < bounds[i]) {
            Some(i) => {
                list = log[..i].to_vec();
                list.push(log[i] + 1);
            }
            None => return out,
        }
        assert!(out.len() < 100_000, "state explosion: shrink the trace");
    }
}

fn random_op(disk: &mut Disk, rng: &mut Rng) {
    let files = ["a", "b", "d/c"];
    let f = files[rng.below(3) as usize];
    let data: Vec<u8> = (0..1 + rng.below(6)).map(|_| b'a' + rng.below(26) as u8).collect();
    // Errors (e.g. renaming a missing file) are fine: the trace just has fewer operations.
    let _ = match rng.below(10) {
        0 | 1 => disk.append(f, &data),
        2 => disk.write(f, rng.below(6) as usize, &data),
        3 => disk.truncate(f, rng.below(6) as usize),
        4 => disk.fsync(f),
        5 => disk.fsync_dir(if rng.below(2) == 0 { "" } else { "d" }),
        6 => disk.rename(f, files[rng.below(3) as usize]),
        7 => disk.unlink(f),
        8 => disk.link(f, files[rng.below(3) as usize]),
        _ => disk.mkdir("d"),
    };
}

#[test]
fn durable_within_fsync_within_posix() {
    let mut checked = 0;
    for seed in 0..150 {
        let mut rng = Rng::new(seed);
        let mut disk = Disk::new(4);
        let ops = 2 + rng.below(6);
        for _ in 0..ops {
            random_op(&mut disk, &mut rng);
            let durable = all_crash_states(&disk, Contract::Durable);
            let fsync = all_crash_states(&disk, Contract::Fsync);
            let posix = all_crash_states(&disk, Contract::Posix);
            assert_eq!(durable.len(), 1, "durable has exactly one crash state");
            assert!(durable.is_subset(&fsync), "seed {seed}: durable ⊄ fsync");
            assert!(fsync.is_subset(&posix), "seed {seed}: fsync ⊄ posix");
            // `allows` agrees with the enumeration.
            for s in &posix {
                assert_eq!(
                    disk.allows(Contract::Fsync, s).is_ok(),
                    fsync.contains(s),
                    "seed {seed}"
                );
                assert_eq!(disk.allows(Contract::Durable, s).is_ok(), durable.contains(s));
            }
            checked += 1;
        }
    }
    assert!(checked > 500);
}

#[test]
fn the_contracts_differ_where_the_spec_says() {
    // Unsynced append: lost under fsync and posix, never under durable.
    let mut d = Disk::new(4);
    d.append("log", b"ab").unwrap();
    d.fsync("log").unwrap();
    d.fsync_dir("").unwrap();
    d.append("log", b"cd").unwrap();
    assert_eq!(all_crash_states(&d, Contract::Durable).len(), 1);
    assert_eq!(all_crash_states(&d, Contract::Fsync).len(), 2);
    // Rename without a directory fsync: only posix can lose it.
    let mut d = Disk::new(4);
    d.write("tmp", 0, b"x").unwrap();
    d.fsync("tmp").unwrap();
    d.fsync_dir("").unwrap();
    d.rename("tmp", "final").unwrap();
    assert_eq!(all_crash_states(&d, Contract::Fsync).len(), 1);
    assert_eq!(all_crash_states(&d, Contract::Posix).len(), 2);
    // A hard link: both names share the data; without a directory fsync only posix loses it.
    let mut d = Disk::new(4);
    d.write("a", 0, b"x").unwrap();
    d.fsync("a").unwrap();
    d.fsync_dir("").unwrap();
    d.link("a", "b").unwrap();
    d.write("b", 0, b"y").unwrap();
    assert_eq!(d.read("a").unwrap(), b"y");
    assert!(d.link("a", "b").is_err(), "the new name exists");
    d.rename("a", "b").unwrap(); // two names of one file: nothing happens
    assert!(d.exists("a") && d.exists("b"));
    d.fsync("a").unwrap();
    assert_eq!(all_crash_states(&d, Contract::Fsync).len(), 1);
    assert_eq!(all_crash_states(&d, Contract::Posix).len(), 2);
    d.unlink("a").unwrap();
    assert_eq!(d.read("b").unwrap(), b"y");
}
