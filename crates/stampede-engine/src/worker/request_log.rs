//! The per-request log hook (`--log-requests`, `--gnuplot`): each worker fills
//! preallocated batches of [`LoggedRequest`]s and hands full ones to one
//! background writer thread over a bounded channel. When the writer falls
//! behind and a worker has no empty batch left, the batch's records are
//! dropped and counted: the load never waits for the disk (DESIGN.md,
//! "Bounded memory"). With logging off the hot path pays one `Option` check.
//!
//! Owns buffering, sampling and the writer thread; how a record becomes a
//! line is the [`RequestSink`]'s business (the binary's exports).

use stampede_metrics::{Outcome, RequestLogSummary};
use std::cell::{Cell, RefCell};
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

/// Records per batch: large enough that a channel send is rare (once per
/// this many requests), small enough that a batch is flushed promptly.
const BATCH_RECORDS: usize = 512;

/// One request as the log sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedRequest {
    /// The worker that sent it.
    pub worker: u32,
    /// When it was intended, sent and answered, and how it ended.
    pub outcome: Outcome,
    /// Time to open the connection this request needed; `None` on a reused one.
    pub connect: Option<Duration>,
    /// The virtual user (connection slot) that sent it: `{{conn}}`'s
    /// number, unique among the workers of its group.
    pub user: u64,
    /// The request target of its request line as sent (`/search?q=a%20b`),
    /// when the request was rendered from a template and the log asked for
    /// it ([`RequestLogOptions::request_targets`]); `None` for a fixed request.
    pub request_target: Option<Box<str>>,
}

/// Maps the engine's monotonic instants to report times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunClock {
    /// When measurement started (after warm-up).
    pub measure_start: Instant,
    /// The wall-clock time at `measure_start`.
    pub measure_start_wall: SystemTime,
}

impl RunClock {
    /// Time since measurement started (zero for earlier instants).
    pub fn offset(&self, at: Instant) -> Duration {
        at.saturating_duration_since(self.measure_start)
    }

    /// The wall-clock time of an instant of the run.
    pub fn wall(&self, at: Instant) -> SystemTime {
        self.measure_start_wall + self.offset(at)
    }
}

/// Where logged requests go; called on the writer thread only.
pub trait RequestSink: Send {
    /// Writes one request; `clock` turns its instants into times of the run.
    fn write(&mut self, request: &LoggedRequest, clock: &RunClock) -> io::Result<()>;
    /// Called once after the last record (flush buffers here).
    fn finish(&mut self) -> io::Result<()>;
}

/// Asks the engine to log requests.
pub struct RequestLogOptions {
    /// Where the records go.
    pub sink: Box<dyn RequestSink>,
    /// Keep every Nth request of each worker (1: every request).
    pub sample_every: u64,
    /// Records each worker may have waiting for the writer before it drops.
    pub buffer_per_worker: usize,
    /// Keep each rendered request's target ([`LoggedRequest::request_target`]):
    /// one small allocation per logged request, so only a log that prints
    /// the URL sent (a JMeter JTL) asks for it.
    pub request_targets: bool,
}

impl RequestLogOptions {
    /// Every request of every worker to `sink`, with the usual buffer and
    /// no request targets.
    pub fn new(sink: Box<dyn RequestSink>) -> RequestLogOptions {
        RequestLogOptions {
            sink,
            sample_every: 1,
            buffer_per_worker: 16 * BATCH_RECORDS,
            request_targets: false,
        }
    }
}

/// What the request log did, reported once the run is over.
#[derive(Debug)]
pub struct RequestLogReport {
    /// How many records were written and dropped.
    pub summary: RequestLogSummary,
    /// The first write error; later records were not written.
    pub error: Option<io::Error>,
}

type Batch = Vec<LoggedRequest>;

/// The writer thread and the per-worker channels, owned by the engine.
pub(crate) struct RequestLog {
    to_writer: Option<SyncSender<(usize, Batch)>>,
    returns: Vec<Option<(SyncSender<Batch>, Receiver<Batch>)>>,
    batches_per_worker: usize,
    sample_every: u64,
    request_targets: bool,
    dropped: Arc<AtomicU64>,
    writer: Option<JoinHandle<(u64, Option<io::Error>)>>,
}

/// A worker's end of the log, moved to its thread.
#[derive(Debug)]
pub(crate) struct WorkerLogHandle {
    index: usize,
    to_writer: SyncSender<(usize, Batch)>,
    free: Receiver<Batch>,
    sample_every: u64,
    request_targets: bool,
    dropped: Arc<AtomicU64>,
}

impl RequestLog {
    /// Starts the writer thread for `workers` workers.
    pub(crate) fn start(
        options: RequestLogOptions,
        workers: usize,
        clock: RunClock,
    ) -> io::Result<RequestLog> {
        let batches_per_worker = options.buffer_per_worker.div_ceil(BATCH_RECORDS).max(2);
        let (to_writer, from_workers) = mpsc::sync_channel(batches_per_worker * workers);
        let returns: Vec<(SyncSender<Batch>, Receiver<Batch>)> = (0..workers)
            .map(|_| mpsc::sync_channel(batches_per_worker))
            .collect();
        let back: Vec<SyncSender<Batch>> = returns.iter().map(|(tx, _)| tx.clone()).collect();
        let request_targets = options.request_targets;
        let mut sink = options.sink;
        let writer = std::thread::Builder::new()
            .name("stampede-request-log".into())
            .spawn(move || write_batches(from_workers, back, sink.as_mut(), &clock))?;
        Ok(RequestLog {
            to_writer: Some(to_writer),
            returns: returns.into_iter().map(Some).collect(),
            batches_per_worker,
            sample_every: options.sample_every.max(1),
            request_targets,
            dropped: Arc::new(AtomicU64::new(0)),
            writer: Some(writer),
        })
    }

    /// Worker `index`'s end, with its empty batches allocated up front so
    /// the worker never allocates while logging.
    pub(crate) fn worker(&mut self, index: usize) -> Option<WorkerLogHandle> {
        let to_writer = self.to_writer.clone()?;
        let (refill, free) = self.returns.get_mut(index)?.take()?;
        for _ in 1..self.batches_per_worker {
            // Cannot fail: the channel holds exactly this many.
            let _ = refill.try_send(Vec::with_capacity(BATCH_RECORDS));
        }
        Some(WorkerLogHandle {
            index,
            to_writer,
            free,
            sample_every: self.sample_every,
            request_targets: self.request_targets,
            dropped: self.dropped.clone(),
        })
    }

    /// Waits for the writer to drain (every worker has finished) and reports.
    pub(crate) fn finish(mut self) -> RequestLogReport {
        // The writer stops once every sender is gone: ours and the workers'.
        self.to_writer = None;
        self.returns.clear();
        let (written, error) = match self.writer.take().map(JoinHandle::join) {
            Some(Ok(outcome)) => outcome,
            Some(Err(_)) => (0, Some(io::Error::other("the request log writer panicked"))),
            None => (0, None),
        };
        RequestLogReport {
            summary: RequestLogSummary {
                written,
                dropped: self.dropped.load(Ordering::Relaxed),
                sample_every: self.sample_every,
            },
            error,
        }
    }
}

/// The writer thread: writes each batch, then hands it back empty.
fn write_batches(
    batches: Receiver<(usize, Batch)>,
    back: Vec<SyncSender<Batch>>,
    sink: &mut dyn RequestSink,
    clock: &RunClock,
) -> (u64, Option<io::Error>) {
    let mut written = 0u64;
    let mut error = None;
    for (worker, mut batch) in batches {
        if error.is_none() {
            for request in &batch {
                if let Err(e) = sink.write(request, clock) {
                    error = Some(e);
                    break;
                }
                written += 1;
            }
        }
        batch.clear();
        if let Some(back) = back.get(worker) {
            let _ = back.try_send(batch);
        }
    }
    if let Err(e) = sink.finish() {
        error.get_or_insert(e);
    }
    (written, error)
}

/// The target of a request line (`GET /a?b=1 HTTP/1.1`: `/a?b=1`); a
/// script's pipelined batch gives its first request's.
fn request_target(request: &[u8]) -> Option<Box<str>> {
    let line = &request[..request
        .iter()
        .position(|&b| b == b'\r')
        .unwrap_or(request.len())];
    let mut words = line.split(|&b| b == b' ');
    let target = words.nth(1)?;
    Some(String::from_utf8_lossy(target).into())
}

/// The worker-local log: single-threaded, so plain `Cell`s.
#[derive(Debug)]
pub(crate) struct WorkerLog {
    handle: WorkerLogHandle,
    measure_start: Instant,
    current: RefCell<Batch>,
    seen: Cell<u64>,
    dropped: Cell<u64>,
}

/// What a request's log line needs besides its [`Outcome`], gathered by the loop that booked it ([`crate::worker::booking`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct LogFacts<'a> {
    /// The time its connection took to open, on the request that opened it
    /// (`None` on a reused one, after a failed connect, and over HTTP/3,
    /// whose connect is its TLS handshake: the log's connect excludes that).
    pub connect: Option<Duration>,
    /// The virtual user that sent it (`{{conn}}`, the log's `vu`).
    pub user: u64,
    /// Its bytes in HTTP/1.1 form when a workload rendered it (the log may
    /// keep its target); `None` for a fixed request.
    pub rendered: Option<&'a [u8]>,
}

impl WorkerLog {
    pub(crate) fn new(handle: WorkerLogHandle, measure_start: Instant) -> WorkerLog {
        WorkerLog {
            handle,
            measure_start,
            current: RefCell::new(Vec::with_capacity(BATCH_RECORDS)),
            seen: Cell::new(0),
            dropped: Cell::new(0),
        }
    }

    /// Logs one finished request (warm-up requests are not logged).
    #[inline]
    /// `rendered`: the request's bytes when it was rendered from a template
    /// (its target is kept only when the log asked for targets).
    pub(crate) fn record(
        &self,
        outcome: &Outcome,
        connect: Option<Duration>,
        user: u64,
        rendered: Option<&[u8]>,
    ) {
        if outcome.intended < self.measure_start {
            return;
        }
        let seen = self.seen.get();
        self.seen.set(seen + 1);
        if !seen.is_multiple_of(self.handle.sample_every) {
            return;
        }
        let full = {
            let mut batch = self.current.borrow_mut();
            batch.push(LoggedRequest {
                worker: self.handle.index as u32,
                outcome: *outcome,
                connect,
                user,
                request_target: rendered
                    .filter(|_| self.handle.request_targets)
                    .and_then(request_target),
            });
            batch.len() >= BATCH_RECORDS
        };
        if full {
            self.flush();
        }
    }

    /// Hands the current batch to the writer, or drops its records when the
    /// writer has not given an empty batch back yet.
    pub(crate) fn flush(&self) {
        let mut current = self.current.borrow_mut();
        if current.is_empty() {
            return;
        }
        let Ok(empty) = self.handle.free.try_recv() else {
            self.dropped.set(self.dropped.get() + current.len() as u64);
            current.clear();
            return;
        };
        let full = std::mem::replace(&mut *current, empty);
        match self.handle.to_writer.try_send((self.handle.index, full)) {
            Ok(()) => {}
            Err(TrySendError::Full((_, batch)) | TrySendError::Disconnected((_, batch))) => {
                self.dropped.set(self.dropped.get() + batch.len() as u64);
            }
        }
    }

    /// Flushes the rest and reports this worker's drops.
    pub(crate) fn finish(&self) {
        self.flush();
        self.handle
            .dropped
            .fetch_add(self.dropped.replace(0), Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    struct Collect(Arc<Mutex<Vec<LoggedRequest>>>, Option<Duration>);

    impl RequestSink for Collect {
        fn write(&mut self, request: &LoggedRequest, _: &RunClock) -> io::Result<()> {
            let mut seen = self.0.lock().unwrap();
            if let Some(pause) = self.1.filter(|_| seen.len().is_multiple_of(BATCH_RECORDS)) {
                // Slow once per batch: a disk that cannot keep up.
                std::thread::sleep(pause);
            }
            seen.push(request.clone());
            Ok(())
        }
        fn finish(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn outcome(at: Instant) -> Outcome {
        Outcome {
            intended: at,
            sent: at,
            first_byte: Some(at),
            done: at,
            result: Ok(200),
            bytes_received: 10,
            body_bytes: 5,
            target: 0,
            judged: None,
        }
    }

    fn start(
        sample_every: u64,
        slow: Option<Duration>,
    ) -> (RequestLog, Arc<Mutex<Vec<LoggedRequest>>>, Instant) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let now = Instant::now();
        let mut options = RequestLogOptions::new(Box::new(Collect(seen.clone(), slow)));
        options.sample_every = sample_every;
        options.buffer_per_worker = 2 * BATCH_RECORDS;
        let clock = RunClock {
            measure_start: now,
            measure_start_wall: SystemTime::now(),
        };
        (RequestLog::start(options, 1, clock).unwrap(), seen, now)
    }

    #[test]
    fn every_request_is_written_or_counted_and_sampling_keeps_every_nth() {
        let (mut log, seen, now) = start(3, None);
        let worker = WorkerLog::new(log.worker(0).unwrap(), now);
        for _ in 0..3000 {
            worker.record(&outcome(now), None, 0, None);
            worker.flush();
        }
        worker.record(&outcome(now - Duration::from_millis(1)), None, 0, None);
        worker.finish();
        drop(worker);
        let report = log.finish();
        assert!(report.error.is_none());
        let s = report.summary;
        assert_eq!(
            s.written + s.dropped,
            1000,
            "every third of 3000; warm-up skipped"
        );
        assert_eq!(seen.lock().unwrap().len() as u64, s.written);
    }

    #[test]
    fn a_slow_writer_makes_the_worker_drop_rather_than_wait() {
        let (mut log, _seen, now) = start(1, Some(Duration::from_millis(20)));
        let worker = WorkerLog::new(log.worker(0).unwrap(), now);
        let begun = Instant::now();
        for _ in 0..20 * BATCH_RECORDS {
            worker.record(&outcome(now), Some(Duration::from_micros(50)), 0, None);
        }
        let spent = begun.elapsed();
        worker.finish();
        drop(worker);
        let report = log.finish();
        assert!(report.summary.dropped > 0, "the writer could not keep up");
        assert_eq!(
            report.summary.written + report.summary.dropped,
            20 * BATCH_RECORDS as u64
        );
        assert!(
            spent < Duration::from_millis(200),
            "recording never waited: {spent:?}"
        );
    }
}
