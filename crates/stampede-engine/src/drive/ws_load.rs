//! The load models over WebSocket connections on tokio. The closed model:
//! each active slot keeps one message in flight, sending the next when the
//! last is answered; slots above the connection schedule close (1000) and
//! park, as closed.rs's do. The open model: the pacer's intended instants
//! (drive/open.rs, `run_pacer_with`) go to the most recently idle
//! connection, a new one under `-c`, or the backlog, and latency counts
//! from the intended instant. `-n` counts messages. However the load ends
//! (the budget spent, the run's deadline, a stop), every connection closes
//! with 1000 through [`WsEnd`], as on the epoll reactor.

use crate::drive::closed::ActiveSlots;
use crate::drive::open::{run_pacer_with, Dispatcher};
use crate::drive::ws_slot::WsSlot;
use crate::plan::worker_plan::OpenLoad;
use crate::worker::context::ConnectionContext;
use std::cell::Cell;
use std::rc::Rc;
use std::time::Instant;
use tokio::sync::Notify;

/// How a worker's WebSocket slots end together: asked (the load is over,
/// or the run's deadline or a stop came), each cuts its round trip short
/// and closes its connection (`WsSlot::close`: 1000, a message in flight
/// left unfinished), and the worker waits until the last has closed.
#[derive(Debug, Default)]
pub(crate) struct WsEnd {
    /// Set when the slots are to close.
    asked: Cell<bool>,
    ask: Notify,
    /// Slots still running.
    open: Cell<usize>,
    /// Told whenever a slot has closed.
    closed_one: Notify,
}

impl WsEnd {
    /// A slot starts: it is waited for.
    fn enter(&self) {
        self.open.set(self.open.get() + 1);
    }

    /// A slot has closed its connection and ends.
    fn leave(&self) {
        self.open.set(self.open.get() - 1);
        self.closed_one.notify_waiters();
    }

    /// Resolves once the slots are asked to close.
    async fn asked(&self) {
        // Made before the flag is read, so that an ask between the two is
        // not missed.
        let ask = self.ask.notified();
        if !self.asked.get() {
            ask.await;
        }
    }

    /// Asks every slot to close its connection; resolves when all have
    /// (the caller bounds the wait).
    pub(crate) async fn close_all(&self) {
        self.asked.set(true);
        self.ask.notify_waiters();
        loop {
            let closed = self.closed_one.notified();
            if self.open.get() == 0 {
                return;
            }
            closed.await;
        }
    }
}

/// Runs slot `index` of the closed model until the budget is spent or
/// `end` asks, then closes its connection.
pub(crate) async fn run_ws_closed_slot(
    ctx: Rc<ConnectionContext>,
    gate: Rc<ActiveSlots>,
    end: Rc<WsEnd>,
    index: usize,
    seed: u64,
) {
    let mut slot = WsSlot::new(index, seed);
    end.enter();
    tokio::select! {
        biased;
        () = end.asked() => {}
        () = closed_round_trips(&ctx, &gate, &mut slot, index) => {}
    }
    slot.close(&ctx).await;
    end.leave();
}

/// The closed model's round trips on `slot`, until the budget is spent.
async fn closed_round_trips(
    ctx: &ConnectionContext,
    gate: &ActiveSlots,
    slot: &mut WsSlot,
    index: usize,
) {
    loop {
        if !gate.is_active(index) {
            slot.close(ctx).await;
            gate.wait_until_active(index).await;
        }
        // `--ws-rate`: the slot's message waits for its instant.
        let due = slot.conn.next_due().filter(|&due| due > Instant::now());
        if let Some(due) = due {
            // Its idle connection is read meanwhile: pings, a close, an end.
            tokio::select! {
                () = tokio::time::sleep_until(due.into()) => {}
                never = slot.keep_reading(ctx) => match never {},
            }
        }
        if !ctx.state.claim_budget() {
            return;
        }
        ctx.state.begin_request();
        let intended = slot.conn.claim_due(ctx, Instant::now());
        if !slot.round_trip(ctx, intended).await {
            return;
        }
    }
}

/// The open model's pacer, its instants carried by WebSocket slots. When
/// the budget is spent (`-n`) and nothing is in flight, `end` closes each
/// connection with 1000, as in the closed model; at a duration run's end
/// the worker does (the pacer is then stopped where it is).
pub(crate) async fn run_ws_pacer(
    ctx: Rc<ConnectionContext>,
    end: Rc<WsEnd>,
    load: OpenLoad,
    measure_start: Instant,
    deadline: Option<Instant>,
    seed: u64,
) {
    let slots = end.clone();
    run_pacer_with(
        ctx.clone(),
        load,
        measure_start,
        deadline,
        move |ctx, dispatcher, slot, intended| {
            slots.enter();
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
    end.close_all().await;
}

/// One connection of the open model: its message, then the oldest backlog
/// entry or a park as idle until the dispatch hands it the next, until
/// `end` asks it to close.
async fn run_ws_open_slot(
    ctx: Rc<ConnectionContext>,
    dispatcher: Rc<Dispatcher>,
    end: Rc<WsEnd>,
    index: usize,
    first: Instant,
    seed: u64,
) {
    let mut slot = WsSlot::new(index, seed);
    let mut job = first;
    loop {
        let lag = Instant::now().saturating_duration_since(job);
        ctx.state.begin_intended(job, lag);
        tokio::select! {
            biased;
            () = end.asked() => break,
            _ = slot.round_trip(&ctx, job) => {}
        }
        tokio::select! {
            biased;
            () = end.asked() => break,
            next = dispatcher.next_job(index) => job = next,
            // An idle connection is read: pings, a close, an end.
            never = slot.keep_reading(&ctx) => match never {},
        }
    }
    slot.close(&ctx).await;
    end.leave();
}
