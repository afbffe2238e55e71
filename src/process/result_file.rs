//! Reading back the files stampede writes: the file is read here, and
//! stampede-analysis's `ResultFile` tells by its schema tag which document it
//! is (and refuses, in one line, a file that is none of them).

use anyhow::Context;
use std::path::Path;

pub use stampede_analysis::ResultFile;

/// Reads `path` and parses the document its schema tag names.
pub fn read(path: &Path) -> anyhow::Result<ResultFile> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(ResultFile::parse(&text, &path.display().to_string())?)
}

/// The error for `file`, read from `path`, where `wanted` was expected.
pub fn refuse(file: &ResultFile, path: &Path, wanted: &str) -> anyhow::Error {
    file.refuse(&path.display().to_string(), wanted).into()
}

/// A file's name without folder and `.json`, as compare and report label it.
pub fn label(path: &Path) -> String {
    path.file_stem().map_or_else(
        || path.display().to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}
