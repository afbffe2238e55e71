//! One HTTP/2 connection slot of the io_uring reactor: the ring connects
//! its socket, one multishot receive is armed for the connection's life,
//! and what the codec queued (through the TLS session over https) goes out
//! in one send at a time, its bytes kept in the slot until the send
//! completes (after a close too: see `retired`). Everything else is the
//! reactors' shared HTTP/2 slot (reactor/h2_conn.rs).

use super::ring::{Completion, BUFFER_GROUP};
use super::slot::{Io, Op, GENERATION_MASK};
use crate::drive::reactor::h2_conn::{H2Conn, H2Driver};
use crate::drive::reactor::tls::TlsSession;
use crate::drive::reactor::{socket, Phase, Step};
use crate::exchange::h2_exchange::H2Wire;
use crate::net::outcome_class::classify_io;
use io_uring::{opcode, types};
use socket2::SockAddr;
use stampede_metrics::ErrorKind;
use std::io;
use std::os::fd::AsRawFd;
use std::rc::Rc;
use std::time::Instant;

#[derive(Debug)]
pub(super) struct H2Slot {
    conn: H2Conn,
    /// A connect, send or multishot receive of the connection is in the
    /// kernel's hands; closing the connection cancels it.
    connect_queued: bool,
    send_queued: bool,
    receive_armed: bool,
    /// The bytes of the queued send: the kernel reads them until the send
    /// completes, so they are not touched before.
    sending: Vec<u8>,
    /// The bytes of sends still queued when their connection closed, by
    /// generation: freed when their (canceled) send completes.
    retired: Vec<(u32, Vec<u8>)>,
    /// The address of the slot's latest connect, boxed so that it stays put.
    connect_to: Box<SockAddr>,
}

impl H2Driver<Io<'_>> for H2Slot {
    fn conn(&self) -> &H2Conn {
        &self.conn
    }

    fn conn_mut(&mut self) -> &mut H2Conn {
        &mut self.conn
    }

    /// Opens a socket and queues its connect; the preface and the first
    /// request go once it completes (over https, the handshake first).
    fn open_socket(&mut self, io: &Io, now: Instant) -> Step {
        let connector = &io.ctx.connector;
        let opened = connector.with_next_endpoint(|endpoint| {
            let address = socket::address_of(endpoint)?;
            // HTTP/2 writes small frames while others are unacknowledged:
            // Nagle would hold them (TCP_NODELAY on every socket).
            let fd = socket::unconnected(endpoint, &connector.source_addrs, usize::MAX)?;
            Ok::<_, io::Error>((fd, address))
        });
        let conn = &mut self.conn;
        conn.exchange.connecting(io.ctx, &conn.wire, now);
        let (fd, address) = match opened {
            Ok(opened) => opened,
            Err(error) => return self.connect_error(io, &error),
        };
        *self.connect_to = address;
        let conn = &mut self.conn;
        conn.base.bump_generation();
        let connect = opcode::Connect::new(
            types::Fd(fd.as_raw_fd()),
            self.connect_to.as_ptr().cast(),
            self.connect_to.len(),
        )
        .build()
        .user_data(self.user_data(Op::Connect));
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
        }
        // SAFETY: the address lives in this slot's box, rewritten only for
        // a later connect (the kernel copies it when it takes the connect).
        if let Err(error) = unsafe { io.ring.push(&connect) } {
            return self.connect_error(io, &error);
        }
        self.connect_queued = true;
        Step::Pending
    }

    /// Queues one send of everything the codec queued (encrypted over
    /// https), unless a send is under way: its completion sends the rest.
    fn write_out(&mut self, io: &Io) -> Step {
        if self.conn.base.phase != Phase::Reading || self.send_queued {
            return Step::Pending;
        }
        let conn = &mut self.conn;
        let out = conn.exchange.output();
        match conn.tls.as_mut() {
            Some(tls) => {
                if !out.is_empty() {
                    if let Err(error) = tls.write_plain(out) {
                        return self.transport_failed(io, classify_io(&error));
                    }
                }
                tls.take_unsent(&mut self.sending);
            }
            None => {
                self.sending.clear();
                self.sending.extend_from_slice(out);
            }
        }
        let n = out.len();
        conn.exchange.consume_output(n);
        match self.queue_send(io) {
            Ok(()) => Step::Pending,
            Err(error) => self.transport_failed(io, classify_io(&error)),
        }
    }

    /// What the kernel still holds of the connection is canceled by user
    /// data; a send's bytes stay until it completes. The queue goes to the
    /// kernel before the fd closes, so that no queued request meets its
    /// number reused.
    fn release_io(&mut self, io: &Io) {
        if self.send_queued {
            let generation = self.conn.base.generation & GENERATION_MASK;
            (self.retired).push((generation, std::mem::take(&mut self.sending)));
        }
        let queued = [
            (std::mem::take(&mut self.connect_queued), Op::Connect),
            (std::mem::take(&mut self.send_queued), Op::Send),
            (std::mem::take(&mut self.receive_armed), Op::Receive),
        ];
        let mut any = false;
        for (_, op) in queued.iter().filter(|(queued, _)| *queued) {
            let cancel = opcode::AsyncCancel::new(self.user_data(*op))
                .build()
                .user_data(self.user_data(Op::Cancel));
            // SAFETY: a cancel points at nothing. If it cannot be queued the
            // request ends on its own (a receive at the server's close).
            let _ = unsafe { io.ring.push(&cancel) };
            any = true;
        }
        if any {
            let _ = io.ring.submit();
        }
    }
}

impl Drop for H2Slot {
    /// At the end of a run a send may still be queued on the ring, which is
    /// torn down after the slots: its bytes are left to the process's exit
    /// rather than freed under the kernel.
    fn drop(&mut self) {
        if self.send_queued {
            std::mem::forget(std::mem::take(&mut self.sending));
        }
        for (_, bytes) in self.retired.drain(..) {
            std::mem::forget(bytes);
        }
    }
}

impl H2Slot {
    pub(super) fn new(index: u32, wire: Rc<H2Wire>, now: Instant) -> H2Slot {
        H2Slot {
            conn: H2Conn::new(index, wire, now),
            connect_queued: false,
            send_queued: false,
            receive_armed: false,
            sending: Vec::new(),
            retired: Vec::new(),
            connect_to: Box::new(SockAddr::from(std::net::SocketAddr::from((
                [0, 0, 0, 0],
                0,
            )))),
        }
    }

    fn user_data(&self, op: Op) -> u64 {
        super::slot::user_data(self.conn.base.generation, op, self.conn.base.index)
    }

    /// Queues a send of `sending` (nothing when it is empty).
    fn queue_send(&mut self, io: &Io) -> io::Result<()> {
        if self.sending.is_empty() {
            return Ok(());
        }
        let send = opcode::Send::new(
            types::Fd(self.conn.base.raw_fd()),
            self.sending.as_ptr(),
            self.sending.len() as u32,
        )
        .flags(libc::MSG_NOSIGNAL)
        .build()
        .user_data(self.user_data(Op::Send));
        // SAFETY: `sending` is left alone until the send completes, and kept
        // in `retired` if the connection closes first.
        unsafe { io.ring.push(&send)? };
        self.send_queued = true;
        Ok(())
    }

    /// Sends what the TLS session has to say in its handshake, unless a
    /// send is under way (its completion sends the rest).
    fn flush_handshake(&mut self, io: &Io) -> Step {
        if self.send_queued {
            return Step::Pending;
        }
        if let Some(tls) = self.conn.tls.as_mut() {
            tls.take_unsent(&mut self.sending);
        }
        match self.queue_send(io) {
            Ok(()) => Step::Pending,
            Err(error) => {
                let reason = crate::net::tls_errors::explain_io(&error);
                self.handshake_failed(io, &reason)
            }
        }
    }

    fn arm_receive(&mut self, io: &Io) -> io::Result<()> {
        let receive = opcode::RecvMulti::new(types::Fd(self.conn.base.raw_fd()), BUFFER_GROUP)
            .build()
            .user_data(self.user_data(Op::Receive));
        // SAFETY: the buffers belong to the ring, which outlives the request.
        unsafe { io.ring.push(&receive)? };
        self.receive_armed = true;
        Ok(())
    }

    /// Handles a completion of one of this slot's requests.
    pub(super) fn on_completion(&mut self, io: &Io, completion: &Completion) -> Step {
        let generation = (completion.user_data >> 40) as u32;
        let op = (completion.user_data >> 32) & 0xFF;
        let current = generation == self.conn.base.generation & GENERATION_MASK;
        if !current || self.conn.base.fd.is_none() {
            if op == Op::Send as u64 {
                // A send of a closed connection is over: its bytes may go.
                self.retired.retain(|(retired, _)| *retired != generation);
            }
            return Step::Pending;
        }
        match op {
            op if op == Op::Connect as u64 => self.on_connected(io, completion.result),
            op if op == Op::Send as u64 => self.on_sent(io, completion.result),
            op if op == Op::Receive as u64 => self.on_received(io, completion),
            _ => Step::Pending,
        }
    }

    fn on_connected(&mut self, io: &Io, result: i32) -> Step {
        self.connect_queued = false;
        if self.conn.base.phase != Phase::Connecting {
            return Step::Pending;
        }
        if result < 0 {
            let error = io::Error::from_raw_os_error(-result);
            let error = socket::with_path(&io.ctx.connector.endpoint, error);
            return self.connect_error(io, &error);
        }
        let now = Instant::now();
        if let Err(error) = self.arm_receive(io) {
            return self.connect_error(io, &error);
        }
        if self.conn.tls.is_some() {
            // The handshake has a connect timeout of its own (as on tokio).
            self.tcp_connected(io, now);
            return self.flush_handshake(io);
        }
        self.connected(io, now);
        if let Step::Failed = self.write_out(io) {
            return Step::Failed;
        }
        self.after_io(io, now)
    }

    /// A send completed: the rest of it goes again, else what the codec
    /// queued meanwhile.
    fn on_sent(&mut self, io: &Io, result: i32) -> Step {
        self.send_queued = false;
        let phase = self.conn.base.phase;
        if result < 0 {
            let error = io::Error::from_raw_os_error(-result);
            return match phase {
                Phase::Handshaking => {
                    self.handshake_failed(io, &crate::net::tls_errors::explain_io(&error))
                }
                Phase::Reading => self.transport_failed(io, classify_io(&error)),
                _ => Step::Pending,
            };
        }
        let sent = (result as usize).min(self.sending.len());
        if sent < self.sending.len() {
            self.sending.drain(..sent);
            return match self.queue_send(io) {
                Ok(()) => Step::Pending,
                Err(error) => self.transport_failed(io, classify_io(&error)),
            };
        }
        self.sending.clear();
        match phase {
            Phase::Handshaking => self.flush_handshake(io),
            _ => self.write_out(io),
        }
    }

    fn on_received(&mut self, io: &Io, completion: &Completion) -> Step {
        if !completion.more() {
            self.receive_armed = false;
        }
        let result = completion.result;
        let handshaking = self.conn.base.phase == Phase::Handshaking;
        if result == -libc::ENOBUFS {
            // Every buffer was in use: the kernel ended the multishot
            // receive; arm it again (buffers come back before the next wait).
            return match self.arm_receive(io) {
                Ok(()) => Step::Pending,
                Err(error) => self.transport_failed(io, classify_io(&error)),
            };
        }
        if result <= 0 {
            return match (handshaking, result) {
                (true, 0) => {
                    self.handshake_failed(io, &"the server closed the connection in the handshake")
                }
                (true, _) => {
                    let error = io::Error::from_raw_os_error(-result);
                    self.handshake_failed(io, &crate::net::tls_errors::explain_io(&error))
                }
                // The server closed: as the `h2` crate's broken pipe.
                (false, 0) => self.transport_failed(io, ErrorKind::Reset),
                (false, _) => {
                    let error = io::Error::from_raw_os_error(-result);
                    self.transport_failed(io, classify_io(&error))
                }
            };
        }
        let Some(id) = completion.buffer() else {
            return Step::Pending;
        };
        // SAFETY: the buffer came with this completion; the worker gives it
        // back only after this handler.
        let bytes = unsafe { io.ring.received(id, result as usize) };
        let step = match self.conn.base.phase {
            Phase::Handshaking => self.on_handshake_bytes(io, bytes),
            Phase::Reading => match self.take_in(io, bytes, Instant::now()) {
                Ok(()) => self.after_io(io, Instant::now()),
                Err(step) => step,
            },
            _ => Step::Pending,
        };
        let receiving = matches!(self.conn.base.phase, Phase::Reading | Phase::Handshaking);
        if self.conn.base.fd.is_some() && !self.receive_armed && receiving {
            // The kernel ended the multishot receive with data (it may on
            // an overflowing completion queue): keep receiving.
            if let Err(error) = self.arm_receive(io) {
                return self.transport_failed(io, classify_io(&error));
            }
        }
        step
    }

    /// The server's part of the handshake: the session answers, or the
    /// handshake is over and the connection opens (reactor/h2_conn.rs).
    fn on_handshake_bytes(&mut self, io: &Io, bytes: &[u8]) -> Step {
        if let Err(step) = self.handshake_input(io, bytes) {
            return step;
        }
        if self.conn.tls.as_ref().is_some_and(|t| t.is_handshaking()) {
            return self.flush_handshake(io);
        }
        self.handshake_over(io)
    }
}
