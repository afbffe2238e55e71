//! `--remote-write URL`: pushes the run's series (the same list `--metrics`
//! serves, metrics_series.rs) to a Prometheus remote-write 1.0 receiver
//! every second, for runs on machines nothing can scrape. A dedicated
//! thread reads the [`Board`] the aggregator publishes to (it never waits
//! for the thread), queues each reading (bounded: the oldest is dropped
//! when full), and sends what is queued oldest first, retrying with
//! backoff. [`RemoteWriter::finish`] pushes the final totals (waiting at
//! most [`FINAL_WAIT`]) and prints one line of what failed or was dropped.

use crate::http_post::{self, Endpoint, PostError};
use crate::metrics_feed::Board;
use crate::metrics_series::{self, Labels};
use crate::remote_write_proto::{self, Point};
use anyhow::Context;
use std::collections::{BTreeMap, VecDeque};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

/// How often a reading is pushed.
const PUSH_EVERY: Duration = Duration::from_secs(1);
/// Readings kept while the receiver is away (five minutes of them).
const QUEUE_LIMIT: usize = 300;
/// Readings sent in one request at most (a backlog goes in a few).
const BATCH_LIMIT: usize = 60;
/// Time one push may take during the run.
const PUSH_TIMEOUT: Duration = Duration::from_secs(2);
/// The longest the end of the run waits for the final push.
pub const FINAL_WAIT: Duration = Duration::from_secs(2);

const HEADERS: [(&str, &str); 3] = [
    ("Content-Encoding", "snappy"),
    ("Content-Type", "application/x-protobuf"),
    ("X-Prometheus-Remote-Write-Version", "0.1.0"),
];

/// Reads `--remote-write` before any load: an http or https URL with a
/// host, or one line naming the problem.
pub fn parse_url(text: &str) -> anyhow::Result<Endpoint> {
    let url = url::Url::parse(text)
        .map_err(|error| anyhow::anyhow!("--remote-write {text}: not a URL ({error})"))?;
    let tls = match url.scheme() {
        "http" => false,
        "https" => true,
        other => {
            anyhow::bail!("--remote-write {text}: the scheme must be http or https, not {other}")
        }
    };
    let host = match url.host() {
        Some(url::Host::Ipv6(address)) => address.to_string(),
        Some(host) => host.to_string(),
        None => anyhow::bail!("--remote-write {text}: no host"),
    };
    let port = url.port_or_known_default().unwrap_or(80);
    let authority = match url.port() {
        Some(port) => format!("{}:{port}", url.host_str().unwrap_or(&host)),
        None => url.host_str().unwrap_or(&host).to_string(),
    };
    let mut target = url.path().to_string();
    if let Some(query) = url.query() {
        target.push('?');
        target.push_str(query);
    }
    Ok(Endpoint {
        authority,
        target,
        host,
        port,
        tls,
    })
}

/// The pushing thread, running.
pub struct RemoteWriter {
    /// Asks for the final push, to be done by the instant sent.
    finish: mpsc::Sender<Instant>,
    thread: JoinHandle<Tally>,
    url: String,
}

impl RemoteWriter {
    /// Checks `url` (None: no pushing) and starts the thread reading `board`.
    pub fn start(
        url: Option<&str>,
        run_labels: &Labels,
        board: &Board,
    ) -> anyhow::Result<Option<RemoteWriter>> {
        let Some(url) = url else { return Ok(None) };
        let endpoint = parse_url(url)?;
        let (finish, finished) = mpsc::channel();
        let pusher = Pusher {
            endpoint,
            board: board.clone(),
            run_labels: run_labels.clone(),
            queue: VecDeque::new(),
            tally: Tally::default(),
            failures_in_a_row: 0,
            last_timestamp: 0,
        };
        let thread = std::thread::Builder::new()
            .name("stampede-remote-write".into())
            .spawn(move || pusher.run(&finished))
            .context("--remote-write: starting the push thread")?;
        eprintln!(
            "stampede: remote-write: pushing to {url} every {}s",
            PUSH_EVERY.as_secs()
        );
        Ok(Some(RemoteWriter {
            finish,
            thread,
            url: url.to_string(),
        }))
    }

    /// Pushes the board's final reading (what the result says) with what is
    /// still queued, waits at most [`FINAL_WAIT`] for it (a push under way
    /// counts against it), and prints one line: what was pushed, or what
    /// failed and was dropped.
    pub fn finish(self) {
        let _ = self.finish.send(Instant::now() + FINAL_WAIT);
        match self.thread.join() {
            Ok(tally) => eprintln!("stampede: {}", tally.line(&self.url)),
            Err(_) => eprintln!("stampede: remote-write: the push thread failed"),
        }
    }
}

/// What the pushes came to.
#[derive(Debug, Default)]
struct Tally {
    pushed: u64,
    /// Failed pushes by kind, with the first message a receiver gave.
    failed: BTreeMap<String, (u64, String)>,
    dropped_samples: u64,
}

impl Tally {
    fn failure(&mut self, error: &PostError) {
        let message = match error {
            PostError::Status { message, .. } => message.clone(),
            PostError::Transport(_) => String::new(),
        };
        self.failed.entry(error.kind()).or_insert((0, message)).0 += 1;
    }

    fn line(&self, url: &str) -> String {
        let failed: u64 = self.failed.values().map(|(n, _)| n).sum();
        if failed == 0 && self.dropped_samples == 0 {
            return format!(
                "remote-write: {} pushes to {url}, all accepted",
                self.pushed
            );
        }
        let kind = |(kind, (_, message)): (&String, &(u64, String))| {
            if message.is_empty() {
                kind.clone()
            } else {
                format!("{kind}: {message}")
            }
        };
        let kinds = if self.failed.len() == 1 {
            self.failed.iter().map(kind).collect::<Vec<_>>().join("")
        } else {
            self.failed
                .iter()
                .map(|entry| format!("{} {}", (entry.1).0, kind(entry)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let failed = if failed == 0 {
            "no pushes failed".to_string()
        } else {
            format!("{failed} pushes failed ({kinds})")
        };
        format!(
            "remote-write: {failed}, {} samples dropped ({} pushes accepted)",
            self.dropped_samples, self.pushed
        )
    }
}

/// The thread's state.
struct Pusher {
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
    fn run(mut self, finished: &mpsc::Receiver<Instant>) -> Tally {
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

    #[test]
    fn urls_are_read_with_one_line_for_each_problem() {
        let endpoint = parse_url("http://127.0.0.1:9090/api/v1/write?x=1").expect("valid");
        assert_eq!((endpoint.host.as_str(), endpoint.port), ("127.0.0.1", 9090));
        assert_eq!(endpoint.target, "/api/v1/write?x=1");
        assert_eq!(endpoint.authority, "127.0.0.1:9090");
        let endpoint = parse_url("http://[::1]/write").expect("valid");
        assert_eq!((endpoint.host.as_str(), endpoint.port), ("::1", 80));
        assert!(!endpoint.tls);
        let endpoint = parse_url("https://prometheus.example/api/v1/write").expect("valid");
        assert_eq!(endpoint.port, 443);
        assert!(endpoint.tls);
        for (bad, why) in [
            ("not a url", "not a URL"),
            ("ftp://127.0.0.1/", "must be http or https"),
        ] {
            let error = parse_url(bad).expect_err(bad).to_string();
            assert!(error.contains(why), "{error}");
            assert_eq!(error.lines().count(), 1, "{error}");
        }
    }

    #[test]
    fn the_tally_line_names_each_kind_once() {
        let mut tally = Tally::default();
        for _ in 0..3 {
            tally.failure(&PostError::Transport("connection refused".into()));
        }
        assert_eq!(
            tally.line("http://x/"),
            "remote-write: 3 pushes failed (connection refused), 0 samples dropped (0 pushes accepted)"
        );
        tally.failure(&PostError::Status {
            code: 400,
            message: "out of order sample".into(),
        });
        tally.dropped_samples = 5;
        assert_eq!(
            tally.line("http://x/"),
            "remote-write: 4 pushes failed (1 HTTP 400: out of order sample, 3 connection refused), 5 samples dropped (0 pushes accepted)"
        );
        assert_eq!(
            Tally {
                pushed: 2,
                ..Tally::default()
            }
            .line("http://x/"),
            "remote-write: 2 pushes to http://x/, all accepted"
        );
    }
}

#[cfg(test)]
mod push_tests {
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
                        .find_map(|l| l.strip_prefix("Content-Length: "))
                        .and_then(|l| l.parse().ok())
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
        parse_url(&format!("http://127.0.0.1:{port}/api/v1/write")).unwrap()
    }

    fn pusher(endpoint: Endpoint) -> Pusher {
        let board = Board::default();
        *board.lock().unwrap() = Some(Reading {
            requests: vec![("success", "200".into(), 3)],
            ..Reading::default()
        });
        Pusher {
            endpoint,
            board,
            run_labels: metrics_series::run_labels("abc", None),
            queue: VecDeque::new(),
            tally: Tally::default(),
            failures_in_a_row: 0,
            last_timestamp: 0,
        }
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
