//! Simulated descriptors across `exec`. The kernel keeps a descriptor open across `exec` unless
//! it is close-on-exec, but the shim's table of what each one is lives in the old image's
//! memory. So the image about to exec writes every row of its table into `WEFT_FDS` (with
//! whether the kernel will close it), and the new image's shim puts the rows back before the
//! program runs: a pipe, socket, socketpair, eventfd or data-directory file dup'ed onto stdin
//! or stdout (`popen`, a shell pipeline, `subprocess`) goes on being the same simulated object.
//! Each close-on-exec row is then forgotten as a close would forget it, so the host hears the
//! kernel closed it (the reader of a close-on-exec pipe, as `posix_spawn` and Python's
//! `subprocess` use to learn an exec succeeded, sees end-of-file). An epoll instance, timerfd
//! or signalfd open across `exec` keeps state only the old image had (its interest list, timer,
//! mask): the new image forgets it for the host, as a close would, and keeps the number as a
//! stale row, which `close`, `close_range` and `dup2` over it close as usual (Erlang's VM leaves
//! two epoll instances and two timerfds open for `erl_child_setup`, which closes them first
//! thing); any other use ends the run (exit 4) naming the call. The kernel's descriptor stays
//! open beside the row, the placeholder it always was (a real epoll instance holding only
//! the real descriptors registered in it, a timerfd never armed, a signalfd with an empty
//! mask), so closing it, or `dup2` onto it, is the kernel's as natively.
//! The entry is `WEFT_FDS=fd:flags:object:rcvtimeo:owner:cloexec;…`, all decimal.

use crate::fdtable::Row;
use crate::prelude::*;
use crate::text::Text;

/// Room for `WEFT_FDS=` and its rows (about 300 descriptors).
pub(crate) const ENV_LEN: usize = 16 * 1024;

/// The longest row (six numbers, their separators).
const ROW_MAX: usize = 3 + 4 + 10 + 20 + 10 + 1 + 6;

/// Writes the `WEFT_FDS=…` entry (NUL-terminated) into `buf` for the exec about to be made;
/// `false` when no descriptor has a row. Ends the run (exit 4) when a descriptor open across the
/// exec cannot be carried, or there are too many to fit.
///
/// # Safety
/// Active, on the thread holding the baton, right before `execve`.
pub(crate) unsafe fn env_entry(buf: &mut [u8; ENV_LEN]) -> bool {
    let mut t = Text::new(&mut buf[..ENV_LEN - 1]);
    t.put(b"WEFT_FDS=");
    let start = t.len();
    for fd in 0..fdtable::FD_MAX as c_int {
        let Some(row) = fdtable::row(fd) else { continue };
        let cloexec = libc::fcntl(fd, libc::F_GETFD) & libc::FD_CLOEXEC != 0;
        if t.len() + ROW_MAX >= ENV_LEN - 1 {
            unsupported(
                b"execve(): more simulated descriptors open across exec than WEFT_FDS holds",
                libc::SYS_execve,
                0,
            );
        }
        put_row(&mut t, fd, row, cloexec);
    }
    let end = t.len();
    buf[end] = 0;
    end > start
}

/// True when the new image can go on with a descriptor of `kind` from its row alone.
fn carried(kind: FdKind) -> bool {
    !matches!(kind, FdKind::Epoll | FdKind::Timerfd | FdKind::Signalfd | FdKind::Stale)
}

/// Ends the run (exit 4) naming `call` when `fd` is stale: an epoll instance, timerfd or
/// signalfd an earlier image left open across `exec`, whose state stayed there.
pub(crate) fn refuse_stale(fd: c_int, call: &[u8]) {
    if fdtable::kind(fd) != FdKind::Stale {
        return;
    }
    let mut buf = [0u8; 256];
    let mut t = Text::new(&mut buf);
    t.put(call).put(b" on descriptor ").num(fd as u64);
    t.put(b", an epoll instance, timerfd or signalfd left open across exec: what it was stayed");
    t.put(b" with the image before the exec (only closing it is simulated)");
    let n = t.len();
    unsupported(&buf[..n], -1, i64::from(fd))
}

fn put_row(t: &mut Text, fd: c_int, row: Row, cloexec: bool) {
    t.num(fd as u64).put(b":").num(u64::from(row.flags)).put(b":").num(u64::from(row.obj));
    t.put(b":").num(row.rcvtimeo_ns).put(b":").num(u64::from(row.owner as u32));
    t.put(b":").num(u64::from(cloexec)).put(b";");
}

/// One row of `WEFT_FDS`: the descriptor, its row, and whether the exec closed it.
fn parse_row(text: &[u8]) -> Option<(c_int, Row, bool)> {
    let mut nums = [0u64; 6];
    let mut n = 0;
    for field in text.split(|&b| b == b':') {
        if n == nums.len() || field.is_empty() || field.len() > 20 {
            return None;
        }
        nums[n] = field.iter().try_fold(0u64, |v, &b| {
            b.is_ascii_digit().then(|| v.wrapping_mul(10).wrapping_add(u64::from(b - b'0')))
        })?;
        n += 1;
    }
    let fd = c_int::try_from(nums[0]).ok().filter(|&fd| fdtable::fits(fd))?;
    let row = Row {
        flags: u8::try_from(nums[1]).ok()?,
        obj: u32::try_from(nums[2]).ok()?,
        rcvtimeo_ns: nums[3],
        owner: u32::try_from(nums[4]).ok()? as i32,
    };
    (n == 6).then_some((fd, row, nums[5] != 0))
}

/// In a new image (after its hello): puts back the rows the old image left in `WEFT_FDS` and
/// forgets those the exec closed. (stdio on a simulated stdin, stdout or stderr is served from
/// the library constructor: this runs at the first hook, which may be inside `malloc`'s own
/// initialisation, where making a `FILE` would deadlock on the allocator's lock.)
///
/// # Safety
/// Active, inside a hook (the guard held), before the program's own code runs.
pub(crate) unsafe fn restore() {
    let p = libc::getenv(c"WEFT_FDS".as_ptr());
    if p.is_null() {
        return;
    }
    let text = core::ffi::CStr::from_ptr(p).to_bytes();
    let rows = || text.split(|&b| b == b';').filter_map(parse_row);
    for (fd, row, _) in rows() {
        fdtable::restore(fd, row);
    }
    for (fd, _, closed) in rows() {
        let kind = fdtable::kind(fd);
        if closed || !carried(kind) {
            crate::io::forget_fd(fd);
        }
        if !closed && !carried(kind) {
            fdtable::open_stale(fd);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_reads_back_as_written() {
        let row = Row { flags: 1 | 16 | 32, obj: 7, rcvtimeo_ns: 1_500_000, owner: -42 };
        let mut buf = [0u8; 128];
        let mut t = Text::new(&mut buf);
        put_row(&mut t, 5, row, true);
        let n = t.len();
        assert_eq!(&buf[..n], b"5:49:7:1500000:4294967254:1;");
        assert_eq!(parse_row(&buf[..n - 1]), Some((5, row, true)));
    }

    #[test]
    fn malformed_rows_are_skipped() {
        assert_eq!(parse_row(b"5:1:2:3:4"), None);
        assert_eq!(parse_row(b"5:1:2:3:4:0:9"), None);
        assert_eq!(parse_row(b"5:x:2:3:4:0"), None);
        assert_eq!(parse_row(b"99999:1:2:3:4:0"), None);
        assert_eq!(parse_row(b"5:300:2:3:4:0"), None);
        assert_eq!(parse_row(b""), None);
    }
}
