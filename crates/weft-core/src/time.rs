//! Simulated time. Nanoseconds in newtypes so that a duration is never confused with an instant
//! and neither with wall-clock time (which simulated code never reads).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// An instant of simulated time: nanoseconds since the start of the run.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct SimTime(pub u64);

/// A span of simulated time in nanoseconds.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct SimDuration(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub fn as_nanos(self) -> u64 {
        self.0
    }

    /// Time elapsed since `earlier` (saturating at zero).
    pub fn since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
}

impl SimDuration {
    pub const ZERO: SimDuration = SimDuration(0);

    pub const fn from_nanos(n: u64) -> SimDuration {
        SimDuration(n)
    }
    pub const fn from_micros(us: u64) -> SimDuration {
        SimDuration(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> SimDuration {
        SimDuration(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> SimDuration {
        SimDuration(s * 1_000_000_000)
    }
    pub fn as_nanos(self) -> u64 {
        self.0
    }

    /// Parses `"250ms"`, `"2s"`, `"10us"`, `"5ns"`, `"1m"`. Used for config files and flags.
    pub fn parse(text: &str) -> Option<SimDuration> {
        let text = text.trim();
        let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
        let (num, unit) = text.split_at(split);
        let n: u64 = num.parse().ok()?;
        let mult = match unit.trim() {
            "ns" => 1,
            "us" | "µs" => 1_000,
            "ms" => 1_000_000,
            "s" | "" => 1_000_000_000,
            "m" | "min" => 60_000_000_000,
            _ => return None,
        };
        n.checked_mul(mult).map(SimDuration)
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    fn add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}

impl AddAssign<SimDuration> for SimTime {
    fn add_assign(&mut self, d: SimDuration) {
        *self = *self + d;
    }
}

impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(d.0))
    }
}

impl Sub for SimTime {
    type Output = SimDuration;
    fn sub(self, other: SimTime) -> SimDuration {
        self.since(other)
    }
}

/// Fixed width, seconds with microsecond precision: `   12.345678s`. Timelines align on it.
impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let us = self.0 / 1_000;
        write!(f, "{:>5}.{:06}s", us / 1_000_000, us % 1_000_000)
    }
}

impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        if n == 0 {
            write!(f, "0s")
        } else if n.is_multiple_of(1_000_000_000) {
            write!(f, "{}s", n / 1_000_000_000)
        } else if n.is_multiple_of(1_000_000) {
            write!(f, "{}ms", n / 1_000_000)
        } else if n.is_multiple_of(1_000) {
            write!(f, "{}us", n / 1_000)
        } else {
            write!(f, "{n}ns")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_display_round_trip() {
        for text in ["250ms", "2s", "10us", "5ns", "0s"] {
            let d = SimDuration::parse(text).unwrap();
            assert_eq!(d.to_string(), text);
        }
        assert_eq!(SimDuration::parse("1m"), Some(SimDuration::from_secs(60)));
        assert_eq!(SimDuration::parse("12parsecs"), None);
        assert_eq!(SimDuration::parse(""), None);
    }

    #[test]
    fn time_display_is_fixed_width() {
        assert_eq!(SimTime(1_500_000).to_string(), "    0.001500s");
        assert_eq!(SimTime(12_000_000_000).to_string(), "   12.000000s");
    }

    #[test]
    fn arithmetic_saturates() {
        assert_eq!(SimTime(5) - SimTime(9), SimDuration::ZERO);
        assert_eq!(SimTime::MAX + SimDuration(1), SimTime::MAX);
    }
}
