//! [`run_with`]: prepares what the workers share, splits the plan over worker
//! threads, spawns them, and merges their snapshots into one `Recording`
//! while an [`Observer`] watches.

use crate::drive::worker::run_worker;
use crate::error::EngineError;
use crate::plan::worker_plan::{second_of, WorkerMessage, WorkerPlan, SNAPSHOT_INTERVAL};
use crate::run::finish::{finished, Aggregated, RunEnd};
pub use crate::run::options::{Finished, IntervalLog, RunOptions};
use crate::run::prepare::prepare;
use crate::run::split::{place_workers, worker_plans, Window};
use crate::run::watchdog::Watchdog;
use crate::worker::request_log::{RequestLog, RunClock};
use stampede_metrics::{IntervalBuilder, Snapshot, TimeseriesBuilder};
use stampede_plan::{LoadModel, Plan, StopCondition};
use std::net::SocketAddr;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant, SystemTime};
use tokio::sync::watch;

/// Watches a run as it goes (live view, progress line, or nothing).
pub trait Observer {
    /// Called for every snapshot a worker hands over, with the totals so far.
    fn on_snapshot(&mut self, elapsed: Duration, interval: &Snapshot, total: &Snapshot);

    /// Called just before [`Observer::on_snapshot`] with the worker that sent
    /// the interval and whether it was its last (shorter) one: for views that
    /// need per-worker figures, such as wrk's per-thread Req/Sec samples.
    fn on_worker_interval(&mut self, _worker: usize, _interval: &Snapshot, _last: bool) {}
}

/// An observer that ignores everything (`--quiet`).
#[derive(Debug, Default)]
pub struct NoObserver;

impl Observer for NoObserver {
    fn on_snapshot(&mut self, _: Duration, _: &Snapshot, _: &Snapshot) {}
}

/// Stops a running engine early from another thread (Ctrl-C); the run then
/// returns everything measured so far, marked interrupted.
#[derive(Debug, Clone)]
pub struct StopHandle {
    sender: Arc<watch::Sender<bool>>,
}

impl Default for StopHandle {
    fn default() -> Self {
        StopHandle::new()
    }
}

impl StopHandle {
    /// A handle not yet asked to stop.
    pub fn new() -> StopHandle {
        StopHandle {
            sender: Arc::new(watch::channel(false).0),
        }
    }

    /// Asks the run to stop; safe to call from any thread, any number of times.
    pub fn stop(&self) {
        self.sender.send_replace(true);
    }

    /// True once [`StopHandle::stop`] has been called.
    pub fn is_stopped(&self) -> bool {
        *self.sender.borrow()
    }
}

/// Resolves the plan's host to the first address it names (a `--resolve`
/// override first).
pub fn resolve(plan: &Plan) -> Result<SocketAddr, EngineError> {
    Ok(crate::net::dns::resolve_all(plan)?[0])
}

/// Worker `index` of the `workers` that share `model`: its part of it.
/// How many workers a run has: `--threads`, and at least one per group of
/// a scenario with several (what observers that keep per-worker books,
/// such as `--web`'s live series, need to know).
pub fn worker_count(plan: &Plan, workload: Option<&crate::workload::WorkloadSpec>) -> usize {
    let groups = workload.map_or(1, |w| w.groups.len().max(1));
    plan.threads.max(groups)
}

/// Runs the plan to its stop condition (or until `stop`), with options (the
/// per-request log), returning the merged recording. The steps: prepare
/// what the workers share (prepare.rs), split the plan over them
/// (split.rs), spawn them, aggregate their snapshots, and make the
/// recording (finish.rs).
pub fn run_with(
    plan: &Plan,
    observer: &mut dyn Observer,
    stop: &StopHandle,
    mut options: RunOptions,
) -> Result<Finished, EngineError> {
    if let Some(log) = &options.intervals {
        let every = options.snapshot_interval.unwrap_or(SNAPSHOT_INTERVAL);
        options.snapshot_interval =
            Some(stampede_metrics::snapshot_interval_for(every, log.length));
    }
    // This thread aggregates the workers' snapshots: it is the client's too.
    let _aggregating = options.client_threads.enrol();
    // Several groups run side by side, each on its own workers (at least
    // one each) with its own load model.
    let groups: Vec<&LoadModel> = match &options.workload {
        Some(workload) if workload.groups.len() > 1 => workload
            .groups
            .iter()
            .map(|g| g.model.as_ref().unwrap_or(&plan.model))
            .collect(),
        _ => vec![&plan.model],
    };
    let prepared = prepare(plan, &options, &groups)?;
    let started_at = SystemTime::now();
    let start = Instant::now();
    let measure_start = start + plan.warmup.unwrap_or_default();
    let (budget, limit) = match plan.stop {
        StopCondition::Duration(d) => (None, Some(d)),
        StopCondition::Requests { count, limit } => (Some(count), limit),
    };
    let window = Window {
        measure_start,
        deadline: limit.map(|d| measure_start + d),
        budget,
    };
    let clock = RunClock {
        measure_start,
        measure_start_wall: started_at + (measure_start - start),
    };
    let workers = worker_count(plan, options.workload.as_deref());
    let placement = place_workers(workers, groups.len());
    let mut request_log = match options.request_log.take() {
        Some(log) => Some(RequestLog::start(log, workers, clock).map_err(EngineError::RequestLog)?),
        None => None,
    };
    let phases = run_phases(options.workload.as_deref(), &placement, start);
    let shares = (&groups[..], &placement[..]);
    let plans = worker_plans(plan, &options, &prepared, shares, &window, phases.as_ref());
    let (to_aggregator, from_workers) = mpsc::channel();
    let threads = spawn_workers(plans, stop, &to_aggregator, &mut request_log, &options)?;
    drop(to_aggregator);
    let schedule = plan.model.schedule().clone();
    let target_at = move |seconds: f64| schedule.target_at(Duration::from_secs_f64(seconds));
    let watch = Watch {
        stop,
        give_up: crate::run::no_connection::GiveUp::of(plan),
        watchdog: Watchdog::new(
            workers,
            Instant::now(),
            window.deadline,
            crate::run::watchdog::grace(options.snapshot_interval),
        ),
    };
    let mut intervals = options.intervals.take().map(|mut log| {
        log.sink.begin(clock.measure_start_wall);
        (IntervalBuilder::new(workers, log.length), log.sink)
    });
    let aggregated = aggregate(
        from_workers,
        workers,
        measure_start,
        (observer, watch, intervals.as_mut()),
        &target_at,
    );
    if let Some((builder, mut sink)) = intervals {
        // Written whatever became of the run: what was measured is kept.
        let elapsed = match &aggregated {
            Ok(aggregated) => aggregated.elapsed,
            Err(_) => measure_start.elapsed(),
        };
        builder.finish(elapsed, sink.as_mut());
    }
    let abandoned: Vec<usize> = match &aggregated {
        Ok(aggregated) => aggregated.abandoned.iter().map(|&(w, _)| w).collect(),
        Err(_) => Vec::new(),
    };
    join_workers(threads, &abandoned)?;
    let end = RunEnd {
        started_at,
        stopped: stop.is_stopped(),
        limits: (budget, limit),
        phases: phases.as_deref(),
        placement: &placement,
    };
    let finished = finished(plan, &options, &prepared, aggregated?, end, request_log);
    Ok(finished)
}

/// A worker thread: `Ok` when it ended well, its own error otherwise.
type WorkerThread = std::thread::JoinHandle<std::io::Result<()>>;

/// Starts one thread per worker plan, each sending its snapshots to
/// `to_aggregator` and its request-log lines to its share of `request_log`.
fn spawn_workers(
    plans: Vec<WorkerPlan>,
    stop: &StopHandle,
    to_aggregator: &mpsc::Sender<WorkerMessage>,
    request_log: &mut Option<RequestLog>,
    options: &RunOptions,
) -> Result<Vec<WorkerThread>, EngineError> {
    let mut threads = Vec::with_capacity(plans.len());
    for worker_plan in plans {
        let index = worker_plan.index;
        let receiver = stop.sender.subscribe();
        let sender = to_aggregator.clone();
        let log = request_log.as_mut().and_then(|log| log.worker(index));
        let client_threads = options.client_threads.clone();
        let thread = std::thread::Builder::new()
            .name(format!("stampede-worker-{index}"))
            .spawn(move || {
                let _enrolment = client_threads.enrol();
                run_worker(worker_plan, receiver, sender, log)
            })
            .map_err(|source| EngineError::Worker {
                worker: index,
                source,
            })?;
        threads.push(thread);
    }
    Ok(threads)
}

/// Joins the workers' threads but the `abandoned` ones. A worker's own
/// error (a script's init failing) says more than the aggregator's
/// "worker lost": it is returned before the aggregator's result is read.
/// An abandoned worker's thread is left running (watchdog.rs): joining it
/// would never end.
fn join_workers(threads: Vec<WorkerThread>, abandoned: &[usize]) -> Result<(), EngineError> {
    for (index, thread) in threads.into_iter().enumerate() {
        if abandoned.contains(&index) {
            continue;
        }
        match thread.join() {
            Ok(Ok(())) => {}
            Ok(Err(source)) => {
                return Err(EngineError::Worker {
                    worker: index,
                    source,
                })
            }
            Err(_) => return Err(EngineError::WorkerLost(index)),
        }
    }
    Ok(())
}

/// The scenario's group clock, when some group has a phase, a start
/// delay, a duration, iterations or `on_error` (`None` otherwise: nothing
/// waits and nothing is watched). `placement` gives each worker's group.
fn run_phases(
    workload: Option<&crate::workload::WorkloadSpec>,
    placement: &[(usize, usize, usize)],
    start: Instant,
) -> Option<Arc<crate::workload::RunPhases>> {
    let workload = workload?;
    let keyed = workload
        .groups
        .iter()
        .any(|g| g.sequential && g.limits != Default::default());
    keyed.then(|| {
        let phase = |group: usize| workload.groups.get(group).map(|g| g.limits.phase);
        Arc::new(crate::workload::RunPhases::new(
            start,
            placement.iter().filter_map(|&(group, _, _)| phase(group)),
        ))
    })
}

/// How long the last (possibly partial) second of a run lasted: up to a
/// second and the boundary slack, when the stop came just after a boundary
/// and its responses joined the second before.
fn last_second_length(elapsed: Duration) -> f64 {
    let seconds = second_of(elapsed) as f64;
    elapsed.as_secs_f64() - seconds
}

/// The interval log's builder and where its intervals go.
type Intervals = (IntervalBuilder, Box<dyn stampede_metrics::IntervalSink>);

/// What the aggregator watches besides the messages: the stop handle, the
/// no-connection rule and the watchdog.
struct Watch<'a> {
    stop: &'a StopHandle,
    give_up: Option<crate::run::no_connection::GiveUp>,
    watchdog: Watchdog,
}

/// Merges worker messages until every worker has sent its last one.
fn aggregate(
    messages: mpsc::Receiver<WorkerMessage>,
    workers: usize,
    measure_start: Instant,
    (observer, mut watch, mut intervals): (&mut dyn Observer, Watch<'_>, Option<&mut Intervals>),
    target_at: &dyn Fn(f64) -> f64,
) -> Result<Aggregated, EngineError> {
    let mut gave_up = false;
    let mut total = Snapshot::default();
    let mut series = TimeseriesBuilder::new(workers);
    let mut finished = vec![false; workers];
    let mut abandoned = Vec::new();
    let mut fed_out = vec![false; workers];
    // Each worker's requests begun and ended so far: what an abandoned one
    // left open is counted unfinished, so that sent = ended + unfinished.
    let mut books = vec![(0u64, 0u64); workers];
    let mut last_finish = measure_start;
    while finished.iter().any(|done| !done) {
        let received = messages.recv_timeout(crate::run::watchdog::POLL);
        let now = Instant::now();
        if watch.stop.is_stopped() {
            watch.watchdog.stopped(now);
        }
        for worker in watch.watchdog.abandoned(now, &finished) {
            finished[worker] = true;
            // Its share of the run ended when the run should have.
            let end = watch.watchdog.end().unwrap_or(now);
            abandoned.push((worker, watch.watchdog.lost(worker, end)));
            last_finish = last_finish.max(end);
            let (begun, ended) = books.get(worker).copied().unwrap_or_default();
            total.counters.unfinished += begun.saturating_sub(ended);
        }
        let message = match received {
            Ok(message) => message,
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let lost = finished.iter().position(|done| !done).unwrap_or(0);
                return Err(EngineError::WorkerLost(lost));
            }
        };
        watch.watchdog.heard(message.worker, now);
        if let Some(out) = fed_out.get_mut(message.worker) {
            *out |= message.snapshot.feed_exhausted;
        }
        let counters = &message.snapshot.counters;
        if let Some((begun, ended)) = books.get_mut(message.worker) {
            *begun += counters.sent;
            *ended += counters.completed() + counters.error_total() + counters.unfinished;
        }
        total.merge(&message.snapshot);
        series.add(message.worker, message.second, &message.snapshot, target_at);
        if let Some(at) = message.finished_at {
            finished[message.worker] = true;
            last_finish = last_finish.max(at);
        }
        let last = message.finished_at.is_some();
        observer.on_worker_interval(message.worker, &message.snapshot, last);
        observer.on_snapshot(measure_start.elapsed(), &message.snapshot, &total);
        if let Some((builder, sink)) = intervals.as_deref_mut() {
            // Last: the interval log takes the snapshot over (its
            // histograms moved, not copied).
            builder.add(
                message.worker,
                message.started,
                message.snapshot,
                last,
                sink.as_mut(),
            );
        }
        if let Some(rule) = &watch.give_up {
            let stop = watch.stop;
            if !gave_up && !stop.is_stopped() && rule.due(measure_start.elapsed(), &total.counters)
            {
                gave_up = true;
                stop.stop();
            }
        }
    }
    let elapsed = last_finish.saturating_duration_since(measure_start);
    let last_second = last_second_length(elapsed);
    Ok(Aggregated {
        total,
        elapsed,
        timeseries: series.finish(last_second, target_at),
        gave_up,
        abandoned,
        grace: watch.watchdog.grace(),
        fed_out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_just_after_a_boundary_closes_the_previous_second() {
        assert_eq!(second_of(Duration::from_millis(5_002)), 4);
        assert_eq!(second_of(Duration::from_millis(4_005)), 3);
        assert_eq!(second_of(Duration::from_millis(5_300)), 5);
        assert!((last_second_length(Duration::from_millis(5_002)) - 1.002).abs() < 1e-9);
        assert!((last_second_length(Duration::from_millis(4_005)) - 1.005).abs() < 1e-9);
        assert!((last_second_length(Duration::from_millis(5_300)) - 0.3).abs() < 1e-9);
    }
}
