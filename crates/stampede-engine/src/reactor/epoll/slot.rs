//! One connection slot of the epoll reactor: a small state machine driven by
//! readiness events. It opens a connection when it has none, writes the
//! request, reads the response into the worker's scratch buffer, and keeps
//! its books in a [`Ledger`] (shared with the io_uring reactor).

use super::poller::{Poller, PEER_CLOSED, READABLE, WRITABLE};
use crate::connection::ConnectionContext;
use crate::http1::ResponseProgress;
use crate::outcome_class::classify_io;
use crate::reactor::{socket, Phase, ReactorSlot, SlotBase, Step, WorkerIo};
use std::io;
use std::os::fd::AsRawFd;
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
    base: SlotBase,
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
        let fd = match self.base.new_socket(io.ctx, now, |ctx| {
            let connector = &ctx.connector;
            socket::open(
                &connector.endpoint,
                &connector.source_addrs,
                io.longest_request,
            )
        }) {
            Ok(fd) => fd,
            Err(error) => return self.fail_connect(io, &error),
        };
        if let Err(error) = io.poller.add(fd.as_raw_fd(), self.token()) {
            drop(fd);
            return self.fail_connect(io, &error);
        }
        self.base.fd = Some(fd);
        self.base.phase = Phase::Connecting;
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
}

impl Slot {
    pub fn new(index: u32, head_request: bool, now: Instant) -> Slot {
        Slot {
            base: SlotBase::new(index, head_request, now),
        }
    }

    /// The epoll token of the current connection.
    fn token(&self) -> u64 {
        (u64::from(self.base.generation) << 32) | u64::from(self.base.index)
    }

    /// Splits a token into slot index and generation.
    pub fn decode(token: u64) -> (usize, u32) {
        ((token & 0xFFFF_FFFF) as usize, (token >> 32) as u32)
    }

    pub fn generation(&self) -> u32 {
        self.base.generation
    }

    /// Handles readiness `events` of this slot's connection.
    pub fn on_event(&mut self, io: &Io, scratch: &mut [u8], events: u32) -> Step {
        match self.base.phase {
            Phase::Idle => Step::Pending,
            Phase::Connecting if events & WRITABLE != 0 => {
                match socket::connect_error(self.base.raw_fd()) {
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

    /// The handshake is done: the request's clock starts.
    fn connected(&mut self, io: &Io, now: Instant) {
        self.base.ledger.connected(io.ctx, now);
        self.base.phase = Phase::Writing;
    }

    /// Writes the rest of the request.
    fn write(&mut self, io: &Io) -> Step {
        loop {
            let rest = self.base.ledger.unwritten(io.ctx);
            if rest.is_empty() {
                break;
            }
            match socket::send(self.base.raw_fd(), rest) {
                Ok(n) => self.base.ledger.written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Step::Pending,
                Err(error) => return self.fail_exchange(io, classify_io(&error)),
            }
        }
        self.base.phase = Phase::Reading;
        Step::Pending
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
            let n = match socket::recv(self.base.raw_fd(), scratch) {
                Ok(0) => return self.on_end_of_stream(io),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Step::Pending,
                Err(error) => return self.fail_exchange(io, classify_io(&error)),
            };
            let now = Instant::now();
            match self.base.ledger.received(&scratch[..n], now) {
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
        match self.base.ledger.end_of_stream() {
            Ok(done) => self.answered(io, Instant::now(), done),
            Err(kind) => self.fail_exchange(io, kind),
        }
    }
}
