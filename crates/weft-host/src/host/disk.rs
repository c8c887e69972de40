//! The simulated disks of real processes: each node's data directories (declared per group in
//! the cluster file) live on one `weft_sim::disk::Disk` of that node — the in-process model
//! with its three persistence contracts, reused, not copied. The shim sends every call on a
//! path under a data directory, or on a descriptor opened there, as an `OP_DISK` request; the
//! handlers here answer it from the model (contents, sizes, offsets, errnos, listings), and a
//! node crash draws the surviving state from decisions under the scenario's contract
//! ([`World::disk_crash`]), audited against another contract on `replay --contract`.
//!
//! Every run starts from empty data directories: the disks live in the host's memory only.
//! What the model cannot serve (directory renames, `rmdir`, `O_DIRECT`, `O_TMPFILE`, record
//! locks between processes, paths leaving the data directory) ends the run as unsupported,
//! naming the call.

use super::*;
use weft_core::{stable_hash, Site};
use weft_sim::disk::Disk;

/// The data directories of one node and the disk they live on.
pub(super) struct NodeDisk {
    disk: Disk,
    dirs: Vec<String>,
}

/// What an open disk descriptor refers to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Target {
    /// A file, by inode (it keeps its data when renamed or unlinked).
    File(usize),
    /// A directory, by path (directories are never renamed: that is refused).
    Dir(String),
}

/// An open file description of a disk file or directory.
pub(super) struct OpenFile {
    target: Target,
    /// The path it was opened by (for messages).
    path: String,
    /// The file offset; for a directory, the index of the next entry.
    offset: u64,
    /// The open flags (access mode, `O_APPEND`, `O_SYNC`, `O_DSYNC`).
    flags: i32,
}

/// Every node's disk, and write calls still arriving in parts.
#[derive(Default)]
pub(super) struct Disks {
    nodes: Vec<Option<NodeDisk>>,
    /// Per thread: the parts of a write larger than one request, until its last part.
    pending: BTreeMap<usize, Vec<u8>>,
}

impl Disks {
    /// A fresh disk for each node with data directories: the directories exist (and are
    /// durable), empty.
    pub(super) fn new(cfg: &HostConfig, block_size: u32) -> Disks {
        let nodes = (0..cfg.nodes)
            .map(|node| {
                let dirs = cfg.data_dirs_for(node);
                (!dirs.is_empty()).then(|| {
                    let mut disk = Disk::new(block_size);
                    for d in &dirs {
                        make_dirs(&mut disk, d);
                    }
                    NodeDisk { disk, dirs }
                })
            })
            .collect();
        Disks { nodes, pending: BTreeMap::new() }
    }
}

/// Why the disk of this run cannot be what the scenario asks for: the disk fault knobs are
/// applied to in-process targets only, so a run of real programs with data directories refuses
/// them rather than silently ignore them.
pub(super) fn unmodelled(cfg: &HostConfig, scenario: &Scenario) -> Option<String> {
    let d = &scenario.disk;
    let knobs = [
        ("crash_at_call", d.crash_at_call),
        ("eio", d.eio),
        ("enospc", d.enospc),
        ("fsync_drops_pages", d.fsync_drops_pages),
        ("corrupt_read", d.corrupt_read),
        ("latent_error", d.latent_error),
        ("misdirect", d.misdirect),
    ];
    let on: Vec<&str> = knobs.iter().filter(|(_, r)| !r.is_zero()).map(|(k, _)| *k).collect();
    let has_disk = (0..cfg.nodes).any(|n| !cfg.group_of(n).0.data_dirs.is_empty());
    (has_disk && !on.is_empty()).then(|| {
        format!(
            "disk fault knobs ({}) are not applied to real programs' data directories yet \
             (a crash already falls between any two intercepted calls)",
            on.join(", ")
        )
    })
}

/// Creates `dir` and its ancestors on `disk`, each durable.
fn make_dirs(disk: &mut Disk, dir: &str) {
    let mut at = String::new();
    for part in dir.split('/').filter(|p| !p.is_empty()) {
        let parent = at.clone();
        at = format!("{at}/{part}");
        if !disk.is_dir(&at) {
            let _ = disk.mkdir(&at);
            let _ = disk.fsync_dir(&parent);
        }
    }
}

fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// What a path names on a disk.
enum Found {
    File(usize),
    Dir,
    Nothing,
}

fn find(disk: &Disk, path: &str) -> Found {
    if let Some(i) = disk.file_inode(path) {
        Found::File(i)
    } else if disk.is_dir(path) {
        Found::Dir
    } else {
        Found::Nothing
    }
}

/// Whether `path`'s parent is a directory: else `ENOTDIR` (an ancestor is a file) or `ENOENT`.
fn parent_ok(disk: &Disk, path: &str) -> Result<(), i64> {
    let dir = parent(path);
    if disk.is_dir(dir) {
        return Ok(());
    }
    let mut at = String::new();
    for part in dir.split('/').filter(|p| !p.is_empty()) {
        at = format!("{at}/{part}");
        if disk.file_inode(&at).is_some() {
            return Err(-(libc::ENOTDIR as i64));
        }
        if !disk.is_dir(&at) {
            break;
        }
    }
    Err(-(libc::ENOENT as i64))
}

/// `path` with `.`, `..` and repeated `/` resolved lexically.
fn normalize(path: &str) -> String {
    crate::config::normalize_path(path)
}

/// The NUL-terminated strings in `slot.data[..len]`.
fn paths(slot: &Slot) -> Vec<String> {
    let len = (slot.len as usize).min(DATA_MAX);
    slot.data[..len].split(|&b| b == 0).map(|p| String::from_utf8_lossy(p).into_owned()).collect()
}

fn err(e: i32) -> Reply {
    Reply::Ret(-(e as i64))
}

/// Inode numbers `stat` reports: files from 0x1000, directories by a hash of their path.
fn dir_ino(path: &str) -> i64 {
    (0x4000_0000 | (stable_hash(path) & 0x3fff_ffff)) as i64
}

/// One `linux_dirent64` record: inode, next position, length, type, name, NUL, padding.
fn dirent(out: &mut Vec<u8>, ino: i64, next: i64, dir: bool, name: &str) {
    let len = (19 + name.len() + 1 + 7) & !7;
    out.extend_from_slice(&ino.to_ne_bytes());
    out.extend_from_slice(&next.to_ne_bytes());
    out.extend_from_slice(&(len as u16).to_ne_bytes());
    out.push(if dir { libc::DT_DIR } else { libc::DT_REG });
    out.extend_from_slice(name.as_bytes());
    out.resize(out.len() + len - 19 - name.len(), 0);
}

impl World<'_> {
    /// A call on the node's simulated disk: one handler per `DISK_*` kind.
    pub(super) fn op_disk(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        if self.disks.nodes.get(c.node as usize).is_none_or(|d| d.is_none()) {
            return self.disk_unsupported(c, "a disk call on a node without data directories");
        }
        match slot.args[0] {
            DISK_OPEN => self.disk_open(c, slot),
            DISK_READ => self.disk_read(c, slot),
            DISK_WRITE => self.disk_write(c, slot),
            DISK_SEEK => self.disk_seek(c, slot),
            DISK_FSYNC => self.disk_fsync(c, slot),
            DISK_TRUNCATE => self.disk_truncate(c, slot),
            DISK_STAT => self.disk_stat(c, slot),
            DISK_RENAME => self.disk_rename(c, slot),
            DISK_UNLINK => self.disk_unlink(c, slot),
            DISK_MKDIR => self.disk_mkdir(c, slot),
            DISK_ACCESS => self.disk_access(c, slot),
            DISK_LIST => self.disk_list(c, slot),
            DISK_LOCK => self.disk_lock(c, slot),
            DISK_GETFL => self.disk_getfl(c, slot),
            DISK_SYNC => self.disk_sync(c),
            k => self.disk_unsupported(c, &format!("unknown disk call {k} (shim/host mismatch)")),
        }
    }

    fn nd(&self, node: u32) -> &NodeDisk {
        self.disks.nodes[node as usize].as_ref().expect("a node with data directories")
    }

    fn nd_mut(&mut self, node: u32) -> &mut NodeDisk {
        self.disks.nodes[node as usize].as_mut().expect("a node with data directories")
    }

    /// Ends the run: the program made a disk call the model cannot serve.
    fn disk_unsupported(&mut self, c: Caller, what: &str) -> Reply {
        let detail = format!("node {}: {what}", c.node);
        let w = what.to_string();
        self.event(c.node, EventKind::Note, None, None, stable_hash(what), || {
            format!("unsupported: {w}")
        });
        self.fail(Outcome::Unsupported { detail });
        for p in 0..self.procs.len() {
            if self.procs[p].alive && self.procs[p].node == c.node {
                self.kill_process(p);
            }
        }
        Reply::Settled
    }

    /// The path a request names (`dirfd` + the path in `data`), absolute and normalised, if it
    /// lies under one of the node's data directories.
    fn disk_path(&self, c: Caller, dirfd: i64, path: &str) -> Result<String, String> {
        let full = if path.starts_with('/') || dirfd == libc::AT_FDCWD as i64 {
            normalize(path)
        } else {
            match self.fds.file(c.node, dirfd as i32).map(|f| &f.target) {
                Some(Target::Dir(d)) => normalize(&format!("{d}/{path}")),
                _ => return Err(format!("a path relative to descriptor {dirfd}, not a directory")),
            }
        };
        let nd = self.nd(c.node);
        if nd.dirs.iter().any(|d| full == *d || full.starts_with(&format!("{d}/"))) {
            Ok(full)
        } else {
            Err(format!("`{full}` leaves the node's data directories"))
        }
    }

    /// A trace event for a call that changed the disk. The payload hashes the call with paths
    /// relative to the data directories (a run's folder differs between parallel runs).
    fn disk_event(&mut self, node: u32, what: &str, path: &str, nums: &[i64], summary: String) {
        let nd = self.nd(node);
        let rel = nd
            .dirs
            .iter()
            .enumerate()
            .find_map(|(k, d)| path.strip_prefix(d.as_str()).map(|r| format!("{k}:{r}")))
            .unwrap_or_default();
        let mut h = StableHasher::new();
        h.write(what.as_bytes());
        h.write(rel.as_bytes());
        for n in nums {
            h.write_u64(*n as u64);
        }
        self.event(node, EventKind::Note, None, None, h.finish(), || summary);
    }

    fn disk_open(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let (fd, flags, dirfd) = (slot.args[1] as i32, slot.args[2] as i32, slot.args[3]);
        let raw = paths(slot).swap_remove(0);
        let path = match self.disk_path(c, dirfd, &raw) {
            Ok(p) => p,
            Err(why) => return self.disk_unsupported(c, &format!("open: {why}")),
        };
        if flags & libc::O_DIRECT != 0 {
            let what = format!("open(`{path}`, O_DIRECT): direct I/O is not modelled");
            return self.disk_unsupported(c, &what);
        }
        if flags & libc::O_TMPFILE == libc::O_TMPFILE || flags & libc::O_PATH != 0 {
            let what = format!("open(`{path}`) with O_TMPFILE or O_PATH is not modelled");
            return self.disk_unsupported(c, &what);
        }
        let writable = flags & libc::O_ACCMODE != libc::O_RDONLY;
        let node = c.node;
        let target = match find(&self.nd(node).disk, &path) {
            Found::Dir if writable || flags & libc::O_CREAT != 0 => return err(libc::EISDIR),
            Found::Dir => Target::Dir(path.clone()),
            Found::File(_)
                if flags & (libc::O_CREAT | libc::O_EXCL) == libc::O_CREAT | libc::O_EXCL =>
            {
                return err(libc::EEXIST)
            }
            Found::File(_) if flags & libc::O_DIRECTORY != 0 => return err(libc::ENOTDIR),
            Found::File(i) => {
                if flags & libc::O_TRUNC != 0 && self.nd(node).disk.inode_size(i) > 0 {
                    self.nd_mut(node).disk.truncate_inode(i, 0);
                    let s = format!("disk open {path} O_TRUNC");
                    self.disk_event(node, "trunc", &path, &[0], s);
                }
                Target::File(i)
            }
            Found::Nothing if flags & libc::O_CREAT == 0 => {
                return Reply::Ret(parent_ok(&self.nd(node).disk, &path).err().unwrap_or(-2))
            }
            Found::Nothing => {
                if let Err(e) = parent_ok(&self.nd(node).disk, &path) {
                    return Reply::Ret(e);
                }
                let disk = &mut self.nd_mut(node).disk;
                if disk.create(&path).is_err() {
                    return err(libc::ENOENT);
                }
                let i = disk.file_inode(&path).expect("just created");
                self.disk_event(node, "create", &path, &[], format!("disk create {path}"));
                Target::File(i)
            }
        };
        self.close_fd(node, fd);
        let keep = libc::O_ACCMODE | libc::O_APPEND | libc::O_SYNC | libc::O_DSYNC;
        let file = OpenFile { target, path, offset: 0, flags: flags & keep };
        self.fds.open_file(node, fd, file);
        Reply::Ret(fd as i64)
    }

    /// The open disk file at `fd` as (inode, offset, flags): `EBADF` when `fd` is no disk
    /// descriptor, `EISDIR` when it is a directory.
    fn open_inode(&self, node: u32, fd: i32) -> Result<(usize, u64, i32), i32> {
        match self.fds.file(node, fd) {
            None => Err(libc::EBADF),
            Some(OpenFile { target: Target::Dir(_), .. }) => Err(libc::EISDIR),
            Some(f @ OpenFile { target: Target::File(i), .. }) => Ok((*i, f.offset, f.flags)),
        }
    }

    fn disk_read(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let (fd, off, len) = (slot.args[1] as i32, slot.args[2], slot.args[3]);
        let (i, offset, flags) = match self.open_inode(c.node, fd) {
            Ok(f) => f,
            Err(e) => return err(e),
        };
        if flags & libc::O_ACCMODE == libc::O_WRONLY {
            return err(libc::EBADF);
        }
        let at = if off < 0 { offset } else { off as u64 };
        let len = (len.max(0) as usize).min(DATA_MAX);
        let bytes = self.nd(c.node).disk.read_inode(i, at as usize, len);
        let n = bytes.len();
        slot.data[..n].copy_from_slice(bytes);
        if off < 0 {
            self.fds.file_mut(c.node, fd).expect("open").offset = at + n as u64;
        }
        Reply::Ret(n as i64)
    }

    fn disk_write(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let (fd, off, more) = (slot.args[1] as i32, slot.args[2], slot.args[3] == 1);
        let (i, offset, flags) = match self.open_inode(c.node, fd) {
            Ok(f) => f,
            Err(libc::EISDIR) => return err(libc::EBADF),
            Err(e) => return err(e),
        };
        if flags & libc::O_ACCMODE == libc::O_RDONLY {
            return err(libc::EBADF);
        }
        let len = (slot.len as usize).min(DATA_MAX);
        let mut bytes = self.disks.pending.remove(&c.t).unwrap_or_default();
        bytes.extend_from_slice(&slot.data[..len]);
        if more {
            self.disks.pending.insert(c.t, bytes);
            return Reply::Ret(len as i64);
        }
        let node = c.node;
        let disk = &mut self.nd_mut(node).disk;
        let at = if flags & libc::O_APPEND != 0 {
            disk.inode_size(i) as u64
        } else if off < 0 {
            offset
        } else {
            off as u64
        };
        disk.write_inode(i, at as usize, &bytes);
        let synced = flags & (libc::O_SYNC | libc::O_DSYNC) != 0;
        if synced {
            disk.fsync_inode(i);
        }
        if off < 0 {
            self.fds.file_mut(node, fd).expect("open").offset = at + bytes.len() as u64;
        }
        let path = self.fds.file(node, fd).expect("open").path.clone();
        let n = bytes.len();
        let s =
            format!("disk write {path} at={at} len={n}{}", if synced { " (O_SYNC)" } else { "" });
        self.disk_event(
            node,
            "write",
            &path,
            &[at as i64, n as i64, stable_hash(&bytes) as i64],
            s,
        );
        Reply::Ret(n as i64)
    }

    fn disk_seek(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let (fd, off, whence) = (slot.args[1] as i32, slot.args[2], slot.args[3] as i32);
        let Some(f) = self.fds.file(c.node, fd) else { return err(libc::EBADF) };
        let size = match &f.target {
            Target::File(i) => self.nd(c.node).disk.inode_size(*i) as i64,
            Target::Dir(_) if whence != libc::SEEK_SET => return err(libc::EINVAL),
            Target::Dir(_) => 0,
        };
        let new = match whence {
            libc::SEEK_SET => off,
            libc::SEEK_CUR => f.offset as i64 + off,
            libc::SEEK_END => size + off,
            libc::SEEK_DATA if off >= size => return err(libc::ENXIO),
            libc::SEEK_DATA => off,
            libc::SEEK_HOLE if off > size => return err(libc::ENXIO),
            libc::SEEK_HOLE => size,
            _ => return err(libc::EINVAL),
        };
        if new < 0 {
            return err(libc::EINVAL);
        }
        self.fds.file_mut(c.node, fd).expect("open").offset = new as u64;
        Reply::Ret(new)
    }

    fn disk_fsync(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let fd = slot.args[1] as i32;
        let data_only = slot.args[2] == 1;
        let Some(f) = self.fds.file(c.node, fd) else { return err(libc::EBADF) };
        let (target, path) = (f.target.clone(), f.path.clone());
        let name = if data_only { "fdatasync" } else { "fsync" };
        match target {
            Target::File(i) => self.nd_mut(c.node).disk.fsync_inode(i),
            Target::Dir(d) => {
                let _ = self.nd_mut(c.node).disk.fsync_dir(&d);
            }
        }
        self.disk_event(c.node, name, &path, &[], format!("disk {name} {path}"));
        Reply::Ret(0)
    }

    fn disk_truncate(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let (fd, len) = (slot.args[1] as i32, slot.args[2]);
        let (i, _, flags) = match self.open_inode(c.node, fd) {
            Ok(f) => f,
            Err(libc::EISDIR) => return err(libc::EINVAL),
            Err(e) => return err(e),
        };
        if len < 0 || flags & libc::O_ACCMODE == libc::O_RDONLY {
            return err(libc::EINVAL);
        }
        self.nd_mut(c.node).disk.truncate_inode(i, len as usize);
        let path = self.fds.file(c.node, fd).expect("open").path.clone();
        self.disk_event(c.node, "truncate", &path, &[len], format!("disk ftruncate {path} {len}"));
        Reply::Ret(0)
    }

    fn disk_stat(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let (fd, flags, by_fd) = (slot.args[1], slot.args[2] as i32, slot.args[3] == 1);
        let raw = paths(slot).swap_remove(0);
        let target = if by_fd || (raw.is_empty() && flags & libc::AT_EMPTY_PATH != 0) {
            match self.fds.file(c.node, fd as i32) {
                Some(f) => Some(f.target.clone()),
                None => return err(libc::EBADF),
            }
        } else {
            let path = match self.disk_path(c, fd, &raw) {
                Ok(p) => p,
                Err(why) => return self.disk_unsupported(c, &format!("stat: {why}")),
            };
            match find(&self.nd(c.node).disk, &path) {
                Found::File(i) => Some(Target::File(i)),
                Found::Dir => Some(Target::Dir(path)),
                Found::Nothing => {
                    return Reply::Ret(parent_ok(&self.nd(c.node).disk, &path).err().unwrap_or(-2))
                }
            }
        };
        let disk = &self.nd(c.node).disk;
        let (mode, size, ino, links) = match target.expect("found") {
            Target::File(i) => (
                libc::S_IFREG | 0o644,
                disk.inode_size(i) as i64,
                0x1000 + i as i64,
                disk.inode_links(i) as i64,
            ),
            Target::Dir(d) => (libc::S_IFDIR | 0o755, 4096, dir_ino(&d), 2),
        };
        slot.args[1] = mode as i64;
        slot.args[2] = size;
        slot.args[3] = ino;
        slot.args[4] = links;
        Reply::Ret(0)
    }

    fn disk_rename(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let (d1, d2, flags) = (slot.args[1], slot.args[2], slot.args[3] as u32);
        let names = paths(slot);
        let (from, to) = match (
            self.disk_path(c, d1, names.first().map_or("", |s| s)),
            self.disk_path(c, d2, names.get(1).map_or("", |s| s)),
        ) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(why), _) | (_, Err(why)) => {
                return self.disk_unsupported(c, &format!("rename: {why}"))
            }
        };
        if flags & !libc::RENAME_NOREPLACE != 0 {
            let what = format!("renameat2(`{from}`, `{to}`) with flags {flags:#x} is not modelled");
            return self.disk_unsupported(c, &what);
        }
        let disk = &self.nd(c.node).disk;
        match find(disk, &from) {
            Found::Nothing => return Reply::Ret(parent_ok(disk, &from).err().unwrap_or(-2)),
            Found::Dir => {
                let what =
                    format!("rename of the directory `{from}`: directory renames are not modelled");
                return self.disk_unsupported(c, &what);
            }
            Found::File(_) => {}
        }
        match find(disk, &to) {
            Found::Dir => return err(libc::EISDIR),
            Found::File(_) if flags & libc::RENAME_NOREPLACE != 0 => return err(libc::EEXIST),
            _ => {}
        }
        if let Err(e) = parent_ok(disk, &to) {
            return Reply::Ret(e);
        }
        let _ = self.nd_mut(c.node).disk.rename(&from, &to);
        let s = format!("disk rename {from} -> {to}");
        self.disk_event(c.node, "rename", &from, &[stable_hash(&to) as i64], s);
        Reply::Ret(0)
    }

    fn disk_unlink(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let (dirfd, flags) = (slot.args[1], slot.args[2] as i32);
        let raw = paths(slot).swap_remove(0);
        let path = match self.disk_path(c, dirfd, &raw) {
            Ok(p) => p,
            Err(why) => return self.disk_unsupported(c, &format!("unlink: {why}")),
        };
        if flags & libc::AT_REMOVEDIR != 0 {
            let what = format!("rmdir(`{path}`): removing directories is not modelled");
            return self.disk_unsupported(c, &what);
        }
        let disk = &self.nd(c.node).disk;
        match find(disk, &path) {
            Found::Nothing => return Reply::Ret(parent_ok(disk, &path).err().unwrap_or(-2)),
            Found::Dir => return err(libc::EISDIR),
            Found::File(_) => {}
        }
        let _ = self.nd_mut(c.node).disk.unlink(&path);
        self.disk_event(c.node, "unlink", &path, &[], format!("disk unlink {path}"));
        Reply::Ret(0)
    }

    fn disk_mkdir(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let raw = paths(slot).swap_remove(0);
        let path = match self.disk_path(c, slot.args[1], &raw) {
            Ok(p) => p,
            Err(why) => return self.disk_unsupported(c, &format!("mkdir: {why}")),
        };
        let disk = &self.nd(c.node).disk;
        if !matches!(find(disk, &path), Found::Nothing) {
            return err(libc::EEXIST);
        }
        if let Err(e) = parent_ok(disk, &path) {
            return Reply::Ret(e);
        }
        let _ = self.nd_mut(c.node).disk.mkdir(&path);
        self.disk_event(c.node, "mkdir", &path, &[], format!("disk mkdir {path}"));
        Reply::Ret(0)
    }

    fn disk_access(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let raw = paths(slot).swap_remove(0);
        let path = match self.disk_path(c, slot.args[1], &raw) {
            Ok(p) => p,
            Err(why) => return self.disk_unsupported(c, &format!("access: {why}")),
        };
        let disk = &self.nd(c.node).disk;
        match find(disk, &path) {
            Found::Nothing => Reply::Ret(parent_ok(disk, &path).err().unwrap_or(-2)),
            Found::File(_) if slot.args[2] as i32 & libc::X_OK != 0 => err(libc::EACCES),
            _ => Reply::Ret(0),
        }
    }

    fn disk_list(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let (fd, cap) = (slot.args[1] as i32, (slot.args[2].max(0) as usize).min(DATA_MAX));
        let Some(f) = self.fds.file(c.node, fd) else { return err(libc::EBADF) };
        let Target::Dir(dir) = f.target.clone() else { return err(libc::ENOTDIR) };
        let from = f.offset as usize;
        let mut all = vec![(".".to_string(), true), ("..".to_string(), true)];
        all.extend(self.nd(c.node).disk.entries(&dir));
        let mut out = Vec::new();
        let mut next = from;
        for (name, is_dir) in all.iter().skip(from) {
            let mut rec = Vec::new();
            let path = format!("{dir}/{name}");
            let ino = match self.nd(c.node).disk.file_inode(&path) {
                Some(i) => 0x1000 + i as i64,
                None => dir_ino(&normalize(&path)),
            };
            dirent(&mut rec, ino, next as i64 + 1, *is_dir, name);
            if out.len() + rec.len() > cap {
                break;
            }
            out.extend_from_slice(&rec);
            next += 1;
        }
        if out.is_empty() && next < all.len() {
            return err(libc::EINVAL);
        }
        slot.data[..out.len()].copy_from_slice(&out);
        self.fds.file_mut(c.node, fd).expect("open").offset = next as u64;
        Reply::Ret(out.len() as i64)
    }

    fn disk_lock(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let fd = slot.args[1] as i32;
        let (i, path) = match self.fds.file(c.node, fd) {
            Some(OpenFile { target: Target::File(i), path, .. }) => (*i, path.clone()),
            Some(_) => return err(libc::EINVAL),
            None => return err(libc::EBADF),
        };
        let mine = self.procs[c.p].table;
        let tables = self.fds.file_tables(c.node, |f| f.target == Target::File(i));
        if tables.iter().any(|&t| t != mine) {
            let what = format!(
                "fcntl record lock on `{path}`, which another process of the node has open: \
                 locks between processes are not modelled"
            );
            return self.disk_unsupported(c, &what);
        }
        Reply::Ret(0)
    }

    fn disk_getfl(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        match self.fds.file(c.node, slot.args[1] as i32) {
            Some(f) => Reply::Ret((f.flags | libc::O_LARGEFILE) as i64),
            None => err(libc::EBADF),
        }
    }

    fn disk_sync(&mut self, c: Caller) -> Reply {
        self.nd_mut(c.node).disk.sync_all();
        let dir = self.nd(c.node).dirs[0].clone();
        self.disk_event(c.node, "sync", &dir, &[], "disk sync".into());
        Reply::Ret(0)
    }

    /// Node `node` crashed: its disk keeps a state drawn under the scenario's contract (each
    /// loss a trace note naming the rule that allowed it); on `replay --contract C`, a state
    /// `C` does not allow ends the run as outside the model.
    pub(super) fn disk_crash(&mut self, node: u32) {
        let contract = self.scenario.disk.contract;
        let audit = self.scenario.disk.audit;
        let Some(nd) = self.disks.nodes.get_mut(node as usize).and_then(|d| d.as_mut()) else {
            return;
        };
        let before = audit.map(|_| nd.disk.clone());
        let base = self.decisions.set_base(Site::disk(node));
        let (state, losses) = nd.disk.crash(contract, self.decisions);
        self.decisions.set_base(base);
        for (k, loss) in losses.into_iter().enumerate() {
            self.event(node, EventKind::Note, None, None, k as u64, || loss);
        }
        if let (Some(a), Some(before)) = (audit, before) {
            if let Err(rule) = before.allows(a, &state) {
                self.fail(Outcome::OutsideModel {
                    detail: format!(
                        "the crash state of n{node} at {} is not reachable under `{}`: {rule}",
                        self.now.to_string().trim(),
                        a.name()
                    ),
                });
            }
        }
    }
}
