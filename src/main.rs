//! `stampede`: the binary. Everything it does is the library's
//! [`stampede::run_cli`]; the process exits with the status it returns.

fn main() {
    std::process::exit(stampede::run_cli(std::env::args_os()));
}
