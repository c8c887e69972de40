//! The `weft` command line as a library: [`main_with`] runs the whole command (`explore`,
//! `replay`, `shrink`, `show`, `bench`, `eval`, …) over the targets it is given, so a user's
//! own binary gets weft's command line for its own targets with one call. The `weft` binary
//! is that call with [`builtin_targets`]. It parses flags into a validated configuration and
//! makes one library call per subcommand; it is the only part of weft that reads the wall clock
//! (for budgets and progress), the environment and stdout/stderr. Exit codes are documented in
//! the README's table (0 pass, 1 violation, 2 input, 3 divergence, 4 unsupported, 70 internal,
//! 130 interrupted).

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
/// The interface a target implements (re-exported for [`targets!`]).
pub use weft_core::Target;

pub use registry::builtin_targets;

/// A list of targets for [`main_with`]: `targets![MyTarget, OtherTarget::new()]` is
/// `vec![Box::new(MyTarget) as Box<dyn Target>, …]`.
#[macro_export]
macro_rules! targets {
    ($($t:expr),* $(,)?) => {
        ::std::vec![$(::std::boxed::Box::new($t) as ::std::boxed::Box<dyn $crate::Target>),*]
    };
}

/// Runs the `weft` command line (arguments from the process) over `targets` and returns its
/// exit code: `fn main() -> ExitCode { weft_cli::main_with(targets![MyTarget]) }`. Two targets
/// with one name are a usage error (exit 2).
pub fn main_with(targets: Vec<Box<dyn Target>>) -> ExitCode {
    main_with_args(std::env::args_os(), targets)
}

/// [`main_with`] with the arguments given (the first is the program name, as in `argv`).
/// Each call makes `targets` the ones the commands know.
pub fn main_with_args<I, T>(args: I, targets: Vec<Box<dyn Target>>) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
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
    if let Err(e) = registry::install(targets) {
        eprintln!("weft: error: {e}");
        return exit::Code::Input.into();
    }
    let cli = match cmd::Cli::try_parse_from(args) {
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
