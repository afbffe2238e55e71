//! How a run's result leaves the process and what status it exits with: the
//! summary, the JSON file and the exports, at the end of the run
//! ([`Delivery::write`], [`deliver`], [`exit_status`]) or on a forced exit
//! (the salvage armed with [`interrupt::arm`]): while the engine runs, the
//! latest merged snapshot turned into a result; after it, the finished one.
//!
//! Keeping the latest snapshot costs one copy of the merged totals at most
//! every [`KEEP_EVERY`] on the aggregator thread (and each one after the
//! stop was asked for), nothing per request.

use crate::process::exports::{self, ExportArgs};
use crate::process::output::{self, OutputFormat};
use crate::process::{exit, interrupt};
use stampede_engine::{Observer, StopHandle};
use stampede_metrics::{Recording, RunResult, Running, Snapshot};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often the merged totals are copied for a forced exit.
const KEEP_EVERY: Duration = Duration::from_millis(250);

/// Where a finished run's result goes.
#[derive(Debug, Clone)]
pub struct Delivery {
    pub json: Option<PathBuf>,
    pub format: OutputFormat,
    pub exports: ExportArgs,
}

impl Delivery {
    /// Every output flag with its path, `--json` first.
    pub fn outputs(&self) -> Vec<(&'static str, &Path)> {
        let mut outputs: Vec<(&'static str, &Path)> = Vec::new();
        if let Some(json) = &self.json {
            outputs.push(("--json", json));
        }
        outputs.extend(self.exports.outputs());
        outputs
    }

    /// True when an output is `-`: the summary then goes to stderr.
    pub fn stdout_taken(&self) -> bool {
        output::any_to_stdout(&self.outputs())
    }

    /// Saves and prints the result. The summary is printed even when a file
    /// cannot be written: nothing measured is lost to a bad path.
    pub fn write(&self, result: &RunResult) -> anyhow::Result<()> {
        let saved = self
            .json
            .as_ref()
            .map(|path| output::write_json(result, path))
            .transpose();
        let exported = exports::write_exports(result, &self.exports);
        output::print_summary(result, self.format, self.stdout_taken())?;
        saved?;
        exported
    }
}

/// Prints and saves a result; the exit status says whether it was interrupted.
pub fn deliver(
    result: &RunResult,
    json: Option<&PathBuf>,
    format: OutputFormat,
    export_args: &ExportArgs,
) -> anyhow::Result<i32> {
    let delivery = Delivery {
        json: json.cloned(),
        format,
        exports: export_args.clone(),
    };
    deliver_to(result, &delivery)
}

/// [`deliver`] to a [`Delivery`]; says on stderr, too, when no connection
/// could be opened (the result is still written: it holds the errors).
pub fn deliver_to(result: &RunResult, delivery: &Delivery) -> anyhow::Result<i32> {
    interrupt::begin_delivery();
    delivery.write(result)?;
    let status = exit_status(result);
    if status == exit::ERROR {
        if let Some(reason) = stampede_report::no_response_reason(result) {
            eprintln!("stampede: error: {}: {reason}", result.plan.url);
        }
    }
    Ok(status)
}

/// True when the run sent requests but never opened a connection (wrk's
/// "unable to connect"): the target is not there, whatever the counts say.
/// A `ws://` run counts a connection once upgraded: a server that refuses
/// every upgrade is no WebSocket target. No response either: connections
/// opened during `--warmup` are not counted in the measured part, which may
/// then reuse them without opening any.
pub fn never_connected(result: &RunResult) -> bool {
    let upgraded_none = (result.websocket.as_ref()).is_some_and(|ws| ws.connections == 0);
    result.requests.sent > 0
        && result.requests.completed == 0
        && (result.connections.opened == 0 || upgraded_none)
}

/// 2 when a worker was given up on (a script hook that never returned,
/// `stop_reason: "worker_stuck"`), 130 when interrupted (143 by SIGTERM),
/// 2 when no connection could be opened, 1 when an SLO condition failed,
/// else 0.
pub fn exit_status(result: &RunResult) -> i32 {
    if result.stop_reason.as_deref() == Some("worker_stuck") {
        exit::ERROR
    } else if result.interrupted {
        interrupt::status()
    } else {
        measured_status(result)
    }
}

/// What the figures alone say, whether or not the run was interrupted: 2
/// when no connection could be opened, 1 when an SLO condition failed, else
/// 0 (`merge` of an interrupted input is no interrupt of the merge).
pub fn measured_status(result: &RunResult) -> i32 {
    if never_connected(result) {
        exit::ERROR
    } else if result.slo.iter().any(|check| !check.passed) {
        exit::THRESHOLD_FAILED
    } else {
        exit::OK
    }
}

/// The merged totals as of the last copy, and when (since measuring began).
pub type Latest = Arc<Mutex<Option<(Duration, Snapshot)>>>;

/// Passes every snapshot on to the view and keeps a copy of the totals.
pub struct Keeper<'a, O: ?Sized> {
    inner: &'a mut O,
    latest: Latest,
    stop: StopHandle,
    kept_at: Option<Duration>,
}

impl<'a, O: Observer + ?Sized> Keeper<'a, O> {
    pub fn new(inner: &'a mut O, latest: Latest, stop: StopHandle) -> Self {
        Keeper {
            inner,
            latest,
            stop,
            kept_at: None,
        }
    }
}

impl<O: Observer + ?Sized> Observer for Keeper<'_, O> {
    fn on_snapshot(&mut self, elapsed: Duration, interval: &Snapshot, total: &Snapshot) {
        self.inner.on_snapshot(elapsed, interval, total);
        let due = self.kept_at.is_none_or(|at| elapsed >= at + KEEP_EVERY);
        if due || self.stop.is_stopped() {
            *self
                .latest
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) =
                Some((elapsed, total.clone()));
            self.kept_at = Some(elapsed);
        }
    }

    // The live view keeps connection gauges per worker: pass them through.
    fn on_worker_interval(&mut self, worker: usize, interval: &Snapshot, last: bool) {
        self.inner.on_worker_interval(worker, interval, last);
    }
}

/// Arms a forced exit to write the latest snapshot as the result.
pub fn arm_snapshot(running: Running, latest: Latest, delivery: Delivery) {
    interrupt::arm(Box::new(move || {
        salvage(&snapshot_result(running, &latest), &delivery);
    }));
}

/// The latest snapshot (or nothing, before the first) as an interrupted result.
fn snapshot_result(running: Running, latest: &Latest) -> RunResult {
    let (elapsed, total) = latest
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take()
        .unwrap_or_default();
    let recording = Recording {
        interrupted: true,
        ..Recording::of(
            running.started_at,
            elapsed,
            running.plan.event_loop(),
            total,
        )
    };
    let mut result = running.result(&recording);
    result.warnings.push(format!(
        "forced exit: these are the totals as of {:.2}s, the last snapshot before the \
         second interrupt (no per-second series or process monitor)",
        elapsed.as_secs_f64()
    ));
    result
}

/// Arms a forced exit to write the finished result (while, e.g., a
/// spawned server is being stopped).
pub fn arm_result(result: RunResult, delivery: Delivery) {
    interrupt::arm(Box::new(move || salvage(&result, &delivery)));
}

fn salvage(result: &RunResult, delivery: &Delivery) {
    if let Err(error) = delivery.write(result) {
        crate::process::exit::report_error(&error);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stampede_engine::NoObserver;
    use std::time::SystemTime;

    /// Counts what reaches it, as the live view's per-worker gauges need.
    #[derive(Default)]
    struct Counting {
        snapshots: usize,
        worker_intervals: usize,
    }

    impl Observer for Counting {
        fn on_snapshot(&mut self, _: Duration, _: &Snapshot, _: &Snapshot) {
            self.snapshots += 1;
        }
        fn on_worker_interval(&mut self, _: usize, _: &Snapshot, _: bool) {
            self.worker_intervals += 1;
        }
    }

    #[test]
    fn the_keeper_passes_worker_intervals_on_to_the_view() {
        let mut view = Counting::default();
        let mut keeper = Keeper::new(&mut view, Latest::default(), StopHandle::new());
        let snapshot = Snapshot::default();
        keeper.on_worker_interval(0, &snapshot, false);
        keeper.on_worker_interval(1, &snapshot, true);
        keeper.on_snapshot(Duration::from_millis(250), &snapshot, &snapshot);
        assert_eq!((view.snapshots, view.worker_intervals), (1, 2));
    }

    #[test]
    fn a_forced_exit_mid_run_writes_the_last_kept_totals() {
        let plan_args =
            crate::flags::run_args::parse_run_args(["http://127.0.0.1:3000/", "-t", "1"])
                .expect("valid words");
        let (plan, _) = crate::flags::plan_args::build_plan(&plan_args).expect("valid plan");
        let latest = Latest::default();
        let stop = StopHandle::new();
        let mut view = NoObserver;
        let mut keeper = Keeper::new(&mut view, latest.clone(), stop.clone());
        let mut total = Snapshot::default();
        total.counters.sent = 10;
        total.counters.success = 7;
        total.counters.unfinished = 3;
        keeper.on_snapshot(Duration::from_millis(250), &Snapshot::default(), &total);
        // Within KEEP_EVERY: not copied, until the stop is asked for.
        total.counters.sent = 12;
        total.counters.success = 9;
        keeper.on_snapshot(Duration::from_millis(300), &Snapshot::default(), &total);
        let kept = |latest: &Latest| latest.lock().unwrap().as_ref().unwrap().1.counters.sent;
        assert_eq!(kept(&latest), 10);
        stop.stop();
        keeper.on_snapshot(Duration::from_millis(310), &Snapshot::default(), &total);
        assert_eq!(kept(&latest), 12);
        let running = Running {
            run_id: "0123456789abcdef".into(),
            plan,
            notices: Vec::new(),
            environment: stampede_metrics::Environment::default(),
            started_at: SystemTime::now(),
            version: env!("CARGO_PKG_VERSION"),
        };
        let result = snapshot_result(running, &latest);
        assert_eq!(result.run_id, "0123456789abcdef");
        assert!(result.interrupted);
        assert_eq!(result.requests.sent, 12);
        assert_eq!(result.requests.success, 9);
        assert!((result.elapsed_s - 0.31).abs() < 1e-9);
        assert!(result.warnings.iter().any(|w| w.starts_with("forced exit")));
    }
}
