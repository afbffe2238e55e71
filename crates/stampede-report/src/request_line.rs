//! The `--log-requests` line format: one compact, space-separated line per
//! request, easy to `awk`, `sort -k` or load into a dataframe:
//!
//! ```text
//! # t_s status latency_us bytes error target
//! 0.000412 200 389 632 - http://127.0.0.1:3000/
//! 0.013007 - 10000214 0 timeout http://127.0.0.1:3000/
//! ```
//!
//! `t_s` is when the request was due, in seconds since measurement started;
//! `-` marks a missing status (no response) or a missing error.

use std::io::{self, Write};

/// The header line (a comment, so tools that skip `#` lines skip it).
pub(crate) const REQUEST_LOG_HEADER: &str = "# t_s status latency_us bytes error target";

/// One request's line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RequestLine<'a> {
    pub t_s: f64,
    pub status: Option<u16>,
    /// From the intended send to the complete response or the error.
    pub latency_us: u64,
    /// Bytes received (head and body).
    pub bytes: u64,
    /// The error class (`timeout`, `reset`, …) when there was no response.
    pub error: Option<&'a str>,
    pub target: &'a str,
}

/// Writes the request log's header line (`# t_s status latency_us bytes error target`).
pub fn render_request_log_header(out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{REQUEST_LOG_HEADER}")
}

/// Writes one line.
pub fn render_request_line(line: &RequestLine<'_>, out: &mut dyn Write) -> io::Result<()> {
    match line.status {
        Some(status) => write!(out, "{:.6} {status} ", line.t_s)?,
        None => write!(out, "{:.6} - ", line.t_s)?,
    }
    writeln!(
        out,
        "{} {} {} {}",
        line.latency_us,
        line.bytes,
        line.error.unwrap_or("-"),
        line.target
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_compact_lines() {
        let mut out = Vec::new();
        let line = RequestLine {
            t_s: 0.0125,
            status: None,
            latency_us: 10_000_214,
            bytes: 0,
            error: Some("timeout"),
            target: "http://h/",
        };
        render_request_line(&line, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "0.012500 - 10000214 0 timeout http://h/\n"
        );
    }
}
