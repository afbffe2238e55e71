//! The epoll reactor: each socket is registered once, edge-triggered, for
//! both directions; after that the hot path makes no epoll_ctl call. Reads
//! go into the worker's scratch buffer, and a short read ends the reading.
//! A slot is an HTTP/1.1 connection (slot.rs), or over `--http2` an HTTP/2
//! one carrying several streams (h2_slot.rs). A WebSocket run has slots of
//! its own (ws.rs).

mod h2_slot;
mod poller;
mod slot;
mod ws;

use super::rx_stamp::RxStamps;
use super::{drive, longest_request, rx_stamps, slot_count, ReactorSlot, Step};
use crate::exchange::h2_exchange::H2Wire;
use crate::plan::worker_plan::{WorkerMessage, WorkerPlan};
use crate::worker::context::ConnectionContext;
use h2_slot::H2Slot;
use poller::{event_buffer, Poller};
use slot::{Io, Slot};
use std::io;
use std::rc::Rc;
use std::sync::mpsc;
use std::time::Instant;
use tokio::sync::watch;

/// Events taken per epoll_wait.
const EVENTS_PER_WAIT: usize = 1024;

/// What the loop asks of a slot of either kind.
trait EpollSlot: for<'a> ReactorSlot<Io<'a>> {
    fn generation(&self) -> u32;
    /// An event of an older connection of the slot.
    fn note_parked_event(&mut self, generation: u32);
    fn on_event(&mut self, io: &Io, scratch: &mut [u8], events: u32) -> Step;
}

impl EpollSlot for Slot {
    fn generation(&self) -> u32 {
        Slot::generation(self)
    }

    fn note_parked_event(&mut self, generation: u32) {
        Slot::note_parked_event(self, generation);
    }

    fn on_event(&mut self, io: &Io, scratch: &mut [u8], events: u32) -> Step {
        Slot::on_event(self, io, scratch, events)
    }
}

impl EpollSlot for H2Slot {
    fn generation(&self) -> u32 {
        H2Slot::generation(self)
    }

    /// An HTTP/2 slot parks no connection aside: nothing to note.
    fn note_parked_event(&mut self, _generation: u32) {}

    fn on_event(&mut self, io: &Io, scratch: &mut [u8], events: u32) -> Step {
        H2Slot::on_event(self, io, scratch, events)
    }
}

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
        // HTTP/2 writes small frames while others are unacknowledged:
        // Nagle would hold them, so its sockets all get TCP_NODELAY.
        longest_request: match plan.http2 {
            Some(_) => usize::MAX,
            None => longest_request(plan),
        },
    };
    let now = Instant::now();
    let count = slot_count(plan);
    if let Some(h2) = &plan.http2 {
        let wire = Rc::new(H2Wire::new(&h2.requests, h2.streams).map_err(io::Error::other)?);
        let mut slots: Vec<H2Slot> = (0..count)
            .map(|index| H2Slot::new(index as u32, wire.clone(), now))
            .collect();
        return run_slots(plan, stop, to_aggregator, &io, &mut slots, None);
    }
    let rx = rx_stamps(plan).map(Rc::new);
    let mut slots: Vec<Slot> = (0..count)
        .map(|index| Slot::new(index as u32, ctx.head_request, now, rx.clone()))
        .collect();
    run_slots(plan, stop, to_aggregator, &io, &mut slots, rx.as_deref())
}

/// The loop itself, over slots of one kind; `rx`: the clocks the slots'
/// receive stamps are read against, read again at each wake-up.
fn run_slots<S: EpollSlot>(
    plan: &WorkerPlan,
    stop: watch::Receiver<bool>,
    to_aggregator: &mpsc::Sender<WorkerMessage>,
    io: &Io,
    slots: &mut [S],
    rx: Option<&RxStamps>,
) -> io::Result<()> {
    let ctx = io.ctx;
    let mut scratch = ctx.scratch.borrow_mut();
    let mut events = event_buffer(EVENTS_PER_WAIT);
    drive(
        plan,
        stop,
        to_aggregator,
        ctx,
        io,
        slots,
        |slots, turn, timeout| {
            let ready = io.poller.wait(&mut events, timeout)?;
            if let Some(rx) = rx {
                rx.woke();
            }
            for event in &events[..ready] {
                let (index, generation) = Slot::decode(event.u64);
                let Some(slot) = slots.get_mut(index) else {
                    continue;
                };
                if slot.generation() != generation {
                    slot.note_parked_event(generation);
                    continue;
                }
                let step = slot.on_event(io, &mut scratch, event.events);
                turn.advance(io, ctx, slots, index, step);
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
