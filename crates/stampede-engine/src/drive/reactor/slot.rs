//! What every reactor slot is, whatever drives its socket: its state
//! ([`SlotBase`]: connection, phase, books) and the rules both reactors share
//! ([`ReactorSlot`]'s provided methods), written once.

pub(crate) use super::slot_state::{Phase, SlotBase};
use crate::exchange::conn_books::Reuse;
use crate::exchange::ledger::Ledger;
use crate::http1::{Complete, ResponseProgress};
use crate::net::outcome_class::classify_connect;
use crate::redirects::redirect::Follow;
use crate::redirects::redirect_switch::{origin_switch, OriginSwitch};
use crate::worker::context::ConnectionContext;
use stampede_metrics::ErrorKind;
use std::io;
use std::time::Instant;

/// What an event or a start left the slot doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Waiting for the socket.
    Pending,
    /// The request ended with a response (recorded); the slot may go on.
    Answered,
    /// The request failed (recorded) and the connection is gone.
    Failed,
}

/// What a slot needs from its worker: at least the connections' shared context.
pub(crate) trait WorkerIo {
    fn ctx(&self) -> &ConnectionContext;
    /// Hands the kernel what the worker queued, before it sleeps out a
    /// `--batch-reads` window: io_uring's sends would otherwise wait in its
    /// queue until the next wait. epoll writes as it goes.
    fn submit(&self) {}
}

/// A connection slot of a reactor, whatever drives its socket. The required
/// methods are the socket's; the provided ones are the rules both reactors
/// share (those of the tokio path, connection.rs), written once: how a
/// request starts, times out, is answered, fails, or is retried after an
/// idle close. `I` is what the slot needs from its worker.
pub(crate) trait ReactorSlot<I: WorkerIo> {
    fn base(&self) -> &SlotBase;
    fn base_mut(&mut self) -> &mut SlotBase;
    /// Opens a connection for the current request and sends it as soon as
    /// the connection allows.
    fn open(&mut self, io: &I, now: Instant) -> Step;
    /// Writes (or queues) the current request on the open connection.
    fn send(&mut self, io: &I) -> Step;
    /// Lets go of what the kernel still does for the connection, just
    /// before its fd closes (io_uring cancels its requests; closing an fd
    /// is enough for epoll).
    fn release(&mut self, _io: &I) {}
    /// Swaps the reactor's own parts of the current connection (its TLS
    /// session, what the kernel holds of it) with the parked connection's.
    fn swap_transport(&mut self);

    fn phase(&self) -> Phase {
        self.base().phase
    }

    /// When the slot may start again after its last failure: `None`
    /// unless that failure was a connect (then it waits out its backoff).
    fn retry_at(&self) -> Option<Instant> {
        self.base().ledger.retry_at()
    }

    /// Requests the slot began before and still carries (HTTP/2: those the
    /// server never processed) go out before the worker claims a new one:
    /// `Some(step)` when there were any. HTTP/1.1 carries none.
    fn resume(&mut self, _io: &I, _now: Instant) -> Option<Step> {
        None
    }
    /// Requests begun on the slot and not booked yet, once it answered
    /// (the open model counts what it let go of): HTTP/1.1 none, HTTP/2
    /// its open streams and those waiting for one.
    fn carrying(&self) -> usize {
        0
    }

    /// Writes what the slot queued while the turn advanced it (HTTP/2: the
    /// streams it started, in one send). HTTP/1.1 writes as it goes.
    fn flush(&mut self, _io: &I) -> Step {
        Step::Pending
    }

    fn set_phase(&mut self, phase: Phase) {
        self.base_mut().phase = phase;
    }

    fn ledger(&mut self) -> &mut Ledger {
        &mut self.base_mut().ledger
    }

    /// The slot has a connection (open or opening).
    fn has_connection(&self) -> bool {
        self.base().fd.is_some()
    }

    /// Closes the connection (if any) and settles its books; `by_server`:
    /// the next connection counts as a reconnect.
    fn drop_connection(&mut self, io: &I, by_server: bool) {
        if self.has_connection() {
            self.release(io);
            let base = self.base_mut();
            base.fd = None;
            base.bump_generation();
        }
        self.ledger().connection_gone(io.ctx(), by_server);
    }

    /// Sends the current request, opening a connection first when there is
    /// none or the current one cannot be trusted.
    fn send_request(&mut self, io: &I, now: Instant) -> Step {
        let want = self.base().ledger.origin();
        if self.base().origin != want {
            self.switch_to(io, want);
        }
        if self.has_connection() && !self.ledger().fit_to_send(io.ctx(), now) {
            self.drop_connection(io, false);
        }
        self.ledger().reset_response();
        if !self.has_connection() {
            return self.open(io, now);
        }
        self.ledger().sending(io.ctx(), now);
        self.send(io)
    }

    /// The load is over: true while the slot still ends something of its
    /// connection (a WebSocket's closing handshake, ws.rs), which the
    /// worker waits for.
    fn linger(&mut self, _io: &I) -> bool {
        false
    }

    /// The run is over (its deadline, a stop), whatever the slot was
    /// doing: true while it still ends something of its connection (a
    /// WebSocket's close, ws.rs), which the worker waits for. HTTP lets go
    /// (what is in flight is unfinished).
    fn end(&mut self, _io: &I) -> bool {
        false
    }

    /// True when the current phase has run out of time.
    fn is_overdue(&self, now: Instant) -> bool {
        self.phase() != Phase::Idle && now >= self.base().ledger.deadline
    }

    /// The deadline passed: the request fails with its stage's timeout
    /// (outcome_class.rs, as the tokio path counts it).
    fn on_timeout(&mut self, io: &I) -> Step {
        let stage = self.phase().stage();
        let kind = stage.timeout_kind();
        if let Some(reason) = stage.timeout_reason() {
            io.ctx().state.sample_error(kind, || reason.into());
        }
        self.fail(io, kind)
    }

    /// Starts a request the worker has already counted (`begin_request`).
    fn start(&mut self, io: &I, now: Instant) -> Step {
        self.start_at(io, now, now)
    }

    /// Starts a pipelined batch of `n` requests the worker has already
    /// counted (closed model).
    fn start_batch(&mut self, io: &I, now: Instant, n: usize) -> Step {
        if !self.ledger().begin_batch(io.ctx(), now, n) {
            self.park(io);
            return Step::Pending;
        }
        self.send_request(io, now)
    }

    /// Starts at `now` a request intended at `intended` (the open model;
    /// counted with `begin_intended`): its latency runs from `intended`.
    /// A `unique` feeder out of rows parks the slot (nothing is sent).
    fn start_at(&mut self, io: &I, intended: Instant, now: Instant) -> Step {
        if !self.ledger().begin(io.ctx(), intended) {
            self.park(io);
            return Step::Pending;
        }
        self.send_request(io, now)
    }

    /// Closes the connections and waits for the next start.
    fn park(&mut self, io: &I) {
        self.drop_connection(io, false);
        self.close_side(io);
        self.set_phase(Phase::Idle);
    }

    /// Makes the current connection the one to origin `want` (redirect.rs:
    /// `None` the run's, else another a hop went to), by the rule in
    /// redirect_switch.rs. The one not in use is parked (its socket open,
    /// its books in [`super::slot_state::SideLink`]). A parked connection that saw an event
    /// or a completion while parked (the server closed it, most likely) is
    /// not trusted: it is closed when it comes back, as closed by the server.
    fn switch_to(&mut self, io: &I, want: Option<u16>) {
        let side = self.base().side.as_ref().map(|s| s.origin);
        match origin_switch(self.base().origin, side, want) {
            OriginSwitch::Stay => return,
            OriginSwitch::SwapSide => {
                self.swap_side();
                let stale = self
                    .base_mut()
                    .side
                    .as_mut()
                    .is_some_and(|s| std::mem::take(&mut s.stale));
                if stale {
                    self.drop_connection(io, true);
                }
                return;
            }
            OriginSwitch::ParkCurrent => {
                self.close_side(io);
                self.swap_side();
            }
            OriginSwitch::DropCurrent => self.drop_connection(io, false),
        }
        self.base_mut().origin = want;
    }

    /// Swaps the current connection with the parked one (whose books were
    /// stale, if they were, stay marked in the side until read).
    fn swap_side(&mut self) {
        self.swap_transport();
        self.base_mut().swap_side_link();
    }

    /// Closes the parked connection, if any.
    fn close_side(&mut self, io: &I) {
        if self.base().side.as_ref().is_some_and(|s| s.fd.is_some()) {
            self.swap_side();
            self.drop_connection(io, false);
            self.swap_side();
        }
        if let Some(side) = self.base_mut().side.as_mut() {
            side.stale = false;
        }
    }

    /// Records a complete response and keeps or closes the connection. Of
    /// a pipelined batch, every response the bytes at hand complete is
    /// recorded, and the slot reads on until the batch is answered.
    fn answered(&mut self, io: &I, now: Instant, mut done: Complete) -> Step {
        match self.ledger().redirect(io.ctx(), &done) {
            Follow::Hop => {
                // The hop goes on this connection when it stays open.
                let reuse = self.ledger().hop_answered(io.ctx(), now, done.keep_alive);
                self.settle_connection(io, reuse);
                return self.send_request(io, now);
            }
            // The 3xx was read in full: its connection stays, as a 404's does.
            Follow::Limit => return self.fail_answered(io, now, &done, ErrorKind::RedirectLimit),
            Follow::Unreachable => return self.fail_answered(io, now, &done, ErrorKind::Other),
            Follow::No | Follow::Offsite => {}
        }
        let mut keep = self.ledger().answered(io.ctx(), now, &done);
        while self.base().ledger.batch_pending() {
            if !done.keep_alive {
                // The server closes after this response: the rest of the
                // batch goes again on a new connection (a reconnect).
                self.ledger().rest_of_batch();
                self.drop_connection(io, true);
                return self.send_request(io, now);
            }
            done = match self.ledger().next_of_batch(now) {
                Ok(ResponseProgress::Complete(next)) => next,
                Ok(ResponseProgress::Partial) => return Step::Pending,
                Err(kind) => return self.fail(io, kind),
            };
            keep = self.ledger().answered(io.ctx(), now, &done);
        }
        self.set_phase(Phase::Idle);
        self.settle_connection(io, keep);
        Step::Answered
    }

    /// Keeps the connection, or closes it as conn_books.rs decided after
    /// an answer (its successor a reconnect only when the server closed it).
    fn settle_connection(&mut self, io: &I, reuse: Reuse) {
        if let Reuse::Close { by_server } = reuse {
            self.drop_connection(io, by_server);
        }
    }

    /// A failure on an open connection; an idle close is retried once.
    /// The request could not all go out: the send failed, or the server
    /// ended the stream. A server may answer before it has read the whole
    /// request (a 413 to a body too large; RFC 9112 §9.3 asks a client to
    /// watch for it), and that answer, kept while writing, is the request's
    /// response; its connection, the request cut short, carries no other.
    /// With nothing kept, the exchange fails as `kind`. `closed`: the
    /// stream ended cleanly, so a response framed by the close ends there.
    fn answered_early_or(&mut self, io: &I, kind: ErrorKind, closed: bool) -> Step {
        if !self.ledger().has_unsolicited_bytes() {
            return self.fail_exchange(io, kind);
        }
        let now = Instant::now();
        let done = match self.ledger().parse_early(now) {
            Ok(ResponseProgress::Complete(done)) => Ok(done),
            Ok(ResponseProgress::Partial) if closed => self.ledger().end_of_stream(),
            Ok(ResponseProgress::Partial) => Err(kind),
            Err(kind) => Err(kind),
        };
        match done {
            Ok(done) => {
                let step = self.answered(io, now, done);
                if self.has_connection() {
                    self.drop_connection(io, true);
                }
                step
            }
            Err(kind) => self.fail(io, kind),
        }
    }

    fn fail_exchange(&mut self, io: &I, kind: ErrorKind) -> Step {
        if self.ledger().retry_after_idle_close(kind) {
            self.drop_connection(io, true);
            return self.send_request(io, Instant::now());
        }
        self.fail(io, kind)
    }

    /// The TLS session failed (its handshake, or a record after it): the
    /// `tls` class, with rustls' reason sampled.
    fn fail_tls(&mut self, io: &I, reason: &dyn std::fmt::Display) -> Step {
        io.ctx()
            .state
            .sample_error(ErrorKind::Tls, || reason.to_string());
        self.fail(io, ErrorKind::Tls)
    }

    /// [`ReactorSlot::fail_tls`] with rustls' error, explained (tls_errors.rs).
    fn fail_tls_error(&mut self, io: &I, error: &rustls::Error) -> Step {
        self.fail_tls(io, &crate::net::tls_errors::explain(error))
    }

    /// [`ReactorSlot::fail_tls`] with an I/O error that may carry rustls'
    /// error, explained (tls_errors.rs).
    fn fail_tls_io(&mut self, io: &I, error: &io::Error) -> Step {
        self.fail_tls(io, &crate::net::tls_errors::explain_io(error))
    }

    fn fail_connect(&mut self, io: &I, error: &io::Error) -> Step {
        let kind = classify_connect(error);
        io.ctx().state.sample_error(kind, || error.to_string());
        self.fail(io, kind)
    }

    /// The request failed on a complete response (a redirect it cannot
    /// follow): recorded, and the connection kept while keep-alive allows.
    fn fail_answered(&mut self, io: &I, now: Instant, done: &Complete, kind: ErrorKind) -> Step {
        let reuse = self.ledger().hop_answered(io.ctx(), now, done.keep_alive);
        self.ledger().failed(io.ctx(), kind, true);
        self.settle_connection(io, reuse);
        self.set_phase(Phase::Idle);
        Step::Failed
    }

    /// The request failed: recorded, and the connection is gone.
    fn fail(&mut self, io: &I, kind: ErrorKind) -> Step {
        let had_connection = self.has_connection() && !self.phase().is_opening();
        self.ledger().failed(io.ctx(), kind, had_connection);
        self.drop_connection(io, false);
        self.set_phase(Phase::Idle);
        Step::Failed
    }
}
