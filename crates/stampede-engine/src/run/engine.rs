//! [`run_with`]: resolves the target, splits the plan over worker threads, and
//! merges their snapshots into one [`Recording`] while an [`Observer`] watches.

use crate::drive::worker::run_worker;
use crate::error::EngineError;
use crate::net::transport::{build_tls_client, ConnectorSpec, Endpoint};
use crate::plan::worker_plan::{
    second_of, OpenLoad, WorkerLoad, WorkerMessage, WorkerPlan, SNAPSHOT_INTERVAL,
};
use crate::run::finish::{finished, RunEnd};
use crate::run::prepare::prepare;
use crate::run::split::{worker_plans, Window};
use crate::run::watchdog::{Abandoned, Watchdog};
use crate::worker::request_log::{RequestLog, RequestLogOptions, RequestLogReport, RunClock};
use stampede_metrics::{IntervalBuilder, Recording, SecondPoint, Snapshot, TimeseriesBuilder};
use stampede_plan::{
    share_of, EventLoop, IoBackend, LoadModel, Plan, Schedule, Scheme, StopCondition,
};
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

/// How connections reach the target: the Unix socket, the proxy or the
/// target's resolved addresses (all of them: the result names them, and
/// `--dns` spreads connections over them), the CONNECT tunnel and the TLS client.
pub(crate) fn connector_spec(plan: &Plan) -> Result<(ConnectorSpec, Vec<SocketAddr>), EngineError> {
    let transport = &plan.transport;
    let mut addrs = Vec::new();
    let endpoint = match (&transport.unix_socket, &transport.proxy) {
        (Some(path), _) => Endpoint::Unix(path.clone()),
        (None, Some(proxy)) => {
            Endpoint::Tcp(crate::net::dns::resolve_host(&proxy.host, proxy.port)?[0])
        }
        (None, None) => {
            addrs = crate::net::dns::resolve_all(plan)?;
            Endpoint::Tcp(addrs[0])
        }
    };
    let dns = transport.dns;
    let addresses = (!addrs.is_empty() && dns.is_set())
        .then(|| crate::net::dns::AddressBook::new(dns.mode, dns.ttl, &addrs));
    let tunnel_to = match (&transport.proxy, plan.target.scheme) {
        (Some(_), Scheme::Https) => Some(format!(
            "{}:{}",
            bracketed(&plan.target.host),
            plan.target.port
        )),
        _ => None,
    };
    // An http run's TLS options are for its redirects' https origins only.
    let tls = transport
        .tls
        .as_ref()
        .filter(|_| plan.target.scheme == Scheme::Https)
        .map(|spec| build_tls_client(spec, &plan.target.host, transport.http2))
        .transpose()?;
    let spec = ConnectorSpec {
        endpoint,
        addresses,
        source_addrs: plan.source_addrs.clone(),
        tls,
        tunnel_to,
        connect_timeout: plan.connect_timeout,
        require_h2: transport.http2,
    };
    Ok((spec, addrs))
}

/// How `--redirects` follows: the run's origin, the limit, and how other
/// origins are reached (straight to them, as the run reaches its own, over
/// HTTP/2 when the run is: not through a proxy or a Unix socket, which
/// reach one origin only).
pub(crate) fn redirect_rule(
    plan: &Plan,
    max_hops: u32,
) -> crate::redirects::redirect::RedirectRule {
    let transport = &plan.transport;
    let https = plan.target.scheme == Scheme::Https;
    let home = crate::redirects::redirect_origin::Origin {
        https,
        host: bracketed(&plan.target.host.to_ascii_lowercase()),
        port: plan.target.port,
    };
    let direct = transport.unix_socket.is_none() && transport.proxy.is_none();
    let foreign = direct.then(|| crate::redirects::redirect_origin::ForeignRules {
        resolve: transport.resolve.clone(),
        tls: transport.tls.clone(),
        connect_timeout: plan.connect_timeout,
        http2: transport.http2,
    });
    crate::redirects::redirect::RedirectRule {
        max_hops,
        home,
        foreign,
    }
}

fn bracketed(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    }
}

/// The target during warm-up: the first stage's target (or the start value
/// when that is higher), so that warm-up exercises the load about to be measured.
fn warmup_target(schedule: &Schedule) -> f64 {
    let first = schedule.stages.first().map_or(0.0, |s| s.target);
    schedule.start.max(first)
}

/// Worker `index` of the `workers` that share `model`: its part of it.
/// How many workers a run has: `--threads`, and at least one per group of
/// a scenario with several (what observers that keep per-worker books,
/// such as `--web`'s live series, need to know).
pub fn worker_count(plan: &Plan, workload: Option<&crate::workload::WorkloadSpec>) -> usize {
    let groups = workload.map_or(1, |w| w.groups.len().max(1));
    plan.threads.max(groups)
}

/// Worker `index`'s load of `model`; `total`: the group's
/// `total_iterations`, of which the worker takes the instants its pacer
/// numbers (worker w of W: w, w + W, …, the first `total` in all).
pub(crate) fn worker_load(
    model: &LoadModel,
    index: usize,
    workers: usize,
    seed: u64,
    total: Option<u64>,
) -> WorkerLoad {
    match model {
        LoadModel::Closed { connections } => WorkerLoad::Closed {
            schedule: connections.clone(),
            warmup_target: warmup_target(connections),
            slots: crate::drive::closed::connection_share(connections.peak(), index, workers),
        },
        LoadModel::Rate {
            per_s,
            max_connections,
            arrival,
            pace_window,
        } => {
            // Every worker follows the whole rate and takes its share of the
            // instants (open.rs): scaling the rate per worker would round up
            // once per worker (-r 100 -d 1s sent 102 with 2 threads).
            WorkerLoad::Open(OpenLoad {
                warmup_rate: warmup_target(per_s),
                per_s: per_s.clone(),
                max_connections: share_of(*max_connections as u64, index, workers).max(1) as usize,
                arrival: arrival.clone(),
                worker: index,
                workers,
                // Each worker its own stream of the run's seed.
                seed: seed ^ 0x9E37_79B9_7F4A_7C15u64.wrapping_mul(index as u64 + 1),
                count: total.map(|n| share_of(n, index, workers)),
                pace_window: *pace_window,
            })
        }
    }
}

/// Where each of `workers` workers goes among `groups` groups: (group,
/// its place in the group, the group's workers), groups in order, every
/// group at least one worker when there are enough (the caller sees to it).
fn place_workers(workers: usize, groups: usize) -> Vec<(usize, usize, usize)> {
    let groups = groups.max(1);
    (0..groups)
        .flat_map(|group| {
            let n = share_of(workers as u64, group, groups) as usize;
            (0..n).map(move |i| (group, i, n))
        })
        .collect()
}

/// The event loop the run gets: what `--io` and the run allow
/// ([`Plan::event_loop`]), with `auto` taking io_uring where the kernel offers
/// it. Measured against epoll (docs/performance.md), the io_uring reactor
/// uses 0.86× wrk's CPU per request with a new connection per request
/// against epoll's 0.94×, and is level or slightly ahead with keep-alive;
/// epoll remains where io_uring is missing or refused (containers often
/// filter it). An explicit `--io uring` without io_uring is an error.
pub(crate) fn settle_event_loop(plan: &Plan) -> Result<EventLoop, EngineError> {
    let event_loop = plan.event_loop();
    let auto = plan.transport.io == IoBackend::Auto;
    match event_loop {
        EventLoop::Uring => match crate::drive::reactor::uring_unavailable() {
            Some(reason) => Err(EngineError::UringUnavailable(reason)),
            None => Ok(EventLoop::Uring),
        },
        EventLoop::Epoll if auto && crate::drive::reactor::uring_unavailable().is_none() => {
            Ok(EventLoop::Uring)
        }
        other => Ok(other),
    }
}

/// What a run may do besides measuring.
#[derive(Default)]
pub struct RunOptions {
    /// Log every (or every Nth) request through a bounded buffer.
    pub request_log: Option<RequestLogOptions>,
    /// How often each worker hands its interval to the observer (None: the
    /// default [`SNAPSHOT_INTERVAL`]). It should divide one second, as the
    /// per-second series groups intervals by the second they start in; wrk's
    /// front-end asks for 100 ms to sample each thread's rate as wrk does.
    pub snapshot_interval: Option<Duration>,
    /// Where the workers and the aggregating thread enrol, so that the
    /// monitor counts the load generator's CPU and nothing else.
    pub client_threads: crate::monitor::ClientThreads,
    /// The seed of Poisson arrivals (`--seed`); None: a new one each run,
    /// so that repeated runs sample different arrivals. The recording says
    /// which was used.
    pub seed: Option<u64>,
    /// Templated requests, feeders, checks, extractors and scenario steps;
    /// `None`: every request is the plan's fixed bytes.
    pub workload: Option<Arc<crate::workload::WorkloadSpec>>,
    /// `--hlog`: the run in fixed intervals, each merged across workers
    /// and handed on as soon as complete.
    pub intervals: Option<IntervalLog>,
}

/// Where a run's fixed intervals go and how long each is.
pub struct IntervalLog {
    /// Each interval's length; the workers' snapshot interval is made to
    /// divide it ([`stampede_metrics::snapshot_interval_for`]).
    pub length: Duration,
    /// Where each interval's histograms go.
    pub sink: Box<dyn stampede_metrics::IntervalSink>,
}

/// A finished run: the recording and what the request log did.
#[derive(Debug)]
pub struct Finished {
    /// The measured window's counters, histograms and time series.
    pub recording: Recording,
    /// What `--log-requests` did, when it was asked for.
    pub request_log: Option<RequestLogReport>,
    /// The target's addresses and the connections each got, when it had
    /// several or `--dns`/`--dns-ttl` was given (the result's `dns`).
    pub dns: Option<stampede_metrics::DnsUse>,
    /// The workers given up on because they never reported after the
    /// run's end (watchdog.rs): their figures stop at their last snapshot.
    pub abandoned: Vec<Abandoned>,
    /// The scenario groups (their names, or numbers from 1) whose unique
    /// feeder ran out of rows and stopped their users.
    pub feed_ran_out: Vec<String>,
    /// Each scenario step's rendezvous: its batches and their spread.
    pub rendezvous: Vec<stampede_metrics::RendezvousResult>,
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

/// What the aggregator hands back once every worker has finished.
pub(crate) struct Aggregated {
    pub(crate) total: Snapshot,
    pub(crate) elapsed: Duration,
    pub(crate) timeseries: Vec<SecondPoint>,
    /// The run was stopped because nothing could connect (no_connection.rs).
    pub(crate) gave_up: bool,
    /// The workers the watchdog gave up on, each with what is known of
    /// its lost figures (`Watchdog::lost`).
    pub(crate) abandoned: Vec<(usize, (u32, Duration))>,
    pub(crate) grace: Duration,
    /// Per worker: its unique feeder ran out of rows.
    pub(crate) fed_out: Vec<bool>,
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
