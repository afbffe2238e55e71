//! Who measured a result when it was one agent of several (`--agent I/N`,
//! `--start-at`): [`AgentInfo`], recorded in the result so a merge can check
//! that the shares add up and how well the agents started together. Also the
//! wall-clock timestamp format results use (RFC 3339), parsed and printed in
//! one place. Waiting for the start and splitting the plan live in the binary.

use serde::{Deserialize, Serialize};
use std::time::{Duration, SystemTime};

/// One agent's identity and start, as recorded in its result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentInfo {
    /// This agent's share, counted from 0 (as Kubernetes' `JOB_COMPLETION_INDEX`).
    pub index: u32,
    /// How many agents share the load.
    pub count: u32,
    /// The agreed start (`--start-at`), RFC 3339 UTC; absent when not given.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub start_at: Option<String>,
    /// The real start (`started_at`) minus the agreed one, by this machine's
    /// clock, in milliseconds: positive when the run started late.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub start_offset_ms: Option<i64>,
    /// `--max-skew`: a later start than this was warned about, in milliseconds.
    pub max_skew_ms: u64,
    /// Whether the kernel considered its clock synchronized (NTP/PTP) at the
    /// start; absent when it could not be asked. Agents' starts are only as
    /// aligned as their clocks.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub clock_synchronized: Option<bool>,
    /// The kernel's estimate of its clock error, in µs, when synchronized.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub clock_error_us: Option<u64>,
}

impl AgentInfo {
    /// `I/N`, as typed on the command line.
    pub(crate) fn label(&self) -> String {
        format!("{}/{}", self.index, self.count)
    }
}

/// A wall-clock time that is not RFC 3339.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not an RFC 3339 time (e.g. 2026-12-01T10:00:00Z or 2026-12-01T11:00:00+01:00)")]
pub struct TimestampError(pub String);

/// Formats a wall-clock time the way results store it (RFC 3339 UTC, ms).
pub fn format_timestamp(time: SystemTime) -> String {
    humantime::format_rfc3339_millis(time).to_string()
}

/// Parses an RFC 3339 time: `Z` or a numeric offset (`+01:00`), with or
/// without fractional seconds.
pub fn parse_timestamp(text: &str) -> Result<SystemTime, TimestampError> {
    let error = || TimestampError(text.to_string());
    let trimmed = text.trim();
    // humantime reads UTC only, so a numeric offset is split off and applied here.
    let (local, offset_s) = split_offset(trimmed).ok_or_else(error)?;
    let local = humantime::parse_rfc3339_weak(local).map_err(|_| error())?;
    let shift = Duration::from_secs(offset_s.unsigned_abs());
    let utc = if offset_s >= 0 {
        local.checked_sub(shift)
    } else {
        local.checked_add(shift)
    };
    utc.ok_or_else(error)
}

/// Splits `…Z` or `…±HH:MM` into the local part and the offset in seconds.
fn split_offset(text: &str) -> Option<(&str, i64)> {
    if let Some(local) = text.strip_suffix(['Z', 'z']) {
        return Some((local, 0));
    }
    let split = text.len().checked_sub(6)?;
    let (local, offset) = (text.get(..split)?, text.get(split..)?);
    let sign = match offset.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let (hours, minutes) = offset.get(1..)?.split_once(':')?;
    let hours: i64 = hours.parse().ok().filter(|h| (0..24).contains(h))?;
    let minutes: i64 = minutes.parse().ok().filter(|m| (0..60).contains(m))?;
    Some((local, sign * (hours * 3600 + minutes * 60)))
}

/// Milliseconds from `earlier` to `later`, negative when `later` is before.
pub fn signed_millis(later: SystemTime, earlier: SystemTime) -> i64 {
    match later.duration_since(earlier) {
        Ok(ahead) => i64::try_from(ahead.as_millis()).unwrap_or(i64::MAX),
        Err(behind) => -i64::try_from(behind.duration().as_millis()).unwrap_or(i64::MAX),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_utc_and_offsets_to_the_same_instant() {
        let utc = parse_timestamp("2026-12-01T10:00:00Z").unwrap();
        assert_eq!(parse_timestamp("2026-12-01T11:00:00+01:00").unwrap(), utc);
        assert_eq!(parse_timestamp("2026-12-01T08:30:00-01:30").unwrap(), utc);
        assert_eq!(format_timestamp(utc), "2026-12-01T10:00:00.000Z");
        let fine = parse_timestamp("2026-12-01T10:00:00.250Z").unwrap();
        assert_eq!(signed_millis(fine, utc), 250);
        assert_eq!(signed_millis(utc, fine), -250);
    }

    #[test]
    fn round_trips_what_results_store() {
        let now = SystemTime::now();
        let text = format_timestamp(now);
        let back = parse_timestamp(&text).unwrap();
        assert!(signed_millis(now, back).abs() <= 1);
    }

    #[test]
    fn rejects_what_is_not_rfc_3339() {
        for bad in [
            "",
            "tomorrow",
            "2026-12-01",
            "2026-12-01T10:00:00+25:00",
            "10:00:00Z",
        ] {
            assert!(parse_timestamp(bad).is_err(), "{bad}");
        }
    }
}
