//! Merging results of agents that loaded one target together into one
//! [`RunResult`]. What is exact and what is not:
//!
//! - exact: every count (requests, errors, status, bytes, connections, late
//!   sends), the latency and service-time histograms (HDR histograms add
//!   losslessly, so every percentile of the merge is the percentile of the
//!   union of all samples), `breakdown.service`/`.total`, per-second counts,
//!   and per-second percentiles when every input keeps each second's
//!   histograms (`timeseries[].histograms`: they are added second by second);
//! - exact given the clocks: rates (`rps`, `goodput`, throughput) are totals
//!   over the union of the measurement windows on the wall clock, earliest
//!   start to latest end, as the agents' clocks tell them;
//! - approximate: `breakdown.connect`/`.waiting` and `schedule.lag_us` (their
//!   histograms are not stored): counts summed, min/max exact, mean and stdev
//!   pooled exactly from counts, the median a count-weighted mean of medians;
//!   `schedule.lag_p99_us`, `dns_us`, and the per-second percentiles when
//!   some input has no per-second histograms (written before they were
//!   kept), are the maximum over agents, an upper bound; a notice says so.
//!
//! Time series are aligned on the wall clock: each result's measurement
//! starts at `started_at + warmup_s`, and its seconds are shifted by the whole
//! number of seconds (rounded) between that start and the earliest one.
//! A merge of several gets a `run_id` of its own and lists the inputs' ids
//! in `merged_run_ids`. Merging one result gives it back unchanged (its id too), except that SLO checks are
//! left to the caller (they were of one share; see `stampede merge`).

use crate::{
    decode_histogram, encode_histogram, new_latency_histogram, parse_timestamp, second_percentiles,
    AgentInfo, LatencyHistogram, LatencySummary, MetricsError, MonitorReport, RequestCounts,
    RequestLogSummary, RunResult, ScheduleSummary, SecondPoint, SecondSums, TimingSummary,
};
use std::collections::BTreeMap;

/// Why results could not be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// No result was given.
    #[error("no results to merge")]
    Empty,
    /// Input `index` (from 0) measured another test than input 0.
    #[error("input {index} differs from input 0 in plan.{field}: '{other}' vs '{first}'")]
    PlanMismatch {
        /// The input, from 0.
        index: usize,
        /// The plan field that differs (`url`, `method`, …).
        field: &'static str,
        /// Its value in input 0.
        first: String,
        /// Its value in this input.
        other: String,
    },
    /// An input with a histogram that cannot be decoded or added.
    #[error("input {index}: {source}")]
    Histogram {
        /// The input, from 0.
        index: usize,
        /// Why the histogram cannot be used.
        source: MetricsError,
    },
    /// An input whose start time cannot be read.
    #[error("input {index}: started_at: {source}")]
    StartedAt {
        /// The input, from 0.
        index: usize,
        /// Why its `started_at` cannot be read.
        source: crate::TimestampError,
    },
}

/// The agents' streams (`--sse`), their histograms added: lossless.
fn merge_streams(
    results: &[RunResult],
    elapsed_s: f64,
) -> Result<Option<crate::StreamResult>, MergeError> {
    let mut merged: Option<crate::StreamBooks> = None;
    for (index, result) in results.iter().enumerate() {
        let Some(stream) = &result.stream else {
            continue;
        };
        let books = (stream.books()).map_err(|source| MergeError::Histogram { index, source })?;
        merged.get_or_insert_with(Default::default).merge(&books);
    }
    let elapsed = std::time::Duration::from_secs_f64(elapsed_s.max(0.0));
    Ok(merged.map(|books| crate::StreamResult::of(&books, elapsed)))
}

/// The agents' WebSocket figures, their histograms added: lossless.
fn merge_websockets(
    results: &[RunResult],
    elapsed_s: f64,
) -> Result<Option<crate::WebSocketResult>, MergeError> {
    let mut merged: Option<crate::WebSocketBooks> = None;
    for (index, result) in results.iter().enumerate() {
        let Some(ws) = &result.websocket else {
            continue;
        };
        let books = (ws.books()).map_err(|source| MergeError::Histogram { index, source })?;
        merged.get_or_insert_with(Default::default).merge(&books);
    }
    let elapsed = std::time::Duration::from_secs_f64(elapsed_s.max(0.0));
    Ok(merged.map(|books| crate::WebSocketResult::of(&books, elapsed)))
}

/// Merges `results` into one; unless `force`, refuses results whose plans
/// differ in URL, method or load model (they measured different tests).
pub fn merge_results(results: &[RunResult], force: bool) -> Result<RunResult, MergeError> {
    let first = results.first().ok_or(MergeError::Empty)?;
    let mut warnings = Vec::new();
    let mut differences = plan_differences(results);
    if !force && !differences.is_empty() {
        return Err(differences.swap_remove(0));
    }
    for difference in differences {
        warnings.push(format!(
            "merged despite a difference (--force): {difference}"
        ));
    }
    let windows = windows(results)?;
    let latency = add_histograms(results, |r| &r.histogram)?;
    let service = add_histograms(results, |r| &r.service_histogram)?;
    let base = &results[windows.earliest];
    let elapsed_s = windows.elapsed_s(results);
    let requests = sum_requests(results);
    let error_rate_pct = error_rate_pct(&requests);
    let rate = |count: u64| {
        if elapsed_s > 0.0 {
            count as f64 / elapsed_s
        } else {
            0.0
        }
    };
    let bytes_received = results.iter().map(|r| r.bytes.received).sum();
    let rps = rate(requests.completed);
    // Starting from a copy of the earliest result keeps fields this merge
    // does not know about; every field it knows is set below.
    let mut merged = base.clone();
    merged.schema = first.schema.clone();
    merged.version = first.version.clone();
    merged.plan = merge_plans(results, base);
    merged.elapsed_s = elapsed_s;
    merged.interrupted = results.iter().any(|r| r.interrupted);
    merged.requests = requests;
    merged.rps = rps;
    merged.goodput = rate(requests.success);
    merged.error_rate_pct = error_rate_pct;
    merged.throughput_bytes_per_s = rate(bytes_received);
    merged.errors = sum_maps(results.iter().map(|r| &r.errors));
    merged.error_samples = merge_error_samples(results);
    merged.checks = merge_checks(results);
    merged.redirects =
        results
            .iter()
            .filter_map(|r| r.redirects)
            .reduce(|a, b| crate::RedirectCounts {
                max_hops: a.max_hops.max(b.max_hops),
                followed: a.followed + b.followed,
                offsite: a.offsite + b.offsite,
            });
    merged.compression = results
        .iter()
        .filter_map(|r| r.compression.clone())
        .reduce(|a, b| crate::CompressionSummary {
            accept_encoding: a.accept_encoding.or(b.accept_encoding),
            decode: a.decode || b.decode,
            decoded_bytes: sum_options(a.decoded_bytes, b.decoded_bytes),
            encoded_responses: sum_options(a.encoded_responses, b.encoded_responses),
        });
    merged.stream = merge_streams(results, elapsed_s)?;
    merged.websocket = merge_websockets(results, elapsed_s)?;
    merged.http2 = (results.iter().filter_map(|r| r.http2)).min_by_key(|h| h.server_max_streams);
    if let Some(targets) = crate::merge_targets::merge_targets(results, elapsed_s) {
        if let Some(groups) = crate::merge_targets::merge_groups(&base.groups, &targets, elapsed_s)
        {
            merged.groups = groups;
        }
        merged.targets = targets;
    }
    merged.stop_reason = results.iter().find_map(|r| r.stop_reason.clone());
    merged.dns = crate::merge_dns(results.iter().filter_map(|r| r.dns.as_ref()));
    merged.rendezvous = crate::merge_rendezvous(results.iter().map(|r| &r.rendezvous[..]));
    merged.status = sum_maps(results.iter().map(|r| &r.status));
    merged.bytes.received = bytes_received;
    merged.bytes.body = results.iter().map(|r| r.bytes.body).sum();
    merged.connections.opened = results.iter().map(|r| r.connections.opened).sum();
    merged.connections.reconnects = results.iter().map(|r| r.connections.reconnects).sum();
    merged.connections.planned_reconnects = results
        .iter()
        .map(|r| r.connections.planned_reconnects)
        .sum();
    merged.connections.attempts = results.iter().map(|r| r.connections.attempts).sum();
    merged.effective_rps = rps * (1.0 - error_rate_pct / 100.0);
    merged.latency_us = LatencySummary::of(&latency);
    merged.histogram = encode_histogram(&latency);
    merged.service_time_us = LatencySummary::of(&service);
    merged.service_histogram = encode_histogram(&service);
    let breakdown = &mut merged.breakdown;
    breakdown.dns_us = results
        .iter()
        .map(|r| r.breakdown.dns_us)
        .max()
        .unwrap_or(0);
    breakdown.connect = pool(results.iter().map(|r| &r.breakdown.connect));
    breakdown.tls = pool(results.iter().map(|r| &r.breakdown.tls));
    breakdown.connect_tls = pool(results.iter().map(|r| &r.breakdown.connect_tls));
    breakdown.quic = pool(results.iter().map(|r| &r.breakdown.quic));
    breakdown.zero_rtt = pool(results.iter().map(|r| &r.breakdown.zero_rtt));
    breakdown.waiting = pool(results.iter().map(|r| &r.breakdown.waiting));
    breakdown.service = TimingSummary::of(&service);
    breakdown.total = TimingSummary::of(&latency);
    merged.schedule = merge_schedules(results);
    let series = merge_timeseries(results, &windows)?;
    merged.timeseries = series.points;
    merged.request_log = merge_request_logs(results);
    merged.monitor = merge_monitors(results);
    merged.slo = Vec::new();
    merged.warnings = Vec::new();
    merged.notices = Vec::new();
    merged.agent = None;
    if let [only] = results {
        merged.warnings = only.warnings.clone();
        merged.notices = only.notices.clone();
        merged.agent = only.agent.clone();
        return Ok(merged);
    }
    // A merge is a result of its own: a new id, and the inputs' ids to
    // find each agent's file (and its scraped series) again.
    merged.run_id = crate::new_run_id();
    merged.merged_run_ids = results.iter().map(|r| r.run_id.clone()).collect();
    warnings.extend(agent_warnings(results));
    warnings.extend(windows.skew_warning(results));
    warnings.extend(labelled_warnings(results));
    for notice in results.iter().flat_map(|r| &r.notices) {
        if !merged.notices.contains(notice) {
            merged.notices.push(notice.clone());
        }
    }
    merged.notices.insert(0, windows.summary(results));
    if let Some(fallback) = series.fallback {
        merged.notices.insert(1, fallback);
    }
    merged.warnings = warnings;
    Ok(merged)
}

/// How to name input `index` in messages: its agent share, else its position.
fn label(result: &RunResult, index: usize) -> String {
    match &result.agent {
        Some(agent) => format!("agent {}", agent.label()),
        None => format!("input {index}"),
    }
}

/// Each input's warnings, prefixed with who had them; a warning several
/// agents share is given once, with all their labels.
fn labelled_warnings(results: &[RunResult]) -> Vec<String> {
    let mut grouped: Vec<(&str, Vec<String>)> = Vec::new();
    for (index, result) in results.iter().enumerate() {
        for warning in &result.warnings {
            let who = label(result, index);
            match grouped
                .iter_mut()
                .find(|(text, _)| *text == warning.as_str())
            {
                Some((_, labels)) => labels.push(who),
                None => grouped.push((warning, vec![who])),
            }
        }
    }
    grouped
        .into_iter()
        .map(|(text, labels)| format!("{}: {text}", labels.join(", ")))
        .collect()
}

/// Every field in which a plan differs from the first one's where merging
/// would mix different tests.
fn plan_differences(results: &[RunResult]) -> Vec<MergeError> {
    let Some(first) = results.first() else {
        return Vec::new();
    };
    let mut differences = Vec::new();
    for (index, result) in results.iter().enumerate().skip(1) {
        let fields: [(&'static str, &String, &String); 3] = [
            ("url", &first.plan.url, &result.plan.url),
            ("method", &first.plan.method, &result.plan.method),
            ("model", &first.plan.model, &result.plan.model),
        ];
        for (field, a, b) in fields {
            if a != b {
                differences.push(MergeError::PlanMismatch {
                    index,
                    field,
                    first: a.clone(),
                    other: b.clone(),
                });
            }
        }
    }
    differences
}

/// Each result's measurement window on a common wall-clock axis, in seconds
/// from the earliest `started_at`.
struct Windows {
    /// Start of measurement of each result (`started_at + warmup_s`).
    starts: Vec<f64>,
    /// The result that started measuring first.
    earliest: usize,
}

impl Windows {
    fn origin(&self) -> f64 {
        self.starts[self.earliest]
    }

    /// Seconds result `index` started measuring after the earliest one.
    fn offset(&self, index: usize) -> f64 {
        self.starts[index] - self.origin()
    }

    /// From the earliest measurement start to the latest end.
    fn elapsed_s(&self, results: &[RunResult]) -> f64 {
        results
            .iter()
            .enumerate()
            .map(|(index, r)| self.offset(index) + r.elapsed_s)
            .fold(0.0, f64::max)
    }

    /// The whole seconds result `index`'s series is shifted by.
    fn shift(&self, index: usize) -> u64 {
        self.offset(index).round() as u64
    }

    fn spread_ms(&self) -> f64 {
        let latest = self.starts.iter().copied().fold(self.origin(), f64::max);
        (latest - self.origin()) * 1000.0
    }

    fn summary(&self, results: &[RunResult]) -> String {
        format!(
            "merged {} results; their measurements started within {:.0} ms of each other (by their clocks)",
            results.len(),
            self.spread_ms()
        )
    }

    /// Warns when the starts are further apart than any agent allowed.
    fn skew_warning(&self, results: &[RunResult]) -> Option<String> {
        let allowed_ms = results
            .iter()
            .filter_map(|r| r.agent.as_ref().map(|a| a.max_skew_ms))
            .max()
            .unwrap_or(MAX_SKEW.as_millis() as u64) as f64;
        (self.spread_ms() > allowed_ms).then(|| skew_warning(self.spread_ms(), allowed_ms))
    }
}

/// How far apart the starts of one run's parts may be before a merge
/// warns, when no agent says otherwise (`max_skew_ms`).
pub(crate) const MAX_SKEW: std::time::Duration = std::time::Duration::from_secs(1);

/// The warning of a merge whose parts started `spread_ms` apart, more
/// than `allowed_ms`: results and interval logs alike.
pub(crate) fn skew_warning(spread_ms: f64, allowed_ms: f64) -> String {
    format!(
        "measurements started {spread_ms:.0} ms apart (more than {allowed_ms:.0} ms): per-second \
         figures mix different moments of the test; check the agents' clocks and --start-at"
    )
}

fn windows(results: &[RunResult]) -> Result<Windows, MergeError> {
    let mut starts_ms = Vec::with_capacity(results.len());
    for (index, result) in results.iter().enumerate() {
        let time = parse_timestamp(&result.started_at)
            .map_err(|source| MergeError::StartedAt { index, source })?;
        let ms = time
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        starts_ms.push(ms);
    }
    let first_ms = starts_ms.iter().copied().min().unwrap_or(0);
    // Integer milliseconds first, so that one result's offset is exactly zero
    // and merging one result keeps its elapsed time to the last bit.
    let starts: Vec<f64> = starts_ms
        .iter()
        .zip(results)
        .map(|(ms, r)| (ms - first_ms) as f64 / 1000.0 + r.plan.warmup_s.unwrap_or(0.0))
        .collect();
    let earliest = (0..starts.len())
        .min_by(|a, b| starts[*a].total_cmp(&starts[*b]))
        .unwrap_or(0);
    Ok(Windows { starts, earliest })
}

/// Adds the histograms `field` names; an empty string (older files without
/// a service histogram) adds nothing.
fn add_histograms(
    results: &[RunResult],
    field: impl Fn(&RunResult) -> &String,
) -> Result<LatencyHistogram, MergeError> {
    let mut total = new_latency_histogram();
    for (index, result) in results.iter().enumerate() {
        let text = field(result);
        if text.trim().is_empty() {
            continue;
        }
        let histogram =
            decode_histogram(text).map_err(|source| MergeError::Histogram { index, source })?;
        total.add(&histogram).map_err(|e| MergeError::Histogram {
            index,
            source: MetricsError::Histogram(format!("{e:?}")),
        })?;
    }
    Ok(total)
}

fn sum_requests(results: &[RunResult]) -> RequestCounts {
    let sum = |f: fn(&RequestCounts) -> u64| results.iter().map(|r| f(&r.requests)).sum();
    RequestCounts {
        sent: sum(|c| c.sent),
        completed: sum(|c| c.completed),
        success: sum(|c| c.success),
        failed_status: sum(|c| c.failed_status),
        check_failed: results
            .iter()
            .any(|r| r.requests.check_failed.is_some())
            .then(|| sum(|c| c.check_failed.unwrap_or(0))),
        errors: sum(|c| c.errors),
        unfinished: sum(|c| c.unfinished),
    }
}

/// As a run computes it: failed share of finished requests, in percent.
fn error_rate_pct(c: &RequestCounts) -> f64 {
    c.error_rate_pct()
}

/// Checks by position (every agent ran the same plan): counts add up, and
/// the first few distinct failing values are kept.
fn merge_checks(results: &[RunResult]) -> Vec<crate::CheckResult> {
    let mut merged: Vec<crate::CheckResult> = Vec::new();
    for result in results {
        for (index, check) in result.checks.iter().enumerate() {
            match merged.get_mut(index) {
                Some(mine) => {
                    mine.passed += check.passed;
                    mine.failed += check.failed;
                    for value in &check.samples {
                        if mine.samples.len() < crate::MAX_CHECK_SAMPLES
                            && !mine.samples.contains(value)
                        {
                            mine.samples.push(value.clone());
                        }
                    }
                }
                None => merged.push(check.clone()),
            }
        }
    }
    merged
}

fn sum_maps<'a>(maps: impl Iterator<Item = &'a BTreeMap<String, u64>>) -> BTreeMap<String, u64> {
    let mut total = BTreeMap::new();
    for map in maps {
        for (key, n) in map {
            *total.entry(key.clone()).or_insert(0) += n;
        }
    }
    total
}

/// Up to the run's limit of distinct messages per error class, first come first kept.
fn merge_error_samples(results: &[RunResult]) -> BTreeMap<String, Vec<String>> {
    let limit = crate::recording::MAX_ERROR_SAMPLES;
    let mut merged: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (kind, messages) in results.iter().flat_map(|r| &r.error_samples) {
        let kept = merged.entry(kind.clone()).or_default();
        for message in messages {
            if kept.len() < limit && !kept.contains(message) {
                kept.push(message.clone());
            }
        }
    }
    merged
}

/// Pools summaries whose samples are not stored: count, min, max exact; mean
/// and stdev exact from the parts (population variance); median approximate.
fn pool<'a>(parts: impl Iterator<Item = &'a TimingSummary>) -> TimingSummary {
    let parts: Vec<&TimingSummary> = parts.filter(|p| p.count > 0).collect();
    match parts.as_slice() {
        [] => return TimingSummary::default(),
        // One part is returned as is, not recomputed through floating point.
        [only] => return **only,
        _ => {}
    }
    let count: u64 = parts.iter().map(|p| p.count).sum();
    let n = count as f64;
    let weighted =
        |f: fn(&TimingSummary) -> f64| parts.iter().map(|p| p.count as f64 * f(p)).sum::<f64>() / n;
    let mean = weighted(|p| p.mean);
    let second_moment = weighted(|p| p.stdev * p.stdev + p.mean * p.mean);
    TimingSummary {
        count,
        min: parts.iter().map(|p| p.min).min().unwrap_or(0),
        mean,
        stdev: (second_moment - mean * mean).max(0.0).sqrt(),
        median: weighted(|p| p.median as f64).round() as u64,
        max: parts.iter().map(|p| p.max).max().unwrap_or(0),
    }
}

fn merge_schedules(results: &[RunResult]) -> Option<ScheduleSummary> {
    let schedules: Vec<&ScheduleSummary> =
        results.iter().filter_map(|r| r.schedule.as_ref()).collect();
    if let [only] = schedules.as_slice() {
        return Some(**only);
    }
    (!schedules.is_empty()).then(|| ScheduleSummary {
        late_sends: schedules.iter().map(|s| s.late_sends).sum(),
        lag_us: pool(schedules.iter().map(|s| &s.lag_us)),
        lag_p99_us: schedules.iter().map(|s| s.lag_p99_us).max().unwrap_or(0),
        not_sent: schedules.iter().map(|s| s.not_sent).sum(),
        lateness_us: pool(schedules.iter().map(|s| &s.lateness_us)),
        lateness_p99_us: schedules
            .iter()
            .map(|s| s.lateness_p99_us)
            .max()
            .unwrap_or(0),
    })
}

/// The merged series, and a note when its percentiles are upper bounds.
struct MergedSeries {
    points: Vec<SecondPoint>,
    /// Set when some input has no per-second histograms.
    fallback: Option<String>,
}

/// Sums per-second counts on the common wall-clock axis; gaps between
/// windows become empty seconds so the series stays contiguous. When
/// every input carries each second's histograms, a merged second's are
/// their sums and its percentiles are those of the sum (exact); otherwise
/// its percentiles are the largest input's (an upper bound, `max_us`
/// exact) and it keeps no histograms.
fn merge_timeseries(results: &[RunResult], windows: &Windows) -> Result<MergedSeries, MergeError> {
    let without: Vec<usize> = (0..results.len())
        .filter(|&i| !crate::has_second_histograms(&results[i].timeseries))
        .collect();
    let exact = without.is_empty();
    // A tag some input lacks (written before it was kept) would sum only
    // the others: it is left out of the merged seconds.
    let common = crate::tags_in_every_second(results.iter().map(|r| &r.timeseries[..]));
    let mut seconds: BTreeMap<u64, (SecondPoint, SecondSums)> = BTreeMap::new();
    for (index, result) in results.iter().enumerate() {
        let shift = windows.shift(index);
        for point in &result.timeseries {
            let second = shift + point.second;
            let (merged, sums) = seconds
                .entry(second)
                .or_insert_with(|| (empty_second(second), SecondSums::default()));
            merged.duration_s = merged.duration_s.max(point.duration_s);
            merged.completed += point.completed;
            merged.success += point.success;
            for (kind, n) in &point.errors {
                *merged.errors.entry(kind.clone()).or_insert(0) += n;
            }
            merged.bytes_received += point.bytes_received;
            merged.in_flight += point.in_flight;
            merged.open_connections += point.open_connections;
            merged.p50_us = merged.p50_us.max(point.p50_us);
            merged.p90_us = merged.p90_us.max(point.p90_us);
            merged.p99_us = merged.p99_us.max(point.p99_us);
            merged.max_us = merged.max_us.max(point.max_us);
            merged.target += point.target;
            merged.websocket = crate::SecondMessages::sum(merged.websocket, point.websocket);
            merged.stream_events = sum_options(merged.stream_events, point.stream_events);
            if exact {
                sums.add(&point.histograms)
                    .map_err(|source| MergeError::Histogram { index, source })?;
            }
        }
    }
    let last = seconds.keys().next_back().copied();
    let points = last
        .map(|last| {
            (0..=last)
                .map(|second| {
                    let (mut point, sums) = seconds
                        .remove(&second)
                        .unwrap_or_else(|| (empty_second(second), SecondSums::default()));
                    if point.duration_s == 0.0 {
                        point.duration_s = 1.0;
                    }
                    point.rps = point.completed as f64 / point.duration_s;
                    if exact {
                        [point.p50_us, point.p90_us, point.p99_us, point.max_us] =
                            second_percentiles(&sums.latency());
                        point.histograms = sums.encode();
                        point.histograms.retain(|tag, _| common.contains(tag));
                    }
                    point
                })
                .collect()
        })
        .unwrap_or_default();
    let fallback = (!exact).then(|| {
        let who: Vec<String> = without.iter().map(|&i| label(&results[i], i)).collect();
        format!(
            "{} has no per-second histograms (a result written before they were kept): \
             per-second percentiles are the largest input's, an upper bound (max_us exact)",
            who.join(", ")
        )
    });
    Ok(MergedSeries { points, fallback })
}

/// A second no input has (yet): zero everywhere.
pub(crate) fn empty_second(second: u64) -> SecondPoint {
    SecondPoint {
        second,
        duration_s: 0.0,
        completed: 0,
        success: 0,
        errors: BTreeMap::new(),
        bytes_received: 0,
        rps: 0.0,
        in_flight: 0,
        open_connections: 0,
        p50_us: 0,
        p90_us: 0,
        p99_us: 0,
        max_us: 0,
        target: 0.0,
        histograms: BTreeMap::new(),
        websocket: None,
        stream_events: None,
    }
}

fn merge_request_logs(results: &[RunResult]) -> Option<RequestLogSummary> {
    let logs: Vec<&RequestLogSummary> = results
        .iter()
        .filter_map(|r| r.request_log.as_ref())
        .collect();
    (!logs.is_empty()).then(|| RequestLogSummary {
        written: logs.iter().map(|l| l.written).sum(),
        dropped: logs.iter().map(|l| l.dropped).sum(),
        sample_every: logs.iter().map(|l| l.sample_every).max().unwrap_or(1),
    })
}

/// Every agent's processes and machine samples, one after the other; CPUs
/// are summed (all the load machines together).
fn merge_monitors(results: &[RunResult]) -> Option<MonitorReport> {
    let reports: Vec<&MonitorReport> = results.iter().filter_map(|r| r.monitor.as_ref()).collect();
    if let [only] = reports.as_slice() {
        return Some((*only).clone());
    }
    let first = reports.first()?;
    Some(MonitorReport {
        interval_s: first.interval_s,
        cpus: reports.iter().map(|r| r.cpus).sum(),
        processes: reports.iter().flat_map(|r| r.processes.clone()).collect(),
        machine: reports.iter().flat_map(|r| r.machine.clone()).collect(),
    })
}

/// The plan of the whole test: shares added back up (connections, rate,
/// threads, `-n`, stage targets); the rest as the earliest result had it.
fn merge_plans(results: &[RunResult], base: &RunResult) -> crate::PlanSummary {
    let mut plan = base.plan.clone();
    if results.len() == 1 {
        return plan;
    }
    plan.connections = results.iter().map(|r| r.plan.connections).sum();
    plan.threads = results.iter().map(|r| r.plan.threads).sum();
    if results.iter().all(|r| r.plan.rate.is_some()) {
        plan.rate = Some(results.iter().filter_map(|r| r.plan.rate).sum());
    }
    if results.iter().all(|r| r.plan.requests.is_some()) {
        plan.requests = Some(results.iter().filter_map(|r| r.plan.requests).sum());
    }
    let same_stages = results.iter().all(|r| {
        r.plan.stages.len() == plan.stages.len()
            && r.plan
                .stages
                .iter()
                .zip(&plan.stages)
                .all(|(a, b)| a.duration_s == b.duration_s)
    });
    if same_stages {
        for (position, stage) in plan.stages.iter_mut().enumerate() {
            stage.target = results.iter().map(|r| r.plan.stages[position].target).sum();
        }
    }
    plan
}

/// Shares that are missing, repeated, or of different splits.
fn agent_warnings(results: &[RunResult]) -> Vec<String> {
    let agents: Vec<&AgentInfo> = results.iter().filter_map(|r| r.agent.as_ref()).collect();
    let mut warnings = Vec::new();
    if agents.is_empty() {
        return warnings;
    }
    if agents.len() < results.len() {
        warnings.push(
            "some results were not run as agents (--agent): their load adds to the agents' shares"
                .into(),
        );
    }
    let count = agents[0].count;
    if agents.iter().any(|a| a.count != count) {
        warnings.push("results come from different splits (--agent I/N with different N)".into());
        return warnings;
    }
    let mut seen = vec![0u32; count as usize];
    for agent in &agents {
        if let Some(slot) = seen.get_mut(agent.index as usize) {
            *slot += 1;
        }
    }
    let repeated: Vec<String> = (0..count)
        .filter(|i| seen[*i as usize] > 1)
        .map(|i| format!("{i}/{count}"))
        .collect();
    let missing: Vec<String> = (0..count)
        .filter(|i| seen[*i as usize] == 0)
        .map(|i| format!("{i}/{count}"))
        .collect();
    if !repeated.is_empty() {
        warnings.push(format!(
            "agent {} merged more than once: its load is counted twice",
            repeated.join(", ")
        ));
    }
    if !missing.is_empty() {
        warnings.push(format!(
            "agent {} missing: the merge covers only part of the planned load",
            missing.join(", ")
        ));
    }
    warnings
}

#[cfg(test)]
#[path = "merge_tests.rs"]
mod tests;

/// The sum of two optional counts (absent when both are).
fn sum_options(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    }
}
