//! The `weft` binary: the command line of [`weft_cli`] over the built-in targets.

fn main() -> std::process::ExitCode {
    weft_cli::main_with(weft_cli::builtin_targets())
}
