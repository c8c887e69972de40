//! The kernel's clock discipline, which NTP daemons read and steer: `adjtimex`,
//! `ntp_adjtime`, `clock_adjtime`, `ntp_gettime` (all the `clock_adjtime` system call inside
//! glibc, so they are trapped, not hooked) and the clock setters `settimeofday`,
//! `clock_settime` and `stime`. Unserved, a read answered the real machine's clock and its
//! NTP state, different on every machine and in every run, and a write met the real kernel
//! (refused only because a node's user namespace lacks `CAP_SYS_TIME`: chronyd died of
//! `adjtimex(0x8001) failed : Operation not permitted`). A read answers the virtual clock as a
//! synchronised kernel reports it: no offset, no frequency error, no estimated error. The
//! virtual clock cannot be stepped or slewed by a node, so a write ends the run as unsupported,
//! naming the call (exit 4).

use crate::prelude::*;

/// `adjtimex` modes that only read (`ADJ_OFFSET_SS_READ` is how `ntp_gettime` asks).
const READ_ONLY: [c_uint; 2] = [0, 0xa001];
/// `TIME_OK`: the clock is synchronised.
const TIME_OK: i64 = 0;
const SETTING: &[u8] = b"settimeofday()/clock_settime(CLOCK_REALTIME): setting the clock";
/// The kernel's tolerance: 500 ppm, scaled by 2^16.
const TOLERANCE: c_long = 500 << 16;

/// The answer of a trapped `adjtimex`, `clock_adjtime`, `settimeofday` or `clock_settime`, or
/// None for any other call.
///
/// # Safety
/// In the SIGSYS handler, with the trapped call's arguments.
pub(crate) unsafe fn trapped(nr: i64, args: &[i64; 6]) -> Option<i64> {
    let r = match nr {
        libc::SYS_adjtimex => adjust(libc::CLOCK_REALTIME as i64, args[0], nr),
        libc::SYS_clock_adjtime => adjust(args[0], args[1], nr),
        libc::SYS_settimeofday if args[0] == 0 && args[1] == 0 => 0,
        // glibc's `settimeofday` and `stime` make `clock_settime(CLOCK_REALTIME)`.
        libc::SYS_settimeofday => refuse(SETTING, nr),
        libc::SYS_clock_settime if args[0] == libc::CLOCK_REALTIME as i64 => refuse(SETTING, nr),
        libc::SYS_clock_settime => -(libc::EINVAL as i64),
        _ => return None,
    };
    Some(r)
}

/// `clock_adjtime(clock, buf)`: a read fills `buf` from the virtual clock; a write is refused.
unsafe fn adjust(clock: i64, buf: i64, nr: i64) -> i64 {
    if clock != libc::CLOCK_REALTIME as i64 {
        return -(libc::EOPNOTSUPP as i64); // no PTP or other adjustable clock on this machine
    }
    let t = buf as *mut libc::timex;
    if t.is_null() {
        return -(libc::EFAULT as i64);
    }
    if !READ_ONLY.contains(&(*t).modes) {
        refuse(b"adjtimex()/clock_adjtime(): adjusting the clock", nr);
    }
    let now = crate::time::clock_value(libc::CLOCK_REALTIME).unwrap_or(REALTIME_BASE_NS);
    let modes = (*t).modes;
    *t = core::mem::zeroed();
    (*t).modes = modes;
    (*t).time.tv_sec = (now / 1_000_000_000) as libc::time_t;
    (*t).time.tv_usec = ((now % 1_000_000_000) / 1_000) as libc::suseconds_t;
    (*t).constant = 2;
    (*t).precision = 1;
    (*t).tolerance = TOLERANCE;
    (*t).tick = 10_000;
    (*t).tai = 37;
    TIME_OK
}

fn refuse(what: &[u8], nr: i64) -> ! {
    crate::slot::unsupported(what, nr, 0)
}
