//! stdout and stderr that survive a closed pipe. `weft explore … | grep -m1 VIOLATION` closes
//! weft's stdout after the first match; std's `println!` then panics ("failed printing to
//! stdout"), which ended a campaign as an internal error (exit 70) before its shrunk repro was
//! written. This module shadows `println!`, `print!` and `eprintln!` for the whole
//! binary (it is declared first, with `#[macro_use]`, in `main.rs`): a write to a closed or
//! failing stream is dropped, later writes to it are skipped, and the command runs to its end
//! and exits with its own code. Repro files are written before the lines that announce them.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

static STDOUT_GONE: AtomicBool = AtomicBool::new(false);
static STDERR_GONE: AtomicBool = AtomicBool::new(false);

macro_rules! println {
    () => { $crate::console::out(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::console::out(format_args!("{}\n", format_args!($($arg)*))) };
}

macro_rules! print {
    ($($arg:tt)*) => { $crate::console::out(format_args!($($arg)*)) };
}

macro_rules! eprintln {
    () => { $crate::console::err(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::console::err(format_args!("{}\n", format_args!($($arg)*))) };
}

/// Writes to stdout unless it has failed before; a failure is remembered, never raised.
pub fn out(args: std::fmt::Arguments) {
    write_to(&mut std::io::stdout().lock(), &STDOUT_GONE, args);
}

/// Writes to stderr unless it has failed before.
pub fn err(args: std::fmt::Arguments) {
    write_to(&mut std::io::stderr().lock(), &STDERR_GONE, args);
}

fn write_to(stream: &mut dyn Write, gone: &AtomicBool, args: std::fmt::Arguments) {
    if gone.load(Ordering::Relaxed) {
        return;
    }
    if stream.write_fmt(args).and_then(|()| stream.flush()).is_err() {
        gone.store(true, Ordering::Relaxed);
    }
}

/// `text` as one line: control characters (a newline read from a file) escaped, and cut to
/// `max` characters.
pub fn one_line(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == max {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_escapes_newlines_and_cuts() {
        assert_eq!(one_line("bad `a\nb`\t\u{1b}[2J", 100), "bad `a\\nb`\\t\\u{1b}[2J");
        assert_eq!(one_line("abcdef", 3), "abc…");
        assert_eq!(one_line("ünïcode ok", 100), "ünïcode ok");
    }

    #[test]
    fn a_failing_stream_is_remembered_and_skipped() {
        struct Broken(u32);
        impl Write for Broken {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                self.0 += 1;
                Err(std::io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let gone = AtomicBool::new(false);
        let mut b = Broken(0);
        write_to(&mut b, &gone, format_args!("x"));
        write_to(&mut b, &gone, format_args!("y"));
        assert!(gone.load(Ordering::Relaxed));
        assert_eq!(b.0, 1, "the second write was skipped");
    }
}
