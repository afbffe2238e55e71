//! WebSocket (`ws://`, `wss://`) on the epoll reactor: one connection
//! slot per user, driven by readiness events like the HTTP/1.1 slot
//! (slot.rs), its session and booking ws_conn.rs's (the tokio driver's
//! too), so no rule of the protocol is written here. A slot connects
//! (over `wss://`, a rustls session, tls.rs, between the socket and the
//! session, its handshake after the TCP connect), writes the session's
//! outbox (the upgrade, a message, a pong, a close) and hands every read
//! to the session. When a message is answered, how it times out or fails,
//! and the close at a park or at the end are ../ws.rs's rules, io_uring's
//! too.

use super::poller::{event_buffer, Poller, PEER_CLOSED, READABLE, WRITABLE};
use super::slot::{Io, Slot};
use super::EVENTS_PER_WAIT;
use crate::drive::reactor::tls::Received;
use crate::drive::reactor::ws::{io_failure, tls_failure, WsCore, WsReactorSlot};
use crate::drive::reactor::{drive, slot_count, socket, Phase, Step};
use crate::exchange::ws_session::{WsFailure, WsSession};
use crate::net::tls_errors::{explain, explain_io};
use crate::plan::worker_plan::{WorkerMessage, WorkerPlan};
use crate::worker::context::ConnectionContext;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::mpsc;
use std::time::Instant;
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
                if slot.core.base.generation != generation {
                    continue;
                }
                let step = slot.on_event(&io, &mut scratch, event.events);
                turn.advance(&io, ctx, slots, index, step);
            }
            Ok(())
        },
    )
}

/// One WebSocket connection slot of the epoll reactor: the shared state
/// (../ws.rs) and how far its outbox is written.
pub(super) struct WsSlot {
    core: WsCore,
    /// Bytes of the session's outbox written so far.
    out_at: usize,
}

crate::drive::reactor::ws::ws_reactor_slot!(WsSlot, Io);

impl WsReactorSlot<Io<'_>> for WsSlot {
    fn core(&self) -> &WsCore {
        &self.core
    }

    fn core_mut(&mut self) -> &mut WsCore {
        &mut self.core
    }

    /// Connects, the upgrade waiting in the new session's outbox, and
    /// writes it (or the ClientHello) at once if the connect is over
    /// already (loopback).
    fn open_socket(&mut self, io: &Io, now: Instant) -> Step {
        let connector = &io.ctx.connector;
        let made = self.core.base.new_socket(io.ctx, now, |_| {
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
        self.core.base.fd = Some(fd);
        if let Err(failure) = self.core.connecting(io.ctx, now) {
            return self.fail_ws(io, failure);
        }
        if let Some(tls) = &self.core.tls {
            // The ClientHello goes at once when the connect is over already.
            return match socket::send(self.core.base.raw_fd(), tls.unsent()) {
                Ok(n) => {
                    self.core.tls_started(io.ctx, Instant::now());
                    if let Some(tls) = self.core.tls.as_mut() {
                        tls.advance(n);
                    }
                    self.handshake(io, &mut [], 0)
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => Step::Pending,
                Err(error) => self.fail_to_connect(io, &error),
            };
        }
        let upgrade = (self.core.conn.session.as_ref()).map_or(&[][..], WsSession::outbox);
        match socket::send(self.core.base.raw_fd(), upgrade) {
            Ok(n) => {
                self.core.connect_done(io.ctx, Instant::now());
                self.out_at = n;
                self.send_outbox(io)
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Step::Pending,
            Err(error) => self.fail_to_connect(io, &error),
        }
    }

    /// Writes what is left of the outbox: `Ok(true)` once it is all out
    /// (its frame bytes booked), `Ok(false)` when the socket is full.
    fn write_out(&mut self, io: &Io) -> Result<bool, WsFailure> {
        if self.core.tls.is_some() {
            return self.write_tls(io);
        }
        let fd = self.core.base.raw_fd();
        loop {
            let Some(session) = self.core.conn.session.as_ref() else {
                return Ok(true);
            };
            let outbox = session.outbox();
            if self.out_at >= outbox.len() {
                self.out_at = 0;
                self.core.conn.written(io.ctx);
                return Ok(true);
            }
            match socket::send(fd, &outbox[self.out_at..]) {
                Ok(n) => self.out_at += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) => return Err(self.core.conn.io_failed(io.ctx, "writing", &e)),
            }
        }
    }

    /// [`WsReactorSlot::write_out`], the phase following: reading once
    /// all is out, writing the rest when the socket has room.
    fn send_outbox(&mut self, io: &Io) -> Step {
        match self.write_out(io) {
            Ok(true) => {
                if self.core.base.phase == Phase::Writing {
                    self.core.base.phase = Phase::Reading;
                }
                Step::Pending
            }
            Ok(false) => {
                self.core.base.phase = Phase::Writing;
                Step::Pending
            }
            Err(failure) => self.fail_ws(io, failure),
        }
    }

    fn forget_writes(&mut self) {
        self.out_at = 0;
    }

    fn partly_written(&self) -> bool {
        self.out_at != 0
    }
}

impl WsSlot {
    fn new(index: u32, seed: u64, now: Instant) -> WsSlot {
        WsSlot {
            core: WsCore::new(index, seed, now),
            out_at: 0,
        }
    }

    /// The epoll token of the current connection (slot.rs's encoding).
    fn token(&self) -> u64 {
        (u64::from(self.core.base.generation) << 32) | u64::from(self.core.base.index)
    }

    /// Handles readiness `events` of this slot's connection.
    fn on_event(&mut self, io: &Io, scratch: &mut [u8], events: u32) -> Step {
        match self.core.base.phase {
            // An idle connection is read too: the server's pings are
            // answered, its close or end booked at once (../ws.rs).
            Phase::Idle if self.core.base.fd.is_some() && events & READABLE != 0 => {
                self.read(io, scratch, events)
            }
            Phase::Idle => Step::Pending,
            Phase::Connecting if events & WRITABLE != 0 => {
                if let Some(error) = socket::connect_error(self.core.base.raw_fd()) {
                    return self.fail_to_connect(io, &error);
                }
                if self.core.tls.is_some() {
                    self.core.tls_started(io.ctx, Instant::now());
                    return self.handshake(io, scratch, events);
                }
                self.core.connect_done(io.ctx, Instant::now());
                let step = self.send_outbox(io);
                if step != Step::Pending || events & READABLE == 0 {
                    return step;
                }
                self.read(io, scratch, events)
            }
            Phase::Connecting => Step::Pending,
            Phase::Handshaking => self.handshake(io, scratch, events),
            Phase::Writing | Phase::Reading => {
                if events & WRITABLE != 0 && self.core.base.phase == Phase::Writing {
                    let step = self.send_outbox(io);
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

    /// Drives the TLS handshake: sends what the session has to say, reads
    /// the server's part while `events` say it is readable, and once it
    /// is over counts the connection as open and writes the upgrade.
    fn handshake(&mut self, io: &Io, scratch: &mut [u8], events: u32) -> Step {
        if let Err(error) = self.send_ciphertext() {
            return self.fail_ws(io, tls_failure(explain_io(&error)));
        }
        if events & READABLE != 0 {
            loop {
                let n = match socket::recv(self.core.base.raw_fd(), scratch) {
                    Ok(0) => {
                        let reason = "the server closed the connection in the handshake";
                        return self.fail_ws(io, tls_failure(reason.into()));
                    }
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(error) => return self.fail_ws(io, tls_failure(explain_io(&error))),
                };
                let core = &mut self.core;
                let Some(tls) = core.tls.as_mut() else {
                    return Step::Pending;
                };
                let plain = &mut core.plain;
                match tls.receive(&scratch[..n], |chunk| plain.extend_from_slice(chunk)) {
                    Ok(Received::Open) => {}
                    Ok(Received::Closed) => {
                        let reason = "the server closed the session in the handshake";
                        return self.fail_ws(io, tls_failure(reason.into()));
                    }
                    Err(error) => return self.fail_ws(io, tls_failure(explain(&error))),
                }
                if !tls.is_handshaking() || n < scratch.len() {
                    break;
                }
            }
        }
        if self.core.is_handshaking() {
            return match self.send_ciphertext() {
                Ok(_) => Step::Pending,
                Err(error) => self.fail_ws(io, tls_failure(explain_io(&error))),
            };
        }
        self.core.handshake_done(io.ctx, Instant::now());
        let step = self.send_outbox(io);
        if step != Step::Pending || events & READABLE == 0 {
            return step;
        }
        self.read(io, scratch, events)
    }

    /// Sends the TLS session's ciphertext until it is all out (true) or
    /// the socket is full (false).
    fn send_ciphertext(&mut self) -> io::Result<bool> {
        let fd = self.core.base.raw_fd();
        let Some(tls) = self.core.tls.as_mut() else {
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
    fn write_tls(&mut self, io: &Io) -> Result<bool, WsFailure> {
        let core = &mut self.core;
        if let (Some(tls), Some(session)) = (core.tls.as_mut(), core.conn.session.as_ref()) {
            if !session.outbox().is_empty() {
                if let Err(error) = tls.write_plain(session.outbox()) {
                    return Err(tls_failure(explain_io(&error)));
                }
                core.conn.written(io.ctx);
            }
        }
        self.send_ciphertext()
            .map_err(|e| io_failure("writing", &e))
    }

    /// Reads until the socket is drained or the message is answered. A
    /// short read means drained, unless the peer has closed: its end of
    /// stream may wait behind the data, and edge-triggered epoll does not
    /// report it again.
    fn read(&mut self, io: &Io, scratch: &mut [u8], events: u32) -> Step {
        let peer_closed = events & PEER_CLOSED != 0;
        loop {
            let n = match socket::recv(self.core.base.raw_fd(), scratch) {
                Ok(0) => {
                    let failure = self.core.conn.end_of_stream(io.ctx);
                    return self.fail_ws(io, failure);
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Step::Pending,
                Err(e) => {
                    let failure = self.core.conn.io_failed(io.ctx, "reading", &e);
                    return self.fail_ws(io, failure);
                }
            };
            let now = Instant::now();
            let mut tls_closed = false;
            let core = &mut self.core;
            let received = match core.tls.as_mut() {
                None => core.conn.received(io.ctx, &scratch[..n], core.sent, now),
                Some(tls) => {
                    core.plain.clear();
                    let plain = &mut core.plain;
                    match tls.receive(&scratch[..n], |chunk| plain.extend_from_slice(chunk)) {
                        Ok(Received::Open) => {}
                        Ok(Received::Closed) => tls_closed = true,
                        Err(error) => return self.fail_ws(io, tls_failure(explain(&error))),
                    }
                    core.conn.received(io.ctx, &core.plain, core.sent, now)
                }
            };
            if let Err(failure) = received {
                return self.fail_ws(io, failure);
            }
            if tls_closed {
                // close_notify: nothing more comes, as at the stream's end.
                let failure = self.core.conn.end_of_stream(io.ctx);
                return self.fail_ws(io, failure);
            }
            if let Some(step) = self.progress(io) {
                if step == Step::Answered && (n == scratch.len() || peer_closed) {
                    // What else came is read before the next message goes
                    // (edge-triggered: no event would tell of it): a close
                    // behind the reply means a new connection for it. A
                    // short read took it all (no syscall more per message).
                    self.read(io, scratch, events);
                }
                return step;
            }
            if n < scratch.len() && !peer_closed {
                return Step::Pending;
            }
        }
    }
}
