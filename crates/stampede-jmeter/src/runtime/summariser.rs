//! JMeter's Summariser during the run: every `summariser.interval` seconds
//! (30 by default, as in jmeter.properties; `-Jsummariser.interval=5`) a
//! `summary +` line for the interval and a `summary =` line for the test so
//! far, over every thread group's run. Fed the snapshots the engine's
//! workers hand over (nothing is added per request).

use crate::jtl::{summary_line, Totals};
use stampede_engine::Observer;
use stampede_metrics::Snapshot;
use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Samples, errors and latency of an interval or of the test so far.
#[derive(Debug, Clone, Copy)]
struct Tally {
    samples: u64,
    errors: u64,
    latency_sum_us: f64,
    min_us: u64,
    max_us: u64,
}

impl Default for Tally {
    fn default() -> Self {
        Tally {
            samples: 0,
            errors: 0,
            latency_sum_us: 0.0,
            min_us: u64::MAX,
            max_us: 0,
        }
    }
}

impl Tally {
    fn add(&mut self, snapshot: &Snapshot) {
        let c = &snapshot.counters;
        let errors = c.failed_status + c.check_failed + c.error_total();
        self.samples += c.completed() + c.error_total();
        self.errors += errors;
        let latency = &snapshot.latency;
        if !latency.is_empty() {
            self.latency_sum_us += latency.mean() * latency.len() as f64;
            self.min_us = self.min_us.min(latency.min());
            self.max_us = self.max_us.max(latency.max());
        }
    }

    fn merge(&mut self, other: &Tally) {
        self.samples += other.samples;
        self.errors += other.errors;
        self.latency_sum_us += other.latency_sum_us;
        self.min_us = self.min_us.min(other.min_us);
        self.max_us = self.max_us.max(other.max_us);
    }

    fn totals(&self, elapsed: Duration) -> Totals {
        Totals {
            samples: self.samples,
            elapsed_ms: elapsed.as_millis() as u64,
            mean_ms: if self.samples == 0 {
                0.0
            } else {
                self.latency_sum_us / self.samples as f64 / 1000.0
            },
            min_ms: if self.min_us == u64::MAX {
                0
            } else {
                self.min_us / 1000
            },
            max_ms: self.max_us.div_ceil(1000),
            errors: self.errors,
        }
    }
}

struct State {
    interval: Tally,
    total: Tally,
    interval_start: Instant,
}

/// Shared by the groups' observers.
pub struct Summariser {
    every: Duration,
    started: Instant,
    state: Mutex<State>,
}

impl Summariser {
    /// A summariser that prints every `every` (`summariser.interval`),
    /// counting from now.
    pub fn new(every: Duration) -> Summariser {
        let now = Instant::now();
        Summariser {
            every,
            started: now,
            state: Mutex::new(State {
                interval: Tally::default(),
                total: Tally::default(),
                interval_start: now,
            }),
        }
    }

    fn add(&self, snapshot: &Snapshot) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.interval.add(snapshot);
        let now = Instant::now();
        let spent = now.duration_since(state.interval_start);
        if spent < self.every {
            return;
        }
        let interval = state.interval;
        state.total.merge(&interval);
        let plus = summary_line(&interval.totals(spent)).replacen("summary =", "summary +", 1);
        let equal = summary_line(&state.total.totals(now.duration_since(self.started)));
        state.interval = Tally::default();
        state.interval_start = now;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{plus}\n{equal}");
        let _ = out.flush();
    }

    /// The `summary +` line of the last, shorter interval (the caller
    /// prints the final `summary =` from the results).
    pub fn finish(&self) -> Option<String> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let spent = state.interval_start.elapsed();
        (state.interval.samples > 0 && state.total.samples > 0).then(|| {
            summary_line(&state.interval.totals(spent)).replacen("summary =", "summary +", 1)
        })
    }
}

/// One group's observer (the view's watcher slot holds `'static` observers).
pub struct GroupObserver(pub Arc<Summariser>);

impl Observer for GroupObserver {
    fn on_snapshot(&mut self, _elapsed: Duration, interval: &Snapshot, _total: &Snapshot) {
        self.0.add(interval);
    }
}

/// `summariser.interval` in seconds (JMeter's default: 30).
pub fn interval(props: &std::collections::HashMap<String, String>) -> Duration {
    props
        .get("summariser.interval")
        .and_then(|s| s.trim().parse::<u64>().ok())
        .filter(|s| *s > 0)
        .map_or(Duration::from_secs(30), Duration::from_secs)
}
