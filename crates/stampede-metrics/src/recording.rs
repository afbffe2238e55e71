//! [`Snapshot`] (what a worker hands over) and [`Recording`] (the merged run).

use crate::{new_latency_histogram, Counters, LatencyHistogram};
use std::time::{Duration, SystemTime};

/// Counts and latencies of one worker over one interval, or merged totals.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub counters: Counters,
    pub latency: LatencyHistogram,
}

impl Default for Snapshot {
    fn default() -> Self {
        Snapshot {
            counters: Counters::default(),
            latency: new_latency_histogram(),
        }
    }
}

impl Snapshot {
    /// Adds another snapshot in: counts summed, histograms added (lossless).
    pub fn merge(&mut self, other: &Snapshot) {
        self.counters.merge(&other.counters);
        self.latency
            .add(&other.latency)
            .expect("histograms share fixed bounds, so adding cannot fail");
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
    pub total: Snapshot,
}

impl Recording {
    /// Completed responses per second.
    pub fn rps(&self) -> f64 {
        per_second(self.total.counters.completed(), self.elapsed)
    }

    /// Successful responses per second.
    pub fn goodput(&self) -> f64 {
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
