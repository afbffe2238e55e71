//! One HTTP/2 connection slot of the epoll reactor: its socket, registered
//! once edge-triggered, read until a short read, written until it would
//! block. Everything else is the reactors' shared HTTP/2 slot
//! (reactor/h2_conn.rs).

use super::poller::{PEER_CLOSED, READABLE, WRITABLE};
use super::slot::Io;
use crate::drive::reactor::h2_conn::{H2Conn, H2Driver};
use crate::drive::reactor::tls::TlsSession;
use crate::drive::reactor::{socket, Phase, Step};
use crate::exchange::h2_exchange::H2Wire;
use crate::net::outcome_class::classify_io;
use stampede_metrics::ErrorKind;
use std::io;
use std::os::fd::AsRawFd;
use std::rc::Rc;
use std::time::Instant;

#[derive(Debug)]
pub(super) struct H2Slot {
    conn: H2Conn,
}

impl H2Driver<Io<'_>> for H2Slot {
    fn conn(&self) -> &H2Conn {
        &self.conn
    }

    fn conn_mut(&mut self) -> &mut H2Conn {
        &mut self.conn
    }

    /// Opens a connection for the first waiting request; on loopback the
    /// connect is often over at once, and the preface and request leave.
    fn open_socket(&mut self, io: &Io, now: Instant) -> Step {
        let connector = &io.ctx.connector;
        let opened = connector.with_next_endpoint(|endpoint| {
            socket::open(endpoint, &connector.source_addrs, io.longest_request)
        });
        let conn = &mut self.conn;
        conn.exchange.connecting(io.ctx, &conn.wire, now);
        let fd = match opened {
            Ok(fd) => fd,
            Err(error) => return self.connect_error(io, &error),
        };
        conn.base.bump_generation();
        if let Err(error) = io.poller.add(fd.as_raw_fd(), self.token()) {
            drop(fd);
            return self.connect_error(io, &error);
        }
        let conn = &mut self.conn;
        conn.base.fd = Some(fd);
        conn.base.phase = Phase::Connecting;
        if let Some(client) = &connector.tls {
            match TlsSession::new(client) {
                Ok(session) => conn.tls = Some(Box::new(session)),
                Err(error) => {
                    let reason = crate::net::tls_errors::explain(&error);
                    return self.handshake_failed(io, &reason);
                }
            }
            // The ClientHello goes at once when the connect is over already.
            let unsent = conn.tls.as_ref().map_or(&[][..], |t| t.unsent());
            return match socket::send(conn.base.raw_fd(), unsent) {
                Ok(n) => {
                    self.tcp_connected(io, Instant::now());
                    if let Some(tls) = &mut self.conn.tls {
                        tls.advance(n);
                    }
                    self.handshake(io, &mut [], 0)
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => Step::Pending,
                Err(error) => self.connect_error(io, &error),
            };
        }
        match socket::send(conn.base.raw_fd(), conn.exchange.output()) {
            Ok(n) => {
                self.conn.exchange.consume_output(n);
                self.connected(io, Instant::now());
                self.start_waiting(io)
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Step::Pending,
            Err(error) => self.connect_error(io, &error),
        }
    }

    /// Writes what the codec queued until it is out or the socket is full
    /// (the rest goes at the next writable event).
    fn write_out(&mut self, io: &Io) -> Step {
        let conn = &mut self.conn;
        if conn.base.phase != Phase::Reading {
            return Step::Pending;
        }
        if let Some(tls) = &mut conn.tls {
            let out = conn.exchange.output();
            if !out.is_empty() {
                if let Err(error) = tls.write_plain(out) {
                    return self.transport_failed(io, classify_io(&error));
                }
                let n = out.len();
                conn.exchange.consume_output(n);
            }
            return match self.flush_tls() {
                Ok(_) => Step::Pending,
                Err(error) => self.transport_failed(io, classify_io(&error)),
            };
        }
        loop {
            let out = self.conn.exchange.output();
            if out.is_empty() {
                return Step::Pending;
            }
            match socket::send(self.conn.base.raw_fd(), out) {
                Ok(n) => self.conn.exchange.consume_output(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Step::Pending,
                Err(error) => return self.transport_failed(io, classify_io(&error)),
            }
        }
    }
}

impl H2Slot {
    pub(super) fn new(index: u32, wire: Rc<H2Wire>, now: Instant) -> H2Slot {
        H2Slot {
            conn: H2Conn::new(index, wire, now),
        }
    }

    /// The epoll token of the current connection.
    pub(super) fn token(&self) -> u64 {
        (u64::from(self.conn.base.generation) << 32) | u64::from(self.conn.base.index)
    }

    pub(super) fn generation(&self) -> u32 {
        self.conn.base.generation
    }

    /// Sends the session's ciphertext until it is all out (true) or the
    /// socket is full (false).
    fn flush_tls(&mut self) -> io::Result<bool> {
        let fd = self.conn.base.raw_fd();
        let Some(tls) = self.conn.tls.as_mut() else {
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

    /// Drives the TLS handshake: sends what the session has to say, reads
    /// the server's part while `events` say it is readable, and once it is
    /// over counts the connection as open (reactor/h2_conn.rs).
    fn handshake(&mut self, io: &Io, scratch: &mut [u8], events: u32) -> Step {
        if let Err(error) = self.flush_tls() {
            return self.handshake_failed(io, &crate::net::tls_errors::explain_io(&error));
        }
        if events & READABLE != 0 {
            loop {
                let n = match socket::recv(self.conn.base.raw_fd(), scratch) {
                    Ok(0) => {
                        let reason = "the server closed the connection in the handshake";
                        return self.handshake_failed(io, &reason);
                    }
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(error) => {
                        let reason = crate::net::tls_errors::explain_io(&error);
                        return self.handshake_failed(io, &reason);
                    }
                };
                if let Err(step) = self.handshake_input(io, &scratch[..n]) {
                    return step;
                }
                let handshaking = self.conn.tls.as_ref().is_some_and(|t| t.is_handshaking());
                if !handshaking || n < scratch.len() {
                    break;
                }
            }
        }
        let Some(tls) = self.conn.tls.as_ref() else {
            return Step::Pending;
        };
        if tls.is_handshaking() {
            return match self.flush_tls() {
                Ok(_) => Step::Pending,
                Err(error) => {
                    self.handshake_failed(io, &crate::net::tls_errors::explain_io(&error))
                }
            };
        }
        self.handshake_over(io)
    }

    /// Handles readiness `events` of this slot's connection.
    pub(super) fn on_event(&mut self, io: &Io, scratch: &mut [u8], events: u32) -> Step {
        match self.conn.base.phase {
            Phase::Idle | Phase::Writing => Step::Pending,
            Phase::Handshaking => self.handshake(io, scratch, events),
            Phase::Connecting if events & WRITABLE != 0 => {
                if let Some(error) = socket::connect_error(self.conn.base.raw_fd()) {
                    return self.connect_error(io, &error);
                }
                if self.conn.tls.is_some() {
                    self.tcp_connected(io, Instant::now());
                    return self.handshake(io, scratch, events);
                }
                self.connected(io, Instant::now());
                if let Step::Failed = self.write_out(io) {
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
            let n = match socket::recv(self.conn.base.raw_fd(), scratch) {
                // The server closed: as the `h2` crate's broken pipe.
                Ok(0) => return self.transport_failed(io, ErrorKind::Reset),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(error) => return self.transport_failed(io, classify_io(&error)),
            };
            if let Err(step) = self.take_in(io, &scratch[..n], Instant::now()) {
                return step;
            }
            if self.conn.exchange.drained() == Some(false) || (n < scratch.len() && !closing) {
                break;
            }
        }
        self.after_io(io, Instant::now())
    }
}
