//! The `weft` command: parses flags into a validated configuration and makes one library call
//! per subcommand. It is the only part of weft that reads the wall clock (for budgets and
//! progress), the environment and stdout/stderr. Exit codes are documented in [`exit`].

// First, so its `println!`-family macros (which survive a closed pipe) are the ones every
// later module uses.
#[macro_use]
mod console;
mod cmd;
mod eval;
mod exit;
mod registry;
mod run;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    // A panic inside target code is caught by the kernel and becomes an outcome; a panic in weft
    // itself must still end in one line, not a backtrace. The hook records, main prints.
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let at =
            info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        exit::LAST_PANIC.with(|p| *p.borrow_mut() = format!("{msg}{at}"));
    }));
    let cli = match cmd::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return exit::clap_error(e),
    };
    match std::panic::catch_unwind(|| cmd::dispatch(cli)) {
        Ok(Ok(code)) => code.into(),
        Ok(Err(e)) => {
            // One line, whatever a file or flag put into the message.
            eprintln!("weft: error: {}", console::one_line(&format!("{e:#}"), 2000));
            exit::Code::Input.into()
        }
        Err(_) => {
            let msg = exit::LAST_PANIC.with(|p| p.borrow().clone());
            let msg = console::one_line(&msg, 2000);
            eprintln!("weft: internal error (a bug in weft, please report it): {msg}");
            exit::Code::Internal.into()
        }
    }
}
