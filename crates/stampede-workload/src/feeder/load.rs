//! Reading a feeder file once: CSV with a header row (the `csv` crate does
//! quoting and delimiters) or JSON Lines of flat objects (serde_json).

use super::{FeedData, FeederError};
use std::path::Path;

/// Reads `path`: `.jsonl`/`.ndjson` as JSON Lines, anything else as CSV
/// split on `delimiter`.
pub(super) fn load(path: &Path, delimiter: u8) -> Result<FeedData, FeederError> {
    let name = path.display().to_string();
    let text =
        std::fs::read(path).map_err(|e| FeederError::new(&name, 0, format!("cannot read: {e}")))?;
    let json_lines = matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("jsonl" | "ndjson")
    );
    if json_lines {
        parse_json_lines(&name, &text)
    } else {
        parse_csv(&name, &text, delimiter)
    }
}

pub(super) fn parse_csv(name: &str, text: &[u8], delimiter: u8) -> Result<FeedData, FeederError> {
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(true)
        .from_reader(text);
    let line_of = |e: &csv::Error| e.position().map_or(0, |p| p.line() as usize);
    let headers = reader
        .byte_headers()
        .map_err(|e| FeederError::new(name, line_of(&e), csv_reason(&e)))?
        .clone();
    let columns: Vec<String> = headers
        .iter()
        .map(|h| String::from_utf8_lossy(h).trim().to_string())
        .collect();
    if columns.iter().all(String::is_empty) {
        return Err(FeederError::new(
            name,
            1,
            "no header row (the first line names the columns)".into(),
        ));
    }
    let mut fields = Vec::new();
    for record in reader.byte_records() {
        let record = record.map_err(|e| FeederError::new(name, line_of(&e), csv_reason(&e)))?;
        fields.extend(record.iter().map(|f| f.to_vec().into_boxed_slice()));
    }
    FeedData::new(name, columns, fields)
}

/// CSV rows with no header line, named by `columns`: each row's first
/// `columns.len()` fields, further fields ignored, as JMeter's CSV Data Set
/// fills its variableNames (CSVDataSet.iterationStart stops at the shorter
/// of the names and the line's values); a row with fewer fields than names
/// is an error. `first_line` is the file's line number of `text`'s first.
pub(super) fn parse_headerless_csv(
    name: &str,
    columns: Vec<String>,
    text: &[u8],
    delimiter: u8,
    first_line: usize,
) -> Result<FeedData, FeederError> {
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(false)
        .flexible(true)
        .from_reader(text);
    let line_of = |p: Option<&csv::Position>| p.map_or(0, |p| p.line() as usize + first_line - 1);
    let width = columns.len();
    let mut fields = Vec::new();
    for record in reader.byte_records() {
        let record =
            record.map_err(|e| FeederError::new(name, line_of(e.position()), csv_reason(&e)))?;
        if record.len() < width {
            let reason = format!("row has {} fields, columns names {width}", record.len());
            return Err(FeederError::new(name, line_of(record.position()), reason));
        }
        fields.extend(
            record
                .iter()
                .take(width)
                .map(|f| f.to_vec().into_boxed_slice()),
        );
    }
    FeedData::new(name, columns, fields)
}

fn csv_reason(error: &csv::Error) -> String {
    match error.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => {
            format!("row has {len} fields, the header has {expected_len}")
        }
        _ => error.to_string(),
    }
}

pub(super) fn parse_json_lines(name: &str, text: &[u8]) -> Result<FeedData, FeederError> {
    let mut columns: Option<Vec<String>> = None;
    let mut fields = Vec::new();
    for (index, line) in text.split(|&b| b == b'\n').enumerate() {
        let number = index + 1;
        let line = line.trim_ascii();
        if line.is_empty() {
            continue;
        }
        let error = |reason: String| FeederError::new(name, number, reason);
        let object: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(line).map_err(|e| error(format!("not a JSON object: {e}")))?;
        let names = columns.get_or_insert_with(|| object.keys().cloned().collect());
        if object.len() != names.len() || names.iter().any(|n| !object.contains_key(n)) {
            return Err(error(format!(
                "keys differ from the first line's ({})",
                names.join(", ")
            )));
        }
        for column in names.iter() {
            let value = match &object[column] {
                serde_json::Value::String(text) => text.as_bytes().to_vec(),
                serde_json::Value::Null => Vec::new(),
                serde_json::Value::Array(_) | serde_json::Value::Object(_) => {
                    return Err(error(format!(
                        "{column} is not a flat value (an object or array)"
                    )))
                }
                other => other.to_string().into_bytes(),
            };
            fields.push(value.into_boxed_slice());
        }
    }
    let columns = columns.ok_or_else(|| FeederError::new(name, 0, "no rows".into()))?;
    FeedData::new(name, columns, fields)
}
