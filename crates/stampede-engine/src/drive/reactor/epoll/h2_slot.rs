//! One HTTP/2 connection slot of the epoll reactor (h2c with prior
//! knowledge, or TLS with ALPN h2): a connection carrying up to `--streams`
//! streams, as many as the server's SETTINGS_MAX_CONCURRENT_STREAMS allows.
//! The slot only moves bytes (through the reactor's sans-I/O rustls session,
//! tls.rs, over https) and opens and closes its socket; its books, the
//! codec and the booking of every stream are the I/O-free [`H2Exchange`]'s
//! (exchange/h2_exchange.rs).
//!
//! It plugs into the reactor's turn as an HTTP/1.1 slot does, a stream
//! standing for a request: a start begins one request and answers
//! [`Step::Answered`] while the connection takes another, so the turn claims
//! the budget and starts streams until the connection is full; a read that
//! ends streams answers [`Step::Answered`] again. What the turn's starts
//! queue goes out in one send ([`ReactorSlot::flush`]). Requests the server
//! never processed go first ([`ReactorSlot::resume`]), on a new connection
//! once the old one, going away, has no stream left.

use super::poller::{PEER_CLOSED, READABLE, WRITABLE};
use super::slot::Io;
use crate::drive::reactor::tls::{Received, TlsSession};
use crate::drive::reactor::{socket, Phase, ReactorSlot, SlotBase, Step};
use crate::exchange::h2_exchange::{H2Exchange, H2Wire};
use crate::net::outcome_class::{classify_connect, classify_io};
use stampede_metrics::ErrorKind;
use std::io;
use std::os::fd::AsRawFd;
use std::rc::Rc;
use std::time::Instant;

#[derive(Debug)]
pub(super) struct H2Slot {
    base: SlotBase,
    exchange: H2Exchange,
    wire: Rc<H2Wire>,
    /// The connection's TLS session (https only).
    tls: Option<Box<TlsSession>>,
    /// When the TCP connect of a TLS connection ended (its handshake began).
    tcp_done: Instant,
}

impl ReactorSlot<Io<'_>> for H2Slot {
    fn base(&self) -> &SlotBase {
        &self.base
    }

    fn base_mut(&mut self) -> &mut SlotBase {
        &mut self.base
    }

    /// Opens a connection for the first waiting request; on loopback the
    /// connect is often over at once, and the preface and request leave.
    fn open(&mut self, io: &Io, now: Instant) -> Step {
        let connector = &io.ctx.connector;
        let opened = connector.with_next_endpoint(|endpoint| {
            socket::open(endpoint, &connector.source_addrs, io.longest_request)
        });
        self.exchange.connecting(io.ctx, &self.wire, now);
        let fd = match opened {
            Ok(fd) => fd,
            Err(error) => return self.fail_connect(io, &error),
        };
        self.base.bump_generation();
        if let Err(error) = io.poller.add(fd.as_raw_fd(), self.token()) {
            drop(fd);
            return self.fail_connect(io, &error);
        }
        self.base.fd = Some(fd);
        self.base.phase = Phase::Connecting;
        if let Some(client) = &connector.tls {
            match TlsSession::new(client) {
                Ok(session) => self.tls = Some(Box::new(session)),
                Err(error) => return self.fail_tls(io, &crate::net::tls_errors::explain(&error)),
            }
            // The ClientHello goes at once when the connect is over already.
            let unsent = self.tls.as_ref().map_or(&[][..], |t| t.unsent());
            return match socket::send(self.base.raw_fd(), unsent) {
                Ok(n) => {
                    self.tcp_connected(io, Instant::now());
                    if let Some(tls) = &mut self.tls {
                        tls.advance(n);
                    }
                    self.handshake(io, &mut [], 0)
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => Step::Pending,
                Err(error) => self.fail_connect(io, &error),
            };
        }
        match socket::send(self.base.raw_fd(), self.exchange.output()) {
            Ok(n) => {
                self.exchange.consume_output(n);
                self.connected(io, Instant::now());
                self.send(io)
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Step::Pending,
            Err(error) => self.fail_connect(io, &error),
        }
    }

    /// Starts what waits on the open connection (written by
    /// [`ReactorSlot::flush`]); answered while it takes more.
    fn send(&mut self, io: &Io) -> Step {
        self.exchange
            .start_waiting(io.ctx, &self.wire, Instant::now());
        self.more()
    }

    fn swap_transport(&mut self) {}

    fn phase(&self) -> Phase {
        self.base.phase
    }

    fn retry_at(&self) -> Option<Instant> {
        self.exchange.retry_at()
    }

    fn resume(&mut self, io: &Io, now: Instant) -> Option<Step> {
        self.exchange.has_waiting().then(|| self.pump(io, now))
    }

    fn carrying(&self) -> usize {
        self.exchange.open_streams() + self.exchange.waiting()
    }

    fn flush(&mut self, io: &Io) -> Step {
        if self.base.phase != Phase::Reading {
            return Step::Pending;
        }
        if let Some(tls) = &mut self.tls {
            let out = self.exchange.output();
            if !out.is_empty() {
                if let Err(error) = tls.write_plain(out) {
                    return self.transport_failed(io, classify_io(&error));
                }
                let n = out.len();
                self.exchange.consume_output(n);
            }
            return match self.flush_tls() {
                Ok(_) => Step::Pending,
                Err(error) => self.transport_failed(io, classify_io(&error)),
            };
        }
        loop {
            let out = self.exchange.output();
            if out.is_empty() {
                return Step::Pending;
            }
            match socket::send(self.base.raw_fd(), out) {
                Ok(n) => self.exchange.consume_output(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Step::Pending,
                Err(error) => return self.transport_failed(io, classify_io(&error)),
            }
        }
    }

    fn has_connection(&self) -> bool {
        self.base.fd.is_some()
    }

    fn drop_connection(&mut self, io: &Io, by_server: bool) {
        self.tls = None;
        if self.base.fd.take().is_some() {
            self.base.bump_generation();
        }
        self.exchange.connection_gone(io.ctx, by_server);
        self.base.phase = Phase::Idle;
    }

    fn is_overdue(&self, now: Instant) -> bool {
        (self.exchange.next_deadline()).is_some_and(|at| now >= at)
    }

    /// The connect ran out of time (the request it was opened for fails),
    /// or streams did: each is a timeout, reset, and the slot goes on.
    fn on_timeout(&mut self, io: &Io) -> Step {
        if self.base.phase.is_opening() {
            let stage = self.base.phase.stage();
            let kind = stage.timeout_kind();
            if let Some(reason) = stage.timeout_reason() {
                io.ctx.state.sample_error(kind, || reason.into());
            }
            return self.connect_failed(io, kind);
        }
        self.exchange.time_out_streams(io.ctx, Instant::now());
        self.after_io(io, Instant::now())
    }

    /// A request the worker has counted, intended at `intended`.
    fn start_at(&mut self, io: &Io, intended: Instant, now: Instant) -> Step {
        self.exchange.begin(io.ctx, intended);
        self.pump(io, now)
    }

    /// Stops taking requests: the connection closes once no stream is open.
    fn park(&mut self, io: &Io) {
        if self.exchange.open_streams() == 0 && !self.exchange.has_waiting() {
            self.drop_connection(io, false);
        }
    }
}

impl H2Slot {
    pub(super) fn new(index: u32, wire: Rc<H2Wire>, now: Instant) -> H2Slot {
        H2Slot {
            base: SlotBase::new(index, false, now),
            exchange: H2Exchange::new(index, wire.streams, now),
            wire,
            tls: None,
            tcp_done: now,
        }
    }

    /// The epoll token of the current connection.
    pub(super) fn token(&self) -> u64 {
        (u64::from(self.base.generation) << 32) | u64::from(self.base.index)
    }

    pub(super) fn generation(&self) -> u32 {
        self.base.generation
    }

    /// Starts what waits: on a new connection when there is none, else on
    /// the open one when it takes it.
    fn pump(&mut self, io: &Io, now: Instant) -> Step {
        if !self.has_connection() {
            if !self.exchange.has_waiting() {
                return Step::Pending;
            }
            return self.open(io, now);
        }
        if self.base.phase.is_opening() {
            return Step::Pending;
        }
        self.send(io)
    }

    /// Answered while the connection could take another request.
    fn more(&self) -> Step {
        match self.exchange.can_take() {
            true => Step::Answered,
            false => Step::Pending,
        }
    }

    /// The TCP connect is over: the connection counts as open.
    fn connected(&mut self, io: &Io, now: Instant) {
        self.exchange.connected(io.ctx, now);
        self.base.phase = Phase::Reading;
    }

    fn fail_connect(&mut self, io: &Io, error: &io::Error) -> Step {
        let kind = classify_connect(error);
        io.ctx.state.sample_error(kind, || error.to_string());
        self.connect_failed(io, kind)
    }

    /// A TCP connect over for a TLS connection: its handshake starts, with
    /// a connect timeout of its own.
    fn tcp_connected(&mut self, io: &Io, now: Instant) {
        self.tcp_done = now;
        self.exchange.handshaking(io.ctx, now);
        self.base.phase = Phase::Handshaking;
    }

    /// Sends the session's ciphertext until it is all out (true) or the
    /// socket is full (false).
    fn flush_tls(&mut self) -> io::Result<bool> {
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

    /// The TLS handshake failed (or the server chose no h2): the `tls`
    /// class, with the reason sampled, as a failed connect.
    fn fail_tls(&mut self, io: &Io, reason: &dyn std::fmt::Display) -> Step {
        (io.ctx.state).sample_error(ErrorKind::Tls, || reason.to_string());
        self.connect_failed(io, ErrorKind::Tls)
    }

    /// Drives the TLS handshake: sends what the session has to say, reads
    /// the server's part while `events` say it is readable (plaintext that
    /// follows in the same read, the server's SETTINGS, goes to the codec),
    /// and once it is over checks ALPN chose h2 and counts the connection
    /// as open.
    fn handshake(&mut self, io: &Io, scratch: &mut [u8], events: u32) -> Step {
        if let Err(error) = self.flush_tls() {
            return self.fail_tls(io, &crate::net::tls_errors::explain_io(&error));
        }
        if events & READABLE != 0 {
            loop {
                let n = match socket::recv(self.base.raw_fd(), scratch) {
                    Ok(0) => {
                        return self
                            .fail_tls(io, &"the server closed the connection in the handshake")
                    }
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(error) => {
                        return self.fail_tls(io, &crate::net::tls_errors::explain_io(&error))
                    }
                };
                let Some(tls) = self.tls.as_mut() else {
                    return Step::Pending;
                };
                let (exchange, ctx, now) = (&mut self.exchange, io.ctx, Instant::now());
                match tls.receive(&scratch[..n], |plain| exchange.receive(ctx, plain, now)) {
                    Ok(Received::Open) => {}
                    Ok(Received::Closed) => {
                        return self.fail_tls(io, &"the server closed the session in the handshake")
                    }
                    Err(error) => {
                        return self.fail_tls(io, &crate::net::tls_errors::explain(&error))
                    }
                }
                if !tls.is_handshaking() || n < scratch.len() {
                    break;
                }
            }
        }
        let Some(tls) = self.tls.as_ref() else {
            return Step::Pending;
        };
        if tls.is_handshaking() {
            return match self.flush_tls() {
                Ok(_) => Step::Pending,
                Err(error) => self.fail_tls(io, &crate::net::tls_errors::explain_io(&error)),
            };
        }
        if tls.alpn_protocol() != Some(b"h2") {
            return self.fail_tls(io, &"the server did not choose h2 in ALPN");
        }
        let now = Instant::now();
        self.exchange.connected_over_tls(io.ctx, self.tcp_done, now);
        self.base.phase = Phase::Reading;
        // The preface and the first request go with the last handshake message.
        if let Step::Failed = self.flush(io) {
            return Step::Failed;
        }
        self.after_io(io, now)
    }

    fn connect_failed(&mut self, io: &Io, kind: ErrorKind) -> Step {
        self.tls = None;
        self.exchange.connect_failed(io.ctx, kind);
        if self.base.fd.take().is_some() {
            self.base.bump_generation();
        }
        self.base.phase = Phase::Idle;
        Step::Failed
    }

    /// The transport failed (or the server closed it) as `kind`: its open
    /// streams fail, and the slot goes on with a new connection.
    fn transport_failed(&mut self, io: &Io, kind: ErrorKind) -> Step {
        let failed = self.exchange.transport_closed(io.ctx, kind);
        // A close with nothing in flight is the server's idle close.
        self.drop_connection(io, !failed);
        match failed {
            true => Step::Failed,
            false => self.after_io(io, Instant::now()),
        }
    }

    /// After the codec saw bytes or time: a connection going away closes
    /// once its last stream ended, what waits starts, and the slot says
    /// whether it takes another request.
    fn after_io(&mut self, io: &Io, now: Instant) -> Step {
        if let Some(by_server) = self.exchange.drained() {
            // Its GOAWAY (or the codec's, after a violation) goes first.
            let _ = self.flush(io);
            self.drop_connection(io, by_server);
            if !by_server {
                // Broken: its streams failed; the next turn goes on.
                return Step::Failed;
            }
        }
        if self.exchange.has_waiting() {
            return self.pump(io, now);
        }
        self.more()
    }

    /// Handles readiness `events` of this slot's connection.
    pub(super) fn on_event(&mut self, io: &Io, scratch: &mut [u8], events: u32) -> Step {
        match self.base.phase {
            Phase::Idle | Phase::Writing => Step::Pending,
            Phase::Handshaking => self.handshake(io, scratch, events),
            Phase::Connecting if events & WRITABLE != 0 => {
                if let Some(error) = socket::connect_error(self.base.raw_fd()) {
                    return self.fail_connect(io, &error);
                }
                if self.tls.is_some() {
                    self.tcp_connected(io, Instant::now());
                    return self.handshake(io, scratch, events);
                }
                self.connected(io, Instant::now());
                if let Step::Failed = self.flush(io) {
                    return Step::Failed;
                }
                self.read(io, scratch, events)
            }
            Phase::Connecting => Step::Pending,
            Phase::Reading if events & READABLE != 0 => self.read(io, scratch, events),
            Phase::Reading => self.after_io(io, Instant::now()),
        }
    }

    /// Reads until the socket is drained (a short read, unless the peer is
    /// closing: its end of stream may wait behind the data), handing each
    /// read to the codec.
    fn read(&mut self, io: &Io, scratch: &mut [u8], events: u32) -> Step {
        let closing = events & PEER_CLOSED != 0;
        loop {
            let n = match socket::recv(self.base.raw_fd(), scratch) {
                // The server closed: as the `h2` crate's broken pipe.
                Ok(0) => return self.transport_failed(io, ErrorKind::Reset),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(error) => return self.transport_failed(io, classify_io(&error)),
            };
            let now = Instant::now();
            match self.tls.as_mut() {
                None => self.exchange.receive(io.ctx, &scratch[..n], now),
                Some(tls) => {
                    let (exchange, ctx) = (&mut self.exchange, io.ctx);
                    match tls.receive(&scratch[..n], |plain| exchange.receive(ctx, plain, now)) {
                        Ok(Received::Open) => {}
                        // close_notify: the stream ends, as at a close.
                        Ok(Received::Closed) => return self.transport_failed(io, ErrorKind::Reset),
                        Err(error) => {
                            let reason = crate::net::tls_errors::explain(&error);
                            (io.ctx.state).sample_error(ErrorKind::Tls, || reason.to_string());
                            return self.transport_failed(io, ErrorKind::Tls);
                        }
                    }
                }
            }
            if self.exchange.drained() == Some(false) || (n < scratch.len() && !closing) {
                break;
            }
        }
        self.after_io(io, Instant::now())
    }
}
