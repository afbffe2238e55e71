//! One connection slot of the reactor: a small state machine driven by
//! readiness events. It opens a connection when it has none, writes the
//! request, reads and frames the response, and records the outcome. The
//! rules are those of the tokio path (connection.rs): an idle connection the
//! server closed is retried once as a reconnect, unsolicited bytes retire a
//! connection, the timeout runs from the write to the response's end.

use super::poller::{Poller, PEER_CLOSED, READABLE, WRITABLE};
use super::socket;
use crate::connection::{response_error_kind, ConnectionContext};
use crate::http1::{Complete, ResponseParser, ResponseProgress};
use crate::outcome_class::{classify_connect, classify_io};
use crate::read_buffer::ReadBuffer;
use stampede_metrics::{ErrorKind, Outcome};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

/// Where a slot is in its request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// No request: not started yet, parked by the schedule, or out of budget.
    Idle,
    /// A new connection's handshake is under way (the request waits).
    Connecting,
    /// The request is partly written; the rest waits for room.
    Writing,
    /// The request is out; the response is awaited.
    Reading,
}

/// What an event or a start left the slot doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Waiting for the socket.
    Pending,
    /// The request ended with a response (recorded); the slot may go on.
    Answered,
    /// The request failed (recorded) and the connection is gone.
    Failed,
}

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
    /// The connection's handshake completed (it counts as open).
    established: bool,
    phase: Phase,
    parser: ResponseParser,
    /// Bytes of an incomplete head, or bytes no request asked for.
    leftover: ReadBuffer,
    /// The request of the mix in flight.
    target: usize,
    intended: Instant,
    sent: Instant,
    first_byte: Option<Instant>,
    connect_started: Instant,
    connect: Option<Duration>,
    /// When the current phase times out.
    deadline: Instant,
    written: usize,
    bytes_received: u64,
    /// Responses completed on the current connection.
    served: u64,
    /// The server closed the last connection: the next one is a reconnect.
    server_closed: bool,
    /// The current request may still be retried after an idle close.
    may_retry: bool,
}

impl Slot {
    pub fn new(index: u32, head_request: bool, now: Instant) -> Slot {
        Slot {
            index,
            generation: 0,
            fd: None,
            established: false,
            phase: Phase::Idle,
            parser: ResponseParser::new(head_request),
            leftover: ReadBuffer::default(),
            target: 0,
            intended: now,
            sent: now,
            first_byte: None,
            connect_started: now,
            connect: None,
            deadline: now,
            written: 0,
            bytes_received: 0,
            served: 0,
            server_closed: false,
            may_retry: false,
        }
    }

    pub fn phase(&self) -> Phase {
        self.phase
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

    /// True when the current phase has run out of time.
    pub fn is_overdue(&self, now: Instant) -> bool {
        self.phase != Phase::Idle && now >= self.deadline
    }

    /// Starts a request the worker has already counted (`begin_request`).
    pub fn start(&mut self, io: &Io, now: Instant) -> Step {
        self.target = io.ctx.next_target();
        let (_, head) = io.ctx.request_of(self.target);
        self.parser.set_head_request(head);
        self.intended = now;
        self.may_retry = true;
        self.connect = None;
        self.send_request(io, now)
    }

    /// Closes the connection and waits for the next start.
    pub fn park(&mut self, io: &Io) {
        self.drop_connection(io, false);
        self.phase = Phase::Idle;
    }

    /// Handles readiness `events` of this slot's connection.
    pub fn on_event(&mut self, io: &Io, scratch: &mut [u8], events: u32) -> Step {
        match self.phase {
            Phase::Idle => Step::Pending,
            Phase::Connecting if events & WRITABLE != 0 => {
                let fd = self.raw_fd();
                match socket::connect_error(fd) {
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

    /// The deadline passed: the request fails with a timeout.
    pub fn on_timeout(&mut self, io: &Io) -> Step {
        let kind = if self.phase == Phase::Connecting {
            ErrorKind::ConnectTimeout
        } else {
            ErrorKind::Timeout
        };
        self.fail(io, kind)
    }

    fn raw_fd(&self) -> RawFd {
        self.fd.as_ref().map_or(-1, AsRawFd::as_raw_fd)
    }

    /// Writes the current request on the connection, opening one first when
    /// there is none (or the current one cannot be trusted).
    fn send_request(&mut self, io: &Io, now: Instant) -> Step {
        if self.fd.is_some() && !self.leftover.pending().is_empty() {
            // Bytes arrived that no request asked for: HTTP/1.1 cannot tell
            // which request they belong to, so the connection is retired.
            self.drop_connection(io, false);
        }
        self.parser.reset();
        self.first_byte = None;
        self.bytes_received = 0;
        self.written = 0;
        if self.fd.is_none() {
            return self.open(io, now);
        }
        self.sent = now;
        self.deadline = now + io.ctx.timeout;
        self.phase = Phase::Writing;
        self.write(io)
    }

    /// Opens a connection and tries the request at once: on loopback the
    /// handshake is usually over when connect() returns, which saves a wait.
    fn open(&mut self, io: &Io, now: Instant) -> Step {
        self.connect_started = now;
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
        self.established = false;
        self.phase = Phase::Connecting;
        self.deadline = now + connector.connect_timeout;
        match socket::send(self.raw_fd(), self.request(io)) {
            Ok(n) => {
                self.connected(io, Instant::now());
                self.written = n;
                self.write(io)
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Step::Pending,
            Err(error) => self.fail_connect(io, &error),
        }
    }

    fn request<'a>(&self, io: &Io<'a>) -> &'a [u8] {
        io.ctx.request_of(self.target).0
    }

    /// The handshake is done: the request's clock starts.
    fn connected(&mut self, io: &Io, now: Instant) {
        let took = now.saturating_duration_since(self.connect_started);
        self.connect = Some(took);
        io.ctx.state.connection_opened(self.server_closed, took);
        self.server_closed = false;
        self.established = true;
        self.sent = now;
        self.deadline = now + io.ctx.timeout;
        self.phase = Phase::Writing;
    }

    /// Writes the rest of the request.
    fn write(&mut self, io: &Io) -> Step {
        let request = self.request(io);
        while self.written < request.len() {
            match socket::send(self.raw_fd(), &request[self.written..]) {
                Ok(n) => self.written += n,
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
            self.first_byte.get_or_insert(now);
            self.bytes_received += n as u64;
            match self.leftover.parse_read(&mut self.parser, &scratch[..n]) {
                Ok(ResponseProgress::Complete(done)) => return self.answered(io, now, done),
                Ok(ResponseProgress::Partial) if n < scratch.len() && !closing => {
                    return Step::Pending
                }
                Ok(ResponseProgress::Partial) => {}
                Err(error) => return self.fail(io, response_error_kind(error)),
            }
        }
    }

    fn on_end_of_stream(&mut self, io: &Io) -> Step {
        match self.parser.finish_on_close() {
            Ok(mut done) => {
                done.keep_alive = false;
                self.answered(io, Instant::now(), done)
            }
            Err(error) => self.fail_exchange(io, response_error_kind(error)),
        }
    }

    /// Records a complete response and keeps or closes the connection.
    fn answered(&mut self, io: &Io, now: Instant, done: Complete) -> Step {
        self.record(io, now, Ok(done.status), done.body_bytes);
        self.served += 1;
        self.phase = Phase::Idle;
        if !done.keep_alive || !io.ctx.keepalive {
            // Only a close we did not plan for makes the next connection a reconnect.
            self.drop_connection(io, io.ctx.keepalive);
        }
        Step::Answered
    }

    /// A failure on an open connection. A reused connection that the server
    /// closed while it was idle (nothing of the response arrived) is not an
    /// error: the request goes again on a new connection, once.
    fn fail_exchange(&mut self, io: &Io, kind: ErrorKind) -> Step {
        let idle_close = matches!(kind, ErrorKind::ClosedEarly | ErrorKind::Reset)
            && self.bytes_received == 0
            && self.served > 0;
        if idle_close && self.may_retry {
            self.may_retry = false;
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
        if self.fd.is_none() || self.phase == Phase::Connecting {
            // The tokio path counts a request that never got a connection
            // from its intended start.
            self.sent = self.intended;
        }
        // A failed request has no counted body (as on the tokio path).
        self.record(io, Instant::now(), Err(kind), 0);
        self.drop_connection(io, false);
        self.phase = Phase::Idle;
        Step::Failed
    }

    fn record(&self, io: &Io, done: Instant, result: Result<u16, ErrorKind>, body_bytes: u64) {
        let outcome = Outcome {
            intended: self.intended,
            sent: self.sent,
            first_byte: self.first_byte,
            done,
            result,
            bytes_received: self.bytes_received,
            body_bytes,
            target: self.target as u16,
        };
        io.ctx.state.end_request(&outcome);
        if let Some(log) = &io.ctx.log {
            log.record(&outcome, self.connect);
        }
    }

    fn drop_connection(&mut self, io: &Io, by_server: bool) {
        if self.fd.take().is_some() {
            self.generation = self.generation.wrapping_add(1);
            if std::mem::take(&mut self.established) {
                io.ctx.state.connection_closed();
            }
        }
        self.leftover.clear();
        self.served = 0;
        self.server_closed = by_server;
    }
}
