//! Where results go: the chosen format to stdout, and the JSON file.

use anyhow::Context;
use stampede_metrics::RunResult;
use std::io::Write;
use std::path::Path;

/// What `-o/--output` writes to stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    Text,
    Json,
}

/// Prints the result to stdout in `format`.
pub fn print(result: &RunResult, format: OutputFormat) -> anyhow::Result<()> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match format {
        OutputFormat::Text => stampede_report::render_text(result, &mut out),
        OutputFormat::Json => stampede_report::render_json(result, &mut out),
    }
    .and_then(|()| out.flush())
    .context("writing to stdout")
}

/// Writes the JSON result file atomically (temp file, then rename), so an
/// interrupted write never leaves half a result behind.
pub fn write_json(result: &RunResult, path: &Path) -> anyhow::Result<()> {
    write_atomically(path, |out| stampede_report::render_json(result, out))
}

/// Writes any JSON document (sweeps, repeats) the same way.
pub fn write_json_value(document: &serde_json::Value, path: &Path) -> anyhow::Result<()> {
    write_atomically(path, |out| {
        serde_json::to_writer_pretty(&mut *out, document)?;
        writeln!(out)
    })
}

/// Writes a file through a buffer, atomically (a temp file beside it, then a
/// rename), with the path in any error: every file stampede writes goes here.
pub fn write_atomically(
    path: &Path,
    render: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    let mut temp_name = path.as_os_str().to_owned();
    temp_name.push(".tmp");
    let temp = std::path::PathBuf::from(temp_name);
    let write = || -> std::io::Result<()> {
        let mut file = std::io::BufWriter::new(std::fs::File::create(&temp)?);
        render(&mut file)?;
        file.into_inner()?.sync_all()?;
        std::fs::rename(&temp, path)
    };
    write().with_context(|| format!("writing {}", path.display()))
}
