//! WebSocket (`ws://`, `wss://`) on the epoll reactor: one connection
//! slot per user, driven by readiness events like the HTTP/1.1 slot
//! (slot.rs), its session and booking ws_conn.rs's (the tokio driver's
//! too), so no rule of the protocol is written here. A slot connects
//! (over `wss://`, a rustls session, tls.rs, between the socket and the
//! session, its handshake after the TCP connect), writes the session's
//! outbox (the upgrade, a message, a pong, a close), hands every read to
//! the session, and tells the worker's turn when its message is answered:
//! the closed model sends the next at once, the open model's dispatch
//! hands it the next intended instant. A slot the schedule or the budget
//! parks, or the run's end cuts off, sends a close (1000) and the worker
//! waits for the server's, a moment at most, as the tokio driver does.

use super::poller::{event_buffer, Poller, PEER_CLOSED, READABLE, WRITABLE};
use super::slot::{Io, Slot};
use super::EVENTS_PER_WAIT;
use crate::drive::reactor::tls::{Received, TlsSession};
use crate::drive::reactor::{drive, slot_count, socket, Phase, ReactorSlot, SlotBase, Step};
use crate::drive::ws_conn::{answer_timeout, Sent, WsConn};
use crate::drive::ws_slot::CLOSE_WAIT;
use crate::exchange::ws_session::{WsFailure, WsSession};
use crate::net::outcome_class::{classify_connect, classify_io};
use crate::net::tls_errors::{explain, explain_io};
use crate::plan::worker_plan::{WorkerMessage, WorkerPlan};
use crate::worker::context::ConnectionContext;
use stampede_metrics::ErrorKind;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Runs a WebSocket worker on the epoll reactor (see [`drive`]).
pub(super) fn run(
    plan: &WorkerPlan,
    stop: watch::Receiver<bool>,
    to_aggregator: &mpsc::Sender<WorkerMessage>,
    ctx: &ConnectionContext,
) -> io::Result<()> {
    let poller = Poller::new()?;
    // Frames are small and several may follow each other (a pong, then a
    // message): every socket goes out with TCP_NODELAY, as on tokio.
    let io = Io {
        ctx,
        poller: &poller,
        longest_request: usize::MAX,
    };
    let now = Instant::now();
    let mut slots: Vec<WsSlot> = (0..slot_count(plan))
        .map(|index| WsSlot::new(index as u32, plan.seed, now))
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
                if slot.base.generation != generation {
                    continue;
                }
                let step = slot.on_event(&io, &mut scratch, event.events);
                turn.advance(&io, ctx, slots, index, step);
            }
            Ok(())
        },
    )
}

/// One WebSocket connection slot of the epoll reactor.
pub(super) struct WsSlot {
    /// The fd, its generation, the phase and the deadline (`ledger.deadline`;
    /// the rest of the ledger is HTTP's and unused).
    base: SlotBase,
    /// The session and its booking.
    conn: WsConn,
    /// The connection's TLS session (`wss://` only).
    tls: Option<Box<TlsSession>>,
    /// When the TCP connect of a TLS connection ended (its handshake began).
    tcp_done: Instant,
    /// What the TLS session decrypted from the last read.
    plain: Vec<u8>,
    /// Bytes of the session's outbox written so far.
    out_at: usize,
    /// The TCP connect is over: the connection counts as open.
    established: bool,
    /// When the current connection's connect began.
    connect_started: Instant,
    /// The message waiting for its connection's upgrade (its intended instant).
    waiting: Option<Instant>,
    /// A message is out and its reply awaited.
    awaiting: bool,
    /// When the message in flight went out.
    sent: Instant,
    /// The client's close is out; the server's is awaited until the deadline.
    closing: bool,
    /// After a failed connect or upgrade: the slot starts again no earlier.
    retry_at: Option<Instant>,
}

impl ReactorSlot<Io<'_>> for WsSlot {
    fn base(&self) -> &SlotBase {
        &self.base
    }

    fn base_mut(&mut self) -> &mut SlotBase {
        &mut self.base
    }

    /// Connects, the upgrade waiting in the new session's outbox, and
    /// writes it at once if the connect is over already (loopback).
    fn open(&mut self, io: &Io, now: Instant) -> Step {
        let connector = &io.ctx.connector;
        let made = self.base.new_socket(io.ctx, now, |_| {
            connector.with_next_endpoint(|endpoint| {
                socket::open(endpoint, &connector.source_addrs, io.longest_request)
            })
        });
        let fd = match made {
            Ok(fd) => fd,
            Err(error) => return self.fail_to_connect(io, &error),
        };
        if let Err(error) = io.poller.add(fd.as_raw_fd(), self.token()) {
            drop(fd);
            return self.fail_to_connect(io, &error);
        }
        self.base.fd = Some(fd);
        self.base.phase = Phase::Connecting;
        self.connect_started = now;
        self.conn.connected(io.ctx, now);
        if let Some(client) = &connector.tls {
            match TlsSession::new(client) {
                Ok(session) => self.tls = Some(Box::new(session)),
                Err(error) => return self.fail(io, tls_failure(explain(&error))),
            }
            // The ClientHello goes at once when the connect is over already.
            let hello = self.tls.as_ref().map_or(&[][..], |tls| tls.unsent());
            return match socket::send(self.base.raw_fd(), hello) {
                Ok(n) => {
                    self.tls_started(io, Instant::now());
                    if let Some(tls) = self.tls.as_mut() {
                        tls.advance(n);
                    }
                    self.handshake(io, &mut [], 0)
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => Step::Pending,
                Err(error) => self.fail_to_connect(io, &error),
            };
        }
        let upgrade = self
            .conn
            .session
            .as_ref()
            .map_or(&[][..], WsSession::outbox);
        match socket::send(self.base.raw_fd(), upgrade) {
            Ok(n) => {
                self.connect_done(io);
                self.out_at = n;
                self.flush_or_fail(io)
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Step::Pending,
            Err(error) => self.fail_to_connect(io, &error),
        }
    }

    /// Writes the rest of the outbox.
    fn send(&mut self, io: &Io) -> Step {
        self.flush_or_fail(io)
    }

    fn swap_transport(&mut self) {}

    /// A WebSocket run follows no redirect: the HTTP ledger's books of a
    /// connection are not used, so closing is counted here.
    fn drop_connection(&mut self, io: &Io, _by_server: bool) {
        if self.base.fd.take().is_some() {
            self.base.bump_generation();
            if std::mem::take(&mut self.established) {
                io.ctx.state.connection_closed();
            }
        }
        self.conn.gone();
        self.tls = None;
        self.out_at = 0;
        self.closing = false;
        self.awaiting = false;
    }

    fn retry_at(&self) -> Option<Instant> {
        self.retry_at
    }

    fn is_overdue(&self, now: Instant) -> bool {
        (self.base.phase != Phase::Idle || self.closing) && now >= self.base.ledger.deadline
    }

    /// The deadline passed: a close not answered in time just ends; a
    /// connect, an upgrade or a reply that did not come fails (the
    /// classes and reasons of the tokio driver).
    fn on_timeout(&mut self, io: &Io) -> Step {
        if self.base.phase == Phase::Idle {
            self.drop_connection(io, false);
            return Step::Pending;
        }
        let failure = if self.base.phase.is_opening() {
            let stage = self.base.phase.stage();
            WsFailure {
                kind: stage.timeout_kind(),
                reason: stage.timeout_reason().unwrap_or_default().into(),
            }
        } else {
            answer_timeout(self.waiting.is_some())
        };
        self.fail(io, failure)
    }

    /// Sends a message intended at `intended`, connecting and upgrading
    /// first when the slot has no open connection.
    fn start_at(&mut self, io: &Io, intended: Instant, now: Instant) -> Step {
        self.retry_at = None;
        if self.closing || !self.conn.is_open() {
            self.drop_connection(io, false);
            self.waiting = Some(intended);
            return self.open(io, now);
        }
        self.send_message(io, intended)
    }

    /// The slot has nothing to send: its connection closes with 1000.
    fn park(&mut self, io: &Io) {
        self.base.phase = Phase::Idle;
        self.begin_close(io);
    }

    /// The load is over: an open connection closes with 1000, and the
    /// slot lingers until the server's close (or the close's deadline).
    fn linger(&mut self, io: &Io) -> bool {
        if self.base.phase == Phase::Idle && !self.closing {
            self.begin_close(io);
        }
        self.closing
    }

    /// The run is over (its deadline, a stop): an open connection closes
    /// with 1000 whatever it was doing (ws_conn.rs's close: a message in
    /// flight, or one waiting for its upgrade, is left unfinished, as the
    /// tokio driver leaves it), and the slot lingers as above.
    fn end(&mut self, io: &Io) -> bool {
        self.waiting = None;
        self.awaiting = false;
        self.base.phase = Phase::Idle;
        self.begin_close(io);
        self.closing
    }
}

impl WsSlot {
    fn new(index: u32, seed: u64, now: Instant) -> WsSlot {
        WsSlot {
            base: SlotBase::new(index, false, now),
            conn: WsConn::new(index as usize, seed),
            tls: None,
            tcp_done: now,
            plain: Vec::new(),
            out_at: 0,
            established: false,
            connect_started: now,
            waiting: None,
            awaiting: false,
            sent: now,
            closing: false,
            retry_at: None,
        }
    }

    /// The epoll token of the current connection (slot.rs's encoding).
    fn token(&self) -> u64 {
        (u64::from(self.base.generation) << 32) | u64::from(self.base.index)
    }

    /// Handles readiness `events` of this slot's connection.
    fn on_event(&mut self, io: &Io, scratch: &mut [u8], events: u32) -> Step {
        match self.base.phase {
            Phase::Idle if self.closing && events & READABLE != 0 => self.read(io, scratch, events),
            Phase::Idle => Step::Pending,
            Phase::Connecting if events & WRITABLE != 0 => {
                if let Some(error) = socket::connect_error(self.base.raw_fd()) {
                    return self.fail_to_connect(io, &error);
                }
                if self.tls.is_some() {
                    self.tls_started(io, Instant::now());
                    return self.handshake(io, scratch, events);
                }
                self.connect_done(io);
                let step = self.flush_or_fail(io);
                if step != Step::Pending || events & READABLE == 0 {
                    return step;
                }
                self.read(io, scratch, events)
            }
            Phase::Connecting => Step::Pending,
            Phase::Handshaking => self.handshake(io, scratch, events),
            Phase::Writing | Phase::Reading => {
                if events & WRITABLE != 0 && self.base.phase == Phase::Writing {
                    let step = self.flush_or_fail(io);
                    if step != Step::Pending {
                        return step;
                    }
                }
                if events & READABLE != 0 {
                    return self.read(io, scratch, events);
                }
                Step::Pending
            }
        }
    }

    /// The connection is open (its TCP connect took `took`; over TLS, the
    /// handshake is over too): it counts as open (as on tokio, before its
    /// upgrade), and the upgrade's answer has the response timeout.
    fn tcp_connected(&mut self, io: &Io, now: Instant, took: Duration) {
        self.established = true;
        io.ctx.state.connection_opened(false, took);
        self.base.ledger.deadline = now + io.ctx.timeout;
        self.base.phase = Phase::Writing;
    }

    /// A plain connection's connect is over at once.
    fn connect_done(&mut self, io: &Io) {
        let now = Instant::now();
        let took = now.saturating_duration_since(self.connect_started);
        self.tcp_connected(io, now, took);
    }

    /// A TLS connection's TCP connect is over: its handshake starts, with
    /// a connect timeout of its own (as on tokio).
    fn tls_started(&mut self, io: &Io, now: Instant) {
        self.tcp_done = now;
        self.base.ledger.handshaking(io.ctx, now);
        self.base.phase = Phase::Handshaking;
    }

    /// Drives the TLS handshake: sends what the session has to say, reads
    /// the server's part while `events` say it is readable, and once it
    /// is over counts the connection as open (its TCP connect and its
    /// handshake timed apart, as on tokio) and writes the upgrade.
    fn handshake(&mut self, io: &Io, scratch: &mut [u8], events: u32) -> Step {
        if let Err(error) = self.send_ciphertext() {
            return self.fail(io, tls_failure(explain_io(&error)));
        }
        if events & READABLE != 0 {
            loop {
                let n = match socket::recv(self.base.raw_fd(), scratch) {
                    Ok(0) => {
                        let reason = "the server closed the connection in the handshake";
                        return self.fail(io, tls_failure(reason.into()));
                    }
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(error) => return self.fail(io, tls_failure(explain_io(&error))),
                };
                let Some(tls) = self.tls.as_mut() else {
                    return Step::Pending;
                };
                let plain = &mut self.plain;
                match tls.receive(&scratch[..n], |chunk| plain.extend_from_slice(chunk)) {
                    Ok(Received::Open) => {}
                    Ok(Received::Closed) => {
                        let reason = "the server closed the session in the handshake";
                        return self.fail(io, tls_failure(reason.into()));
                    }
                    Err(error) => return self.fail(io, tls_failure(explain(&error))),
                }
                if !tls.is_handshaking() || n < scratch.len() {
                    break;
                }
            }
        }
        if self.tls.as_ref().is_some_and(|tls| tls.is_handshaking()) {
            return match self.send_ciphertext() {
                Ok(_) => Step::Pending,
                Err(error) => self.fail(io, tls_failure(explain_io(&error))),
            };
        }
        let now = Instant::now();
        let connect = self
            .tcp_done
            .saturating_duration_since(self.connect_started);
        io.ctx
            .state
            .tls_handshake(connect, now.saturating_duration_since(self.tcp_done));
        self.tcp_connected(io, now, connect);
        // The server speaks only once the upgrade is in: nothing came yet.
        self.plain.clear();
        let step = self.flush_or_fail(io);
        if step != Step::Pending || events & READABLE == 0 {
            return step;
        }
        self.read(io, scratch, events)
    }

    /// Sends the TLS session's ciphertext until it is all out (true) or
    /// the socket is full (false).
    fn send_ciphertext(&mut self) -> io::Result<bool> {
        let fd = self.base.raw_fd();
        let Some(tls) = self.tls.as_mut() else {
            return Ok(true);
        };
        loop {
            let unsent = tls.unsent();
            if unsent.is_empty() {
                return Ok(true);
            }
            match socket::send(fd, unsent) {
                Ok(n) => tls.advance(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(error) => return Err(error),
            }
        }
    }

    /// Over TLS: hands the outbox to the session (its frame bytes booked)
    /// and sends the ciphertext.
    fn flush_tls(&mut self, io: &Io) -> Result<bool, WsFailure> {
        if let (Some(tls), Some(session)) = (self.tls.as_mut(), self.conn.session.as_ref()) {
            if !session.outbox().is_empty() {
                if let Err(error) = tls.write_plain(session.outbox()) {
                    return Err(tls_failure(explain_io(&error)));
                }
                self.conn.written(io.ctx);
            }
        }
        self.send_ciphertext().map_err(|e| WsFailure {
            kind: classify_io(&e),
            reason: format!("writing: {e}"),
        })
    }

    /// Writes what is left of the outbox: `Ok(true)` once it is all out
    /// (its frame bytes booked), `Ok(false)` when the socket is full.
    fn flush(&mut self, io: &Io) -> Result<bool, WsFailure> {
        if self.tls.is_some() {
            return self.flush_tls(io);
        }
        let fd = self.base.raw_fd();
        loop {
            let Some(session) = self.conn.session.as_ref() else {
                return Ok(true);
            };
            let outbox = session.outbox();
            if self.out_at >= outbox.len() {
                self.out_at = 0;
                self.conn.written(io.ctx);
                return Ok(true);
            }
            match socket::send(fd, &outbox[self.out_at..]) {
                Ok(n) => self.out_at += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) => {
                    return Err(WsFailure {
                        kind: classify_io(&e),
                        reason: format!("writing: {e}"),
                    })
                }
            }
        }
    }

    /// [`WsSlot::flush`], the phase following: reading once all is out.
    fn flush_or_fail(&mut self, io: &Io) -> Step {
        match self.flush(io) {
            Ok(true) => {
                if self.base.phase == Phase::Writing {
                    self.base.phase = Phase::Reading;
                }
                Step::Pending
            }
            Ok(false) => {
                // The rest goes when the socket has room.
                self.base.phase = Phase::Writing;
                Step::Pending
            }
            Err(failure) => self.fail(io, failure),
        }
    }

    /// Renders the next message (intended at `intended`) and writes it.
    fn send_message(&mut self, io: &Io, intended: Instant) -> Step {
        let now = Instant::now();
        self.sent = now;
        self.awaiting = true;
        match self.conn.send_next(io.ctx, intended) {
            Sent::Framed => {}
            // Booked failed (no id to match by): the slot goes on next turn.
            Sent::Failed => {
                (self.awaiting, self.base.phase) = (false, Phase::Idle);
                return Step::Failed;
            }
            // The user is done (its feeder ran out): the slot parks.
            Sent::Nothing => {
                self.awaiting = false;
                self.park(io);
                return Step::Pending;
            }
        }
        self.base.ledger.deadline = now + io.ctx.timeout;
        self.base.phase = Phase::Writing;
        self.flush_or_fail(io)
    }

    /// Reads until the socket is drained or the message is answered. A
    /// short read means drained, unless the peer has closed: its end of
    /// stream may wait behind the data, and edge-triggered epoll does not
    /// report it again.
    fn read(&mut self, io: &Io, scratch: &mut [u8], events: u32) -> Step {
        let peer_closed = events & PEER_CLOSED != 0;
        loop {
            let n = match socket::recv(self.base.raw_fd(), scratch) {
                Ok(0) => {
                    let failure = self.conn.end_of_stream(io.ctx);
                    return self.fail(io, failure);
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Step::Pending,
                Err(e) => {
                    let failure = WsFailure {
                        kind: classify_io(&e),
                        reason: format!("reading: {e}"),
                    };
                    return self.fail(io, failure);
                }
            };
            let now = Instant::now();
            let mut tls_closed = false;
            let received = match self.tls.as_mut() {
                None => self.conn.received(io.ctx, &scratch[..n], self.sent, now),
                Some(tls) => {
                    self.plain.clear();
                    let plain = &mut self.plain;
                    match tls.receive(&scratch[..n], |chunk| plain.extend_from_slice(chunk)) {
                        Ok(Received::Open) => {}
                        Ok(Received::Closed) => tls_closed = true,
                        Err(error) => return self.fail(io, tls_failure(explain(&error))),
                    }
                    self.conn.received(io.ctx, &self.plain, self.sent, now)
                }
            };
            if let Err(failure) = received {
                return self.fail(io, failure);
            }
            if tls_closed {
                // close_notify: nothing more comes, as at the stream's end.
                let failure = self.conn.end_of_stream(io.ctx);
                return self.fail(io, failure);
            }
            if let Some(step) = self.progress(io) {
                return step;
            }
            if n < scratch.len() && !peer_closed {
                return Step::Pending;
            }
        }
    }

    /// What a read that the session took without error moved on: the
    /// close answered, the upgrade accepted (the waiting message goes), a
    /// pong to write, the message answered.
    fn progress(&mut self, io: &Io) -> Option<Step> {
        if self.closing {
            if self.conn.session.as_ref().is_none_or(WsSession::is_closed) {
                self.drop_connection(io, false);
                return Some(Step::Pending);
            }
            return None;
        }
        if self.waiting.is_some() {
            if !self.conn.is_open() {
                return None;
            }
            self.conn.backoff.succeeded();
            let intended = self.waiting.take().expect("checked above");
            return Some(self.send_message(io, intended));
        }
        let unsent = self
            .conn
            .session
            .as_ref()
            .is_some_and(|s| !s.outbox().is_empty())
            || self
                .tls
                .as_ref()
                .is_some_and(|tls| !tls.unsent().is_empty());
        if unsent {
            match self.flush(io) {
                Ok(true) => {}
                // The rest goes when the socket has room.
                Ok(false) => self.base.phase = Phase::Writing,
                Err(failure) => return Some(self.fail(io, failure)),
            }
        }
        let answered = self
            .conn
            .session
            .as_ref()
            .is_some_and(|s| s.unanswered() == 0);
        if self.awaiting && answered && self.out_at == 0 {
            self.awaiting = false;
            self.base.phase = Phase::Idle;
            return Some(Step::Answered);
        }
        None
    }

    /// Starts the closing handshake on an open connection, or lets go of
    /// any other; the slot is idle either way.
    fn begin_close(&mut self, io: &Io) {
        if self.closing {
            return;
        }
        let open = self.base.fd.is_some() && self.conn.is_open();
        if !open {
            self.drop_connection(io, false);
            return;
        }
        self.conn.close();
        self.closing = true;
        self.base.ledger.deadline = Instant::now() + CLOSE_WAIT.min(io.ctx.timeout);
        if !matches!(self.flush(io), Ok(true)) {
            // A close that cannot go out at once is not waited for.
            self.drop_connection(io, false);
        }
    }

    fn fail_to_connect(&mut self, io: &Io, error: &io::Error) -> Step {
        let failure = WsFailure {
            kind: classify_connect(error),
            reason: error.to_string(),
        };
        self.fail(io, failure)
    }

    /// The connection failed (or the server closed it). While closing, it
    /// just ends. A message waiting for its connection is booked failed
    /// from its intended start and the slot backs off (a failed connect
    /// or upgrade); the messages in flight are booked failed, the close
    /// the session may have written goes out if the socket takes it, and
    /// the next message goes on a new connection.
    fn fail(&mut self, io: &Io, failure: WsFailure) -> Step {
        if self.closing {
            self.drop_connection(io, false);
            return Step::Pending;
        }
        self.conn.note(io.ctx, &failure);
        if let Some(intended) = self.waiting.take() {
            self.conn.fail_unsent(io.ctx, intended, failure.kind);
            self.drop_connection(io, false);
            let delay = io.ctx.state.connect_backoff(&mut self.conn.backoff);
            self.retry_at = (!delay.is_zero()).then(|| Instant::now() + delay);
        } else {
            self.conn.fail_unanswered(io.ctx, self.sent, failure.kind);
            if self.base.fd.is_some() {
                let _ = self.flush(io);
            }
            self.drop_connection(io, false);
        }
        self.base.phase = Phase::Idle;
        Step::Failed
    }
}

/// A TLS failure (its handshake, or a record after it), with its reason.
fn tls_failure(reason: String) -> WsFailure {
    WsFailure {
        kind: ErrorKind::Tls,
        reason,
    }
}
