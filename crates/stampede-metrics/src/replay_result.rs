//! What a replayed access log adds to a result (`stampede replay`, issue
//! 39): how many lines were read and skipped, how many requests were sent,
//! and the log's requests per URI pattern with what the log recorded of
//! them (statuses, and `$request_time` where it was logged).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// The result's `replay` object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayResult {
    /// Lines of the log that were not blank.
    pub lines_read: u64,
    /// Lines that did not parse.
    pub lines_skipped: u64,
    /// Requests the replay sent (after --from/--to, --filter, --sample,
    /// times --loop).
    pub requests_sent: u64,
    /// The speed factor; `None` for `--speed max`.
    pub speed: Option<f64>,
    /// Per URI pattern, most requests first.
    pub groups: Vec<ReplayGroup>,
}

/// One URI pattern's requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayGroup {
    /// The path with ids folded (`/user/{id}`).
    pub pattern: String,
    /// Requests of this pattern the replay sent.
    pub count: u64,
    /// Statuses the log recorded for them.
    pub recorded_status: BTreeMap<String, u64>,
    /// The log's `$request_time` of them; absent where it was not logged.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub recorded: Option<RecordedTimes>,
    /// The replayed latency of them (2 significant digits, as a target's);
    /// absent where the pattern had no figures of its own (`-t` above 1).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub latency_us: Option<crate::LatencySummary>,
    /// The statuses the replay got for them (with `latency_us`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty", default)]
    pub status: BTreeMap<String, u64>,
}

/// Percentiles of logged response times, µs (nearest rank).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RecordedTimes {
    /// How many response times were logged.
    pub count: u64,
    /// Median, µs.
    pub p50_us: u64,
    /// 99th percentile, µs.
    pub p99_us: u64,
    /// Highest, µs.
    pub max_us: u64,
}

impl RecordedTimes {
    /// The summary of `times`; `None` when there are none.
    pub fn of(times: &mut [Duration]) -> Option<RecordedTimes> {
        if times.is_empty() {
            return None;
        }
        times.sort_unstable();
        let rank = |p: f64| {
            let index = ((p * times.len() as f64).ceil() as usize).clamp(1, times.len()) - 1;
            times[index].as_micros() as u64
        };
        Some(RecordedTimes {
            count: times.len() as u64,
            p50_us: rank(0.50),
            p99_us: rank(0.99),
            max_us: rank(1.0),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_percentiles_are_nearest_rank() {
        let mut times: Vec<Duration> = (1..=100).rev().map(Duration::from_millis).collect();
        let summary = RecordedTimes::of(&mut times).unwrap();
        assert_eq!(
            (
                summary.count,
                summary.p50_us,
                summary.p99_us,
                summary.max_us
            ),
            (100, 50_000, 99_000, 100_000)
        );
        assert_eq!(RecordedTimes::of(&mut []), None);
    }
}
