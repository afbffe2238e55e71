//! One connection slot of the epoll reactor: a small state machine driven by
//! readiness events. It opens a connection when it has none, writes the
//! request, reads the response into the worker's scratch buffer, and keeps
//! its books in a [`Ledger`] (shared with the io_uring reactor).

use super::poller::{Poller, PEER_CLOSED, READABLE, WRITABLE};
use crate::connection::ConnectionContext;
use crate::http1::{Complete, ResponseProgress};
use crate::outcome_class::{classify_connect, classify_io};
use crate::reactor::ledger::Ledger;
use crate::reactor::{socket, Phase, SlotOps, Step};
use stampede_metrics::ErrorKind;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::time::Instant;

/// Everything a slot needs from its worker besides its own state.
pub struct Io<'a> {
    pub ctx: &'a ConnectionContext,
    pub poller: &'a Poller,
    /// The longest request of the run (decides TCP_NODELAY).
    pub longest_request: usize,
}

#[derive(Debug)]
pub struct Slot {
    index: u32,
    /// Bumped whenever the connection changes, so that a token of a closed
    /// connection never reaches its successor.
    generation: u32,
    fd: Option<OwnedFd>,
    phase: Phase,
    ledger: Ledger,
}

impl SlotOps<Io<'_>> for Slot {
    fn phase(&self) -> Phase {
        self.phase
    }

    fn is_overdue(&self, now: Instant) -> bool {
        self.phase != Phase::Idle && now >= self.ledger.deadline
    }

    fn on_timeout(&mut self, io: &Io) -> Step {
        self.fail(io, self.phase.timeout_kind())
    }

    fn start(&mut self, io: &Io, now: Instant) -> Step {
        self.ledger.begin(io.ctx, now);
        self.send_request(io, now)
    }

    fn park(&mut self, io: &Io) {
        self.drop_connection(io, false);
        self.phase = Phase::Idle;
    }
}

impl Slot {
    pub fn new(index: u32, head_request: bool, now: Instant) -> Slot {
        Slot {
            index,
            generation: 0,
            fd: None,
            phase: Phase::Idle,
            ledger: Ledger::new(head_request, now),
        }
    }

    /// The epoll token of the current connection.
    fn token(&self) -> u64 {
        (u64::from(self.generation) << 32) | u64::from(self.index)
    }

    /// Splits a token into slot index and generation.
    pub fn decode(token: u64) -> (usize, u32) {
        ((token & 0xFFFF_FFFF) as usize, (token >> 32) as u32)
    }

    pub fn generation(&self) -> u32 {
        self.generation
    }

    /// Handles readiness `events` of this slot's connection.
    pub fn on_event(&mut self, io: &Io, scratch: &mut [u8], events: u32) -> Step {
        match self.phase {
            Phase::Idle => Step::Pending,
            Phase::Connecting if events & WRITABLE != 0 => {
                match socket::connect_error(self.raw_fd()) {
                    Some(error) => self.fail_connect(io, &error),
                    None => {
                        self.connected(io, Instant::now());
                        let step = self.write(io);
                        self.after_write(io, scratch, step, events)
                    }
                }
            }
            Phase::Connecting => Step::Pending,
            Phase::Writing if events & WRITABLE != 0 => {
                let step = self.write(io);
                self.after_write(io, scratch, step, events)
            }
            Phase::Writing => Step::Pending,
            Phase::Reading if events & READABLE != 0 => self.read(io, scratch, events),
            Phase::Reading => Step::Pending,
        }
    }

    fn raw_fd(&self) -> RawFd {
        self.fd.as_ref().map_or(-1, AsRawFd::as_raw_fd)
    }

    /// Writes the current request on the connection, opening one first when
    /// there is none (or the current one cannot be trusted).
    fn send_request(&mut self, io: &Io, now: Instant) -> Step {
        if self.fd.is_some() && self.ledger.has_unsolicited_bytes() {
            self.drop_connection(io, false);
        }
        self.ledger.reset_response();
        if self.fd.is_none() {
            return self.open(io, now);
        }
        self.ledger.sending(io.ctx, now);
        self.phase = Phase::Writing;
        self.write(io)
    }

    /// Opens a connection and tries the request at once: on loopback the
    /// handshake is usually over when connect() returns, which saves a wait.
    fn open(&mut self, io: &Io, now: Instant) -> Step {
        self.ledger.connecting(io.ctx, now);
        let connector = &io.ctx.connector;
        let fd = match socket::open(
            &connector.endpoint,
            &connector.source_addrs,
            io.longest_request,
        ) {
            Ok(fd) => fd,
            Err(error) => return self.fail_connect(io, &error),
        };
        self.generation = self.generation.wrapping_add(1);
        if let Err(error) = io.poller.add(fd.as_raw_fd(), self.token()) {
            drop(fd);
            return self.fail_connect(io, &error);
        }
        self.fd = Some(fd);
        self.phase = Phase::Connecting;
        match socket::send(self.raw_fd(), self.ledger.request(io.ctx)) {
            Ok(n) => {
                self.connected(io, Instant::now());
                self.ledger.written = n;
                self.write(io)
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Step::Pending,
            Err(error) => self.fail_connect(io, &error),
        }
    }

    /// The handshake is done: the request's clock starts.
    fn connected(&mut self, io: &Io, now: Instant) {
        self.ledger.connected(io.ctx, now);
        self.phase = Phase::Writing;
    }

    /// Writes the rest of the request.
    fn write(&mut self, io: &Io) -> Step {
        loop {
            let rest = self.ledger.unwritten(io.ctx);
            if rest.is_empty() {
                break;
            }
            match socket::send(self.raw_fd(), rest) {
                Ok(n) => self.ledger.written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Step::Pending,
                Err(error) => return self.fail_exchange(io, classify_io(&error)),
            }
        }
        self.phase = Phase::Reading;
        Step::Pending
    }

    /// After a write that waited for room (or for the handshake): a response
    /// may have arrived meanwhile (a 413 before the body is all out), and its
    /// edge is not repeated.
    fn after_write(&mut self, io: &Io, scratch: &mut [u8], step: Step, events: u32) -> Step {
        if step == Step::Pending && self.phase == Phase::Reading {
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
            let n = match socket::recv(self.raw_fd(), scratch) {
                Ok(0) => return self.on_end_of_stream(io),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Step::Pending,
                Err(error) => return self.fail_exchange(io, classify_io(&error)),
            };
            let now = Instant::now();
            match self.ledger.received(&scratch[..n], now) {
                Ok(ResponseProgress::Complete(done)) => return self.answered(io, now, done),
                Ok(ResponseProgress::Partial) if n < scratch.len() && !closing => {
                    return Step::Pending
                }
                Ok(ResponseProgress::Partial) => {}
                Err(kind) => return self.fail(io, kind),
            }
        }
    }

    fn on_end_of_stream(&mut self, io: &Io) -> Step {
        match self.ledger.end_of_stream() {
            Ok(done) => self.answered(io, Instant::now(), done),
            Err(kind) => self.fail_exchange(io, kind),
        }
    }

    /// Records a complete response and keeps or closes the connection.
    fn answered(&mut self, io: &Io, now: Instant, done: Complete) -> Step {
        let keep = self.ledger.answered(io.ctx, now, &done);
        self.phase = Phase::Idle;
        if !keep {
            // Only a close we did not plan for makes the next connection a reconnect.
            self.drop_connection(io, io.ctx.keepalive);
        }
        Step::Answered
    }

    /// A failure on an open connection; an idle close is retried once.
    fn fail_exchange(&mut self, io: &Io, kind: ErrorKind) -> Step {
        if self.ledger.retry_after_idle_close(kind) {
            self.drop_connection(io, true);
            return self.send_request(io, Instant::now());
        }
        self.fail(io, kind)
    }

    fn fail_connect(&mut self, io: &Io, error: &io::Error) -> Step {
        let kind = classify_connect(error);
        io.ctx.state.sample_error(kind, || error.to_string());
        self.fail(io, kind)
    }

    fn fail(&mut self, io: &Io, kind: ErrorKind) -> Step {
        let had_connection = self.fd.is_some() && self.phase != Phase::Connecting;
        self.ledger.failed(io.ctx, kind, had_connection);
        self.drop_connection(io, false);
        self.phase = Phase::Idle;
        Step::Failed
    }

    fn drop_connection(&mut self, io: &Io, by_server: bool) {
        if self.fd.take().is_some() {
            self.generation = self.generation.wrapping_add(1);
        }
        self.ledger.connection_gone(io.ctx, by_server);
    }
}
