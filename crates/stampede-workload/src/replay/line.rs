//! One log line's request: its fields read from the format's split, the
//! escapes undone, the time read as milliseconds since the epoch.

use super::format::{unescape, Field, LogFormat};
use std::time::Duration;
use time::format_description::well_known::Iso8601;
use time::{Date, Month, OffsetDateTime, PrimitiveDateTime, Time, UtcOffset};

/// What a line recorded of one request.
#[derive(Debug, Clone, PartialEq)]
pub struct LoggedRequest {
    /// The line's number in the file, from 1.
    pub line: usize,
    /// When it was logged, milliseconds since the epoch.
    pub at_ms: i64,
    /// The HTTP method.
    pub method: String,
    /// Path and query, as sent (origin form).
    pub target: String,
    /// `$host` (or `$http_host`), when logged.
    pub host: Option<String>,
    /// `$http_user_agent`, when logged.
    pub user_agent: Option<String>,
    /// `$http_referer`, when logged.
    pub referer: Option<String>,
    /// `$status`, when logged.
    pub status: Option<u16>,
    /// `$request_time`.
    pub request_time: Option<Duration>,
    /// `$upstream_response_time` (the sum where several upstreams answered).
    pub upstream_time: Option<Duration>,
    /// Other headers recorded with the request, sent again (a HAR's; a
    /// log line has none).
    pub headers: Vec<(String, String)>,
    /// The body recorded (a HAR's); empty for none.
    pub body: String,
}

/// Parses `raw` (line `number`) by `format`.
pub(super) fn parse(format: &LogFormat, raw: &str, number: usize) -> Result<LoggedRequest, String> {
    let mut request = LoggedRequest {
        line: number,
        at_ms: 0,
        method: "GET".to_string(),
        target: String::new(),
        host: None,
        user_agent: None,
        referer: None,
        status: None,
        request_time: None,
        upstream_time: None,
        headers: Vec::new(),
        body: String::new(),
    };
    let mut timed = false;
    for (field, value) in format.split(raw)? {
        match field {
            Field::Request => {
                let text = unescape(value);
                let mut words = text.split(' ').filter(|w| !w.is_empty());
                let (Some(method), Some(target)) = (words.next(), words.next()) else {
                    return Err(format!("the request {value:?} is not METHOD TARGET"));
                };
                request.method = method.to_string();
                request.target = target.to_string();
            }
            Field::Method => request.method = unescape(value),
            Field::Uri => request.target = unescape(value),
            Field::TimeLocal => {
                request.at_ms = time_local(value)?;
                timed = true;
            }
            Field::TimeIso8601 => {
                let at = OffsetDateTime::parse(value, &Iso8601::DEFAULT)
                    .map_err(|e| format!("the time {value:?}: {e}"))?;
                request.at_ms = millis(at);
                timed = true;
            }
            Field::Msec => {
                request.at_ms = seconds(value)
                    .map(|d| d.as_millis() as i64)
                    .ok_or_else(|| format!("$msec {value:?} is not seconds"))?;
                timed = true;
            }
            Field::Status => {
                request.status = Some(value.parse().map_err(|_| format!("the status {value:?}"))?);
            }
            Field::Host => request.host = logged(value),
            Field::Referer => request.referer = logged(value),
            Field::UserAgent => request.user_agent = logged(value),
            Field::RequestTime => request.request_time = seconds(value),
            Field::UpstreamResponseTime => {
                // Several upstreams: "0.010, 0.020" or "0.010 : 0.020".
                let parts: Vec<Duration> = value
                    .split([',', ':'])
                    .filter_map(|p| seconds(p.trim()))
                    .collect();
                request.upstream_time = (!parts.is_empty()).then(|| parts.iter().sum());
            }
            Field::Other(_) => {}
        }
    }
    if !timed {
        return Err("no time".to_string());
    }
    request.target = origin_form(&request.target, &mut request.host)?;
    Ok(request)
}

/// `$time_local` as ngx_times.c writes it: `%02d/%s/%d:%02d:%02d:%02d %c%02i%02i`
/// (`10/Oct/2000:13:55:36 -0700`), Apache's `%t` alike.
fn time_local(value: &str) -> Result<i64, String> {
    let bad = || format!("the time {value:?} is not dd/Mon/yyyy:hh:mm:ss +zzzz");
    let b = value.as_bytes();
    if b.len() != 26 || b[2] != b'/' || b[6] != b'/' || b[11] != b':' || b[20] != b' ' {
        return Err(bad());
    }
    let number = |range: std::ops::Range<usize>| -> Result<i32, String> {
        value
            .get(range)
            .filter(|d| d.bytes().all(|c| c.is_ascii_digit()))
            .and_then(|d| d.parse().ok())
            .ok_or_else(bad)
    };
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS
        .iter()
        .position(|m| *m == &value[3..6])
        .and_then(|m| Month::try_from(m as u8 + 1).ok())
        .ok_or_else(bad)?;
    let date =
        Date::from_calendar_date(number(7..11)?, month, number(0..2)? as u8).map_err(|_| bad())?;
    let clock = Time::from_hms(
        number(12..14)? as u8,
        number(15..17)? as u8,
        number(18..20)? as u8,
    )
    .map_err(|_| bad())?;
    let sign = match b[21] {
        b'+' => 1,
        b'-' => -1,
        _ => return Err(bad()),
    };
    let offset = UtcOffset::from_hms(
        (sign * number(22..24)?) as i8,
        (sign * number(24..26)?) as i8,
        0,
    )
    .map_err(|_| bad())?;
    Ok(millis(
        PrimitiveDateTime::new(date, clock).assume_offset(offset),
    ))
}

fn millis(at: OffsetDateTime) -> i64 {
    (at.unix_timestamp_nanos() / 1_000_000) as i64
}

/// `0.123` seconds; `-` (not logged) and anything else: `None`.
fn seconds(value: &str) -> Option<Duration> {
    // Read as a decimal, not a float: 1796396400.050 as an f64 is a hair
    // under .050, and its milliseconds would be 49.
    let (whole, fraction) = value.split_once('.').unwrap_or((value, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || !digits(fraction) || fraction.len() > 9 {
        return None;
    }
    let nanos = format!("{fraction:0<9}").parse::<u32>().ok()?;
    Some(Duration::new(whole.parse().ok()?, nanos))
}

/// A value nginx logged, or `None` for its `-` (not sent).
fn logged(value: &str) -> Option<String> {
    (value != "-" && !value.is_empty()).then(|| unescape(value))
}

/// The target in origin form: an absolute-form `http://host/path` gives
/// its path (and its host, where none was logged).
pub(super) fn origin_form(target: &str, host: &mut Option<String>) -> Result<String, String> {
    if target.starts_with('/') {
        return Ok(target.to_string());
    }
    for scheme in ["http://", "https://"] {
        if let Some(rest) = target.strip_prefix(scheme) {
            let (authority, path) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
            if host.is_none() {
                *host = Some(authority.to_string());
            }
            return Ok(match path {
                "" => "/".to_string(),
                p if p.starts_with('?') => format!("/{p}"),
                p => p.to_string(),
            });
        }
    }
    Err(format!("the target {target:?} is not a path"))
}
