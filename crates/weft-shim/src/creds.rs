//! Credentials inside a user namespace that maps one user (weft not root, or `users = one`;
//! as root weft maps every id and these calls are the kernel's). A process runs as root of its
//! own user namespace, in which only that one user and one group are mapped and the kernel
//! denies `setgroups(2)`.
//! Daemons started as root drop their privileges (`initgroups`, `setgid`, `setuid` to the user
//! their configuration names: mosquitto, dnsmasq, memcached `-u`) and exit when that fails. In
//! such a namespace the shim keeps the process's ids itself: real, effective and saved user and
//! group ids and the supplementary groups, changed by the `set*id` calls under the kernel's
//! rules (an unprivileged process may only move among the ids it holds: `EPERM`), answered by
//! the `get*id` calls, inherited by `fork` (static memory) and carried across `exec` (the
//! `WEFT_CREDS` variable). The kernel's credentials do not change, so files keep the
//! namespace's owner, permission checks stay those of its root, and `chown` to an id the
//! namespace cannot map answers success and changes nothing. Outside weft's namespace (`netns
//! = off`, or no host) every call is the kernel's.

use crate::prelude::*;
use crate::text::Text;
use core::cell::UnsafeCell;

/// The most supplementary groups Linux allows (`NGROUPS_MAX`).
const NGROUPS: usize = 65536;
/// The most groups carried across `exec` in `WEFT_CREDS`.
const ENV_GROUPS: usize = 256;
/// Room for `WEFT_CREDS=` and its numbers.
pub(crate) const ENV_LEN: usize = 12 + 6 * 11 + ENV_GROUPS * 11 + 8;

/// "Unchanged" in the `setres*id` family.
const KEEP: u32 = u32::MAX;

/// Real, effective and saved user ids; the same for groups.
static UIDS: [AtomicU32; 3] = [const { AtomicU32::new(0) }; 3];
static GIDS: [AtomicU32; 3] = [const { AtomicU32::new(0) }; 3];

struct Groups(UnsafeCell<[u32; NGROUPS]>);
// SAFETY: changed only by the thread holding the baton (one simulated thread runs at a time).
unsafe impl Sync for Groups {}
static GROUPS: Groups = Groups(UnsafeCell::new([0; NGROUPS]));
static NGROUP: AtomicU32 = AtomicU32::new(0);

/// 0: not known yet; 1: kept here; 2: the kernel's.
static STATE: AtomicU32 = AtomicU32::new(0);

/// True when this process's user namespace denies setgroups.
fn setgroups_denied() -> bool {
    let mut buf = [0u8; 8];
    // SAFETY: NUL-terminated path; a plain read into a local buffer.
    unsafe {
        let fd = sys::raw(libc::SYS_open, [c"/proc/self/setgroups".as_ptr() as i64, 0, 0, 0, 0, 0]);
        if fd < 0 {
            return false;
        }
        let n = sys::raw(libc::SYS_read, [fd, buf.as_mut_ptr() as i64, buf.len() as i64, 0, 0, 0]);
        sys::raw(libc::SYS_close, [fd, 0, 0, 0, 0, 0]);
        n >= 4 && &buf[..4] == b"deny"
    }
}

/// Whether the ids are kept here (deciding it, and reading the starting ids, on first use).
fn kept() -> bool {
    match STATE.load(Ordering::Acquire) {
        1 => true,
        2 => false,
        _ => {
            let here = active() && setgroups_denied();
            if here {
                load();
            }
            STATE.store(if here { 1 } else { 2 }, Ordering::Release);
            here
        }
    }
}

/// Reads the starting ids in the library constructor, before the program can clear its
/// environment of `WEFT_CREDS`.
pub(crate) fn init() {
    let _ = kept();
}

/// The kernel's real, effective and saved user and group ids.
fn kernel_ids() -> ([u32; 3], [u32; 3]) {
    let (mut u, mut g) = ([0u32; 3], [0u32; 3]);
    let p = |a: &mut [u32; 3]| {
        [a.as_mut_ptr() as i64, a[1..].as_mut_ptr() as i64, a[2..].as_mut_ptr() as i64]
    };
    // SAFETY: the calls write three ids each into local arrays.
    unsafe {
        let [a, b, c] = p(&mut u);
        sys::raw(libc::SYS_getresuid, [a, b, c, 0, 0, 0]);
        let [a, b, c] = p(&mut g);
        sys::raw(libc::SYS_getresgid, [a, b, c, 0, 0, 0]);
    }
    (u, g)
}

/// The kernel's ids as the process starts, then what an `exec`'d parent image carried.
fn load() {
    let (u, g) = kernel_ids();
    // SAFETY: a read into the group table, not yet shared (first use in this image).
    unsafe {
        let list = (*GROUPS.0.get()).as_mut_ptr() as i64;
        let n = sys::raw(libc::SYS_getgroups, [NGROUPS as i64, list, 0, 0, 0, 0]);
        NGROUP.store(n.max(0) as u32, Ordering::Relaxed);
    }
    store(&UIDS, u);
    store(&GIDS, g);
    from_env();
}

/// Whether the kept ids differ from the kernel's (only then does `exec` carry them: a shell
/// that calls `setuid(getuid())` at start, as dash does, must leave the next image's
/// environment as it was).
fn differs_from_kernel() -> bool {
    let (u, g) = kernel_ids();
    if ids(&UIDS) != u || ids(&GIDS) != g {
        return true;
    }
    let mut list = [0u32; ENV_GROUPS];
    let args = [ENV_GROUPS as i64, list.as_mut_ptr() as i64, 0, 0, 0, 0];
    // SAFETY: getgroups writes at most ENV_GROUPS ids into the local array.
    let n = unsafe { sys::raw(libc::SYS_getgroups, args) };
    let kept = NGROUP.load(Ordering::Relaxed) as usize;
    // SAFETY: read by the thread holding the baton, which is the only one that changes it.
    let groups = unsafe { &(&*GROUPS.0.get())[..kept] };
    n < 0 || n as usize != kept || list[..kept] != *groups
}

fn store(ids: &[AtomicU32; 3], v: [u32; 3]) {
    for (a, v) in ids.iter().zip(v) {
        a.store(v, Ordering::Relaxed);
    }
}

fn ids(of: &[AtomicU32; 3]) -> [u32; 3] {
    [0, 1, 2].map(|i| of[i].load(Ordering::Relaxed))
}

/// Reads `WEFT_CREDS=ruid,euid,suid,rgid,egid,sgid[,group…]` left by the image before `exec`.
fn from_env() {
    // SAFETY: getenv with a NUL-terminated name; the answer is NUL-terminated or null.
    let p = unsafe { libc::getenv(c"WEFT_CREDS".as_ptr()) };
    if p.is_null() {
        return;
    }
    // SAFETY: as above.
    let text = unsafe { core::ffi::CStr::from_ptr(p) }.to_bytes();
    let mut nums = [0u32; 6 + ENV_GROUPS];
    let mut n = 0;
    for field in text.split(|&b| b == b',') {
        let Some(v) = parse(field) else { return };
        if n == nums.len() {
            break;
        }
        nums[n] = v;
        n += 1;
    }
    if n < 6 {
        return;
    }
    store(&UIDS, [nums[0], nums[1], nums[2]]);
    store(&GIDS, [nums[3], nums[4], nums[5]]);
    // SAFETY: the group table is not shared yet (first use in this image).
    unsafe { (&mut *GROUPS.0.get())[..n - 6].copy_from_slice(&nums[6..n]) };
    NGROUP.store((n - 6) as u32, Ordering::Relaxed);
}

fn parse(field: &[u8]) -> Option<u32> {
    if field.is_empty() || field.len() > 10 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in field {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v * 10 + u64::from(b - b'0');
    }
    u32::try_from(v).ok()
}

/// Writes the `WEFT_CREDS=…` entry (NUL-terminated) into `buf` when the ids were changed
/// here; `false` when there is nothing to carry.
pub(crate) fn env_entry(buf: &mut [u8; ENV_LEN]) -> bool {
    if !kept() || !differs_from_kernel() {
        return false;
    }
    let n = (NGROUP.load(Ordering::Relaxed) as usize).min(ENV_GROUPS);
    // SAFETY: read by the thread holding the baton, which is the only one that changes it.
    let groups = unsafe { &(&*GROUPS.0.get())[..n] };
    let all = ids(&UIDS).into_iter().chain(ids(&GIDS)).chain(groups.iter().copied());
    let mut t = Text::new(&mut buf[..ENV_LEN - 1]);
    t.put(b"WEFT_CREDS=");
    for (i, v) in all.enumerate() {
        if i > 0 {
            t.put(b",");
        }
        t.num(u64::from(v));
    }
    let end = t.len();
    buf[end] = 0;
    true
}

fn fail(errno: c_int) -> c_int {
    set_errno(errno);
    -1
}

/// CAP_SETUID / CAP_SETGID, as the kernel grants them to an effective root.
fn privileged() -> bool {
    UIDS[1].load(Ordering::Relaxed) == 0
}

/// `setres[ug]id`: each id given (not `KEEP`) must be one the process holds unless privileged.
fn set_res(of: &[AtomicU32; 3], new: [u32; 3]) -> c_int {
    let old = ids(of);
    if !privileged() && new.iter().any(|&v| v != KEEP && !old.contains(&v)) {
        return fail(libc::EPERM);
    }
    let next = [0, 1, 2].map(|i| if new[i] == KEEP { old[i] } else { new[i] });
    store(of, next);
    0
}

/// `set[ug]id`: all three when privileged, else the effective one to the real or saved id.
fn set_one(of: &[AtomicU32; 3], id: u32) -> c_int {
    if id == KEEP {
        return fail(libc::EINVAL);
    }
    if privileged() {
        return set_res(of, [id, id, id]);
    }
    let [real, _, saved] = ids(of);
    if id != real && id != saved {
        return fail(libc::EPERM);
    }
    set_res(of, [KEEP, id, KEEP])
}

/// `setre[ug]id`: the real id may become the effective one, the effective any held one; the
/// saved id follows the new effective one when the real one is set or the effective one
/// leaves the real one.
fn set_re(of: &[AtomicU32; 3], real: u32, eff: u32) -> c_int {
    let old = ids(of);
    if !privileged()
        && ((real != KEEP && real != old[0] && real != old[1])
            || (eff != KEEP && !old.contains(&eff)))
    {
        return fail(libc::EPERM);
    }
    let new_eff = if eff == KEEP { old[1] } else { eff };
    let moves_saved = real != KEEP || (eff != KEEP && eff != old[0]);
    let next = [
        if real == KEEP { old[0] } else { real },
        new_eff,
        if moves_saved { new_eff } else { old[2] },
    ];
    store(of, next);
    0
}

/// Answers `get*id` from `of` when the ids are kept here, else from the kernel.
macro_rules! getter {
    ($name:ident, $of:ident, $i:expr, $t:ty) => {
        #[no_mangle]
        pub unsafe extern "C" fn $name() -> $t {
            if kept() {
                return $of[$i].load(Ordering::Relaxed);
            }
            real!($name: fn() -> $t)()
        }
    };
}
getter!(getuid, UIDS, 0, libc::uid_t);
getter!(geteuid, UIDS, 1, libc::uid_t);
getter!(getgid, GIDS, 0, libc::gid_t);
getter!(getegid, GIDS, 1, libc::gid_t);

unsafe fn get_res(of: &[AtomicU32; 3], out: [*mut u32; 3]) -> c_int {
    if out.iter().any(|p| p.is_null()) {
        return fail(libc::EFAULT);
    }
    for (p, v) in out.into_iter().zip(ids(of)) {
        *p = v;
    }
    0
}

#[no_mangle]
pub unsafe extern "C" fn getresuid(r: *mut u32, e: *mut u32, s: *mut u32) -> c_int {
    if kept() {
        return get_res(&UIDS, [r, e, s]);
    }
    real!(getresuid: fn(*mut u32, *mut u32, *mut u32) -> c_int)(r, e, s)
}

#[no_mangle]
pub unsafe extern "C" fn getresgid(r: *mut u32, e: *mut u32, s: *mut u32) -> c_int {
    if kept() {
        return get_res(&GIDS, [r, e, s]);
    }
    real!(getresgid: fn(*mut u32, *mut u32, *mut u32) -> c_int)(r, e, s)
}

/// The kernel's `call`, keeping the process's parent-death signal: the kernel clears it when
/// an effective id changes, and weft's nodes hold one (`SIGKILL` when the host goes), so a
/// daemon that really dropped its privileges (every id mapped) outlived an interrupted weft.
fn keeping_death_signal(call: impl FnOnce() -> c_int) -> c_int {
    let mut sig: c_int = 0;
    let get = [libc::PR_GET_PDEATHSIG as i64, &mut sig as *mut c_int as i64, 0, 0, 0, 0];
    // SAFETY: PR_GET_PDEATHSIG writes one int into a local.
    let had = unsafe { sys::raw(libc::SYS_prctl, get) } == 0 && sig != 0;
    let r = call();
    if had {
        let set = [libc::PR_SET_PDEATHSIG as i64, sig as i64, 0, 0, 0, 0];
        // SAFETY: a plain prctl on this process.
        unsafe { sys::raw(libc::SYS_prctl, set) };
    }
    r
}

/// A `set*id` hook: kept here, or the kernel's.
macro_rules! setter {
    ($name:ident ($($a:ident),*) => $kept:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $name($($a: u32),*) -> c_int {
            if kept() {
                return $kept;
            }
            keeping_death_signal(|| real!($name: fn($(setter!(@t $a)),*) -> c_int)($($a),*))
        }
    };
    (@t $a:ident) => { u32 };
}
setter!(setuid(id) => set_one(&UIDS, id));
setter!(setgid(id) => set_one(&GIDS, id));
setter!(seteuid(id) => if id == KEEP { fail(libc::EINVAL) } else { set_res(&UIDS, [KEEP, id, KEEP]) });
setter!(setegid(id) => if id == KEEP { fail(libc::EINVAL) } else { set_res(&GIDS, [KEEP, id, KEEP]) });
setter!(setreuid(r, e) => set_re(&UIDS, r, e));
setter!(setregid(r, e) => set_re(&GIDS, r, e));
setter!(setresuid(r, e, s) => set_res(&UIDS, [r, e, s]));
setter!(setresgid(r, e, s) => set_res(&GIDS, [r, e, s]));

/// `setfs[ug]id` answer the previous filesystem id, which here always follows the effective
/// one; the call changes nothing the kernel checks.
#[no_mangle]
pub unsafe extern "C" fn setfsuid(id: u32) -> c_int {
    if kept() {
        return UIDS[1].load(Ordering::Relaxed) as c_int;
    }
    real!(setfsuid: fn(u32) -> c_int)(id)
}

#[no_mangle]
pub unsafe extern "C" fn setfsgid(id: u32) -> c_int {
    if kept() {
        return GIDS[1].load(Ordering::Relaxed) as c_int;
    }
    real!(setfsgid: fn(u32) -> c_int)(id)
}

#[no_mangle]
pub unsafe extern "C" fn getgroups(size: c_int, list: *mut libc::gid_t) -> c_int {
    if !kept() {
        return real!(getgroups: fn(c_int, *mut libc::gid_t) -> c_int)(size, list);
    }
    let n = NGROUP.load(Ordering::Relaxed) as usize;
    if size == 0 {
        return n as c_int;
    }
    if size < 0 || (size as usize) < n {
        return fail(libc::EINVAL);
    }
    if n > 0 && list.is_null() {
        return fail(libc::EFAULT);
    }
    ptr::copy_nonoverlapping((*GROUPS.0.get()).as_ptr(), list, n);
    n as c_int
}

#[no_mangle]
pub unsafe extern "C" fn setgroups(size: size_t, list: *const libc::gid_t) -> c_int {
    if !kept() {
        return real!(setgroups: fn(size_t, *const libc::gid_t) -> c_int)(size, list);
    }
    if size > NGROUPS {
        return fail(libc::EINVAL);
    }
    if !privileged() {
        return fail(libc::EPERM);
    }
    if size > 0 && list.is_null() {
        return fail(libc::EFAULT);
    }
    ptr::copy_nonoverlapping(list, (*GROUPS.0.get()).as_mut_ptr(), size);
    NGROUP.store(size as u32, Ordering::Relaxed);
    0
}

/// glibc's `initgroups` sets the list through its own internal `setgroups`, which no hook
/// sees: the list is computed with `getgrouplist` (the same lookup) and kept here.
#[no_mangle]
pub unsafe extern "C" fn initgroups(user: *const c_char, group: libc::gid_t) -> c_int {
    if !kept() {
        return real!(initgroups: fn(*const c_char, libc::gid_t) -> c_int)(user, group);
    }
    if !privileged() {
        return fail(libc::EPERM);
    }
    let _g = Guard::enter();
    let mut n = NGROUPS as c_int;
    let list = (*GROUPS.0.get()).as_mut_ptr();
    if libc::getgrouplist(user, group, list, &mut n) < 0 && n as usize > NGROUPS {
        n = NGROUPS as c_int;
    }
    NGROUP.store(n.clamp(0, NGROUPS as c_int) as u32, Ordering::Relaxed);
    0
}

/// Whether the kept ids allow changing a file's owner to `uid`/`gid` (privileged, or to the
/// caller's own user and one of its groups); always when the ids are the kernel's.
fn may_chown(uid: u32, gid: u32) -> bool {
    if !kept() || privileged() {
        return true;
    }
    let own_user = uid == KEEP || uid == UIDS[1].load(Ordering::Relaxed);
    // SAFETY: read by the thread holding the baton, which is the only one that changes it.
    let groups = unsafe { &(&*GROUPS.0.get())[..NGROUP.load(Ordering::Relaxed) as usize] };
    own_user && (gid == KEEP || gid == GIDS[1].load(Ordering::Relaxed) || groups.contains(&gid))
}

/// A `chown` family call under the kept ids: `EPERM` where they do not allow it; otherwise
/// the kernel's answer, except that an id the namespace cannot map (`EINVAL`) succeeds and
/// changes nothing (the owner is not modelled).
pub(crate) fn chown_with(uid: u32, gid: u32, call: impl FnOnce() -> c_int) -> c_int {
    if !may_chown(uid, gid) {
        return fail(libc::EPERM);
    }
    let r = call();
    // SAFETY: reads this thread's errno.
    if r != 0 && kept() && unsafe { *libc::__errno_location() } == libc::EINVAL {
        return 0;
    }
    r
}

#[no_mangle]
pub unsafe extern "C" fn chown(path: *const c_char, uid: u32, gid: u32) -> c_int {
    chown_with(uid, gid, || real!(chown: fn(*const c_char, u32, u32) -> c_int)(path, uid, gid))
}

#[no_mangle]
pub unsafe extern "C" fn lchown(path: *const c_char, uid: u32, gid: u32) -> c_int {
    chown_with(uid, gid, || real!(lchown: fn(*const c_char, u32, u32) -> c_int)(path, uid, gid))
}

#[no_mangle]
pub unsafe extern "C" fn fchownat(
    dir: c_int,
    path: *const c_char,
    u: u32,
    g: u32,
    f: c_int,
) -> c_int {
    chown_with(u, g, || {
        real!(fchownat: fn(c_int, *const c_char, u32, u32, c_int) -> c_int)(dir, path, u, g, f)
    })
}

/// `capget`/`capset` name the process by pid; a program passes the pid `getpid` answered (the
/// virtual one, which the kernel does not know: `ESRCH`, and setpriv gave up). Its own virtual
/// pid means itself, as 0 does.
unsafe fn own_pid_as_zero(hdr: *mut c_void) {
    #[repr(C)]
    struct CapHeader {
        version: u32,
        pid: c_int,
    }
    let h = hdr as *mut CapHeader;
    if !h.is_null() && active() {
        (*h).pid = crate::pidcalls::own((*h).pid).unwrap_or((*h).pid);
    }
}

#[no_mangle]
pub unsafe extern "C" fn capget(hdr: *mut c_void, data: *mut c_void) -> c_int {
    own_pid_as_zero(hdr);
    real!(capget: fn(*mut c_void, *mut c_void) -> c_int)(hdr, data)
}

#[no_mangle]
pub unsafe extern "C" fn capset(hdr: *mut c_void, data: *const c_void) -> c_int {
    own_pid_as_zero(hdr);
    real!(capset: fn(*mut c_void, *const c_void) -> c_int)(hdr, data)
}
