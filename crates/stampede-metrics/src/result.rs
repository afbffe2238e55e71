//! The result file, `stampede.result/1`: one self-describing JSON object that
//! `report`, `compare` and `merge` read back exactly as a fresh run. Every field
//! is documented in docs/result-schema.md; add fields, never change one.

use crate::{
    decode_histogram, encode_histogram, Environment, ErrorKind, LatencyHistogram, LatencySummary,
    MetricsError, Recording,
};
use crate::{MonitorReport, SecondPoint};
use serde::{Deserialize, Serialize};
use stampede_plan::{LoadModel, Plan, StopCondition};
use std::collections::BTreeMap;

/// The schema tag of a single run's result.
pub const RESULT_SCHEMA: &str = "stampede.result/1";

/// What was asked for, as recorded in the result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanSummary {
    /// The URL under test, as given.
    pub url: String,
    /// The HTTP method.
    pub method: String,
    /// The most connections the run could open (closed model: the peak target).
    pub connections: usize,
    /// Worker threads.
    pub threads: usize,
    /// `"closed"` (connections each with one request in flight) or `"rate"` (open model).
    #[serde(default = "closed_model")]
    pub model: String,
    /// Open model: the target rate in requests/s (the peak, with stages).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub rate: Option<f64>,
    /// Open model: `"uniform"` or `"poisson"`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub arrival: Option<String>,
    /// Open model, `--batch-reads`: answers were read once per pace window;
    /// HTTP/1.1 answers stamped with the kernel's receive time, HTTP/2
    /// ones when read (up to one window high).
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub batch_reads: bool,
    /// The target over time, as stages `{duration_s, target}` starting from `start`.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub stages: Vec<StageSummary>,
    /// Warm-up before measuring, seconds.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub warmup_s: Option<f64>,
    /// The run's length (`-d`), or the upper bound of a run of `-n` requests, seconds.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub duration_s: Option<f64>,
    /// Requests in all (`-n`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub requests: Option<u64>,
    /// Whether connections were reused.
    pub keepalive: bool,
    /// `"1.1"`, `"1.0"`, `"2"` or `"h3"` (http_version.rs).
    #[serde(deserialize_with = "crate::http_version::read")]
    pub http_version: String,
    /// The event loop that drove the connections: `epoll` or `tokio` (`--io`).
    #[serde(default)]
    pub io: String,
    /// Time allowed to open a connection, seconds.
    pub connect_timeout_s: f64,
    /// Time allowed from a request's send to its complete response, seconds.
    pub timeout_s: f64,
    /// The request body's size, bytes.
    pub body_bytes: usize,
    /// What the first TLS handshake of the run settled (https targets only).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tls: Option<NegotiatedTls>,
    /// HTTP/1.1 requests written at once per connection (`--pipeline`);
    /// absent when 1.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub pipeline: Option<usize>,
    /// HTTP/2 and HTTP/3: requests in flight per connection (`--streams`);
    /// absent over HTTP/1.1.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub streams: Option<usize>,
    /// Poisson arrivals: the seed their gaps were drawn from (`--seed` runs
    /// them again).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub seed: Option<u64>,
    /// `--script` (wrk's `-s`): the Lua script that built every request, as
    /// given on the command line; `method` and `body_bytes` are then only
    /// the `wrk` table's defaults. Set by the engine's caller.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub script: Option<String>,
    /// The plan's name: a scenario's file name (`--scenario checkout.toml`),
    /// a JMeter plan's TestPlan name (its file name when unnamed). Reports
    /// title a run with it instead of its first request. Set by the
    /// engine's caller; absent for a plain URL.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub name: Option<String>,
    /// A `ws://` or `wss://` run: what each message was and what the
    /// upgrade offered, so `compare` tells two workloads apart.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub websocket: Option<WebSocketPlan>,
}

/// What a WebSocket run sent and offered (`--ws-message`, `--ws-binary`,
/// `--ws-subprotocol`, `--ws-deflate`, `--ws-rate`, `--ws-match-id`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WebSocketPlan {
    /// The message as given, bytes (a template's before rendering).
    pub message_bytes: usize,
    /// Binary frames (`--ws-binary`) rather than text.
    pub binary: bool,
    /// The subprotocols offered, in order of preference.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subprotocols: Vec<String>,
    /// `permessage-deflate` offered.
    pub deflate: bool,
    /// `--ws-rate`: messages per second on each connection (absent: each
    /// connection sends its next message once the last is answered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_per_connection: Option<f64>,
    /// `--ws-match-id`: the extractor replies are paired with their
    /// messages by (absent: by order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_id: Option<String>,
}

impl WebSocketPlan {
    /// As a reader sees it: `5-byte text messages, permessage-deflate
    /// offered, subprotocols chat`.
    pub fn describe(&self) -> String {
        let kind = if self.binary { "binary" } else { "text" };
        let mut text = format!("{}-byte {kind} messages", self.message_bytes);
        if self.deflate {
            text.push_str(", permessage-deflate offered");
        }
        if !self.subprotocols.is_empty() {
            text.push_str(&format!(", subprotocols {}", self.subprotocols.join(" ")));
        }
        if let Some(rate) = self.rate_per_connection {
            text.push_str(&format!(", {rate}/s per connection"));
        }
        if let Some(source) = &self.match_id {
            text.push_str(&format!(", replies paired by {source}"));
        }
        text
    }
}

/// The TLS version, cipher suite and ALPN protocol a handshake settled,
/// the suite as rustls names it (`TLSv1.3`, `TLS13_AES_256_GCM_SHA384`, `h2`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NegotiatedTls {
    /// The TLS version (`TLSv1.3`).
    pub version: String,
    /// The cipher suite (`TLS13_AES_256_GCM_SHA384`).
    pub cipher: String,
    /// The ALPN protocol (`h2`), when one was agreed.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub alpn: Option<String>,
}

impl NegotiatedTls {
    /// As a reader sees it: `TLSv1.3 TLS13_AES_256_GCM_SHA384 (h2)`, or
    /// `(no ALPN)` when none was agreed.
    pub fn describe(&self) -> String {
        let alpn = self.alpn.as_deref().unwrap_or("no ALPN");
        format!("{} {} ({alpn})", self.version, self.cipher)
    }
}

fn closed_model() -> String {
    "closed".into()
}

/// One stage of the load schedule.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StageSummary {
    /// How long the stage lasts, seconds.
    pub duration_s: f64,
    /// The value at its end: connections or requests per second.
    pub target: f64,
}

impl PlanSummary {
    /// The version number after `HTTP/` in text (`3` for `"h3"`).
    pub fn http_version_number(&self) -> &str {
        crate::http_version::number(&self.http_version)
    }

    pub(crate) fn of(plan: &Plan) -> PlanSummary {
        let schedule = plan.model.schedule();
        let varies = schedule.stages.iter().any(|s| s.target != schedule.start);
        let stages = if varies {
            schedule
                .stages
                .iter()
                .map(|s| StageSummary {
                    duration_s: s.duration.as_secs_f64(),
                    target: s.target,
                })
                .collect()
        } else {
            Vec::new()
        };
        let (model, rate, arrival, batch_reads) = match &plan.model {
            LoadModel::Closed { .. } => ("closed", None, None, false),
            LoadModel::Rate {
                per_s,
                arrival,
                batch_reads,
                ..
            } => (
                "rate",
                Some(per_s.peak()),
                Some(arrival.as_str().to_string()),
                *batch_reads,
            ),
        };
        let (duration_s, requests) = match plan.stop {
            StopCondition::Duration(d) => (Some(d.as_secs_f64()), None),
            StopCondition::Requests { count, limit } => {
                (limit.map(|d| d.as_secs_f64()), Some(count))
            }
        };
        PlanSummary {
            url: plan.target.url.clone(),
            method: plan.request.method.clone(),
            connections: plan.connections(),
            threads: plan.threads,
            model: model.into(),
            rate,
            arrival,
            batch_reads,
            stages,
            warmup_s: plan.warmup.map(|w| w.as_secs_f64()),
            duration_s,
            requests,
            keepalive: plan.keepalive,
            http_version: crate::http_version::of(plan).into(),
            io: plan.event_loop().as_str().into(),
            connect_timeout_s: plan.connect_timeout.as_secs_f64(),
            timeout_s: plan.timeout.as_secs_f64(),
            body_bytes: plan.request.body.len(),
            tls: None,
            pipeline: (plan.transport.pipeline > 1).then_some(plan.transport.pipeline),
            streams: (plan.transport.http2 || plan.transport.http3)
                .then_some(plan.transport.streams.max(1)),
            seed: None,
            script: None,
            name: None,
            websocket: plan.transport.websocket.as_ref().map(|ws| WebSocketPlan {
                message_bytes: ws.message.len(),
                binary: ws.binary,
                subprotocols: ws.subprotocols.clone(),
                deflate: ws.deflate,
                rate_per_connection: ws.pace.map(|pace| 1.0 / pace.as_secs_f64()),
                match_id: ws.match_id.clone(),
            }),
        }
    }
}

/// Every request, by fate. `sent = success + failed_status + check_failed
/// + errors + unfinished`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestCounts {
    /// Requests sent.
    pub sent: u64,
    /// Complete responses: `success + failed_status + check_failed`.
    pub completed: u64,
    /// Responses with a status below 400 that passed every check.
    pub success: u64,
    /// Responses with a status of 400 or more.
    pub failed_status: u64,
    /// Responses with status < 400 that failed a check or an extractor;
    /// present whenever the run judged responses (`--check`, `--extract`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub check_failed: Option<u64>,
    /// Requests that got no usable response (see `errors` of the result).
    pub errors: u64,
    /// Requests still in flight when the run stopped.
    pub unfinished: u64,
}

impl RequestCounts {
    /// Finished requests that failed (a failed status, a failed check or
    /// an error).
    pub(crate) fn failed(&self) -> u64 {
        self.failed_status + self.check_failed.unwrap_or(0) + self.errors
    }

    /// Failed share of finished requests, in percent.
    pub(crate) fn error_rate_pct(&self) -> f64 {
        let finished = self.completed + self.errors;
        if finished > 0 {
            100.0 * self.failed() as f64 / finished as f64
        } else {
            0.0
        }
    }
}

/// What `--redirects N` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RedirectCounts {
    /// `N`: the most hops one request may take.
    pub max_hops: u32,
    /// Hops followed over the run (each a response the request went on from).
    pub followed: u64,
    /// Redirects to another origin, not followed: their 3xx is the response.
    pub offsite: u64,
}

/// What HTTP/2 servers set for the run's connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Http2Result {
    /// The fewest concurrent streams a server allowed one connection (its
    /// SETTINGS_MAX_CONCURRENT_STREAMS): with `--streams` above it, the
    /// other requests of a connection waited in the client for a stream.
    pub server_max_streams: u32,
}

/// What `--compressed` and `--decode` asked for and, with `--decode`,
/// what decoding found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompressionSummary {
    /// The `Accept-Encoding` the requests carried.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub accept_encoding: Option<String>,
    /// Bodies were decoded (`--decode`).
    pub decode: bool,
    /// With `--decode`: response body bytes once decoded (`bytes.body` is
    /// what came over the wire).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub decoded_bytes: Option<u64>,
    /// With `--decode`: complete responses whose body came encoded.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub encoded_responses: Option<u64>,
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
    /// Connections the client tried to open, established or not (results
    /// written before this count read as 0).
    #[serde(default)]
    pub attempts: u64,
    /// Connections opened to replace one the client retired at the end of
    /// its lifetime (`--conn-max-requests`, `--conn-max-age`); written only
    /// when there were any.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub planned_reconnects: u64,
}

/// Serde's test for counts written only when non-zero.
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// ab's "Connection Times" figures for one phase of a request, in µs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TimingSummary {
    /// How many samples (e.g. new connections for `connect`).
    pub count: u64,
    /// Lowest.
    pub min: u64,
    /// Mean.
    pub mean: f64,
    /// Standard deviation.
    pub stdev: f64,
    /// Median.
    pub median: u64,
    /// Highest.
    pub max: u64,
}

impl TimingSummary {
    pub(crate) fn of(histogram: &LatencyHistogram) -> TimingSummary {
        if histogram.is_empty() {
            return TimingSummary::default();
        }
        TimingSummary {
            count: histogram.len(),
            min: histogram.min(),
            mean: histogram.mean(),
            stdev: histogram.stdev(),
            median: histogram.value_at_quantile(0.5),
            max: histogram.max(),
        }
    }
}

/// Where a request's time went (ab's "Connection Times").
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Breakdown {
    /// Resolving the host name, once per run (0 for an IP literal).
    pub dns_us: u64,
    /// TCP connect, for every new connection.
    pub connect: TimingSummary,
    /// TLS handshake, for every new TLS connection.
    #[serde(default)]
    pub tls: TimingSummary,
    /// TCP connect plus TLS handshake, summed per new TLS connection (ab's
    /// Connect over https).
    #[serde(default)]
    pub connect_tls: TimingSummary,
    /// HTTP/3: the QUIC handshake (1-RTT) of every new connection.
    #[serde(default)]
    pub quic: TimingSummary,
    /// HTTP/3 `--0rtt`: resumed connections whose 0-RTT data the server
    /// accepted, connect to acceptance (apart: 0-RTT data can be replayed).
    #[serde(default)]
    pub zero_rtt: TimingSummary,
    /// From sending a request to its first response byte, every request.
    pub waiting: TimingSummary,
    /// From sending a request to its complete response (service time).
    pub service: TimingSummary,
    /// From the intended send to the complete response (the latency figure).
    pub total: TimingSummary,
}

/// How well the open model kept its schedule.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ScheduleSummary {
    /// Requests sent more than 1 ms after their intended instant.
    pub late_sends: u64,
    /// How late they were.
    pub lag_us: TimingSummary,
    /// p99 of the lag, µs.
    pub lag_p99_us: u64,
    /// How late every send was, intended instant to send (µs): the pacer's
    /// precision. Absent in files written before it was recorded.
    #[serde(default)]
    pub lateness_us: TimingSummary,
    /// p99 of the lateness of every send, µs.
    #[serde(default)]
    pub lateness_p99_us: u64,
    /// Uniform arrivals: requests intended in the measured window (up to its
    /// end, and at most `-n`) that were never sent: still queued for a
    /// connection, or due while the client was stalled. `None` for Poisson
    /// arrivals, whose count of instants is random.
    #[serde(default)]
    pub not_sent: Option<u64>,
}

/// The requests a rate intends in a run that measured `elapsed_s`: the
/// area under the schedule up to the run's end (its duration, or `-n`'s
/// limit), at most `-n`. Uniform arrivals intend exactly ⌈area⌉.
pub fn intended_requests(plan: &Plan, elapsed_s: f64) -> Option<f64> {
    let LoadModel::Rate { per_s, .. } = &plan.model else {
        return None;
    };
    let (end, count) = match plan.stop {
        StopCondition::Duration(d) => (Some(d), None),
        StopCondition::Requests { count, limit } => (limit, Some(count)),
    };
    let measured = std::time::Duration::from_secs_f64(elapsed_s.max(0.0));
    let window = end.map_or(measured, |end| end.min(measured));
    let area = per_s.cumulative(window).ceil();
    Some(count.map_or(area, |n| area.min(n as f64)))
}

/// One SLO condition and how the run did against it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SloCheck {
    /// As written, e.g. `p99<250ms`.
    pub condition: String,
    /// The measured value in `unit`; absent when the figure was not measured.
    pub measured: Option<f64>,
    /// The unit of `measured`.
    pub unit: String,
    /// True when the figure was measured and met the condition.
    pub passed: bool,
}

/// What the per-request outputs (`--log-requests`, `--gnuplot`) wrote: lines
/// go through a bounded buffer and are dropped, never waited for, when the
/// writer falls behind, so the load is never slowed by logging.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestLogSummary {
    /// Requests handed to the writer and written.
    pub written: u64,
    /// Requests not logged because the buffer was full.
    pub dropped: u64,
    /// Every how many requests of a worker one was kept (1 = all).
    pub sample_every: u64,
}

/// One run's complete result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// The schema tag, [`RESULT_SCHEMA`].
    pub schema: String,
    /// The stampede version that wrote the result.
    pub version: String,
    /// A random id naming this result (16 hex digits), also the `run_id`
    /// label of its `--metrics` series; empty in files older than it.
    #[serde(default)]
    pub run_id: String,
    /// A merge of several results: their `run_id`s, in input order.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub merged_run_ids: Vec<String>,
    /// What was asked for.
    pub plan: PlanSummary,
    /// RFC 3339 wall-clock start.
    pub started_at: String,
    /// Seconds from the first connection attempt to the stop (monotonic clock).
    pub elapsed_s: f64,
    /// True when the run was stopped early (Ctrl-C).
    pub interrupted: bool,
    /// Every request, by fate.
    pub requests: RequestCounts,
    /// Completed responses per second.
    pub rps: f64,
    /// Successful (status < 400) responses per second.
    pub goodput: f64,
    /// Failed share of finished requests, in percent:
    /// (failed_status + check_failed + errors) / (completed + errors).
    pub error_rate_pct: f64,
    /// Transferred bytes per second (all bytes read).
    pub throughput_bytes_per_s: f64,
    /// Non-zero error classes only.
    pub errors: BTreeMap<String, u64>,
    /// Up to three distinct messages per error class: the reasons behind the counts.
    #[serde(skip_serializing_if = "BTreeMap::is_empty", default)]
    pub error_samples: BTreeMap<String, Vec<String>>,
    /// Responses by status code (`"200"`), non-zero only.
    pub status: BTreeMap<String, u64>,
    /// Bytes read from the target.
    pub bytes: ByteCounts,
    /// Connections opened, reconnects and attempts.
    pub connections: ConnectionCounts,
    /// `rps × (1 − error rate)`: the throughput that was real.
    #[serde(default)]
    pub effective_rps: f64,
    /// Latency from the intended send to the complete response, µs.
    pub latency_us: LatencySummary,
    /// The full latency histogram, HDR V2 deflate, base64: lossless.
    pub histogram: String,
    /// Service time (from the actual send): equals latency in the closed model;
    /// in the open model the difference is client-side queueing.
    #[serde(default)]
    pub service_time_us: LatencySummary,
    /// The full service-time histogram, HDR V2 deflate, base64.
    #[serde(default)]
    pub service_histogram: String,
    /// Where a request's time went (ab's "Connection Times").
    #[serde(default)]
    pub breakdown: Breakdown,
    /// Open model only.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub schedule: Option<ScheduleSummary>,
    /// Each check's (`--check`, a step's `check`, extractors) counts, in
    /// the order given; empty without checks.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub checks: Vec<crate::CheckResult>,
    /// Redirects (`--redirects N`): hops followed and offsite ones not
    /// followed; present when redirects were asked for.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub redirects: Option<RedirectCounts>,
    /// Compressed responses (`--compressed`, `--decode`); present when asked for.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub compression: Option<CompressionSummary>,
    /// Streamed responses (`--sse`): events, the time to the first one and
    /// the gaps between them; present when streams were watched.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub stream: Option<crate::StreamResult>,
    /// A WebSocket run (`ws://`, `wss://`): messages each way, their round
    /// trips, bytes, connection setup, close codes, pings, drops.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub websocket: Option<crate::WebSocketResult>,
    /// HTTP/2: the servers' stream limit; present when a server set one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub http2: Option<Http2Result>,
    /// Why the run stopped before its duration or count, other than a
    /// signal: `feed_exhausted` (a `unique` feeder ran out of rows).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub stop_reason: Option<String>,
    /// The target's addresses and the connections each got (`--dns`,
    /// `--dns-ttl`, or a name with several addresses); set by the engine's
    /// caller, absent when the run had one address.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub dns: Option<crate::DnsUse>,
    /// Scenario steps' rendezvous (`rendezvous` key, JMeter's
    /// Synchronizing Timer): batches and the spread of their sends.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub rendezvous: Vec<crate::RendezvousResult>,
    /// A scenario's groups, in file order: each one's load and the totals
    /// of its steps; empty without a scenario of several groups.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub groups: Vec<crate::GroupResult>,
    /// A replayed access log's lines and URI patterns (`stampede replay`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub replay: Option<crate::ReplayResult>,
    /// Per request of a mix (`--targets`), in file order; empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub targets: Vec<crate::TargetResult>,
    /// One point per second of measurement.
    #[serde(default)]
    pub timeseries: Vec<SecondPoint>,
    /// Per-request outputs: how many lines were written and dropped.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub request_log: Option<RequestLogSummary>,
    /// Server and client processes sampled during the run (--pid, --spawn).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub monitor: Option<MonitorReport>,
    /// The SLO conditions checked (--slo), each with its measured value.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub slo: Vec<SloCheck>,
    /// Reasons to distrust this run (the client was the bottleneck, the open
    /// model fell behind, too few connections for the rate...).
    #[serde(default)]
    pub warnings: Vec<String>,
    /// Things the user should know about how the run went (e.g. connections capped).
    #[serde(default)]
    pub notices: Vec<String>,
    /// Facts about the load-generating machine.
    pub environment: Environment,
    /// Set when the run was one agent of several (`--agent`, `--start-at`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub agent: Option<crate::AgentInfo>,
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
        let total = &recording.total;
        let c = &total.counters;
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
        let requests = RequestCounts {
            sent: c.sent,
            completed: c.completed(),
            success: c.success,
            failed_status: c.failed_status,
            check_failed: recording.judged.then_some(c.check_failed),
            errors: c.error_total(),
            unfinished: c.unfinished,
        };
        let error_rate_pct = requests.error_rate_pct();
        let schedule = matches!(plan.model, LoadModel::Rate { .. }).then(|| ScheduleSummary {
            late_sends: c.late_sends,
            lag_us: TimingSummary::of(&total.lag),
            lag_p99_us: if total.lag.is_empty() {
                0
            } else {
                total.lag.value_at_quantile(0.99)
            },
            not_sent: match &plan.model {
                LoadModel::Rate {
                    arrival: stampede_plan::Arrival::Uniform,
                    ..
                } => intended_requests(plan, recording.elapsed.as_secs_f64())
                    .map(|due| (due as u64).saturating_sub(c.sent)),
                _ => None,
            },
            lateness_us: TimingSummary::of(&total.lateness),
            lateness_p99_us: if total.lateness.is_empty() {
                0
            } else {
                total.lateness.value_at_quantile(0.99)
            },
        });
        RunResult {
            schema: RESULT_SCHEMA.into(),
            version: version.into(),
            run_id: crate::new_run_id(),
            merged_run_ids: Vec::new(),
            plan: PlanSummary {
                io: recording.event_loop.as_str().into(),
                tls: recording.tls.clone(),
                seed: recording.seed,
                ..PlanSummary::of(plan)
            },
            started_at: humantime::format_rfc3339_millis(recording.started_at).to_string(),
            elapsed_s: recording.elapsed.as_secs_f64(),
            interrupted: recording.interrupted,
            requests,
            rps: recording.rps(),
            goodput: recording.goodput(),
            error_rate_pct,
            throughput_bytes_per_s: crate::recording::per_second(
                c.bytes_received,
                recording.elapsed,
            ),
            errors,
            error_samples: total.error_samples.iter().fold(
                BTreeMap::new(),
                |mut samples: BTreeMap<String, Vec<String>>, (kind, message)| {
                    samples
                        .entry(kind.as_str().to_string())
                        .or_default()
                        .push(message.clone());
                    samples
                },
            ),
            status,
            bytes: ByteCounts {
                received: c.bytes_received,
                body: c.bytes_body,
            },
            connections: ConnectionCounts {
                opened: c.connections_opened,
                reconnects: c.reconnects,
                attempts: c.connect_attempts,
                planned_reconnects: c.planned_reconnects,
            },
            effective_rps: recording.rps() * (1.0 - error_rate_pct / 100.0),
            latency_us: LatencySummary::of(&total.latency),
            histogram: encode_histogram(&total.latency),
            service_time_us: LatencySummary::of(&total.service),
            service_histogram: encode_histogram(&total.service),
            breakdown: Breakdown {
                dns_us: recording.dns.as_micros() as u64,
                connect: TimingSummary::of(&total.connect),
                tls: TimingSummary::of(&total.tls),
                connect_tls: TimingSummary::of(&total.connect_tls),
                quic: TimingSummary::of(&total.quic),
                zero_rtt: TimingSummary::of(&total.zero_rtt),
                waiting: TimingSummary::of(&total.waiting),
                service: TimingSummary::of(&total.service),
                total: TimingSummary::of(&total.latency),
            },
            schedule,
            checks: recording
                .checks
                .iter()
                .zip(&total.checks)
                .map(|(name, tally)| {
                    crate::CheckResult::of(&name.check, name.step.as_deref(), tally)
                })
                .collect(),
            // A watched or WebSocket run has its section even when nothing
            // was booked in it (every upgrade refused): zeros, not absence.
            stream: (total.stream.as_deref())
                .or(plan
                    .transport
                    .stream
                    .watch
                    .then_some(&crate::StreamBooks::default()))
                .map(|books| crate::StreamResult::of(books, recording.elapsed)),
            websocket: (total.websocket.as_deref())
                .or(plan
                    .transport
                    .websocket
                    .is_some()
                    .then_some(&crate::WebSocketBooks::default()))
                .map(|books| crate::WebSocketResult::of(books, recording.elapsed)),
            http2: total
                .h2_server_streams
                .map(|server_max_streams| Http2Result { server_max_streams }),
            stop_reason: recording.stop_reason.clone(),
            dns: None,
            rendezvous: Vec::new(),
            // Asked for by --redirects, or followed by a scenario step's
            // own follow_redirects (max_hops 0 then: per step only).
            redirects: (plan.transport.redirects > 0 || c.redirects + c.redirects_offsite > 0)
                .then_some(RedirectCounts {
                    max_hops: plan.transport.redirects,
                    followed: c.redirects,
                    offsite: c.redirects_offsite,
                }),
            compression: plan
                .transport
                .compression
                .asked()
                .then(|| CompressionSummary {
                    accept_encoding: plan.transport.compression.accept_encoding.clone(),
                    decode: plan.transport.compression.decode,
                    decoded_bytes: plan.transport.compression.decode.then_some(c.bytes_decoded),
                    encoded_responses: plan
                        .transport
                        .compression
                        .decode
                        .then_some(c.encoded_responses),
                }),
            groups: recording
                .groups
                .iter()
                .map(|group| {
                    let steps: Vec<(&str, &crate::TargetStats)> = group
                        .steps
                        .iter()
                        .copied()
                        .zip(&group.step_names)
                        .filter_map(|(i, name)| {
                            total.per_target.get(i).map(|stats| (name.as_str(), stats))
                        })
                        .collect();
                    crate::GroupResult::of(
                        &group.name,
                        &group.load,
                        &steps,
                        recording.elapsed.as_secs_f64(),
                    )
                })
                .collect(),
            replay: None,
            targets: plan
                .mix
                .iter()
                .zip(&total.per_target)
                .map(|(entry, stats)| {
                    crate::TargetResult::of(
                        &entry.request.method,
                        &entry.target.url,
                        entry.weight,
                        stats,
                        recording.elapsed.as_secs_f64(),
                    )
                })
                .collect(),
            timeseries: recording.timeseries.clone(),
            request_log: None,
            monitor: None,
            slo: Vec::new(),
            warnings: Vec::new(),
            notices,
            environment,
            agent: None,
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
