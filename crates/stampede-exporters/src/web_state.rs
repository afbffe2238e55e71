//! What `--web` shows while a run goes on, kept from the snapshot stream
//! the live view and `--metrics` read (metrics_feed.rs passes every
//! snapshot here; nothing per request): the totals so far and the
//! per-second series, built by the same [`TimeseriesBuilder`] the engine
//! builds the result's series with. Once a second the [`LiveBoard`] gets
//! a copy, which the web server turns into a partial result to render.

use stampede_metrics::{Recording, RunResult, Running, SecondPoint, Snapshot, TimeseriesBuilder};
use stampede_plan::{LoadModel, Plan};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often the board gets a new copy (the page redraws at this pace).
const COPY_EVERY: Duration = Duration::from_secs(1);

/// The run so far, as the web server reads it.
#[derive(Debug, Clone, Default)]
pub struct LiveRun {
    /// Since measuring began.
    pub elapsed: Duration,
    /// The counts and histograms of the whole run so far.
    pub total: Snapshot,
    /// The seconds every worker has left behind.
    pub timeseries: Vec<SecondPoint>,
}

impl LiveRun {
    /// The run so far as a result, the one the HTML report is drawn from;
    /// `running` says what runs (plan, id, environment, notices), and
    /// `workload` its checks and step names when it has them.
    pub fn result(
        &self,
        running: &Running,
        workload: Option<&stampede_engine::WorkloadSpec>,
    ) -> RunResult {
        let recording = Recording {
            timeseries: self.timeseries.clone(),
            checks: workload.map(|w| w.check_names()).unwrap_or_default(),
            judged: workload.is_some_and(|w| w.judges_responses()),
            // As the engine names them: a scenario's several groups, and
            // its transactions.
            groups: workload
                .map(|w| w.group_names(&running.plan.model, w.groups.len() > 1))
                .unwrap_or_default(),
            ..Recording::of(
                running.started_at,
                self.elapsed,
                running.plan.event_loop(),
                self.total.clone(),
            )
        };
        let mut result = running.result(&recording);
        if let Some(workload) = workload {
            workload.name_steps(&mut result);
        }
        result
    }
}

/// Shared between the aggregator (writer) and the web server (reader).
pub type LiveBoard = Arc<Mutex<Option<LiveRun>>>;

/// The aggregator's side: the series being built and when it last copied.
pub struct LiveSeries {
    board: LiveBoard,
    series: TimeseriesBuilder,
    model: LoadModel,
    /// The worker whose interval comes next (on_worker_interval names it
    /// just before on_snapshot hands it over).
    worker: usize,
    workers: usize,
    copied_at: Option<Duration>,
}

impl LiveSeries {
    /// `workload`: a scenario's groups each have workers of their own.
    pub fn new(
        board: LiveBoard,
        plan: &Plan,
        workload: Option<&stampede_engine::WorkloadSpec>,
    ) -> LiveSeries {
        let workers = stampede_engine::worker_count(plan, workload).max(1);
        LiveSeries {
            board,
            series: TimeseriesBuilder::new(workers),
            model: plan.model.clone(),
            worker: 0,
            workers,
            copied_at: None,
        }
    }

    /// The worker whose interval the next [`LiveSeries::snapshot`] brings.
    pub fn worker(&mut self, worker: usize) {
        self.worker = worker.min(self.workers - 1);
    }

    /// Adds an interval to the series and, once a second, copies the run
    /// so far to the board.
    pub fn snapshot(&mut self, elapsed: Duration, interval: &Snapshot, total: &Snapshot) {
        let schedule = self.model.schedule();
        let target_at = |seconds: f64| schedule.target_at(Duration::from_secs_f64(seconds));
        self.series
            .add(self.worker, elapsed.as_secs(), interval, &target_at);
        if self.copied_at.is_some_and(|at| elapsed < at + COPY_EVERY) {
            return;
        }
        self.copied_at = Some(elapsed);
        let mut board = self
            .board
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let live = board.get_or_insert_with(LiveRun::default);
        live.elapsed = elapsed;
        live.total = total.clone();
        let done = self.series.done();
        if done.len() > live.timeseries.len() {
            live.timeseries
                .extend_from_slice(&done[live.timeseries.len()..]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_board_gets_the_totals_and_each_finished_second() {
        let plan = Plan::minimal(stampede_plan::Target::parse("http://127.0.0.1:3000/").unwrap());
        let board = LiveBoard::default();
        let mut live = LiveSeries::new(board.clone(), &plan, None);
        let mut interval = Snapshot::default();
        interval.counters.success = 5;
        interval.counters.status.add(200, 5);
        let mut total = Snapshot::default();
        for tenth in 1..=25 {
            total.merge(&interval);
            live.worker(0);
            live.snapshot(Duration::from_millis(tenth * 100), &interval, &total);
        }
        let copy = board.lock().unwrap().clone().expect("copied");
        // Copies at 0.1 s, 1.1 s and 2.1 s; seconds 0 and 1 are finished.
        assert_eq!(copy.elapsed, Duration::from_millis(2_100));
        assert_eq!(copy.total.counters.success, 105);
        assert_eq!(copy.timeseries.len(), 2);
        assert_eq!(copy.timeseries[0].success, 45, "0.1 s to 0.9 s");
        assert_eq!(copy.timeseries[1].success, 50);
    }
}
