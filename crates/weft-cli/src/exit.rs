//! weft's exit codes. Finding a violation is not an error of weft: it is exit 1, the reason the
//! tool exists.
//!
//! | code | meaning |
//! |---|---|
//! | 0 | success: no violation within the budget; replay of a passing run passed; all seeds deterministic |
//! | 1 | a violation was found (`explore`), or reproduced (`replay`); includes `target_crashed` and `resource_limit` |
//! | 2 | usage or input error: bad flag, unknown target/variant/option/property, an option or scenario value out of range, malformed, truncated or oversized repro or cluster file, a missing / non-ELF program, a changed binary, a `process` repro without `--allow-exec`, unwritable output, a check of nothing (`--runs 0`) |
//! | 3 | divergence: a replay did not reproduce the recorded run, or `check-determinism` found two runs of one seed that differ |
//! | 4 | unsupported: the target did something weft cannot simulate faithfully (`run`, `replay`; `check-determinism` when a seed's runs end so; `explore` when no violation was found and some run ended so, naming the first) |
//! | 70 | internal error: a bug in weft |
//! | 130 | interrupted (Ctrl-C, SIGTERM, SIGHUP) before any violation was found |

use std::cell::RefCell;
use std::process::ExitCode;

thread_local! {
    pub static LAST_PANIC: RefCell<String> = const { RefCell::new(String::new()) };
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    Ok = 0,
    Violation = 1,
    Input = 2,
    Diverged = 3,
    Unsupported = 4,
    Internal = 70,
    Interrupted = 130,
}

impl From<Code> for ExitCode {
    fn from(c: Code) -> ExitCode {
        ExitCode::from(c as u8)
    }
}

/// Usage errors get one line (clap's first line plus where to look), exit 2; `--help` and
/// `--version` print normally and exit 0.
pub fn clap_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                Code::Input.into()
            } else {
                Code::Ok.into()
            }
        }
        _ => {
            let text = e.render().to_string();
            // clap's first line may end in ':' with the details on the next line.
            let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
            let mut first =
                lines.next().unwrap_or("bad usage").trim_start_matches("error: ").to_string();
            if first.ends_with(':') {
                if let Some(next) = lines.next() {
                    first = format!("{first} {next}");
                }
            }
            eprintln!("weft: error: {first} (see `weft --help`)");
            Code::Input.into()
        }
    }
}
