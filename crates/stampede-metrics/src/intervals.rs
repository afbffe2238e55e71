//! Fixed-length intervals of a run (`--hlog-interval`): worker snapshots
//! grouped by the interval they began in, merged across workers, and handed
//! to an [`IntervalSink`] as soon as every worker has moved past it. Every
//! snapshot lands in exactly one interval, so the intervals summed are the
//! run's totals bucket for bucket. The workers do nothing new: this is
//! the aggregator's work on the snapshots it already receives, and it
//! takes them over once the aggregator is done with them: only the log's
//! series are kept ([`IntervalHistograms`]), an interval's first snapshot
//! moved in whole.

use crate::{IntervalHistograms, Snapshot};
use std::collections::VecDeque;
use std::time::{Duration, SystemTime};

/// Where complete intervals go (the interval log writer).
pub trait IntervalSink {
    /// Measurement began at `started_at`, the intervals' time zero.
    fn begin(&mut self, started_at: SystemTime);
    /// The interval from `start` (since measurement began) lasting
    /// `length`, merged across workers.
    fn interval(&mut self, start: Duration, length: Duration, merged: &IntervalHistograms);
}

/// Builds intervals from worker snapshots as they arrive.
#[derive(Debug)]
pub struct IntervalBuilder {
    length: Duration,
    /// The latest interval each worker has reported; `u64::MAX` once it finished.
    reported: Vec<u64>,
    first_pending: u64,
    /// From `first_pending` on; `None`: no snapshot yet.
    pending: VecDeque<Option<IntervalHistograms>>,
}

impl IntervalBuilder {
    /// Intervals of `length` (at least 1 ms) over `workers` workers.
    pub fn new(workers: usize, length: Duration) -> IntervalBuilder {
        IntervalBuilder {
            length: length.max(Duration::from_millis(1)),
            reported: vec![0; workers],
            first_pending: 0,
            pending: VecDeque::new(),
        }
    }

    /// The interval length.
    pub fn length(&self) -> Duration {
        self.length
    }

    fn index_of(&self, started: Duration) -> u64 {
        (started.as_nanos() / self.length.as_nanos()) as u64
    }

    /// Adds worker `worker`'s snapshot that began `started` after
    /// measurement began (`last`: the worker's final one), then hands
    /// `sink` every interval all workers have left behind.
    pub fn add(
        &mut self,
        worker: usize,
        started: Duration,
        snapshot: Snapshot,
        last: bool,
        sink: &mut dyn IntervalSink,
    ) {
        // A snapshot for an interval already handed over joins the oldest
        // open one: it is never lost, so the sum stays exact.
        let index = self.index_of(started).max(self.first_pending);
        while self.first_pending + (self.pending.len() as u64) <= index {
            self.pending.push_back(None);
        }
        match &mut self.pending[(index - self.first_pending) as usize] {
            Some(merged) => merged.merge(snapshot),
            empty => *empty = Some(IntervalHistograms::of(snapshot)),
        }
        if let Some(reported) = self.reported.get_mut(worker) {
            *reported = if last { u64::MAX } else { index.max(*reported) };
        }
        let complete_before = self.reported.iter().copied().min().unwrap_or(0);
        while self.first_pending < complete_before && self.pending.len() > 1 {
            self.hand_front(self.length, sink);
        }
    }

    fn hand_front(&mut self, length: Duration, sink: &mut dyn IntervalSink) {
        if let Some(merged) = self.pending.pop_front() {
            let start = self.length * self.first_pending as u32;
            // An interval no snapshot began in (a stalled worker) is
            // still written, empty: the log's time axis has no holes.
            sink.interval(start, length, &merged.unwrap_or_default());
        }
        self.first_pending += 1;
    }

    /// Hands over what is left; the run measured `elapsed`, which ends
    /// the last interval (every interval is at least a millisecond).
    pub fn finish(mut self, elapsed: Duration, sink: &mut dyn IntervalSink) {
        while !self.pending.is_empty() {
            let length = if self.pending.len() == 1 {
                let start = self.length * self.first_pending as u32;
                elapsed
                    .saturating_sub(start)
                    .clamp(Duration::from_millis(1), self.length.max(elapsed))
            } else {
                self.length
            };
            self.hand_front(length, sink);
        }
    }
}

/// The snapshot interval workers use so that each snapshot lies in one
/// interval of `length` and in one second: `length` itself when it is no
/// longer than `snapshot` (such a length divides a second), else the
/// greatest common divisor, in milliseconds, of `snapshot` and `length`
/// (both divide a second or are whole seconds, so the result still divides
/// a second). Not the divisor in the first case: 100 ms intervals with
/// 250 ms snapshots would make every worker snapshot every 50 ms, twice
/// what the log needs, each snapshot merged three times by the aggregator.
pub fn snapshot_interval_for(snapshot: Duration, length: Duration) -> Duration {
    fn gcd(a: u128, b: u128) -> u128 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    let fits_a_second = length.as_millis() > 0 && 1000 % length.as_millis() == 0;
    if length <= snapshot && fits_a_second {
        return length;
    }
    let ms = gcd(snapshot.as_millis(), length.as_millis()).max(1);
    Duration::from_millis(ms as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Kept(Vec<(Duration, Duration, u64)>);

    impl IntervalSink for Kept {
        fn begin(&mut self, _: SystemTime) {}
        fn interval(&mut self, start: Duration, length: Duration, merged: &IntervalHistograms) {
            self.0.push((start, length, merged.latency.len()));
        }
    }

    fn snapshot(n: u64) -> Snapshot {
        let mut s = Snapshot::default();
        s.latency.record_n(100, n).unwrap();
        s
    }

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn intervals_close_when_every_worker_moved_on_and_sum_to_the_whole() {
        let mut kept = Kept::default();
        let mut builder = IntervalBuilder::new(2, 100 * MS);
        builder.add(0, Duration::ZERO, snapshot(3), false, &mut kept);
        builder.add(0, 100 * MS, snapshot(4), false, &mut kept);
        assert!(kept.0.is_empty(), "worker 1 has not left interval 0");
        builder.add(1, Duration::ZERO, snapshot(5), false, &mut kept);
        builder.add(1, 100 * MS, snapshot(6), true, &mut kept);
        assert_eq!(kept.0, vec![(Duration::ZERO, 100 * MS, 8)]);
        builder.add(0, 200 * MS, snapshot(1), true, &mut kept);
        builder.finish(230 * MS, &mut kept);
        assert_eq!(
            kept.0,
            vec![
                (Duration::ZERO, 100 * MS, 8),
                (100 * MS, 100 * MS, 10),
                (200 * MS, 30 * MS, 1)
            ]
        );
    }

    #[test]
    fn a_late_snapshot_joins_the_oldest_open_interval() {
        let mut kept = Kept::default();
        let mut builder = IntervalBuilder::new(1, 100 * MS);
        builder.add(0, 300 * MS, snapshot(1), false, &mut kept);
        builder.add(0, Duration::ZERO, snapshot(2), false, &mut kept);
        builder.finish(350 * MS, &mut kept);
        assert_eq!(kept.0.iter().map(|k| k.2).sum::<u64>(), 3);
    }

    /// Every interval's histograms added up, tag by tag.
    #[derive(Default)]
    struct Summed {
        sum: Option<IntervalHistograms>,
        intervals: usize,
    }

    impl IntervalSink for Summed {
        fn begin(&mut self, _: SystemTime) {}
        fn interval(&mut self, _: Duration, _: Duration, merged: &IntervalHistograms) {
            self.intervals += 1;
            let copy = Snapshot {
                latency: merged.latency.clone(),
                service: merged.service.clone(),
                waiting: merged.ttfb.clone(),
                connect: merged.connect.clone(),
                tls: merged.tls.clone(),
                check_failures: merged.check_failures.clone(),
                ..Snapshot::default()
            };
            match &mut self.sum {
                Some(sum) => sum.merge(copy),
                None => self.sum = Some(IntervalHistograms::of(copy)),
            }
        }
    }

    fn buckets(h: &crate::LatencyHistogram) -> Vec<(u64, u64)> {
        h.iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect()
    }

    #[test]
    fn intervals_started_from_their_first_snapshot_sum_to_the_whole_bucket_for_bucket() {
        // Three workers, 25 ms snapshots into 100 ms intervals, values
        // spread over four decades so that snapshots grow to different
        // sizes; one worker runs late, so some of its snapshots arrive
        // after their interval was handed over, and one skips intervals.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut whole = Snapshot::default();
        let mut summed = Summed::default();
        let mut builder = IntervalBuilder::new(3, 100 * MS);
        for step in 0..40u32 {
            for worker in 0..3usize {
                let slot = match worker {
                    2 if step % 5 == 3 => continue,
                    2 => step.saturating_sub(6),
                    _ => step,
                };
                let mut s = Snapshot::default();
                for _ in 0..(next() % 30) {
                    s.latency.record(1 + next() % 2_000_000).unwrap();
                    s.service.record(1 + next() % 20_000).unwrap();
                    s.waiting.record(1 + next() % 200).unwrap();
                }
                if next() % 4 == 0 {
                    s.connect.record(1 + next() % 5_000).unwrap();
                    s.tls.record(1 + next() % 50_000).unwrap();
                }
                let checks = (next() % 3) as usize;
                s.check_failures = (0..checks)
                    .map(|_| {
                        let mut h = crate::new_latency_histogram();
                        h.record(1 + next() % 900_000).unwrap();
                        h
                    })
                    .collect();
                whole.merge(&s);
                let last = step == 39;
                builder.add(worker, slot * 25 * MS, s, last, &mut summed);
            }
        }
        builder.finish(1_000 * MS, &mut summed);
        assert_eq!(summed.intervals, 10);
        let sum = summed.sum.expect("intervals were written");
        assert!(whole.latency.len() > 500);
        assert_eq!(buckets(&sum.latency), buckets(&whole.latency));
        assert_eq!(buckets(&sum.service), buckets(&whole.service));
        assert_eq!(buckets(&sum.ttfb), buckets(&whole.waiting));
        assert_eq!(buckets(&sum.connect), buckets(&whole.connect));
        assert_eq!(buckets(&sum.tls), buckets(&whole.tls));
        assert_eq!(sum.check_failures.len(), whole.check_failures.len());
        for (mine, theirs) in sum.check_failures.iter().zip(&whole.check_failures) {
            assert_eq!(buckets(mine), buckets(theirs));
        }
    }

    #[test]
    fn snapshot_interval_divides_the_log_interval() {
        assert_eq!(snapshot_interval_for(250 * MS, 1000 * MS), 250 * MS);
        assert_eq!(snapshot_interval_for(250 * MS, 100 * MS), 100 * MS);
        assert_eq!(snapshot_interval_for(250 * MS, 200 * MS), 200 * MS);
        assert_eq!(snapshot_interval_for(250 * MS, 500 * MS), 250 * MS);
        assert_eq!(snapshot_interval_for(100 * MS, 2000 * MS), 100 * MS);
        assert_eq!(snapshot_interval_for(300 * MS, 400 * MS), 100 * MS);
        // A length that does not divide a second is never a snapshot's.
        assert_eq!(snapshot_interval_for(1000 * MS, 300 * MS), 100 * MS);
    }
}
