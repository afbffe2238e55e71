//! The result file format: pretty JSON of [`RunResult`], newline-terminated.

use stampede_metrics::RunResult;
use std::io::{self, Write};

/// Writes the result as pretty-printed JSON.
pub fn render_json(result: &RunResult, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, result)?;
    writeln!(out)
}
