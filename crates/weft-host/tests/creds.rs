//! Credentials under weft's user namespace, where the kernel maps one user and denies
//! `setgroups`: a daemon's privilege drop (initgroups, setgid, seteuid and back, setuid)
//! succeeds as it would for root, the ids follow the kernel's rules afterwards (no way back to
//! root, no `setgroups`, no `chown` to another user) and survive `exec`.

mod common;
use weft_core::{Decisions, NullObserver, Outcome, Scenario};

#[test]
fn a_privilege_drop_works_as_for_root_and_sticks() {
    let nobody = nix_user("nobody");
    let cfg = common::config("creds", &[], 1);
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
        assert!(text.contains(&line), "missing {line:?} in:\n{text}");
    }
}

/// `(uid, gid)` of a user from `/etc/passwd`.
fn nix_user(name: &str) -> (u32, u32) {
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap();
    let line = passwd.lines().find(|l| l.starts_with(&format!("{name}:"))).expect("user exists");
    let f: Vec<&str> = line.split(':').collect();
    (f[2].parse().unwrap(), f[3].parse().unwrap())
}
