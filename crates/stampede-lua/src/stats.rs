//! What `done(summary, latency, requests)` receives, built from a finished
//! run's [`RunResult`]: wrk's summary table and its two statistics objects
//! (`min`, `max`, `mean`, `stdev`, `:percentile(p)`, `(i)`, `#`).
//!
//! The error map (stampede's classes onto wrk's five counters) is the one
//! `stampede wrk`'s report prints: `connect` = connect_refused +
//! connect_timeout; `timeout` = timeout; `read` = every other error class
//! (reset, closed_early, malformed_response, address_unavailable, tls,
//! proxy, stream_reset, goaway, other); `write` = 0 (stampede books a failed
//! write under its cause, a reset or a close); `status` = responses with
//! status ≥ 400.

use mlua::{MetaMethod, UserData, UserDataFields, UserDataMethods};
use stampede_metrics::{LatencyHistogram, RunResult};

/// wrk's `summary.errors`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct WrkErrors {
    pub connect: u64,
    pub read: u64,
    pub write: u64,
    pub status: u64,
    pub timeout: u64,
}

impl WrkErrors {
    /// The map described at the top of this file.
    pub fn of(result: &RunResult) -> WrkErrors {
        let class = |kind: &str| result.errors.get(kind).copied().unwrap_or(0);
        let connect = class("connect_refused") + class("connect_timeout");
        let timeout = class("timeout");
        WrkErrors {
            connect,
            read: result.requests.errors.saturating_sub(connect + timeout),
            write: 0,
            status: result.requests.failed_status,
            timeout,
        }
    }
}

/// wrk's `summary` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WrkSummary {
    /// The measured run, µs.
    pub duration: u64,
    /// Completed responses (any status).
    pub requests: u64,
    /// Bytes received.
    pub bytes: u64,
    pub errors: WrkErrors,
}

impl WrkSummary {
    pub fn of(result: &RunResult) -> WrkSummary {
        WrkSummary {
            duration: (result.elapsed_s * 1e6).round() as u64,
            requests: result.requests.completed,
            bytes: result.bytes.received,
            errors: WrkErrors::of(result),
        }
    }
}

/// A statistics object: distinct values, ascending, with their counts.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct WrkStats {
    values: Vec<(u64, u64)>,
    count: u64,
    mean: f64,
    stdev: f64,
}

impl WrkStats {
    /// From counted values (in any order; equal values are merged). Mean
    /// and stdev as wrk computes them (sample stdev, n − 1).
    pub fn from_counts(mut values: Vec<(u64, u64)>) -> WrkStats {
        values.retain(|&(_, n)| n > 0);
        values.sort_unstable();
        values.dedup_by(|next, kept| {
            let same = next.0 == kept.0;
            if same {
                kept.1 += next.1;
            }
            same
        });
        let count: u64 = values.iter().map(|&(_, n)| n).sum();
        let mean = if count == 0 {
            0.0
        } else {
            values
                .iter()
                .map(|&(v, n)| v as f64 * n as f64)
                .sum::<f64>()
                / count as f64
        };
        let stdev = if count < 2 {
            0.0
        } else {
            let squares: f64 = values
                .iter()
                .map(|&(v, n)| (v as f64 - mean).powi(2) * n as f64)
                .sum();
            (squares / (count - 1) as f64).sqrt()
        };
        WrkStats {
            values,
            count,
            mean,
            stdev,
        }
    }

    /// The latency histogram (µs): each HDR bucket is one value (its highest
    /// equivalent, as stampede's percentiles report it); mean and stdev are
    /// the histogram's own, the figures `stampede wrk` prints.
    pub fn of_histogram(histogram: &LatencyHistogram) -> WrkStats {
        let values = histogram
            .iter_recorded()
            .map(|v| {
                (
                    histogram.highest_equivalent(v.value_iterated_to()),
                    v.count_at_value(),
                )
            })
            .collect();
        WrkStats {
            mean: histogram.mean(),
            stdev: histogram.stdev(),
            ..WrkStats::from_counts(values)
        }
    }

    /// Rates (requests/s), rounded to whole requests as wrk records them.
    pub fn of_rates(rates: &[f64]) -> WrkStats {
        WrkStats::from_counts(
            rates
                .iter()
                .map(|r| (r.max(0.0).round() as u64, 1))
                .collect(),
        )
    }

    pub fn min(&self) -> u64 {
        self.values.first().map_or(0, |&(v, _)| v)
    }
    pub fn max(&self) -> u64 {
        self.values.last().map_or(0, |&(v, _)| v)
    }
    pub fn mean(&self) -> f64 {
        self.mean
    }
    pub fn stdev(&self) -> f64 {
        self.stdev
    }

    /// The value at percentile `p`: the smallest value whose cumulative
    /// count reaches ⌈p/100 × count⌉ (at least 1), the rule of stampede's
    /// own percentiles, so `latency:percentile(99)` is the p99 stampede
    /// prints (wrk's rank is round(p/100 × count + 0.5): at most one sample
    /// apart); 0 when empty.
    pub fn percentile(&self, p: f64) -> u64 {
        let share = (p / 100.0).clamp(0.0, 1.0);
        let rank = ((share * self.count as f64).ceil() as u64).max(1);
        let mut total = 0;
        for &(value, n) in &self.values {
            total += n;
            if total >= rank {
                return value;
            }
        }
        0
    }

    /// `stats(i)`: the i-th distinct value (1-based) and its count; (0, 0) past the end.
    pub fn value_at(&self, index: u64) -> (u64, u64) {
        index
            .checked_sub(1)
            .and_then(|i| self.values.get(usize::try_from(i).ok()?))
            .copied()
            .unwrap_or((0, 0))
    }

    /// `#stats`: how many distinct values.
    pub fn distinct(&self) -> usize {
        self.values.len()
    }
}

impl UserData for WrkStats {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("min", |_, s| Ok(s.min()));
        fields.add_field_method_get("max", |_, s| Ok(s.max()));
        fields.add_field_method_get("mean", |_, s| Ok(s.mean()));
        fields.add_field_method_get("stdev", |_, s| Ok(s.stdev()));
    }

    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method("percentile", |_, s, p: f64| Ok(s.percentile(p)));
        methods.add_meta_method(MetaMethod::Call, |_, s, index: f64| {
            Ok(s.value_at(if index >= 1.0 { index as u64 } else { 0 }))
        });
        methods.add_meta_method(MetaMethod::Len, |_, s, ()| Ok(s.distinct()));
    }
}

/// The per-thread request rate, one sample per second of the run: that
/// second's completed responses per second, split over the threads.
pub fn per_thread_rates(result: &RunResult) -> Vec<f64> {
    let threads = result.plan.threads.max(1) as f64;
    result
        .timeseries
        .iter()
        .filter(|point| point.duration_s > 0.0)
        .map(|point| point.rps / threads)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_follow_stampedes_rank_rule() {
        let stats = WrkStats::from_counts((1..=100).map(|v| (v, 1)).collect());
        assert_eq!((stats.min(), stats.max(), stats.distinct()), (1, 100, 100));
        assert_eq!(stats.percentile(50.0), 50);
        assert_eq!(stats.percentile(99.0), 99);
        assert_eq!(stats.percentile(99.999), 100);
        assert_eq!(stats.percentile(0.0), 1);
        assert!((stats.mean() - 50.5).abs() < 1e-9);
        // Sample stdev of 1..=100.
        assert!((stats.stdev() - 29.011_491_975_882_016).abs() < 1e-9);
        assert_eq!(stats.value_at(1), (1, 1));
        assert_eq!(stats.value_at(101), (0, 0));
        assert_eq!(stats.value_at(0), (0, 0));
    }

    #[test]
    fn equal_values_merge_and_empty_is_zero() {
        let stats = WrkStats::from_counts(vec![(5, 2), (3, 1), (5, 1), (9, 0)]);
        assert_eq!(stats.distinct(), 2);
        assert_eq!(stats.value_at(2), (5, 3));
        let empty = WrkStats::from_counts(Vec::new());
        assert_eq!(
            (empty.min(), empty.max(), empty.percentile(99.0)),
            (0, 0, 0)
        );
        assert_eq!(WrkStats::of_rates(&[99.6, 100.2]).value_at(1), (100, 2));
    }

    #[test]
    fn histogram_percentiles_match_the_results() {
        let mut histogram = stampede_metrics::new_latency_histogram();
        for v in 1..=1000u64 {
            stampede_metrics::record_latency(&mut histogram, v);
        }
        let stats = WrkStats::of_histogram(&histogram);
        assert_eq!(stats.percentile(99.0), histogram.value_at_quantile(0.99));
        assert_eq!(stats.percentile(50.0), histogram.value_at_quantile(0.5));
        assert_eq!(stats.max(), histogram.max());
        assert!((stats.mean() - histogram.mean()).abs() < 1e-9);
    }

    #[test]
    fn stats_objects_answer_lua_as_wrks_do() {
        let lua = mlua::Lua::new();
        lua.globals()
            .set("s", WrkStats::from_counts(vec![(10, 3), (20, 1)]))
            .unwrap();
        let (min, max, p, len, v, n): (u64, u64, u64, usize, u64, u64) = lua
            .load("local v, n = s(2) return s.min, s.max, s:percentile(90), #s, v, n")
            .eval()
            .unwrap();
        assert_eq!((min, max, p, len, v, n), (10, 20, 20, 2, 20, 1));
    }
}
