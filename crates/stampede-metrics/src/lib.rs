//! What a run measured: [`Outcome`]s recorded per worker into a [`Recorder`]
//! (no lock, no allocation per request), handed on as [`Snapshot`]s, merged
//! losslessly into a [`Recording`], and written out as the versioned
//! [`RunResult`] (`stampede.result/1`).
//!
//! Nothing here knows about sockets, runtimes or terminals.
//!
//! Modules: `recorder` (the per-worker hot path), `histogram` (HDR latency),
//! `histogram_encoder` (their text form, cheap enough for every interval),
//! `counters`, `addresses` (which addresses connections went to),
//! `error_kind`, `http_version` (`plan.http_version`'s values),
//! `recording` (snapshots and the merged run), `timeseries` (per second),
//! `intervals`, `interval_histograms` and `interval_log` (`--hlog`: fixed
//! intervals, their histograms and the HdrHistogram interval log), `interval_merge` (logs merged per interval), `per_target` (`--targets` mix), `checks` (`--check` tallies), `monitor`
//! (what the process monitor saw), `environment`, `agent`, `run_id`,
//! `result` (the result file), `second_histograms` (each second's histograms in it), `result_window` (a result narrowed to some of its seconds), `running` (a run's facts while it runs), `server_reading` (a server's counters for `stampede experiment`), `stream` (streamed responses: `--sse`'s events and gaps), `merge` (agents' results into one). See
//! docs/architecture.md.

mod addresses;
mod agent;
mod checks;
mod client_tcp;
mod counters;
mod environment;
mod error_kind;
mod histogram;
mod histogram_encoder;
mod http_version;
mod interval_histograms;
mod interval_log;
mod interval_merge;
mod intervals;
mod merge;
mod merge_targets;
mod monitor;
mod per_target;
mod recorder;
mod recording;
mod rendezvous;
mod replay_result;
mod result;
mod result_window;
mod run_id;
mod running;
mod second_histograms;
mod server_reading;
mod stream;
mod thread_waits;
mod timeseries;
mod websocket;

pub use addresses::{merge_dns, AddressUse, DnsUse};
pub use agent::{format_timestamp, parse_timestamp, signed_millis, AgentInfo, TimestampError};
pub(crate) use checks::{merge_tallies, MAX_CHECK_SAMPLES};
pub use checks::{CheckResult, CheckTally, Judged};
pub use client_tcp::ClientTcp;
pub use counters::{Counters, StatusCounts};
pub use environment::Environment;
pub use error_kind::ErrorKind;
pub use histogram::{
    decode_histogram, encode_histogram, new_latency_histogram, record_latency, LatencyHistogram,
    LatencySummary,
};
pub use histogram_encoder::HistogramEncoder;
pub use interval_histograms::IntervalHistograms;
pub use interval_log::{
    encode_tag, read_hlog, HlogError, HlogFile, HlogInterval, HlogWriter, HLOG_LEGEND,
};
pub use interval_merge::{merge_hlogs, MergedInterval, MergedLog};
pub use intervals::{snapshot_interval_for, IntervalBuilder, IntervalSink};
pub use merge::{merge_results, MergeError};
pub use monitor::{MachineSample, MonitorReport, ProcessSample, ProcessSummary};
pub use per_target::{GroupResult, TargetResult, TargetStats, TRANSACTION_LOAD};
pub use recorder::{Outcome, Recorder};
pub use recording::{
    per_second, CheckName, Gauges, GroupName, Recording, Snapshot, MAX_ERROR_SAMPLES,
};
pub use rendezvous::{merge_rendezvous, RendezvousResult, SpreadSummary};
pub use replay_result::{RecordedTimes, ReplayGroup, ReplayResult};
pub use result::{
    intended_requests, Breakdown, CompressionSummary, Http2Result, NegotiatedTls, PlanSummary,
    RedirectCounts, RequestCounts, RequestLogSummary, RunResult, ScheduleSummary, SloCheck,
    StageSummary, TimingSummary, WebSocketPlan, RESULT_SCHEMA,
};
pub use result_window::{window_of, window_text, WindowError};
pub use run_id::new_run_id;
pub use running::Running;
pub use second_histograms::{
    encode_second, has_second_histograms, second_percentiles, tags_in_every_second, SecondSums,
    SECOND_TAGS,
};
pub use server_reading::{CpuTicks, ServerReading, ThreadCpu};
pub use stream::{StreamBooks, StreamFigures, StreamHistograms, StreamResult, StreamSummary};
pub use thread_waits::{ThreadWait, ThreadWaits};
pub use timeseries::{SecondMessages, SecondPoint, TimeseriesBuilder};
pub use websocket::{WebSocketBooks, WebSocketHistograms, WebSocketResult};

/// Errors reading or decoding saved results.
#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    /// A histogram that could not be decoded, and why.
    #[error("histogram could not be decoded: {0}")]
    Histogram(String),
    /// A file that is not a stampede result, and why.
    #[error("not a stampede result: {0}")]
    Schema(String),
}
