//! The per-second time series: worker snapshots grouped by the second of the
//! run they were taken in, merged across workers, and reduced to one
//! [`SecondPoint`] as soon as every worker has moved past that second (so
//! memory stays bounded however long the run is).

use crate::{ErrorKind, Gauges, LatencyHistogram, Snapshot};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};

/// One second of a run, merged across workers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SecondPoint {
    /// Seconds since the start of measurement (this point covers [second, second + 1)).
    pub second: u64,
    /// Length of the interval covered: 1 except for a final partial second.
    pub duration_s: f64,
    /// Responses completed in this second.
    pub completed: u64,
    /// Responses with a status below 400 that passed every check, in this second.
    pub success: u64,
    /// Non-zero error classes in this second.
    pub errors: BTreeMap<String, u64>,
    /// Bytes read from the target in this second.
    pub bytes_received: u64,
    /// Completed responses per second in this interval.
    pub rps: f64,
    /// Requests in flight at the end of the second, all workers.
    pub in_flight: u64,
    /// Connections open at the end of the second, all workers.
    pub open_connections: u64,
    /// Median latency of this second, µs.
    pub p50_us: u64,
    /// 90th percentile latency of this second, µs.
    pub p90_us: u64,
    /// 99th percentile latency of this second, µs.
    pub p99_us: u64,
    /// Highest latency of this second, µs.
    pub max_us: u64,
    /// The load model's target at the middle of the second: connections
    /// (closed model) or requests per second (open model).
    pub target: f64,
    /// This second's histograms by the interval log's tag (`latency`
    /// always, `service`, `ttfb`, `connect`, `tls` when they recorded),
    /// encoded as `histogram` is: what makes a merge exact per second.
    /// Empty in results written before they were kept.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub histograms: BTreeMap<String, String>,
    /// A WebSocket run: data messages written and read in this second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub websocket: Option<SecondMessages>,
    /// A run watching streams (`--sse`): the events of the streams that
    /// ended in this second (a stream's events are booked at its end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_events: Option<u64>,
}

/// WebSocket data messages of one second, each way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecondMessages {
    /// Written in this second.
    pub sent: u64,
    /// Read in this second.
    pub received: u64,
}

impl SecondMessages {
    /// Two inputs' messages of the same second, added (a merge of agents).
    pub fn sum(a: Option<SecondMessages>, b: Option<SecondMessages>) -> Option<SecondMessages> {
        match (a, b) {
            (None, None) => None,
            (a, b) => {
                let (a, b) = (a.unwrap_or_default(), b.unwrap_or_default());
                Some(SecondMessages {
                    sent: a.sent + b.sent,
                    received: a.received + b.received,
                })
            }
        }
    }
}

/// A second still receiving snapshots.
#[derive(Debug)]
struct PendingSecond {
    merged: Snapshot,
    /// Each worker's last gauges in this second, if it reported in it.
    gauges: Vec<Option<Gauges>>,
}

/// Builds the series from worker snapshots as they arrive.
#[derive(Debug)]
pub struct TimeseriesBuilder {
    /// The latest second each worker has reported.
    reported: Vec<u64>,
    first_pending: u64,
    pending: VecDeque<PendingSecond>,
    done: Vec<SecondPoint>,
    /// Each worker's latest gauges: a worker that sent nothing in a second
    /// (it ended just before the boundary) still has connections open.
    last_gauges: Vec<Gauges>,
}

impl TimeseriesBuilder {
    /// A builder for `workers` workers, each reporting its own snapshots.
    pub fn new(workers: usize) -> TimeseriesBuilder {
        TimeseriesBuilder {
            reported: vec![0; workers],
            first_pending: 0,
            pending: VecDeque::new(),
            done: Vec::new(),
            last_gauges: vec![Gauges::default(); workers],
        }
    }

    /// Adds a worker's snapshot taken during `second`, then reduces every
    /// second that all workers have left behind.
    pub fn add(
        &mut self,
        worker: usize,
        second: u64,
        snapshot: &Snapshot,
        target_at: &dyn Fn(f64) -> f64,
    ) {
        let second = second.max(self.first_pending);
        let workers = self.reported.len();
        while self.first_pending + (self.pending.len() as u64) <= second {
            self.pending.push_back(PendingSecond {
                merged: Snapshot::default(),
                gauges: vec![None; workers],
            });
        }
        let slot = &mut self.pending[(second - self.first_pending) as usize];
        slot.merged.merge(snapshot);
        slot.gauges[worker] = Some(snapshot.gauges);
        self.reported[worker] = self.reported[worker].max(second);
        let complete_before = self.reported.iter().copied().min().unwrap_or(0);
        while self.first_pending < complete_before {
            self.reduce_front(1.0, target_at);
        }
    }

    /// The seconds reduced so far (every worker has left them behind), for
    /// a live view of the series while the run goes on.
    pub fn done(&self) -> &[SecondPoint] {
        &self.done
    }

    /// Reduces what is left; the last second covers `last_second_s` (≤ 1).
    pub fn finish(
        mut self,
        last_second_s: f64,
        target_at: &dyn Fn(f64) -> f64,
    ) -> Vec<SecondPoint> {
        while !self.pending.is_empty() {
            let length = if self.pending.len() == 1 {
                last_second_s
            } else {
                1.0
            };
            self.reduce_front(length, target_at);
        }
        self.done
    }

    fn reduce_front(&mut self, duration_s: f64, target_at: &dyn Fn(f64) -> f64) {
        let Some(second) = self.pending.pop_front() else {
            return;
        };
        let index = self.first_pending;
        self.first_pending += 1;
        for (last, seen) in self.last_gauges.iter_mut().zip(&second.gauges) {
            if let Some(gauges) = seen {
                *last = *gauges;
            }
        }
        if duration_s <= 0.0 {
            return;
        }
        let c = &second.merged.counters;
        let q = |h: &LatencyHistogram, quantile: f64| {
            if h.is_empty() {
                0
            } else {
                h.value_at_quantile(quantile)
            }
        };
        let latency = &second.merged.latency;
        self.done.push(SecondPoint {
            second: index,
            duration_s,
            completed: c.completed(),
            success: c.success,
            errors: ErrorKind::ALL
                .into_iter()
                .filter(|k| c.error(*k) > 0)
                .map(|k| (k.as_str().to_string(), c.error(k)))
                .collect(),
            bytes_received: c.bytes_received,
            rps: c.completed() as f64 / duration_s,
            in_flight: self.last_gauges.iter().map(|g| g.in_flight).sum(),
            open_connections: self.last_gauges.iter().map(|g| g.open_connections).sum(),
            p50_us: q(latency, 0.5),
            p90_us: q(latency, 0.9),
            p99_us: q(latency, 0.99),
            max_us: if latency.is_empty() { 0 } else { latency.max() },
            // The middle of the second itself: a last second that took in
            // a stop just after its end (up to 1.05 s) is still that second.
            target: target_at(index as f64 + duration_s.min(1.0) / 2.0),
            histograms: crate::second_histograms::encode_second(&second.merged),
            websocket: (second.merged.websocket.as_deref()).map(|ws| SecondMessages {
                sent: ws.messages_sent,
                received: ws.messages_received,
            }),
            stream_events: second.merged.stream.as_deref().map(|s| s.events),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(completed: u64, latency_us: u64, open: u64) -> Snapshot {
        let mut s = Snapshot::default();
        s.counters.success = completed;
        s.latency.record_n(latency_us, completed).unwrap();
        s.gauges.open_connections = open;
        s
    }

    #[test]
    fn merges_workers_per_second_and_reduces_when_all_moved_on() {
        let target = |t: f64| t * 10.0;
        let mut builder = TimeseriesBuilder::new(2);
        builder.add(0, 0, &snapshot(100, 1000, 5), &target);
        builder.add(0, 0, &snapshot(100, 1000, 6), &target);
        builder.add(1, 0, &snapshot(50, 3000, 4), &target);
        builder.add(0, 1, &snapshot(10, 1000, 7), &target);
        assert!(
            builder.done.is_empty(),
            "worker 1 has not left second 0 yet"
        );
        builder.add(1, 1, &snapshot(10, 1000, 3), &target);
        assert_eq!(builder.done.len(), 1);
        let first = &builder.done[0];
        assert_eq!(first.completed, 250);
        assert_eq!(
            first.open_connections, 10,
            "last gauge of each worker, summed"
        );
        assert_eq!(first.target, 5.0);
        assert_eq!(first.max_us, 3001);
        let series = builder.finish(0.5, &target);
        assert_eq!(series.len(), 2);
        assert_eq!(series[1].rps, 40.0, "a half second of 20 responses");
    }

    #[test]
    fn late_snapshots_for_reduced_seconds_go_to_the_oldest_open_second() {
        let target = |_: f64| 0.0;
        let mut builder = TimeseriesBuilder::new(1);
        builder.add(0, 2, &snapshot(1, 10, 0), &target);
        builder.add(0, 0, &snapshot(1, 10, 0), &target);
        let series = builder.finish(1.0, &target);
        assert_eq!(series.iter().map(|p| p.completed).sum::<u64>(), 2);
        assert_eq!(series.len(), 3);
    }
}
