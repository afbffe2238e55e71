//! A/B (and A/B/C…) comparison of files: a row per figure, a column per
//! file, the change against the first file in percent and a verdict that
//! knows lower latency and fewer errors are better. A file of repeated runs
//! (`--repeat`) contributes the mean of its rounds with its confidence
//! interval, and wherever either side of a pair has rounds the verdict comes
//! from the 95% confidence interval of the difference: Welch's t-test
//! (unequal variances, Welch–Satterthwaite degrees of freedom) between two
//! files of rounds, a prediction interval between rounds and a single run.
//! Between two single runs, the noise band decides.
//!
//! Owns figures, noise bands, verdicts and plan-difference warnings. Does not
//! read files or print tables.

mod parts;

use crate::difference::diff_interval;
pub use crate::difference::{DiffInterval, Method};
use crate::stability::{mean_interval, Interval};
pub(crate) use parts::PartComparison;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use stampede_metrics::{PlanSummary, RunResult};
use std::fmt;

/// A compared figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Figure {
    /// Successful responses per second.
    Goodput,
    /// Completed responses per second.
    Rps,
    /// Failed share of finished requests, in percent.
    ErrorRate,
    /// Median latency, in ms.
    P50,
    /// 90th percentile latency, in ms.
    P90,
    /// 99th percentile latency, in ms.
    P99,
    /// 99.9th percentile latency, in ms.
    P99_9,
    /// Highest latency, in ms.
    Max,
    /// Server CPU-seconds per 1000 requests (when the server was monitored).
    ServerCpuPer1k,
    /// WebSocket data messages written per second (`websocket.sent_per_s`).
    WsSentPerS,
    /// WebSocket data messages read per second (`websocket.received_per_s`).
    WsReceivedPerS,
    /// WebSocket round trip p99 (`websocket.rtt.p99_us`), in ms.
    WsRttP99,
    /// Streams' events per second (`stream.events_per_s`).
    StreamEventsPerS,
    /// The p99 of the gaps between a stream's events (`stream.gap.p99_us`), in ms.
    StreamGapP99,
}

impl Figure {
    pub(crate) const ALL: [Figure; 14] = [
        Figure::Goodput,
        Figure::Rps,
        Figure::ErrorRate,
        Figure::P50,
        Figure::P90,
        Figure::P99,
        Figure::P99_9,
        Figure::Max,
        Figure::ServerCpuPer1k,
        Figure::WsSentPerS,
        Figure::WsReceivedPerS,
        Figure::WsRttP99,
        Figure::StreamEventsPerS,
        Figure::StreamGapP99,
    ];

    /// Its name in the table and in `--until-stable` (`goodput`, `p99.9`).
    pub fn name(self) -> &'static str {
        match self {
            Figure::Goodput => "goodput",
            Figure::Rps => "rps",
            Figure::ErrorRate => "errors",
            Figure::P50 => "p50",
            Figure::P90 => "p90",
            Figure::P99 => "p99",
            Figure::P99_9 => "p99.9",
            Figure::Max => "max",
            Figure::ServerCpuPer1k => "server CPU per 1k req",
            Figure::WsSentPerS => "ws sent/s",
            Figure::WsReceivedPerS => "ws received/s",
            Figure::WsRttP99 => "ws rtt p99",
            Figure::StreamEventsPerS => "sse events/s",
            Figure::StreamGapP99 => "sse gap p99",
        }
    }

    /// Its unit in the table (`req/s`, `%`, `ms`, `CPU-ms`).
    pub fn unit(self) -> &'static str {
        match self {
            Figure::Goodput | Figure::Rps => "req/s",
            Figure::ErrorRate => "%",
            Figure::ServerCpuPer1k => "CPU-ms",
            Figure::WsSentPerS | Figure::WsReceivedPerS => "msg/s",
            Figure::StreamEventsPerS => "events/s",
            _ => "ms",
        }
    }

    /// Throughput: more is better. Latency, errors, CPU cost: less is better.
    pub(crate) fn higher_is_better(self) -> bool {
        matches!(
            self,
            Figure::Goodput
                | Figure::Rps
                | Figure::WsSentPerS
                | Figure::WsReceivedPerS
                | Figure::StreamEventsPerS
        )
    }

    /// A WebSocket or streams figure: a row only when some run has it.
    fn is_protocol(self) -> bool {
        matches!(
            self,
            Figure::WsSentPerS
                | Figure::WsReceivedPerS
                | Figure::WsRttP99
                | Figure::StreamEventsPerS
                | Figure::StreamGapP99
        )
    }

    /// Extreme tails rest on few samples and swing more between runs.
    fn is_tail(self) -> bool {
        matches!(self, Figure::P99_9 | Figure::Max)
    }
}

impl fmt::Display for Figure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The figures of one run, named for the table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunFigures {
    /// How the run is called in the table (usually its file name).
    pub label: String,
    /// The run's plan, to flag unlike runs.
    pub plan: PlanSummary,
    /// Successful responses per second.
    pub goodput: f64,
    /// Completed responses per second.
    pub rps: f64,
    /// Failed share of finished requests, in percent.
    pub error_rate_pct: f64,
    /// Latencies in ms; `None` when the run completed no request.
    pub p50_ms: Option<f64>,
    /// 90th percentile, ms.
    pub p90_ms: Option<f64>,
    /// 99th percentile, ms.
    pub p99_ms: Option<f64>,
    /// 99.9th percentile, ms.
    pub p99_9_ms: Option<f64>,
    /// Highest latency, ms.
    pub max_ms: Option<f64>,
    /// Server CPU-seconds per 1000 requests, when the server was monitored.
    pub server_cpu_s_per_1k: Option<f64>,
    /// Seconds measured before Ctrl-C, when the run was interrupted: its
    /// figures cover only that part of its plan.
    pub interrupted_after_s: Option<f64>,
    /// WebSocket and streams figures, when the run has them.
    #[serde(skip_serializing_if = "ProtocolFigures::is_empty")]
    pub protocol: ProtocolFigures,
    /// The run's parts, each under its own label: every group of a
    /// scenario (`group NAME`) and every step or `--targets` entry
    /// (`step NAME`) when there are several (parts.rs).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<RunFigures>,
}

impl RunFigures {
    /// The figures of a result. Set `server_cpu_s_per_1k` afterwards when the
    /// server was monitored.
    pub fn of(label: impl Into<String>, r: &RunResult) -> RunFigures {
        let has_latency = r.requests.completed > 0;
        let ms = |us: u64| has_latency.then_some(us as f64 / 1000.0);
        RunFigures {
            label: label.into(),
            plan: r.plan.clone(),
            goodput: r.goodput,
            rps: r.rps,
            error_rate_pct: r.error_rate_pct,
            p50_ms: ms(r.latency_us.p50),
            p90_ms: ms(r.latency_us.p90),
            p99_ms: ms(r.latency_us.p99),
            p99_9_ms: ms(r.latency_us.p99_9),
            max_ms: ms(r.latency_us.max),
            server_cpu_s_per_1k: None,
            interrupted_after_s: r.interrupted.then_some(r.elapsed_s),
            protocol: ProtocolFigures::of(r),
            parts: parts::part_figures(r),
        }
    }

    /// The value of `figure`, in its unit; `None` when the run lacks it.
    pub(crate) fn get(&self, figure: Figure) -> Option<f64> {
        match figure {
            Figure::Goodput => Some(self.goodput),
            Figure::Rps => Some(self.rps),
            Figure::ErrorRate => Some(self.error_rate_pct),
            Figure::P50 => self.p50_ms,
            Figure::P90 => self.p90_ms,
            Figure::P99 => self.p99_ms,
            Figure::P99_9 => self.p99_9_ms,
            Figure::Max => self.max_ms,
            // Milliseconds: CPU-seconds per 1000 requests are small numbers
            // (0.012) whose differences vanish at two decimals.
            Figure::ServerCpuPer1k => self.server_cpu_s_per_1k.map(|s| s * 1000.0),
            Figure::WsSentPerS => self.protocol.ws_sent_per_s,
            Figure::WsReceivedPerS => self.protocol.ws_received_per_s,
            Figure::WsRttP99 => self.protocol.ws_rtt_p99_ms,
            Figure::StreamEventsPerS => self.protocol.stream_events_per_s,
            Figure::StreamGapP99 => self.protocol.stream_gap_p99_ms,
        }
        .filter(|v| v.is_finite())
    }
}

/// A run's WebSocket (`websocket`) and streams (`stream`) figures, read
/// from the result's own rates and summaries; `None` where the run has no
/// such object, or its summary no value.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ProtocolFigures {
    /// `websocket.sent_per_s`.
    pub ws_sent_per_s: Option<f64>,
    /// `websocket.received_per_s`.
    pub ws_received_per_s: Option<f64>,
    /// `websocket.rtt.p99_us`, in ms.
    pub ws_rtt_p99_ms: Option<f64>,
    /// `stream.events_per_s`.
    pub stream_events_per_s: Option<f64>,
    /// `stream.gap.p99_us`, in ms.
    pub stream_gap_p99_ms: Option<f64>,
}

impl ProtocolFigures {
    /// The figures of a result.
    pub fn of(r: &RunResult) -> ProtocolFigures {
        let p99_ms =
            |s: &stampede_metrics::StreamSummary| (s.count > 0).then_some(s.p99_us as f64 / 1000.0);
        let ws = r.websocket.as_ref();
        let stream = r.stream.as_ref();
        ProtocolFigures {
            ws_sent_per_s: ws.map(|ws| ws.sent_per_s),
            ws_received_per_s: ws.map(|ws| ws.received_per_s),
            ws_rtt_p99_ms: ws.and_then(|ws| p99_ms(&ws.rtt)),
            stream_events_per_s: stream.map(|s| s.events_per_s),
            stream_gap_p99_ms: stream.and_then(|s| p99_ms(&s.gap)),
        }
    }

    /// True when the run has none of them.
    pub fn is_empty(&self) -> bool {
        *self == ProtocolFigures::default()
    }
}

/// How a figure moved against the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The first run: what the others are compared with.
    Baseline,
    /// Moved the good way: beyond the noise band (single runs), or with an
    /// interval that excludes zero (rounds).
    Better,
    /// Moved the bad way: beyond the noise band (single runs), or with an
    /// interval that excludes zero (rounds).
    Worse,
    /// Within the noise band.
    Same,
    /// Repeated runs: the confidence interval of the difference contains zero.
    NoSignificantDifference,
    /// A side lacks the figure.
    Unknown,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Baseline => "baseline",
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Same => "same",
            Verdict::NoSignificantDifference => "no significant difference",
            Verdict::Unknown => "unknown",
        })
    }
}

/// Noise bands and confidence level.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareOptions {
    /// Relative changes within ±5% are "same": run-to-run noise on one machine.
    pub noise_pct: f64,
    /// p99.9 and max: ±10%, as they rest on a handful of samples.
    pub tail_noise_pct: f64,
    /// Error rates within ±0.1 percentage points (or noise_pct relative) are
    /// "same": a relative change from 0% is meaningless.
    pub error_noise_pp: f64,
    /// Confidence of the repeated-runs interval: 0.95.
    pub confidence: f64,
}

impl Default for CompareOptions {
    fn default() -> CompareOptions {
        CompareOptions {
            noise_pct: 5.0,
            tail_noise_pct: 10.0,
            error_noise_pp: 0.1,
            confidence: 0.95,
        }
    }
}

/// Why runs could not be compared.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompareError {
    /// Fewer than two runs.
    #[error("compare needs at least 2 runs, got {got}")]
    TooFewRuns {
        /// How many runs were given.
        got: usize,
    },
    /// A file with no run in it.
    #[error("'{label}' holds no run to compare")]
    EmptySample {
        /// The file's label.
        label: String,
    },
    /// A confidence level outside (0, 1).
    #[error("confidence must lie strictly between 0 and 1, got {0}")]
    BadConfidence(f64),
}

/// The schema tag of `stampede compare --json`.
pub const COMPARE_SCHEMA: &str = "stampede.compare/1";

/// One compared file: a single run, or the completed rounds of a
/// `--repeat` file. A file of rounds contributes their mean and its
/// confidence interval, never one round.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// How the file is called in the table.
    pub label: String,
    /// One run, or the rounds.
    pub runs: Vec<RunFigures>,
}

impl Sample {
    /// A single run, called by its own label.
    pub fn single(run: RunFigures) -> Sample {
        Sample {
            label: run.label.clone(),
            runs: vec![run],
        }
    }
}

/// One figure across the files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The figure of the row.
    pub figure: Figure,
    /// The figure's name, as printed.
    pub name: String,
    /// The figure's unit, as printed.
    pub unit: String,
    /// Per file, in the order given: the run's value, or the mean of the
    /// file's rounds.
    pub values: Vec<Option<f64>>,
    /// Per file: half the confidence interval of that mean; `None` for a
    /// single run.
    pub half_widths: Vec<Option<f64>>,
    /// Change against the first file, percent; `None` for the first file and
    /// where the baseline is zero or missing.
    pub change_pct: Vec<Option<f64>>,
    /// Per file: the confidence interval of the difference from the first,
    /// when either of the two has rounds; `None` for the first file and
    /// between two single runs (judged by the noise band).
    pub intervals: Vec<Option<DiffInterval>>,
    /// Per file; the first is [`Verdict::Baseline`].
    pub verdicts: Vec<Verdict>,
}

/// The whole table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Per file, in the order given: how it is called in the table.
    pub labels: Vec<String>,
    /// Per file: how many runs it contributed (1, or its completed rounds).
    pub rounds: Vec<usize>,
    /// Confidence of every interval: 0.95.
    pub confidence: f64,
    /// One row per figure.
    pub rows: Vec<Row>,
    /// Plan differences: comparing unlike runs is allowed but flagged, once
    /// per file.
    pub warnings: Vec<String>,
    /// The groups and steps every file has, by name, each with its own rows
    /// (absent in files written before they were compared).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<PartComparison>,
    /// `compare --from/--to`: the window of every run compared, as
    /// `from 30 s to 90 s` (absent when whole runs were compared).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<String>,
}

impl Comparison {
    /// Whether any file contributed rounds (then intervals are shown).
    pub fn has_rounds(&self) -> bool {
        self.rounds.iter().any(|&n| n >= 2)
    }
}

/// `stampede compare --json`: the comparison under its schema tag.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareDocument {
    /// The schema tag, [`COMPARE_SCHEMA`].
    pub schema: String,
    /// The stampede version that wrote the file.
    pub version: String,
    /// The comparison, its fields at the top level of the JSON.
    #[serde(flatten)]
    pub comparison: Comparison,
}

impl CompareDocument {
    /// The comparison under the current schema tag and version.
    pub fn new(comparison: Comparison) -> CompareDocument {
        CompareDocument {
            schema: COMPARE_SCHEMA.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            comparison,
        }
    }
}

/// Compares single runs against the first one.
pub fn compare(runs: &[RunFigures], opts: &CompareOptions) -> Result<Comparison, CompareError> {
    let samples: Vec<Sample> = runs.iter().cloned().map(Sample::single).collect();
    compare_samples(&samples, opts)
}

/// Compares files (single runs or rounds) against the first one. Between two
/// single runs a figure is judged by the noise band; where either side has
/// rounds, by the confidence interval of the difference ("no significant
/// difference" when it contains zero).
pub fn compare_samples(
    samples: &[Sample],
    opts: &CompareOptions,
) -> Result<Comparison, CompareError> {
    if !(opts.confidence > 0.0 && opts.confidence < 1.0) {
        return Err(CompareError::BadConfidence(opts.confidence));
    }
    if samples.len() < 2 {
        return Err(CompareError::TooFewRuns { got: samples.len() });
    }
    if let Some(empty) = samples.iter().find(|s| s.runs.is_empty()) {
        return Err(CompareError::EmptySample {
            label: empty.label.clone(),
        });
    }
    let rows = figures_present(samples.iter().flat_map(|s| &s.runs))
        .into_iter()
        .map(|figure| row(figure, samples, opts))
        .collect();
    Ok(Comparison {
        labels: samples.iter().map(|s| s.label.clone()).collect(),
        rounds: samples.iter().map(|s| s.runs.len()).collect(),
        confidence: opts.confidence,
        rows,
        parts: parts::compare_parts(samples, opts),
        warnings: plan_warnings(samples),
        window: None,
    })
}

pub(crate) fn row(figure: Figure, samples: &[Sample], opts: &CompareOptions) -> Row {
    let per_file: Vec<Vec<f64>> = samples
        .iter()
        .map(|s| s.runs.iter().filter_map(|r| r.get(figure)).collect())
        .collect();
    let summaries: Vec<Option<Interval>> = per_file
        .iter()
        .map(|values| mean_interval(values, opts.confidence))
        .collect();
    let values: Vec<Option<f64>> = summaries.iter().map(|s| s.map(|s| s.mean)).collect();
    let half_widths = summaries
        .iter()
        .map(|s| s.and_then(|s| s.half_width))
        .collect();
    let base = values[0];
    let mut change_pct = vec![None];
    let mut intervals = vec![None];
    let mut verdicts = vec![Verdict::Baseline];
    for (i, value) in values.iter().enumerate().skip(1) {
        let interval = diff_interval(&per_file[0], &per_file[i], opts.confidence);
        change_pct.push(relative(*value, base));
        verdicts.push(match (base, value, interval) {
            (Some(_), Some(_), Some(ci)) => significance(figure, &ci),
            (Some(b), Some(v), None) => judge(figure, b, *v, opts),
            _ => Verdict::Unknown,
        });
        intervals.push(interval);
    }
    Row {
        figure,
        name: figure.name().to_string(),
        unit: figure.unit().to_string(),
        values,
        half_widths,
        change_pct,
        intervals,
        verdicts,
    }
}

/// Every figure, except server CPU and the WebSocket and streams figures
/// when no run has them.
fn figures_present<'a>(runs: impl Iterator<Item = &'a RunFigures> + Clone) -> Vec<Figure> {
    Figure::ALL
        .into_iter()
        .filter(|f| match f {
            Figure::ServerCpuPer1k => runs.clone().any(|r| r.server_cpu_s_per_1k.is_some()),
            f if f.is_protocol() => runs.clone().any(|r| r.get(*f).is_some()),
            _ => true,
        })
        .collect()
}

fn relative(value: Option<f64>, base: Option<f64>) -> Option<f64> {
    match (value, base) {
        (Some(v), Some(b)) if b != 0.0 => Some(100.0 * (v - b) / b.abs()),
        _ => None,
    }
}

/// Better, worse or the same within the figure's noise band.
fn judge(figure: Figure, base: f64, value: f64, opts: &CompareOptions) -> Verdict {
    let diff = value - base;
    let band = match figure {
        Figure::ErrorRate => opts.error_noise_pp.max(base.abs() * opts.noise_pct / 100.0),
        f if f.is_tail() => base.abs() * opts.tail_noise_pct / 100.0,
        _ => base.abs() * opts.noise_pct / 100.0,
    };
    if diff.abs() <= band {
        Verdict::Same
    } else {
        direction(figure, diff)
    }
}

fn direction(figure: Figure, diff: f64) -> Verdict {
    if (diff > 0.0) == figure.higher_is_better() {
        Verdict::Better
    } else {
        Verdict::Worse
    }
}

/// Names the plan fields in which each file differs from the baseline: one
/// warning per file (its rounds ran one plan), and one for a file whose
/// rounds ran different plans.
fn plan_warnings(samples: &[Sample]) -> Vec<String> {
    let base = &samples[0];
    let mut warnings = Vec::new();
    for (i, sample) in samples.iter().enumerate() {
        if let Some(after) = sample.runs.iter().find_map(|r| r.interrupted_after_s) {
            warnings.push(format!(
                "'{}' was interrupted after {after:.1} s: its figures cover only that part of its plan",
                sample.label
            ));
        }
        let first = &sample.runs[0];
        if let Some(diffs) = sample
            .runs
            .iter()
            .map(|r| plan_differences(&first.plan, &r.plan))
            .find(|d| !d.is_empty())
        {
            warnings.push(format!(
                "'{}' holds rounds of different plans: {}",
                sample.label,
                diffs.join(", ")
            ));
        }
        let diffs = plan_differences(&base.runs[0].plan, &first.plan);
        if i > 0 && !diffs.is_empty() {
            warnings.push(format!(
                "'{}' ran another plan than '{}': {}",
                sample.label,
                base.label,
                diffs.join(", ")
            ));
        }
    }
    warnings
}

/// Plan fields named first in warnings, in the order a reader checks them;
/// any other field follows alphabetically.
const PLAN_KEY_ORDER: [&str; 6] = ["url", "method", "model", "rate", "connections", "threads"];

/// Every plan field that differs, as `name a vs b`. Compared through the
/// serialized form so that fields added to the schema later are covered too.
fn plan_differences(a: &PlanSummary, b: &PlanSummary) -> Vec<String> {
    let as_map = |p: &PlanSummary| match serde_json::to_value(p) {
        Ok(Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    let (a, b) = (as_map(a), as_map(b));
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort_by_key(|k| {
        let rank = PLAN_KEY_ORDER.iter().position(|o| o == k);
        (rank.unwrap_or(PLAN_KEY_ORDER.len()), k.as_str())
    });
    keys.dedup();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| format!("{k} {} vs {}", show(k, a.get(k)), show(k, b.get(k))))
        .collect()
}

/// A plan field's value as the run's summary writes it (the negotiated TLS
/// as version, suite and ALPN, not its JSON).
fn show(key: &str, v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "-".into(),
        Some(Value::String(s)) => s.clone(),
        Some(tls) if key == "tls" => {
            match serde_json::from_value::<stampede_metrics::NegotiatedTls>(tls.clone()) {
                Ok(tls) => tls.describe(),
                Err(_) => tls.to_string(),
            }
        }
        Some(ws) if key == "websocket" => {
            match serde_json::from_value::<stampede_metrics::WebSocketPlan>(ws.clone()) {
                Ok(ws) => ws.describe(),
                Err(_) => ws.to_string(),
            }
        }
        Some(other) => other.to_string(),
    }
}

/// Better or worse when the interval excludes zero, else no significant
/// difference.
fn significance(figure: Figure, ci: &DiffInterval) -> Verdict {
    if ci.low <= 0.0 && ci.high >= 0.0 {
        Verdict::NoSignificantDifference
    } else {
        direction(figure, ci.diff)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slo::tests::result;

    fn run(label: &str, rps: f64, error_pct: f64, latency_ms: u64) -> RunFigures {
        let lat: Vec<u64> = (0..100).map(|i| latency_ms * 1000 + i).collect();
        RunFigures::of(label, &result(rps, error_pct, &lat))
    }

    fn row(c: &Comparison, f: Figure) -> &Row {
        c.rows.iter().find(|r| r.figure == f).unwrap()
    }

    #[test]
    fn an_interrupted_run_is_named_in_the_warnings() {
        let whole = run("a.json", 1000.0, 0.0, 5);
        let mut cut = run("x.json", 1100.0, 0.0, 5);
        cut.interrupted_after_s = Some(1.03);
        let c = compare(&[whole, cut], &CompareOptions::default()).unwrap();
        assert!(
            c.warnings
                .iter()
                .any(|w| w.contains("'x.json' was interrupted after 1.0 s")),
            "{:?}",
            c.warnings
        );
    }

    #[test]
    fn logs_on_versus_off_from_the_seed() {
        // seeds/001: logging off, 1000 users: 3461 req/s (+26.3% over ~2740),
        // mean 241 ms (−20%); errors 0 → 0.79%.
        let on = run("logs-on.json", 2740.0, 0.0, 301);
        let off = run("logs-off.json", 3461.0, 0.79, 241);
        let c = compare(&[on, off], &CompareOptions::default()).unwrap();
        assert_eq!(c.labels, vec!["logs-on.json", "logs-off.json"]);
        let rps = row(&c, Figure::Rps);
        assert!((rps.change_pct[1].unwrap() - 26.3).abs() < 0.1);
        assert_eq!(rps.verdicts, vec![Verdict::Baseline, Verdict::Better]);
        let p50 = row(&c, Figure::P50);
        assert!((p50.change_pct[1].unwrap() + 20.0).abs() < 0.5);
        assert_eq!(p50.verdicts[1], Verdict::Better, "lower latency is better");
        let errors = row(&c, Figure::ErrorRate);
        assert_eq!(errors.change_pct[1], None, "no relative change from 0%");
        assert_eq!(errors.verdicts[1], Verdict::Worse);
        assert!(c.rows.iter().all(|r| r.figure != Figure::ServerCpuPer1k));
        assert!(c.warnings.is_empty());
    }

    #[test]
    fn noise_band_and_three_runs() {
        let a = run("a", 1000.0, 0.0, 10);
        let b = run("b", 1030.0, 0.05, 12);
        let mut c3 = run("c", 900.0, 0.0, 10);
        c3.server_cpu_s_per_1k = Some(0.4);
        let c = compare(&[a, b, c3], &CompareOptions::default()).unwrap();
        let rps = row(&c, Figure::Rps);
        assert_eq!(
            rps.verdicts,
            vec![Verdict::Baseline, Verdict::Same, Verdict::Worse]
        );
        assert_eq!(row(&c, Figure::ErrorRate).verdicts[1], Verdict::Same);
        assert_eq!(row(&c, Figure::P50).verdicts[1], Verdict::Worse);
        // Max is a tail figure: +10% band. 12.099 vs 10.099 ms is +19.8%.
        assert_eq!(row(&c, Figure::Max).verdicts[1], Verdict::Worse);
        let cpu = row(&c, Figure::ServerCpuPer1k);
        assert_eq!(
            cpu.values,
            vec![None, None, Some(400.0)],
            "0.4 CPU-s = 400 CPU-ms"
        );
        assert_eq!(cpu.verdicts[2], Verdict::Unknown);
    }

    #[test]
    fn plan_differences_are_warnings() {
        let a = run("t1.json", 1000.0, 0.0, 10);
        let mut b = run("t2.json", 1000.0, 0.0, 10);
        b.plan.connections = 500;
        b.plan.url = "http://127.0.0.1:9090/".into();
        b.plan.keepalive = false;
        b.plan.streams = Some(16);
        let c = compare(&[a, b], &CompareOptions::default()).unwrap();
        assert_eq!(c.warnings.len(), 1);
        let w = &c.warnings[0];
        assert!(
            w.contains("'t2.json' ran another plan than 't1.json'"),
            "{w}"
        );
        assert!(w.contains("connections 100 vs 500"), "{w}");
        assert!(w.contains("url http://127.0.0.1:8080/ vs http://127.0.0.1:9090/"));
        assert!(w.contains("keepalive true vs false"));
        assert!(w.contains("streams - vs 16"), "{w}");
        assert!(w.find("url").unwrap() < w.find("connections").unwrap());
        assert!(!w.contains("threads"));
    }

    #[test]
    fn a_websocket_workload_difference_is_a_plan_difference() {
        let ws = |bytes: usize, deflate: bool| {
            Some(stampede_metrics::WebSocketPlan {
                message_bytes: bytes,
                binary: false,
                subprotocols: Vec::new(),
                deflate,
                rate_per_connection: None,
                match_id: None,
            })
        };
        let mut a = run("small.json", 1000.0, 0.0, 10);
        a.plan.websocket = ws(5, false);
        let mut b = run("big.json", 1000.0, 0.0, 10);
        b.plan.websocket = ws(4096, true);
        let c = compare(&[a, b], &CompareOptions::default()).unwrap();
        let w = c.warnings.join("\n");
        assert!(
            w.contains("websocket 5-byte text messages vs 4096-byte text messages, permessage-deflate offered"),
            "{w}"
        );
    }

    #[test]
    fn a_tls_difference_reads_as_version_suite_and_alpn() {
        let tls = |version: &str, cipher: &str, alpn: Option<&str>| {
            Some(stampede_metrics::NegotiatedTls {
                version: version.into(),
                cipher: cipher.into(),
                alpn: alpn.map(str::to_string),
            })
        };
        let mut a = run("t1.json", 1000.0, 0.0, 10);
        a.plan.tls = tls("TLSv1.3", "TLS13_AES_256_GCM_SHA384", Some("h2"));
        let mut b = run("t2.json", 1000.0, 0.0, 10);
        b.plan.tls = tls("TLSv1.2", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", None);
        let c = compare(&[a, b], &CompareOptions::default()).unwrap();
        let w = &c.warnings[0];
        assert!(
            w.contains("tls TLSv1.3 TLS13_AES_256_GCM_SHA384 (h2) vs TLSv1.2 TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 (no ALPN)"),
            "{w}"
        );
        assert!(!w.contains('{'), "{w}");
    }

    #[test]
    fn needs_two_runs() {
        let a = run("a", 1.0, 0.0, 1);
        assert_eq!(
            compare(std::slice::from_ref(&a), &CompareOptions::default()),
            Err(CompareError::TooFewRuns { got: 1 })
        );
        let empty = Sample {
            label: "e".into(),
            runs: vec![],
        };
        assert_eq!(
            compare_samples(&[Sample::single(a), empty], &CompareOptions::default()),
            Err(CompareError::EmptySample { label: "e".into() })
        );
    }

    fn side(label: &str, rps: &[f64]) -> Sample {
        Sample {
            label: label.into(),
            runs: rps.iter().map(|&x| run(label, x, 0.0, 10)).collect(),
        }
    }

    fn interval(c: &Comparison, f: Figure, i: usize) -> DiffInterval {
        row(c, f).intervals[i].expect("an interval")
    }

    #[test]
    fn welch_interval_matches_a_known_case() {
        // a: mean 20, var 10/4 = 2.5 (n=5); b: mean 22, var 2.5 (n=5).
        // se = sqrt(0.5+0.5) = 1, df = 8, t(0.975, 8) = 2.306004.
        let a = side("a", &[18.0, 19.0, 20.0, 21.0, 22.0]);
        let b = side("b", &[20.0, 21.0, 22.0, 23.0, 24.0]);
        let c = compare_samples(&[a, b], &CompareOptions::default()).unwrap();
        let rps = interval(&c, Figure::Rps, 1);
        assert_eq!(rps.method, Method::Welch);
        assert!((rps.diff - 2.0).abs() < 1e-12);
        assert!((rps.df - 8.0).abs() < 1e-9);
        assert!((rps.low - (2.0 - 2.306004)).abs() < 1e-5, "{rps:?}");
        assert!((rps.high - (2.0 + 2.306004)).abs() < 1e-5);
        let r = row(&c, Figure::Rps);
        assert_eq!(r.values, vec![Some(20.0), Some(22.0)], "the means");
        // Each mean's own interval: t(0.975, 4) = 2.776445 · sqrt(2.5/5).
        let h = 2.776445 * 0.5f64.sqrt();
        assert!((r.half_widths[0].unwrap() - h).abs() < 1e-5);
        assert_eq!(r.verdicts[1], Verdict::NoSignificantDifference);
        assert_eq!(c.labels, vec!["a", "b"]);
        assert_eq!(c.rounds, vec![5, 5]);
        assert!(c.has_rounds());
    }

    #[test]
    fn welch_finds_a_real_difference_with_unequal_variances() {
        let a = side("a", &[1000.0, 1010.0, 990.0, 1005.0]);
        let b = side("b", &[1200.0, 1100.0, 1300.0, 1150.0, 1250.0]);
        let c = compare_samples(&[a, b], &CompareOptions::default()).unwrap();
        let rps = interval(&c, Figure::Rps, 1);
        assert!(rps.low > 0.0, "{rps:?}");
        assert_eq!(row(&c, Figure::Rps).verdicts[1], Verdict::Better);
        // Welch–Satterthwaite df lies between min(n)-1 and na+nb-2.
        assert!(rps.df > 3.0 && rps.df < 7.0, "{}", rps.df);
        // Latency identical on both sides: exact, no difference.
        let p50 = interval(&c, Figure::P50, 1);
        assert_eq!(
            row(&c, Figure::P50).verdicts[1],
            Verdict::NoSignificantDifference
        );
        assert_eq!(p50.low, 0.0);
    }

    #[test]
    fn a_single_run_against_rounds_gets_a_prediction_interval() {
        // Rounds 18..22: mean 20, s² = 2.5, n = 5; se = sqrt(2.5·1.2) =
        // sqrt(3), df = 4, t(0.975, 4) = 2.776445.
        let rounds = side("r", &[18.0, 19.0, 20.0, 21.0, 22.0]);
        let single = side("s", &[30.0]);
        let half = 2.776445 * 3f64.sqrt();
        for (samples, diff) in [
            (vec![single.clone(), rounds.clone()], -10.0),
            (vec![rounds.clone(), single.clone()], 10.0),
        ] {
            let c = compare_samples(&samples, &CompareOptions::default()).unwrap();
            let rps = interval(&c, Figure::Rps, 1);
            assert_eq!(rps.method, Method::Prediction);
            assert!((rps.diff - diff).abs() < 1e-12);
            assert!((rps.df - 4.0).abs() < 1e-12);
            assert!((rps.high - rps.low - 2.0 * half).abs() < 1e-5, "{rps:?}");
        }
        // Three files, the middle one of rounds: each gets its own mean and
        // verdict against the first; two single runs keep the noise band.
        let c = compare_samples(
            &[single.clone(), rounds, side("t", &[30.5])],
            &CompareOptions::default(),
        )
        .unwrap();
        let r = row(&c, Figure::Rps);
        assert_eq!(r.values, vec![Some(30.0), Some(20.0), Some(30.5)]);
        assert_eq!(r.verdicts[1], Verdict::Worse, "10 below, beyond ±{half}");
        assert_eq!(r.intervals[2], None);
        assert_eq!(r.verdicts[2], Verdict::Same);
        assert_eq!(c.rounds, vec![1, 5, 1]);
    }

    #[test]
    fn one_warning_per_file_of_rounds() {
        let a = side("a", &[1.0]);
        let mut b = side("b", &[1.0, 1.0, 1.0]);
        for r in &mut b.runs {
            r.plan.connections = 7;
        }
        let c = compare_samples(&[a, b], &CompareOptions::default()).unwrap();
        assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
        assert!(c.warnings[0].contains("connections 100 vs 7"));
    }

    #[test]
    fn repeated_rejects_bad_confidence() {
        let a = side("a", &[1.0, 2.0]);
        let opts = CompareOptions {
            confidence: 1.0,
            ..CompareOptions::default()
        };
        assert_eq!(
            compare_samples(&[a.clone(), a], &opts),
            Err(CompareError::BadConfidence(1.0))
        );
    }

    #[test]
    fn serializes_rows() {
        let c = compare(
            &[run("a", 1.0, 0.0, 1), run("b", 2.0, 0.0, 1)],
            &CompareOptions::default(),
        )
        .unwrap();
        let json = serde_json::to_value(&c).unwrap();
        let back: Comparison = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(back, c, "reads back as written");
        assert_eq!(json["rows"][0]["figure"], "goodput");
        assert_eq!(json["rows"][0]["verdicts"][1], "better");
        assert_eq!(json["rows"][6]["name"], "p99.9");
    }

    #[test]
    fn figures_name_their_units_and_verdicts_read_as_words() {
        let units = [
            (Figure::Goodput, "req/s"),
            (Figure::Rps, "req/s"),
            (Figure::ErrorRate, "%"),
            (Figure::ServerCpuPer1k, "CPU-ms"),
            (Figure::P99, "ms"),
        ];
        for (figure, unit) in units {
            assert_eq!(figure.unit(), unit, "{figure}");
        }
        assert_eq!(Figure::P99_9.to_string(), "p99.9");
        let words = [
            (Verdict::Baseline, "baseline"),
            (Verdict::Better, "better"),
            (Verdict::Worse, "worse"),
            (Verdict::Same, "same"),
            (
                Verdict::NoSignificantDifference,
                "no significant difference",
            ),
        ];
        for (verdict, word) in words {
            assert_eq!(verdict.to_string(), word);
        }
    }

    #[test]
    fn latencies_are_in_milliseconds_and_absent_without_responses() {
        let figures = run("a.json", 1000.0, 0.0, 5);
        let p50 = figures.p50_ms.unwrap();
        assert!((5.0..5.2).contains(&p50), "p50 {p50} ms");
        let none = RunFigures::of("none.json", &result(0.0, 100.0, &[]));
        assert_eq!((none.p50_ms, none.max_ms), (None, None));
    }

    #[test]
    fn tails_are_judged_in_a_band_twice_as_wide() {
        let opts = CompareOptions::default();
        // 8% more: within p99.9's and max's 10%, outside p99's 5%.
        assert_eq!(judge(Figure::P99_9, 100.0, 108.0, &opts), Verdict::Same);
        assert_eq!(judge(Figure::Max, 100.0, 108.0, &opts), Verdict::Same);
        assert_eq!(judge(Figure::P99, 100.0, 108.0, &opts), Verdict::Worse);
        assert_eq!(judge(Figure::P99_9, 100.0, 111.0, &opts), Verdict::Worse);
        assert_eq!(judge(Figure::P99_9, 100.0, 150.0, &opts), Verdict::Worse);
        // The band scales with the base: 4.5% of 200 is within, 5.5% is not.
        assert_eq!(judge(Figure::P50, 200.0, 209.0, &opts), Verdict::Same);
        assert_eq!(judge(Figure::P50, 200.0, 211.0, &opts), Verdict::Worse);
        assert_eq!(judge(Figure::Rps, 200.0, 211.0, &opts), Verdict::Better);
        // Error rates: 0.1 percentage points, or 5% of the base when larger
        // (10% errors: ±0.5 points).
        assert_eq!(judge(Figure::ErrorRate, 10.0, 10.4, &opts), Verdict::Same);
        assert_eq!(judge(Figure::ErrorRate, 10.0, 11.0, &opts), Verdict::Worse);
        assert_eq!(judge(Figure::ErrorRate, 0.0, 0.09, &opts), Verdict::Same);
        assert_eq!(judge(Figure::ErrorRate, 0.0, 0.2, &opts), Verdict::Worse);
    }

    #[test]
    fn single_runs_have_no_rounds_and_a_confidence_must_be_inside_zero_one() {
        let c = compare(
            &[run("a.json", 1000.0, 0.0, 5), run("b.json", 1000.0, 0.0, 5)],
            &CompareOptions::default(),
        )
        .unwrap();
        assert!(!c.has_rounds());
        for confidence in [0.0, 1.0] {
            let opts = CompareOptions {
                confidence,
                ..CompareOptions::default()
            };
            let runs = [run("a.json", 1000.0, 0.0, 5), run("b.json", 1000.0, 0.0, 5)];
            assert_eq!(
                compare(&runs, &opts),
                Err(CompareError::BadConfidence(confidence))
            );
        }
    }
}
