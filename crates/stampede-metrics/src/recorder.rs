//! The per-worker [`Recorder`]: takes one [`Outcome`] at a time on the hot path
//! (integer adds and one histogram record; no lock, no allocation) and hands
//! over what it gathered as a [`Snapshot`] a few times a second.

use crate::{new_latency_histogram, Counters, ErrorKind, Snapshot};
use std::time::Instant;

/// How one request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// When the load model wanted the request sent. Latency counts from here, so
    /// waiting inside the client is not hidden (coordinated omission).
    pub intended: Instant,
    /// When its bytes were written.
    pub sent: Instant,
    /// When the response was complete or the error was seen.
    pub done: Instant,
    /// The status code of a complete response, or why there was none.
    pub result: Result<u16, ErrorKind>,
    /// Bytes read for this response (head and body).
    pub bytes_received: u64,
    /// Body bytes of this response.
    pub body_bytes: u64,
}

/// Worker-local accumulation of outcomes since the last [`Recorder::take_interval`].
#[derive(Debug)]
pub struct Recorder {
    interval: Snapshot,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder::new()
    }
}

impl Recorder {
    pub fn new() -> Recorder {
        Recorder {
            interval: Snapshot::default(),
        }
    }

    /// Counts a request handed to a connection.
    #[inline]
    pub fn record_sent(&mut self) {
        self.interval.counters.sent += 1;
    }

    /// Counts a TCP connection established; `reconnect` when it replaces one the
    /// server closed between requests.
    #[inline]
    pub fn record_connection(&mut self, reconnect: bool) {
        self.interval.counters.connections_opened += 1;
        if reconnect {
            self.interval.counters.reconnects += 1;
        }
    }

    /// Counts requests in flight when the run was stopped.
    pub fn record_unfinished(&mut self, n: u64) {
        self.interval.counters.unfinished += n;
    }

    /// Records how one request ended.
    #[inline]
    pub fn record(&mut self, outcome: &Outcome) {
        let counters = &mut self.interval.counters;
        counters.bytes_received += outcome.bytes_received;
        counters.bytes_body += outcome.body_bytes;
        match outcome.result {
            Ok(status) => {
                if status < 400 {
                    counters.success += 1;
                } else {
                    counters.failed_status += 1;
                }
                counters.status.add(status, 1);
                let latency = outcome.done.saturating_duration_since(outcome.intended);
                let micros = (latency.as_micros() as u64).max(1);
                self.interval.latency.saturating_record(micros);
            }
            Err(kind) => counters.errors[kind.index()] += 1,
        }
    }

    /// Hands over everything recorded since the last call and starts afresh.
    pub fn take_interval(&mut self) -> Snapshot {
        let fresh = Snapshot {
            counters: Counters::default(),
            latency: new_latency_histogram(),
        };
        std::mem::replace(&mut self.interval, fresh)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn outcome(result: Result<u16, ErrorKind>, micros: u64) -> Outcome {
        let intended = Instant::now();
        Outcome {
            intended,
            sent: intended,
            done: intended + Duration::from_micros(micros),
            result,
            bytes_received: 100,
            body_bytes: 10,
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
        assert_eq!(recorder.take_interval().counters, Counters::default());
    }
}
