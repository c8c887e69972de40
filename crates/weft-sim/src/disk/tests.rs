use super::*;

#[test]
fn fsync_makes_data_survive_every_contract() {
    for c in Contract::ALL {
        let mut d = Disk::new(4);
        d.write("f", 0, b"hello").unwrap();
        d.fsync("f").unwrap();
        d.fsync_dir("").unwrap();
        let mut dec = Decisions::random(1);
        let (state, why) = d.crash(c, &mut dec);
        assert_eq!(state.files["f"], b"hello", "{c:?}");
        assert!(why.is_empty());
    }
}

#[test]
fn fsync_contract_loses_a_suffix_of_calls() {
    let mut d = Disk::new(4);
    d.append("log", b"aa").unwrap();
    d.fsync("log").unwrap();
    d.append("log", b"bb").unwrap();
    d.append("log", b"cc").unwrap();
    let mut seen = BTreeSet::new();
    for lost in 0..3 {
        let mut copy = d.clone();
        let (s, _) = copy.crash(Contract::Fsync, &mut Decisions::replay(vec![lost]));
        seen.insert(s.files["log"].clone());
    }
    let expect: BTreeSet<Vec<u8>> =
        [b"aa".to_vec(), b"aabb".to_vec(), b"aabbcc".to_vec()].into_iter().collect();
    assert_eq!(seen, expect);
}

#[test]
fn posix_can_lose_an_unsynced_rename_but_fsync_cannot() {
    let mut d = Disk::new(4);
    d.write("snap.tmp", 0, b"new").unwrap();
    d.fsync("snap.tmp").unwrap();
    d.fsync_dir("").unwrap();
    d.rename("snap.tmp", "snap").unwrap();
    let (s, why) = d.clone().crash(Contract::Posix, &mut Decisions::replay(vec![1]));
    assert!(s.files.contains_key("snap.tmp") && !s.files.contains_key("snap"));
    assert!(why[0].contains("rename"), "{why:?}");
    assert!(d.allows(Contract::Fsync, &s).unwrap_err().contains("namespace"));
    let (s, _) = d.clone().crash(Contract::Fsync, &mut Decisions::random(3));
    assert!(s.files.contains_key("snap"));
}

#[test]
fn rmdir_removes_only_an_empty_directory_and_posix_may_lose_it() {
    let mut d = Disk::new(4);
    d.mkdir("d").unwrap();
    d.create("d/f").unwrap();
    let e = d.rmdir("d").unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::DirectoryNotEmpty);
    assert_eq!(d.rmdir("nope").unwrap_err().kind(), io::ErrorKind::NotFound);
    d.unlink("d/f").unwrap();
    d.sync_all();
    d.rmdir("d").unwrap();
    assert!(!d.is_dir("d") && !d.exists("d"));
    let (s, why) = d.clone().crash(Contract::Posix, &mut Decisions::replay(vec![1]));
    assert!(s.dirs.contains("d"), "an unsynced rmdir may be lost");
    assert!(why[0].contains("rmdir `d`"), "{why:?}");
    assert!(d.allows(Contract::Fsync, &s).is_err(), "not under fsync");
    d.fsync_dir("").unwrap();
    let (s, _) = d.clone().crash(Contract::Posix, &mut Decisions::replay(vec![1]));
    assert!(!s.dirs.contains("d"), "durable once its parent is synced");
}

#[test]
fn a_directory_rename_moves_its_tree_and_posix_may_lose_it() {
    let mut d = Disk::new(4);
    d.mkdir("wal.tmp").unwrap();
    d.mkdir("wal.tmp/sub").unwrap();
    d.write("wal.tmp/0.wal", 0, b"log").unwrap();
    d.mkdir("busy").unwrap();
    d.create("busy/x").unwrap();
    d.sync_all();
    let kind = |r: io::Result<()>| r.unwrap_err().kind();
    assert_eq!(kind(d.rename("wal.tmp", "busy")), io::ErrorKind::DirectoryNotEmpty);
    assert_eq!(kind(d.rename("wal.tmp", "busy/x")), io::ErrorKind::NotADirectory);
    assert_eq!(kind(d.rename("wal.tmp", "wal.tmp/sub/in")), io::ErrorKind::InvalidInput);
    d.rename("wal.tmp", "wal").unwrap();
    assert!(d.is_dir("wal/sub") && !d.exists("wal.tmp"));
    assert_eq!(d.read("wal/0.wal").unwrap(), b"log");
    let (s, why) = d.clone().crash(Contract::Posix, &mut Decisions::replay(vec![1]));
    assert!(s.files.contains_key("wal.tmp/0.wal") && !s.dirs.contains("wal"), "{s:?}");
    assert!(why[0].contains("rename of directory `wal.tmp`"), "{why:?}");
    let (s, _) = d.clone().crash(Contract::Fsync, &mut Decisions::random(1));
    assert_eq!(s.files.keys().collect::<Vec<_>>(), ["busy/x", "wal/0.wal"]);
    assert!(s.dirs.contains("wal/sub"));
}

#[test]
fn posix_can_keep_a_size_without_its_data() {
    let mut d = Disk::new(4);
    d.create("f").unwrap();
    d.fsync_dir("").unwrap();
    d.fsync("f").unwrap();
    d.append("f", b"abcdefgh").unwrap();
    // latest size (0), block 0 reverted (1), block 1 latest (0)
    let (s, _) = d.clone().crash(Contract::Posix, &mut Decisions::replay(vec![0, 1, 0]));
    assert_eq!(s.files["f"], b"\0\0\0\0efgh");
    assert!(d.allows(Contract::Fsync, &s).is_err());
    assert!(d.allows(Contract::Posix, &s).is_ok());
}

#[test]
fn an_open_inode_keeps_its_data_across_rename_and_unlink_and_sync_makes_all_durable() {
    let mut d = Disk::new(4);
    d.mkdir("/d").unwrap();
    d.create("/d/a").unwrap();
    let i = d.file_inode("/d/a").unwrap();
    d.write_inode(i, 2, b"xy");
    d.rename("/d/a", "/d/b").unwrap();
    assert_eq!(d.read_inode(i, 0, 10), b"\0\0xy");
    assert_eq!(d.entries("/d"), [("b".to_string(), false)]);
    assert_eq!(d.entries(""), [("d".to_string(), true)]);
    d.unlink("/d/b").unwrap();
    assert_eq!((d.inode_links(i), d.inode_size(i)), (0, 4));
    d.create("/d/c").unwrap();
    d.write("/d/c", 0, b"kept").unwrap();
    d.sync_all();
    let (s, why) = d.crash(Contract::Posix, &mut Decisions::random(5));
    assert_eq!(s.files.get("/d/c").map(Vec::as_slice), Some(&b"kept"[..]));
    assert!(why.is_empty() && !s.files.contains_key("/d/b"), "{why:?}");
}

#[test]
fn dropped_pages_are_lost_even_after_a_successful_retry() {
    let mut d = Disk::new(4);
    d.write("f", 0, b"old!").unwrap();
    d.fsync("f").unwrap();
    d.fsync_dir("").unwrap();
    d.write("f", 0, b"new!").unwrap();
    // An injected failure drops the dirty page; the retry "succeeds".
    assert!(d.fsync_dropping_pages("f").is_err());
    d.fsync("f").unwrap();
    assert_eq!(d.read("f").unwrap(), b"new!");
    let (s, _) = d.crash(Contract::Durable, &mut Decisions::random(0));
    assert_eq!(s.files["f"], b"old!");
}
