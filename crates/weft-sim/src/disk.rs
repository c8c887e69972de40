//! The simulated disk of one node, with the three persistence contracts of
//! `shared/specs/storage-contracts.md`, and its fault knobs.
//!
//! The disk keeps, per file, the content as of the last fsync (`synced`), the content reads see
//! (`data`), and every version each block has had since that fsync. A crash draws one crash
//! state from decisions (0 = everything unsynced survived):
//!
//! | contract | data | namespace (create, link, rename of a file or a directory, unlink, mkdir, rmdir; `namespace.rs`) |
//! |---|---|---|
//! | `durable` | everything completed survives | durable on return |
//! | `fsync` | per file, an in-order prefix of the calls since its last fsync (one decision per dirty file: how many calls are lost from the tail) | durable on return |
//! | `posix` | per dirty block, any version it had since the last fsync (one decision per block: 0 = latest); the size, any size it had since (0 = latest; blocks past the synced size that no surviving version covers read as zeros) | each operation not covered by a later fsync of its parent directory (both parents for a rename) survives or not on its own (one decision each; a rename is atomic) |
//!
//! Each row allows every state of the rows above it (the nesting is property-tested). Known
//! simplifications, all on the side of allowing *fewer* states than real disks (so weft never
//! reports a crash state no disk could produce): namespace operations whose prerequisites were
//! lost are skipped; `fdatasync` is `fsync` (no timestamps are modelled). A hard link is a
//! second name for an inode: the names share its data, and under `posix` the link is a
//! namespace operation like a create (its survival does not depend on the first name's).

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use weft_core::{Contract, Decisions, DiskConfig, Ratio};

mod namespace;
use namespace::{parent, Namespace, NsOp};

/// One operation that changes file data, as recorded since the file's last fsync.
#[derive(Clone, Debug)]
struct Version {
    /// The file's size right after the call.
    size: usize,
    /// Blocks the call changed, with their content right after it (full block length, zero
    /// padded past the size).
    blocks: Vec<(usize, Vec<u8>)>,
}

#[derive(Clone, Debug, Default)]
struct Inode {
    data: Vec<u8>,
    synced: Vec<u8>,
    /// Data calls since the last fsync, in order.
    since_sync: Vec<Version>,
    /// Blocks whose dirty pages an injected fsync failure dropped: never persisted again until
    /// rewritten, though reads still see them (Linux's "fsyncgate").
    lost_blocks: BTreeSet<usize>,
}

/// What a node finds on its disk after a crash: every reachable file's content, every directory.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct CrashState {
    pub files: BTreeMap<String, Vec<u8>>,
    pub dirs: BTreeSet<String>,
}

/// The simulated disk of one node.
#[derive(Clone, Debug)]
pub struct Disk {
    block: usize,
    inodes: Vec<Inode>,
    ns: Namespace,
    /// `posix`: the namespace as made durable by directory fsyncs, and the operations since,
    /// each with the parents still to be fsynced.
    durable_ns: Namespace,
    pending_ns: Vec<(NsOp, Vec<String>)>,
}

fn enoent(path: &str) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, format!("{path}: no such file"))
}

impl Disk {
    pub fn new(block_size: u32) -> Disk {
        assert!(block_size > 0, "block size 0");
        Disk {
            block: block_size as usize,
            inodes: Vec::new(),
            ns: Namespace::default(),
            durable_ns: Namespace::default(),
            pending_ns: Vec::new(),
        }
    }

    fn record_ns(&mut self, op: NsOp) {
        self.ns.apply(&op);
        let parents = op.parents();
        self.pending_ns.push((op, parents));
    }

    fn inode(&self, path: &str) -> io::Result<usize> {
        self.ns.files.get(path).copied().ok_or_else(|| enoent(path))
    }

    pub fn exists(&self, path: &str) -> bool {
        self.ns.files.contains_key(path) || self.ns.dirs.contains(path)
    }

    /// Files directly in `dir` ("" is the root), sorted.
    pub fn list(&self, dir: &str) -> Vec<String> {
        self.ns.files.keys().filter(|p| parent(p) == dir).cloned().collect()
    }

    pub fn read(&self, path: &str) -> io::Result<Vec<u8>> {
        Ok(self.inodes[self.inode(path)?].data.clone())
    }

    pub fn size(&self, path: &str) -> io::Result<usize> {
        Ok(self.inodes[self.inode(path)?].data.len())
    }

    /// The inode the file `path` names, if it names a file.
    pub fn file_inode(&self, path: &str) -> Option<usize> {
        self.ns.files.get(path).copied()
    }

    /// True when `path` is a directory ("" is the root).
    pub fn is_dir(&self, path: &str) -> bool {
        self.ns.dir_exists(path)
    }

    /// The entries directly in `dir` ("" is the root): each name (last component) and whether
    /// it is a directory, sorted by name.
    pub fn entries(&self, dir: &str) -> Vec<(String, bool)> {
        let files = self.ns.files.keys().map(|p| (p, false));
        let dirs = self.ns.dirs.iter().map(|p| (p, true));
        let mut out: Vec<(String, bool)> = files
            .chain(dirs)
            .filter(|(p, _)| parent(p) == dir && p.as_str() != dir)
            .map(|(p, d)| (p.rsplit_once('/').map_or(p.as_str(), |(_, n)| n).to_string(), d))
            .collect();
        out.sort();
        out
    }

    /// `len` bytes of inode `i` from `offset` (fewer at its end).
    pub fn read_inode(&self, i: usize, offset: usize, len: usize) -> &[u8] {
        let data = &self.inodes[i].data;
        let start = offset.min(data.len());
        &data[start..(start + len).min(data.len())]
    }

    /// The size of inode `i`.
    pub fn inode_size(&self, i: usize) -> usize {
        self.inodes[i].data.len()
    }

    /// How many names inode `i` has now (0: unlinked, still readable through open files).
    pub fn inode_links(&self, i: usize) -> usize {
        self.ns.files.values().filter(|&&n| n == i).count()
    }

    pub fn mkdir(&mut self, path: &str) -> io::Result<()> {
        if !self.ns.dir_exists(&parent(path)) {
            return Err(enoent(&parent(path)));
        }
        if self.exists(path) {
            return Err(io::Error::new(io::ErrorKind::AlreadyExists, path.to_string()));
        }
        self.record_ns(NsOp::Mkdir { path: path.into() });
        Ok(())
    }

    /// Creates an empty file if `path` does not exist.
    pub fn create(&mut self, path: &str) -> io::Result<()> {
        if self.ns.files.contains_key(path) {
            return Ok(());
        }
        if !self.ns.dir_exists(&parent(path)) {
            return Err(enoent(&parent(path)));
        }
        self.inodes.push(Inode::default());
        let inode = self.inodes.len() - 1;
        self.record_ns(NsOp::Create { path: path.into(), inode });
        Ok(())
    }

    /// Writes `bytes` at `offset` (creating the file if needed; a gap reads as zeros).
    pub fn write(&mut self, path: &str, offset: usize, bytes: &[u8]) -> io::Result<()> {
        self.create(path)?;
        let i = self.inode(path)?;
        self.write_inode(i, offset, bytes);
        Ok(())
    }

    /// Writes `bytes` at `offset` of inode `i` (as [`Disk::write`]; the file may have been
    /// renamed or unlinked since it was opened).
    pub fn write_inode(&mut self, i: usize, offset: usize, bytes: &[u8]) {
        let block = self.block;
        let node = &mut self.inodes[i];
        let end = offset + bytes.len();
        if node.data.len() < end {
            node.data.resize(end, 0);
        }
        node.data[offset..end].copy_from_slice(bytes);
        let touched = if bytes.is_empty() { 0..0 } else { offset / block..end.div_ceil(block) };
        for b in touched.clone() {
            node.lost_blocks.remove(&b);
        }
        let blocks = touched.map(|b| (b, block_of(&node.data, b, block))).collect();
        node.since_sync.push(Version { size: node.data.len(), blocks });
    }

    pub fn append(&mut self, path: &str, bytes: &[u8]) -> io::Result<()> {
        self.create(path)?;
        let len = self.size(path)?;
        self.write(path, len, bytes)
    }

    pub fn truncate(&mut self, path: &str, len: usize) -> io::Result<()> {
        let i = self.inode(path)?;
        self.truncate_inode(i, len);
        Ok(())
    }

    /// Sets inode `i`'s size to `len` (zeros past the old end).
    pub fn truncate_inode(&mut self, i: usize, len: usize) {
        let block = self.block;
        let node = &mut self.inodes[i];
        let old = node.data.len();
        node.data.resize(len, 0);
        let (lo, hi) = (old.min(len), old.max(len));
        let touched = lo / block..hi.div_ceil(block);
        let blocks = touched.map(|b| (b, block_of(&node.data, b, block))).collect();
        node.since_sync.push(Version { size: len, blocks });
    }

    /// Makes the file's data durable (except pages an injected failure dropped).
    pub fn fsync(&mut self, path: &str) -> io::Result<()> {
        let i = self.inode(path)?;
        self.fsync_inode(i);
        Ok(())
    }

    /// Makes inode `i`'s data durable (as [`Disk::fsync`]).
    pub fn fsync_inode(&mut self, i: usize) {
        let block = self.block;
        let node = &mut self.inodes[i];
        let mut synced = node.data.clone();
        for &b in &node.lost_blocks {
            let old = block_of(&node.synced, b, block);
            let start = b * block;
            if start < synced.len() {
                let end = (start + block).min(synced.len());
                synced[start..end].copy_from_slice(&old[..end - start]);
            }
        }
        node.synced = synced;
        node.since_sync.clear();
    }

    /// An fsync that fails with EIO and drops the file's dirty pages: reads still see the data,
    /// a later fsync reports success, and a crash loses it (Linux's "fsyncgate").
    pub fn fsync_dropping_pages(&mut self, path: &str) -> io::Result<()> {
        let i = self.inode(path)?;
        let node = &mut self.inodes[i];
        let dirty: Vec<usize> =
            node.since_sync.iter().flat_map(|v| v.blocks.iter().map(|(b, _)| *b)).collect();
        node.lost_blocks.extend(dirty);
        node.since_sync.clear();
        Err(io::Error::other("EIO: fsync failed; dirty pages dropped"))
    }

    /// Makes the namespace operations in `dir` durable (under `posix`; a no-op elsewhere).
    pub fn fsync_dir(&mut self, dir: &str) -> io::Result<()> {
        if !self.ns.dir_exists(dir) {
            return Err(enoent(dir));
        }
        for (_, parents) in &mut self.pending_ns {
            parents.retain(|p| p != dir);
        }
        // Fully covered operations at the front join the durable namespace; a covered operation
        // behind an uncovered one is kept in order and always survives a crash.
        while self.pending_ns.first().is_some_and(|(_, p)| p.is_empty()) {
            let (op, _) = self.pending_ns.remove(0);
            self.durable_ns.apply(&op);
        }
        Ok(())
    }

    /// `sync`: every file's data and every directory's operations become durable.
    pub fn sync_all(&mut self) {
        for i in 0..self.inodes.len() {
            self.fsync_inode(i);
        }
        let dirs: Vec<String> =
            std::iter::once(String::new()).chain(self.ns.dirs.iter().cloned()).collect();
        for d in dirs {
            let _ = self.fsync_dir(&d);
        }
        // Operations whose parent no longer exists are covered by nothing: make them durable.
        for (op, _) in std::mem::take(&mut self.pending_ns) {
            self.durable_ns.apply(&op);
        }
    }

    pub fn rename(&mut self, from: &str, to: &str) -> io::Result<()> {
        if self.ns.dirs.contains(from) {
            return self.rename_dir(from, to);
        }
        let inode = self.inode(from)?;
        if !self.ns.dir_exists(&parent(to)) {
            return Err(enoent(&parent(to)));
        }
        // Two names of one file (or one name): POSIX says rename does nothing.
        if from == to || self.ns.files.get(to) == Some(&inode) {
            return Ok(());
        }
        self.record_ns(NsOp::Rename { from: from.into(), to: to.into(), inode });
        Ok(())
    }

    /// Renames the directory `from` (not the root) onto `to`, which must be absent or an empty
    /// directory, and not under `from`. Errors carry Linux's errno in their kind: `NotFound`
    /// (ENOENT), `NotADirectory` (ENOTDIR), `DirectoryNotEmpty` (ENOTEMPTY), `InvalidInput`
    /// (EINVAL).
    fn rename_dir(&mut self, from: &str, to: &str) -> io::Result<()> {
        let kind = |k: io::ErrorKind| Err(io::Error::new(k, format!("{from} -> {to}")));
        if from.is_empty() || to.starts_with(&format!("{from}/")) {
            return kind(io::ErrorKind::InvalidInput);
        }
        if !self.ns.dir_exists(&parent(to)) {
            return Err(enoent(&parent(to)));
        }
        if self.ns.files.contains_key(to) {
            return kind(io::ErrorKind::NotADirectory);
        }
        if self.ns.dirs.contains(to) && !self.ns.is_empty_dir(to) {
            return kind(io::ErrorKind::DirectoryNotEmpty);
        }
        if from != to {
            self.record_ns(NsOp::RenameDir { from: from.into(), to: to.into() });
        }
        Ok(())
    }

    /// Gives the file `from` the further name `to` (a hard link), which must not exist.
    pub fn link(&mut self, from: &str, to: &str) -> io::Result<()> {
        let inode = self.inode(from)?;
        if !self.ns.dir_exists(&parent(to)) {
            return Err(enoent(&parent(to)));
        }
        if self.exists(to) {
            return Err(io::Error::new(io::ErrorKind::AlreadyExists, to.to_string()));
        }
        self.record_ns(NsOp::Link { path: to.into(), inode });
        Ok(())
    }

    /// Removes the empty directory `path` (`ENOTEMPTY` as `DirectoryNotEmpty` otherwise).
    pub fn rmdir(&mut self, path: &str) -> io::Result<()> {
        if !self.ns.dirs.contains(path) {
            return Err(enoent(path));
        }
        if !self.ns.is_empty_dir(path) {
            return Err(io::Error::new(io::ErrorKind::DirectoryNotEmpty, path.to_string()));
        }
        self.record_ns(NsOp::Rmdir { path: path.into() });
        Ok(())
    }

    pub fn unlink(&mut self, path: &str) -> io::Result<()> {
        let inode = self.inode(path)?;
        self.record_ns(NsOp::Unlink { path: path.into(), inode });
        Ok(())
    }

    /// The state reads see now: what `durable` keeps.
    pub fn current_state(&self) -> CrashState {
        CrashState {
            files: self
                .ns
                .files
                .iter()
                .map(|(p, &i)| (p.clone(), self.inodes[i].data.clone()))
                .collect(),
            dirs: self.ns.dirs.clone(),
        }
    }

    /// Draws a crash state under `contract` from `decisions`, installs it as the disk's new
    /// (fully synced) content, and returns it with one line per loss saying which rule allowed
    /// it.
    pub fn crash(
        &mut self,
        contract: Contract,
        decisions: &mut Decisions,
    ) -> (CrashState, Vec<String>) {
        let mut why = Vec::new();
        let mut data: Vec<Vec<u8>> = Vec::with_capacity(self.inodes.len());
        for (i, node) in self.inodes.iter().enumerate() {
            let name = || self.name_of(i);
            let content = match contract {
                // Everything completed survives (except pages an injected fsync failure
                // dropped, which no contract can save).
                Contract::Durable => self.prefix(node, node.since_sync.len()),
                Contract::Fsync => {
                    let calls = node.since_sync.len();
                    let lost = decisions.choose(calls as u64 + 1) as usize;
                    if lost > 0 {
                        why.push(format!(
                            "fsync: the last {lost} of {calls} unsynced write calls to {} were lost \
                             (survivors are an in-order prefix)",
                            name()
                        ));
                    }
                    self.prefix(node, calls - lost)
                }
                Contract::Posix => self.posix_content(node, decisions, &name, &mut why),
            };
            data.push(content);
        }
        let ns = match contract {
            Contract::Durable | Contract::Fsync => self.ns.clone(),
            Contract::Posix => {
                let mut ns = self.durable_ns.clone();
                for (op, parents) in &self.pending_ns {
                    let survives = parents.is_empty() || decisions.choose(2) == 0;
                    if survives {
                        ns.apply(op);
                    } else {
                        why.push(format!(
                            "posix: {} was lost (not covered by an fsync of directory `{}`)",
                            op.describe(),
                            parents.join("`, `")
                        ));
                    }
                }
                ns
            }
        };
        let state = CrashState {
            files: ns.files.iter().map(|(p, &i)| (p.clone(), data[i].clone())).collect(),
            dirs: ns.dirs.clone(),
        };
        for (node, content) in self.inodes.iter_mut().zip(data) {
            *node = Inode { data: content.clone(), synced: content, ..Inode::default() };
        }
        self.ns = ns.clone();
        self.durable_ns = ns;
        self.pending_ns.clear();
        (state, why)
    }

    /// Whether `contract` allows `state` as the crash state of this (pre-crash) disk; if not,
    /// the rule that forbids it.
    pub fn allows(&self, contract: Contract, state: &CrashState) -> Result<(), String> {
        match contract {
            Contract::Posix => Ok(()), // the weakest contract: every modelled state is allowed
            Contract::Durable => {
                let now = self.current_state();
                if &now == state {
                    return Ok(());
                }
                Err(format!(
                    "durable: every completed operation survives a crash, but {}",
                    first_difference(&now, state)
                ))
            }
            Contract::Fsync => {
                if self.ns.dirs != state.dirs || !self.ns.files.keys().eq(state.files.keys()) {
                    let now = self.current_state();
                    return Err(format!(
                        "fsync: namespace operations are durable on return, but {}",
                        first_difference(&now, state)
                    ));
                }
                for (path, &i) in &self.ns.files {
                    let node = &self.inodes[i];
                    let got = &state.files[path];
                    let ok = (0..=node.since_sync.len()).any(|k| &self.prefix(node, k) == got);
                    if !ok {
                        return Err(format!(
                            "fsync: a file keeps an in-order prefix of its unsynced write calls, \
                             but `{path}`'s content after the crash is no such prefix (blocks \
                             survived out of order, or a size without its data)"
                        ));
                    }
                }
                Ok(())
            }
        }
    }

    fn name_of(&self, inode: usize) -> String {
        self.ns
            .files
            .iter()
            .find(|(_, &i)| i == inode)
            .map(|(p, _)| format!("`{p}`"))
            .unwrap_or_else(|| format!("an unlinked file (inode {inode})"))
    }

    /// The file's content had only its first `k` calls since the last fsync happened.
    fn prefix(&self, node: &Inode, k: usize) -> Vec<u8> {
        let mut out = node.synced.clone();
        for v in &node.since_sync[..k] {
            out.resize(v.size, 0);
            for (b, content) in &v.blocks {
                let start = b * self.block;
                if start < out.len() {
                    let end = (start + self.block).min(out.len());
                    out[start..end].copy_from_slice(&content[..end - start]);
                }
            }
        }
        out
    }

    fn posix_content(
        &self,
        node: &Inode,
        decisions: &mut Decisions,
        name: &dyn Fn() -> String,
        why: &mut Vec<String>,
    ) -> Vec<u8> {
        if node.since_sync.is_empty() {
            return node.synced.clone();
        }
        // Sizes the file had since its last fsync, latest first, then the synced size.
        let mut sizes: Vec<usize> = node.since_sync.iter().rev().map(|v| v.size).collect();
        sizes.push(node.synced.len());
        sizes.dedup();
        let size = sizes[decisions.choose(sizes.len() as u64) as usize];
        if size != node.data.len() {
            why.push(format!(
                "posix: {}'s size survived as {size} bytes instead of {} (an appended size may \
                 survive without its data)",
                name(),
                node.data.len()
            ));
        }
        // Each block: any version since the last fsync (latest first), or its synced content.
        let mut versions: BTreeMap<usize, Vec<&Vec<u8>>> = BTreeMap::new();
        for v in node.since_sync.iter().rev() {
            for (b, content) in &v.blocks {
                versions.entry(*b).or_default().push(content);
            }
        }
        let mut out = vec![0u8; size];
        let synced_len = node.synced.len().min(size);
        out[..synced_len].copy_from_slice(&node.synced[..synced_len]);
        for (b, list) in versions {
            let start = b * self.block;
            if start >= size {
                continue;
            }
            let synced_block = block_of(&node.synced, b, self.block);
            let mut choices: Vec<&Vec<u8>> = list;
            choices.push(&synced_block);
            choices.dedup();
            let pick = decisions.choose(choices.len() as u64) as usize;
            let chosen = choices[pick].clone();
            if pick > 0 {
                why.push(format!(
                    "posix: block {b} of {} (bytes {start}..{}) reverted to an older version \
                     (unsynced blocks survive in any subset and order)",
                    name(),
                    start + self.block
                ));
            }
            let end = (start + self.block).min(size);
            out[start..end].copy_from_slice(&chosen[..end - start]);
        }
        out
    }
}

fn block_of(data: &[u8], b: usize, block: usize) -> Vec<u8> {
    let mut out = vec![0u8; block];
    let start = b * block;
    if start < data.len() {
        let end = (start + block).min(data.len());
        out[..end - start].copy_from_slice(&data[start..end]);
    }
    out
}

fn first_difference(a: &CrashState, b: &CrashState) -> String {
    for (p, content) in &a.files {
        match b.files.get(p) {
            None => return format!("`{p}` is missing after the crash"),
            Some(c) if c != content => return format!("`{p}` lost data"),
            _ => {}
        }
    }
    if let Some(p) = b.files.keys().find(|p| !a.files.contains_key(*p)) {
        return format!("`{p}` exists after the crash though it was removed or renamed");
    }
    "directories differ".into()
}

/// Disk fault decisions shared by a node's storage calls within one run.
#[derive(Clone, Copy, Debug, Default)]
pub struct DiskFaultCounts {
    pub injected: u32,
}

/// Draws whether an optional disk fault fires (0 = no fault), within the budget.
pub(crate) fn disk_fault(
    cfg: &DiskConfig,
    counts: &mut DiskFaultCounts,
    p: Ratio,
    faulty: bool,
    decisions: &mut Decisions,
) -> bool {
    if !faulty || p.is_zero() || counts.injected >= cfg.budget {
        return false;
    }
    let hit = decisions.chance(p);
    if hit {
        counts.injected += 1;
    }
    hit
}

#[cfg(test)]
mod tests;
