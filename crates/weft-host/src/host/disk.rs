//! The simulated disks of real processes: each node's data directories (declared per group in
//! the cluster file) live on one `weft_sim::disk::Disk` of that node — the in-process model
//! with its three persistence contracts, reused, not copied. The shim sends every call on a
//! path under a data directory, or on a descriptor opened there, as an `OP_DISK` request; the
//! handlers here answer it from the model (contents, sizes, offsets, errnos, listings), and a
//! node crash draws the surviving state from decisions under the scenario's contract
//! ([`World::disk_crash`]), audited against another contract on `replay --contract`.
//!
//! Every run starts from empty data directories: the disks live in the host's memory only.
//! The namespace calls (`stat`, `rename`, `link`, `unlink`, `mkdir`, `access`, listings) are
//! [`super::disknames`]'s, advisory locks [`super::disklocks`]'; shared mappings live in backing files kept alike with the model by
//! [`super::diskmap`].
//! What the model cannot serve (symbolic links, `O_DIRECT`, `O_TMPFILE`, record
//! locks between processes, paths leaving the data directory) ends the run as unsupported,
//! naming the call.

use super::disklocks;
use super::disknames::{find, parent_ok, Found};
use super::*;
use weft_core::{stable_hash, Site, SiteKind};
use weft_sim::disk::Disk;

/// The data directories of one node and the disk they live on.
pub(super) struct NodeDisk {
    pub(super) disk: Disk,
    dirs: Vec<String>,
}

/// What an open disk descriptor refers to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Target {
    /// A file, by inode (it keeps its data when renamed or unlinked).
    File(usize),
    /// A directory, by path (a directory rename moves the paths of those under it).
    Dir(String),
}

/// An open file description of a disk file or directory.
pub(super) struct OpenFile {
    pub(super) target: Target,
    /// The path it was opened by (for messages).
    pub(super) path: String,
    /// The file offset; for a directory, the index of the next entry.
    pub(super) offset: u64,
    /// The open flags (access mode, `O_APPEND`, `O_SYNC`, `O_DSYNC`).
    flags: i32,
}

/// Every node's disk, and write calls still arriving in parts.
#[derive(Default)]
pub(super) struct Disks {
    nodes: Vec<Option<NodeDisk>>,
    /// Per thread: the parts of a write larger than one request, until its last part.
    pending: BTreeMap<usize, Vec<u8>>,
    /// Disk faults injected so far (bounded by `disk.budget`, a total over the kinds).
    injected: u32,
    /// Live shared mappings of simulated files.
    pub(super) maps: super::diskmap::Mappings,
    /// Advisory locks held on them.
    pub(super) locks: super::disklocks::Locks,
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
        let (maps, locks) = Default::default();
        Disks { nodes, pending: BTreeMap::new(), injected: 0, maps, locks }
    }
}

/// Why the disk of this run cannot be what the scenario asks for: `disk.crash_at_call` is a
/// crash point between the storage calls of one in-process handler; a real program's node
/// can already crash at every intercepted call (`rates.crash`), so a run of real programs with
/// data directories refuses the knob rather than silently ignore it. The other disk fault
/// knobs are applied ([`World::disk_fault`]).
pub(super) fn unmodelled(cfg: &HostConfig, scenario: &Scenario) -> Option<String> {
    let has_disk = (0..cfg.nodes).any(|n| !cfg.group_of(n).0.data_dirs.is_empty());
    (has_disk && !scenario.disk.crash_at_call.is_zero()).then(|| {
        "disk fault knob crash_at_call is for in-process targets: a real program's node can \
         already crash at every intercepted call (use rates.crash)"
            .to_string()
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

/// `path` with `.`, `..` and repeated `/` resolved lexically.
pub(super) fn normalize(path: &str) -> String {
    crate::config::normalize_path(path)
}

/// The NUL-terminated strings in `slot.data[..len]`.
pub(super) fn paths(slot: &Slot) -> Vec<String> {
    let len = (slot.len as usize).min(DATA_MAX);
    slot.data[..len].split(|&b| b == 0).map(|p| String::from_utf8_lossy(p).into_owned()).collect()
}

pub(super) fn err(e: i32) -> Reply {
    Reply::Ret(-(e as i64))
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
            DISK_MAP => self.disk_map(c, slot),
            DISK_UNMAP => self.disk_unmap(c, slot),
            DISK_MSYNC => self.disk_msync(c, slot),
            DISK_WRITABLE => self.disk_writable(c, slot),
            DISK_LINK => self.disk_link(c, slot),
            k => self.disk_unsupported(c, &format!("unknown disk call {k} (shim/host mismatch)")),
        }
    }

    pub(super) fn nd(&self, node: u32) -> &NodeDisk {
        self.disks.nodes[node as usize].as_ref().expect("a node with data directories")
    }

    pub(super) fn nd_mut(&mut self, node: u32) -> &mut NodeDisk {
        self.disks.nodes[node as usize].as_mut().expect("a node with data directories")
    }

    /// Ends the run: the program made a disk call the model cannot serve.
    pub(super) fn disk_unsupported(&mut self, c: Caller, what: &str) -> Reply {
        let detail = format!("{}: {what}", self.who(c.p));
        let w = what.to_string();
        // Hashed without the run's folder (it differs between parallel runs).
        let mut rel = w.clone();
        if let Some(Some(nd)) = self.disks.nodes.get(c.node as usize) {
            for (k, d) in nd.dirs.iter().enumerate() {
                rel = rel.replace(d.as_str(), &format!("{{dir{k}}}"));
            }
        }
        self.event(c.node, EventKind::Note, None, None, stable_hash(&rel), || {
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
    pub(super) fn disk_path(&self, c: Caller, dirfd: i64, path: &str) -> Result<String, String> {
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
    pub(super) fn disk_event(
        &mut self,
        node: u32,
        what: &str,
        path: &str,
        nums: &[i64],
        summary: String,
    ) {
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
        let path = match self.one_disk_path(c, slot, dirfd, "open") {
            Ok(p) => p,
            Err(reply) => return reply,
        };
        if flags & libc::O_DIRECT != 0 {
            let what = format!("open(`{path}`, O_DIRECT): direct I/O is not modelled");
            return self.disk_unsupported(c, &what);
        }
        if flags & libc::O_TMPFILE == libc::O_TMPFILE {
            let what = format!("open(`{path}`) with O_TMPFILE is not modelled");
            return self.disk_unsupported(c, &what);
        }
        // O_PATH only names the file (`cp` asks whether its target is a directory with one):
        // every flag but O_DIRECTORY is ignored, and its data calls answer EBADF (`data_fd`).
        let flags = if flags & libc::O_PATH != 0 {
            flags & (libc::O_PATH | libc::O_DIRECTORY)
        } else {
            flags
        };
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
                    self.absorb(node, i);
                    self.nd_mut(node).disk.truncate_inode(i, 0);
                    self.mirror_size(node, i);
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
        let keep = libc::O_ACCMODE | libc::O_APPEND | libc::O_SYNC | libc::O_DSYNC | libc::O_PATH;
        let file = OpenFile { target, path, offset: 0, flags: flags & keep };
        self.fds.open_file(node, fd, file);
        Reply::Ret(fd as i64)
    }

    /// The disk file or directory open at `fd` for a call on its contents: `None` (the
    /// caller's `EBADF`) also for an `O_PATH` descriptor, which only names it (stat, `*at`
    /// calls and `fchdir` take one; `read`, `lseek`, `fsync`, listing and mapping do not).
    pub(super) fn data_fd(&self, node: u32, fd: i32) -> Option<&OpenFile> {
        self.fds.file(node, fd).filter(|f| f.flags & libc::O_PATH == 0)
    }

    /// The inode and path of the disk file open at `fd` (`None`: no file there).
    pub(super) fn disk_inode(&self, node: u32, fd: i32) -> Option<(usize, String)> {
        match self.data_fd(node, fd)? {
            OpenFile { target: Target::File(i), path, .. } => Some((*i, path.clone())),
            _ => None,
        }
    }

    /// The open disk file at `fd` as (inode, offset, flags): `EBADF` when `fd` is no disk
    /// descriptor, `EISDIR` when it is a directory.
    fn open_inode(&self, node: u32, fd: i32) -> Result<(usize, u64, i32), i32> {
        match self.data_fd(node, fd) {
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
        let page_in = slot.args[4] == 1;
        if !page_in && self.disk_fault(c.node, self.scenario.disk.latent_error) {
            return self.injected(c.node, fd, "EIO (latent sector error) on read", libc::EIO);
        }
        self.absorb(c.node, i);
        let bytes = self.nd(c.node).disk.read_inode(i, at as usize, len);
        let n = bytes.len();
        slot.data[..n].copy_from_slice(bytes);
        if n > 0 && self.disk_fault(c.node, self.scenario.disk.corrupt_read) {
            let k = self.decisions.at(Site::new(SiteKind::Disk, c.node, 1)).choose(n as u64);
            slot.data[k as usize] ^= 0x40;
            let _ = self.injected(c.node, fd, &format!("byte {} of a read corrupted", at + k), 0);
        }
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
        self.absorb(node, i);
        if let Some(reply) = self.write_fault(node, fd) {
            return reply;
        }
        let shift = if self.disk_fault(node, self.scenario.disk.misdirect) {
            let _ = self.injected(node, fd, "write misdirected one block further", 0);
            self.scenario.disk.block_size as usize
        } else {
            0
        };
        let disk = &mut self.nd_mut(node).disk;
        let at = if flags & libc::O_APPEND != 0 {
            disk.inode_size(i) as u64
        } else if off < 0 {
            offset
        } else {
            off as u64
        };
        disk.write_inode(i, at as usize + shift, &bytes);
        let synced = flags & (libc::O_SYNC | libc::O_DSYNC) != 0;
        if synced {
            disk.fsync_inode(i);
        }
        self.mirror_write(node, i, at as usize + shift, &bytes);
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
        let Some(f) = self.data_fd(c.node, fd) else { return err(libc::EBADF) };
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
        let Some(f) = self.data_fd(c.node, fd) else { return err(libc::EBADF) };
        let (target, path) = (f.target.clone(), f.path.clone());
        let name = if data_only { "fdatasync" } else { "fsync" };
        if let Target::File(i) = target {
            self.absorb(c.node, i);
            if let Some(reply) = self.fsync_fault(c.node, fd, i, &path) {
                return reply;
            }
        }
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
        self.absorb(c.node, i);
        self.nd_mut(c.node).disk.truncate_inode(i, len as usize);
        self.mirror_size(c.node, i);
        let path = self.fds.file(c.node, fd).expect("open").path.clone();
        self.disk_event(c.node, "truncate", &path, &[len], format!("disk ftruncate {path} {len}"));
        Reply::Ret(0)
    }

    /// `DISK_LOCK`: a record or `flock` lock request (see `disklocks` and the protocol).
    fn disk_lock(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let (fd, mode, flags) = (slot.args[1] as i32, slot.args[2], slot.args[5]);
        let (i, _, open) = match self.open_inode(c.node, fd) {
            Ok(f) => f,
            Err(libc::EISDIR) if flags & LOCK_FLOCK != 0 => return Reply::Ret(0),
            Err(libc::EISDIR) => return err(libc::EBADF),
            Err(e) => return err(e),
        };
        let by_description = flags & (LOCK_FLOCK | LOCK_OFD) != 0;
        let owner = match self.fds.id(c.node, fd) {
            Some(id) if by_description => disklocks::Owner::Description(id),
            _ => disklocks::Owner::Process(self.procs[c.p].table),
        };
        let write = match mode {
            0 => None,
            1 => Some(false),
            _ => Some(true),
        };
        let access = open & libc::O_ACCMODE;
        let wrong = match write {
            Some(true) => access == libc::O_RDONLY,
            Some(false) => access == libc::O_WRONLY,
            None => false,
        };
        if wrong && flags & LOCK_FLOCK == 0 {
            return err(libc::EBADF);
        }
        let (start, end) = (slot.args[3] as u64, slot.args[4] as u64);
        let flock = flags & LOCK_FLOCK != 0;
        let ask = disklocks::Ask { owner, flock, write, start, end };
        if flags & LOCK_QUERY != 0 {
            let found = self.lock_query(c, i, &ask);
            let (kind, at, len, pid) =
                found.map_or((0, 0, 0, 0), |(w, a, l, p)| (1 + w as i64, a, l, p));
            slot.args[1] = kind;
            slot.args[2] = at as i64;
            slot.args[3] = len as i64;
            slot.args[4] = pid;
            return Reply::Ret(0);
        }
        self.lock_request(c, i, ask, flags & LOCK_WAIT != 0)
    }

    fn disk_getfl(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        match self.fds.file(c.node, slot.args[1] as i32) {
            Some(f) => Reply::Ret((f.flags | libc::O_LARGEFILE) as i64),
            None => err(libc::EBADF),
        }
    }

    fn disk_sync(&mut self, c: Caller) -> Reply {
        self.absorb_node(c.node);
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

/// The disk fault knobs on real programs' data directories, as in-process (`disk.eio`,
/// `disk.enospc`, `disk.fsync_drops_pages`, `disk.latent_error`, `disk.corrupt_read`,
/// `disk.misdirect`): each drawn per call in the fault phase, within `disk.budget`, and named
/// in the trace.
impl World<'_> {
    /// Whether fault `p` fires at this call of node `node`: in the fault phase, within the
    /// budget, one decision at the node's disk-fault site (apart from its crash-state
    /// decisions).
    pub(super) fn disk_fault(&mut self, node: u32, p: weft_core::Ratio) -> bool {
        let s = self.scenario;
        if p.is_zero()
            || self.healed
            || self.now < SimTime::ZERO + s.fault_start
            || self.disks.injected >= s.disk.budget
        {
            return false;
        }
        let hit = self.decisions.at(Site::new(SiteKind::Disk, node, 1)).chance(p);
        self.disks.injected += u32::from(hit);
        hit
    }

    /// A trace note for an injected fault on `fd`'s file; the reply fails with `errno` (0:
    /// the call goes on, e.g. a corrupted read).
    pub(super) fn injected(&mut self, node: u32, fd: i32, what: &str, errno: i32) -> Reply {
        let path = self.fds.file(node, fd).map(|f| f.path.clone()).unwrap_or_default();
        let text = format!("disk fault (injected): {what}: {path}");
        // Hashed with the path relative to the data directories, as every disk event.
        self.disk_event(node, "fault", &path, &[errno as i64, stable_hash(what) as i64], text);
        err(errno)
    }

    /// `disk.eio` / `disk.enospc` on a write: the write fails and changes nothing.
    fn write_fault(&mut self, node: u32, fd: i32) -> Option<Reply> {
        if self.disk_fault(node, self.scenario.disk.eio) {
            return Some(self.injected(node, fd, "EIO on write", libc::EIO));
        }
        if self.disk_fault(node, self.scenario.disk.enospc) {
            return Some(self.injected(node, fd, "ENOSPC on write", libc::ENOSPC));
        }
        None
    }

    /// `disk.eio` on an fsync (it fails, the data stays dirty) and `disk.fsync_drops_pages`
    /// (it fails and the dirty pages are dropped: reads still see them, a retried fsync
    /// succeeds, a crash loses them — Linux's behaviour).
    fn fsync_fault(&mut self, node: u32, fd: i32, i: usize, path: &str) -> Option<Reply> {
        if self.disk_fault(node, self.scenario.disk.eio) {
            return Some(self.injected(node, fd, "EIO on fsync", libc::EIO));
        }
        let current = self.nd(node).disk.file_inode(path) == Some(i);
        if current && self.disk_fault(node, self.scenario.disk.fsync_drops_pages) {
            let _ = self.nd_mut(node).disk.fsync_dropping_pages(path);
            return Some(self.injected(node, fd, "EIO on fsync, dirty pages dropped", libc::EIO));
        }
        None
    }
}
