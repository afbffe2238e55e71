//! Service-level objectives: parsing `--slo 'p99<250ms,errors<0.5%,rps>50000'`
//! into [`Condition`]s and evaluating them against a run, like k6 thresholds.
//!
//! Owns the condition grammar, its units and the pass/fail of each condition.
//! Does not own exit codes or printing: the binary turns a failed outcome into
//! exit status 1.

use serde::{Deserialize, Serialize};
use stampede_metrics::RunResult;
use std::fmt;

/// A figure an SLO condition can be placed on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Metric {
    /// A latency percentile, 0 < p ≤ 100 (`p99.9` is `Percentile(99.9)`), in ms.
    Percentile(f64),
    /// Mean latency, in ms.
    Mean,
    /// Highest latency, in ms.
    Max,
    /// Lowest latency, in ms.
    Min,
    /// Failed share of finished requests, in percent (`error_rate_pct`).
    Errors,
    /// Completed responses per second.
    Rps,
    /// Successful responses per second.
    Goodput,
    /// Passed share of check evaluations (`--check`, extractors), in percent.
    Checks,
    /// A figure of the streams (`--sse`): `sse_gap_p99`, `sse_first_event_p50`…,
    /// or of a WebSocket run: `ws_rtt_p99`, `ws_setup_max`…, in ms.
    Stream(StreamFigure, StreamPoint),
}

/// Which timing of the streams (`stream.gap`, `stream.first_event`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamFigure {
    /// The gaps between a stream's events.
    Gap,
    /// The time to a stream's first event.
    FirstEvent,
    /// A WebSocket message's round trip, from its intended send.
    WsRtt,
    /// A WebSocket connection's setup (TCP, TLS, upgrade).
    WsSetup,
}

/// Which point of a stream timing's summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamPoint {
    /// The median.
    P50,
    /// The 99th percentile.
    P99,
    /// The highest.
    Max,
}

impl StreamFigure {
    fn name(self) -> &'static str {
        match self {
            StreamFigure::Gap => "sse_gap",
            StreamFigure::FirstEvent => "sse_first_event",
            StreamFigure::WsRtt => "ws_rtt",
            StreamFigure::WsSetup => "ws_setup",
        }
    }
}

impl StreamPoint {
    fn name(self) -> &'static str {
        match self {
            StreamPoint::P50 => "p50",
            StreamPoint::P99 => "p99",
            StreamPoint::Max => "max",
        }
    }

    fn of(self, s: &stampede_metrics::StreamSummary) -> u64 {
        match self {
            StreamPoint::P50 => s.p50_us,
            StreamPoint::P99 => s.p99_us,
            StreamPoint::Max => s.max_us,
        }
    }
}

/// `sse_gap_p99`, `ws_rtt_p99` and the like.
fn parse_stream_metric(lower: &str) -> Option<Metric> {
    let (figure, point) = lower.rsplit_once('_')?;
    let figures = [
        StreamFigure::Gap,
        StreamFigure::FirstEvent,
        StreamFigure::WsRtt,
        StreamFigure::WsSetup,
    ];
    let figure = figures.into_iter().find(|f| f.name() == figure)?;
    let point = [StreamPoint::P50, StreamPoint::P99, StreamPoint::Max]
        .into_iter()
        .find(|p| p.name() == point)?;
    Some(Metric::Stream(figure, point))
}

/// The kind of quantity, which fixes the threshold's units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quantity {
    LatencyMs,
    Percent,
    PerSecond,
}

impl Metric {
    fn quantity(self) -> Quantity {
        match self {
            Metric::Percentile(_)
            | Metric::Mean
            | Metric::Max
            | Metric::Min
            | Metric::Stream(..) => Quantity::LatencyMs,
            Metric::Errors | Metric::Checks => Quantity::Percent,
            Metric::Rps | Metric::Goodput => Quantity::PerSecond,
        }
    }

    /// The unit measured values and thresholds are expressed in.
    pub fn unit(self) -> &'static str {
        match self.quantity() {
            Quantity::LatencyMs => "ms",
            Quantity::Percent => "%",
            Quantity::PerSecond => "req/s",
        }
    }

    fn parse(name: &str) -> Option<Metric> {
        let lower = name.to_ascii_lowercase();
        let metric = match lower.as_str() {
            "mean" | "avg" => Metric::Mean,
            "max" => Metric::Max,
            "min" => Metric::Min,
            "median" => Metric::Percentile(50.0),
            "errors" | "error_rate" | "error" | "err" => Metric::Errors,
            "rps" | "throughput" => Metric::Rps,
            "goodput" => Metric::Goodput,
            "checks" | "check" => Metric::Checks,
            _ if lower.starts_with("sse_") || lower.starts_with("ws_") => {
                parse_stream_metric(&lower)?
            }
            _ => {
                let p: f64 = lower.strip_prefix('p')?.parse().ok()?;
                if !(p > 0.0 && p <= 100.0) {
                    return None;
                }
                Metric::Percentile(p)
            }
        };
        Some(metric)
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Metric::Percentile(p) => write!(f, "p{p}"),
            Metric::Mean => f.write_str("mean"),
            Metric::Max => f.write_str("max"),
            Metric::Min => f.write_str("min"),
            Metric::Errors => f.write_str("errors"),
            Metric::Rps => f.write_str("rps"),
            Metric::Goodput => f.write_str("goodput"),
            Metric::Checks => f.write_str("checks"),
            Metric::Stream(figure, point) => write!(f, "{}_{}", figure.name(), point.name()),
        }
    }
}

/// How the measured value must relate to the threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Comparator {
    /// Measured below the threshold.
    #[serde(rename = "<")]
    Lt,
    /// Measured at or below the threshold.
    #[serde(rename = "<=")]
    Le,
    /// Measured above the threshold.
    #[serde(rename = ">")]
    Gt,
    /// Measured at or above the threshold.
    #[serde(rename = ">=")]
    Ge,
}

impl Comparator {
    /// Whether `measured <op> threshold` holds.
    pub fn holds(self, measured: f64, threshold: f64) -> bool {
        match self {
            Comparator::Lt => measured < threshold,
            Comparator::Le => measured <= threshold,
            Comparator::Gt => measured > threshold,
            Comparator::Ge => measured >= threshold,
        }
    }

    /// The comparator as written (`<`, `<=`, `>`, `>=`).
    pub fn as_str(self) -> &'static str {
        match self {
            Comparator::Lt => "<",
            Comparator::Le => "<=",
            Comparator::Gt => ">",
            Comparator::Ge => ">=",
        }
    }
}

/// One parsed condition, e.g. `p99<250ms`.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    /// The condition as the user wrote it (trimmed).
    pub text: String,
    /// The figure the condition is on.
    pub metric: Metric,
    /// How the figure must relate to the threshold.
    pub comparator: Comparator,
    /// In the metric's unit: ms for latency, percent for errors, req/s otherwise.
    pub threshold: f64,
}

impl fmt::Display for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Why an `--slo` string could not be parsed; each variant names the bad part.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SloError {
    /// No condition at all.
    #[error("empty SLO: expected conditions like 'p99<250ms,errors<1%'")]
    Empty,
    /// A condition without `<`, `<=`, `>` or `>=`.
    #[error("SLO condition '{part}': no comparator (use <, <=, > or >=)")]
    MissingComparator {
        /// The condition as written.
        part: String,
    },
    /// A figure name the SLO grammar does not know.
    #[error("SLO condition '{part}': unknown figure '{name}' (use p50…p99.99, mean, min, max, errors, rps, goodput, checks; for streams and WebSocket sse_gap_, sse_first_event_, ws_rtt_, ws_setup_ with p50, p99 or max)")]
    UnknownMetric {
        /// The condition as written.
        part: String,
        /// The unknown name.
        name: String,
    },
    /// A threshold that is not a non-negative number.
    #[error("SLO condition '{part}': '{value}' is not a non-negative number")]
    BadThreshold {
        /// The condition as written.
        part: String,
        /// The threshold as written.
        value: String,
    },
    /// A latency threshold without `us`, `ms` or `s`.
    #[error("SLO condition '{part}': latency needs a unit (us, ms or s), e.g. '250ms'")]
    MissingUnit {
        /// The condition as written.
        part: String,
    },
    /// A unit that does not fit the figure (e.g. `ms` on `errors`).
    #[error("SLO condition '{part}': unit '{unit}' does not fit {metric} (expected {expected})")]
    WrongUnit {
        /// The condition as written.
        part: String,
        /// The unit as written.
        unit: String,
        /// The figure's name.
        metric: String,
        /// The units that fit the figure, in words.
        expected: &'static str,
    },
}

/// Parses comma-separated conditions, e.g.
/// `p99<250ms,p50<20ms,errors<0.5%,rps>50000,goodput>=1000,max<2s,p99.9<1s`.
pub fn parse_slo(text: &str) -> Result<Vec<Condition>, SloError> {
    let conditions = text
        .split(',')
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .map(parse_condition)
        .collect::<Result<Vec<_>, _>>()?;
    if conditions.is_empty() {
        return Err(SloError::Empty);
    }
    Ok(conditions)
}

/// Parses one condition such as `p99.9<=1s`.
pub(crate) fn parse_condition(part: &str) -> Result<Condition, SloError> {
    let part = part.trim();
    let at = part
        .find(['<', '>'])
        .ok_or_else(|| SloError::MissingComparator { part: part.into() })?;
    let (name, rest) = part.split_at(at);
    let (comparator, value) = match (rest.as_bytes()[0], rest.as_bytes().get(1)) {
        (b'<', Some(b'=')) => (Comparator::Le, &rest[2..]),
        (b'>', Some(b'=')) => (Comparator::Ge, &rest[2..]),
        (b'<', _) => (Comparator::Lt, &rest[1..]),
        _ => (Comparator::Gt, &rest[1..]),
    };
    let name = name.trim();
    let metric = Metric::parse(name).ok_or_else(|| SloError::UnknownMetric {
        part: part.into(),
        name: name.into(),
    })?;
    let threshold = parse_threshold(part, metric, value.trim())?;
    Ok(Condition {
        text: part.into(),
        metric,
        comparator,
        threshold,
    })
}

/// Splits `250ms` into (250.0, "ms"), checking the number.
fn split_number<'a>(part: &str, value: &'a str) -> Result<(f64, &'a str), SloError> {
    let end = value
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '+'))
        .unwrap_or(value.len());
    // "1e" followed by a unit letter must not swallow the unit: retry shorter.
    let mut cut = end;
    while cut > 0 {
        if let Ok(number) = value[..cut].parse::<f64>() {
            if number.is_finite() && number >= 0.0 {
                return Ok((number, value[cut..].trim()));
            }
            break;
        }
        cut -= 1;
    }
    Err(SloError::BadThreshold {
        part: part.into(),
        value: value.into(),
    })
}

fn parse_threshold(part: &str, metric: Metric, value: &str) -> Result<f64, SloError> {
    let (number, unit) = split_number(part, value)?;
    let wrong = |expected: &'static str| SloError::WrongUnit {
        part: part.into(),
        unit: unit.into(),
        metric: metric.to_string(),
        expected,
    };
    match metric.quantity() {
        Quantity::LatencyMs => match unit {
            "" => Err(SloError::MissingUnit { part: part.into() }),
            "us" | "µs" => Ok(number / 1000.0),
            "ms" => Ok(number),
            "s" => Ok(number * 1000.0),
            _ => Err(wrong("us, ms or s")),
        },
        Quantity::Percent => match unit {
            "" | "%" => Ok(number),
            _ => Err(wrong("a percentage such as 0.5%")),
        },
        Quantity::PerSecond => {
            let unit = unit.strip_suffix("/s").unwrap_or(unit);
            match unit {
                "" => Ok(number),
                "k" => Ok(number * 1e3),
                "M" => Ok(number * 1e6),
                _ => Err(wrong("requests per second, e.g. 50000 or 50k")),
            }
        }
    }
}

/// Something an SLO can be measured on: a run's result, or a sweep step.
pub trait Measure {
    /// The metric's value in its unit (see [`Metric::unit`]), or `None` when it
    /// was not measured (e.g. latency of a run without a single response).
    fn measure(&self, metric: Metric) -> Option<f64>;
}

/// The percentiles stored in `latency_us`, so most conditions need no histogram.
fn summary_percentile(r: &RunResult, p: f64) -> Option<u64> {
    let l = &r.latency_us;
    let table = [
        (50.0, l.p50),
        (66.0, l.p66),
        (75.0, l.p75),
        (80.0, l.p80),
        (90.0, l.p90),
        (95.0, l.p95),
        (98.0, l.p98),
        (99.0, l.p99),
        (99.9, l.p99_9),
        (99.99, l.p99_99),
        (100.0, l.max),
    ];
    table
        .iter()
        .find(|(q, _)| (q - p).abs() < 1e-9)
        .map(|(_, v)| *v)
}

impl Measure for RunResult {
    fn measure(&self, metric: Metric) -> Option<f64> {
        // With no complete response the latency summary is all zeros, which
        // would pass any latency bound vacuously: report "not measured" instead.
        let has_latency = self.requests.completed > 0;
        let us = |v: f64| has_latency.then_some(v / 1000.0);
        match metric {
            Metric::Percentile(p) => match summary_percentile(self, p) {
                Some(v) => us(v as f64),
                None => {
                    let histogram = self.latency_histogram().ok()?;
                    us(histogram.value_at_quantile(p / 100.0) as f64)
                }
            },
            Metric::Mean => us(self.latency_us.mean),
            Metric::Max => us(self.latency_us.max as f64),
            Metric::Min => us(self.latency_us.min as f64),
            Metric::Errors => Some(self.error_rate_pct),
            Metric::Rps => Some(self.rps),
            Metric::Goodput => Some(self.goodput),
            Metric::Checks => {
                // No check ran: not measured (a gate on checks then fails).
                let passed: u64 = self.checks.iter().map(|c| c.passed).sum();
                let failed: u64 = self.checks.iter().map(|c| c.failed).sum();
                let total = passed + failed;
                (total > 0).then(|| 100.0 * passed as f64 / total as f64)
            }
            Metric::Stream(figure, point) => {
                // No stream watched (no WebSocket run), or no value in
                // its summary: not measured.
                let summary = match figure {
                    StreamFigure::Gap => &self.stream.as_ref()?.gap,
                    StreamFigure::FirstEvent => &self.stream.as_ref()?.first_event,
                    StreamFigure::WsRtt => &self.websocket.as_ref()?.rtt,
                    StreamFigure::WsSetup => &self.websocket.as_ref()?.setup,
                };
                (summary.count > 0).then(|| point.of(summary) as f64 / 1000.0)
            }
        }
    }
}

/// One condition's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConditionOutcome {
    /// The condition as written, e.g. `p99<250ms`.
    pub condition: String,
    /// The figure's name, e.g. `p99`.
    pub metric: String,
    /// How the figure must relate to the threshold.
    pub comparator: Comparator,
    /// In `unit`.
    pub threshold: f64,
    /// In `unit`; `None` when the figure was not measured (counts as failed).
    pub measured: Option<f64>,
    /// The unit of `threshold` and `measured` (`ms`, `%`, `req/s`).
    pub unit: String,
    /// True when the figure was measured and met the threshold.
    pub passed: bool,
}

impl fmt::Display for ConditionOutcome {
    /// `p99<250ms: 231.4 ms  pass`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = if self.passed { "pass" } else { "FAIL" };
        match self.measured {
            Some(v) => write!(
                f,
                "{}: {} {}  {verdict}",
                self.condition,
                format_value(v),
                self.unit
            ),
            None => write!(f, "{}: not measured  {verdict}", self.condition),
        }
    }
}

/// Up to 4 significant decimals without trailing noise.
fn format_value(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    }
}

/// Evaluates every condition; a figure that was not measured fails.
pub fn evaluate<M: Measure + ?Sized>(conditions: &[Condition], run: &M) -> Vec<ConditionOutcome> {
    conditions
        .iter()
        .map(|c| {
            let measured = run.measure(c.metric);
            ConditionOutcome {
                condition: c.text.clone(),
                metric: c.metric.to_string(),
                comparator: c.comparator,
                threshold: c.threshold,
                measured,
                unit: c.metric.unit().into(),
                passed: measured.is_some_and(|v| c.comparator.holds(v, c.threshold)),
            }
        })
        .collect()
}

/// True when every outcome passed (and vacuously for no conditions).
pub(crate) fn all_passed(outcomes: &[ConditionOutcome]) -> bool {
    outcomes.iter().all(|o| o.passed)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use stampede_metrics::{encode_histogram, new_latency_histogram, LatencySummary};

    /// A result with the given figures; latency in µs from a real histogram.
    /// Built through JSON so fields added to the schema later need no change here.
    pub(crate) fn result(rps: f64, error_pct: f64, latencies_us: &[u64]) -> RunResult {
        let mut h = new_latency_histogram();
        for v in latencies_us {
            h.record(*v).unwrap();
        }
        let completed = latencies_us.len() as u64;
        let q = |x: f64| h.value_at_quantile(x);
        let latency_us = if completed == 0 {
            LatencySummary::default()
        } else {
            LatencySummary {
                min: h.min(),
                mean: h.mean(),
                stdev: h.stdev(),
                max: h.max(),
                p50: q(0.5),
                p66: q(0.66),
                p75: q(0.75),
                p80: q(0.8),
                p90: q(0.9),
                p95: q(0.95),
                p98: q(0.98),
                p99: q(0.99),
                p99_9: q(0.999),
                p99_99: q(0.9999),
                within_stdev_pct: 68.0,
            }
        };
        let json = serde_json::json!({
            "schema": stampede_metrics::RESULT_SCHEMA,
            "version": "test",
            "plan": {
                "url": "http://127.0.0.1:8080/", "method": "GET", "connections": 100,
                "threads": 4, "duration_s": 10.0, "keepalive": true, "http_version": "1.1",
                "connect_timeout_s": 3.0, "timeout_s": 10.0, "body_bytes": 0
            },
            "started_at": "2024-01-01T00:00:00.000Z",
            "elapsed_s": 10.0,
            "interrupted": false,
            "requests": {
                "sent": completed, "completed": completed, "success": completed,
                "failed_status": 0, "errors": 0, "unfinished": 0
            },
            "rps": rps,
            "goodput": rps * (1.0 - error_pct / 100.0),
            "error_rate_pct": error_pct,
            "throughput_bytes_per_s": 0.0,
            "errors": {},
            "status": {},
            "bytes": { "received": 0, "body": 0 },
            "connections": { "opened": 100, "reconnects": 0 },
            "latency_us": latency_us,
            "histogram": encode_histogram(&h),
            "notices": [],
            "environment": stampede_metrics::Environment::default(),
        });
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn parses_every_metric_and_comparator_of_a_gate() {
        let c = parse_slo(
            "p99<250ms,p50<20ms,errors<0.5%,rps>50000,goodput>=1000,max<2s,mean<10ms,p99.9<1s",
        )
        .unwrap();
        let got: Vec<_> = c
            .iter()
            .map(|c| (c.metric, c.comparator, c.threshold))
            .collect();
        assert_eq!(
            got,
            vec![
                (Metric::Percentile(99.0), Comparator::Lt, 250.0),
                (Metric::Percentile(50.0), Comparator::Lt, 20.0),
                (Metric::Errors, Comparator::Lt, 0.5),
                (Metric::Rps, Comparator::Gt, 50000.0),
                (Metric::Goodput, Comparator::Ge, 1000.0),
                (Metric::Max, Comparator::Lt, 2000.0),
                (Metric::Mean, Comparator::Lt, 10.0),
                (Metric::Percentile(99.9), Comparator::Lt, 1000.0),
            ]
        );
        assert_eq!(c[0].text, "p99<250ms");
    }

    #[test]
    fn stream_gates_read_the_streams_summaries() {
        let c = parse_slo("sse_gap_p99<120ms,sse_first_event_max<=1s,SSE_GAP_P50<60ms").unwrap();
        let gap99 = Metric::Stream(StreamFigure::Gap, StreamPoint::P99);
        assert_eq!((c[0].metric, c[0].threshold), (gap99, 120.0));
        let first = Metric::Stream(StreamFigure::FirstEvent, StreamPoint::Max);
        assert_eq!((c[1].metric, c[1].threshold), (first, 1000.0));
        assert_eq!(c[2].metric.to_string(), "sse_gap_p50");
        assert!(parse_slo("sse_gap_p98<1ms").is_err());
        assert!(
            parse_slo("sse_gap_p99<1").is_err(),
            "a latency needs its unit"
        );
        let mut r = result(100.0, 0.0, &[1000]);
        assert_eq!(r.measure(gap99), None, "no streams: not measured");
        r.stream = Some(stampede_metrics::StreamResult {
            gap: stampede_metrics::StreamSummary {
                count: 10,
                p50_us: 50_000,
                p99_us: 130_000,
                max_us: 1_000_000,
            },
            ..Default::default()
        });
        assert_eq!(r.measure(gap99), Some(130.0));
        let outcome = evaluate(&c[..1], &r);
        assert!(!outcome[0].passed);
    }

    #[test]
    fn websocket_gates_read_the_round_trip_and_setup_summaries() {
        let c = parse_slo("ws_rtt_p99<50ms,WS_SETUP_MAX<=1s").unwrap();
        let rtt99 = Metric::Stream(StreamFigure::WsRtt, StreamPoint::P99);
        assert_eq!((c[0].metric, c[0].threshold), (rtt99, 50.0));
        assert_eq!(c[1].metric.to_string(), "ws_setup_max");
        assert!(parse_slo("ws_gap_p99<1ms").is_err());
        let mut r = result(100.0, 0.0, &[1000]);
        assert_eq!(r.measure(rtt99), None, "no WebSocket run: not measured");
        r.websocket = Some(stampede_metrics::WebSocketResult {
            rtt: stampede_metrics::StreamSummary {
                count: 10,
                p50_us: 1_000,
                p99_us: 60_000,
                max_us: 70_000,
            },
            ..Default::default()
        });
        assert_eq!(r.measure(rtt99), Some(60.0));
        let outcome = evaluate(&c[..1], &r);
        assert!(!outcome[0].passed);
    }

    #[test]
    fn units_and_spacing() {
        let c = parse_slo(" p90 <= 500us , errors < 1 , rps >= 50k , goodput > 2M/s ,p99<1.5s")
            .unwrap();
        assert_eq!(c[0].threshold, 0.5);
        assert_eq!(c[0].comparator, Comparator::Le);
        assert_eq!(c[1].threshold, 1.0);
        assert_eq!(c[2].threshold, 50_000.0);
        assert_eq!(c[3].threshold, 2_000_000.0);
        assert_eq!(c[4].threshold, 1500.0);
        assert_eq!(parse_condition("p99<1e3ms").unwrap().threshold, 1000.0);
        assert_eq!(parse_condition("p99<2µs").unwrap().threshold, 0.002);
        assert_eq!(
            parse_condition("median<3ms").unwrap().metric,
            Metric::Percentile(50.0)
        );
    }

    #[test]
    fn errors_name_the_bad_part() {
        let cases: &[(&str, &str)] = &[
            ("", "empty SLO"),
            (" , ", "empty SLO"),
            ("p99<250ms,p50=20ms", "'p50=20ms': no comparator"),
            ("p99<250ms,latency<3ms", "unknown figure 'latency'"),
            ("p101<3ms", "unknown figure 'p101'"),
            ("p0<3ms", "unknown figure 'p0'"),
            ("ws_rtt_p98<50ms", "ws_rtt_, ws_setup_ with p50, p99 or max"),
            ("p99<fast", "'fast' is not a non-negative number"),
            ("p99<-3ms", "'-3ms' is not a non-negative number"),
            ("p99<", "'' is not a non-negative number"),
            ("p99<250", "'p99<250': latency needs a unit"),
            ("p99<250min", "unit 'min' does not fit p99"),
            ("errors<1ms", "unit 'ms' does not fit errors"),
            ("rps>5ms", "unit 'ms' does not fit rps"),
        ];
        for (input, needle) in cases {
            let message = parse_slo(input).unwrap_err().to_string();
            assert!(message.contains(needle), "{input:?}: {message}");
        }
    }

    #[test]
    fn evaluates_against_a_result() {
        // 99 fast requests at 10 ms, one slow at 900 ms.
        let mut lat = vec![10_000u64; 99];
        lat.push(900_000);
        let r = result(60_000.0, 0.2, &lat);
        let c = parse_slo(
            "p50<20ms,p99<250ms,p99.5<1s,max<500ms,errors<0.5%,rps>50000,goodput>=70000,mean<20ms",
        )
        .unwrap();
        let out = evaluate(&c, &r);
        let passed: Vec<_> = out.iter().map(|o| o.passed).collect();
        assert_eq!(
            passed,
            vec![true, true, true, false, true, true, false, true]
        );
        // p99.5 is not in the summary: read from the histogram.
        assert!((out[2].measured.unwrap() - 900.0).abs() < 1.0);
        assert_eq!(out[3].unit, "ms");
        assert!(!all_passed(&out));
        assert!(all_passed(&out[..3]));
        assert_eq!(out[0].to_string(), "p50<20ms: 10.007 ms  pass");
        assert!(out[3].to_string().ends_with("FAIL"), "{}", out[3]);
    }

    #[test]
    fn latency_without_responses_is_not_measured() {
        let r = result(0.0, 100.0, &[]);
        let out = evaluate(&parse_slo("p99<250ms,errors<=100%").unwrap(), &r);
        assert_eq!(out[0].measured, None);
        assert!(!out[0].passed);
        assert!(out[0].to_string().contains("not measured"));
        assert!(out[1].passed);
    }

    #[test]
    fn comparators_at_the_boundary() {
        assert!(!Comparator::Lt.holds(1.0, 1.0));
        assert!(Comparator::Le.holds(1.0, 1.0));
        assert!(!Comparator::Gt.holds(1.0, 1.0));
        assert!(Comparator::Ge.holds(1.0, 1.0));
    }

    #[test]
    fn outcome_serializes() {
        let r = result(100.0, 0.0, &[1000]);
        let out = evaluate(&parse_slo("p99<=1ms").unwrap(), &r);
        let json = serde_json::to_value(&out[0]).unwrap();
        assert_eq!(json["comparator"], "<=");
        assert_eq!(json["passed"], true);
        assert_eq!(json["measured"], 1.0);
    }

    #[test]
    fn every_metric_name_parses_to_its_metric() {
        let names = [
            ("min<1ms", Metric::Min),
            ("checks>=99%", Metric::Checks),
            ("check>=99%", Metric::Checks),
            ("median<5ms", Metric::Percentile(50.0)),
            ("avg<5ms", Metric::Mean),
            ("err<1%", Metric::Errors),
            ("throughput>10", Metric::Rps),
        ];
        for (text, metric) in names {
            assert_eq!(parse_slo(text).unwrap()[0].metric, metric, "{text}");
        }
    }

    #[test]
    fn a_comparator_and_a_condition_print_as_written() {
        let texts = [
            (Comparator::Lt, "<"),
            (Comparator::Le, "<="),
            (Comparator::Gt, ">"),
            (Comparator::Ge, ">="),
        ];
        for (comparator, text) in texts {
            assert_eq!(comparator.as_str(), text);
        }
        let condition = &parse_slo(" p99 < 250ms ").unwrap()[0];
        assert_eq!(condition.to_string(), "p99 < 250ms");
    }

    #[test]
    fn thresholds_in_exponent_form_and_their_limits() {
        let threshold = |text: &str| parse_slo(text).map(|c| c[0].threshold);
        assert_eq!(threshold("p99<1e+3us"), Ok(1.0));
        assert_eq!(threshold("rps>2E3"), Ok(2000.0));
        // An exponent that overflows is no threshold.
        assert!(matches!(
            threshold("p99<1e999ms"),
            Err(SloError::BadThreshold { .. })
        ));
        // "1e" then no digits: the number is 1 and "e" is read as its unit.
        assert!(matches!(
            threshold("errors<1e"),
            Err(SloError::WrongUnit { unit, .. }) if unit == "e"
        ));
    }

    #[test]
    fn stored_percentiles_are_read_without_the_histogram() {
        let mut r = result(100.0, 0.0, &[1000, 2000, 3000, 4000]);
        let ms = |us: u64| us as f64 / 1000.0;
        let (p99, max) = (ms(r.latency_us.p99), ms(r.latency_us.max));
        r.histogram = String::new();
        assert_eq!(r.measure(Metric::Percentile(99.0)), Some(p99));
        assert_eq!(r.measure(Metric::Percentile(100.0)), Some(max));
        // Not stored: it needs the histogram, which is gone.
        assert_eq!(r.measure(Metric::Percentile(97.0)), None);
    }

    #[test]
    fn percentiles_not_stored_come_from_the_histogram() {
        let latencies: Vec<u64> = (1..=100).map(|i| i * 1000).collect();
        let r = result(100.0, 0.0, &latencies);
        let p = r.measure(Metric::Percentile(42.0)).unwrap();
        assert!((41.9..=42.1).contains(&p), "p42 {p} ms");
    }

    #[test]
    fn latency_figures_are_in_milliseconds() {
        let mut r = result(100.0, 0.0, &[1000]);
        r.latency_us.mean = 2500.0;
        r.latency_us.min = 500;
        assert_eq!(r.measure(Metric::Mean), Some(2.5));
        assert_eq!(r.measure(Metric::Min), Some(0.5));
    }

    #[test]
    fn checks_are_the_share_that_passed() {
        let mut r = result(100.0, 0.0, &[1000]);
        assert_eq!(r.measure(Metric::Checks), None, "no check ran");
        let check = |passed, failed| stampede_metrics::CheckResult {
            check: "status == 200".into(),
            step: None,
            passed,
            failed,
            samples: Vec::new(),
        };
        r.checks = vec![check(2, 1), check(1, 0)];
        assert_eq!(r.measure(Metric::Checks), Some(75.0));
        r.checks = vec![check(0, 3)];
        assert_eq!(r.measure(Metric::Checks), Some(0.0));
        r.checks = vec![check(5, 0)];
        assert_eq!(r.measure(Metric::Checks), Some(100.0));
    }
}
