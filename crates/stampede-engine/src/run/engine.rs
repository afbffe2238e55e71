//! [`run_with`]: resolves the target, splits the plan over worker threads, and
//! merges their snapshots into one [`Recording`] while an [`Observer`] watches.

use crate::drive::worker::run_worker;
use crate::error::EngineError;
use crate::http1::{encode_request, encode_request_to};
use crate::net::transport::{build_tls_client, ConnectorSpec, Endpoint};
use crate::plan::h2_request::prepare as prepare_h2;
use crate::plan::worker_plan::{
    second_of, H2Plan, OpenLoad, WorkerLoad, WorkerMessage, WorkerPlan, SNAPSHOT_INTERVAL,
};
use crate::run::watchdog::{Abandoned, Watchdog};
use crate::worker::request_log::{RequestLog, RequestLogOptions, RequestLogReport, RunClock};
use stampede_metrics::{IntervalBuilder, Recording, SecondPoint, Snapshot, TimeseriesBuilder};
use stampede_plan::{
    share_of, weighted_order, EventLoop, IoBackend, LoadModel, Plan, Schedule, Scheme,
    StopCondition,
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
fn connector_spec(plan: &Plan) -> Result<(ConnectorSpec, Vec<SocketAddr>), EngineError> {
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
/// origins are reached (straight to them, as the run reaches its own: not
/// through a proxy or a Unix socket, which reach one origin only, nor over
/// HTTP/2, whose streams ride the run's own connections).
fn redirect_rule(plan: &Plan, max_hops: u32) -> crate::redirects::redirect::RedirectRule {
    let transport = &plan.transport;
    let https = plan.target.scheme == Scheme::Https;
    let home = crate::redirects::redirect_origin::Origin {
        https,
        host: bracketed(&plan.target.host.to_ascii_lowercase()),
        port: plan.target.port,
    };
    let direct = transport.unix_socket.is_none() && transport.proxy.is_none() && !transport.http2;
    let foreign = direct.then(|| crate::redirects::redirect_origin::ForeignRules {
        resolve: transport.resolve.clone(),
        tls: transport.tls.clone(),
        connect_timeout: plan.connect_timeout,
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
fn worker_load(
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
fn settle_event_loop(plan: &Plan) -> Result<EventLoop, EngineError> {
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

/// The users group `g` starts with, by its load: a closed group's
/// connections (an open group has no users to gather).
fn group_users(groups: &[&LoadModel], g: usize) -> usize {
    match groups.get(g).or(groups.first()) {
        Some(LoadModel::Closed { connections }) => connections.peak().round().max(0.0) as usize,
        _ => 0,
    }
}

/// The points' figures once the workers are gone (any user still held is
/// let go first), named by their steps.
fn rendezvous_results(
    points: Option<&crate::workload::RendezvousPoints>,
    workload: Option<&crate::workload::WorkloadSpec>,
) -> Vec<stampede_metrics::RendezvousResult> {
    let Some(points) = points else {
        return Vec::new();
    };
    points.close();
    (points.figures().into_iter())
        .map(|(target, figures)| stampede_metrics::RendezvousResult {
            step: (workload.and_then(|w| w.steps.get(target)))
                .and_then(|s| s.name.clone())
                .unwrap_or_else(|| (target + 1).to_string()),
            users: figures.size as u64,
            sent: figures.sizes.iter().sum::<usize>() as u64,
            smallest: figures.sizes.iter().min().map_or(0, |&n| n as u64),
            largest: figures.sizes.iter().max().map_or(0, |&n| n as u64),
            batches: figures.batches,
            timed_out: figures.timed_out,
            spread_us: stampede_metrics::SpreadSummary::of(&figures.spreads),
        })
        .collect()
}

/// Runs the plan to its stop condition (or until `stop`), with options (the
/// per-request log), returning the merged recording.
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
    let event_loop = settle_event_loop(plan)?;
    let seed = options.seed.unwrap_or_else(|| {
        use std::hash::{BuildHasher, Hasher};
        // std's hasher keys are random per process and per call: a fresh seed
        // without another dependency.
        std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish()
    });
    let resolve_start = Instant::now();
    let (connector, addrs) = connector_spec(plan)?;
    let dns = resolve_start.elapsed();
    // Dropped at the end of the run, which stops the re-resolving thread.
    let _refreshing = match &connector.addresses {
        Some(book) => book.refresh(plan)?,
        None => None,
    };
    let request: Arc<[u8]> = encode_request(plan).into();
    let mix: Vec<(Arc<[u8]>, bool)> = plan
        .mix
        .iter()
        .map(|entry| {
            let bytes = encode_request_to(plan, &entry.target, &entry.request);
            (Arc::from(bytes), entry.request.method == "HEAD")
        })
        .collect();
    let http2 = if plan.transport.http2 {
        let requests = if plan.mix.is_empty() {
            vec![prepare_h2(&plan.target, &plan.request)?]
        } else {
            plan.mix
                .iter()
                .map(|entry| prepare_h2(&entry.target, &entry.request))
                .collect::<Result<_, _>>()?
        };
        Some(H2Plan {
            requests,
            streams: plan.transport.streams.max(1),
        })
    } else {
        None
    };
    let http3 = crate::plan::h3_plan::build(plan, &connector)?;
    let websocket = (plan.transport.websocket.as_ref()).map(|spec| {
        std::sync::Arc::new(crate::plan::ws_plan::WsConfig::new(
            &plan.target.path_and_query,
            &plan.target.authority,
            &plan.request.headers,
            spec,
        ))
    });
    let weights: Vec<u32> = plan.mix.iter().map(|entry| entry.weight).collect();
    let listed = options
        .workload
        .as_ref()
        .and_then(|w| w.mix_sequence.clone());
    let mix_order: Arc<[u16]> = match listed {
        Some(sequence) if !weights.is_empty() => sequence,
        _ if weights.is_empty() => Arc::from(Vec::new()),
        _ => weighted_order(&weights).into(),
    };
    let started_at = SystemTime::now();
    let start = Instant::now();
    let measure_start = start + plan.warmup.unwrap_or_default();
    let (budget, limit) = match plan.stop {
        StopCondition::Duration(d) => (None, Some(d)),
        StopCondition::Requests { count, limit } => (Some(count), limit),
    };
    let deadline = limit.map(|d| measure_start + d);
    let clock = RunClock {
        measure_start,
        measure_start_wall: started_at + (measure_start - start),
    };
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
    let rendezvous = options
        .workload
        .as_deref()
        .and_then(|w| {
            // Over HTTP/2 each stream of a connection is a user of its own.
            let per_connection = match plan.transport.http2 {
                true => plan.transport.streams.max(1),
                false => 1,
            };
            crate::workload::RendezvousPoints::of(w, |g| group_users(&groups, g) * per_connection)
        })
        .map(Arc::new);
    let event_loop = match event_loop {
        EventLoop::Tokio => event_loop,
        _ if rendezvous.is_none() => event_loop,
        // Only tokio's tasks can wait at a rendezvous (a reactor's slots
        // have no waker another worker could call): auto takes it.
        _ if plan.transport.io == IoBackend::Auto => EventLoop::Tokio,
        _ => {
            return Err(EngineError::RendezvousNeedsTokio(
                plan.transport.io.as_str(),
            ))
        }
    };
    let workers = worker_count(plan, options.workload.as_deref());
    let placement = place_workers(workers, groups.len());
    let mut request_log = match options.request_log {
        Some(options) => {
            Some(RequestLog::start(options, workers, clock).map_err(EngineError::RequestLog)?)
        }
        None => None,
    };
    // A step's follow_redirects = true follows even without --redirects,
    // as far as JMeter and browsers do (20 hops).
    let step_follows =
        (options.workload.as_deref()).is_some_and(crate::workload::some_step_follows);
    let max_hops = match plan.transport.redirects {
        0 if step_follows => 20,
        n => n,
    };
    let redirect = (max_hops > 0).then(|| redirect_rule(plan, max_hops));
    let phases = run_phases(options.workload.as_deref(), &placement, start);
    let (to_aggregator, from_workers) = mpsc::channel();
    let mut threads = Vec::with_capacity(workers);
    let mut budget_given = 0u64;
    for (index, &(group, share_index, share_workers)) in placement.iter().enumerate() {
        let model = groups[group];
        let group_seed = if groups.len() > 1 {
            seed ^ (group as u64 + 1).wrapping_mul(0xA24B_AED4_963E_E407)
        } else {
            seed
        };
        // -n is split exactly. The closed model: in proportion to
        // connections (the last worker takes what rounding left), as each
        // connection sends at its own pace. The open model: as the pacer
        // splits the instants (worker w takes w, w + W, …, so the first
        // `count` instants give it share_of(count, w, W)), or a worker with
        // more connections would run out of requests before the others and
        // the rest of the run would go at a fraction of the rate. Several
        // groups: evenly over every worker.
        // A listed order (a replayed log) is taken w, w + W, … in either
        // model: each worker sends exactly the entries of its share.
        let listed = (options.workload.as_ref()).is_some_and(|w| w.mix_sequence.is_some());
        let worker_budget = budget.map(|count| {
            let share = match model {
                _ if groups.len() > 1 || listed => share_of(count, index, workers),
                LoadModel::Rate { .. } => share_of(count, index, workers),
                LoadModel::Closed { .. } if index + 1 == workers => count - budget_given,
                LoadModel::Closed { .. } => {
                    let total = plan.connections() as u64;
                    count * share_of(total, index, workers) / total
                }
            };
            budget_given += share;
            share
        });
        let mut worker_connector = connector.clone();
        let script_addr = options
            .workload
            .as_ref()
            .and_then(|w| w.script.as_ref())
            .and_then(|script| script.thread_addr(index));
        if let Some(addr) = script_addr {
            // wrk's setup() may point a thread elsewhere (thread.addr).
            worker_connector.endpoint = Endpoint::Tcp(addr);
            worker_connector.addresses = None;
        }
        let worker_plan = WorkerPlan {
            index,
            share: (share_index, share_workers),
            group,
            connector: worker_connector,
            request: request.clone(),
            mix: mix.clone(),
            mix_order: mix_order.clone(),
            http2: http2.clone(),
            http3: http3.clone(),
            pipeline: plan.transport.pipeline,
            head_request: plan.request.method == "HEAD",
            keepalive: plan.keepalive,
            timeout: plan.timeout,
            load: worker_load(
                model,
                share_index,
                share_workers,
                group_seed,
                options
                    .workload
                    .as_ref()
                    .and_then(|w| w.groups.get(group))
                    .and_then(|g| g.limits.total_iterations),
            ),
            budget: worker_budget,
            measure_start,
            load_start: measure_start,
            phases: phases.clone(),
            rendezvous: rendezvous.clone(),
            deadline,
            event_loop,
            snapshot_interval: options.snapshot_interval.unwrap_or(SNAPSHOT_INTERVAL),
            workload: options.workload.clone(),
            redirect: redirect.clone(),
            follows_redirects: plan.transport.redirects > 0,
            lifetime: crate::plan::conn_lifetime::Lifetime::new(&plan.transport.lifetime),
            decode: plan.transport.compression.decode,
            stream: plan.transport.stream,
            websocket: websocket.clone(),
            seed: seed ^ 0xD1B5_4A32_D192_ED03u64.wrapping_mul(index as u64 + 1),
        };
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
    drop(to_aggregator);
    let schedule = plan.model.schedule().clone();
    let target_at = move |seconds: f64| schedule.target_at(Duration::from_secs_f64(seconds));
    let watch = Watch {
        stop,
        give_up: crate::run::no_connection::GiveUp::of(plan),
        watchdog: Watchdog::new(
            workers,
            Instant::now(),
            deadline,
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
    let abandoned = match &aggregated {
        Ok(aggregated) => aggregated.abandoned.clone(),
        Err(_) => Vec::new(),
    };
    let abandoned_workers: Vec<usize> = abandoned.iter().map(|&(worker, _)| worker).collect();
    // A worker's own error (a script's init failing) says more than the
    // aggregator's "worker lost": joined first. An abandoned worker's
    // thread is left running (watchdog.rs): joining it would never end.
    for (index, thread) in threads.into_iter().enumerate() {
        if abandoned_workers.contains(&index) {
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
    let aggregated = aggregated?;
    let rendezvous = rendezvous_results(rendezvous.as_deref(), options.workload.as_deref());
    let fed_out = aggregated.fed_out.clone();
    // Given up with nothing connected (no_connection.rs): no interruption.
    let interrupted = stop.is_stopped() && !aggregated.gave_up;
    let stop_reason = if aggregated.gave_up {
        Some("no_connection".into())
    } else if !abandoned.is_empty() {
        Some("worker_stuck".into())
    } else {
        stop_reason(
            &aggregated,
            options.workload.as_deref(),
            phases.as_deref(),
            interrupted,
            (budget, limit),
        )
    };
    let recording = Recording {
        started_at,
        elapsed: aggregated.elapsed,
        interrupted,
        dns,
        total: aggregated.total,
        timeseries: aggregated.timeseries,
        event_loop,
        tls: connector.tls.as_ref().and_then(|tls| tls.negotiated.get()),
        seed: matches!(
            plan.model,
            LoadModel::Rate {
                arrival: stampede_plan::Arrival::Poisson,
                ..
            }
        )
        .then_some(seed),
        checks: options
            .workload
            .as_ref()
            .map(|w| w.check_names())
            .unwrap_or_default(),
        judged: options
            .workload
            .as_ref()
            .is_some_and(|w| w.judges_responses()),
        stop_reason,
        groups: options
            .workload
            .as_ref()
            .map(|w| w.group_names(&plan.model, w.groups.len() > 1))
            .unwrap_or_default(),
    };
    let dns = match &connector.addresses {
        Some(book) => Some(book.report()),
        // Several addresses, every connection on the first.
        None if addrs.len() > 1 => Some(crate::net::dns::report_first(
            &addrs,
            recording.total.counters.connect_attempts,
        )),
        None => None,
    };
    let script = options.workload.as_ref().and_then(|w| w.script.as_ref());
    let abandoned: Vec<Abandoned> = (abandoned.iter())
        .map(|&(worker, (snapshots, unreported))| Abandoned {
            worker,
            hook: script.and_then(|s| s.busy_in(worker)),
            grace: aggregated.grace,
            snapshots,
            unreported,
        })
        .collect();
    let feed_ran_out = groups_fed_out(&fed_out, &placement, options.workload.as_deref());
    Ok(Finished {
        rendezvous,
        feed_ran_out,
        recording,
        // The writer ends when every worker let go of its log, which an
        // abandoned one never does: its log is not waited for.
        request_log: request_log
            .filter(|_| abandoned.is_empty())
            .map(RequestLog::finish),
        dns,
        abandoned,
    })
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

/// Why the run stopped before its duration or count, if it did
/// (docs/result-schema.md, `stop_reason`): a unique feeder ran out and
/// with it the run (not when another group went on to the end), a step
/// failed under `on_error = "stop_run"`, the script called `thread:stop()`
/// in every thread, or every group ended by itself (its iterations walked,
/// its users stopped or its duration over) before the run's `-d` or `-n`.
fn stop_reason(
    aggregated: &Aggregated,
    workload: Option<&crate::workload::WorkloadSpec>,
    phases: Option<&crate::workload::RunPhases>,
    interrupted: bool,
    (budget, limit): (Option<u64>, Option<Duration>),
) -> Option<String> {
    if phases.is_some_and(|p| p.run_stopped()) {
        return Some("stop_run".into());
    }
    let before_limit = limit.is_none_or(|d| aggregated.elapsed < d);
    let under_count = budget.is_none_or(|n| aggregated.total.counters.sent < n);
    let early = !interrupted && before_limit && under_count;
    if !early {
        return None;
    }
    if aggregated.total.feed_exhausted {
        return Some("feed_exhausted".into());
    }
    let workload = workload?;
    if workload
        .script
        .as_ref()
        .is_some_and(|s| s.stopped_every_thread())
    {
        return Some("script_stopped".into());
    }
    let groups = &workload.groups;
    let bounded = groups.iter().all(|g| g.sequential && g.is_bounded());
    bounded.then(|| "groups_done".into())
}

/// The groups (by name, or number from 1) of the workers whose unique
/// feeder ran out (`fed_out`), each once, in group order.
fn groups_fed_out(
    fed_out: &[bool],
    placement: &[(usize, usize, usize)],
    workload: Option<&crate::workload::WorkloadSpec>,
) -> Vec<String> {
    let mut groups: Vec<usize> = (placement.iter().zip(fed_out))
        .filter(|&(_, &out)| out)
        .map(|(&(group, _, _), _)| group)
        .collect();
    groups.sort_unstable();
    groups.dedup();
    let name = |group: usize| {
        workload
            .and_then(|w| w.groups.get(group))
            .and_then(|g| g.name.clone())
            .unwrap_or_else(|| (group + 1).to_string())
    };
    groups.into_iter().map(name).collect()
}

/// How long the last (possibly partial) second of a run lasted: up to a
/// second and the boundary slack, when the stop came just after a boundary
/// and its responses joined the second before.
fn last_second_length(elapsed: Duration) -> f64 {
    let seconds = second_of(elapsed) as f64;
    elapsed.as_secs_f64() - seconds
}

/// What the aggregator hands back once every worker has finished.
struct Aggregated {
    total: Snapshot,
    elapsed: Duration,
    timeseries: Vec<SecondPoint>,
    /// The run was stopped because nothing could connect (no_connection.rs).
    gave_up: bool,
    /// The workers the watchdog gave up on, each with what is known of
    /// its lost figures (`Watchdog::lost`).
    abandoned: Vec<(usize, (u32, Duration))>,
    grace: Duration,
    /// Per worker: its unique feeder ran out of rows.
    fed_out: Vec<bool>,
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
        if let Some((builder, sink)) = intervals.as_deref_mut() {
            let last = message.finished_at.is_some();
            builder.add(
                message.worker,
                message.started,
                &message.snapshot,
                last,
                sink.as_mut(),
            );
        }
        if let Some(at) = message.finished_at {
            finished[message.worker] = true;
            last_finish = last_finish.max(at);
        }
        let last = message.finished_at.is_some();
        observer.on_worker_interval(message.worker, &message.snapshot, last);
        observer.on_snapshot(measure_start.elapsed(), &message.snapshot, &total);
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
