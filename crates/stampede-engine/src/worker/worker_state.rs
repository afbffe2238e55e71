//! State shared by the connections of one worker: its recorder, its share of
//! `-n`, and the levels (requests in flight, open connections). Single-threaded
//! (`Cell`, `RefCell`): nothing here is touched by another thread, so no atomics.

use crate::plan::worker_plan::{WorkerLoad, WorkerPlan};
use stampede_metrics::{ErrorKind, Gauges, Outcome, Recorder, Snapshot, MAX_ERROR_SAMPLES};
use std::cell::{Cell, RefCell};
use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

#[derive(Debug, Default)]
pub(crate) struct WorkerState {
    pub recorder: RefCell<Recorder>,
    /// Requests this worker may still send; `None` means no limit.
    budget: Cell<Option<u64>>,
    in_flight: Cell<u64>,
    /// The task waiting for the requests in flight to drain
    /// ([`WorkerState::drained`]), woken when the last one ends.
    drain_waker: RefCell<Option<Waker>>,
    open_connections: Cell<u64>,
    /// Error messages kept so far, per class: formatting stops after a few.
    samples_kept: Cell<[u8; ErrorKind::COUNT]>,
    /// Open model: the start of measurement. A request intended before it
    /// belongs to the warm-up wherever it is sent or ends, so that the window
    /// counts exactly the requests intended in it (a warm-up
    /// backlog drained in the window made goodput exceed the offered rate).
    window_start: Option<Instant>,
    /// Warm-up requests (intended before `window_start`) still in flight.
    warmup_in_flight: Cell<u64>,
    /// Told when a connection finds the budget spent, so that connections
    /// waiting out a connect backoff stop waiting (backoff.rs).
    spent: tokio::sync::Notify,
    /// A connection of this worker has opened at least once.
    ever_opened: Cell<bool>,
    /// Closed model, before measurement: requests do not spend the budget
    /// (`-n` counts measured requests; once `--warmup 1s -n
    /// 1500` sent all 1500 in the warm-up and reported 0 s of measurement).
    warming_up: Cell<bool>,
    /// The warm-up's records have been dropped ([`WorkerState::end_warmup`],
    /// which runs once).
    warmup_over: Cell<bool>,
    /// A `unique` feeder ran out of rows: no iteration starts any more (those
    /// under way finish), and the last snapshot says so.
    feed_exhausted: Cell<bool>,
    /// HTTP/2: the fewest concurrent streams a server allowed one of this
    /// worker's connections; the last snapshot carries it.
    h2_server_streams: Cell<Option<u32>>,
}

impl WorkerState {
    pub(crate) fn new(budget: Option<u64>, targets: usize) -> WorkerState {
        WorkerState {
            recorder: RefCell::new(Recorder::with_targets(targets)),
            budget: Cell::new(budget),
            in_flight: Cell::new(0),
            drain_waker: RefCell::new(None),
            open_connections: Cell::new(0),
            samples_kept: Cell::new([0; ErrorKind::COUNT]),
            window_start: None,
            warmup_in_flight: Cell::new(0),
            spent: tokio::sync::Notify::new(),
            ever_opened: Cell::new(false),
            warming_up: Cell::new(false),
            warmup_over: Cell::new(false),
            feed_exhausted: Cell::new(false),
            h2_server_streams: Cell::new(None),
        }
    }

    /// The state of a worker that runs `plan`: with the open model, requests
    /// belong to the warm-up or the window by their intended instant
    /// ([`WorkerState::with_window_start`]), on every path.
    pub(crate) fn for_plan(plan: &WorkerPlan) -> WorkerState {
        let state = WorkerState::new(plan.budget, plan.mix.len());
        if let Some(workload) = &plan.workload {
            let checks = workload.check_names().len();
            let recorder = std::mem::take(&mut *state.recorder.borrow_mut());
            *state.recorder.borrow_mut() = recorder.with_checks(checks);
        }
        match plan.load {
            // The open model claims by intended instant (claim_budget_at).
            WorkerLoad::Open(_) => state.with_window_start(plan.measure_start),
            WorkerLoad::Closed { .. } => {
                state.warming_up.set(plan.measure_start > Instant::now());
                state
            }
        }
    }

    /// Open model: requests are assigned to the warm-up or the window by
    /// their intended instant, not by when they happen to be sent.
    pub(crate) fn with_window_start(mut self, measure_start: Instant) -> WorkerState {
        self.window_start = Some(measure_start);
        self
    }

    fn is_warmup(&self, intended: Instant) -> bool {
        self.window_start.is_some_and(|start| intended < start)
    }

    /// Keeps the reason behind an error, the first few times per class only.
    pub(crate) fn sample_error(&self, kind: ErrorKind, reason: impl FnOnce() -> String) {
        let mut kept = self.samples_kept.get();
        if usize::from(kept[kind.index()]) < MAX_ERROR_SAMPLES {
            kept[kind.index()] += 1;
            self.samples_kept.set(kept);
            self.recorder
                .borrow_mut()
                .record_error_sample(kind, reason());
        }
    }

    /// A new TLS connection: its TCP `connect` and its `handshake`.
    pub(crate) fn tls_handshake(&self, connect: Duration, handshake: Duration) {
        self.recorder
            .borrow_mut()
            .record_tls_handshake(connect, handshake);
    }

    /// A connect failed: how long the connection waits before its next
    /// attempt (backoff.rs). A `-n` run whose worker has never opened a
    /// connection does not wait: every attempt spends one of its requests,
    /// so the count bounds the attempts already, and a wrong port fails at
    /// once (as ab does) instead of after minutes of doubling waits. Once a
    /// connection has opened, a server that dies is backed off from.
    pub(crate) fn connect_backoff(
        &self,
        backoff: &mut crate::worker::backoff::Backoff,
    ) -> Duration {
        let delay = backoff.failed();
        if self.budget.get().is_some() && !self.ever_opened.get() {
            return Duration::ZERO;
        }
        delay
    }

    /// Waits out a connect backoff of `delay` on the tokio path, or less:
    /// not at all when the budget is spent (the run is over), and no longer
    /// than until another connection finds it spent. The worker ends the
    /// wait at its deadline or a stop by dropping the task.
    pub(crate) async fn wait_out_backoff(&self, delay: Duration) {
        if !self.has_budget() {
            return;
        }
        let spent = self.budget_spent();
        tokio::select! {
            _ = tokio::time::sleep(delay) => {}
            _ = spent => {}
        }
    }

    /// True while the budget has requests left (without claiming one).
    pub(crate) fn has_budget(&self) -> bool {
        self.budget.get() != Some(0)
    }

    /// Claims one request from the budget; false when it is spent. During
    /// the warm-up nothing is spent: the requests still in flight when
    /// measurement starts are claimed then ([`WorkerState::end_warmup`]).
    pub(crate) fn claim_budget(&self) -> bool {
        if self.warming_up.get() {
            return true;
        }
        self.spend_one()
    }

    /// Open model: claims the request intended at `intended` from the
    /// budget, unless it belongs to the warm-up (by its instant, as it is
    /// counted: [`WorkerState::with_window_start`]).
    pub(crate) fn claim_budget_at(&self, intended: Instant) -> bool {
        self.is_warmup(intended) || self.spend_one()
    }

    fn spend_one(&self) -> bool {
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
    pub(crate) fn budget_spent(&self) -> tokio::sync::futures::Notified<'_> {
        self.spent.notified()
    }

    /// The next request could not be prepared ([`NotPrepared`]): taken
    /// back. A `unique` feeder out of rows stops only the user that needed
    /// one (workload/session.rs); a script's error is sampled and the worker
    /// stops sending.
    pub(crate) fn not_prepared(&self, intended: Instant, not: crate::workload::NotPrepared) {
        match not {
            crate::workload::NotPrepared::Exhausted => self.feed_ran_out(intended),
            crate::workload::NotPrepared::Script(error) => {
                self.take_back(intended);
                self.sample_error(ErrorKind::Other, || error.0);
                self.stop_sending();
            }
        }
    }

    /// Nothing more is sent (a script's `thread:stop()`, or its error):
    /// the budget is spent, so every connection stops as at the end of `-n`.
    pub(crate) fn stop_sending(&self) {
        self.budget.set(Some(0));
        self.spent.notify_waiters();
    }

    /// A request counted as begun that is not sent after all: its claim
    /// on the budget is given back too (the warm-up's claimed nothing), so
    /// that the users still inside an iteration may send its last steps.
    fn take_back(&self, intended: Instant) {
        self.in_flight.set(self.in_flight.get().saturating_sub(1));
        self.wake_if_drained();
        if self.is_warmup(intended) {
            self.warmup_in_flight
                .set(self.warmup_in_flight.get().saturating_sub(1));
        } else {
            self.recorder.borrow_mut().uncount_sent();
            if !self.warming_up.get() {
                if let Some(left) = self.budget.get() {
                    self.budget.set(Some(left + 1));
                }
            }
        }
    }

    fn feed_ran_out(&self, intended: Instant) {
        self.take_back(intended);
        self.feed_ran_dry();
    }

    /// A `unique` feeder has no rows left for this worker: no iteration
    /// starts any more, and the last snapshot says why the run stopped.
    pub(crate) fn feed_ran_dry(&self) {
        self.feed_exhausted.set(true);
    }

    /// True once a `unique` feeder ran out of rows ([`WorkerState::feed_ran_dry`]).
    pub(crate) fn is_feed_exhausted(&self) -> bool {
        self.feed_exhausted.get()
    }

    /// An HTTP/2 server allowed a connection `streams` concurrent streams
    /// (its SETTINGS_MAX_CONCURRENT_STREAMS); the fewest is kept.
    pub(crate) fn server_streams(&self, streams: u32) {
        let fewest = self
            .h2_server_streams
            .get()
            .map_or(streams, |s| s.min(streams));
        self.h2_server_streams.set(Some(fewest));
    }

    /// Counts an attempt to open a connection.
    pub(crate) fn connect_attempt(&self) {
        self.recorder.borrow_mut().record_connect_attempt();
    }

    /// Counts a request as sent and in flight.
    pub(crate) fn begin_request(&self) {
        self.in_flight.set(self.in_flight.get() + 1);
        self.recorder.borrow_mut().record_sent();
    }

    /// Open model: counts a request intended at `intended` and sent `lag`
    /// after it as in flight, and as sent unless it belongs to the warm-up.
    pub(crate) fn begin_intended(&self, intended: Instant, lag: Duration) {
        if self.is_warmup(intended) {
            self.in_flight.set(self.in_flight.get() + 1);
            self.warmup_in_flight.set(self.warmup_in_flight.get() + 1);
            return;
        }
        if !self.warmup_over.get() {
            // The window's first request: the warm-up ends here, not when
            // the worker's timer next looks (on tokio that may be after this
            // request has been sent and even answered, and end_warmup would
            // drop it with the warm-up's records: -n 1500 measured 1499).
            self.end_warmup();
        }
        self.in_flight.set(self.in_flight.get() + 1);
        let mut recorder = self.recorder.borrow_mut();
        recorder.record_send_lag(lag);
        recorder.record_sent();
    }

    /// Records how a request begun with [`WorkerState::begin_request`] (or
    /// [`WorkerState::begin_intended`]) ended; a warm-up request is not recorded.
    pub(crate) fn end_request(&self, outcome: &Outcome) {
        self.in_flight.set(self.in_flight.get() - 1);
        self.wake_if_drained();
        if self.is_warmup(outcome.intended) {
            self.warmup_in_flight.set(self.warmup_in_flight.get() - 1);
            return;
        }
        self.recorder.borrow_mut().record(outcome);
    }

    /// `--decode`: the body of a complete response intended at `intended`
    /// decoded to `decoded` bytes (`encoded`: it came with a coding);
    /// counted in the measured window only, as the response is.
    pub(crate) fn decoded(&self, intended: Instant, decoded: u64, encoded: bool) {
        if !self.is_warmup(intended) {
            self.recorder.borrow_mut().record_decoded(decoded, encoded);
        }
    }

    /// `--sse`: a stream intended at `intended` ended; booked in the
    /// measured window only, as its request is.
    pub(crate) fn stream_ended(
        &self,
        intended: Instant,
        figures: &stampede_metrics::StreamFigures,
    ) {
        if !self.is_warmup(intended) {
            self.recorder.borrow_mut().record_stream(figures);
        }
    }

    /// A WebSocket run's figures, booked in `f` when `at` is in the
    /// measured window (the warm-up's are dropped, as its requests are).
    pub(crate) fn websocket(
        &self,
        at: Instant,
        f: impl FnOnce(&mut stampede_metrics::WebSocketBooks),
    ) {
        if !self.is_warmup(at) {
            f(self.recorder.borrow_mut().websocket());
        }
    }

    /// Requests of the measured window in flight (warm-up ones left out).
    fn measured_in_flight(&self) -> u64 {
        self.in_flight.get() - self.warmup_in_flight.get()
    }

    pub(crate) fn connection_opened(&self, reconnect: bool, connect_time: Duration) {
        self.open_connections.set(self.open_connections.get() + 1);
        self.ever_opened.set(true);
        self.recorder
            .borrow_mut()
            .record_connection(reconnect, connect_time);
    }

    /// The connection just opened replaces one the client retired
    /// (`--conn-max-requests`, `--conn-max-age`): a planned reconnect.
    pub(crate) fn planned_reconnect(&self) {
        self.recorder.borrow_mut().record_planned_reconnect();
    }

    /// A QUIC connection opened (HTTP/3); its handshake is timed apart
    /// ([`WorkerState::quic_handshake`]: a 0-RTT one settles later).
    pub(crate) fn quic_connection_opened(&self, reconnect: bool) {
        self.open_connections.set(self.open_connections.get() + 1);
        self.ever_opened.set(true);
        self.recorder.borrow_mut().record_quic_connection(reconnect);
    }

    pub(crate) fn quic_handshake(&self, handshake: Duration, zero_rtt: bool) {
        self.recorder
            .borrow_mut()
            .record_quic_handshake(handshake, zero_rtt);
    }

    pub(crate) fn connection_closed(&self) {
        self.open_connections.set(self.open_connections.get() - 1);
    }

    /// Ends when no request is in flight: the tokio worker's open model
    /// waits so for the requests its pacer handed out, woken by the last
    /// one's end rather than polling.
    pub(crate) fn drained(&self) -> impl std::future::Future<Output = ()> + '_ {
        std::future::poll_fn(move |cx| {
            if self.in_flight.get() == 0 {
                return Poll::Ready(());
            }
            *self.drain_waker.borrow_mut() = Some(cx.waker().clone());
            Poll::Pending
        })
    }

    /// Wakes [`WorkerState::drained`]'s waiter once nothing is in flight;
    /// costs a request nothing more than a comparison otherwise.
    fn wake_if_drained(&self) {
        if self.in_flight.get() == 0 {
            if let Some(waker) = self.drain_waker.borrow_mut().take() {
                waker.wake();
            }
        }
    }

    /// Requests begun and not ended: at a stop these are `unfinished`.
    pub(crate) fn in_flight(&self) -> u64 {
        self.in_flight.get()
    }

    pub(crate) fn gauges(&self) -> Gauges {
        Gauges {
            open_connections: self.open_connections.get(),
            in_flight: self.in_flight.get(),
        }
    }

    /// Measurement starts: what warm-up recorded is dropped, and requests
    /// still in flight count as sent during measurement, where they end, so
    /// that every request balances (open model: only those intended in the
    /// window, which a late wake-up may already have sent).
    pub(crate) fn end_warmup(&self) {
        if self.warmup_over.replace(true) {
            return;
        }
        let mut recorder = self.recorder.borrow_mut();
        let _warmup = recorder.take_interval();
        recorder.reset_targets();
        let carried = self.measured_in_flight();
        recorder.record_carried_over(carried);
        if self.warming_up.replace(false) {
            // The closed model's warm-up spent nothing: what it carries into
            // measurement is measured, so it is claimed now.
            if let Some(left) = self.budget.get() {
                self.budget.set(Some(left.saturating_sub(carried)));
            }
        }
    }

    /// What was recorded since the last snapshot, with the current levels.
    pub(crate) fn interval_snapshot(&self) -> Snapshot {
        let mut recorder = self.recorder.borrow_mut();
        recorder.set_gauges(self.gauges());
        let mut snapshot = recorder.take_interval();
        snapshot.per_target = recorder.take_interval_targets();
        snapshot
    }

    /// The worker's last snapshot: requests still in flight are unfinished,
    /// and the per-target tables go with it.
    pub(crate) fn final_snapshot(&self) -> Snapshot {
        let mut recorder = self.recorder.borrow_mut();
        recorder.record_unfinished(self.measured_in_flight());
        recorder.set_gauges(self.gauges());
        let mut snapshot = recorder.take_interval();
        snapshot.per_target = recorder.take_targets();
        snapshot.checks = recorder.take_checks();
        snapshot.feed_exhausted = self.feed_exhausted.get();
        snapshot.h2_server_streams = self.h2_server_streams.get();
        snapshot
    }
}

/// Hops are counted in the worker's recorder, their errors sampled there.
impl crate::redirects::redirect::HopBooks for WorkerState {
    fn hop_followed(&self) {
        self.recorder.borrow_mut().record_redirect();
    }

    fn hop_offsite(&self) {
        self.recorder.borrow_mut().record_offsite_redirect();
    }

    fn hop_sample(&self, kind: ErrorKind, reason: &dyn Fn() -> String) {
        self.sample_error(kind, reason);
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

    /// A waker that counts its wakes.
    #[derive(Default)]
    struct Wakes(std::sync::atomic::AtomicU32);

    impl std::task::Wake for Wakes {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    #[test]
    fn drained_waits_for_the_last_request_and_is_woken_by_its_end() {
        use std::future::Future;
        let state = WorkerState::new(None, 1);
        let wakes = std::sync::Arc::new(Wakes::default());
        let waker = Waker::from(wakes.clone());
        let mut cx = std::task::Context::from_waker(&waker);
        let woken = || wakes.0.load(std::sync::atomic::Ordering::SeqCst);
        assert_eq!(
            std::pin::pin!(state.drained()).poll(&mut cx),
            Poll::Ready(())
        );
        let now = Instant::now();
        state.begin_request();
        state.begin_request();
        let mut drained = std::pin::pin!(state.drained());
        assert_eq!(drained.as_mut().poll(&mut cx), Poll::Pending);
        state.end_request(&ok_at(now));
        assert_eq!(woken(), 0, "one request still in flight");
        assert_eq!(drained.as_mut().poll(&mut cx), Poll::Pending);
        state.end_request(&ok_at(now));
        assert_eq!(woken(), 1, "the last end wakes the waiter");
        assert_eq!(drained.as_mut().poll(&mut cx), Poll::Ready(()));
        // A request taken back (never sent) counts as an end too.
        state.begin_request();
        let mut drained = std::pin::pin!(state.drained());
        assert_eq!(drained.as_mut().poll(&mut cx), Poll::Pending);
        state.take_back(now);
        assert_eq!(woken(), 2);
    }

    fn ok_at(intended: Instant) -> Outcome {
        Outcome {
            intended,
            sent: intended,
            first_byte: None,
            done: intended,
            result: Ok(200),
            bytes_received: 0,
            body_bytes: 0,
            target: 0,
            judged: None,
        }
    }

    #[test]
    fn open_model_counts_a_request_where_it_was_intended() {
        let start = Instant::now();
        let window = start + Duration::from_secs(1);
        let state = WorkerState::new(None, 1).with_window_start(window);
        // Two warm-up requests in flight at the window's start, a third of
        // the warm-up's backlog sent late inside the window, one of the window's.
        state.begin_intended(start, Duration::ZERO);
        state.begin_intended(start, Duration::ZERO);
        state.end_warmup();
        state.begin_intended(start, Duration::from_secs(1));
        state.begin_intended(window, Duration::ZERO);
        for _ in 0..2 {
            state.end_request(&ok_at(start));
        }
        state.end_request(&ok_at(window));
        let snapshot = state.final_snapshot();
        let c = snapshot.counters;
        assert_eq!((c.sent, c.success, c.unfinished), (1, 1, 0));
        assert_eq!(
            c.late_sends, 0,
            "a warm-up request's lag is not the window's"
        );
        assert_eq!(state.in_flight(), 1, "one warm-up request still out");
    }
}
