//! A disk's namespace: its files' and directories' paths, and the operations that change
//! them (create, link, rename of a file or a directory, unlink, mkdir, rmdir), each with the
//! directories whose fsync makes it durable under `posix`. [`super::Disk`] keeps the current
//! namespace, the durable one and the operations between them; a crash state applies a
//! subset of those in order.

use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum NsOp {
    Create {
        path: String,
        inode: usize,
    },
    /// Renames are of a file (inode), not of whatever the name points at when replayed.
    Rename {
        from: String,
        to: String,
        inode: usize,
    },
    Unlink {
        path: String,
        inode: usize,
    },
    /// A further name for an existing file.
    Link {
        path: String,
        inode: usize,
    },
    Mkdir {
        path: String,
    },
    /// An empty directory removed.
    Rmdir {
        path: String,
    },
    /// A directory renamed with everything in it (onto nothing or an empty directory).
    RenameDir {
        from: String,
        to: String,
    },
}

impl NsOp {
    /// Directories whose fsync makes this operation durable under `posix`.
    pub(super) fn parents(&self) -> Vec<String> {
        match self {
            NsOp::Create { path, .. }
            | NsOp::Unlink { path, .. }
            | NsOp::Link { path, .. }
            | NsOp::Mkdir { path }
            | NsOp::Rmdir { path } => vec![parent(path)],
            NsOp::Rename { from, to, .. } | NsOp::RenameDir { from, to } => {
                let (a, b) = (parent(from), parent(to));
                if a == b {
                    vec![a]
                } else {
                    vec![a, b]
                }
            }
        }
    }

    pub(super) fn describe(&self) -> String {
        match self {
            NsOp::Create { path, .. } => format!("create `{path}`"),
            NsOp::Rename { from, to, .. } => format!("rename `{from}` → `{to}`"),
            NsOp::Unlink { path, .. } => format!("unlink `{path}`"),
            NsOp::Link { path, .. } => format!("link `{path}`"),
            NsOp::Mkdir { path } => format!("mkdir `{path}`"),
            NsOp::Rmdir { path } => format!("rmdir `{path}`"),
            NsOp::RenameDir { from, to } => format!("rename of directory `{from}` → `{to}`"),
        }
    }
}

pub(super) fn parent(path: &str) -> String {
    path.rsplit_once('/').map(|(d, _)| d.to_string()).unwrap_or_default()
}

/// The namespace: paths of files and directories.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Namespace {
    pub(super) files: BTreeMap<String, usize>,
    pub(super) dirs: BTreeSet<String>,
}

impl Namespace {
    pub(super) fn dir_exists(&self, d: &str) -> bool {
        d.is_empty() || self.dirs.contains(d)
    }

    /// Applies a namespace operation; an operation whose prerequisites are missing does nothing
    /// (it happens only when crash-state selection lost an earlier operation).
    pub(super) fn apply(&mut self, op: &NsOp) {
        match op {
            NsOp::Create { path, inode } | NsOp::Link { path, inode } => {
                if self.dir_exists(&parent(path)) {
                    self.files.insert(path.clone(), *inode);
                }
            }
            NsOp::Rename { from, to, inode } => {
                if self.dir_exists(&parent(to)) {
                    if self.files.get(from) == Some(inode) {
                        self.files.remove(from);
                    }
                    self.files.insert(to.clone(), *inode);
                }
            }
            NsOp::Unlink { path, inode } => {
                if self.files.get(path) == Some(inode) {
                    self.files.remove(path);
                }
            }
            NsOp::Mkdir { path } => {
                if self.dir_exists(&parent(path)) {
                    self.dirs.insert(path.clone());
                }
            }
            // Only an empty one: a crash state that lost the removal of an entry keeps both.
            NsOp::Rmdir { path } => {
                if self.is_empty_dir(path) {
                    self.dirs.remove(path);
                }
            }
            NsOp::RenameDir { from, to } => {
                let target_free = !self.files.contains_key(to)
                    && (!self.dirs.contains(to) || self.is_empty_dir(to));
                if self.dirs.contains(from) && self.dir_exists(&parent(to)) && target_free {
                    self.move_dir(from, to);
                }
            }
        }
    }

    /// Every path at or under `from` is now at or under `to`.
    fn move_dir(&mut self, from: &str, to: &str) {
        let moved = |p: &str| -> Option<String> {
            let rest = p.strip_prefix(from)?;
            (rest.is_empty() || rest.starts_with('/')).then(|| format!("{to}{rest}"))
        };
        self.dirs.remove(to);
        let dirs: Vec<String> = self.dirs.iter().filter_map(|d| moved(d)).collect();
        self.dirs.retain(|d| moved(d).is_none());
        self.dirs.extend(dirs);
        let files: Vec<(String, usize)> =
            self.files.iter().filter_map(|(p, &i)| moved(p).map(|q| (q, i))).collect();
        self.files.retain(|p, _| moved(p).is_none());
        self.files.extend(files);
    }

    /// `d` is a directory with no entries.
    pub(super) fn is_empty_dir(&self, d: &str) -> bool {
        let inside = |p: &String| parent(p) == d;
        self.dirs.contains(d) && !self.files.keys().any(inside) && !self.dirs.iter().any(inside)
    }
}
