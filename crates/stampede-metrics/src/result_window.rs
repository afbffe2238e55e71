//! A run's result narrowed to a window of whole seconds (`compare --from
//! --to`): counts, rates and the error rate from those seconds' points,
//! latency and service time from the sum of their histograms
//! (`timeseries[].histograms`), so their percentiles are exact. "The first minute is warm-up" becomes a
//! flag, not a second run.

use crate::{encode_histogram, LatencySummary, RunResult, SecondSums, TimingSummary};
use std::collections::BTreeMap;

/// Why a window cannot be taken.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WindowError {
    #[error(
        "it has no per-second histograms (a result written before they were kept): \
         a window's percentiles need them"
    )]
    /// The result keeps no per-second histograms.
    NoHistograms,
    #[error(
        "it has no per-second series (a run ended by a forced exit keeps only its totals): \
         no window to take"
    )]
    /// The result keeps no per-second series.
    NoSeries,
    /// The window holds no second of the run.
    #[error("the window {window} holds no second of it (it measured {elapsed_s:.1} s)")]
    Empty {
        /// The window, in words (`from 30 s to 90 s`).
        window: String,
        /// How long the run measured, seconds.
        elapsed_s: f64,
    },
    /// A second's histogram cannot be decoded or added.
    #[error("second {second}: {message}")]
    Histogram {
        /// The second, from 0.
        second: u64,
        /// Why.
        message: String,
    },
}

/// `from 30 s to 90 s`, or `from 30 s to the end`.
pub fn window_text(from_s: u64, to_s: Option<u64>) -> String {
    match to_s {
        Some(to) => format!("from {from_s} s to {to} s"),
        None => format!("from {from_s} s to the end"),
    }
}

/// The result over the seconds that start in `[from_s, to_s)` (to the end
/// without `to_s`). Latency (`latency_us`, `histogram`, `breakdown.total`)
/// is the summed histograms'; `requests`, `errors`, `bytes.received` and
/// every rate are the seconds' sums over their length (`elapsed_s`).
/// `requests.failed_status` holds every failed response (a second does not
/// tell a failed status from a failed check). Service time
/// (`service_time_us`, `service_histogram`, `breakdown.service`) is the
/// summed `service` histograms' when every second kept them. What no
/// second keeps is cleared rather than left at the whole run's figure:
/// status codes, service time of a result whose seconds lack it, the
/// breakdown's other rows, the schedule, checks,
/// targets, groups, the monitor, SLO checks.
pub fn window_of(
    result: &RunResult,
    from_s: u64,
    to_s: Option<u64>,
) -> Result<RunResult, WindowError> {
    if result.timeseries.is_empty() {
        return Err(WindowError::NoSeries);
    }
    if !crate::has_second_histograms(&result.timeseries) {
        return Err(WindowError::NoHistograms);
    }
    let inside = |second: u64| second >= from_s && to_s.is_none_or(|to| second < to);
    let points: Vec<_> = result
        .timeseries
        .iter()
        .filter(|p| inside(p.second))
        .cloned()
        .collect();
    if points.is_empty() {
        return Err(WindowError::Empty {
            window: window_text(from_s, to_s),
            elapsed_s: result.elapsed_s,
        });
    }
    let mut sums = SecondSums::default();
    for point in &points {
        sums.add(&point.histograms)
            .map_err(|e| WindowError::Histogram {
                second: point.second,
                message: e.to_string(),
            })?;
    }
    let latency = sums.latency();
    let elapsed_s: f64 = points.iter().map(|p| p.duration_s).sum();
    let completed: u64 = points.iter().map(|p| p.completed).sum();
    let success: u64 = points.iter().map(|p| p.success).sum();
    let bytes: u64 = points.iter().map(|p| p.bytes_received).sum();
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    for (kind, n) in points.iter().flat_map(|p| &p.errors) {
        *errors.entry(kind.clone()).or_insert(0) += n;
    }
    let error_count: u64 = errors.values().sum();
    let rate = |n: u64| {
        if elapsed_s > 0.0 {
            n as f64 / elapsed_s
        } else {
            0.0
        }
    };

    let mut window = result.clone();
    window.elapsed_s = elapsed_s;
    window.requests = crate::RequestCounts {
        sent: completed + error_count,
        completed,
        success,
        failed_status: completed - success.min(completed),
        check_failed: None,
        errors: error_count,
        unfinished: 0,
    };
    window.error_rate_pct = window.requests.error_rate_pct();
    window.rps = rate(completed);
    window.goodput = rate(success);
    window.effective_rps = window.rps * (1.0 - window.error_rate_pct / 100.0);
    window.throughput_bytes_per_s = rate(bytes);
    window.bytes.received = bytes;
    window.bytes.body = 0;
    window.errors = errors;
    window.error_samples.clear();
    window.status.clear();
    window.latency_us = LatencySummary::of(&latency);
    window.histogram = encode_histogram(&latency);
    // Service time is exact too when every second kept it (results
    // written before seconds kept `service` have none: it is cleared).
    let service = crate::tags_in_every_second([&points[..]])
        .iter()
        .any(|tag| tag == "service")
        .then(|| sums.sum("service"))
        .flatten();
    window.service_time_us = service.as_ref().map(LatencySummary::of).unwrap_or_default();
    window.service_histogram = service.as_ref().map(encode_histogram).unwrap_or_default();
    window.breakdown = crate::Breakdown {
        total: TimingSummary::of(&latency),
        service: service.as_ref().map(TimingSummary::of).unwrap_or_default(),
        ..crate::Breakdown::default()
    };
    window.schedule = None;
    window.checks.clear();
    window.targets.clear();
    window.groups.clear();
    window.rendezvous.clear();
    window.monitor = None;
    window.slo.clear();
    // The WebSocket and streams summaries are the whole run's (their
    // histograms are not kept per second): a window has none, so
    // `compare --from/--to` shows no row of them rather than the run's.
    window.websocket = None;
    window.stream = None;
    window.timeseries = points;
    window.notices.push(format!(
        "a window of the run: the seconds {} ({elapsed_s:.1} s measured)",
        window_text(from_s, to_s)
    ));
    Ok(window)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Environment, Recording, Snapshot, TimeseriesBuilder};
    use stampede_plan::{Plan, Target};
    use std::time::{Duration, SystemTime};

    /// Four seconds: 100 fast responses in each, and in second 0 (the
    /// warm-up) ten slow ones and five resets.
    fn result() -> RunResult {
        let mut builder = TimeseriesBuilder::new(1);
        let mut total = Snapshot::default();
        let target = |_: f64| 1.0;
        for second in 0..4u64 {
            let mut s = Snapshot::default();
            for i in 0..100 {
                s.latency.record(1_000 + i * 10).unwrap();
                s.service.record(900 + i * 10).unwrap();
            }
            s.counters.success = 100;
            s.counters.bytes_received = 1_000;
            if second == 0 {
                s.latency.record_n(500_000, 10).unwrap();
                s.service.record_n(400_000, 10).unwrap();
                s.counters.failed_status = 10;
                s.counters.errors[crate::ErrorKind::Reset.index()] = 5;
            }
            builder.add(0, second, &s, &target);
            total.merge(&s);
        }
        let recording = Recording {
            timeseries: builder.finish(1.0, &target),
            ..Recording::of(
                SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000),
                Duration::from_secs(4),
                stampede_plan::EventLoop::Epoll,
                total,
            )
        };
        let plan = Plan::minimal(Target::parse("http://10.0.0.1/").unwrap());
        RunResult::from_recording(&plan, &recording, Environment::default(), "t", vec![])
    }

    #[test]
    fn a_window_leaves_the_warm_up_out_exactly() {
        let whole = result();
        assert!(
            whole.latency_us.p99 > 400_000,
            "the warm-up shows in the run"
        );
        let warm = window_of(&whole, 1, None).unwrap();
        let mut fast = crate::new_latency_histogram();
        for _ in 0..3 {
            for i in 0..100 {
                fast.record(1_000 + i * 10).unwrap();
            }
        }
        assert_eq!(warm.latency_us, LatencySummary::of(&fast));
        let mut served = crate::new_latency_histogram();
        for _ in 0..3 {
            for i in 0..100 {
                served.record(900 + i * 10).unwrap();
            }
        }
        assert_eq!(warm.service_time_us, LatencySummary::of(&served));
        assert_eq!(warm.service_histogram, encode_histogram(&served));
        assert_eq!(warm.breakdown.service, TimingSummary::of(&served));
        assert!(whole.service_time_us.max > 300_000);
        assert_eq!(warm.requests.completed, 300);
        assert_eq!(warm.requests.errors, 0);
        assert_eq!(warm.elapsed_s, 3.0);
        assert_eq!(warm.rps, 100.0);
        assert_eq!(warm.throughput_bytes_per_s, 1_000.0);
        assert_eq!(warm.error_rate_pct, 0.0);
        assert!(warm.notices.last().unwrap().contains("from 1 s to the end"));
    }

    #[test]
    fn a_window_of_the_warm_up_counts_its_failures() {
        let first = window_of(&result(), 0, Some(1)).unwrap();
        assert_eq!(first.requests.completed, 110);
        assert_eq!(first.requests.failed_status, 10);
        assert_eq!(first.requests.errors, 5);
        assert_eq!(first.errors.get("reset"), Some(&5));
        // (10 failed + 5 resets) / (110 + 5).
        assert!((first.error_rate_pct - 1500.0 / 115.0).abs() < 1e-9);
        assert_eq!(first.latency_us.max, 500_223);
        assert_eq!(first.timeseries.len(), 1);
    }

    #[test]
    fn a_window_of_seconds_without_service_time_leaves_it_out() {
        let mut older = result();
        older
            .timeseries
            .iter_mut()
            .for_each(|p| p.histograms.retain(|tag, _| tag == "latency"));
        let warm = window_of(&older, 1, None).unwrap();
        assert_eq!(warm.service_time_us, LatencySummary::default());
        assert!(warm.service_histogram.is_empty());
        assert_eq!(
            warm.latency_us,
            window_of(&result(), 1, None).unwrap().latency_us
        );
    }

    #[test]
    fn a_window_needs_histograms_and_seconds() {
        let mut old = result();
        old.timeseries.iter_mut().for_each(|p| p.histograms.clear());
        assert_eq!(window_of(&old, 1, None), Err(WindowError::NoHistograms));
        old.timeseries.clear();
        assert_eq!(window_of(&old, 1, None), Err(WindowError::NoSeries));
        let error = window_of(&result(), 10, Some(20)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the window from 10 s to 20 s holds no second of it (it measured 4.0 s)"
        );
    }
}
