//! [`run`]: resolves the target, splits the plan over worker threads, and
//! merges their snapshots into one [`Recording`] while an [`Observer`] watches.

use crate::http1::encode_request;
use crate::worker::{run_worker, WorkerMessage, WorkerPlan};
use crate::EngineError;
use stampede_metrics::{Recording, Snapshot};
use stampede_plan::{Plan, StopCondition};
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant, SystemTime};
use tokio::sync::watch;

/// Watches a run as it goes (live view, progress line, or nothing).
pub trait Observer {
    /// Called for every snapshot a worker hands over, with the totals so far.
    fn on_snapshot(&mut self, elapsed: Duration, interval: &Snapshot, total: &Snapshot);
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
    pub fn new() -> StopHandle {
        StopHandle {
            sender: Arc::new(watch::channel(false).0),
        }
    }

    /// Asks the run to stop; safe to call from any thread, any number of times.
    pub fn stop(&self) {
        self.sender.send_replace(true);
    }

    pub fn is_stopped(&self) -> bool {
        *self.sender.borrow()
    }
}

/// Resolves the plan's host to the first address it names.
pub fn resolve(plan: &Plan) -> Result<SocketAddr, EngineError> {
    let host = plan.target.host.as_str();
    let error = |reason: String| EngineError::Resolve {
        host: host.to_string(),
        reason,
    };
    (host, plan.target.port)
        .to_socket_addrs()
        .map_err(|e| error(e.to_string()))?
        .next()
        .ok_or_else(|| error("no addresses".into()))
}

/// Splits `total` into `parts` shares that differ by at most one.
fn split_evenly(total: u64, parts: usize) -> impl Iterator<Item = u64> {
    let parts = parts as u64;
    (0..parts).map(move |i| total / parts + u64::from(i < total % parts))
}

/// Runs the plan to its stop condition (or until `stop`), returning the merged recording.
pub fn run(
    plan: &Plan,
    observer: &mut dyn Observer,
    stop: &StopHandle,
) -> Result<Recording, EngineError> {
    let addr = resolve(plan)?;
    let request: Arc<[u8]> = encode_request(plan).into();
    let started_at = SystemTime::now();
    let start = Instant::now();
    let (budget, limit) = match plan.stop {
        StopCondition::Duration(d) => (None, Some(d)),
        StopCondition::Requests { count, limit } => (Some(count), limit),
    };
    let deadline = limit.map(|d| start + d);
    let connection_shares: Vec<u64> = split_evenly(plan.connections as u64, plan.threads).collect();
    let (to_aggregator, from_workers) = mpsc::channel();
    let mut threads = Vec::with_capacity(plan.threads);
    let mut budget_given = 0u64;
    for (index, connections) in connection_shares.iter().copied().enumerate() {
        // -n is split in proportion to connections, exactly: the last worker
        // takes what rounding left.
        let worker_budget = budget.map(|count| {
            let share = if index + 1 == plan.threads {
                count - budget_given
            } else {
                count * connections / plan.connections as u64
            };
            budget_given += share;
            share
        });
        let worker_plan = WorkerPlan {
            index,
            addr,
            request: request.clone(),
            head_request: plan.request.method == "HEAD",
            keepalive: plan.keepalive,
            connect_timeout: plan.connect_timeout,
            timeout: plan.timeout,
            connections: connections as usize,
            budget: worker_budget,
            deadline,
        };
        let receiver = stop.sender.subscribe();
        let sender = to_aggregator.clone();
        let thread = std::thread::Builder::new()
            .name(format!("stampede-worker-{index}"))
            .spawn(move || run_worker(worker_plan, receiver, sender))
            .map_err(|source| EngineError::Worker {
                worker: index,
                source,
            })?;
        threads.push(thread);
    }
    drop(to_aggregator);
    let (total, finished_at) = aggregate(from_workers, plan.threads, start, observer)?;
    for (index, thread) in threads.into_iter().enumerate() {
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
    Ok(Recording {
        started_at,
        elapsed: finished_at.saturating_duration_since(start),
        interrupted: stop.is_stopped(),
        total,
    })
}

/// Merges worker messages until every worker has sent its last one.
fn aggregate(
    messages: mpsc::Receiver<WorkerMessage>,
    workers: usize,
    start: Instant,
    observer: &mut dyn Observer,
) -> Result<(Snapshot, Instant), EngineError> {
    let mut total = Snapshot::default();
    let mut finished = vec![false; workers];
    let mut last_finish = start;
    while finished.iter().any(|done| !done) {
        let Ok(message) = messages.recv() else {
            let lost = finished.iter().position(|done| !done).unwrap_or(0);
            return Err(EngineError::WorkerLost(lost));
        };
        total.merge(&message.snapshot);
        if let Some(at) = message.finished_at {
            finished[message.worker] = true;
            last_finish = last_finish.max(at);
        }
        observer.on_snapshot(start.elapsed(), &message.snapshot, &total);
    }
    Ok((total, last_finish))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_differ_by_at_most_one_and_sum_up() {
        let shares: Vec<u64> = split_evenly(10, 3).collect();
        assert_eq!(shares, vec![4, 3, 3]);
        assert_eq!(split_evenly(2, 4).sum::<u64>(), 2);
    }
}
