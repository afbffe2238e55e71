//! Running the `stampede` binary under test and reading what it printed or
//! wrote: the one copy of the helpers every integration test file needs.
//!
//! The binary's path is only known where the test is compiled (Cargo sets
//! `CARGO_BIN_EXE_stampede` for the root package's integration tests), so
//! [`binary!`](crate::binary) is a macro: it expands in the test's crate.

use std::path::Path;
use std::process::{Command, Output};

/// The `stampede` binary built for this test run, as a `&'static Path`.
#[macro_export]
macro_rules! binary {
    () => {
        ::std::path::Path::new(env!("CARGO_BIN_EXE_stampede"))
    };
}

/// Runs the `stampede` binary with these arguments to its end and returns
/// its output: `stampede!(&["report", path])`.
#[macro_export]
macro_rules! stampede {
    ($args:expr) => {
        $crate::output_of($crate::binary!(), $args)
    };
}

/// Runs `program` with `args` to its end; its status, stdout and stderr.
pub fn output_of(program: &Path, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{} runs: {e}", program.display()))
}

/// Bytes a process printed, as text (lossy: a test wants to see them all).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A JSON file stampede wrote, parsed; panics naming the file.
pub fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{} was not written: {e}", path.display()));
    serde_json::from_str(&text).expect("the result file is valid JSON")
}
