//! File operations the processes run natively, recorded in the trace. A path inside the
//! run's working folder (`OUT/work/slotK`) enters the trace hash relative to that folder, so
//! the hash does not depend on where the run happened (the slot, `--out`, the checkout).

use super::*;

impl World<'_> {
    /// A file operation the process ran natively: recorded in the trace.
    pub(super) fn op_file(&mut self, c: Caller, slot: &mut Slot) -> Reply {
        let len = (slot.len as usize).min(DATA_MAX);
        let mut h = StableHasher::new();
        for a in &slot.args[..5] {
            h.write_u64(*a as u64);
        }
        for path in slot.data[..len].split(|&b| b == 0) {
            match self.work_prefix.as_deref().and_then(|w| path.strip_prefix(w)) {
                Some(rest) => {
                    h.write(b"{work}");
                    h.write(rest);
                }
                None => h.write(path),
            }
            h.write(&[0]);
        }
        let summary = file_summary(slot);
        self.event(c.node, EventKind::Note, None, None, h.finish(), || summary);
        Reply::Ret(0)
    }
}

/// One line for a recorded file operation: `write fd=3 len=5 -> 5`, `open /x/y -> fd 3`.
fn file_summary(slot: &Slot) -> String {
    let len = (slot.len as usize).min(DATA_MAX);
    let mut paths = slot.data[..len].split(|&b| b == 0).map(|p| String::from_utf8_lossy(p));
    let path = paths.next().unwrap_or_default();
    let (fd, a, b, r) = (slot.args[1], slot.args[2], slot.args[3], slot.args[4]);
    let result = if r < 0 { format!("error {}", -r) } else { r.to_string() };
    match slot.args[0] {
        FILE_OPEN => format!("file open {path} flags={a:#o} -> {result}"),
        FILE_READ if a >= 0 => format!("file pread fd={fd} at={a} len={b} -> {result}"),
        FILE_READ => format!("file read fd={fd} len={b} -> {result}"),
        FILE_WRITE if a >= 0 => format!("file pwrite fd={fd} at={a} len={b} -> {result}"),
        FILE_WRITE => format!("file write fd={fd} len={b} -> {result}"),
        FILE_FSYNC => format!("file fsync fd={fd} -> {result}"),
        FILE_FDATASYNC => format!("file fdatasync fd={fd} -> {result}"),
        FILE_TRUNCATE => format!("file ftruncate fd={fd} len={a} -> {result}"),
        FILE_CLOSE => format!("file close fd={fd}"),
        FILE_RENAME => {
            format!("file rename {path} -> {} -> {result}", paths.next().unwrap_or_default())
        }
        FILE_UNLINK => format!("file unlink {path} -> {result}"),
        k => format!("file op {k}"),
    }
}
