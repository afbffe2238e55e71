//! One worker thread: its own current-thread tokio runtime, its connection
//! slots, its recorder. It runs its share of the load model, and sends a
//! [`Snapshot`] to the aggregator every [`SNAPSHOT_INTERVAL`] of measurement
//! and a final one when it stops.

use crate::drive::closed::{control_slots, run_closed_slot, ActiveSlots};
use crate::drive::h2::h2_client::run_h2_slot;
use crate::drive::open::run_pacer;
use crate::drive::ws_load::WsEnd;
use crate::drive::ws_slot::CLOSE_WAIT;
use crate::plan::h2_request::H2Context;
use crate::plan::worker_plan::{WorkerLoad, WorkerMessage, WorkerPlan};
use crate::worker::context::{connection_context, ConnectionContext};
use crate::worker::housekeeping::{Housekeeping, Tick};
use crate::worker::request_log::WorkerLogHandle;
use crate::worker::worker_state::WorkerState;
use stampede_plan::EventLoop;
use std::rc::Rc;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio::task::AbortHandle;

/// Runs the worker to completion on the calling thread.
pub(crate) fn run_worker(
    mut plan: WorkerPlan,
    stop: watch::Receiver<bool>,
    to_aggregator: mpsc::Sender<WorkerMessage>,
    log: Option<WorkerLogHandle>,
) -> std::io::Result<()> {
    // Reports this worker's end to its group's clock on every way out.
    let _ticket = crate::worker::group_start::await_group_start(&mut plan, &stop);
    if plan.event_loop != EventLoop::Tokio {
        return crate::drive::reactor::run_reactor_worker(plan, stop, to_aggregator, log);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, drive(plan, stop, to_aggregator, log))
}

/// Starts the load and runs the housekeeping until it says stop or the load
/// is done; then counts what is still in flight as unfinished and sends the
/// last snapshot.
async fn drive(
    plan: WorkerPlan,
    stop: watch::Receiver<bool>,
    to_aggregator: mpsc::Sender<WorkerMessage>,
    log: Option<WorkerLogHandle>,
) -> std::io::Result<()> {
    let state = Rc::new(WorkerState::for_plan(&plan));
    let context = Rc::new(connection_context(&plan, state.clone(), log)?);
    let ws_end = plan
        .websocket
        .is_some()
        .then(|| Rc::new(crate::drive::ws_load::WsEnd::default()));
    let (load_done, abort_handles) = start_load(&plan, &context, ws_end.as_ref());
    // The housekeeping also ends the worker when its workload says so
    // (wrk's thread:stop(), a unique feeder drained).
    let mut housekeeping = Housekeeping::new(
        &plan,
        &state,
        context.log.as_ref(),
        context.workload.as_ref(),
        &to_aggregator,
        stop.clone(),
        Instant::now(),
    );
    tokio::select! {
        _ = load_done => {}
        _ = keep_house(&mut housekeeping, stop) => {}
    }
    let finished_at = Instant::now();
    if let Some(end) = &ws_end {
        // WebSocket connections end with a close, cut off or not (the
        // epoll reactor's do the same, reactor/mod.rs); a moment at most.
        let wait = CLOSE_WAIT.min(plan.timeout) + Duration::from_millis(100);
        let _ = tokio::time::timeout(wait, end.close_all()).await;
    }
    for handle in abort_handles {
        handle.abort();
    }
    housekeeping.finish(finished_at);
    if plan.http3.is_some() {
        // The aborted tasks let go of the endpoint, which closes its
        // connections (h3_conn.rs): a moment for those packets to leave.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

/// Ticks `housekeeping` until it says stop, sleeping until its next wake or
/// until `stop` changes (a stop is then seen at once, not at the next
/// control turn).
async fn keep_house(housekeeping: &mut Housekeeping<'_>, mut stop: watch::Receiver<bool>) {
    let mut engine_gone = false;
    loop {
        if housekeeping.tick(Instant::now()) == Tick::Stop {
            return;
        }
        let wake = tokio::time::sleep_until(housekeeping.next_wake().into());
        if engine_gone {
            wake.await;
            continue;
        }
        tokio::select! {
            _ = wake => {}
            changed = stop.changed() => match changed {
                Ok(()) => housekeeping.look_at_stop(),
                // The engine is gone: the next snapshot's send tells.
                Err(_) => engine_gone = true,
            },
        }
    }
}

/// Spawns the load model's tasks; returns a future that ends when the load
/// has nothing more to send, and the handles to abort everything at the end.
fn start_load(
    plan: &WorkerPlan,
    context: &Rc<ConnectionContext>,
    ws_end: Option<&Rc<WsEnd>>,
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
                plan.load_start,
                plan.share.0,
                plan.share.1,
            ));
            aborts.push(control.abort_handle());
            if let Some(end) = ws_end {
                for index in 0..*slots {
                    let task = crate::drive::ws_load::run_ws_closed_slot(
                        context.clone(),
                        gate.clone(),
                        end.clone(),
                        index,
                        plan.seed,
                    );
                    handles.push(tokio::task::spawn_local(task));
                }
            } else if let Some(h3) = &plan.http3 {
                let h3 = Rc::new(crate::drive::h3::h3_conn::H3Context::new(h3, plan.index));
                handles.extend(crate::drive::h3::h3_client::spawn_closed(
                    context, &h3, &gate, *slots,
                ));
            } else {
                match &plan.http2 {
                    Some(h2) => {
                        let h2 = Rc::new(H2Context {
                            requests: h2.requests.clone(),
                            streams: h2.streams,
                        });
                        for index in 0..*slots {
                            let task =
                                run_h2_slot(context.clone(), h2.clone(), gate.clone(), index);
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
        }
        WorkerLoad::Open(load) if ws_end.is_some() => {
            let pacer = crate::drive::ws_load::run_ws_pacer(
                context.clone(),
                ws_end.expect("matched").clone(),
                load.clone(),
                plan.load_start,
                plan.deadline,
                plan.seed,
            );
            handles.push(tokio::task::spawn_local(pacer));
        }
        WorkerLoad::Open(load) if plan.http3.is_some() => {
            let h3 = plan
                .http3
                .as_ref()
                .map(|h3| crate::drive::h3::h3_conn::H3Context::new(h3, plan.index));
            let pacer = crate::drive::h3::h3_open::run_h3_pacer(
                context.clone(),
                Rc::new(h3.expect("matched on http3")),
                load.clone(),
                plan.measure_start,
                plan.deadline,
            );
            handles.push(tokio::task::spawn_local(pacer));
        }
        WorkerLoad::Open(load) if plan.http2.is_some() => {
            let h2 = plan.http2.as_ref().map(|h2| H2Context {
                requests: h2.requests.clone(),
                streams: h2.streams,
            });
            let pacer = crate::drive::h2::h2_open::run_h2_pacer(
                context.clone(),
                Rc::new(h2.expect("matched on http2")),
                load.clone(),
                plan.load_start,
                plan.deadline,
            );
            handles.push(tokio::task::spawn_local(pacer));
        }
        WorkerLoad::Open(load) => {
            let pacer = run_pacer(
                context.clone(),
                load.clone(),
                plan.load_start,
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
        state.drained().await;
    };
    (done, aborts)
}
