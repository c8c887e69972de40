//! When a simulated thread leaves the simulation. After its start routine returns (or
//! `pthread_exit` unwinds it, running its cleanup handlers), glibc still runs the program's
//! code on it: C++ `thread_local` destructors, then the destructors of `pthread_key_create`
//! keys, in up to four rounds (OpenSSL's per-thread cleanup is one and takes a global lock).
//! Had the thread said goodbye before, that code would run beside the simulated threads in
//! real time: a lock it took and released was invisible to the host, and whether another
//! thread found it held depended on the machine's load (dig's shutdown passed early or
//! stalled now and then). So every simulated thread carries one of the shim's own keys, whose
//! destructor says goodbye in the first round in which no other key still holds a value (no
//! destructor of the program is left to run), or in the last round glibc runs.

use crate::prelude::*;

/// glibc's `PTHREAD_DESTRUCTOR_ITERATIONS` and `PTHREAD_KEYS_MAX`.
const ROUNDS: usize = 4;
const KEYS_MAX: libc::pthread_key_t = 1024;
/// The shim's key plus one (0: not made yet; `u32::MAX`: it could not be made).
static KEY: AtomicU32 = AtomicU32::new(0);

/// The shim's key, made on first use (by a thread holding the baton, so once).
fn key() -> Option<libc::pthread_key_t> {
    match KEY.load(Ordering::Acquire) {
        u32::MAX => None,
        0 => {
            let mut k: libc::pthread_key_t = 0;
            // SAFETY: `k` is a valid out-pointer; the destructor is an extern "C" fn.
            let made = unsafe { libc::pthread_key_create(&mut k, Some(last_destructor)) } == 0;
            KEY.store(if made { k + 1 } else { u32::MAX }, Ordering::Release);
            made.then_some(k)
        }
        k => Some(k - 1),
    }
}

/// Made before a simulated thread's start routine runs, on that thread: true when its goodbye
/// will come from the key's destructor (else the caller says goodbye itself, as before).
pub(crate) fn arm() -> bool {
    // SAFETY: setting this thread's value of a key the shim made; the value is the round.
    key().is_some_and(
        |k| unsafe { libc::pthread_setspecific(k, core::ptr::without_provenance(1)) } == 0,
    )
}

/// True when this thread has armed the key (its value is still set).
pub(crate) fn armed() -> bool {
    // SAFETY: reading this thread's value of the shim's key.
    key().is_some_and(|k| unsafe { !libc::pthread_getspecific(k).is_null() })
}

/// Runs in each destructor round glibc makes for this thread, with the round as the value.
extern "C" fn last_destructor(round: *mut c_void) {
    let round = round as usize;
    let Some(own) = key() else { return };
    // SAFETY: reading and setting this thread's own key values.
    let pending =
        (0..KEYS_MAX).any(|k| k != own && unsafe { !libc::pthread_getspecific(k).is_null() });
    if pending && round < ROUNDS {
        // SAFETY: re-arming for the next round (glibc runs another while a value is set).
        unsafe { libc::pthread_setspecific(own, (round + 1) as *const c_void) };
        return;
    }
    let _g = Guard::enter();
    crate::threads::thread_goodbye();
}
