//! The result file, `stampede.result/1`: one self-describing JSON object that
//! `report`, `compare` and `merge` read back exactly as a fresh run. Every field
//! is documented in docs/result-schema.md; add fields, never change one.

use crate::{
    decode_histogram, encode_histogram, Environment, ErrorKind, LatencyHistogram, LatencySummary,
    MetricsError, Recording,
};
use serde::{Deserialize, Serialize};
use stampede_plan::{Plan, StopCondition};
use std::collections::BTreeMap;

/// The schema tag of a single run's result.
pub const RESULT_SCHEMA: &str = "stampede.result/1";

/// What was asked for, as recorded in the result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanSummary {
    pub url: String,
    pub method: String,
    pub connections: usize,
    pub threads: usize,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub duration_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub requests: Option<u64>,
    pub keepalive: bool,
    pub http_version: String,
    pub connect_timeout_s: f64,
    pub timeout_s: f64,
    pub body_bytes: usize,
}

impl PlanSummary {
    pub fn of(plan: &Plan) -> PlanSummary {
        let (duration_s, requests) = match plan.stop {
            StopCondition::Duration(d) => (Some(d.as_secs_f64()), None),
            StopCondition::Requests { count, limit } => {
                (limit.map(|d| d.as_secs_f64()), Some(count))
            }
        };
        PlanSummary {
            url: plan.target.url.clone(),
            method: plan.request.method.clone(),
            connections: plan.connections,
            threads: plan.threads,
            duration_s,
            requests,
            keepalive: plan.keepalive,
            http_version: if plan.request.http10 { "1.0" } else { "1.1" }.into(),
            connect_timeout_s: plan.connect_timeout.as_secs_f64(),
            timeout_s: plan.timeout.as_secs_f64(),
            body_bytes: plan.request.body.len(),
        }
    }
}

/// Every request, by fate. `sent = success + failed_status + errors + unfinished`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestCounts {
    pub sent: u64,
    /// Complete responses: `success + failed_status`.
    pub completed: u64,
    pub success: u64,
    pub failed_status: u64,
    pub errors: u64,
    pub unfinished: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ByteCounts {
    pub received: u64,
    pub body: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnectionCounts {
    pub opened: u64,
    pub reconnects: u64,
}

/// One run's complete result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub schema: String,
    pub version: String,
    pub plan: PlanSummary,
    /// RFC 3339 wall-clock start.
    pub started_at: String,
    pub elapsed_s: f64,
    pub interrupted: bool,
    pub requests: RequestCounts,
    /// Completed responses per second.
    pub rps: f64,
    /// Successful (status < 400) responses per second.
    pub goodput: f64,
    /// Failed share of finished requests, in percent: (failed_status + errors) / (completed + errors).
    pub error_rate_pct: f64,
    /// Transferred bytes per second (all bytes read).
    pub throughput_bytes_per_s: f64,
    /// Non-zero error classes only.
    pub errors: BTreeMap<String, u64>,
    pub status: BTreeMap<String, u64>,
    pub bytes: ByteCounts,
    pub connections: ConnectionCounts,
    pub latency_us: LatencySummary,
    /// The full latency histogram, HDR V2 deflate, base64: lossless.
    pub histogram: String,
    /// Things the user should know about how the run went (e.g. connections capped).
    #[serde(default)]
    pub notices: Vec<String>,
    pub environment: Environment,
}

impl RunResult {
    /// Builds the result of a finished run.
    pub fn from_recording(
        plan: &Plan,
        recording: &Recording,
        environment: Environment,
        version: &str,
        notices: Vec<String>,
    ) -> RunResult {
        let c = &recording.total.counters;
        let errors = ErrorKind::ALL
            .into_iter()
            .filter(|kind| c.error(*kind) > 0)
            .map(|kind| (kind.as_str().to_string(), c.error(kind)))
            .collect();
        let status = c
            .status
            .iter()
            .map(|(code, n)| (code.to_string(), n))
            .collect();
        let finished = c.completed() + c.error_total();
        let failed = c.failed_status + c.error_total();
        RunResult {
            schema: RESULT_SCHEMA.into(),
            version: version.into(),
            plan: PlanSummary::of(plan),
            started_at: humantime::format_rfc3339_millis(recording.started_at).to_string(),
            elapsed_s: recording.elapsed.as_secs_f64(),
            interrupted: recording.interrupted,
            requests: RequestCounts {
                sent: c.sent,
                completed: c.completed(),
                success: c.success,
                failed_status: c.failed_status,
                errors: c.error_total(),
                unfinished: c.unfinished,
            },
            rps: recording.rps(),
            goodput: recording.goodput(),
            error_rate_pct: if finished > 0 {
                100.0 * failed as f64 / finished as f64
            } else {
                0.0
            },
            throughput_bytes_per_s: crate::recording::per_second(
                c.bytes_received,
                recording.elapsed,
            ),
            errors,
            status,
            bytes: ByteCounts {
                received: c.bytes_received,
                body: c.bytes_body,
            },
            connections: ConnectionCounts {
                opened: c.connections_opened,
                reconnects: c.reconnects,
            },
            latency_us: LatencySummary::of(&recording.total.latency),
            histogram: encode_histogram(&recording.total.latency),
            notices,
            environment,
        }
    }

    /// Reads a result back, checking its schema tag.
    pub fn from_json(text: &str) -> Result<RunResult, MetricsError> {
        let result: RunResult =
            serde_json::from_str(text).map_err(|e| MetricsError::Schema(e.to_string()))?;
        if result.schema != RESULT_SCHEMA {
            return Err(MetricsError::Schema(format!(
                "schema is '{}', expected '{RESULT_SCHEMA}'",
                result.schema
            )));
        }
        Ok(result)
    }

    /// The decoded latency histogram.
    pub fn latency_histogram(&self) -> Result<LatencyHistogram, MetricsError> {
        decode_histogram(&self.histogram)
    }
}
