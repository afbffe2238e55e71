//! What an HTTP/2 slot is on either reactor (h2c with prior knowledge, or
//! TLS with ALPN h2): a connection carrying up to `--streams` streams, as
//! many as the server's SETTINGS_MAX_CONCURRENT_STREAMS allows. Its state
//! ([`H2Conn`]) and the rules both reactors share ([`H2Driver`]'s provided
//! methods) are written here once; epoll (epoll/h2_slot.rs) and io_uring
//! (uring/h2_slot.rs) only open the socket and move bytes. The books, the
//! codec and the booking of every stream are the I/O-free [`H2Exchange`]'s
//! (exchange/h2_exchange.rs).
//!
//! A slot plugs into the reactor's turn as an HTTP/1.1 slot does, a stream
//! standing for a request: a start begins one request and answers
//! [`Step::Answered`] while the connection takes another, so the turn
//! claims the budget and starts streams until the connection is full; a
//! read that ends streams answers [`Step::Answered`] again. What the turn's
//! starts queue goes out in one send ([`ReactorSlot::flush`]). Requests the
//! server never processed go first ([`ReactorSlot::resume`]), on a new
//! connection once the old one, going away, has no stream left.

use super::tls::{Received, TlsSession};
use super::{Phase, ReactorSlot, SlotBase, Step, WorkerIo};
use crate::exchange::h2_exchange::{H2Exchange, H2Wire};
use crate::net::outcome_class::classify_connect;
use stampede_metrics::ErrorKind;
use std::io;
use std::rc::Rc;
use std::time::Instant;

/// The state of an HTTP/2 slot, whatever drives its socket.
#[derive(Debug)]
pub(super) struct H2Conn {
    pub(super) base: SlotBase,
    pub(super) exchange: H2Exchange,
    pub(super) wire: Rc<H2Wire>,
    /// The connection's TLS session (https only).
    pub(super) tls: Option<Box<TlsSession>>,
    /// When the TCP connect of a TLS connection ended (its handshake began).
    pub(super) tcp_done: Instant,
}

impl H2Conn {
    pub(super) fn new(index: u32, wire: Rc<H2Wire>, now: Instant) -> H2Conn {
        H2Conn {
            base: SlotBase::new(index, false, now),
            exchange: H2Exchange::new(index, wire.streams, now),
            wire,
            tls: None,
            tcp_done: now,
        }
    }
}

/// An HTTP/2 slot of a reactor. The required methods are the socket's; the
/// provided ones are the rules both reactors share. Every `H2Driver` is a
/// [`ReactorSlot`] through them.
pub(super) trait H2Driver<I: WorkerIo> {
    fn conn(&self) -> &H2Conn;
    fn conn_mut(&mut self) -> &mut H2Conn;
    /// Opens a socket and starts connecting it, for the first waiting
    /// request (the codec has queued the preface and that request).
    fn open_socket(&mut self, io: &I, now: Instant) -> Step;
    /// Writes what the codec queued (through the TLS session over https),
    /// or queues its write.
    fn write_out(&mut self, io: &I) -> Step;
    /// Lets go of what the kernel still does for the connection, just
    /// before its fd closes.
    fn release_io(&mut self, _io: &I) {}

    /// Starts what waits: on a new connection when there is none, else on
    /// the open one when it takes it.
    fn pump(&mut self, io: &I, now: Instant) -> Step {
        if self.conn().base.fd.is_none() {
            if !self.conn().exchange.has_waiting() {
                return Step::Pending;
            }
            return self.open_socket(io, now);
        }
        if self.conn().base.phase.is_opening() {
            return Step::Pending;
        }
        self.start_waiting(io)
    }

    /// Starts what waits on the open connection (written by
    /// [`ReactorSlot::flush`]); answered while it takes more.
    fn start_waiting(&mut self, io: &I) -> Step {
        let conn = self.conn_mut();
        let wire = conn.wire.clone();
        conn.exchange.start_waiting(io.ctx(), &wire, Instant::now());
        self.more()
    }

    /// Answered while the connection could take another request.
    fn more(&self) -> Step {
        match self.conn().exchange.can_take() {
            true => Step::Answered,
            false => Step::Pending,
        }
    }

    /// The TCP connect is over: the connection counts as open.
    fn connected(&mut self, io: &I, now: Instant) {
        let conn = self.conn_mut();
        conn.exchange.connected(io.ctx(), now);
        conn.base.phase = Phase::Reading;
    }

    /// A TCP connect over for a TLS connection: its handshake starts, with
    /// a connect timeout of its own.
    fn tcp_connected(&mut self, io: &I, now: Instant) {
        let conn = self.conn_mut();
        conn.tcp_done = now;
        conn.exchange.handshaking(io.ctx(), now);
        conn.base.phase = Phase::Handshaking;
    }

    /// A connect that failed with `error` (classified and sampled).
    fn connect_error(&mut self, io: &I, error: &io::Error) -> Step {
        let kind = classify_connect(error);
        io.ctx().state.sample_error(kind, || error.to_string());
        self.connect_failed(io, kind)
    }

    /// The TLS handshake failed (or the server chose no h2): the `tls`
    /// class, with the reason sampled, as a failed connect.
    fn handshake_failed(&mut self, io: &I, reason: &dyn std::fmt::Display) -> Step {
        (io.ctx().state).sample_error(ErrorKind::Tls, || reason.to_string());
        self.connect_failed(io, ErrorKind::Tls)
    }

    /// The connection could not be opened (as `kind`): the request it was
    /// opened for fails, and the slot backs off.
    fn connect_failed(&mut self, io: &I, kind: ErrorKind) -> Step {
        self.close_socket(io);
        self.conn_mut().exchange.connect_failed(io.ctx(), kind);
        Step::Failed
    }

    /// Closes the socket, if any (the kernel's part released first).
    fn close_socket(&mut self, io: &I) {
        if self.conn().base.fd.is_some() {
            self.release_io(io);
        }
        let conn = self.conn_mut();
        conn.tls = None;
        if conn.base.fd.take().is_some() {
            conn.base.bump_generation();
        }
        conn.base.phase = Phase::Idle;
    }

    /// The transport failed (or the server closed it) as `kind`: its open
    /// streams fail, and the slot goes on with a new connection.
    fn transport_failed(&mut self, io: &I, kind: ErrorKind) -> Step {
        let failed = self.conn_mut().exchange.transport_closed(io.ctx(), kind);
        // A close with nothing in flight is the server's idle close.
        self.h2_drop_connection(io, !failed);
        match failed {
            true => Step::Failed,
            false => self.after_io(io, Instant::now()),
        }
    }

    /// Closes the connection and settles its books; `by_server`: the next
    /// one is a reconnect.
    fn h2_drop_connection(&mut self, io: &I, by_server: bool) {
        self.close_socket(io);
        self.conn_mut()
            .exchange
            .connection_gone(io.ctx(), by_server);
    }

    /// After the codec saw bytes or time: a connection going away closes
    /// once its last stream ended, what waits starts, and the slot says
    /// whether it takes another request.
    fn after_io(&mut self, io: &I, now: Instant) -> Step {
        if let Some(by_server) = self.conn().exchange.drained() {
            // Its GOAWAY (or the codec's, after a violation) goes first.
            let _ = self.write_out(io);
            self.h2_drop_connection(io, by_server);
            if !by_server {
                // Broken: its streams failed; the next turn goes on.
                return Step::Failed;
            }
        }
        if self.conn().exchange.has_waiting() {
            return self.pump(io, now);
        }
        self.more()
    }

    /// Hands bytes the socket read at `now` to the codec, through the TLS
    /// session over https. `Err(step)`: the transport ended (the server's
    /// close_notify, or a broken record), the slot moved on.
    fn take_in(&mut self, io: &I, bytes: &[u8], now: Instant) -> Result<(), Step> {
        let conn = self.conn_mut();
        let Some(tls) = conn.tls.as_mut() else {
            conn.exchange.receive(io.ctx(), bytes, now);
            return Ok(());
        };
        let (exchange, ctx) = (&mut conn.exchange, io.ctx());
        match tls.receive(bytes, |plain| exchange.receive(ctx, plain, now)) {
            Ok(Received::Open) => Ok(()),
            // close_notify: the stream ends, as at a close.
            Ok(Received::Closed) => Err(self.transport_failed(io, ErrorKind::Reset)),
            Err(error) => {
                let reason = crate::net::tls_errors::explain(&error);
                (io.ctx().state).sample_error(ErrorKind::Tls, || reason.to_string());
                Err(self.transport_failed(io, ErrorKind::Tls))
            }
        }
    }

    /// Hands the TLS session ciphertext of the handshake (plaintext that
    /// follows in the same read, the server's SETTINGS, goes to the
    /// codec). `Err(step)`: the handshake failed.
    fn handshake_input(&mut self, io: &I, bytes: &[u8]) -> Result<(), Step> {
        let conn = self.conn_mut();
        let Some(tls) = conn.tls.as_mut() else {
            return Ok(());
        };
        let (exchange, ctx, now) = (&mut conn.exchange, io.ctx(), Instant::now());
        match tls.receive(bytes, |plain| exchange.receive(ctx, plain, now)) {
            Ok(Received::Open) => Ok(()),
            Ok(Received::Closed) => {
                Err(self.handshake_failed(io, &"the server closed the session in the handshake"))
            }
            Err(error) => Err(self.handshake_failed(io, &crate::net::tls_errors::explain(&error))),
        }
    }

    /// The TLS handshake is over (the caller checked): ALPN must have
    /// chosen h2; the connection counts as open, and the preface and the
    /// first request leave with the client's last handshake message.
    fn handshake_over(&mut self, io: &I) -> Step {
        let chose_h2 = (self.conn().tls.as_ref()).is_some_and(|t| t.alpn_protocol() == Some(b"h2"));
        if !chose_h2 {
            return self.handshake_failed(io, &"the server did not choose h2 in ALPN");
        }
        let now = Instant::now();
        let conn = self.conn_mut();
        conn.exchange
            .connected_over_tls(io.ctx(), conn.tcp_done, now);
        conn.base.phase = Phase::Reading;
        if let Step::Failed = self.write_out(io) {
            return Step::Failed;
        }
        self.after_io(io, now)
    }
}

impl<I: WorkerIo, T: H2Driver<I>> ReactorSlot<I> for T {
    fn base(&self) -> &SlotBase {
        &self.conn().base
    }

    fn base_mut(&mut self) -> &mut SlotBase {
        &mut self.conn_mut().base
    }

    /// Opens a connection for the first waiting request; on loopback the
    /// connect is often over at once, and the preface and request leave.
    fn open(&mut self, io: &I, now: Instant) -> Step {
        self.open_socket(io, now)
    }

    fn send(&mut self, io: &I) -> Step {
        self.start_waiting(io)
    }

    fn release(&mut self, io: &I) {
        self.release_io(io);
    }

    fn swap_transport(&mut self) {}

    fn phase(&self) -> Phase {
        self.conn().base.phase
    }

    fn retry_at(&self) -> Option<Instant> {
        self.conn().exchange.retry_at()
    }

    fn resume(&mut self, io: &I, now: Instant) -> Option<Step> {
        (self.conn().exchange.has_waiting()).then(|| self.pump(io, now))
    }

    fn carrying(&self) -> usize {
        let exchange = &self.conn().exchange;
        exchange.open_streams() + exchange.waiting()
    }

    fn flush(&mut self, io: &I) -> Step {
        self.write_out(io)
    }

    fn has_connection(&self) -> bool {
        self.conn().base.fd.is_some()
    }

    fn drop_connection(&mut self, io: &I, by_server: bool) {
        self.h2_drop_connection(io, by_server);
    }

    fn is_overdue(&self, now: Instant) -> bool {
        (self.conn().exchange.next_deadline()).is_some_and(|at| now >= at)
    }

    /// The connect ran out of time (the request it was opened for fails),
    /// or streams did: each is a timeout, reset, and the slot goes on.
    fn on_timeout(&mut self, io: &I) -> Step {
        let phase = self.conn().base.phase;
        if phase.is_opening() {
            let stage = phase.stage();
            let kind = stage.timeout_kind();
            if let Some(reason) = stage.timeout_reason() {
                io.ctx().state.sample_error(kind, || reason.into());
            }
            return self.connect_failed(io, kind);
        }
        let now = Instant::now();
        self.conn_mut().exchange.time_out_streams(io.ctx(), now);
        self.after_io(io, now)
    }

    /// A request the worker has counted, intended at `intended`.
    fn start_at(&mut self, io: &I, intended: Instant, now: Instant) -> Step {
        self.conn_mut().exchange.begin(io.ctx(), intended);
        self.pump(io, now)
    }

    /// Stops taking requests: the connection closes once no stream is open.
    fn park(&mut self, io: &I) {
        let exchange = &self.conn().exchange;
        if exchange.open_streams() == 0 && !exchange.has_waiting() {
            self.h2_drop_connection(io, false);
        }
    }
}
