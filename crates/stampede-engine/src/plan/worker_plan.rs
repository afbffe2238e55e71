//! What one worker is told to do ([`WorkerPlan`], its share of the load) and
//! what it tells the aggregator ([`WorkerMessage`]). A leaf module: the
//! engine builds these, the tokio worker (worker.rs) and the reactors
//! (reactor/) read them, and none of those import one another for it.

use crate::net::transport::ConnectorSpec;
use crate::plan::h2_request::H2Request;
use stampede_metrics::Snapshot;
use stampede_plan::{Arrival, EventLoop, Schedule};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often workers hand their interval to the aggregator, unless
/// [`crate::run::engine::RunOptions::snapshot_interval`] says otherwise.
pub const SNAPSHOT_INTERVAL: Duration = Duration::from_millis(250);

/// This worker's share of the load model.
#[derive(Debug, Clone)]
pub(crate) enum WorkerLoad {
    Closed {
        /// The total connection schedule; this worker runs its share.
        schedule: Schedule,
        warmup_target: f64,
        /// Slots this worker may ever need.
        slots: usize,
    },
    Open(OpenLoad),
}

/// What a worker needs to know, all owned so it can move to the thread.
#[derive(Debug, Clone)]
pub(crate) struct WorkerPlan {
    pub index: usize,
    /// This worker's place among the workers that share its load: its
    /// group's (a scenario with several groups), else all of them.
    pub share: (usize, usize),
    /// Its group of the workload (0 without groups).
    pub group: usize,
    /// How to open connections (endpoint, proxy tunnel, TLS, source addresses).
    pub connector: ConnectorSpec,
    pub request: Arc<[u8]>,
    /// A mix of requests (`--targets`): bytes and HEAD flag of each.
    pub mix: Vec<(Arc<[u8]>, bool)>,
    /// The weighted order of the mix.
    pub mix_order: Arc<[u16]>,
    /// HTTP/2 instead of HTTP/1.1: the requests in HTTP/2 form and the
    /// streams per connection.
    pub http2: Option<H2Plan>,
    /// HTTP/3 over QUIC instead (each worker opens its own endpoint).
    pub http3: Option<crate::plan::h3_plan::H3Plan>,
    /// Requests written at once per connection (HTTP/1.1 pipelining).
    pub pipeline: usize,
    pub head_request: bool,
    pub keepalive: bool,
    pub timeout: Duration,
    pub load: WorkerLoad,
    /// This worker's exact share of `-n`, if any.
    pub budget: Option<u64>,
    /// When measurement starts (after warm-up).
    pub measure_start: Instant,
    /// Where the load's schedule (ramp-up, stages, rate) starts: the
    /// measurement's start, or a scenario group's own later start
    /// (group_start.rs).
    pub load_start: Instant,
    /// A scenario's group clock (phases, start delays, `stop_run`); `None`
    /// when no group uses those keys.
    pub phases: Option<Arc<crate::workload::RunPhases>>,
    /// The scenario steps' rendezvous points, shared by every worker;
    /// `None` when no step has one.
    pub rendezvous: Option<Arc<crate::workload::RendezvousPoints>>,
    /// When to stop regardless of the budget.
    pub deadline: Option<Instant>,
    /// What drives the connections: a reactor (epoll, io_uring) or tokio.
    pub event_loop: EventLoop,
    /// How often to hand an interval snapshot to the aggregator.
    pub snapshot_interval: Duration,
    /// When connections are retired (`--conn-max-requests`, `--conn-max-age`).
    pub lifetime: crate::plan::conn_lifetime::Lifetime,
    /// Redirects to follow (`--redirects N`, or a step's
    /// `follow_redirects = true`; `None`: none).
    pub redirect: Option<crate::redirects::redirect::RedirectRule>,
    /// `--redirects N` was given: a step without `follow_redirects` follows.
    pub follows_redirects: bool,
    /// `--decode`: every encoded body is decoded and its bytes counted.
    pub decode: bool,
    /// `--sse`: responses watched as streams of events.
    pub stream: stampede_plan::StreamSpec,
    /// Templates, feeders, checks and steps (`None`: fixed requests).
    pub workload: Option<Arc<crate::workload::WorkloadSpec>>,
    /// Seeds this worker's workload randomness (feeders, `rand_*`, think).
    pub seed: u64,
    /// A WebSocket run (`ws://`): the upgrade and the message, for every
    /// connection.
    pub websocket: Option<Arc<crate::plan::ws_plan::WsConfig>>,
}

/// The HTTP/2 part of a worker's plan.
#[derive(Debug, Clone)]
pub(crate) struct H2Plan {
    pub requests: Vec<H2Request>,
    pub streams: usize,
}

/// A message from a worker to the aggregator.
#[derive(Debug)]
pub(crate) struct WorkerMessage {
    pub worker: usize,
    /// The second of measurement the snapshot's interval belongs to.
    pub second: u64,
    /// When the snapshot's interval began, since measurement began (the
    /// interval log's grouping, `--hlog`).
    pub started: Duration,
    pub snapshot: Snapshot,
    /// Set on the worker's last message, with the instant it stopped.
    pub finished_at: Option<Instant>,
}

/// The open-model load of one worker.
#[derive(Debug, Clone)]
pub(crate) struct OpenLoad {
    /// The whole run's rate, requests/s, over time from `measure_start`;
    /// this worker sends its share of the instants (see [`Instants`]).
    pub per_s: Schedule,
    /// The whole run's rate during warm-up.
    pub warmup_rate: f64,
    pub max_connections: usize,
    pub arrival: Arrival,
    pub seed: u64,
    /// This worker (from 0) and how many share the instants.
    pub worker: usize,
    pub workers: usize,
    /// A group's `total_iterations`: this worker's share of the instants
    /// (the run's first N, as the workers share them); `None`: no count.
    pub count: Option<u64>,
    /// `--pace-window`: how long after an intended instant the worker may
    /// wake to send it with those due meanwhile (see [`Pacer::wake_for`]).
    ///
    /// [`Pacer::wake_for`]: crate::worker::pacer::Pacer::wake_for
    pub pace_window: Duration,
    /// `--batch-reads`: the reactor waits for answers at most once per
    /// `pace_window` (drive/reactor/mod.rs), and HTTP/1.1 answers take
    /// the kernel's receive time (drive/reactor/rx_stamp.rs).
    pub batch_reads: bool,
}

/// A stop this close after a second boundary belongs to the second before
/// it: a run of `-d 5s` ends a hair after 5.000 s and has five full seconds,
/// and the last responses of a run that ended 5 ms into a second are not a
/// second of their own (62 responses in 5 ms were charted as 12,357 req/s).
const BOUNDARY_SLACK: Duration = Duration::from_millis(50);

/// The second of the run a final snapshot taken at `elapsed` belongs to.
pub(crate) fn second_of(elapsed: Duration) -> u64 {
    elapsed.saturating_sub(BOUNDARY_SLACK).as_secs()
}

#[cfg(test)]
impl WorkerPlan {
    /// A plan of one closed-model slot on tokio to 127.0.0.1:9 (nothing is
    /// connected: tests drive the books by hand), sending `request`.
    pub(crate) fn for_tests(request: &[u8]) -> WorkerPlan {
        let start = Instant::now();
        WorkerPlan {
            index: 0,
            share: (0, 1),
            group: 0,
            connector: ConnectorSpec {
                endpoint: crate::net::transport::Endpoint::Tcp(([127, 0, 0, 1], 9).into()),
                addresses: None,
                source_addrs: Vec::new(),
                tls: None,
                tunnel_to: None,
                connect_timeout: Duration::from_secs(1),
                require_h2: false,
            },
            request: Arc::from(request),
            mix: Vec::new(),
            mix_order: Arc::from(&[][..]),
            http2: None,
            http3: None,
            pipeline: 1,
            head_request: false,
            keepalive: true,
            timeout: Duration::from_secs(1),
            load: WorkerLoad::Closed {
                schedule: Schedule::constant(1.0, Duration::from_secs(1)),
                warmup_target: 1.0,
                slots: 1,
            },
            budget: None,
            measure_start: start,
            load_start: start,
            phases: None,
            rendezvous: None,
            deadline: None,
            event_loop: EventLoop::Tokio,
            snapshot_interval: SNAPSHOT_INTERVAL,
            lifetime: crate::plan::conn_lifetime::Lifetime::new(&Default::default()),
            redirect: None,
            follows_redirects: false,
            decode: false,
            stream: Default::default(),
            workload: None,
            seed: 1,
            websocket: None,
        }
    }
}
