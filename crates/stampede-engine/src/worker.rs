//! One worker thread: its own current-thread tokio runtime, its connection
//! slots, its recorder. It runs its share of the load model, and sends a
//! [`Snapshot`] to the aggregator every [`SNAPSHOT_INTERVAL`] of measurement
//! and a final one when it stops.

use crate::closed::{control_slots, run_closed_slot, ActiveSlots};
use crate::connection::ConnectionContext;
use crate::h2_client::{run_h2_slot, H2Context, H2Request};
use crate::open::{run_pacer, OpenLoad};
use crate::request_log::{WorkerLog, WorkerLogHandle};
use crate::transport::ConnectorSpec;
use crate::worker_state::WorkerState;
use stampede_metrics::Snapshot;
use stampede_plan::{EventLoop, Schedule};
use std::rc::Rc;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio::task::AbortHandle;

/// The worker's shared read buffer: large reads for bulk bodies, allocated once.
const SCRATCH_BYTES: usize = 64 * 1024;

/// How often workers hand their interval to the aggregator, unless
/// [`crate::RunOptions::snapshot_interval`] says otherwise.
pub const SNAPSHOT_INTERVAL: Duration = Duration::from_millis(250);

/// This worker's share of the load model.
#[derive(Debug, Clone)]
pub enum WorkerLoad {
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
pub struct WorkerPlan {
    pub index: usize,
    pub workers: usize,
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
    /// When to stop regardless of the budget.
    pub deadline: Option<Instant>,
    /// What drives the connections: a reactor (epoll, io_uring) or tokio.
    pub event_loop: EventLoop,
    /// How often to hand an interval snapshot to the aggregator.
    pub snapshot_interval: Duration,
}

/// The HTTP/2 part of a worker's plan.
#[derive(Debug, Clone)]
pub struct H2Plan {
    pub requests: Vec<H2Request>,
    pub streams: usize,
}

/// A message from a worker to the aggregator.
#[derive(Debug)]
pub struct WorkerMessage {
    pub worker: usize,
    /// The second of measurement the snapshot's interval belongs to.
    pub second: u64,
    pub snapshot: Snapshot,
    /// Set on the worker's last message, with the instant it stopped.
    pub finished_at: Option<Instant>,
}

/// Runs the worker to completion on the calling thread.
pub fn run_worker(
    plan: WorkerPlan,
    stop: watch::Receiver<bool>,
    to_aggregator: mpsc::Sender<WorkerMessage>,
    log: Option<WorkerLogHandle>,
) -> std::io::Result<()> {
    if plan.event_loop != EventLoop::Tokio {
        return crate::reactor::run_reactor_worker(plan, stop, to_aggregator, log);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, drive(plan, stop, to_aggregator, log));
    Ok(())
}

/// What the connections of a worker share, built from its plan.
pub(crate) fn connection_context(
    plan: &WorkerPlan,
    state: Rc<WorkerState>,
    log: Option<WorkerLogHandle>,
) -> ConnectionContext {
    ConnectionContext {
        connector: plan.connector.build(plan.index),
        request: Rc::from(&plan.request[..]),
        pipelined: plan.request.repeat(plan.pipeline.max(1)).into(),
        mix: plan
            .mix
            .iter()
            .map(|(bytes, head)| (Rc::from(&bytes[..]), *head))
            .collect(),
        mix_order: Rc::from(&plan.mix_order[..]),
        // Workers start at different places of the cycle so that a mix is
        // spread even when each sends few requests; the start must lie inside
        // the cycle, which may be shorter than the number of workers (a file
        // of one block has a cycle of one).
        mix_next: std::cell::Cell::new(plan.index % plan.mix_order.len().max(1)),
        head_request: plan.head_request,
        keepalive: plan.keepalive,
        timeout: plan.timeout,
        state,
        log: log.map(|handle| WorkerLog::new(handle, plan.measure_start)),
        scratch: std::cell::RefCell::new(vec![0u8; SCRATCH_BYTES].into_boxed_slice()),
    }
}

/// Starts the load, waits for the first of: load done, deadline, stop; then
/// counts what is still in flight as unfinished and sends the last snapshot.
async fn drive(
    plan: WorkerPlan,
    mut stop: watch::Receiver<bool>,
    to_aggregator: mpsc::Sender<WorkerMessage>,
    log: Option<WorkerLogHandle>,
) {
    let mut state = WorkerState::new(plan.budget, plan.mix.len());
    if matches!(plan.load, WorkerLoad::Open(_)) {
        state = state.with_window_start(plan.measure_start);
    }
    let state = Rc::new(state);
    let context = Rc::new(connection_context(&plan, state.clone(), log));
    let (load_done, abort_handles) = start_load(&plan, &context);
    let deadline = async {
        match plan.deadline {
            Some(at) => tokio::time::sleep_until(at.into()).await,
            None => std::future::pending().await,
        }
    };
    let stopped = async {
        while !*stop.borrow_and_update() {
            if stop.changed().await.is_err() {
                // The engine is gone; nothing would read our results.
                return;
            }
        }
    };
    let snapshots = send_snapshots(&plan, &state, context.log.as_ref(), &to_aggregator);
    tokio::select! {
        _ = load_done => {}
        _ = deadline => {}
        _ = stopped => {}
        _ = snapshots => {}
    }
    let finished_at = Instant::now();
    for handle in abort_handles {
        handle.abort();
    }
    if let Some(log) = &context.log {
        log.finish();
    }
    let second =
        crate::engine::second_of(finished_at.saturating_duration_since(plan.measure_start));
    let snapshot = state.final_snapshot();
    let _ = to_aggregator.send(WorkerMessage {
        worker: plan.index,
        second,
        snapshot,
        finished_at: Some(finished_at),
    });
}

/// Spawns the load model's tasks; returns a future that ends when the load
/// has nothing more to send, and the handles to abort everything at the end.
fn start_load(
    plan: &WorkerPlan,
    context: &Rc<ConnectionContext>,
) -> (impl std::future::Future<Output = ()>, Vec<AbortHandle>) {
    let mut handles = Vec::new();
    let mut aborts = Vec::new();
    match &plan.load {
        WorkerLoad::Closed {
            schedule,
            warmup_target,
            slots,
        } => {
            let gate = Rc::new(ActiveSlots::default());
            let control = tokio::task::spawn_local(control_slots(
                gate.clone(),
                schedule.clone(),
                *warmup_target,
                plan.measure_start,
                plan.index,
                plan.workers,
            ));
            aborts.push(control.abort_handle());
            match &plan.http2 {
                Some(h2) => {
                    let h2 = Rc::new(H2Context {
                        requests: h2.requests.clone(),
                        streams: h2.streams,
                    });
                    for index in 0..*slots {
                        let task = run_h2_slot(context.clone(), h2.clone(), gate.clone(), index);
                        handles.push(tokio::task::spawn_local(task));
                    }
                }
                None => {
                    for index in 0..*slots {
                        let task = run_closed_slot(context.clone(), gate.clone(), index);
                        handles.push(tokio::task::spawn_local(task));
                    }
                }
            }
        }
        WorkerLoad::Open(load) => {
            let pacer = run_pacer(
                context.clone(),
                load.clone(),
                plan.measure_start,
                plan.deadline,
            );
            handles.push(tokio::task::spawn_local(pacer));
        }
    }
    aborts.extend(handles.iter().map(|h| h.abort_handle()));
    let state = context.state.clone();
    let done = async move {
        for handle in handles {
            if let Err(error) = handle.await {
                if error.is_panic() {
                    // A task that panicked leaves its request in flight
                    // forever: fail the worker (the engine reports it lost)
                    // rather than wait for it.
                    std::panic::resume_unwind(error.into_panic());
                }
            }
        }
        // Open model: the pacer is done once the budget is spent; wait for
        // the requests it handed out.
        while state.in_flight() > 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    };
    (done, aborts)
}

/// Discards the warm-up, then hands an interval snapshot to the aggregator
/// every `plan.snapshot_interval`, tagged with the second it belongs to.
async fn send_snapshots(
    plan: &WorkerPlan,
    state: &WorkerState,
    log: Option<&WorkerLog>,
    to_aggregator: &mpsc::Sender<WorkerMessage>,
) {
    if plan.measure_start > Instant::now() {
        tokio::time::sleep_until(plan.measure_start.into()).await;
        state.end_warmup();
    }
    let every = plan.snapshot_interval;
    let first_tick = plan.measure_start + every;
    let mut ticker = tokio::time::interval_at(first_tick.into(), every);
    loop {
        let tick = ticker.tick().await.into_std();
        let interval_start = tick - every;
        let second = interval_start
            .saturating_duration_since(plan.measure_start)
            .as_secs();
        if let Some(log) = log {
            // A quiet run must not leave its lines waiting in a half batch.
            log.flush();
        }
        let snapshot = state.interval_snapshot();
        let message = WorkerMessage {
            worker: plan.index,
            second,
            snapshot,
            finished_at: None,
        };
        if to_aggregator.send(message).is_err() {
            return;
        }
    }
}
