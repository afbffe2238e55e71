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
use std::cell::Cell;
use std::rc::Rc;
use std::time::Instant;
use tokio::sync::Notify;

/// Runs slot `index` of the closed model until the budget is spent (a
/// duration run is ended by the worker dropping the task).
pub(crate) async fn run_ws_closed_slot(
    ctx: Rc<ConnectionContext>,
    gate: Rc<ActiveSlots>,
    index: usize,
    seed: u64,
) {
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
        slot.round_trip(&ctx, Instant::now()).await;
    }
}

/// The open model's end: once the pacer has handed out its last instant
/// and every message is answered, the slots close their connections.
#[derive(Debug, Default)]
struct Closing {
    /// Set when the slots are to close.
    asked: Cell<bool>,
    ask: Notify,
    /// Slots still open.
    open: Cell<usize>,
    /// Told when the last slot has closed.
    all_closed: Notify,
}

/// The open model's pacer, its instants carried by WebSocket slots. When
/// the budget is spent (`-n`) and nothing is in flight, each connection
/// closes with 1000, as in the closed model; a duration run's connections
/// are stopped where they are by the worker.
pub(crate) async fn run_ws_pacer(
    ctx: Rc<ConnectionContext>,
    load: OpenLoad,
    measure_start: Instant,
    end: Option<Instant>,
    seed: u64,
) {
    let closing = Rc::new(Closing::default());
    let slots = closing.clone();
    run_pacer_with(
        ctx.clone(),
        load,
        measure_start,
        end,
        move |ctx, dispatcher, slot, intended| {
            slots.open.set(slots.open.get() + 1);
            let task = run_ws_open_slot(
                ctx.clone(),
                dispatcher.clone(),
                slots.clone(),
                slot,
                intended,
                seed,
            );
            tokio::task::spawn_local(task);
            true
        },
    )
    .await;
    ctx.state.drained().await;
    let all_closed = closing.all_closed.notified();
    closing.asked.set(true);
    closing.ask.notify_waiters();
    if closing.open.get() > 0 {
        all_closed.await;
    }
}

/// One connection of the open model: its message, then the oldest backlog
/// entry or a park as idle until the dispatch hands it the next, or until
/// the pacer asks it to close.
async fn run_ws_open_slot(
    ctx: Rc<ConnectionContext>,
    dispatcher: Rc<Dispatcher>,
    closing: Rc<Closing>,
    index: usize,
    first: Instant,
    seed: u64,
) {
    let mut slot = WsSlot::new(index, seed);
    let mut job = first;
    loop {
        let lag = Instant::now().saturating_duration_since(job);
        ctx.state.begin_intended(job, lag);
        slot.round_trip(&ctx, job).await;
        // Made before the flag is read, so that an ask between the two is
        // not missed.
        let asked = closing.ask.notified();
        if closing.asked.get() {
            break;
        }
        tokio::select! {
            next = dispatcher.next_job(index) => job = next,
            _ = asked => break,
        }
    }
    slot.close(&ctx).await;
    closing.open.set(closing.open.get() - 1);
    if closing.open.get() == 0 {
        closing.all_closed.notify_one();
    }
}
