//! The node's simulated disk with the shape of `tokio::fs` (whole-file calls on paths). It
//! survives a crash in the state the scenario's persistence contract allows, so a restarted
//! node's entry function reads what was durable. Every mutating call is a possible crash point
//! and may fail with an injected fault (EIO, ENOSPC), as for sans-IO nodes.

use crate::random::ask_disk;
use std::io;

pub(crate) enum DiskOp {
    Read(String),
    Write(String, Vec<u8>),
    Append(String, Vec<u8>),
    SyncAll(String),
    SyncDir(String),
    Rename(String, String),
    Remove(String),
    Exists(String),
}

impl DiskOp {
    /// Performs the call on the node's disk.
    pub(crate) fn run(self, disk: &mut weft_sim::DiskIo<'_>) -> io::Result<Vec<u8>> {
        match self {
            DiskOp::Read(p) => disk.read(&p),
            DiskOp::Write(p, data) => {
                if disk.exists(&p) {
                    disk.truncate(&p, 0)?;
                } else {
                    disk.create(&p)?;
                }
                disk.write(&p, 0, &data).map(|()| Vec::new())
            }
            DiskOp::Append(p, data) => disk.append(&p, &data).map(|()| Vec::new()),
            DiskOp::SyncAll(p) => disk.fsync(&p).map(|()| Vec::new()),
            DiskOp::SyncDir(p) => disk.fsync_dir(&p).map(|()| Vec::new()),
            DiskOp::Rename(a, b) => disk.rename(&a, &b).map(|()| Vec::new()),
            DiskOp::Remove(p) => disk.unlink(&p).map(|()| Vec::new()),
            DiskOp::Exists(p) => Ok(if disk.exists(&p) { vec![1] } else { Vec::new() }),
        }
    }
}

pub async fn read(path: impl AsRef<str>) -> io::Result<Vec<u8>> {
    ask_disk(DiskOp::Read(path.as_ref().to_string())).await
}

/// Replaces the file's contents (creating it). Not durable until [`sync_all`].
pub async fn write(path: impl AsRef<str>, data: impl AsRef<[u8]>) -> io::Result<()> {
    let op = DiskOp::Write(path.as_ref().to_string(), data.as_ref().to_vec());
    ask_disk(op).await.map(|_| ())
}

pub async fn append(path: impl AsRef<str>, data: impl AsRef<[u8]>) -> io::Result<()> {
    let op = DiskOp::Append(path.as_ref().to_string(), data.as_ref().to_vec());
    ask_disk(op).await.map(|_| ())
}

/// `fsync` of the file (tokio: `File::sync_all`).
pub async fn sync_all(path: impl AsRef<str>) -> io::Result<()> {
    ask_disk(DiskOp::SyncAll(path.as_ref().to_string())).await.map(|_| ())
}

/// `fsync` of a directory ("" is the root): makes creations and renames in it durable.
pub async fn sync_dir(path: impl AsRef<str>) -> io::Result<()> {
    ask_disk(DiskOp::SyncDir(path.as_ref().to_string())).await.map(|_| ())
}

pub async fn rename(from: impl AsRef<str>, to: impl AsRef<str>) -> io::Result<()> {
    let op = DiskOp::Rename(from.as_ref().to_string(), to.as_ref().to_string());
    ask_disk(op).await.map(|_| ())
}

pub async fn remove_file(path: impl AsRef<str>) -> io::Result<()> {
    ask_disk(DiskOp::Remove(path.as_ref().to_string())).await.map(|_| ())
}

pub async fn try_exists(path: impl AsRef<str>) -> io::Result<bool> {
    Ok(!ask_disk(DiskOp::Exists(path.as_ref().to_string())).await?.is_empty())
}
