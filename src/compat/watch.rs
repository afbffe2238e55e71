//! What the compat front-ends print or collect *during* a run, from the same
//! snapshot stream as every view (nothing per request): ab's "Completed N
//! requests" heartbeat on stderr, press's "create N connections successfully"
//! line once that many connections are open, and wrk's Req/Sec samples (each
//! thread's rate in each of its 100 ms windows, as wrk's `record_rate`).
//!
//! Deliberately not here: the tools' reports (their own files) and the
//! stampede views (src/view/).

use stampede_engine::Observer;
use stampede_metrics::Snapshot;
use std::io::Write;
use std::time::Duration;

/// What a front-end asks to be watched.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct WatchSpec {
    /// ab: a "Completed N requests" line on stderr at every multiple of this.
    pub heartbeat: Option<u64>,
    /// press: these lines on stdout as soon as this many connections are open.
    pub on_connected: Option<(u64, Vec<String>)>,
    /// wrk: collect each worker's requests per second in windows this long.
    pub rate_window: Option<Duration>,
}

/// The watcher of one run.
#[derive(Debug, Default)]
pub struct Watch {
    spec: WatchSpec,
    /// Requests finished so far (responses and errors, as ab's `done`).
    done: u64,
    /// Heartbeats already printed.
    beats: u64,
    /// Connections opened so far.
    opened: u64,
    /// Set once the press line went out.
    connected: bool,
    /// wrk: requests per second of every worker's full window that had any.
    pub rates: Vec<f64>,
}

impl Watch {
    pub fn new(spec: WatchSpec) -> Watch {
        Watch {
            spec,
            ..Watch::default()
        }
    }

    /// The press lines, if the run ended before they were printed (fewer
    /// connections than asked could be opened): printed once, now.
    pub fn pending_lines(&mut self) -> Vec<String> {
        match &self.spec.on_connected {
            Some((_, lines)) if !self.connected => {
                self.connected = true;
                lines.clone()
            }
            _ => Vec::new(),
        }
    }

    /// The window wrk's samples need the workers to report in.
    pub fn rate_window(&self) -> Option<Duration> {
        self.spec.rate_window
    }

    /// wrk's Req/Sec samples for `done()`'s `requests` (and the report):
    /// the full windows' rates, or, for a run shorter than one window
    /// (none full), one sample per thread, the run's rate split over the
    /// threads, as the printed Req/Sec falls back to. None at all when
    /// nothing completed (wrk records no sample without a response).
    pub fn samples(&self, result: &stampede_metrics::RunResult) -> Vec<f64> {
        if !self.rates.is_empty() || result.rps <= 0.0 {
            return self.rates.clone();
        }
        let threads = result.plan.threads.max(1);
        vec![result.rps / threads as f64; threads]
    }

    /// Connections opened during the run, as the snapshots told.
    pub fn opened(&self) -> u64 {
        self.opened
    }
}

impl Observer for Watch {
    fn on_snapshot(&mut self, _elapsed: Duration, _interval: &Snapshot, total: &Snapshot) {
        let c = &total.counters;
        self.done = c.completed() + c.error_total();
        self.opened = c.connections_opened;
        if let Some(every) = self.spec.heartbeat.filter(|n| *n > 0) {
            let beats = self.done / every;
            if beats > self.beats {
                let mut err = std::io::stderr().lock();
                // ab prints each multiple it passes; a snapshot may pass several.
                for beat in self.beats + 1..=beats {
                    let _ = writeln!(err, "Completed {} requests", beat * every);
                }
                let _ = err.flush();
                self.beats = beats;
            }
        }
        if let Some((wanted, _)) = &self.spec.on_connected {
            if !self.connected && self.opened >= *wanted {
                let lines = self.pending_lines();
                let mut out = std::io::stdout().lock();
                for line in lines {
                    let _ = writeln!(out, "{line}");
                }
                let _ = out.flush();
            }
        }
    }

    fn on_worker_interval(&mut self, _worker: usize, interval: &Snapshot, last: bool) {
        // A worker's last interval is cut short by the stop; wrk records no
        // sample for it either, nor for a window without a response.
        let Some(window) = self.spec.rate_window else {
            return;
        };
        let completed = interval.counters.completed();
        if !last && completed > 0 {
            self.rates.push(completed as f64 / window.as_secs_f64());
        }
    }
}

/// ab's heartbeat: every 10% of the requests, but never more often than
/// every 100, and only when more than 150 are asked and `-q` is not given
/// (ab.c's `heartbeatres`).
pub fn ab_heartbeat(requests: u64, quiet: bool) -> Option<u64> {
    (!quiet && requests > 150).then(|| (requests / 10).max(100))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ab_heartbeat_follows_ab() {
        assert_eq!(ab_heartbeat(150, false), None);
        assert_eq!(ab_heartbeat(151, false), Some(100));
        assert_eq!(ab_heartbeat(1000, false), Some(100));
        assert_eq!(ab_heartbeat(50_000, false), Some(5_000));
        assert_eq!(ab_heartbeat(50_000, true), None);
    }

    #[test]
    fn rates_skip_last_and_empty_windows() {
        let mut watch = Watch::new(WatchSpec {
            rate_window: Some(Duration::from_millis(100)),
            ..WatchSpec::default()
        });
        let mut s = Snapshot::default();
        s.counters.success = 50;
        watch.on_worker_interval(0, &s, false);
        watch.on_worker_interval(1, &s, true);
        watch.on_worker_interval(1, &Snapshot::default(), false);
        assert_eq!(watch.rates, vec![500.0]);
    }

    #[test]
    fn a_run_shorter_than_a_window_has_one_sample_per_thread() {
        let watch = Watch::new(WatchSpec {
            rate_window: Some(Duration::from_millis(100)),
            ..WatchSpec::default()
        });
        let mut result: stampede_metrics::RunResult = serde_json::from_str(
            &std::fs::read_to_string(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/golden/run.json"
            ))
            .unwrap(),
        )
        .unwrap();
        result.plan.threads = 2;
        result.rps = 3000.0;
        assert_eq!(watch.samples(&result), vec![1500.0, 1500.0]);
        result.rps = 0.0;
        assert!(watch.samples(&result).is_empty(), "no response, no sample");
    }

    #[test]
    fn press_lines_come_once() {
        let mut watch = Watch::new(WatchSpec {
            on_connected: Some((2, vec!["create 2 connections successfully".into()])),
            ..WatchSpec::default()
        });
        assert_eq!(watch.pending_lines().len(), 1);
        assert!(watch.pending_lines().is_empty());
    }
}
