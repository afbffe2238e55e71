//! One worker thread: its own current-thread tokio runtime, its connection
//! slots, its recorder. It sends a [`Snapshot`] to the aggregator every
//! [`SNAPSHOT_INTERVAL`] and a final one when it stops.

use crate::connection::{run_connection, ConnectionContext};
use crate::worker_state::WorkerState;
use stampede_metrics::Snapshot;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// How often workers hand their interval to the aggregator.
pub const SNAPSHOT_INTERVAL: Duration = Duration::from_millis(250);

/// What a worker needs to know, all owned so it can move to the thread.
#[derive(Debug, Clone)]
pub struct WorkerPlan {
    pub index: usize,
    pub addr: SocketAddr,
    pub request: Arc<[u8]>,
    pub head_request: bool,
    pub keepalive: bool,
    pub connect_timeout: Duration,
    pub timeout: Duration,
    pub connections: usize,
    /// This worker's exact share of `-n`, if any.
    pub budget: Option<u64>,
    /// When to stop regardless of the budget.
    pub deadline: Option<Instant>,
}

/// A message from a worker to the aggregator.
#[derive(Debug)]
pub struct WorkerMessage {
    pub worker: usize,
    pub snapshot: Snapshot,
    /// Set on the worker's last message, with the instant it stopped.
    pub finished_at: Option<Instant>,
}

/// Runs the worker to completion on the calling thread.
pub fn run_worker(
    plan: WorkerPlan,
    mut stop: watch::Receiver<bool>,
    to_aggregator: mpsc::Sender<WorkerMessage>,
) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let local = tokio::task::LocalSet::new();
    let index = plan.index;
    local.block_on(&runtime, async move {
        let state = Rc::new(WorkerState::new(plan.budget));
        let context = Rc::new(ConnectionContext {
            addr: plan.addr,
            request: Rc::from(&plan.request[..]),
            head_request: plan.head_request,
            keepalive: plan.keepalive,
            connect_timeout: plan.connect_timeout,
            timeout: plan.timeout,
            state: state.clone(),
        });
        let handles: Vec<_> = (0..plan.connections)
            .map(|_| tokio::task::spawn_local(run_connection(context.clone())))
            .collect();
        let abort_handles: Vec<_> = handles.iter().map(|h| h.abort_handle()).collect();
        let all_done = async {
            for handle in handles {
                let _ = handle.await;
            }
        };
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
        let snapshots = async {
            let mut ticker = tokio::time::interval(SNAPSHOT_INTERVAL);
            ticker.tick().await;
            loop {
                ticker.tick().await;
                let snapshot = state.recorder.borrow_mut().take_interval();
                let message = WorkerMessage {
                    worker: index,
                    snapshot,
                    finished_at: None,
                };
                if to_aggregator.send(message).is_err() {
                    return;
                }
            }
        };
        tokio::select! {
            _ = all_done => {}
            _ = deadline => {}
            _ = stopped => {}
            _ = snapshots => {}
        }
        let finished_at = Instant::now();
        for handle in abort_handles {
            handle.abort();
        }
        let mut recorder = state.recorder.borrow_mut();
        recorder.record_unfinished(state.in_flight());
        let _ = to_aggregator.send(WorkerMessage {
            worker: index,
            snapshot: recorder.take_interval(),
            finished_at: Some(finished_at),
        });
    });
    Ok(())
}
