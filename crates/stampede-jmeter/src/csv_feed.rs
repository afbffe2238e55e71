//! A CSV Data Set Config as a stampede feed: the file resolved against the
//! .jmx's directory (as JMeter does), its column names (`variableNames`, or
//! the file's first line), and how rows are handed out.

use crate::functions::{constant, Names};
use crate::model::Feed;
use crate::tree::Element;
use crate::MapError;
use std::path::Path;

/// The feed and its column names.
pub(crate) fn feed(
    csv: &Element,
    names: &Names,
    base: &Path,
) -> Result<(Feed, Vec<String>), MapError> {
    let written = csv
        .text("filename")
        .ok_or_else(|| MapError::missing(csv, "filename"))?;
    let file = constant(written, names, "the file name")?;
    let resolved = base.join(file.trim());
    let text = std::fs::read(&resolved).map_err(|e| {
        MapError::Bad(format!(
            "{}: CSV file '{written}' (resolved to {}): cannot read: {e}",
            csv.describe(),
            resolved.display()
        ))
    })?;
    let delimiter = match csv
        .text("delimiter")
        .map(|d| constant(d, names, "the delimiter"))
    {
        None => ",".to_string(),
        Some(d) => {
            let d = d?;
            if d == "\\t" {
                "\t".to_string()
            } else {
                d
            }
        }
    };
    if delimiter.len() != 1 {
        return Err(MapError::Unsupported(format!(
            "delimiter '{delimiter}' is not mapped (one character)"
        )));
    }
    let given = match csv.text("variableNames") {
        Some(v) => Some(constant(v, names, "variableNames")?),
        None => None,
    };
    let header_line = || {
        let text = String::from_utf8_lossy(&text);
        let first = text
            .lines()
            .next()
            .unwrap_or("")
            .trim_start_matches('\u{feff}');
        first.to_string()
    };
    let split = |line: &str, on: &str| -> Vec<String> {
        line.split(on)
            .map(|c| c.trim().trim_matches('"').to_string())
            .collect()
    };
    let columns = match &given {
        Some(list) => split(list, ","),
        None => split(&header_line(), &delimiter),
    };
    let recycle = csv.flag("recycle") != Some(false);
    let mode = if recycle { "circular" } else { "unique" };
    // recycle=false: each row once; stampede then ends the run (JMeter
    // stops the thread with stopThread, or hands out <EOF> without it).
    Ok((
        Feed {
            file: resolved,
            skip_first_line: given.is_some() && csv.flag("ignoreFirstLine") == Some(true),
            columns: given.is_some().then(|| columns.clone()),
            mode,
            delimiter,
        },
        columns,
    ))
}
