//! [`IntervalHistograms`]: the histograms of one `--hlog` interval, merged
//! across workers. Only the series the interval log writes are kept (a
//! snapshot's counters, send lateness, QUIC and the rest are left out),
//! and an interval starts as its first snapshot's histograms, moved
//! rather than added into empty ones: merging was most of the log's cost.

use crate::{new_latency_histogram, LatencyHistogram, Snapshot};

/// One interval's histograms, by the interval log's tags. All µs.
#[derive(Debug, Clone)]
pub struct IntervalHistograms {
    /// `latency`: from the intended send to the complete response.
    pub latency: LatencyHistogram,
    /// `service`: from the actual send to the complete response.
    pub service: LatencyHistogram,
    /// `ttfb`: from the actual send to the first response byte.
    pub ttfb: LatencyHistogram,
    /// `connect`: TCP connect of each new connection.
    pub connect: LatencyHistogram,
    /// `tls`: TLS handshake of each new TLS connection.
    pub tls: LatencyHistogram,
    /// `latency:TARGET_OR_STEP`: each target's latency, by its position
    /// in the mix (two significant digits, as the snapshot keeps them).
    pub per_target: Vec<LatencyHistogram>,
    /// `latency:check:…`: the latency of the responses that failed each
    /// check, by the check's position.
    pub check_failures: Vec<LatencyHistogram>,
}

impl Default for IntervalHistograms {
    fn default() -> Self {
        IntervalHistograms {
            latency: new_latency_histogram(),
            service: new_latency_histogram(),
            ttfb: new_latency_histogram(),
            connect: new_latency_histogram(),
            tls: new_latency_histogram(),
            per_target: Vec::new(),
            check_failures: Vec::new(),
        }
    }
}

impl IntervalHistograms {
    /// A snapshot's histograms of the log's tags, moved out of it.
    pub fn of(snapshot: Snapshot) -> IntervalHistograms {
        IntervalHistograms {
            latency: snapshot.latency,
            service: snapshot.service,
            ttfb: snapshot.waiting,
            connect: snapshot.connect,
            tls: snapshot.tls,
            per_target: snapshot.per_target.into_iter().map(|t| t.latency).collect(),
            check_failures: snapshot.check_failures,
        }
    }

    /// Adds a snapshot's histograms of the log's tags (lossless).
    pub fn merge(&mut self, snapshot: Snapshot) {
        add(&mut self.latency, snapshot.latency);
        add(&mut self.service, snapshot.service);
        add(&mut self.ttfb, snapshot.waiting);
        add(&mut self.connect, snapshot.connect);
        add(&mut self.tls, snapshot.tls);
        let targets = snapshot.per_target.into_iter().map(|t| t.latency);
        add_all(
            &mut self.per_target,
            targets,
            crate::per_target::target_histogram,
        );
        add_all(
            &mut self.check_failures,
            snapshot.check_failures,
            new_latency_histogram,
        );
    }
}

/// `theirs` added into `mine`; an empty `mine` takes `theirs` whole (the
/// same counts, without walking them).
fn add(mine: &mut LatencyHistogram, theirs: LatencyHistogram) {
    if theirs.is_empty() {
        return;
    }
    if mine.is_empty() {
        *mine = theirs;
        return;
    }
    // Every histogram here starts at 1 µs and grows to what it holds:
    // adding only grows it, so it cannot fail.
    mine.add(&theirs)
        .expect("growing histograms of the same lowest value add without fail");
}

/// Each of `theirs` added into `mine` by position; `mine` grows with
/// `empty` histograms to as many as `theirs` has.
fn add_all(
    mine: &mut Vec<LatencyHistogram>,
    theirs: impl IntoIterator<Item = LatencyHistogram>,
    empty: fn() -> LatencyHistogram,
) {
    for (index, theirs) in theirs.into_iter().enumerate() {
        if index == mine.len() {
            mine.push(empty());
        }
        add(&mut mine[index], theirs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every bucket with a count: (its highest value, the count).
    fn buckets(h: &LatencyHistogram) -> Vec<(u64, u64)> {
        h.iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect()
    }

    fn snapshot(seed: u64, targets: usize, checks: usize) -> Snapshot {
        let mut s = Snapshot::default();
        let value = |i: u64| 1 + (seed * 7919 + i * 104_729) % 50_000;
        for i in 0..20 {
            s.latency.record(value(i)).unwrap();
            s.service.record(value(i) / 2 + 1).unwrap();
            s.waiting.record(value(i) / 3 + 1).unwrap();
        }
        s.connect.record(value(99)).unwrap();
        s.lateness.record(5).unwrap();
        s.per_target = (0..targets)
            .map(|t| {
                let mut stats = crate::TargetStats::default();
                stats.latency.record(value(t as u64) * 3).unwrap();
                stats
            })
            .collect();
        s.check_failures = (0..checks)
            .map(|c| {
                let mut h = new_latency_histogram();
                h.record(value(c as u64 + 50)).unwrap();
                h
            })
            .collect();
        s
    }

    #[test]
    fn moved_or_added_the_tags_equal_a_whole_snapshot_merge() {
        let parts = [
            snapshot(1, 2, 0),
            snapshot(2, 3, 1),
            Snapshot::default(),
            snapshot(3, 1, 2),
        ];
        let mut whole = Snapshot::default();
        for part in &parts {
            whole.merge(part);
        }
        let mut parts = parts.into_iter();
        let mut interval = IntervalHistograms::of(parts.next().unwrap());
        for part in parts {
            interval.merge(part);
        }
        assert_eq!(buckets(&interval.latency), buckets(&whole.latency));
        assert_eq!(buckets(&interval.service), buckets(&whole.service));
        assert_eq!(buckets(&interval.ttfb), buckets(&whole.waiting));
        assert_eq!(buckets(&interval.connect), buckets(&whole.connect));
        assert!(interval.tls.is_empty());
        let targets: Vec<_> = whole
            .per_target
            .iter()
            .map(|t| buckets(&t.latency))
            .collect();
        assert_eq!(
            interval.per_target.iter().map(buckets).collect::<Vec<_>>(),
            targets
        );
        let checks: Vec<_> = whole.check_failures.iter().map(buckets).collect();
        assert_eq!(
            interval
                .check_failures
                .iter()
                .map(buckets)
                .collect::<Vec<_>>(),
            checks
        );
        assert_eq!(interval.latency.len(), 60);
        assert_eq!(
            (interval.per_target.len(), interval.check_failures.len()),
            (3, 2)
        );
    }
}
