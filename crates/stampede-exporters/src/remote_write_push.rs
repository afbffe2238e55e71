//! The remote-write thread: every second it queues the [`Board`]'s latest
//! reading (bounded: the oldest is dropped when full) and sends what is
//! queued oldest first, in batches, retrying with backoff; a reading a
//! receiver rejects for good (4xx) is dropped and counted.

use crate::http_post::{self, Endpoint, PostError};
use crate::metrics_feed::Board;
use crate::metrics_series::{self, Labels};
use crate::remote_write_proto::{self, Point};
use crate::remote_write_tally::Tally;
use std::collections::VecDeque;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant, SystemTime};

/// How often a reading is pushed.
pub(crate) const PUSH_EVERY: Duration = Duration::from_secs(1);
/// Readings kept while the receiver is away (five minutes of them).
const QUEUE_LIMIT: usize = 300;
/// Readings sent in one request at most (a backlog goes in a few).
const BATCH_LIMIT: usize = 60;
/// Time one push may take during the run.
const PUSH_TIMEOUT: Duration = Duration::from_secs(2);

const HEADERS: [(&str, &str); 3] = [
    ("Content-Encoding", "snappy"),
    ("Content-Type", "application/x-protobuf"),
    ("X-Prometheus-Remote-Write-Version", "0.1.0"),
];

/// The thread's state.
pub(crate) struct Pusher {
    endpoint: Endpoint,
    board: Board,
    run_labels: Labels,
    /// Readings not yet accepted, oldest first, each at its timestamp.
    queue: VecDeque<(i64, Vec<Point>)>,
    tally: Tally,
    failures_in_a_row: u32,
    last_timestamp: i64,
}

impl Pusher {
    /// A pusher to `endpoint` of what `board` holds, nothing queued yet.
    pub(crate) fn new(endpoint: Endpoint, board: Board, run_labels: Labels) -> Pusher {
        Pusher {
            endpoint,
            board,
            run_labels,
            queue: VecDeque::new(),
            tally: Tally::default(),
            failures_in_a_row: 0,
            last_timestamp: 0,
        }
    }

    /// Takes a reading every [`PUSH_EVERY`] and pushes what is queued, with
    /// backoff after a failure, until the writer asks for the final push.
    pub(crate) fn run(mut self, finished: &mpsc::Receiver<Instant>) -> Tally {
        let mut next_reading = Instant::now() + PUSH_EVERY;
        let mut next_push = next_reading;
        loop {
            let wake = next_reading.min(next_push);
            match finished.recv_timeout(wake.saturating_duration_since(Instant::now())) {
                Err(RecvTimeoutError::Timeout) => {}
                Ok(deadline) => return self.finish(deadline),
                Err(RecvTimeoutError::Disconnected) => return self.finish(Instant::now()),
            }
            let now = Instant::now();
            if now >= next_reading {
                self.take_reading();
                // A late tick (a slow push) is not made up for: readings are cumulative.
                next_reading = (next_reading + PUSH_EVERY).max(now);
            }
            if now >= next_push && !self.queue.is_empty() {
                next_push = match self.push(Instant::now() + PUSH_TIMEOUT) {
                    Ok(()) if !self.queue.is_empty() => Instant::now(),
                    Ok(()) => next_reading,
                    Err(()) => Instant::now() + http_post::backoff(self.failures_in_a_row),
                };
            }
        }
    }

    /// The final totals, and whatever is queued, by `deadline`.
    fn finish(mut self, deadline: Instant) -> Tally {
        self.take_reading();
        while !self.queue.is_empty() && Instant::now() < deadline {
            if self.push(deadline).is_err() {
                let pause = http_post::backoff(self.failures_in_a_row)
                    .min(deadline.saturating_duration_since(Instant::now()));
                std::thread::sleep(pause);
            }
        }
        let left: u64 = self
            .queue
            .iter()
            .map(|(_, points)| points.len() as u64)
            .sum();
        self.tally.dropped_samples += left;
        self.tally
    }

    /// Queues the board's latest reading, stamped now (nothing before the
    /// first reading); a full queue drops its oldest.
    fn take_reading(&mut self) {
        let reading = self
            .board
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let Some(reading) = reading else { return };
        let points =
            remote_write_proto::flatten(&metrics_series::families(&reading), &self.run_labels);
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |since| {
                i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
            });
        // Strictly later than the previous sample: a receiver refuses two
        // different values at one timestamp.
        let timestamp = now.max(self.last_timestamp + 1);
        self.last_timestamp = timestamp;
        if self.queue.len() >= QUEUE_LIMIT {
            if let Some((_, oldest)) = self.queue.pop_front() {
                self.tally.dropped_samples += oldest.len() as u64;
            }
        }
        self.queue.push_back((timestamp, points));
    }

    /// Sends up to [`BATCH_LIMIT`] queued readings in one request; what a
    /// receiver rejects for good (4xx) is dropped and counted.
    fn push(&mut self, deadline: Instant) -> Result<(), ()> {
        let batch = self.queue.len().min(BATCH_LIMIT);
        let readings: Vec<(i64, Vec<Point>)> = self.queue.iter().take(batch).cloned().collect();
        let outcome = remote_write_proto::encode(&readings)
            .map_err(|error| PostError::Transport(format!("snappy: {error}")))
            .and_then(|body| http_post::post(&self.endpoint, &HEADERS, &body, deadline));
        match outcome {
            Ok(()) => {
                self.queue.drain(..batch);
                self.tally.pushed += 1;
                self.failures_in_a_row = 0;
                Ok(())
            }
            Err(error) => {
                self.tally.failure(&error);
                self.failures_in_a_row += 1;
                if !error.retryable() {
                    let rejected: u64 = self
                        .queue
                        .drain(..batch)
                        .map(|(_, points)| points.len() as u64)
                        .sum();
                    self.tally.dropped_samples += rejected;
                }
                Err(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics_feed::Reading;
    use std::io::{Read, Write};
    use std::net::TcpListener;

    /// A receiver answering each request with the next of `statuses`.
    fn receiver(statuses: Vec<&'static str>) -> Endpoint {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for status in statuses {
                let (mut stream, _) = listener.accept().unwrap();
                let mut data = Vec::new();
                let mut chunk = [0u8; 4096];
                // Read the head and the body (Content-Length) before answering.
                loop {
                    let n = stream.read(&mut chunk).unwrap();
                    data.extend_from_slice(&chunk[..n]);
                    let text = String::from_utf8_lossy(&data).to_string();
                    let Some((head, _)) = text.split_once("\r\n\r\n") else {
                        assert!(n > 0, "closed before the head");
                        continue;
                    };
                    let length: usize = head
                        .lines()
                        .find_map(|l| {
                            l.split_once(':')
                                .filter(|(name, _)| name.eq_ignore_ascii_case("content-length"))
                        })
                        .and_then(|(_, value)| value.trim().parse().ok())
                        .unwrap();
                    if n == 0 || data.len() >= head.len() + 4 + length {
                        break;
                    }
                }
                let answer = format!(
                    "HTTP/1.1 {status}\r\nContent-Length: 4\r\nConnection: close\r\n\r\nnope"
                );
                stream.write_all(answer.as_bytes()).unwrap();
            }
        });
        Endpoint {
            authority: format!("127.0.0.1:{port}"),
            target: "/api/v1/write".into(),
            host: "127.0.0.1".into(),
            port,
            tls: false,
        }
    }

    fn pusher(endpoint: Endpoint) -> Pusher {
        let board = Board::default();
        *board.lock().unwrap() = Some(Reading {
            requests: vec![("success", "200".into(), 3)],
            ..Reading::default()
        });
        Pusher::new(endpoint, board, metrics_series::run_labels("abc", None))
    }

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(10)
    }

    #[test]
    fn a_retryable_failure_keeps_the_readings_and_the_next_push_sends_them_all() {
        let mut pusher = pusher(receiver(vec!["503 Service Unavailable", "204 No Content"]));
        pusher.take_reading();
        pusher.take_reading();
        assert!(pusher.push(soon()).is_err());
        assert_eq!(pusher.queue.len(), 2, "kept for the retry");
        assert!(pusher.push(soon()).is_ok());
        assert!(pusher.queue.is_empty());
        assert_eq!(pusher.tally.pushed, 1);
        assert_eq!(pusher.tally.dropped_samples, 0);
        assert_eq!(pusher.tally.failed["HTTP 503"].0, 1);
    }

    #[test]
    fn a_rejected_push_is_dropped_and_counted_and_a_full_queue_drops_its_oldest() {
        let mut pusher = pusher(receiver(vec!["400 Bad Request"]));
        pusher.take_reading();
        let samples = pusher.queue[0].1.len() as u64;
        assert!(pusher.push(soon()).is_err());
        assert!(pusher.queue.is_empty(), "a 4xx is not retried");
        assert_eq!(pusher.tally.dropped_samples, samples);
        assert_eq!(pusher.tally.failed["HTTP 400"], (1, "nope".to_string()));
        for _ in 0..QUEUE_LIMIT + 2 {
            pusher.take_reading();
        }
        assert_eq!(pusher.queue.len(), QUEUE_LIMIT);
        assert_eq!(pusher.tally.dropped_samples, samples * 3);
        let stamps: Vec<i64> = pusher.queue.iter().map(|(at, _)| *at).collect();
        assert!(stamps.windows(2).all(|w| w[0] < w[1]), "strictly rising");
    }
}
