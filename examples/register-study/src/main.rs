fn main() -> std::process::ExitCode {
    weft::cli::main_with(weft::targets![register_study::world()])
}
