//! The namespace calls on a node's simulated disk: `stat`, `rename` (of files and directories),
//! `link`, `unlink`, `rmdir`, `mkdir`, `access` and directory listings, answered from the model
//! with Linux's errnos; what a path names (`find`, `parent_ok`) is decided here for the rest of [`super::disk`] too.

use super::disk::{err, normalize, paths, Target};
use super::*;
use weft_core::stable_hash;
use weft_sim::disk::Disk;

pub(super) fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// What a path names on a disk.
pub(super) enum Found {
    File(usize),
    Dir,
    Nothing,
}

pub(super) fn find(disk: &Disk, path: &str) -> Found {
    if let Some(i) = disk.file_inode(path) {
        Found::File(i)
    } else if disk.is_dir(path) {
        Found::Dir
    } else {
        Found::Nothing
    }
}

/// Whether `path`'s parent is a directory: else `ENOTDIR` (an ancestor is a file) or `ENOENT`.
pub(super) fn parent_ok(disk: &Disk, path: &str) -> Result<(), i64> {
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
    /// The two paths of a rename or link (`args[1]`, `args[2]` their dirfds, `data` both
    /// names) on the node's disk, or the unsupported reply naming `call`.
    fn two_disk_paths(
        &mut self,
        c: Caller,
        slot: &Slot,
        call: &str,
    ) -> Result<(String, String), Reply> {
        let names = paths(slot);
        let name = |k: usize| names.get(k).map_or("", |s| s.as_str());
        match (self.disk_path(c, slot.args[1], name(0)), self.disk_path(c, slot.args[2], name(1))) {
            (Ok(a), Ok(b)) => Ok((a, b)),
            (Err(why), _) | (_, Err(why)) => {
                Err(self.disk_unsupported(c, &format!("{call}: {why}")))
            }
        }
    }

    /// The request's one path, resolved against descriptor `dirfd`; a path the model cannot
    /// follow ends the run as unsupported, naming `call`.
    pub(super) fn one_disk_path(
        &mut self,
        c: Caller,
        slot: &Slot,
        dirfd: i64,
        call: &str,
    ) -> Result<String, Reply> {
        let raw = paths(slot).swap_remove(0);
        self.disk_path(c, dirfd, &raw)
            .map_err(|why| self.disk_unsupported(c, &format!("{call}: {why}")))
    }

    pub(super) fn disk_stat(&mut self, c: Caller, slot: &mut Slot) -> Reply {
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

    pub(super) fn disk_rename(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let flags = slot.args[3] as u32;
        let (from, to) = match self.two_disk_paths(c, slot, "rename") {
            Ok(both) => both,
            Err(reply) => return reply,
        };
        if flags & !libc::RENAME_NOREPLACE != 0 {
            let what = format!("renameat2(`{from}`, `{to}`) with flags {flags:#x} is not modelled");
            return self.disk_unsupported(c, &what);
        }
        let disk = &self.nd(c.node).disk;
        match find(disk, &from) {
            Found::Nothing => return Reply::Ret(parent_ok(disk, &from).err().unwrap_or(-2)),
            Found::Dir => return self.disk_rename_dir(c, &from, &to, flags),
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

    /// `rename` of a directory: onto nothing or an empty directory, as Linux answers; open
    /// descriptors of directories under it follow it.
    fn disk_rename_dir(&mut self, c: Caller, from: &str, to: &str, flags: u32) -> Reply {
        let disk = &self.nd(c.node).disk;
        if flags & libc::RENAME_NOREPLACE != 0 && !matches!(find(disk, to), Found::Nothing) {
            return err(libc::EEXIST);
        }
        if let Err(e) = parent_ok(disk, to) {
            return Reply::Ret(e);
        }
        if let Err(e) = self.nd_mut(c.node).disk.rename(from, to) {
            return err(match e.kind() {
                std::io::ErrorKind::NotADirectory => libc::ENOTDIR,
                std::io::ErrorKind::DirectoryNotEmpty => libc::ENOTEMPTY,
                std::io::ErrorKind::NotFound => libc::ENOENT,
                _ if from.is_empty() => libc::EBUSY,
                _ => libc::EINVAL,
            });
        }
        let tables: Vec<u32> =
            self.procs.iter().filter(|p| p.node == c.node).map(|p| p.table).collect();
        for f in self.fds.files_of_tables(&tables) {
            if let Target::Dir(d) = &mut f.target {
                if let Some(rest) =
                    d.strip_prefix(from).filter(|r| r.is_empty() || r.starts_with('/'))
                {
                    *d = format!("{to}{rest}");
                }
            }
        }
        let s = format!("disk rename {from} -> {to}");
        self.disk_event(c.node, "rename", from, &[stable_hash(to) as i64], s);
        Reply::Ret(0)
    }

    /// `linkat`: a further name for a file (`AT_SYMLINK_FOLLOW` changes nothing: there are no
    /// symbolic links; the shim refuses `AT_EMPTY_PATH`).
    pub(super) fn disk_link(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let (from, to) = match self.two_disk_paths(c, slot, "link") {
            Ok(both) => both,
            Err(reply) => return reply,
        };
        let disk = &self.nd(c.node).disk;
        match find(disk, &from) {
            Found::Nothing => return Reply::Ret(parent_ok(disk, &from).err().unwrap_or(-2)),
            Found::Dir => return err(libc::EPERM),
            Found::File(_) => {}
        }
        if !matches!(find(disk, &to), Found::Nothing) {
            return err(libc::EEXIST);
        }
        if let Err(e) = parent_ok(disk, &to) {
            return Reply::Ret(e);
        }
        let _ = self.nd_mut(c.node).disk.link(&from, &to);
        let s = format!("disk link {from} -> {to}");
        self.disk_event(c.node, "link", &from, &[stable_hash(&to) as i64], s);
        Reply::Ret(0)
    }

    pub(super) fn disk_unlink(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let (dirfd, flags) = (slot.args[1], slot.args[2] as i32);
        let path = match self.one_disk_path(c, slot, dirfd, "unlink") {
            Ok(p) => p,
            Err(reply) => return reply,
        };
        if flags & libc::AT_REMOVEDIR != 0 {
            return self.disk_rmdir(c, &path);
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

    /// `rmdir` (`unlinkat` with `AT_REMOVEDIR`): an empty directory, as Linux answers; the
    /// data directory itself is the node's mount point (`EBUSY`).
    fn disk_rmdir(&mut self, c: Caller, path: &str) -> Reply {
        let disk = &self.nd(c.node).disk;
        match find(disk, path) {
            Found::Nothing => return Reply::Ret(parent_ok(disk, path).err().unwrap_or(-2)),
            Found::File(_) => return err(libc::ENOTDIR),
            Found::Dir if path.is_empty() => return err(libc::EBUSY),
            Found::Dir => {}
        }
        if self.nd_mut(c.node).disk.rmdir(path).is_err() {
            return err(libc::ENOTEMPTY);
        }
        self.disk_event(c.node, "rmdir", path, &[], format!("disk rmdir {path}"));
        Reply::Ret(0)
    }

    pub(super) fn disk_mkdir(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let path = match self.one_disk_path(c, slot, slot.args[1], "mkdir") {
            Ok(p) => p,
            Err(reply) => return reply,
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

    pub(super) fn disk_access(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let path = match self.one_disk_path(c, slot, slot.args[1], "access") {
            Ok(p) => p,
            Err(reply) => return reply,
        };
        let disk = &self.nd(c.node).disk;
        match find(disk, &path) {
            Found::Nothing => Reply::Ret(parent_ok(disk, &path).err().unwrap_or(-2)),
            Found::File(_) if slot.args[2] as i32 & libc::X_OK != 0 => err(libc::EACCES),
            _ => Reply::Ret(0),
        }
    }

    pub(super) fn disk_list(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let (fd, cap) = (slot.args[1] as i32, (slot.args[2].max(0) as usize).min(DATA_MAX));
        let Some(f) = self.data_fd(c.node, fd) else { return err(libc::EBADF) };
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
}
