//! One connection slot of the epoll reactor: a small state machine driven by
//! readiness events. It opens a connection when it has none, writes the
//! request, reads the response into the worker's scratch buffer, and keeps
//! its books in a [`Ledger`] (shared with the io_uring reactor). Over https
//! a [`TlsSession`] sits between the socket and the books: the handshake
//! runs after the TCP connect, the request goes out encrypted, and what is
//! read is decrypted before it is parsed.

use super::poller::{Poller, PEER_CLOSED, READABLE, WRITABLE};
use crate::drive::reactor::rx_stamp::{self, RxStamps};
use crate::drive::reactor::tls::{decrypt_response, Received, TlsSession};
use crate::drive::reactor::{socket, Phase, ReactorSlot, SlotBase, Step, WorkerIo};
use crate::http1::ResponseProgress;
use crate::net::outcome_class::classify_io;
use crate::worker::context::ConnectionContext;
use stampede_metrics::ErrorKind;
use std::io;
use std::os::fd::AsRawFd;
use std::rc::Rc;
use std::time::Instant;

/// Everything a slot needs from its worker besides its own state.
pub(super) struct Io<'a> {
    pub ctx: &'a ConnectionContext,
    pub poller: &'a Poller,
    /// The longest request of the run (decides TCP_NODELAY).
    pub longest_request: usize,
}

#[derive(Debug)]
pub(super) struct Slot {
    base: SlotBase,
    /// The connection's TLS session (https only).
    tls: Option<Box<TlsSession>>,
    /// When the TCP connect of a TLS connection ended (its handshake began).
    tcp_done: Instant,
    /// The TLS session of the slot's parked connection (redirects to
    /// another origin: [`ReactorSlot::switch_to`]).
    parked_tls: Option<Box<TlsSession>>,
    /// `--batch-reads`: answers are stamped with their kernel receive time
    /// (rx_stamp.rs); `None`: when read, with plain recv.
    rx: Option<Rc<RxStamps>>,
}

impl WorkerIo for Io<'_> {
    fn ctx(&self) -> &ConnectionContext {
        self.ctx
    }
}

impl ReactorSlot<Io<'_>> for Slot {
    fn base(&self) -> &SlotBase {
        &self.base
    }

    fn base_mut(&mut self) -> &mut SlotBase {
        &mut self.base
    }

    /// Opens a connection and tries the request at once: on loopback the
    /// handshake is usually over when connect() returns, which saves a wait.
    fn open(&mut self, io: &Io, now: Instant) -> Step {
        // A hop to another origin connects there (redirect.rs).
        let foreign = io.ctx.connector_to(self.base.origin);
        let connector = foreign.as_deref().unwrap_or(&io.ctx.connector);
        let fd = match self.base.new_socket(io.ctx, now, |_| {
            connector.with_next_endpoint(|endpoint| {
                socket::open(endpoint, &connector.source_addrs, io.longest_request)
            })
        }) {
            Ok(fd) => fd,
            Err(error) => return self.fail_connect(io, &error),
        };
        if self.rx.is_some() {
            rx_stamp::enable(fd.as_raw_fd());
        }
        if let Err(error) = io.poller.add(fd.as_raw_fd(), self.token()) {
            drop(fd);
            return self.fail_connect(io, &error);
        }
        self.base.fd = Some(fd);
        self.base.phase = Phase::Connecting;
        if let Some(client) = &connector.tls {
            match TlsSession::new(client) {
                Ok(session) => self.tls = Some(Box::new(session)),
                Err(error) => return self.fail_tls_error(io, &error),
            }
            // The ClientHello goes at once when the connect is over already.
            return match socket::send(self.base.raw_fd(), self.unsent_tls()) {
                Ok(n) => {
                    self.tcp_connected(io, Instant::now());
                    self.advance_tls(n);
                    self.handshake(io, &mut [], 0)
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => Step::Pending,
                Err(error) => self.fail_connect(io, &error),
            };
        }
        match socket::send(self.base.raw_fd(), self.base.ledger.request(io.ctx)) {
            Ok(n) => {
                self.connected(io, Instant::now());
                self.base.ledger.written = n;
                self.write(io)
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Step::Pending,
            Err(error) => self.fail_connect(io, &error),
        }
    }

    fn send(&mut self, io: &Io) -> Step {
        self.base.phase = Phase::Writing;
        self.write(io)
    }

    /// The TLS session ends with its connection.
    fn release(&mut self, _io: &Io) {
        self.tls = None;
    }

    fn swap_transport(&mut self) {
        std::mem::swap(&mut self.tls, &mut self.parked_tls);
    }
}

impl Slot {
    pub(super) fn new(
        index: u32,
        head_request: bool,
        now: Instant,
        rx: Option<Rc<RxStamps>>,
    ) -> Slot {
        Slot {
            base: SlotBase::new(index, head_request, now),
            tls: None,
            tcp_done: now,
            parked_tls: None,
            rx,
        }
    }

    /// The epoll token of the current connection.
    fn token(&self) -> u64 {
        (u64::from(self.base.generation) << 32) | u64::from(self.base.index)
    }

    /// Splits a token into slot index and generation.
    pub(super) fn decode(token: u64) -> (usize, u32) {
        ((token & 0xFFFF_FFFF) as usize, (token >> 32) as u32)
    }

    pub(super) fn generation(&self) -> u32 {
        self.base.generation
    }

    /// An event of an older connection: the parked one's makes it stale.
    pub(super) fn note_parked_event(&mut self, generation: u32) {
        self.base.note_parked_event(generation, u32::MAX);
    }

    /// Handles readiness `events` of this slot's connection.
    pub(super) fn on_event(&mut self, io: &Io, scratch: &mut [u8], events: u32) -> Step {
        match self.base.phase {
            Phase::Idle => Step::Pending,
            Phase::Connecting if events & WRITABLE != 0 => {
                match socket::connect_error(self.base.raw_fd()) {
                    Some(error) => self.fail_connect(io, &error),
                    None if self.tls.is_some() => {
                        self.tcp_connected(io, Instant::now());
                        self.handshake(io, scratch, events)
                    }
                    None => {
                        self.connected(io, Instant::now());
                        let step = self.write(io);
                        self.after_write(io, scratch, step, events)
                    }
                }
            }
            Phase::Connecting => Step::Pending,
            Phase::Handshaking => self.handshake(io, scratch, events),
            Phase::Writing if events & WRITABLE != 0 => {
                let step = self.write(io);
                self.after_write(io, scratch, step, events)
            }
            Phase::Writing => Step::Pending,
            Phase::Reading if events & READABLE != 0 => self.read(io, scratch, events),
            Phase::Reading => Step::Pending,
        }
    }

    /// The handshake is done: the request's clock starts.
    fn connected(&mut self, io: &Io, now: Instant) {
        self.base.ledger.connected(io.ctx, now);
        self.base.phase = Phase::Writing;
    }

    /// A TLS connection's TCP connect is over: its handshake starts, with
    /// a connect timeout of its own (as on the tokio path).
    fn tcp_connected(&mut self, io: &Io, now: Instant) {
        self.tcp_done = now;
        self.base.ledger.handshaking(io.ctx, now);
        self.base.phase = Phase::Handshaking;
    }

    fn unsent_tls(&self) -> &[u8] {
        self.tls.as_ref().map_or(&[], |tls| tls.unsent())
    }

    fn advance_tls(&mut self, n: usize) {
        if let Some(tls) = &mut self.tls {
            tls.advance(n);
        }
    }

    /// Sends the session's ciphertext until it is all out (true) or the
    /// socket is full (false).
    fn flush_tls(&mut self) -> io::Result<bool> {
        loop {
            let unsent = self.unsent_tls();
            if unsent.is_empty() {
                return Ok(true);
            }
            match socket::send(self.base.raw_fd(), unsent) {
                Ok(n) => self.advance_tls(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(error) => return Err(error),
            }
        }
    }

    /// Drives the TLS handshake: sends what the session has to say, reads
    /// the server's part while `events` say it is readable, and once the
    /// handshake is over counts the connection as open and sends the request.
    fn handshake(&mut self, io: &Io, scratch: &mut [u8], events: u32) -> Step {
        if let Err(error) = self.flush_tls() {
            return self.fail_tls_io(io, &error);
        }
        // The socket was read dry: whatever comes next raises a new edge.
        let mut drained = events & PEER_CLOSED == 0;
        if events & READABLE != 0 {
            loop {
                let n = match socket::recv(self.base.raw_fd(), scratch) {
                    Ok(0) => {
                        return self
                            .fail_tls(io, &"the server closed the connection in the handshake")
                    }
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(error) => return self.fail_tls_io(io, &error),
                };
                drained &= n < scratch.len();
                let Some(tls) = self.tls.as_mut() else {
                    return Step::Pending;
                };
                let ledger = &mut self.base.ledger;
                // Nothing was asked yet: plaintext now is unsolicited.
                match tls.receive(&scratch[..n], |plain| ledger.keep_early(plain)) {
                    Ok(Received::Open) => {}
                    Ok(Received::Closed) => {
                        return self.fail_tls(io, &"the server closed the session in the handshake")
                    }
                    Err(error) => return self.fail_tls_error(io, &error),
                }
                if !tls.is_handshaking() || n < scratch.len() {
                    break;
                }
            }
        }
        if self.tls.as_ref().is_some_and(|tls| tls.is_handshaking()) {
            return match self.flush_tls() {
                Ok(_) => Step::Pending,
                Err(error) => self.fail_tls_io(io, &error),
            };
        }
        let now = Instant::now();
        self.base
            .ledger
            .connected_over_tls(io.ctx, self.tcp_done, now);
        self.base.phase = Phase::Writing;
        // The request leaves with the client's last handshake message.
        let step = self.write(io);
        if drained {
            // The response raises its own edge: no read just to see EAGAIN.
            return step;
        }
        self.after_write(io, scratch, step, events)
    }

    /// Writes the rest of the request (over TLS: queues it in the session
    /// and sends the ciphertext).
    fn write(&mut self, io: &Io) -> Step {
        if let Some(tls) = &mut self.tls {
            let rest = self.base.ledger.unwritten(io.ctx);
            if !rest.is_empty() {
                if let Err(error) = tls.write_plain(rest) {
                    return self.fail_tls_io(io, &error);
                }
                self.base.ledger.written += rest.len();
            }
            return match self.flush_tls() {
                Ok(true) => {
                    self.base.phase = Phase::Reading;
                    Step::Pending
                }
                Ok(false) => Step::Pending,
                Err(error) => self.fail_exchange(io, classify_io(&error)),
            };
        }
        loop {
            let rest = self.base.ledger.unwritten(io.ctx);
            if rest.is_empty() {
                break;
            }
            match socket::send(self.base.raw_fd(), rest) {
                Ok(n) => self.base.ledger.written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Step::Pending,
                Err(error) => return self.write_failed(io, &error),
            }
        }
        self.base.phase = Phase::Reading;
        Step::Pending
    }

    /// A plain send failed (the server reset or closed): what it answered
    /// before, still in the socket's receive queue (Linux keeps queued data
    /// readable after a reset), may be the request's response.
    fn write_failed(&mut self, io: &Io, error: &io::Error) -> Step {
        let mut buf = [0u8; 16 * 1024];
        while let Ok(n @ 1..) = socket::recv(self.base.raw_fd(), &mut buf) {
            self.base.ledger.keep_early(&buf[..n]);
        }
        self.answered_early_or(io, classify_io(error), false)
    }

    /// After a write that waited for room (or for the handshake): a response
    /// may have arrived meanwhile (a 413 before the body is all out), and its
    /// edge is not repeated.
    fn after_write(&mut self, io: &Io, scratch: &mut [u8], step: Step, events: u32) -> Step {
        if step == Step::Pending && self.base.phase == Phase::Reading {
            return self.read(io, scratch, events);
        }
        step
    }

    /// Reads until the response is complete or the socket is drained. A
    /// short read means drained (no extra read just to see EAGAIN), unless
    /// the peer has closed: its end of stream may wait behind the data, and
    /// edge-triggered epoll does not report it again.
    fn read(&mut self, io: &Io, scratch: &mut [u8], events: u32) -> Step {
        let closing = events & PEER_CLOSED != 0;
        loop {
            let mut stamp = None;
            let received = match &self.rx {
                None => socket::recv(self.base.raw_fd(), scratch),
                Some(_) => rx_stamp::recv(self.base.raw_fd(), scratch).map(|(n, kernel)| {
                    stamp = kernel;
                    n
                }),
            };
            let n = match received {
                Ok(0) => return self.on_end_of_stream(io),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Step::Pending,
                Err(error) => return self.fail_exchange(io, classify_io(&error)),
            };
            let mut now = Instant::now();
            if let Some(rx) = &self.rx {
                // The answer's first byte and end: when it arrived.
                now = rx.arrived(stamp, self.base.ledger.sent_at(), now);
            }
            let progress = match self.tls.as_mut() {
                None => self.base.ledger.received(&scratch[..n], now),
                Some(tls) => match decrypt_response(tls, &mut self.base.ledger, &scratch[..n], now)
                {
                    Ok((progress, Received::Open)) => progress,
                    Ok((Ok(ResponseProgress::Partial), Received::Closed)) => {
                        return self.on_end_of_stream(io)
                    }
                    Ok((progress, Received::Closed)) => {
                        // The rest of the stream is gone: the connection ends here.
                        let step = self.settle(io, now, progress);
                        if step == Step::Pending && self.base.phase == Phase::Reading {
                            // The rest of a pipelined batch will not come.
                            return self.on_end_of_stream(io);
                        }
                        if self.has_connection() {
                            self.drop_connection(io, true);
                        }
                        return step;
                    }
                    Err(error) => return self.fail_tls_error(io, &error),
                },
            };
            match progress {
                Ok(ResponseProgress::Partial) if n < scratch.len() && !closing => {
                    return Step::Pending
                }
                Ok(ResponseProgress::Partial) => {}
                progress => {
                    let step = self.settle(io, now, progress);
                    // Still reading: the rest of a pipelined batch is due.
                    let batch_on = step == Step::Pending && self.base.phase == Phase::Reading;
                    if !batch_on || (n < scratch.len() && !closing) {
                        return step;
                    }
                }
            }
        }
    }

    /// A response that completed or failed to parse.
    fn settle(
        &mut self,
        io: &Io,
        now: Instant,
        progress: Result<ResponseProgress, ErrorKind>,
    ) -> Step {
        match progress {
            Ok(ResponseProgress::Complete(done)) => self.answered(io, now, done),
            Ok(ResponseProgress::Partial) => Step::Pending,
            Err(kind) => self.fail(io, kind),
        }
    }

    fn on_end_of_stream(&mut self, io: &Io) -> Step {
        match self.base.ledger.end_of_stream() {
            Ok(done) => self.answered(io, Instant::now(), done),
            Err(kind) => self.fail_exchange(io, kind),
        }
    }
}
