//! [`Snapshot`] (what a worker hands over) and [`Recording`] (the merged run).

use crate::{new_latency_histogram, Counters, LatencyHistogram};
use std::time::{Duration, SystemTime};

/// Distinct error messages kept per class.
pub const MAX_ERROR_SAMPLES: usize = 3;

/// Levels at the moment a snapshot was taken (not sums over time).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Gauges {
    /// Connections open.
    pub open_connections: u64,
    /// Requests sent and not yet answered.
    pub in_flight: u64,
}

/// Counts and latencies of one worker over one interval, or merged totals.
/// All histograms are in microseconds.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// Requests by fate, bytes and connections.
    pub counters: Counters,
    /// From the intended send instant to the complete response (the honest figure).
    pub latency: LatencyHistogram,
    /// From the actual send to the complete response (what the server took).
    pub service: LatencyHistogram,
    /// From the actual send to the first response byte (ab's "waiting").
    pub waiting: LatencyHistogram,
    /// TCP connect time of each new connection.
    pub connect: LatencyHistogram,
    /// TLS handshake time of each new TLS connection.
    pub tls: LatencyHistogram,
    /// TCP connect plus TLS handshake of each new TLS connection, summed
    /// per connection (ab's Connect over https: a sum of two histograms'
    /// percentiles is not the percentile of the sums).
    pub connect_tls: LatencyHistogram,
    /// HTTP/3: the QUIC handshake (transport and TLS 1.3 in one) of each
    /// new connection that completed one before its first request.
    pub quic: LatencyHistogram,
    /// HTTP/3 `--0rtt`: connect to the server's acceptance of 0-RTT data,
    /// for each resumed connection whose early requests it accepted.
    pub zero_rtt: LatencyHistogram,
    /// A few error messages per class, for the reasons behind the counts
    /// (at most [`MAX_ERROR_SAMPLES`] per class).
    pub error_samples: Vec<(crate::ErrorKind, String)>,
    /// Open model: how late late sends were.
    pub lag: LatencyHistogram,
    /// Open model: how late every send was (µs; most are 0–50), the pacer's
    /// precision as `lag` cannot show it (it keeps only sends over 1 ms).
    pub lateness: LatencyHistogram,
    /// Levels at the end of the interval; summed across workers when merged.
    pub gauges: Gauges,
    /// Per-target statistics of a mix: each snapshot carries what was
    /// recorded since the worker's previous one; merged, the run's.
    pub per_target: Vec<crate::TargetStats>,
    /// Per-check counts (`--check`): only in a worker's final snapshot.
    pub checks: Vec<crate::CheckTally>,
    /// The latency of the responses that failed each check, by the check's
    /// position (as in `checks`), in every snapshot: the interval log's
    /// `latency:check:` tags. Empty until a check fails; shorter than the
    /// list when the last checks have not failed.
    pub check_failures: Vec<LatencyHistogram>,
    /// A `unique` feeder ran out of rows: the worker stopped early.
    pub feed_exhausted: bool,
    /// Streams watched (`--sse`); `None` without, so other runs carry nothing.
    pub stream: Option<Box<crate::StreamBooks>>,
    /// WebSocket figures (`ws://`); `None` for HTTP runs.
    pub websocket: Option<Box<crate::WebSocketBooks>>,
    /// HTTP/2: the fewest concurrent streams a server allowed a connection
    /// (its SETTINGS_MAX_CONCURRENT_STREAMS); `None` when no server set one.
    pub h2_server_streams: Option<u32>,
}

impl Default for Snapshot {
    fn default() -> Self {
        Snapshot {
            counters: Counters::default(),
            latency: new_latency_histogram(),
            service: new_latency_histogram(),
            waiting: new_latency_histogram(),
            connect: new_latency_histogram(),
            tls: new_latency_histogram(),
            connect_tls: new_latency_histogram(),
            quic: new_latency_histogram(),
            zero_rtt: new_latency_histogram(),
            error_samples: Vec::new(),
            lag: new_latency_histogram(),
            lateness: new_latency_histogram(),
            gauges: Gauges::default(),
            per_target: Vec::new(),
            checks: Vec::new(),
            check_failures: Vec::new(),
            feed_exhausted: false,
            stream: None,
            websocket: None,
            h2_server_streams: None,
        }
    }
}

impl Snapshot {
    /// Adds another snapshot in: counts summed, histograms added (lossless).
    pub fn merge(&mut self, other: &Snapshot) {
        self.counters.merge(&other.counters);
        let pairs = [
            (&mut self.latency, &other.latency),
            (&mut self.service, &other.service),
            (&mut self.waiting, &other.waiting),
            (&mut self.connect, &other.connect),
            (&mut self.tls, &other.tls),
            (&mut self.connect_tls, &other.connect_tls),
            (&mut self.quic, &other.quic),
            (&mut self.zero_rtt, &other.zero_rtt),
            (&mut self.lag, &other.lag),
            (&mut self.lateness, &other.lateness),
        ];
        if self.per_target.len() < other.per_target.len() {
            self.per_target
                .resize_with(other.per_target.len(), crate::TargetStats::default);
        }
        crate::merge_tallies(&mut self.checks, &other.checks);
        crate::checks::merge_failures(&mut self.check_failures, &other.check_failures);
        self.feed_exhausted |= other.feed_exhausted;
        self.h2_server_streams = fewest(self.h2_server_streams, other.h2_server_streams);
        if let Some(theirs) = &other.stream {
            self.stream
                .get_or_insert_with(Default::default)
                .merge(theirs);
        }
        if let Some(theirs) = &other.websocket {
            self.websocket
                .get_or_insert_with(Default::default)
                .merge(theirs);
        }
        for (mine, theirs) in self.per_target.iter_mut().zip(&other.per_target) {
            mine.merge(theirs);
        }
        for (kind, message) in &other.error_samples {
            let kept = self.error_samples.iter().filter(|(k, _)| k == kind).count();
            let duplicate = self
                .error_samples
                .iter()
                .any(|(k, m)| k == kind && m == message);
            if kept < MAX_ERROR_SAMPLES && !duplicate {
                self.error_samples.push((*kind, message.clone()));
            }
        }
        for (mine, theirs) in pairs {
            if !theirs.is_empty() {
                mine.add(theirs)
                    .expect("histograms share fixed bounds, so adding cannot fail");
            }
        }
    }
}

/// Everything a run measured, merged across workers.
#[derive(Debug, Clone)]
pub struct Recording {
    /// Wall-clock start, for the report's timestamp only.
    pub started_at: SystemTime,
    /// Measured on the monotonic clock from the first connection attempt to the stop.
    pub elapsed: Duration,
    /// True when the run was stopped early (Ctrl-C).
    pub interrupted: bool,
    /// Time spent resolving the target's host name.
    pub dns: Duration,
    /// Counts and latencies of the measured part, all workers merged.
    pub total: Snapshot,
    /// Per-second series of the measured part of the run.
    pub timeseries: Vec<crate::SecondPoint>,
    /// The event loop that drove the connections (`--io` settled by the engine).
    pub event_loop: stampede_plan::EventLoop,
    /// What the run's first TLS handshake negotiated (https only).
    pub tls: Option<crate::NegotiatedTls>,
    /// The seed of the run's Poisson arrivals (Poisson only).
    pub seed: Option<u64>,
    /// The checks of the run, by position in `total.checks`: each one's
    /// expression and its scenario step (empty without checks).
    pub checks: Vec<CheckName>,
    /// Responses were judged (checks or extractors given): the result
    /// always says how many failed a check, even when none did.
    pub judged: bool,
    /// Why the run stopped early, when not by its duration, count or a
    /// signal: `feed_exhausted` (a `unique` feeder ran out of rows).
    pub stop_reason: Option<String>,
    /// A scenario's groups, by their steps' target indices (empty without).
    pub groups: Vec<GroupName>,
}

impl Recording {
    /// A recording of `total` over `elapsed` on `event_loop`, started at
    /// `started_at`, with nothing else known: not interrupted, no DNS time,
    /// no series, TLS, seed, checks, stop reason or groups. What a result
    /// made outside the engine starts from (a salvaged run, the live page,
    /// test fixtures); set the fields it knows on top.
    pub fn of(
        started_at: SystemTime,
        elapsed: Duration,
        event_loop: stampede_plan::EventLoop,
        total: Snapshot,
    ) -> Recording {
        Recording {
            started_at,
            elapsed,
            interrupted: false,
            dns: Duration::ZERO,
            total,
            timeseries: Vec::new(),
            event_loop,
            tls: None,
            seed: None,
            checks: Vec::new(),
            judged: false,
            stop_reason: None,
            groups: Vec::new(),
        }
    }
}

/// A scenario group in a recording: its name, load and steps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupName {
    /// The group's name.
    pub name: String,
    /// Its load model in words: `"50 connections"`, `"200 iterations/s"`.
    pub load: String,
    /// Its steps' target indices (a scenario group's are consecutive; a
    /// transaction's may be any of them).
    pub steps: Vec<usize>,
    /// The steps' names, in order.
    pub step_names: Vec<String>,
}

/// A check's name in a recording: its expression and scenario step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckName {
    /// The expression as written (`status == 200`), or `extract NAME`.
    pub check: String,
    /// The scenario step it belongs to, when the run has steps.
    pub step: Option<String>,
}

impl Recording {
    /// Completed responses per second.
    pub fn rps(&self) -> f64 {
        per_second(self.total.counters.completed(), self.elapsed)
    }

    /// Successful responses per second.
    pub(crate) fn goodput(&self) -> f64 {
        per_second(self.total.counters.success, self.elapsed)
    }
}

/// `count / elapsed`, zero for an empty interval.
pub fn per_second(count: u64, elapsed: Duration) -> f64 {
    let seconds = elapsed.as_secs_f64();
    if seconds > 0.0 {
        count as f64 / seconds
    } else {
        0.0
    }
}

/// The smaller of two limits, either maybe unknown.
fn fewest(a: Option<u32>, b: Option<u32>) -> Option<u32> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
