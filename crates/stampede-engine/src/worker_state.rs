//! State shared by the connections of one worker: its recorder, its share of
//! `-n`, and the levels (requests in flight, open connections). Single-threaded
//! (`Cell`, `RefCell`): nothing here is touched by another thread, so no atomics.

use stampede_metrics::{ErrorKind, Gauges, Outcome, Recorder, Snapshot, MAX_ERROR_SAMPLES};
use std::cell::{Cell, RefCell};
use std::time::Duration;

#[derive(Debug, Default)]
pub struct WorkerState {
    pub recorder: RefCell<Recorder>,
    /// Requests this worker may still send; `None` means no limit.
    budget: Cell<Option<u64>>,
    in_flight: Cell<u64>,
    open_connections: Cell<u64>,
    /// Error messages kept so far, per class: formatting stops after a few.
    samples_kept: Cell<[u8; ErrorKind::COUNT]>,
    /// Told when a connection finds the budget spent, so that connections
    /// waiting out a connect backoff stop waiting (backoff.rs).
    spent: tokio::sync::Notify,
}

impl WorkerState {
    pub fn new(budget: Option<u64>, targets: usize) -> WorkerState {
        WorkerState {
            recorder: RefCell::new(Recorder::with_targets(targets)),
            budget: Cell::new(budget),
            in_flight: Cell::new(0),
            open_connections: Cell::new(0),
            samples_kept: Cell::new([0; ErrorKind::COUNT]),
            spent: tokio::sync::Notify::new(),
        }
    }

    /// Keeps the reason behind an error, the first few times per class only.
    pub fn sample_error(&self, kind: ErrorKind, reason: impl FnOnce() -> String) {
        let mut kept = self.samples_kept.get();
        if usize::from(kept[kind.index()]) < MAX_ERROR_SAMPLES {
            kept[kind.index()] += 1;
            self.samples_kept.set(kept);
            self.recorder
                .borrow_mut()
                .record_error_sample(kind, reason());
        }
    }

    pub fn tls_handshake(&self, handshake: Duration) {
        self.recorder.borrow_mut().record_tls_handshake(handshake);
    }

    /// True while the budget has requests left (without claiming one).
    pub fn has_budget(&self) -> bool {
        self.budget.get() != Some(0)
    }

    /// Claims one request from the budget; false when it is spent.
    pub fn claim_budget(&self) -> bool {
        match self.budget.get() {
            Some(0) => {
                // Only a connection that is done looks here: not per request.
                self.spent.notify_waiters();
                false
            }
            Some(left) => {
                self.budget.set(Some(left - 1));
                true
            }
            None => true,
        }
    }

    /// Completes once a connection finds the budget spent (see
    /// [`WorkerState::claim_budget`]); create it before checking the budget.
    pub fn budget_spent(&self) -> tokio::sync::futures::Notified<'_> {
        self.spent.notified()
    }

    /// Counts an attempt to open a connection.
    pub fn connect_attempt(&self) {
        self.recorder.borrow_mut().record_connect_attempt();
    }

    /// Counts a request as sent and in flight.
    pub fn begin_request(&self) {
        self.in_flight.set(self.in_flight.get() + 1);
        self.recorder.borrow_mut().record_sent();
    }

    /// Records how a request begun with [`WorkerState::begin_request`] ended.
    pub fn end_request(&self, outcome: &Outcome) {
        self.in_flight.set(self.in_flight.get() - 1);
        self.recorder.borrow_mut().record(outcome);
    }

    pub fn connection_opened(&self, reconnect: bool, connect_time: Duration) {
        self.open_connections.set(self.open_connections.get() + 1);
        self.recorder
            .borrow_mut()
            .record_connection(reconnect, connect_time);
    }

    pub fn connection_closed(&self) {
        self.open_connections.set(self.open_connections.get() - 1);
    }

    /// Requests begun and not ended: at a stop these are `unfinished`.
    pub fn in_flight(&self) -> u64 {
        self.in_flight.get()
    }

    pub fn gauges(&self) -> Gauges {
        Gauges {
            open_connections: self.open_connections.get(),
            in_flight: self.in_flight.get(),
        }
    }

    /// Measurement starts: what warm-up recorded is dropped, and requests
    /// still in flight count as sent during measurement, where they end, so
    /// that every request balances.
    pub fn end_warmup(&self) {
        let mut recorder = self.recorder.borrow_mut();
        let _warmup = recorder.take_interval();
        recorder.reset_targets();
        recorder.record_carried_over(self.in_flight());
    }

    /// What was recorded since the last snapshot, with the current levels.
    pub fn interval_snapshot(&self) -> Snapshot {
        let mut recorder = self.recorder.borrow_mut();
        recorder.set_gauges(self.gauges());
        recorder.take_interval()
    }

    /// The worker's last snapshot: requests still in flight are unfinished,
    /// and the per-target tables go with it.
    pub fn final_snapshot(&self) -> Snapshot {
        let mut recorder = self.recorder.borrow_mut();
        recorder.record_unfinished(self.in_flight());
        recorder.set_gauges(self.gauges());
        let mut snapshot = recorder.take_interval();
        snapshot.per_target = recorder.take_targets();
        snapshot
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_is_exact() {
        let state = WorkerState::new(Some(2), 1);
        assert!(state.claim_budget());
        assert!(state.claim_budget());
        assert!(!state.claim_budget());
        state.begin_request();
        assert_eq!(state.in_flight(), 1);
        assert_eq!(state.recorder.borrow_mut().take_interval().counters.sent, 1);
        assert!(WorkerState::new(None, 1).claim_budget());
    }
}
