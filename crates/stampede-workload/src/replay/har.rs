//! A HAR file read as a replay's log (`stampede replay --format har`):
//! each request `run --har` would send ([`crate::har`]), at its
//! `startedDateTime`, with its method, path and query, headers and body;
//! its recorded `time` is its recorded response time.

use super::line::origin_form;
use super::{AccessLog, LoggedRequest, ReplayError};
use crate::har::{requests_from_har, HarOptions};
use std::time::Duration;

/// True when `text` may be a HAR: its first byte that is not a space (or a
/// byte-order mark) is `{`. No access log line starts so.
pub fn looks_like_har(text: &str) -> bool {
    text.trim_start_matches(['\u{feff}', ' ', '\t', '\r', '\n'])
        .starts_with('{')
}

/// Reads `text` as a HAR: the requests of its first origin the server
/// served, in the order they started. An entry left out (another origin,
/// answered from the browser's cache, not http) is counted as skipped, the
/// notes say why.
pub fn read(text: &str) -> Result<AccessLog, ReplayError> {
    let read = requests_from_har(text, &HarOptions::default())
        .map_err(|e| ReplayError::Har(e.to_string()))?;
    let mut requests = Vec::with_capacity(read.requests.len());
    for recorded in read.requests {
        let bad = |why: String| ReplayError::Har(format!("entry {}: {why}", recorded.entry));
        let url = recorded.url.split('#').next().unwrap_or(&recorded.url);
        // The recorded origin's host is not sent: the requests go to --base.
        let target = origin_form(url, &mut None).map_err(bad)?;
        requests.push(LoggedRequest {
            line: recorded.entry,
            at_ms: recorded.started_ms.round() as i64,
            method: recorded.method,
            target,
            host: None,
            user_agent: None,
            referer: None,
            status: recorded.status,
            request_time: Some(Duration::from_secs_f64(recorded.time_ms / 1000.0)),
            upstream_time: None,
            headers: recorded.headers,
            body: recorded.body,
        });
    }
    Ok(AccessLog {
        lines_read: read.entries as u64,
        lines_skipped: (read.entries - requests.len()) as u64,
        requests,
        bad: Vec::new(),
        notes: read.notes,
        has_request_time: true,
    })
}
