//! The open model on a reactor: the worker's intended instants (pacer.rs)
//! go where the one dispatch rule says (worker/open_slots.rs: the most
//! recently idle slot, a slot not used yet under the worker's share of
//! `-c`, or a backlog whose wait counts in latency). A slot that answers
//! takes the oldest backlog entry or goes idle with its connection kept.
//! The tokio path (open.rs) follows the same rule and pacer.
//!
//! The rule's slot is what carries one request at a time: a connection
//! over HTTP/1.1, a stream over HTTP/2. A reactor slot carries `per_slot`
//! of them (`--streams` over HTTP/2, else 1): rule slot `u` rides reactor
//! slot `u / per_slot` (as h2_open.rs maps streams on tokio), so a free
//! stream on an open connection goes first, then a new connection up to
//! `-c`. What each reactor slot holds is counted here (`held`), so an
//! answer frees exactly the streams that ended.

use crate::plan::worker_plan::OpenLoad;
use crate::worker::open_slots::OpenSlots;
use crate::worker::pacer::{Backlog, Pacer};
use std::time::Instant;

/// Where the open model's requests go.
#[derive(Debug)]
pub(super) struct OpenDispatch {
    pub pacer: Pacer,
    pub backlog: Backlog,
    slots: OpenSlots,
    /// The pacer has no more instants, or the budget is spent.
    pub exhausted: bool,
    /// Requests a reactor slot carries at once (see the module's doc).
    per_slot: usize,
    /// Per reactor slot, the rule's slots it holds busy.
    held: Vec<usize>,
}

/// Where a due request goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Destination {
    Slot(usize),
    Backlog,
}

impl OpenDispatch {
    pub(super) fn new(
        load: &OpenLoad,
        now: Instant,
        measure_start: Instant,
        end: Option<Instant>,
        per_slot: usize,
    ) -> Self {
        OpenDispatch {
            pacer: Pacer::new(load, now, measure_start, end),
            backlog: Backlog::new(measure_start),
            slots: OpenSlots::default(),
            exhausted: false,
            per_slot: per_slot.max(1),
            held: Vec::new(),
        }
    }

    /// The reactor slot a due request goes to (most recently idle first,
    /// so the fewest connections stay warm), or the backlog when all `cap`
    /// slots are busy with all they carry.
    pub(super) fn destination(&mut self, cap: usize) -> Destination {
        use crate::worker::open_slots::Destination as Rule;
        match self.slots.destination(cap * self.per_slot) {
            Rule::Idle(index) | Rule::New(index) => {
                let slot = index / self.per_slot;
                self.hold(slot);
                Destination::Slot(slot)
            }
            Rule::Backlog => Destination::Backlog,
        }
    }

    /// Reactor slot `slot` takes one more request (from the backlog).
    pub(super) fn hold(&mut self, slot: usize) {
        if self.held.len() <= slot {
            self.held.resize(slot + 1, 0);
        }
        self.held[slot] += 1;
    }

    /// Reactor slot `slot`, answered, carries `carrying` requests still:
    /// true when it let one go (now counted free; the caller gives it the
    /// backlog's next or calls [`OpenDispatch::went_idle`]).
    pub(super) fn let_go(&mut self, slot: usize, carrying: usize) -> bool {
        match self.held.get_mut(slot) {
            Some(held) if *held > carrying => {
                *held -= 1;
                true
            }
            _ => false,
        }
    }

    /// One request's room on reactor slot `slot` is free.
    pub(super) fn went_idle(&mut self, slot: usize) {
        // Any rule slot riding it stands for it: they are alike.
        self.slots.went_idle(slot * self.per_slot);
    }

    /// When the loop must wake for the next request due (its intended
    /// instant plus the pacing window, [`Pacer::wake_for`]), if the pacer
    /// has one and a slot could take it (of `cap`). With every slot busy nothing
    /// can leave before an answer frees one, so only I/O wakes the loop: the
    /// requests that fall due meanwhile are taken from the pacer at the next
    /// wake with their own intended instants (their wait still counts in
    /// full), instead of one timer wake each just to queue them, which at a
    /// saturated server cost about a third more CPU per request than a
    /// client that does not (bench/results/2026-12-03-peers.md).
    pub(super) fn next_due_at(&mut self, cap: usize) -> Option<Instant> {
        if self.exhausted || self.slots.all_busy(cap * self.per_slot) {
            return None;
        }
        self.pacer.wake_at()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stampede_plan::{Arrival, Schedule};
    use std::time::Duration;

    /// A dispatcher for 10 uniform arrivals per second on `cap` slots.
    fn dispatch_of(cap: usize) -> OpenDispatch {
        let now = Instant::now();
        let load = OpenLoad {
            per_s: Schedule::constant(10.0, Duration::from_secs(1)),
            warmup_rate: 0.0,
            max_connections: cap,
            arrival: Arrival::Uniform,
            seed: 1,
            worker: 0,
            workers: 1,
            count: None,
            pace_window: Duration::ZERO,
            batch_reads: false,
        };
        OpenDispatch::new(&load, now, now, None, 1)
    }

    #[test]
    fn requests_go_to_the_most_recently_idle_slot_then_new_ones_then_the_backlog() {
        let mut dispatch = dispatch_of(2);
        assert_eq!(dispatch.destination(2), Destination::Slot(0));
        assert_eq!(dispatch.destination(2), Destination::Slot(1));
        assert_eq!(dispatch.destination(2), Destination::Backlog);
        dispatch.went_idle(0);
        dispatch.went_idle(1);
        assert_eq!(dispatch.destination(2), Destination::Slot(1), "LIFO");
        assert_eq!(dispatch.destination(2), Destination::Slot(0));
        assert_eq!(dispatch.destination(2), Destination::Backlog);
    }

    #[test]
    fn streams_fill_a_connection_before_the_next_and_free_as_they_end() {
        let mut dispatch = dispatch_of(2);
        dispatch.per_slot = 3;
        let firsts: Vec<_> = (0..7).map(|_| dispatch.destination(2)).collect();
        use Destination::{Backlog, Slot};
        let want = [
            Slot(0),
            Slot(0),
            Slot(0),
            Slot(1),
            Slot(1),
            Slot(1),
            Backlog,
        ];
        assert_eq!(firsts, want);
        assert!(dispatch.next_due_at(2).is_none(), "every stream is busy");
        // Two of slot 1's three streams ended: two let go, not a third.
        assert!(dispatch.let_go(1, 1));
        dispatch.went_idle(1);
        assert!(dispatch.let_go(1, 1));
        dispatch.went_idle(1);
        assert!(!dispatch.let_go(1, 1));
        assert_eq!(dispatch.destination(2), Slot(1));
        assert_eq!(dispatch.destination(2), Slot(1));
        assert_eq!(dispatch.destination(2), Backlog);
    }

    #[test]
    fn no_wake_for_arrivals_while_every_slot_is_busy() {
        let mut dispatch = dispatch_of(1);
        assert!(dispatch.next_due_at(1).is_some(), "a slot not used yet");
        assert_eq!(dispatch.destination(1), Destination::Slot(0));
        assert_eq!(dispatch.next_due_at(1), None, "the only slot is busy");
        dispatch.went_idle(0);
        assert!(dispatch.next_due_at(1).is_some(), "the slot is idle again");
    }
}
