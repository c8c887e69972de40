//! Credentials under weft's user namespace. With `users = one` (and whenever weft is not root)
//! the kernel maps one user and denies `setgroups`, and the shim keeps a privilege drop's ids;
//! with `users = all` and weft running as root every id is mapped and the calls are the
//! kernel's. Either way a daemon's privilege drop (initgroups, setgid, seteuid and back,
//! setuid) succeeds as it would for root, the ids follow the kernel's rules afterwards (no way
//! back to root, no `setgroups`, no `chown` to another user) and survive `exec`; only with
//! every id mapped do other users' files and a real `chown` behave as for root on the machine.

mod common;
use weft_core::{Decisions, NullObserver, Outcome, Scenario};
use weft_host::Users;

#[test]
fn a_privilege_drop_works_as_for_root_and_sticks() {
    privilege_drop(Users::One);
    privilege_drop(Users::All);
}

fn privilege_drop(users: Users) {
    let nobody = nix_user("nobody");
    let mut cfg = common::config("creds", &[], 1);
    cfg.users = users;
    let mut d = Decisions::random(1);
    let out = weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap();
    let text = out.render();
    assert_eq!(out.report.outcome, Outcome::Pass, "{text}");
    let (u, g) = nobody;
    let want = [
        "start: uid 0 0 0 gid 0 0 0".to_string(),
        "capget of own pid: ok".into(),
        "fchown to nobody as root: ok".into(),
        "initgroups: ok".into(),
        "nobody's group among them 1".into(),
        "setgid: ok".into(),
        "seteuid: ok".into(),
        format!("effective nobody: uid 0 {u} 0 gid {g} {g} {g}"),
        "setgroups unprivileged: Operation not permitted".into(),
        "seteuid back: ok".into(),
        "setuid: ok".into(),
        format!("dropped: uid {u} {u} {u} gid {g} {g} {g}"),
        "setuid(0): Operation not permitted".into(),
        "setresuid to own: ok".into(),
        "fchown to root unprivileged: Operation not permitted".into(),
        format!("after exec: uid {u} {u} {u} gid {g} {g} {g}"),
        "setuid(0) after exec: Operation not permitted".into(),
    ];
    for line in want {
        assert!(text.contains(&line), "{users:?}: missing {line:?} in:\n{text}");
    }
}

/// A file of user 4242, readable by its owner only, in a folder anyone may enter.
fn their_file() -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("their-files");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let file = dir.join("theirs");
    std::fs::write(&file, "their secret\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::os::unix::fs::chown(&file, Some(4242), Some(4242)).unwrap();
    file
}

#[test]
fn other_users_files_are_as_for_root_when_every_id_is_mapped() {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: only root can map every id (and make a file of another user)");
        return;
    }
    let file = their_file();
    let all = [
        "read their file: their secret",
        "chown: ok, owner now 4242:4242",
        "drop: ok, the kernel's uid 4242",
        "parent-death signal after the drop: 9",
    ];
    let one = [
        "read their file: Permission denied",
        "chown: ok, owner now 0:0",
        "drop: ok, the kernel's uid 0",
        "parent-death signal after the drop: 9",
    ];
    for (users, want) in [(Users::All, all), (Users::One, one)] {
        let mut cfg = common::config("owners", &[file.to_str().unwrap()], 1);
        cfg.users = users;
        cfg.work_dir = Some(file.parent().unwrap().join("work"));
        let mut d = Decisions::random(1);
        let out = weft_host::run_once(&cfg, &Scenario::calm(), &mut d, &mut NullObserver).unwrap();
        assert_eq!(common::passing_lines(&out), want, "{users:?}");
    }
}

/// `(uid, gid)` of a user from `/etc/passwd`.
fn nix_user(name: &str) -> (u32, u32) {
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap();
    let line = passwd.lines().find(|l| l.starts_with(&format!("{name}:"))).expect("user exists");
    let f: Vec<&str> = line.split(':').collect();
    (f[2].parse().unwrap(), f[3].parse().unwrap())
}
