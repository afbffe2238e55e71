//! The load models over WebSocket connections on tokio. The closed model:
//! each active slot keeps one message in flight, sending the next when the
//! last is answered; slots above the connection schedule close (1000) and
//! park, as closed.rs's do. The open model: the pacer's intended instants
//! (drive/open.rs, `run_pacer_with`) go to the most recently idle
//! connection, a new one under `-c`, or the backlog, and latency counts
//! from the intended instant. `-n` counts messages.

use crate::drive::closed::ActiveSlots;
use crate::drive::open::{run_pacer_with, Dispatcher};
use crate::drive::ws_slot::WsSlot;
use crate::plan::worker_plan::OpenLoad;
use crate::worker::context::ConnectionContext;
use std::rc::Rc;
use std::time::Instant;

/// Runs slot `index` of the closed model until the budget is spent (a
/// duration run is ended by the worker dropping the task).
pub(crate) async fn run_ws_closed_slot(
    ctx: Rc<ConnectionContext>,
    gate: Rc<ActiveSlots>,
    index: usize,
    seed: u64,
) {
    let config = ctx.websocket.clone().expect("a WebSocket run");
    let mut slot = WsSlot::new(index, seed);
    loop {
        if !gate.is_active(index) {
            slot.close(&ctx).await;
            gate.wait_until_active(index).await;
        }
        if !ctx.state.claim_budget() {
            slot.close(&ctx).await;
            return;
        }
        ctx.state.begin_request();
        slot.round_trip(&ctx, &config, Instant::now()).await;
    }
}

/// The open model's pacer, its instants carried by WebSocket slots.
pub(crate) async fn run_ws_pacer(
    ctx: Rc<ConnectionContext>,
    load: OpenLoad,
    measure_start: Instant,
    end: Option<Instant>,
    seed: u64,
) {
    run_pacer_with(
        ctx,
        load,
        measure_start,
        end,
        move |ctx, dispatcher, slot, intended| {
            let task = run_ws_open_slot(ctx.clone(), dispatcher.clone(), slot, intended, seed);
            tokio::task::spawn_local(task);
            true
        },
    )
    .await;
}

/// One connection of the open model: its message, then the oldest backlog
/// entry or a park as idle until the dispatch hands it the next.
async fn run_ws_open_slot(
    ctx: Rc<ConnectionContext>,
    dispatcher: Rc<Dispatcher>,
    index: usize,
    first: Instant,
    seed: u64,
) {
    let config = ctx.websocket.clone().expect("a WebSocket run");
    let mut slot = WsSlot::new(index, seed);
    let mut job = first;
    loop {
        let lag = Instant::now().saturating_duration_since(job);
        ctx.state.begin_intended(job, lag);
        slot.round_trip(&ctx, &config, job).await;
        job = dispatcher.next_job(index).await;
    }
}
