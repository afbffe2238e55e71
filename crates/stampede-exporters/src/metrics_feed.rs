//! What `--metrics` serves, taken from the snapshot stream the live view
//! reads (no second data path, nothing per request): [`Feed`] wraps the
//! run's observer, and at most every `PUBLISH_EVERY` on the aggregator
//! thread turns the merged totals into a small [`Reading`] (counts, gauges,
//! latency buckets and quantiles) on the [`Board`] the endpoint serves.
//! After the run [`publish_final`] puts the finished totals there, the
//! same ones the result file is built from. With `--web` it also hands
//! each snapshot to the live page's series (web_state.rs).

use crate::metrics_outcomes::{mix_labels, outcome_counts, MixLabel, OutcomeCounts};
use stampede_engine::{Observer, WorkloadSpec};
use stampede_metrics::{LatencyHistogram, Recording, Snapshot};
use stampede_plan::{LoadModel, Plan};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often a new reading is made (Prometheus scrapes every few seconds).
const PUBLISH_EVERY: Duration = Duration::from_millis(250);

/// Classic latency buckets, in seconds: 0.5 ms to 10 s.
pub const LATENCY_BUCKETS_S: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// The latency quantiles served as gauges.
pub const QUANTILES: [(f64, &str); 4] =
    [(0.5, "0.5"), (0.9, "0.9"), (0.99, "0.99"), (0.999, "0.999")];

/// The latest reading, shared between the aggregator and the endpoint.
pub type Board = Arc<Mutex<Option<Reading>>>;

/// Everything one scrape shows.
#[derive(Debug, Clone, Default)]
pub struct Reading {
    /// `(outcome, code, count)`: outcome `success` or `failed_status` with
    /// the status code, or `error` with the error class.
    pub requests: OutcomeCounts,
    /// A mix (`--targets`, a scenario's steps): each target's names and its
    /// counts as in `requests`, which they add up to; empty otherwise.
    pub per_target: Vec<(MixLabel, OutcomeCounts)>,
    /// Bytes read from the target so far (`stampede_bytes_received`).
    pub bytes_received: u64,
    /// Open model: requests sent over 1 ms late so far (`stampede_late_sends`).
    pub late_sends: u64,
    /// TCP connections established so far (`stampede_connections_opened`).
    pub connections_opened: u64,
    /// Connections open now, over all workers (`stampede_connections_open`).
    pub open_connections: u64,
    /// Requests sent and not yet answered now (`stampede_in_flight`).
    pub in_flight: u64,
    /// Open model: the schedule's rate now.
    pub target_rate: Option<f64>,
    /// Completed responses per second since the previous reading.
    pub rate: f64,
    /// Open model: p99 of how late every send was so far, in seconds.
    pub send_lateness_p99_s: Option<f64>,
    /// Per-bucket (not cumulative) counts at [`LATENCY_BUCKETS_S`], then +Inf.
    pub latency_buckets: Vec<(f64, u64)>,
    /// The sum of every latency so far, in seconds (the histogram's `_sum`).
    pub latency_sum_s: f64,
    /// How many latencies so far (the histogram's `_count`).
    pub latency_count: u64,
    /// Seconds at each of [`QUANTILES`]; empty before the first response.
    pub latency_quantiles_s: Vec<f64>,
    /// A WebSocket run's messages, bytes and timings so far.
    pub websocket: Option<crate::metrics_protocols::WebSocketReading>,
    /// Streams' events and timings so far (`--sse`).
    pub stream: Option<crate::metrics_protocols::StreamReading>,
}

impl Reading {
    fn of(
        total: &Snapshot,
        mix: &[MixLabel],
        gauges: (u64, u64),
        target_rate: Option<f64>,
        rate: f64,
    ) -> Reading {
        let c = &total.counters;
        let requests = outcome_counts(c);
        let per_target = mix
            .iter()
            .zip(&total.per_target)
            .map(|(label, stats)| (label.clone(), outcome_counts(&stats.counters)))
            .collect();
        let lateness = (target_rate.is_some() && !total.lateness.is_empty())
            .then(|| total.lateness.value_at_quantile(0.99) as f64 / 1e6);
        let latency = &total.latency;
        Reading {
            requests,
            per_target,
            bytes_received: c.bytes_received,
            late_sends: c.late_sends,
            connections_opened: c.connections_opened,
            open_connections: gauges.0,
            in_flight: gauges.1,
            target_rate,
            rate,
            send_lateness_p99_s: lateness,
            latency_buckets: buckets(latency),
            latency_sum_s: latency.mean() * latency.len() as f64 / 1e6,
            latency_count: latency.len(),
            latency_quantiles_s: if latency.is_empty() {
                Vec::new()
            } else {
                QUANTILES
                    .iter()
                    .map(|(q, _)| latency.value_at_quantile(*q) as f64 / 1e6)
                    .collect()
            },
            websocket: (total.websocket.as_deref())
                .map(crate::metrics_protocols::WebSocketReading::of),
            stream: (total.stream.as_deref()).map(crate::metrics_protocols::StreamReading::of),
        }
    }
}

/// Per-bucket counts of an HDR histogram (µs) at the classic bounds: each
/// recorded value goes to the first bound at or above its HDR bucket's
/// highest equivalent value, so a count is exact up to the HDR resolution.
fn buckets(histogram: &LatencyHistogram) -> Vec<(f64, u64)> {
    let mut counts: Vec<(f64, u64)> = LATENCY_BUCKETS_S
        .iter()
        .map(|bound| (*bound, 0))
        .chain(std::iter::once((f64::INFINITY, 0)))
        .collect();
    for value in histogram.iter_recorded() {
        let seconds = histogram.highest_equivalent(value.value_iterated_to()) as f64 / 1e6;
        let slot = LATENCY_BUCKETS_S
            .iter()
            .position(|bound| seconds <= *bound)
            .unwrap_or(LATENCY_BUCKETS_S.len());
        counts[slot].1 += value.count_at_value();
    }
    counts
}

/// Passes every snapshot on, publishes a reading now and then and keeps
/// `--web`'s live series.
pub struct Feed<'a, O: ?Sized> {
    inner: &'a mut O,
    board: Option<Board>,
    live: Option<crate::web_state::LiveSeries>,
    model: LoadModel,
    /// The mix's requests as labels (empty without a mix).
    mix: Vec<MixLabel>,
    /// Each worker's (open connections, in flight) from its latest interval.
    workers: Vec<(u64, u64)>,
    /// When the last reading was made and how many had completed then.
    published: Option<(Duration, u64)>,
}

impl<'a, O: Observer + ?Sized> Feed<'a, O> {
    /// Without a board (no `--metrics`) and no live board (no `--web`) it
    /// only passes snapshots on; `workload` names a scenario's steps.
    pub fn new(
        inner: &'a mut O,
        board: Option<Board>,
        live: Option<crate::web_state::LiveBoard>,
        plan: &Plan,
        workload: Option<&WorkloadSpec>,
    ) -> Self {
        Feed {
            inner,
            board,
            live: live.map(|board| crate::web_state::LiveSeries::new(board, plan, workload)),
            model: plan.model.clone(),
            mix: mix_labels(plan, workload),
            workers: Vec::new(),
            published: None,
        }
    }

    fn gauges(&self) -> (u64, u64) {
        self.workers
            .iter()
            .fold((0, 0), |(open, busy), (o, b)| (open + o, busy + b))
    }
}

impl<O: Observer + ?Sized> Observer for Feed<'_, O> {
    fn on_snapshot(&mut self, elapsed: Duration, interval: &Snapshot, total: &Snapshot) {
        self.inner.on_snapshot(elapsed, interval, total);
        if let Some(live) = &mut self.live {
            live.snapshot(elapsed, interval, total);
        }
        let Some(board) = &self.board else { return };
        let completed = total.counters.completed();
        let rate = match self.published {
            Some((at, _)) if elapsed < at + PUBLISH_EVERY => return,
            Some((at, before)) => {
                stampede_metrics::per_second(completed.saturating_sub(before), elapsed - at)
            }
            None => stampede_metrics::per_second(completed, elapsed),
        };
        let reading = Reading::of(
            total,
            &self.mix,
            self.gauges(),
            target_rate(&self.model, elapsed),
            rate,
        );
        *board
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(reading);
        self.published = Some((elapsed, completed));
    }

    fn on_worker_interval(&mut self, worker: usize, interval: &Snapshot, last: bool) {
        self.inner.on_worker_interval(worker, interval, last);
        if let Some(live) = &mut self.live {
            live.worker(worker);
        }
        if self.board.is_some() {
            if self.workers.len() <= worker {
                self.workers.resize(worker + 1, (0, 0));
            }
            let gauges = &interval.gauges;
            self.workers[worker] = (gauges.open_connections, gauges.in_flight);
        }
    }
}

fn target_rate(model: &LoadModel, elapsed: Duration) -> Option<f64> {
    match model {
        LoadModel::Rate { per_s, .. } => Some(per_s.target_at(elapsed)),
        LoadModel::Closed { .. } => None,
    }
}

/// Puts the finished run's totals on the board: what the result file says.
/// The gauges fall to zero (nothing is open any more) and the rate is the
/// run's average.
pub fn publish_final(
    board: Option<&Board>,
    plan: &Plan,
    workload: Option<&WorkloadSpec>,
    recording: &Recording,
) {
    if let Some(board) = board {
        let mix = mix_labels(plan, workload);
        let reading = Reading::of(&recording.total, &mix, (0, 0), None, recording.rps());
        *board
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(reading);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stampede_engine::NoObserver;

    #[test]
    fn buckets_count_each_value_once_at_its_bound() {
        let mut histogram = stampede_metrics::new_latency_histogram();
        for micros in [300, 900, 1_000, 40_000, 20_000_000] {
            stampede_metrics::record_latency(&mut histogram, micros);
        }
        let counts = buckets(&histogram);
        let at = |bound: f64| counts.iter().find(|(b, _)| *b == bound).map(|(_, n)| *n);
        assert_eq!(at(0.0005), Some(1));
        assert_eq!(at(0.001), Some(2));
        assert_eq!(at(0.05), Some(1));
        assert_eq!(at(f64::INFINITY), Some(1));
        assert_eq!(counts.iter().map(|(_, n)| n).sum::<u64>(), 5);
    }

    #[test]
    fn the_feed_sums_worker_gauges_and_passes_everything_on() {
        let target = stampede_plan::Target::parse("http://127.0.0.1:3000/").unwrap();
        let plan = stampede_plan::Plan {
            threads: 2,
            ..stampede_plan::Plan::minimal(target)
        };
        let board = Board::default();
        let mut inner = NoObserver;
        let mut feed = Feed::new(&mut inner, Some(board.clone()), None, &plan, None);
        let mut interval = Snapshot::default();
        interval.gauges.open_connections = 3;
        interval.gauges.in_flight = 2;
        feed.on_worker_interval(0, &interval, false);
        feed.on_worker_interval(1, &interval, false);
        let mut total = Snapshot::default();
        total.counters.success = 10;
        total.counters.status.add(200, 10);
        feed.on_snapshot(Duration::from_secs(1), &interval, &total);
        let reading = board.lock().unwrap().clone().unwrap();
        assert_eq!((reading.open_connections, reading.in_flight), (6, 4));
        assert_eq!(reading.requests, vec![("success", "200".to_string(), 10)]);
        assert!((reading.rate - 10.0).abs() < 1e-9);
    }
}
