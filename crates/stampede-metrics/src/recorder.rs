//! The per-worker [`Recorder`]: takes one [`Outcome`] at a time on the hot path
//! (integer adds and one histogram record; no lock, no allocation) and hands
//! over what it gathered as a [`Snapshot`] a few times a second.

use crate::{record_latency, ErrorKind, Gauges, Snapshot};
use std::time::{Duration, Instant};

/// A send later than this after its intended instant counts as late.
pub(crate) const LATE_THRESHOLD: Duration = Duration::from_millis(1);

/// A duration in whole microseconds, at least 1 (the histograms' lowest value).
#[inline]
fn micros(duration: Duration) -> u64 {
    (duration.as_micros() as u64).max(1)
}

/// How one request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// When the load model wanted the request sent. Latency counts from here, so
    /// waiting inside the client is not hidden (coordinated omission).
    pub intended: Instant,
    /// When its bytes were written (after connecting, when it needed a connection).
    pub sent: Instant,
    /// When the first byte of the response arrived, if one did.
    pub first_byte: Option<Instant>,
    /// When the response was complete or the error was seen.
    pub done: Instant,
    /// The status code of a complete response, or why there was none.
    pub result: Result<u16, ErrorKind>,
    /// Bytes read for this response (head and body).
    pub bytes_received: u64,
    /// Body bytes of this response.
    pub body_bytes: u64,
    /// Which request of a mix (`--targets`) this was; 0 otherwise.
    pub target: u16,
    /// The checks a complete response was judged by (`--check`, extractors):
    /// when any failed, a response that would be a success is `check_failed`.
    pub judged: Option<crate::Judged>,
}

/// Worker-local accumulation of outcomes since the last [`Recorder::take_interval`].
#[derive(Debug)]
pub struct Recorder {
    interval: Snapshot,
    /// Per-target statistics of a mix, for the whole run (empty without a mix).
    targets: Vec<crate::TargetStats>,
    /// Per-check counts, for the whole run (empty without checks).
    checks: Vec<crate::CheckTally>,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder::new()
    }
}

impl Recorder {
    /// An empty recorder.
    pub fn new() -> Recorder {
        Recorder {
            interval: Snapshot::default(),
            targets: Vec::new(),
            checks: Vec::new(),
        }
    }

    /// Keeps per-target statistics for a mix of `n` requests (`--targets`;
    /// a file of one block too, so that `targets[]` is there whatever the
    /// file's size). `n` is 0 without a mix.
    pub fn with_targets(n: usize) -> Recorder {
        Recorder {
            interval: Snapshot::default(),
            targets: if n > 0 {
                vec![crate::TargetStats::default(); n]
            } else {
                Vec::new()
            },
            checks: Vec::new(),
        }
    }

    /// Keeps per-check counts for `n` checks (and extractors) of the run.
    pub fn with_checks(mut self, n: usize) -> Recorder {
        self.checks = vec![crate::CheckTally::default(); n];
        self
    }

    /// Keeps a failing value of check `index` (made only when it is kept).
    pub fn sample_check(&mut self, index: usize, value: impl FnOnce() -> String) {
        if let Some(tally) = self.checks.get_mut(index) {
            tally.sample(value);
        }
    }

    /// Hands over the per-check counts (once, at the end of the run).
    pub fn take_checks(&mut self) -> Vec<crate::CheckTally> {
        std::mem::take(&mut self.checks)
    }

    /// Forgets the per-target statistics (end of warm-up).
    pub fn reset_targets(&mut self) {
        for stats in &mut self.targets {
            *stats = crate::TargetStats::default();
        }
        for tally in &mut self.checks {
            *tally = crate::CheckTally::default();
        }
    }

    /// Hands over the per-target statistics recorded since the last call
    /// and starts each afresh: every interval snapshot carries its share,
    /// so that what watches the run (`--metrics`' target labels) sees the
    /// mix while it runs; the aggregator's total adds the shares up, the
    /// same sum [`Recorder::take_targets`] would give at the end.
    pub fn take_interval_targets(&mut self) -> Vec<crate::TargetStats> {
        if self.targets.is_empty() {
            return Vec::new();
        }
        let fresh = vec![crate::TargetStats::default(); self.targets.len()];
        std::mem::replace(&mut self.targets, fresh)
    }

    /// Hands over the per-target statistics (once, at the end of the run).
    pub fn take_targets(&mut self) -> Vec<crate::TargetStats> {
        std::mem::take(&mut self.targets)
    }

    /// Counts a request handed to a connection.
    #[inline]
    pub fn record_sent(&mut self) {
        self.interval.counters.sent += 1;
    }

    /// Takes back a request counted as sent that was not sent after all (a
    /// `unique` feeder ran out of rows as it was being prepared).
    pub fn uncount_sent(&mut self) {
        self.interval.counters.sent = self.interval.counters.sent.saturating_sub(1);
    }

    /// `--decode`: a complete response's body came to `decoded` bytes once
    /// decoded; `encoded` when it came with a content coding.
    pub fn record_decoded(&mut self, decoded: u64, encoded: bool) {
        self.interval.counters.bytes_decoded += decoded;
        self.interval.counters.encoded_responses += u64::from(encoded);
    }

    /// Counts a redirect followed (a hop of the request in flight).
    pub fn record_redirect(&mut self) {
        self.interval.counters.redirects += 1;
    }

    /// Counts a redirect to another origin, not followed.
    pub fn record_offsite_redirect(&mut self) {
        self.interval.counters.redirects_offsite += 1;
    }

    /// Counts an attempt to open a connection (before it succeeds or fails).
    #[inline]
    pub fn record_connect_attempt(&mut self) {
        self.interval.counters.connect_attempts += 1;
    }

    /// Counts a TCP connection established in `connect_time`; `reconnect` when
    /// it replaces one the server closed between requests.
    #[inline]
    pub fn record_connection(&mut self, reconnect: bool, connect_time: Duration) {
        self.interval.counters.connections_opened += 1;
        if reconnect {
            self.interval.counters.reconnects += 1;
        }
        record_latency(&mut self.interval.connect, micros(connect_time));
    }

    /// Counts a connection opened to replace one the client retired at the
    /// end of its lifetime (`--conn-max-requests`, `--conn-max-age`).
    pub fn record_planned_reconnect(&mut self) {
        self.interval.counters.planned_reconnects += 1;
    }

    /// Counts a TLS handshake that took `handshake`, after a TCP connect
    /// that took `connect` (once per connection: both, and their sum).
    #[inline]
    pub fn record_tls_handshake(&mut self, connect: Duration, handshake: Duration) {
        record_latency(&mut self.interval.tls, micros(handshake));
        record_latency(&mut self.interval.connect_tls, micros(connect + handshake));
    }

    /// Counts a QUIC connection (HTTP/3). No TCP connect is timed: QUIC's
    /// handshake is the whole opening ([`Recorder::record_quic_handshake`]).
    #[inline]
    pub fn record_quic_connection(&mut self, reconnect: bool) {
        self.interval.counters.connections_opened += 1;
        if reconnect {
            self.interval.counters.reconnects += 1;
        }
    }

    /// Times a QUIC handshake: 1-RTT, or with `zero_rtt` from connect to the
    /// server's acceptance of the 0-RTT data sent meanwhile.
    pub fn record_quic_handshake(&mut self, handshake: Duration, zero_rtt: bool) {
        let histogram = if zero_rtt {
            &mut self.interval.zero_rtt
        } else {
            &mut self.interval.quic
        };
        record_latency(histogram, micros(handshake));
    }

    /// Keeps `message` as a sample reason for `kind` (the caller limits how
    /// often it formats one; merging keeps at most a few per class).
    pub fn record_error_sample(&mut self, kind: ErrorKind, message: String) {
        self.interval.error_samples.push((kind, message));
    }

    /// Counts requests sent before this interval began that are still in flight,
    /// so that warm-up's in-flight requests balance the measured ones.
    pub fn record_carried_over(&mut self, n: u64) {
        self.interval.counters.sent += n;
    }

    /// Open model: a request was sent `lag` after its intended instant. Every
    /// send goes into the lateness histogram (the pacer's precision); lags of
    /// `LATE_THRESHOLD` (1 ms) or more also count as late sends (no connection was
    /// free, or the client was slow).
    #[inline]
    pub fn record_send_lag(&mut self, lag: Duration) {
        record_latency(&mut self.interval.lateness, micros(lag));
        if lag >= LATE_THRESHOLD {
            self.interval.counters.late_sends += 1;
            record_latency(&mut self.interval.lag, micros(lag));
        }
    }

    /// Sets the gauges reported with the next snapshot.
    pub fn set_gauges(&mut self, gauges: Gauges) {
        self.interval.gauges = gauges;
    }

    /// Counts requests in flight when the run was stopped.
    pub fn record_unfinished(&mut self, n: u64) {
        self.interval.counters.unfinished += n;
    }

    /// Records how one request ended.
    #[inline]
    pub fn record(&mut self, outcome: &Outcome) {
        if let Some(stats) = self.targets.get_mut(usize::from(outcome.target)) {
            let latency = outcome.done.saturating_duration_since(outcome.intended);
            stats.record(outcome, micros(latency));
        }
        let counters = &mut self.interval.counters;
        counters.bytes_received += outcome.bytes_received;
        counters.bytes_body += outcome.body_bytes;
        match outcome.result {
            Ok(status) => {
                if status >= 400 {
                    counters.failed_status += 1;
                } else if outcome.judged.is_some_and(|j| j.any_failed()) {
                    counters.check_failed += 1;
                } else {
                    counters.success += 1;
                }
                counters.status.add(status, 1);
                let snapshot = &mut self.interval;
                let latency = micros(outcome.done.saturating_duration_since(outcome.intended));
                if let Some(judged) = &outcome.judged {
                    crate::checks::tally_judged(&mut self.checks, judged);
                    if judged.any_failed() {
                        let failures = &mut snapshot.check_failures;
                        crate::checks::record_failures(
                            failures,
                            self.checks.len(),
                            judged,
                            latency,
                        );
                    }
                }
                record_latency(&mut snapshot.latency, latency);
                let service = outcome.done.saturating_duration_since(outcome.sent);
                record_latency(&mut snapshot.service, micros(service));
                if let Some(first_byte) = outcome.first_byte {
                    let waiting = first_byte.saturating_duration_since(outcome.sent);
                    record_latency(&mut snapshot.waiting, micros(waiting));
                }
            }
            Err(kind) => counters.errors[kind.index()] += 1,
        }
    }

    /// Books a stream that ended (`--sse`).
    pub fn record_stream(&mut self, figures: &crate::StreamFigures) {
        self.interval
            .stream
            .get_or_insert_with(Default::default)
            .record(figures);
    }

    /// The WebSocket books of this interval, to add to (`ws://` runs).
    pub fn websocket(&mut self) -> &mut crate::WebSocketBooks {
        self.interval.websocket.get_or_insert_with(Default::default)
    }

    /// Hands over everything recorded since the last call and starts afresh.
    pub fn take_interval(&mut self) -> Snapshot {
        let gauges = self.interval.gauges;
        let fresh = Snapshot {
            gauges,
            ..Snapshot::default()
        };
        // error_samples move with the interval; the fresh one starts empty.
        std::mem::replace(&mut self.interval, fresh)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Counters;

    #[test]
    fn only_real_lags_count_as_late() {
        let mut recorder = Recorder::new();
        recorder.record_send_lag(Duration::from_micros(200));
        recorder.record_send_lag(Duration::from_millis(30));
        let snapshot = recorder.take_interval();
        assert_eq!(snapshot.counters.late_sends, 1);
        assert!(snapshot.lag.equivalent(snapshot.lag.max(), 30_000));
        assert_eq!(snapshot.lateness.len(), 2, "every send's lateness is kept");
        assert!(snapshot.lateness.equivalent(snapshot.lateness.min(), 200));
    }

    fn outcome(result: Result<u16, ErrorKind>, micros: u64) -> Outcome {
        let intended = Instant::now();
        Outcome {
            intended,
            sent: intended,
            first_byte: Some(intended + Duration::from_micros(micros / 2)),
            done: intended + Duration::from_micros(micros),
            result,
            bytes_received: 100,
            body_bytes: 10,
            target: 0,
            judged: None,
        }
    }

    #[test]
    fn classifies_outcomes_and_resets_on_take() {
        let mut recorder = Recorder::new();
        for result in [Ok(200), Ok(304), Ok(404), Err(ErrorKind::Timeout)] {
            recorder.record_sent();
            recorder.record(&outcome(result, 1500));
        }
        let snapshot = recorder.take_interval();
        let c = &snapshot.counters;
        assert_eq!((c.sent, c.success, c.failed_status), (4, 2, 1));
        assert_eq!(c.error(ErrorKind::Timeout), 1);
        assert_eq!(c.bytes_received, 400);
        assert!(c.is_balanced());
        assert_eq!(snapshot.latency.len(), 3, "errors have no latency sample");
        assert_eq!(snapshot.service.len(), 3);
        assert_eq!(snapshot.waiting.max(), 750);
        assert_eq!(recorder.take_interval().counters, Counters::default());
    }
}
