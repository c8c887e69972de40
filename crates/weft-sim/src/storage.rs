//! A node's synchronous handle to its simulated disk during one handler call: the storage calls,
//! each a crash point, with the fault knobs of the scenario's `DiskConfig` applied.
//!
//! A crash at a storage-call boundary unwinds the handler (with `resume_unwind`, so no panic
//! hook runs); the kernel catches it, keeps the effects the handler produced before the call
//! (messages already sent are on the wire), and crashes the node. Nothing after the call runs.
//! Crash points honour the crash budget but not a target's crash gate (the gate needs the whole
//! world, which is borrowed while a handler runs).

use crate::disk::{disk_fault, Disk, DiskFaultCounts};
use crate::faults::FaultCounts;
use std::io;
use weft_core::{Decisions, Scenario};

/// The unwind payload of a crash at a storage call.
pub(crate) struct CrashPoint;

pub struct DiskIo<'a> {
    pub(crate) disk: &'a mut Disk,
    pub(crate) scenario: &'a Scenario,
    pub(crate) counts: &'a mut FaultCounts,
    pub(crate) disk_counts: &'a mut DiskFaultCounts,
    pub(crate) faulty: bool,
    pub(crate) decisions: &'a mut Decisions,
}

fn eio(what: &str) -> io::Error {
    io::Error::other(format!("EIO: injected {what} error"))
}

impl DiskIo<'_> {
    /// A crash point: before every mutating call.
    fn crash_point(&mut self) {
        let p = self.scenario.disk.crash_at_call;
        if !self.faulty || p.is_zero() || self.counts.crashes >= self.scenario.budget.crashes {
            return;
        }
        if self.decisions.chance(p) {
            self.counts.crashes += 1;
            std::panic::resume_unwind(Box::new(CrashPoint));
        }
    }

    fn fault(&mut self, p: weft_core::Ratio) -> bool {
        disk_fault(&self.scenario.disk, self.disk_counts, p, self.faulty, self.decisions)
    }

    /// Reads the whole file. Faults: latent sector error (EIO), corrupted byte.
    pub fn read(&mut self, path: &str) -> io::Result<Vec<u8>> {
        let mut data = self.disk.read(path)?;
        if self.fault(self.scenario.disk.latent_error) {
            return Err(eio("latent sector"));
        }
        if !data.is_empty() && self.fault(self.scenario.disk.corrupt_read) {
            let at = self.decisions.choose(data.len() as u64) as usize;
            data[at] ^= 0x40;
        }
        Ok(data)
    }

    pub fn exists(&self, path: &str) -> bool {
        self.disk.exists(path)
    }

    pub fn list(&self, dir: &str) -> Vec<String> {
        self.disk.list(dir)
    }

    pub fn size(&self, path: &str) -> io::Result<usize> {
        self.disk.size(path)
    }

    fn write_faults(&mut self) -> io::Result<usize> {
        if self.fault(self.scenario.disk.eio) {
            return Err(eio("write"));
        }
        if self.fault(self.scenario.disk.enospc) {
            return Err(io::Error::new(io::ErrorKind::StorageFull, "ENOSPC: injected"));
        }
        Ok(if self.fault(self.scenario.disk.misdirect) {
            self.scenario.disk.block_size as usize
        } else {
            0
        })
    }

    /// Writes at `offset`. Faults: EIO, ENOSPC, misdirected (lands one block further).
    pub fn write(&mut self, path: &str, offset: usize, bytes: &[u8]) -> io::Result<()> {
        self.crash_point();
        let shift = self.write_faults()?;
        self.disk.write(path, offset + shift, bytes)
    }

    /// Appends at the end (creating the file). Faults as for `write`.
    pub fn append(&mut self, path: &str, bytes: &[u8]) -> io::Result<()> {
        self.crash_point();
        let shift = self.write_faults()?;
        let len = if self.disk.exists(path) { self.disk.size(path)? } else { 0 };
        self.disk.write(path, len + shift, bytes)
    }

    pub fn create(&mut self, path: &str) -> io::Result<()> {
        self.crash_point();
        self.disk.create(path)
    }

    pub fn truncate(&mut self, path: &str, len: usize) -> io::Result<()> {
        self.crash_point();
        self.disk.truncate(path, len)
    }

    /// Faults: EIO; EIO with the dirty pages dropped (a retry then reports success).
    pub fn fsync(&mut self, path: &str) -> io::Result<()> {
        self.crash_point();
        if self.fault(self.scenario.disk.eio) {
            return Err(eio("fsync"));
        }
        if self.fault(self.scenario.disk.fsync_drops_pages) {
            return self.disk.fsync_dropping_pages(path);
        }
        self.disk.fsync(path)
    }

    /// `fdatasync`: the same as `fsync` in this model (no timestamps are modelled).
    pub fn fdatasync(&mut self, path: &str) -> io::Result<()> {
        self.fsync(path)
    }

    /// fsync of a directory ("" is the root): makes its namespace operations durable.
    pub fn fsync_dir(&mut self, dir: &str) -> io::Result<()> {
        self.crash_point();
        self.disk.fsync_dir(dir)
    }

    pub fn mkdir(&mut self, path: &str) -> io::Result<()> {
        self.crash_point();
        self.disk.mkdir(path)
    }

    pub fn rename(&mut self, from: &str, to: &str) -> io::Result<()> {
        self.crash_point();
        self.disk.rename(from, to)
    }

    pub fn unlink(&mut self, path: &str) -> io::Result<()> {
        self.crash_point();
        self.disk.unlink(path)
    }
}
