//! The epoll reactor: each socket is registered once, edge-triggered, for
//! both directions; after that the hot path makes no epoll_ctl call. Reads
//! go into the worker's scratch buffer, and a short read ends the reading.
//! A WebSocket run has slots of its own (ws.rs).

mod poller;
mod slot;
mod ws;

use super::{drive, longest_request, slot_count};
use crate::plan::worker_plan::{WorkerMessage, WorkerPlan};
use crate::worker::context::ConnectionContext;
use poller::{event_buffer, Poller};
use slot::{Io, Slot};
use std::io;
use std::sync::mpsc;
use std::time::Instant;
use tokio::sync::watch;

/// Events taken per epoll_wait.
const EVENTS_PER_WAIT: usize = 1024;

/// Runs a worker on the epoll reactor (see [`drive`]).
pub(super) fn run(
    plan: &WorkerPlan,
    stop: watch::Receiver<bool>,
    to_aggregator: &mpsc::Sender<WorkerMessage>,
    ctx: &ConnectionContext,
) -> io::Result<()> {
    if ctx.websocket.is_some() {
        return ws::run(plan, stop, to_aggregator, ctx);
    }
    let poller = Poller::new()?;
    let io = Io {
        ctx,
        poller: &poller,
        longest_request: longest_request(plan),
    };
    let now = Instant::now();
    let mut slots: Vec<Slot> = (0..slot_count(plan))
        .map(|index| Slot::new(index as u32, ctx.head_request, now))
        .collect();
    let mut scratch = ctx.scratch.borrow_mut();
    let mut events = event_buffer(EVENTS_PER_WAIT);
    drive(
        plan,
        stop,
        to_aggregator,
        ctx,
        &io,
        &mut slots,
        |slots, turn, timeout| {
            let ready = poller.wait(&mut events, timeout)?;
            for event in &events[..ready] {
                let (index, generation) = Slot::decode(event.u64);
                let Some(slot) = slots.get_mut(index) else {
                    continue;
                };
                if slot.generation() != generation {
                    slot.note_parked_event(generation);
                    continue;
                }
                let step = slot.on_event(&io, &mut scratch, event.events);
                turn.advance(&io, ctx, slots, index, step);
            }
            Ok(())
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_carry_slot_and_generation() {
        assert_eq!(Slot::decode((7u64 << 32) | 42), (42, 7));
    }
}
