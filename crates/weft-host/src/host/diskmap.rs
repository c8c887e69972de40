//! Shared mappings of simulated files (`mmap(MAP_SHARED)` of a data-directory file, any
//! protection). The disk model has no pages a process could share, so while a file is mapped
//! shared on a node its bytes also live in a real backing file the host keeps (in the run's
//! folder, or a folder of the temporary directory), and every shared mapping of it on the node maps
//! that file: stores through one mapping are seen by the node's other mappings at once, as
//! in one page cache, and a mapping sees `write`s and truncations as they happen.
//!
//! The model and the backing file are kept alike: every change the model makes to a mapped
//! file is made to the backing file too ([`World::mirror_write`], [`World::mirror_size`]), and
//! before the model next serves the file (a read, write, truncate, `fsync`, `msync`, `sync`)
//! the stores made through writable mappings since are taken in ([`World::absorb`]; a file
//! only ever mapped read-only is never compared, whatever its size): each page that
//! differs becomes a write to the model's page cache, named in the trace, so a crash may lose
//! it as the scenario's contract allows, and `fsync` or `msync(MS_SYNC)` makes it durable. A
//! mapping ends with its `munmap`, its process's exit or `exec` (the page cache keeps its
//! stores: they are taken in then), or its node's crash (taken in first, then the crash
//! draws what survives); the backing file goes with the file's last mapping on the node. A
//! `fork`ed child inherits its parent's mappings.

use super::*;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use weft_core::{stable_hash, Site, SiteKind};

/// One live shared mapping.
#[derive(Clone)]
struct Mapping {
    node: u32,
    inode: usize,
    path: String,
    /// It may be written through (`PROT_WRITE`, now or by a later `mprotect`).
    writable: bool,
}

/// The real file holding a mapped simulated file's bytes.
struct Backing {
    file: std::fs::File,
    path: PathBuf,
    /// Its path as the node's processes see it (under the run's view of its folder).
    shown: PathBuf,
    /// The simulated file's path when it was first mapped (for the trace).
    name: String,
    /// A writable mapping of it lived since its stores were last taken in: only then can the
    /// backing file differ from the model (a read-only one is never compared, whatever its
    /// size).
    stored: bool,
    /// A byte the page-in corrupted (`disk.corrupt_read`), with its true value: it is in the
    /// page cache, not a store, until a write of the model replaces it.
    corrupted: Option<(usize, u8)>,
}

/// Every live shared mapping, by (process table, token), and the backing files.
#[derive(Default)]
pub(super) struct Mappings {
    live: BTreeMap<(u32, i64), Mapping>,
    next: i64,
    backing: BTreeMap<(u32, usize), Backing>,
    /// The folder of the backing files in the host's temporary directory, when the run has
    /// no folder of its own (removed with the run).
    dir: Option<PathBuf>,
}

/// Where backing files go: (the folder, as the node's processes see it). In the run's folder
/// when there is one, which the nodes see (at `VIEW_DIR` inside their own `/tmp` when the run
/// has a view: a file in the machine's `/tmp` would be copied up into the node's overlay at
/// its first writable open, and stores would go to the copy); else the host's temporary
/// directory.
pub(super) fn backing_dirs(cfg: &HostConfig) -> Option<(PathBuf, PathBuf)> {
    let run = cfg.run_dir.as_ref()?;
    let real = run.join(".weft-maps");
    let shown = if cfg.run_view {
        Path::new(crate::workdir::VIEW_DIR).join(".weft-maps")
    } else {
        real.clone()
    };
    Some((real, shown))
}

impl Drop for Mappings {
    fn drop(&mut self) {
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Runs of the host share a process: each run's folder has a number of its own.
static FOLDERS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Mappings {
    /// A fork: table `child` maps what `parent` maps, under the same tokens (the child's
    /// shim inherits them with its memory).
    pub(super) fn fork(&mut self, parent: u32, child: u32) {
        let copied: Vec<(i64, Mapping)> = self
            .live
            .range((parent, 0)..=(parent, i64::MAX))
            .map(|(k, m)| (k.1, m.clone()))
            .collect();
        for (token, m) in copied {
            self.live.insert((child, token), m);
        }
    }

    /// True while some process of `node` maps `inode`.
    fn mapped(&self, node: u32, inode: usize) -> bool {
        self.live.values().any(|m| m.node == node && m.inode == inode)
    }

    /// The backing files of `node`'s mapped files that no mapping uses any more.
    fn unused(&self) -> Vec<(u32, usize)> {
        self.backing.keys().copied().filter(|&(n, i)| !self.mapped(n, i)).collect()
    }

    /// A new backing file holding `bytes`, opened read-write, in `dirs` (see
    /// [`backing_dirs`]; `None`: a folder of the host's temporary directory).
    fn make(
        &mut self,
        (node, inode): (u32, usize),
        bytes: &[u8],
        name: &str,
        dirs: Option<(PathBuf, PathBuf)>,
    ) -> io::Result<&mut Backing> {
        let (dir, shown_dir) = match dirs {
            Some(d) => d,
            None => {
                if self.dir.is_none() {
                    let k = FOLDERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let tmp = std::env::temp_dir();
                    self.dir = Some(tmp.join(format!("weft-maps-{}-{k}", std::process::id())));
                }
                let d = self.dir.clone().expect("set above");
                (d.clone(), d)
            }
        };
        std::fs::create_dir_all(&dir)?;
        let file_name = format!("n{node}-i{inode}");
        let (path, shown) = (dir.join(&file_name), shown_dir.join(&file_name));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)?;
        file.write_all_at(bytes, 0)?;
        let name = name.to_string();
        let b = Backing { file, path, shown, name, corrupted: None, stored: false };
        Ok(self.backing.entry((node, inode)).or_insert(b))
    }
}

impl World<'_> {
    /// `DISK_MAP`: a shared mapping of fd `args[1]`'s file begins (`args[2]` offset, `args[3]`
    /// length); answers its token, and in `data` the backing file's path to map.
    pub(super) fn disk_map(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let fd = slot.args[1] as i32;
        let Some((inode, path)) = self.disk_inode(c.node, fd) else {
            return Reply::Ret(-(libc::EBADF as i64));
        };
        let backing = match self.backing_of(c.node, inode, fd, &path) {
            Ok(b) => b,
            Err(e) => {
                let what = format!("mmap(MAP_SHARED) of `{path}`: no backing file: {e}");
                return self.disk_unsupported(c, &what);
            }
        };
        let bytes = backing.as_os_str().as_encoded_bytes();
        slot.data[..bytes.len()].copy_from_slice(bytes);
        slot.data[bytes.len()] = 0;
        slot.len = bytes.len() as u32 + 1;
        let (off, len) = (slot.args[2], slot.args[3]);
        let maps = &mut self.disks.maps;
        maps.next += 1;
        let token = maps.next;
        let table = self.procs[c.p].table;
        let writable = slot.args[4] == 1;
        let mapping = Mapping { node: c.node, inode, path: path.clone(), writable };
        maps.live.insert((table, token), mapping);
        if writable {
            maps.backing.get_mut(&(c.node, inode)).expect("made above").stored = true;
        }
        let s = format!("disk mmap {path} MAP_SHARED at={off} len={len}");
        self.disk_event(c.node, "mmap", &path, &[off, len], s);
        Reply::Ret(token)
    }

    /// The path of `inode`'s backing file on `node`, made from the model's bytes if none:
    /// the file's page-in, on which `disk.corrupt_read` may flip a byte (named against `fd`).
    fn backing_of(&mut self, node: u32, inode: usize, fd: i32, name: &str) -> io::Result<PathBuf> {
        if let Some(b) = self.disks.maps.backing.get(&(node, inode)) {
            return Ok(b.shown.clone());
        }
        let disk = &self.nd(node).disk;
        let mut bytes = disk.read_inode(inode, 0, disk.inode_size(inode)).to_vec();
        let mut corrupted = None;
        if !bytes.is_empty() && self.disk_fault(node, self.scenario.disk.corrupt_read) {
            let site = Site::new(SiteKind::Disk, node, 1);
            let k = self.decisions.at(site).choose(bytes.len() as u64) as usize;
            corrupted = Some((k, bytes[k]));
            bytes[k] ^= 0x40;
            let _ = self.injected(node, fd, &format!("byte {k} of a read corrupted"), 0);
        }
        let b = self.disks.maps.make((node, inode), &bytes, name, backing_dirs(self.cfg))?;
        b.corrupted = corrupted;
        Ok(b.shown.clone())
    }

    /// `DISK_UNMAP`: the mapping with token `args[1]` ended.
    pub(super) fn disk_unmap(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let table = self.procs[c.p].table;
        match self.disks.maps.live.remove(&(table, slot.args[1])) {
            Some(m) => {
                let s = format!("disk munmap {}", m.path);
                self.disk_event(c.node, "munmap", &m.path, &[], s);
                self.release_unused();
                Reply::Ret(0)
            }
            None => Reply::Ret(-(libc::EINVAL as i64)),
        }
    }

    /// `DISK_WRITABLE`: the mapping with token `args[1]` became writable (`mprotect`).
    pub(super) fn disk_writable(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let table = self.procs[c.p].table;
        let maps = &mut self.disks.maps;
        let Some(m) = maps.live.get_mut(&(table, slot.args[1])) else {
            return Reply::Ret(-(libc::ENOMEM as i64));
        };
        m.writable = true;
        let key = (m.node, m.inode);
        if let Some(b) = maps.backing.get_mut(&key) {
            b.stored = true;
        }
        Reply::Ret(0)
    }

    /// `DISK_MSYNC`: `msync` of the mapping with token `args[1]` (`args[2]`: `MS_SYNC` asked):
    /// its stores are taken in, and with `MS_SYNC` the file is made durable.
    pub(super) fn disk_msync(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let table = self.procs[c.p].table;
        let Some(m) = self.disks.maps.live.get(&(table, slot.args[1])).cloned() else {
            return Reply::Ret(-(libc::ENOMEM as i64));
        };
        self.absorb(c.node, m.inode);
        if slot.args[2] == 1 {
            self.nd_mut(c.node).disk.fsync_inode(m.inode);
            self.disk_event(c.node, "msync", &m.path, &[], format!("disk msync {}", m.path));
        }
        Reply::Ret(0)
    }

    /// The process with table `table` exited or replaced its image: its mappings end.
    pub(super) fn unmap_table(&mut self, table: u32) {
        self.disks.maps.live.retain(|k, _| k.0 != table);
        self.release_unused();
    }

    /// Node `node` crashed: its processes and their mappings are gone; what they stored is
    /// taken in first, for the crash to keep or lose.
    pub(super) fn unmap_node(&mut self, node: u32) {
        self.disks.maps.live.retain(|_, m| m.node != node);
        self.release_unused();
    }

    /// Takes in the stores of backing files no mapping uses any more, and removes them.
    fn release_unused(&mut self) {
        for (node, inode) in self.disks.maps.unused() {
            self.absorb(node, inode);
            if let Some(b) = self.disks.maps.backing.remove(&(node, inode)) {
                let _ = std::fs::remove_file(&b.path);
            }
        }
    }

    /// Takes the stores made through mappings of `inode` on `node` into the model: every page
    /// of the backing file that differs from the model's is written to the model.
    pub(super) fn absorb(&mut self, node: u32, inode: usize) {
        let maps = &mut self.disks.maps;
        let writable = maps.live.values().any(|m| m.node == node && m.inode == inode && m.writable);
        let Some(b) = maps.backing.get_mut(&(node, inode)) else { return };
        if !b.stored {
            return;
        }
        b.stored = writable;
        let b = &self.disks.maps.backing[&(node, inode)];
        let disk = &self.nd(node).disk;
        let size = disk.inode_size(inode);
        let mut now = vec![0u8; size];
        let read = b.file.read_exact_at(&mut now, 0).is_ok();
        if let Some((k, true_value)) = b.corrupted {
            if k < size && now[k] == true_value ^ 0x40 {
                now[k] = true_value; // the page-in's flip, not a store
            }
        }
        let old = disk.read_inode(inode, 0, size);
        if !read || now == old {
            return;
        }
        let changed = changed_pages(old, &now);
        let path = b.name.clone();
        for (at, end) in changed {
            self.nd_mut(node).disk.write_inode(inode, at, &now[at..end]);
            let hash = stable_hash(&now[at..end]) as i64;
            let s = format!("disk store {path} at={at} len={}", end - at);
            self.disk_event(node, "store", &path, &[at as i64, (end - at) as i64, hash], s);
        }
    }

    /// Takes in the stores of every mapped file of `node` (`sync`).
    pub(super) fn absorb_node(&mut self, node: u32) {
        let mapped: Vec<usize> =
            self.disks.maps.backing.keys().filter(|k| k.0 == node).map(|k| k.1).collect();
        for inode in mapped {
            self.absorb(node, inode);
        }
    }

    /// The model wrote `bytes` at `at` of `inode` on `node`: so does its backing file, if any.
    pub(super) fn mirror_write(&mut self, node: u32, inode: usize, at: usize, bytes: &[u8]) {
        if let Some(b) = self.disks.maps.backing.get_mut(&(node, inode)) {
            let _ = b.file.write_all_at(bytes, at as u64);
            if b.corrupted.is_some_and(|(k, _)| (at..at + bytes.len()).contains(&k)) {
                b.corrupted = None;
            }
        }
        self.mirror_size(node, inode);
    }

    /// `inode`'s size on `node` changed in the model: so does its backing file's, if any.
    pub(super) fn mirror_size(&mut self, node: u32, inode: usize) {
        let Some(b) = self.disks.maps.backing.get(&(node, inode)) else { return };
        let size = self.nd(node).disk.inode_size(inode);
        let _ = b.file.set_len(size as u64);
    }
}

/// The runs of pages where `now` differs from `old` (equal lengths), as byte ranges.
fn changed_pages(old: &[u8], now: &[u8]) -> Vec<(usize, usize)> {
    const PAGE: usize = 4096;
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for at in (0..now.len()).step_by(PAGE) {
        let end = (at + PAGE).min(now.len());
        if old[at..end] == now[at..end] {
            continue;
        }
        match runs.last_mut() {
            Some(last) if last.1 == at => last.1 = end,
            _ => runs.push((at, end)),
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::changed_pages;

    #[test]
    fn changed_pages_are_merged_into_runs() {
        let old = vec![0u8; 4096 * 4 + 10];
        let mut now = old.clone();
        now[5] = 1;
        now[4096 + 7] = 1;
        now[4096 * 4 + 9] = 1;
        assert_eq!(changed_pages(&old, &now), [(0, 8192), (16384, 16394)]);
        assert!(changed_pages(&old, &old).is_empty());
    }
}
