//! `LD_PRELOAD` across `exec`. The new image must load the shim, and load it first (the first
//! preloaded library's definitions win, so its hooks are the ones the program calls); it must
//! also load what the program asked for: a shell's `LD_PRELOAD=/x.so exec prog` preloads
//! `/x.so` natively. So the exec'd environment gets `LD_PRELOAD=SHIM:rest`, where `SHIM` is the
//! shim's own entry, read as this image started (the host and this module put it first; the
//! program may change its environment later), and `rest` is every other entry of the
//! `LD_PRELOAD` the program passed to `exec`, in its order (none if it passed none, as natively).

use crate::prelude::*;
use crate::text::Text;
use core::cell::UnsafeCell;

/// Room for the shim's own entry.
const OWN_MAX: usize = 4096;

/// Room for the whole `LD_PRELOAD=…` entry.
pub(crate) const ENV_LEN: usize = 8192;

struct Own(UnsafeCell<[u8; OWN_MAX]>);
// SAFETY: written once in `init`, before OWN_LEN is published; only read afterwards.
unsafe impl Sync for Own {}
static OWN: Own = Own(UnsafeCell::new([0; OWN_MAX]));
static OWN_LEN: AtomicU32 = AtomicU32::new(0);

/// `LD_PRELOAD`'s entries (ld.so separates them by spaces or colons).
fn entries(list: &[u8]) -> impl Iterator<Item = &[u8]> {
    list.split(|&b| b == b':' || b == b' ').filter(|e| !e.is_empty())
}

/// Keeps the shim's own entry: the first of `LD_PRELOAD` as the image starts.
///
/// # Safety
/// Once, while the image starts (the shim's initialisation), before any exec.
pub(crate) unsafe fn init() {
    let p = libc::getenv(c"LD_PRELOAD".as_ptr());
    if p.is_null() {
        return;
    }
    let Some(first) = entries(core::ffi::CStr::from_ptr(p).to_bytes()).next() else { return };
    let n = first.len().min(OWN_MAX);
    (&mut *OWN.0.get())[..n].copy_from_slice(&first[..n]);
    OWN_LEN.store(n as u32, Ordering::Release);
}

fn own() -> &'static [u8] {
    let n = OWN_LEN.load(Ordering::Acquire) as usize;
    // SAFETY: written once in `init`, before the length was published.
    unsafe { &(&*OWN.0.get())[..n] }
}

/// `LD_PRELOAD=own:rest…` (NUL-terminated) into `buf`: `own` first, then every entry of `asked`
/// (the exec'd environment's value) but `own`. `None` when it does not fit.
fn merged<'a>(buf: &'a mut [u8; ENV_LEN], own: &[u8], asked: &[u8]) -> Option<&'a [u8]> {
    let mut t = Text::new(&mut buf[..ENV_LEN - 1]);
    t.put(b"LD_PRELOAD=").put(own);
    for e in entries(asked).filter(|&e| e != own) {
        t.put(b":").put(e);
    }
    let n = t.len();
    if n + 1 >= ENV_LEN {
        return None;
    }
    buf[n] = 0;
    Some(&buf[..=n])
}

/// The `LD_PRELOAD` entry for an exec whose environment has `asked` (its `LD_PRELOAD` value, if
/// any), written into `buf`; `None` when the shim's own entry is unknown (the environment is
/// then passed as the program made it). Ends the run (exit 4) when the list does not fit.
///
/// # Safety
/// `asked` is null or a NUL-terminated string.
pub(crate) unsafe fn entry(buf: &mut [u8; ENV_LEN], asked: *const c_char) -> Option<*const c_char> {
    let own = own();
    if own.is_empty() {
        return None;
    }
    let asked =
        if asked.is_null() { &b""[..] } else { core::ffi::CStr::from_ptr(asked).to_bytes() };
    match merged(buf, own, asked) {
        Some(e) => Some(e.as_ptr().cast()),
        None => unsupported(b"execve(): an LD_PRELOAD longer than 8 KiB", libc::SYS_execve, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn merge(own: &[u8], asked: &[u8]) -> Vec<u8> {
        let mut buf = [0u8; ENV_LEN];
        let e = merged(&mut buf, own, asked).unwrap();
        e[..e.len() - 1].to_vec()
    }

    #[test]
    fn the_shim_comes_first_and_the_programs_libraries_follow() {
        assert_eq!(merge(b"/s.so", b""), b"LD_PRELOAD=/s.so");
        assert_eq!(merge(b"/s.so", b"/x.so"), b"LD_PRELOAD=/s.so:/x.so");
        assert_eq!(merge(b"/s.so", b"/s.so:/x.so /y.so"), b"LD_PRELOAD=/s.so:/x.so:/y.so");
        assert_eq!(merge(b"/s.so", b"/x.so::/s.so"), b"LD_PRELOAD=/s.so:/x.so");
    }

    #[test]
    fn a_list_too_long_does_not_fit() {
        let mut buf = [0u8; ENV_LEN];
        let long = [b'a'; ENV_LEN];
        assert!(merged(&mut buf, b"/s.so", &long).is_none());
    }
}
