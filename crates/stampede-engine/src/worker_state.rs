//! State shared by the connections of one worker: its recorder, its share of
//! `-n`, and the count of requests in flight. Single-threaded (`Cell`,
//! `RefCell`): nothing here is touched by another thread, so no atomics.

use stampede_metrics::{Outcome, Recorder};
use std::cell::{Cell, RefCell};

#[derive(Debug, Default)]
pub struct WorkerState {
    pub recorder: RefCell<Recorder>,
    /// Requests this worker may still send; `None` means no limit.
    budget: Cell<Option<u64>>,
    in_flight: Cell<u64>,
}

impl WorkerState {
    pub fn new(budget: Option<u64>) -> WorkerState {
        WorkerState {
            recorder: RefCell::new(Recorder::new()),
            budget: Cell::new(budget),
            in_flight: Cell::new(0),
        }
    }

    /// Claims one request from the budget and counts it as sent and in flight;
    /// false when the budget is spent.
    pub fn begin_request(&self) -> bool {
        match self.budget.get() {
            Some(0) => return false,
            Some(left) => self.budget.set(Some(left - 1)),
            None => {}
        }
        self.in_flight.set(self.in_flight.get() + 1);
        self.recorder.borrow_mut().record_sent();
        true
    }

    /// Records how a request begun with [`WorkerState::begin_request`] ended.
    pub fn end_request(&self, outcome: &Outcome) {
        self.in_flight.set(self.in_flight.get() - 1);
        self.recorder.borrow_mut().record(outcome);
    }

    pub fn record_connection(&self, reconnect: bool) {
        self.recorder.borrow_mut().record_connection(reconnect);
    }

    /// Requests begun and not ended: at a stop these are `unfinished`.
    pub fn in_flight(&self) -> u64 {
        self.in_flight.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_is_exact() {
        let state = WorkerState::new(Some(2));
        assert!(state.begin_request());
        assert!(state.begin_request());
        assert!(!state.begin_request());
        assert_eq!(state.in_flight(), 2);
        assert_eq!(state.recorder.borrow_mut().take_interval().counters.sent, 2);
    }
}
