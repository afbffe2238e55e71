//! Statistics per request of a mix (`--targets`): counts and a latency
//! histogram for each, kept for the whole run (not per interval: nobody needs
//! a per-second series per target, and a thousand targets must stay cheap).

use crate::{Counters, ErrorKind, LatencyHistogram, LatencySummary, Outcome};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Two significant digits (a tenth of the main histogram's size per bucket),
/// growing to the largest value recorded.
pub(crate) fn target_histogram() -> LatencyHistogram {
    Histogram::new(2).expect("2 significant digits are valid")
}

/// One target's counts and latencies.
#[derive(Debug, Clone)]
pub struct TargetStats {
    /// The target's counts.
    pub counters: Counters,
    /// The target's latencies, µs (2 significant digits).
    pub latency: LatencyHistogram,
    /// Exact extremes (µs): at two significant digits the histogram's max is
    /// its bucket's top, up to 1% above the real one and above the run's own
    /// max (three digits) for the same request. Two compares per request of
    /// a mix keep the table consistent with the totals.
    pub min_us: u64,
    /// Exact highest latency, µs.
    pub max_us: u64,
}

impl Default for TargetStats {
    fn default() -> Self {
        TargetStats {
            counters: Counters::default(),
            latency: target_histogram(),
            min_us: u64::MAX,
            max_us: 0,
        }
    }
}

impl TargetStats {
    pub(crate) fn record(&mut self, outcome: &Outcome, latency_us: u64) {
        let c = &mut self.counters;
        c.sent += 1;
        c.bytes_received += outcome.bytes_received;
        c.bytes_body += outcome.body_bytes;
        match outcome.result {
            Ok(status) => {
                if status >= 400 {
                    c.failed_status += 1;
                } else if outcome.judged.is_some_and(|j| j.any_failed()) {
                    c.check_failed += 1;
                } else {
                    c.success += 1;
                }
                c.status.add(status, 1);
                let latency_us = latency_us.clamp(1, crate::histogram::MAX_TRACKED_US);
                let _ = self.latency.record(latency_us);
                self.min_us = self.min_us.min(latency_us);
                self.max_us = self.max_us.max(latency_us);
            }
            Err(kind) => c.errors[kind.index()] += 1,
        }
    }

    pub(crate) fn merge(&mut self, other: &TargetStats) {
        self.counters.merge(&other.counters);
        self.min_us = self.min_us.min(other.min_us);
        self.max_us = self.max_us.max(other.max_us);
        if !other.latency.is_empty() {
            self.latency
                .add(&other.latency)
                .expect("histograms share fixed bounds, so adding cannot fail");
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One target of a mix in the result file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetResult {
    /// The scenario step's name (scenario runs only).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub name: Option<String>,
    /// The HTTP method.
    pub method: String,
    /// The URL as given.
    pub url: String,
    /// Its share of the sends, relative to the other targets' weights.
    pub weight: u32,
    /// Requests that ended (complete or error); requests unfinished at the
    /// stop are counted in the run's totals only.
    pub finished: u64,
    /// Responses with a status below 400 that passed every check.
    pub success: u64,
    /// Responses with a status of 400 or more.
    pub failed_status: u64,
    /// Responses that failed a check (only when the run judged responses).
    #[serde(skip_serializing_if = "is_zero", default)]
    pub check_failed: u64,
    /// Requests that got no usable response.
    pub errors: u64,
    /// Completed responses per second.
    pub rps: f64,
    /// Successful responses per second.
    pub goodput: f64,
    /// Failed share of finished requests, in percent.
    pub error_rate_pct: f64,
    /// Responses by status code (`"200"`), non-zero only.
    pub status: BTreeMap<String, u64>,
    /// Requests without a usable response, by error class, non-zero only.
    pub error_classes: BTreeMap<String, u64>,
    /// Response body bytes.
    pub bytes_body: u64,
    /// Latency summary (2 significant digits).
    pub latency_us: LatencySummary,
    /// The latency histogram (HDR V2 deflate, base64), so that agents'
    /// tables merge losslessly; absent in results written before.
    #[serde(skip_serializing_if = "String::is_empty", default)]
    pub histogram: String,
}

impl TargetResult {
    pub(crate) fn of(
        method: &str,
        url: &str,
        weight: u32,
        stats: &TargetStats,
        elapsed_s: f64,
    ) -> TargetResult {
        let c = &stats.counters;
        let finished = c.completed() + c.error_total();
        let per_s = |n: u64| {
            if elapsed_s > 0.0 {
                n as f64 / elapsed_s
            } else {
                0.0
            }
        };
        TargetResult {
            name: None,
            method: method.to_string(),
            url: url.to_string(),
            weight,
            finished,
            success: c.success,
            failed_status: c.failed_status,
            check_failed: c.check_failed,
            errors: c.error_total(),
            rps: per_s(c.completed()),
            goodput: per_s(c.success),
            error_rate_pct: if finished > 0 {
                100.0 * (c.failed_status + c.check_failed + c.error_total()) as f64
                    / finished as f64
            } else {
                0.0
            },
            status: c
                .status
                .iter()
                .map(|(code, n)| (code.to_string(), n))
                .collect(),
            error_classes: ErrorKind::ALL
                .into_iter()
                .filter(|k| c.error(*k) > 0)
                .map(|k| (k.as_str().to_string(), c.error(k)))
                .collect(),
            bytes_body: c.bytes_body,
            latency_us: stats.latency_summary(),
            histogram: if stats.latency.is_empty() {
                String::new()
            } else {
                crate::encode_histogram(&stats.latency)
            },
        }
    }
}

/// One group of a scenario in the result file: its load and the totals of
/// its steps (latency merged from theirs, 2 significant digits).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupResult {
    /// The group's name.
    pub name: String,
    /// Its load model: `"50 connections"`, `"200 iterations/s"`.
    pub load: String,
    /// Its steps' names, in order.
    pub steps: Vec<String>,
    /// Requests that ended (complete or error).
    pub finished: u64,
    /// Responses with a status below 400 that passed every check.
    pub success: u64,
    /// Responses with a status of 400 or more.
    pub failed_status: u64,
    /// Responses that failed a check (only when the run judged responses).
    #[serde(skip_serializing_if = "is_zero", default)]
    pub check_failed: u64,
    /// Requests that got no usable response.
    pub errors: u64,
    /// Completed responses per second.
    pub rps: f64,
    /// Successful responses per second.
    pub goodput: f64,
    /// Failed share of finished requests, in percent.
    pub error_rate_pct: f64,
    /// Latency summary, µs.
    pub latency_us: LatencySummary,
}

/// The `load` of a `groups[]` row that is a scenario's transaction (the
/// steps sharing a `transaction` name), not one of its groups.
pub const TRANSACTION_LOAD: &str = "transaction";

impl GroupResult {
    /// True for a transaction's row (steps counted together), false for a
    /// scenario group's.
    pub fn is_transaction(&self) -> bool {
        self.load == TRANSACTION_LOAD
    }

    /// The group of `steps` (the per-target statistics of its steps).
    pub(crate) fn of(
        name: &str,
        load: &str,
        steps: &[(&str, &TargetStats)],
        elapsed_s: f64,
    ) -> Self {
        let mut total = TargetStats::default();
        for (_, stats) in steps {
            total.merge(stats);
        }
        let t = TargetResult::of("", "", 1, &total, elapsed_s);
        GroupResult {
            name: name.to_string(),
            load: load.to_string(),
            steps: steps.iter().map(|(name, _)| name.to_string()).collect(),
            finished: t.finished,
            success: t.success,
            failed_status: t.failed_status,
            check_failed: t.check_failed,
            errors: t.errors,
            rps: t.rps,
            goodput: t.goodput,
            error_rate_pct: t.error_rate_pct,
            latency_us: t.latency_us,
        }
    }
}

impl TargetStats {
    /// The histogram's summary with the exact extremes, every percentile
    /// kept within them (a bucket's top can pass the real max).
    fn latency_summary(&self) -> LatencySummary {
        let mut summary = LatencySummary::of(&self.latency);
        if self.latency.is_empty() || self.min_us > self.max_us {
            return summary;
        }
        let (min, max) = (self.min_us, self.max_us);
        summary.min = min;
        summary.max = max;
        for p in [
            &mut summary.p50,
            &mut summary.p66,
            &mut summary.p75,
            &mut summary.p80,
            &mut summary.p90,
            &mut summary.p95,
            &mut summary.p98,
            &mut summary.p99,
            &mut summary.p99_9,
            &mut summary.p99_99,
        ] {
            *p = (*p).clamp(min, max);
        }
        summary
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn ok(latency_us: u64) -> (Outcome, u64) {
        let now = Instant::now();
        let outcome = Outcome {
            intended: now,
            sent: now,
            first_byte: Some(now),
            done: now,
            result: Ok(200),
            bytes_received: 100,
            body_bytes: 10,
            target: 0,
            judged: None,
        };
        (outcome, latency_us)
    }

    #[test]
    fn extremes_are_exact_and_bound_the_percentiles() {
        let (mut a, mut b) = (TargetStats::default(), TargetStats::default());
        for us in [58, 163, 900] {
            let (outcome, latency) = ok(us);
            a.record(&outcome, latency);
        }
        // 24,527 µs sits in a two-digit bucket whose top is 24,575.
        let (outcome, latency) = ok(24_527);
        b.record(&outcome, latency);
        a.merge(&b);
        let result = TargetResult::of("GET", "http://h/", 1, &a, 1.0);
        let l = result.latency_us;
        assert_eq!((l.min, l.max), (58, 24_527), "{l:?}");
        assert!(l.p99_99 <= l.max && l.p50 >= l.min, "{l:?}");
        assert!(a.latency.max() > 24_527, "the histogram alone rounds up");
        let empty = TargetResult::of("GET", "http://h/", 1, &TargetStats::default(), 1.0);
        assert_eq!((empty.latency_us.min, empty.latency_us.max), (0, 0));
    }
}
