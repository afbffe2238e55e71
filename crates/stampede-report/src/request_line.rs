//! The `--log-requests` line format: one compact, space-separated line per
//! request, easy to `awk`, `sort -k` or load into a dataframe:
//!
//! ```text
//! # t_s status latency_us bytes error target vu check
//! 0.000412 200 389 632 - http://127.0.0.1:3000/ 0 -
//! 0.013007 - 10000214 0 timeout http://127.0.0.1:3000/ 1 -
//! 0.020113 200 402 632 check_failed http://127.0.0.1:3000/ 0 1
//! ```
//!
//! `t_s` is when the request was due, in seconds since measurement started;
//! `-` marks a missing status (no response), error or failed check; `vu`
//! is the virtual user (connection slot) that sent it, and `check` lists
//! the failed checks by their index in the result's `checks[]`.

use std::io::{self, Write};

/// The header line (a comment, so tools that skip `#` lines skip it).
pub(crate) const REQUEST_LOG_HEADER: &str = "# t_s status latency_us bytes error target vu check";

/// One request's line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RequestLine<'a> {
    /// When the request was due, in seconds since measurement started.
    pub t_s: f64,
    /// The response's status code; `None` when no response came.
    pub status: Option<u16>,
    /// From the intended send to the complete response or the error.
    pub latency_us: u64,
    /// Bytes received (head and body).
    pub bytes: u64,
    /// The error class (`timeout`, `reset`, …) when there was no response;
    /// `check_failed` for a response that failed a check.
    pub error: Option<&'a str>,
    /// The URL the request went to.
    pub target: &'a str,
    /// The virtual user (connection slot) that sent the request.
    pub vu: u64,
    /// The failed checks' indices in the result's `checks[]`, `,`-separated.
    pub check: Option<&'a str>,
}

/// Writes the request log's header line (`# t_s status latency_us bytes error target vu check`).
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
        "{} {} {} {} {} {}",
        line.latency_us,
        line.bytes,
        line.error.unwrap_or("-"),
        line.target,
        line.vu,
        line.check.unwrap_or("-")
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
            vu: 7,
            check: None,
        };
        render_request_line(&line, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "0.012500 - 10000214 0 timeout http://h/ 7 -\n"
        );
        let mut out = Vec::new();
        let failed = RequestLine {
            status: Some(200),
            error: Some("check_failed"),
            check: Some("0,2"),
            ..line
        };
        render_request_line(&failed, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "0.012500 200 10000214 0 check_failed http://h/ 7 0,2\n"
        );
    }
}
