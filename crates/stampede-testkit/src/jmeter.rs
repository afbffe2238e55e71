//! What the `stampede jmeter` test files share: the .jmx test data, running
//! `stampede jmeter`, and the one line of a refused command.

use crate::{stampede, text};
use std::path::PathBuf;
use std::process::Output;

/// A file of crates/stampede-jmeter/testdata, as a path argument.
pub fn testdata(file: &str) -> String {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("crates/stampede-jmeter/testdata")
        .join(file)
        .display()
        .to_string()
}

/// `stampede jmeter ARGS...`.
pub fn jmeter(args: &[&str]) -> Output {
    let mut words = vec!["jmeter"];
    words.extend_from_slice(args);
    stampede(&words)
}

/// The one stderr line of a refused command (exit status 2).
pub fn refused(args: &[&str]) -> String {
    let out = jmeter(args);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr.lines().last().unwrap_or("").to_string()
}
