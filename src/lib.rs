//! `stampede`: the command line as a library. [`run_cli`] parses arguments,
//! dispatches to a subcommand, and turns its outcome into the documented
//! exit status: 0 ran, 1 ran but a threshold failed, 2 usage or runtime
//! error (or no connection could be opened), 130 interrupted (SIGINT), 143
//! terminated (SIGTERM). `main.rs` only calls it, so a test can run a
//! command in its own process without starting the binary. Two things are
//! process-wide: the SIGINT/SIGTERM handler (installed by the first run that
//! asks for the stop handle, kept for the process) and clap's exit on
//! `--help` or a usage error (it ends the process with status 2).
//!
//! A run, module by module: `run_args` (the command line) → `plan_args`
//! (Args → Plan) → `session` (the engine run with view, monitor, exports,
//! SLO, self-check) → `delivery` (print, write, exit status). `cmd/` holds
//! one file per subcommand and imports no other command; the map of every
//! module is docs/architecture.md.

mod cmd;
mod compat;
mod flags;
mod process;
mod session;
mod view;

use clap::Parser;
use cmd::{Cli, Command};
use std::ffi::OsString;

/// Runs the command line `args` (the program's name first, as
/// `std::env::args_os` gives it) and returns its exit status.
pub fn run_cli(args: impl IntoIterator<Item = OsString>) -> i32 {
    let args = match cmd::with_default_subcommand(args.into_iter()) {
        Ok(args) => args,
        Err(unknown) => {
            eprintln!("stampede: error: {unknown}");
            return process::exit::ERROR;
        }
    };
    let cli = Cli::parse_from(args);
    let outcome = match cli.command {
        Command::Run(args) => cmd::run::execute(*args),
        Command::Serve(args) => cmd::serve::run(args),
        Command::Demo(args) => cmd::demo::execute(args),
        Command::Sweep(args) => cmd::sweep::execute(args),
        Command::Experiment(args) => cmd::experiment::execute(args),
        Command::Compare(args) => cmd::compare::execute(args),
        Command::Report(args) => cmd::report::execute(args),
        Command::Merge(args) => cmd::merge::execute(args),
        Command::K8s(args) => cmd::k8s::execute(args),
        Command::Import(args) => cmd::import::execute(args),
        Command::Replay(args) => cmd::replay::execute(*args),
        Command::Ab { words } => compat::ab::execute(words),
        Command::Wrk { words } => compat::wrk::execute(words),
        Command::Webbench { words } => compat::webbench::execute(words),
        Command::Press { words } => compat::press::execute(words),
        Command::Jmeter { words } => compat::jmeter::execute(words),
    };
    match outcome {
        Ok(code) => code,
        Err(error) => process::exit::report_error(&error),
    }
}
