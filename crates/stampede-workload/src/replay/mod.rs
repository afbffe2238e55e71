//! Access logs as a workload: nginx's and Apache's `combined`
//! and `common` lines, or a custom nginx `log_format` ([`mod@format`]), read
//! into the requests they record ([`read`]), or a HAR file's entries
//! ([`mod@har`]), chosen by time window, status
//! and sample ([`select`]), and grouped by URI pattern ([`pattern`]). What
//! the engine sends and when is the binary's (`stampede replay`).

pub mod format;
pub mod har;
mod line;
pub mod pattern;
pub mod select;
#[cfg(test)]
mod tests;

pub use format::{Field, LogFormat};
pub use line::LoggedRequest;
pub use pattern::PatternRules;
pub use select::Selection;

use std::time::Duration;

/// How many unparsable lines are kept to be shown.
pub const BAD_LINES_SHOWN: usize = 5;

/// What makes a log or a format unusable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    /// A `--format` that cannot be read.
    #[error("--format {format:?}: {why}")]
    Format {
        /// The format as given.
        format: String,
        /// Why.
        why: String,
    },
    /// `--strict`: the first line that did not parse.
    #[error("line {line}: {why} (--strict stops at the first line that does not parse)")]
    Strict {
        /// The line, from 1.
        line: usize,
        /// Why it did not parse.
        why: String,
    },
    /// No line of the log parsed.
    #[error("no line of the log parses as {format}{first}")]
    NothingParsed {
        /// The format, in words.
        format: String,
        /// The first bad line and why, in brackets, or that the log is empty.
        first: String,
    },
    /// A HAR that cannot be read: the whole message.
    #[error("{0}")]
    Har(String),
    /// A bad option (`--pattern`, `--filter`, `--sample`…): the whole message.
    #[error("{0}")]
    Option(String),
}

/// A line that did not parse, with its 1-based number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLine {
    /// The line, from 1.
    pub line: usize,
    /// Why it did not parse.
    pub why: String,
}

/// A log read: its requests in time order, and what was skipped.
#[derive(Debug, Clone, PartialEq)]
pub struct AccessLog {
    /// The requests that parsed, in time order.
    pub requests: Vec<LoggedRequest>,
    /// Lines that were not blank.
    pub lines_read: u64,
    /// Lines that did not parse.
    pub lines_skipped: u64,
    /// The first [`BAD_LINES_SHOWN`] of them.
    pub bad: Vec<BadLine>,
    /// Notes for the user (timestamps sorted).
    pub notes: Vec<String>,
    /// True when the format logs `$request_time`.
    pub has_request_time: bool,
}

impl AccessLog {
    /// Request `index`'s offset from the log's first request.
    pub fn offset(&self, index: usize) -> Duration {
        let first = self.requests.first().map_or(0, |r| r.at_ms);
        let at = self.requests.get(index).map_or(first, |r| r.at_ms);
        Duration::from_millis(at.saturating_sub(first) as u64)
    }
}

/// When no line parsed as `format`: which named format the log's first
/// line does read as, as a hint (`stampede serve --access-log` writes
/// common lines, nginx's default is combined), or nothing.
fn other_format_hint(text: &str, format: &LogFormat) -> String {
    let Some((index, first)) = text
        .split('\n')
        .map(|raw| raw.strip_suffix('\r').unwrap_or(raw))
        .enumerate()
        .find(|(_, raw)| !raw.trim().is_empty())
    else {
        return String::new();
    };
    for name in ["combined", "common"] {
        let Ok(named) = LogFormat::parse(name) else {
            continue;
        };
        if &named != format && line::parse(&named, first, index + 1).is_ok() {
            return format!("; its first line reads as the {name} format: add --format {name}");
        }
    }
    String::new()
}

/// Reads `text` as lines of `format` (blank lines and CRLF endings are
/// fine). A line that does not parse is counted and skipped, or with
/// `strict` an error. Requests out of time order are sorted (stably) with
/// a note. No parsable line at all is an error.
pub fn read(text: &str, format: &LogFormat, strict: bool) -> Result<AccessLog, ReplayError> {
    let mut log = AccessLog {
        requests: Vec::new(),
        lines_read: 0,
        lines_skipped: 0,
        bad: Vec::new(),
        notes: Vec::new(),
        has_request_time: format.logs(&Field::RequestTime),
    };
    for (index, raw) in text.split('\n').enumerate() {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        if raw.trim().is_empty() {
            continue;
        }
        log.lines_read += 1;
        match line::parse(format, raw, index + 1) {
            Ok(request) => log.requests.push(request),
            Err(why) => {
                if strict {
                    return Err(ReplayError::Strict {
                        line: index + 1,
                        why,
                    });
                }
                log.lines_skipped += 1;
                if log.bad.len() < BAD_LINES_SHOWN {
                    log.bad.push(BadLine {
                        line: index + 1,
                        why,
                    });
                }
            }
        }
    }
    if log.requests.is_empty() {
        let first = log
            .bad
            .first()
            .map(|b| format!(" (line {}: {})", b.line, b.why))
            .unwrap_or_else(|| " (the log is empty)".to_string());
        let first = first + &other_format_hint(text, format);
        return Err(ReplayError::NothingParsed {
            format: "the format given".to_string(),
            first,
        });
    }
    let backwards = log
        .requests
        .windows(2)
        .filter(|pair| pair[1].at_ms < pair[0].at_ms)
        .count();
    if backwards > 0 {
        log.requests.sort_by_key(|r| r.at_ms);
        log.notes.push(format!(
            "{backwards} timestamp(s) went backwards (log rotation or several workers): the requests are sent in time order"
        ));
    }
    Ok(log)
}
