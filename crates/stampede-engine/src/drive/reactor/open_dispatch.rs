//! The open model on a reactor: the worker's intended instants (pacer.rs)
//! go to the most recently idle slot, else to a slot not used yet while
//! under the worker's share of `-c`, else into a backlog whose wait counts
//! in latency (a request's clock starts at its intended instant). A slot
//! that answers takes the oldest backlog entry or goes idle with its
//! connection kept. The rules are those of the tokio path (open.rs); the
//! arithmetic and the warm-up rule are pacer.rs's, shared by both.

use crate::plan::worker_plan::OpenLoad;
use crate::worker::pacer::{Backlog, Pacer};
use std::time::Instant;

/// Where the open model's requests go.
#[derive(Debug)]
pub(super) struct OpenDispatch {
    pub pacer: Pacer,
    pub backlog: Backlog,
    /// Idle slots (connection kept), most recently idle last.
    idle: Vec<usize>,
    /// Slots taken into use so far, from 0 (the rest never opened).
    used: usize,
    /// The pacer has no more instants, or the budget is spent.
    pub exhausted: bool,
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
    ) -> Self {
        OpenDispatch {
            pacer: Pacer::new(load, now, measure_start, end),
            backlog: Backlog::new(measure_start),
            idle: Vec::new(),
            used: 0,
            exhausted: false,
        }
    }

    /// The slot a due request goes to (most recently idle first, so the
    /// fewest connections stay warm), or the backlog when all `cap` are busy.
    pub(super) fn destination(&mut self, cap: usize) -> Destination {
        if let Some(index) = self.idle.pop() {
            return Destination::Slot(index);
        }
        if self.used < cap {
            self.used += 1;
            return Destination::Slot(self.used - 1);
        }
        Destination::Backlog
    }

    /// Slot `index` has nothing to do.
    pub(super) fn went_idle(&mut self, index: usize) {
        self.idle.push(index);
    }

    /// When the loop must wake for the next request due, if the pacer has
    /// one and a slot could take it (of `cap`). With every slot busy nothing
    /// can leave before an answer frees one, so only I/O wakes the loop: the
    /// requests that fall due meanwhile are taken from the pacer at the next
    /// wake with their own intended instants (their wait still counts in
    /// full), instead of one timer wake each just to queue them, which at a
    /// saturated server cost about a third more CPU per request than a
    /// client that does not (bench/results/2026-12-03-peers.md).
    pub(super) fn next_due_at(&mut self, cap: usize) -> Option<Instant> {
        if self.exhausted || (self.idle.is_empty() && self.used >= cap) {
            return None;
        }
        self.pacer.peek()
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
        };
        OpenDispatch::new(&load, now, now, None)
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
    fn no_wake_for_arrivals_while_every_slot_is_busy() {
        let mut dispatch = dispatch_of(1);
        assert!(dispatch.next_due_at(1).is_some(), "a slot not used yet");
        assert_eq!(dispatch.destination(1), Destination::Slot(0));
        assert_eq!(dispatch.next_due_at(1), None, "the only slot is busy");
        dispatch.went_idle(0);
        assert!(dispatch.next_due_at(1).is_some(), "the slot is idle again");
    }
}
