//! Running the `stampede` binary under test and reading what it printed or
//! wrote: the one copy of the helpers every integration test file needs.
//!
//! Cargo builds the root package's binary before its integration tests and
//! puts it beside their `deps/` folder (`target/<profile>/stampede`), which
//! is where [`binary`] finds it; `CARGO_BIN_EXE_stampede`, when set at run
//! time, names it directly. (The compile-time `env!` of that variable is only
//! defined in the tests' own crate, not in this one.)

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The `stampede` binary built for this test run.
pub fn binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        let path = std::env::var_os("CARGO_BIN_EXE_stampede")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                let test = std::env::current_exe().expect("the test binary's path");
                // target/<profile>/deps/<test>-<hash> → target/<profile>/stampede
                let profile_dir = test
                    .parent()
                    .and_then(Path::parent)
                    .expect("a test binary lives in target/<profile>/deps");
                profile_dir.join(format!("stampede{}", std::env::consts::EXE_SUFFIX))
            });
        assert!(
            path.is_file(),
            "the stampede binary is not at {} (run the tests through cargo test)",
            path.display()
        );
        path
    })
}

/// Runs the `stampede` binary with these arguments to its end and returns
/// its output.
pub fn stampede(args: &[&str]) -> Output {
    output_of(binary(), args)
}

/// Runs `program` with `args` to its end; its status, stdout and stderr.
pub(crate) fn output_of(program: &Path, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{} runs: {e}", program.display()))
}

/// Asserts that a process exited with status 0; a failure shows its stderr.
#[track_caller]
pub fn assert_succeeded(output: &Output) {
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
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
