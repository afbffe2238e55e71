//! The io_uring reactor (`--io uring`): sends are queued on the worker's
//! ring and each open connection has one multishot receive armed into a
//! provided buffer ring, so a whole batch of requests costs one syscall
//! (io_uring_enter) instead of a send, a receive and a share of an
//! epoll_wait each. Connects go through the ring too. A slot is an
//! HTTP/1.1 connection (slot.rs), or over `--http2` an HTTP/2 one carrying
//! several streams (h2_slot.rs). WebSocket (`ws://`) has its own slot
//! (ws.rs) on the same ring.

mod h2_slot;
mod ring;
mod slot;
mod ws;

use super::rx_stamp::RxStamps;
use super::{drive, longest_request, rx_stamps, slot_count, socket, ReactorSlot, Step};
use crate::exchange::h2_exchange::H2Wire;
use crate::plan::worker_plan::{WorkerMessage, WorkerPlan};
use crate::worker::context::ConnectionContext;
use h2_slot::H2Slot;
use ring::{Completion, Ring};
use slot::{Io, Slot};
use std::io;
use std::rc::Rc;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Completions one wait may bring when the kernel has more deferred work
/// (a little under its 20 per wait, as a receive may post several).
const DEFERRED_PER_WAIT: usize = 16;

/// Runs a worker on the io_uring reactor (see [`drive`]).
pub(super) fn run(
    plan: &WorkerPlan,
    stop: watch::Receiver<bool>,
    to_aggregator: &mpsc::Sender<WorkerMessage>,
    ctx: &ConnectionContext,
) -> io::Result<()> {
    if ctx.websocket.is_some() {
        return ws::run(plan, stop, to_aggregator, ctx);
    }
    let count = slot_count(plan);
    let ring = Ring::new(count)?;
    let target = socket::address_of(&ctx.connector.endpoint)?;
    let io = Io {
        ctx,
        ring: &ring,
        target: &target,
        // HTTP/2 sets TCP_NODELAY itself (h2_slot.rs).
        longest_request: longest_request(plan),
    };
    let now = Instant::now();
    if let Some(h2) = &plan.http2 {
        let wire = Rc::new(H2Wire::new(&h2.requests, h2.streams).map_err(io::Error::other)?);
        let mut slots: Vec<H2Slot> = (0..count)
            .map(|index| H2Slot::new(index as u32, wire.clone(), now))
            .collect();
        // Receive stamps are HTTP/1.1's (`--batch-reads`).
        return run_slots(plan, stop, to_aggregator, &io, &mut slots, None);
    }
    let rx = rx_stamps(plan).map(Rc::new);
    let mut slots: Vec<Slot> = (0..count)
        .map(|index| Slot::new(index as u32, ctx.head_request, now, rx.clone()))
        .collect();
    run_slots(plan, stop, to_aggregator, &io, &mut slots, rx)
}

/// What the loop asks of a slot of either kind.
trait UringSlot: for<'a> ReactorSlot<Io<'a>> {
    fn on_completion(&mut self, io: &Io, completion: &Completion) -> Step;
}

impl UringSlot for Slot {
    fn on_completion(&mut self, io: &Io, completion: &Completion) -> Step {
        Slot::on_completion(self, io, completion)
    }
}

impl UringSlot for H2Slot {
    fn on_completion(&mut self, io: &Io, completion: &Completion) -> Step {
        H2Slot::on_completion(self, io, completion)
    }
}

/// The loop itself, over slots of one kind.
fn run_slots<S: UringSlot>(
    plan: &WorkerPlan,
    stop: watch::Receiver<bool>,
    to_aggregator: &mpsc::Sender<WorkerMessage>,
    io: &Io,
    slots: &mut [S],
    rx: Option<Rc<RxStamps>>,
) -> io::Result<()> {
    let (ctx, ring) = (io.ctx, io.ring);
    let mut completions = Vec::with_capacity(4096);
    drive(
        plan,
        stop,
        to_aggregator,
        ctx,
        io,
        slots,
        |slots, turn, mut timeout| loop {
            ring.wait(timeout, &mut completions)?;
            if let Some(rx) = &rx {
                // The clocks receive stamps are read against.
                rx.woke();
            }
            for completion in &completions {
                let index = Slot::index_of(completion);
                if let Some(slot) = slots.get_mut(index) {
                    let step = slot.on_completion(io, completion);
                    turn.advance(io, ctx, slots, index, step);
                }
                // Every buffer goes back, including those of completions
                // that arrived for a connection already closed.
                if let Some(id) = completion.buffer() {
                    ring.give_back(id);
                }
            }
            ring.publish();
            // `--batch-reads`: a window's answers wait as the kernel's
            // deferred work, of which one wait runs about 20
            // (IO_LOCAL_TW_DEFAULT_MAX, io_uring/io_uring.c); a window with
            // more takes further waits that do not block, or the rest would
            // wait a window each and the rate would fall behind (1 ms at
            // 20,000/s held 87%).
            if rx.is_none() || completions.len() < DEFERRED_PER_WAIT {
                return Ok(());
            }
            timeout = Duration::ZERO;
        },
    )
}

/// Why `--io uring` cannot run here (no io_uring, or one without the
/// features the reactor uses), if it cannot.
pub(crate) fn uring_unavailable() -> Option<String> {
    match Ring::new(1) {
        Ok(_) => None,
        Err(error) => Some(error.to_string()),
    }
}
