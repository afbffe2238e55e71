//! What every WebSocket slot of a reactor is, whatever drives its socket:
//! its state ([`WsCore`]: the connection, its session and booking, the
//! message awaited, the close) and the rules both reactors share
//! ([`WsReactorSlot`]'s provided methods, written once: how a message
//! starts, is answered, times out or fails, how a slot parks, lingers and
//! ends with a close). epoll/ws.rs and uring/ws.rs keep only their I/O.
//! [`WsSlotRules`] and `ws_reactor_slot!` make every [`WsReactorSlot`] a
//! [`ReactorSlot`](super::slot::ReactorSlot), so the worker's turn drives
//! it as it drives HTTP.

use super::slot::{Phase, SlotBase, Step, WorkerIo};
use super::tls::TlsSession;
use crate::drive::ws_conn::{answer_timeout, Sent, WsConn};
use crate::drive::ws_slot::CLOSE_WAIT;
use crate::exchange::ws_session::{WsFailure, WsSession};
use crate::net::outcome_class::{classify_connect, classify_io};
use crate::worker::context::ConnectionContext;
use stampede_metrics::ErrorKind;
use std::io;
use std::time::{Duration, Instant};

/// What a WebSocket slot holds, whatever drives its socket.
pub(super) struct WsCore {
    /// The fd, its generation, the phase and the deadline (`ledger.deadline`;
    /// the rest of the ledger is HTTP's and unused).
    pub(super) base: SlotBase,
    /// The session and its booking.
    pub(super) conn: WsConn,
    /// The connection's TLS session (`wss://` only).
    pub(super) tls: Option<Box<TlsSession>>,
    /// What the TLS session decrypted from the last read.
    pub(super) plain: Vec<u8>,
    /// When the TCP connect of a TLS connection ended (its handshake began).
    pub(super) tcp_done: Instant,
    /// The TCP connect is over: the connection counts as open.
    pub(super) established: bool,
    /// When the current connection's connect began.
    pub(super) connect_started: Instant,
    /// The message waiting for its connection's upgrade (its intended instant).
    pub(super) waiting: Option<Instant>,
    /// A message is out and its reply awaited.
    pub(super) awaiting: bool,
    /// When the message in flight went out.
    pub(super) sent: Instant,
    /// The client's close is out; the server's is awaited until the deadline.
    pub(super) closing: bool,
    /// After a failed connect or upgrade: the slot starts again no earlier.
    pub(super) retry_at: Option<Instant>,
}

impl WsCore {
    pub(super) fn new(index: u32, seed: u64, now: Instant) -> WsCore {
        WsCore {
            base: SlotBase::new(index, false, now),
            conn: WsConn::new(index as usize, seed),
            tls: None,
            plain: Vec::new(),
            tcp_done: now,
            established: false,
            connect_started: now,
            waiting: None,
            awaiting: false,
            sent: now,
            closing: false,
            retry_at: None,
        }
    }

    /// A new connection's connect began at `now`: its session starts,
    /// the upgrade waiting in its outbox, and over `wss://` a TLS session
    /// with the ClientHello to send first.
    pub(super) fn connecting(
        &mut self,
        ctx: &ConnectionContext,
        now: Instant,
    ) -> Result<(), WsFailure> {
        self.base.phase = Phase::Connecting;
        self.connect_started = now;
        self.conn.connected(ctx, now);
        if let Some(client) = &ctx.connector.tls {
            let session = TlsSession::new(client)
                .map_err(|e| tls_failure(crate::net::tls_errors::explain(&e)))?;
            self.tls = Some(Box::new(session));
        }
        Ok(())
    }

    /// The connection is open (its TCP connect took `took`; over TLS, the
    /// handshake is over too): it counts as open (as on tokio, before its
    /// upgrade), and the upgrade's answer has the response timeout.
    pub(super) fn tcp_connected(&mut self, ctx: &ConnectionContext, now: Instant, took: Duration) {
        self.established = true;
        ctx.state.connection_opened(false, took);
        self.base.ledger.deadline = now + ctx.timeout;
        self.base.phase = Phase::Writing;
    }

    /// A plain connection's connect is over at `now`.
    pub(super) fn connect_done(&mut self, ctx: &ConnectionContext, now: Instant) {
        let took = now.saturating_duration_since(self.connect_started);
        self.tcp_connected(ctx, now, took);
    }

    /// A TLS connection's TCP connect is over: its handshake starts, with
    /// a connect timeout of its own (as on tokio).
    pub(super) fn tls_started(&mut self, ctx: &ConnectionContext, now: Instant) {
        self.tcp_done = now;
        self.base.ledger.handshaking(ctx, now);
        self.base.phase = Phase::Handshaking;
    }

    /// The TLS handshake is over at `now`: the connection counts as open,
    /// its TCP connect and its handshake timed apart (as on tokio).
    pub(super) fn handshake_done(&mut self, ctx: &ConnectionContext, now: Instant) {
        let connect = self
            .tcp_done
            .saturating_duration_since(self.connect_started);
        ctx.state
            .tls_handshake(connect, now.saturating_duration_since(self.tcp_done));
        self.tcp_connected(ctx, now, connect);
        // The server speaks only once the upgrade is in: nothing came yet.
        self.plain.clear();
    }

    /// The TLS session is still handshaking.
    pub(super) fn is_handshaking(&self) -> bool {
        self.tls.as_ref().is_some_and(|tls| tls.is_handshaking())
    }

    /// The session's outbox holds frames not handed to the socket yet.
    pub(super) fn has_outbox(&self) -> bool {
        self.conn
            .session
            .as_ref()
            .is_some_and(|s| !s.outbox().is_empty())
    }
}

/// A WebSocket connection slot of a reactor. The required methods are the
/// socket's; the provided ones are the rules both reactors share (those of
/// the tokio driver, ws_load.rs), written once.
pub(super) trait WsReactorSlot<I: WorkerIo> {
    fn core(&self) -> &WsCore;
    fn core_mut(&mut self) -> &mut WsCore;
    /// Opens a socket and starts its connect ([`WsCore::connecting`]), the
    /// upgrade or the ClientHello going as soon as the connect allows.
    fn open_socket(&mut self, io: &I, now: Instant) -> Step;
    /// Writes what the session's outbox and the TLS session hold (their
    /// frame bytes booked): `Ok(true)` once it is all out or in the
    /// kernel's hands, `Ok(false)` when the socket is full.
    fn write_out(&mut self, io: &I) -> Result<bool, WsFailure>;
    /// Writes the outbox after a message was queued, the phase following.
    fn send_outbox(&mut self, io: &I) -> Step;
    /// Lets go of what the kernel still does for the connection, just
    /// before its fd closes (io_uring cancels its requests).
    fn cancel_io(&mut self, _io: &I) {}
    /// Forgets what the slot kept of a connection's writes (it is gone).
    fn forget_writes(&mut self) {}
    /// Bytes of the outbox the slot itself is still writing (epoll's short
    /// writes): a message is answered only once they are out.
    fn partly_written(&self) -> bool {
        false
    }
    /// Writes what the outbox holds (a close) before the connection is
    /// dropped, if the socket takes it at once: the bytes must have left
    /// when the fd closes (io_uring submits them first).
    fn write_last(&mut self, io: &I) {
        if self.core().base.fd.is_some() {
            let _ = self.write_out(io);
        }
    }

    /// Closes the connection (if any) and counts it closed if it was open.
    fn close_connection(&mut self, io: &I) {
        if self.core().base.fd.is_some() {
            self.cancel_io(io);
            let core = self.core_mut();
            core.base.fd = None;
            core.base.bump_generation();
            if std::mem::take(&mut core.established) {
                io.ctx().state.connection_closed();
            }
        }
        self.forget_writes();
        let core = self.core_mut();
        core.conn.gone();
        core.tls = None;
        core.closing = false;
        core.awaiting = false;
    }

    /// Renders the next message (intended at `intended`) and writes it.
    /// With a workload there may be none: one `--ws-match-id` finds no id
    /// in is booked failed, and a user that is done (its feeder ran out)
    /// parks the slot.
    fn send_message(&mut self, io: &I, intended: Instant) -> Step {
        let now = Instant::now();
        let core = self.core_mut();
        core.sent = now;
        core.awaiting = true;
        match core.conn.send_next(io.ctx(), intended) {
            Sent::Framed => {}
            // Booked failed (no id to match by): the slot goes on next turn.
            Sent::Failed => {
                (core.awaiting, core.base.phase) = (false, Phase::Idle);
                return Step::Failed;
            }
            // The user is done: the slot parks (its connection closes).
            Sent::Nothing => {
                (core.awaiting, core.base.phase) = (false, Phase::Idle);
                self.begin_close(io);
                return Step::Pending;
            }
        }
        core.base.ledger.deadline = now + io.ctx().timeout;
        core.base.phase = Phase::Writing;
        self.send_outbox(io)
    }

    /// What a read that the session took without error moved on: the
    /// close answered, the upgrade accepted (the waiting message goes), a
    /// pong to write, the message answered.
    fn progress(&mut self, io: &I) -> Option<Step> {
        let core = self.core_mut();
        if core.closing {
            if core.conn.session.as_ref().is_none_or(WsSession::is_closed) {
                self.close_connection(io);
                return Some(Step::Pending);
            }
            return None;
        }
        if core.waiting.is_some() {
            if !core.conn.is_open() {
                return None;
            }
            core.conn.backoff.succeeded();
            let intended = core.waiting.take().expect("checked above");
            return Some(self.send_message(io, intended));
        }
        let unsent = core.has_outbox() || core.tls.as_ref().is_some_and(|t| !t.unsent().is_empty());
        if unsent {
            match self.write_out(io) {
                Ok(true) => {}
                // The rest goes when the socket has room.
                Ok(false) => self.core_mut().base.phase = Phase::Writing,
                Err(failure) => return Some(self.fail_ws(io, failure)),
            }
        }
        let partly_written = self.partly_written();
        let core = self.core_mut();
        let answered = (core.conn.session.as_ref()).is_some_and(|s| s.unanswered() == 0);
        if core.awaiting && answered && !partly_written {
            core.awaiting = false;
            core.base.phase = Phase::Idle;
            // `--ws-rate`: the turn starts the next message at its instant.
            core.base.ledger.pause_until = core.conn.next_due();
            return Some(Step::Answered);
        }
        None
    }

    /// Starts the closing handshake on an open connection, or lets go of
    /// any other; the slot is idle either way.
    fn begin_close(&mut self, io: &I) {
        let core = self.core_mut();
        if core.closing {
            return;
        }
        if core.base.fd.is_none() || !core.conn.is_open() {
            self.close_connection(io);
            return;
        }
        core.conn.close();
        core.closing = true;
        core.base.ledger.deadline = Instant::now() + CLOSE_WAIT.min(io.ctx().timeout);
        if !matches!(self.write_out(io), Ok(true)) {
            // A close that cannot go out at once is not waited for.
            self.close_connection(io);
        }
    }

    fn fail_to_connect(&mut self, io: &I, error: &io::Error) -> Step {
        let failure = WsFailure {
            kind: classify_connect(error),
            reason: error.to_string(),
        };
        self.fail_ws(io, failure)
    }

    /// The connection failed (or the server closed it). While closing, or
    /// with nothing asked of it (an idle connection of the open model),
    /// it just ends. A message waiting for its connection is booked failed
    /// from its intended start and the slot backs off (a failed connect or
    /// upgrade); the messages in flight are booked failed, the close the
    /// session may have written goes out if the socket takes it, and the
    /// next message goes on a new connection.
    fn fail_ws(&mut self, io: &I, failure: WsFailure) -> Step {
        let core = self.core_mut();
        if core.closing {
            self.close_connection(io);
            return Step::Pending;
        }
        if !core.awaiting && core.waiting.is_none() {
            // An idle connection ended (the server's close, answered in the
            // outbox, or its end): booked by ws_conn.rs; the next message
            // goes on a new connection.
            self.write_last(io);
            self.close_connection(io);
            return Step::Pending;
        }
        core.conn.note(io.ctx(), &failure);
        if let Some(intended) = core.waiting.filter(|_| core.conn.carry_unsent()) {
            // The server ended the new connection before the message left:
            // it goes on the next one (ws_conn.rs's rule).
            self.write_last(io);
            self.close_connection(io);
            self.core_mut().waiting = Some(intended);
            return self.open_socket(io, Instant::now());
        }
        let core = self.core_mut();
        if let Some(intended) = core.waiting.take() {
            core.conn.fail_unsent(io.ctx(), intended, failure.kind);
            self.close_connection(io);
            let core = self.core_mut();
            let delay = io.ctx().state.connect_backoff(&mut core.conn.backoff);
            core.retry_at = (!delay.is_zero()).then(|| Instant::now() + delay);
        } else {
            core.conn.fail_unanswered(io.ctx(), core.sent, failure.kind);
            // The close the session wrote (ws_conn.rs) goes first.
            self.write_last(io);
            self.close_connection(io);
        }
        self.core_mut().base.phase = Phase::Idle;
        Step::Failed
    }
}

/// Every WebSocket slot is a reactor slot by these rules: the turn starts
/// its messages, times them out, parks it and ends it. Each reactor's slot
/// takes them with `ws_reactor_slot!`.
pub(super) trait WsSlotRules<I: WorkerIo>: WsReactorSlot<I> {
    fn base(&self) -> &SlotBase {
        &self.core().base
    }

    fn base_mut(&mut self) -> &mut SlotBase {
        &mut self.core_mut().base
    }

    fn open(&mut self, io: &I, now: Instant) -> Step {
        self.open_socket(io, now)
    }

    fn send(&mut self, io: &I) -> Step {
        self.send_outbox(io)
    }

    fn release(&mut self, io: &I) {
        self.cancel_io(io);
    }

    fn swap_transport(&mut self) {}

    /// A WebSocket run follows no redirect: the HTTP ledger's books of a
    /// connection are not used, so closing is counted here.
    fn drop_connection(&mut self, io: &I, _by_server: bool) {
        self.close_connection(io);
    }

    fn retry_at(&self) -> Option<Instant> {
        self.core().retry_at
    }

    fn is_overdue(&self, now: Instant) -> bool {
        let core = self.core();
        (core.base.phase != Phase::Idle || core.closing) && now >= core.base.ledger.deadline
    }

    /// The deadline passed: a close not answered in time just ends; a
    /// connect, an upgrade or a reply that did not come fails (the
    /// classes and reasons of the tokio driver).
    fn on_timeout(&mut self, io: &I) -> Step {
        let core = self.core();
        if core.base.phase == Phase::Idle {
            self.close_connection(io);
            return Step::Pending;
        }
        let failure = if core.base.phase.is_opening() {
            let stage = core.base.phase.stage();
            WsFailure {
                kind: stage.timeout_kind(),
                reason: stage.timeout_reason().unwrap_or_default().into(),
            }
        } else {
            answer_timeout(core.waiting.is_some())
        };
        self.fail_ws(io, failure)
    }

    /// Starts the closed model's next message, due at the slot's own
    /// instant with `--ws-rate` (ws_conn.rs), else now.
    fn start(&mut self, io: &I, now: Instant) -> Step {
        let intended = self.core_mut().conn.claim_due(io.ctx(), now);
        self.start_at(io, intended, now)
    }

    /// Sends a message intended at `intended`, connecting and upgrading
    /// first when the slot has no open connection.
    fn start_at(&mut self, io: &I, intended: Instant, now: Instant) -> Step {
        let core = self.core_mut();
        core.retry_at = None;
        if core.closing || !core.conn.is_open() {
            self.close_connection(io);
            self.core_mut().waiting = Some(intended);
            return self.open_socket(io, now);
        }
        self.send_message(io, intended)
    }

    /// The slot has nothing to send: its connection closes with 1000.
    fn park(&mut self, io: &I) {
        self.core_mut().base.phase = Phase::Idle;
        self.begin_close(io);
    }

    /// The load is over: an open connection closes with 1000, and the
    /// slot lingers until the server's close (or the close's deadline).
    fn linger(&mut self, io: &I) -> bool {
        let core = self.core();
        if core.base.phase == Phase::Idle && !core.closing {
            self.begin_close(io);
        }
        self.core().closing
    }

    /// The run is over (its deadline, a stop): an open connection closes
    /// with 1000 whatever it was doing (ws_conn.rs's close: a message in
    /// flight, or one waiting for its upgrade, is left unfinished, as the
    /// tokio driver leaves it), and the slot lingers as above.
    fn end(&mut self, io: &I) -> bool {
        let core = self.core_mut();
        core.waiting = None;
        core.awaiting = false;
        core.base.phase = Phase::Idle;
        self.begin_close(io);
        self.core().closing
    }
}

impl<I: WorkerIo, S: WsReactorSlot<I>> WsSlotRules<I> for S {}

/// Makes a reactor's WebSocket slot a `ReactorSlot` by [`WsSlotRules`].
/// A macro, not a blanket impl: HTTP/2's `H2Driver` holds the one blanket
/// impl of `ReactorSlot` that coherence allows.
macro_rules! ws_reactor_slot {
    ($slot:ty, $io:ident) => {
        impl<'a> $crate::drive::reactor::slot::ReactorSlot<$io<'a>> for $slot {
            fn base(&self) -> &$crate::drive::reactor::slot::SlotBase {
                <Self as $crate::drive::reactor::ws::WsSlotRules<$io<'a>>>::base(self)
            }

            fn base_mut(&mut self) -> &mut $crate::drive::reactor::slot::SlotBase {
                <Self as $crate::drive::reactor::ws::WsSlotRules<$io<'a>>>::base_mut(self)
            }

            fn open(
                &mut self,
                io: &$io<'a>,
                now: std::time::Instant,
            ) -> $crate::drive::reactor::slot::Step {
                <Self as $crate::drive::reactor::ws::WsSlotRules<$io<'a>>>::open(self, io, now)
            }

            fn send(&mut self, io: &$io<'a>) -> $crate::drive::reactor::slot::Step {
                <Self as $crate::drive::reactor::ws::WsSlotRules<$io<'a>>>::send(self, io)
            }

            fn release(&mut self, io: &$io<'a>) {
                <Self as $crate::drive::reactor::ws::WsSlotRules<$io<'a>>>::release(self, io)
            }

            fn swap_transport(&mut self) {
                <Self as $crate::drive::reactor::ws::WsSlotRules<$io<'a>>>::swap_transport(self)
            }

            fn drop_connection(&mut self, io: &$io<'a>, _by_server: bool) {
                <Self as $crate::drive::reactor::ws::WsSlotRules<$io<'a>>>::drop_connection(
                    self, io, _by_server,
                )
            }

            fn retry_at(&self) -> Option<std::time::Instant> {
                <Self as $crate::drive::reactor::ws::WsSlotRules<$io<'a>>>::retry_at(self)
            }

            fn is_overdue(&self, now: std::time::Instant) -> bool {
                <Self as $crate::drive::reactor::ws::WsSlotRules<$io<'a>>>::is_overdue(self, now)
            }

            fn on_timeout(&mut self, io: &$io<'a>) -> $crate::drive::reactor::slot::Step {
                <Self as $crate::drive::reactor::ws::WsSlotRules<$io<'a>>>::on_timeout(self, io)
            }

            fn start(
                &mut self,
                io: &$io<'a>,
                now: std::time::Instant,
            ) -> $crate::drive::reactor::slot::Step {
                <Self as $crate::drive::reactor::ws::WsSlotRules<$io<'a>>>::start(self, io, now)
            }

            fn start_at(
                &mut self,
                io: &$io<'a>,
                intended: std::time::Instant,
                now: std::time::Instant,
            ) -> $crate::drive::reactor::slot::Step {
                <Self as $crate::drive::reactor::ws::WsSlotRules<$io<'a>>>::start_at(
                    self, io, intended, now,
                )
            }

            fn park(&mut self, io: &$io<'a>) {
                <Self as $crate::drive::reactor::ws::WsSlotRules<$io<'a>>>::park(self, io)
            }

            fn linger(&mut self, io: &$io<'a>) -> bool {
                <Self as $crate::drive::reactor::ws::WsSlotRules<$io<'a>>>::linger(self, io)
            }

            fn end(&mut self, io: &$io<'a>) -> bool {
                <Self as $crate::drive::reactor::ws::WsSlotRules<$io<'a>>>::end(self, io)
            }
        }
    };
}
pub(super) use ws_reactor_slot;

/// A TLS failure (its handshake, or a record after it), with its reason.
pub(super) fn tls_failure(reason: String) -> WsFailure {
    WsFailure {
        kind: ErrorKind::Tls,
        reason,
    }
}

/// A failed write or read, with its class.
pub(super) fn io_failure(doing: &str, error: &io::Error) -> WsFailure {
    WsFailure {
        kind: classify_io(error),
        reason: format!("{doing}: {error}"),
    }
}
