//! The io_uring reactor (`--io uring`): sends are queued on the worker's
//! ring and each open connection has one multishot receive armed into a
//! provided buffer ring, so a whole batch of requests costs one syscall
//! (io_uring_enter) instead of a send, a receive and a share of an
//! epoll_wait each. Connects go through the ring too. WebSocket (`ws://`)
//! has its own slot (ws.rs) on the same ring.

mod ring;
mod slot;
mod ws;

use super::{drive, longest_request, rx_stamps, slot_count, socket};
use crate::plan::worker_plan::{WorkerMessage, WorkerPlan};
use crate::worker::context::ConnectionContext;
use ring::Ring;
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
        longest_request: longest_request(plan),
    };
    let now = Instant::now();
    let rx = rx_stamps(plan).map(Rc::new);
    let mut slots: Vec<Slot> = (0..count)
        .map(|index| Slot::new(index as u32, ctx.head_request, now, rx.clone()))
        .collect();
    let mut completions = Vec::with_capacity(4096);
    drive(
        plan,
        stop,
        to_aggregator,
        ctx,
        &io,
        &mut slots,
        |slots, turn, mut timeout| loop {
            ring.wait(timeout, &mut completions)?;
            if let Some(rx) = &rx {
                // The clocks receive stamps are read against.
                rx.woke();
            }
            for completion in &completions {
                let index = Slot::index_of(completion);
                if let Some(slot) = slots.get_mut(index) {
                    let step = slot.on_completion(&io, completion);
                    turn.advance(&io, ctx, slots, index, step);
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
