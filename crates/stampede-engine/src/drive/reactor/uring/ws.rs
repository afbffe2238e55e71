//! WebSocket (`ws://`, `wss://`) on the io_uring reactor: one connection slot per
//! user, driven by completions like the HTTP/1.1 slot (slot.rs), its
//! session and booking ws_conn.rs's (the tokio and epoll drivers' too),
//! so no rule of the protocol is written here; its states are those of
//! epoll/ws.rs. The connect is queued with the upgrade linked behind it;
//! once open the connection has one multishot receive armed, and each
//! write of the session's outbox (a message, a pong, a close) is one send
//! from a copy the kernel reads until the send completes (after a close
//! too: see `retired`). A slot the schedule or the budget parks, or the
//! run's end cuts off, sends a close (1000) and the worker waits for the
//! server's, a moment at most, as the other drivers do. Over `wss://` the
//! ClientHello is linked behind the connect instead, and the reactor's
//! rustls session (../tls.rs, HTTP/1.1's over TLS too) sits between the
//! ring and the session: ciphertext in each send, records decrypted from
//! each receive before its buffer goes back.

use super::ring::{Completion, Ring, BUFFER_GROUP};
use super::slot::Io;
use crate::drive::reactor::tls::Received;
use crate::drive::reactor::ws::{io_failure, tls_failure, WsCore, WsReactorSlot};
use crate::drive::reactor::{drive, slot_count, socket, Phase, Step};
use crate::exchange::ws_session::{WsFailure, WsSession};
use crate::net::tls_errors::{explain, explain_io};
use crate::net::transport::Endpoint;
use crate::plan::worker_plan::{WorkerMessage, WorkerPlan};
use crate::worker::context::ConnectionContext;
use io_uring::{opcode, squeue, types};
use socket2::SockAddr;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::mpsc;
use std::time::Instant;
use tokio::sync::watch;

/// The request a completion answers (the low bits of its user data).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Connect = 1,
    Send = 2,
    Receive = 3,
    Cancel = 4,
}

/// Generations are kept to 24 bits of the user data (as in slot.rs).
const GENERATION_MASK: u32 = 0x00FF_FFFF;

/// Runs a WebSocket worker on the io_uring reactor (see [`drive`]).
pub(super) fn run(
    plan: &WorkerPlan,
    stop: watch::Receiver<bool>,
    to_aggregator: &mpsc::Sender<WorkerMessage>,
    ctx: &ConnectionContext,
) -> io::Result<()> {
    let count = slot_count(plan);
    let ring = Ring::new(count)?;
    let target = socket::address_of(&ctx.connector.endpoint)?;
    // Frames are small and several may follow each other (a pong, then a
    // message): every socket goes out with TCP_NODELAY, as on epoll.
    let io = Io {
        ctx,
        ring: &ring,
        target: &target,
        longest_request: usize::MAX,
    };
    let now = Instant::now();
    let mut slots: Vec<WsSlot> = (0..count)
        .map(|index| WsSlot::new(index as u32, plan.seed, now))
        .collect();
    let mut completions = Vec::with_capacity(4096);
    drive(
        plan,
        stop,
        to_aggregator,
        ctx,
        &io,
        &mut slots,
        |slots, turn, timeout| {
            ring.wait(timeout, &mut completions)?;
            for completion in &completions {
                let index = (completion.user_data & 0xFFFF_FFFF) as usize;
                if let Some(slot) = slots.get_mut(index) {
                    let step = slot.on_completion(&io, completion);
                    turn.advance(&io, ctx, slots, index, step);
                }
                // Every buffer goes back, including those of completions
                // that arrived for a connection already closed.
                if let Some(id) = completion.buffer() {
                    ring.give_back(id);
                }
            }
            ring.publish();
            Ok(())
        },
    )
}

/// One WebSocket connection slot of the io_uring reactor: the shared state
/// (../ws.rs) and what the kernel holds of its connection.
pub(super) struct WsSlot {
    core: WsCore,
    /// A connect, send or multishot receive of the connection is in the
    /// kernel's hands; closing the connection cancels it.
    connect_queued: bool,
    send_queued: bool,
    receive_armed: bool,
    /// The bytes of the queued send, copied from the session's outbox: the
    /// kernel reads them until the send completes, so they are not touched
    /// before.
    sending: Vec<u8>,
    /// The bytes of sends still queued when their connection closed, by
    /// generation: freed when their (canceled) send completes.
    retired: Vec<(u32, Vec<u8>)>,
    /// With `--dns`: the address of this slot's latest connect, boxed so
    /// that it stays put until the kernel took it.
    connect_to: Option<Box<SockAddr>>,
}

crate::drive::reactor::ws::ws_reactor_slot!(WsSlot, Io);

impl WsReactorSlot<Io<'_>> for WsSlot {
    fn core(&self) -> &WsCore {
        &self.core
    }

    fn core_mut(&mut self) -> &mut WsCore {
        &mut self.core
    }

    /// Opens a socket and queues its connect, the upgrade (waiting in the
    /// new session's outbox) linked behind, or over `wss://` the ClientHello
    /// (the upgrade goes once the handshake is over).
    fn open_socket(&mut self, io: &Io, now: Instant) -> Step {
        let picked = io.ctx.connector.picker.as_ref().map(|p| p.next());
        let made = self.core.base.new_socket(io.ctx, now, |ctx| {
            let connector = &ctx.connector;
            let endpoint = picked.map(Endpoint::Tcp);
            socket::unconnected(
                endpoint.as_ref().unwrap_or(&connector.endpoint),
                &connector.source_addrs,
                io.longest_request,
            )
        });
        let fd = match made {
            Ok(fd) => fd,
            Err(error) => return self.fail_to_connect(io, &error),
        };
        let target: &SockAddr = match picked {
            Some(addr) => {
                let kept = self
                    .connect_to
                    .get_or_insert_with(|| Box::new(SockAddr::from(addr)));
                **kept = SockAddr::from(addr);
                kept
            }
            None => io.target,
        };
        let connect = opcode::Connect::new(
            types::Fd(fd.as_raw_fd()),
            target.as_ptr().cast(),
            target.len(),
        )
        .build()
        .user_data(self.user_data(Op::Connect));
        self.core.base.fd = Some(fd);
        if let Err(failure) = self.core.connecting(io.ctx, now) {
            return self.fail_ws(io, failure);
        }
        if let Err(failure) = self.take_outbox(io) {
            return self.fail_ws(io, failure);
        }
        let send = self.send_entry();
        // SAFETY: the address lives in the worker (or, with --dns, in this
        // slot's box, rewritten only for a later connect: the kernel copies
        // it when it takes the connect in); the upgrade (or the ClientHello)
        // stays in `sending` (or `retired`) until its send completes.
        if let Err(error) = unsafe { io.ring.push_linked(connect, &send) } {
            return self.fail_to_connect(io, &error);
        }
        self.connect_queued = true;
        self.send_queued = true;
        Step::Pending
    }

    /// Queues a send of what the session's outbox (through the TLS
    /// session over `wss://`) holds, unless a send is under way (its
    /// completion sends the rest): `Ok(true)` either way.
    fn write_out(&mut self, io: &Io) -> Result<bool, WsFailure> {
        if self.send_queued || self.core.base.fd.is_none() {
            return Ok(true);
        }
        self.take_outbox(io)?;
        if !self.sending.is_empty() {
            self.queue_send(io)?;
        }
        Ok(true)
    }

    /// Queues the outbox; the send's completion moves the phase on.
    fn send_outbox(&mut self, io: &Io) -> Step {
        match self.write_out(io) {
            Ok(_) => Step::Pending,
            Err(failure) => self.fail_ws(io, failure),
        }
    }

    /// The close in the outbox leaves before the fd closes: a send queued
    /// is submitted now (the kernel issues it at once while the socket has
    /// room), and what the outbox holds behind it goes straight to the
    /// socket (through the TLS session over `wss://`), if it takes it
    /// without waiting.
    fn write_last(&mut self, io: &Io) {
        if self.core.base.fd.is_none() {
            return;
        }
        let _ = self.write_out(io);
        if !self.send_queued {
            return;
        }
        let _ = io.ring.submit();
        let core = &mut self.core;
        let fd = core.base.raw_fd();
        let outbox = (core.conn.session.as_ref()).map_or(&[][..], WsSession::outbox);
        match core.tls.as_mut() {
            None if !outbox.is_empty() => {
                let _ = socket::send_now(fd, outbox);
                core.conn.written(io.ctx);
            }
            None => {}
            Some(tls) => {
                if !tls.is_handshaking() && !outbox.is_empty() && tls.write_plain(outbox).is_ok() {
                    core.conn.written(io.ctx);
                }
                if let Ok(n) = socket::send_now(fd, tls.unsent()) {
                    tls.advance(n);
                }
            }
        }
    }

    /// What the kernel still holds of the connection is canceled by user
    /// data (never by fd: the number may be reused at once); a queued
    /// send's bytes wait in `retired` for its completion.
    fn cancel_io(&mut self, io: &Io) {
        if self.send_queued {
            let generation = self.core.base.generation & GENERATION_MASK;
            self.retired
                .push((generation, std::mem::take(&mut self.sending)));
        }
        let queued = [
            (std::mem::take(&mut self.connect_queued), Op::Connect),
            (std::mem::take(&mut self.send_queued), Op::Send),
            (std::mem::take(&mut self.receive_armed), Op::Receive),
        ];
        for (_, op) in queued.iter().filter(|(queued, _)| *queued) {
            let cancel = opcode::AsyncCancel::new(self.user_data(*op))
                .build()
                .user_data(self.user_data(Op::Cancel));
            // SAFETY: a cancel points at nothing. If it cannot be queued the
            // request ends on its own (a receive at the server's close).
            let _ = unsafe { io.ring.push(&cancel) };
        }
    }
}

impl Drop for WsSlot {
    /// At the end of a run a send may still be queued on the ring, which is
    /// torn down after the slots (and asynchronously): its bytes are left
    /// to the process's exit rather than freed under the kernel.
    fn drop(&mut self) {
        if self.send_queued {
            std::mem::forget(std::mem::take(&mut self.sending));
        }
        for (_, bytes) in self.retired.drain(..) {
            std::mem::forget(bytes);
        }
    }
}

impl WsSlot {
    fn new(index: u32, seed: u64, now: Instant) -> WsSlot {
        WsSlot {
            core: WsCore::new(index, seed, now),
            connect_queued: false,
            send_queued: false,
            receive_armed: false,
            sending: Vec::new(),
            retired: Vec::new(),
            connect_to: None,
        }
    }

    fn user_data(&self, op: Op) -> u64 {
        (u64::from(self.core.base.generation & GENERATION_MASK) << 40)
            | ((op as u64) << 32)
            | u64::from(self.core.base.index)
    }

    /// Handles a completion of one of this slot's requests.
    fn on_completion(&mut self, io: &Io, completion: &Completion) -> Step {
        let generation = (completion.user_data >> 40) as u32;
        let op = (completion.user_data >> 32) & 0xFF;
        let current = generation == self.core.base.generation & GENERATION_MASK;
        if op == Op::Send as u64 && !current && !self.retired.is_empty() {
            // A send of a closed connection is over: its bytes may go.
            self.retired.retain(|(retired, _)| *retired != generation);
        }
        if !current || self.core.base.fd.is_none() {
            // A request of a connection already closed (canceled or racing
            // the close): nothing to do.
            return Step::Pending;
        }
        match op {
            op if op == Op::Connect as u64 => self.on_connected(io, completion.result),
            op if op == Op::Send as u64 => self.on_sent(io, completion.result),
            op if op == Op::Receive as u64 => self.on_received(io, completion),
            _ => Step::Pending,
        }
    }

    /// The connect ended; the upgrade, linked behind it, is on its way.
    /// The connection counts as open (as on tokio, before its upgrade),
    /// and the upgrade's answer has the response timeout. Over `wss://`
    /// the ClientHello went instead: the handshake begins.
    fn on_connected(&mut self, io: &Io, result: i32) -> Step {
        self.connect_queued = false;
        if self.core.base.phase != Phase::Connecting {
            return Step::Pending;
        }
        if result < 0 {
            let error = io::Error::from_raw_os_error(-result);
            let error = socket::with_path(&io.ctx.connector.endpoint, error);
            return self.fail_to_connect(io, &error);
        }
        if self.core.tls.is_some() {
            // The ClientHello, linked behind, is on its way.
            self.core.tls_started(io.ctx, Instant::now());
        } else {
            self.core.connect_done(io.ctx, Instant::now());
        }
        if let Err(error) = self.arm_receive(io) {
            return self.fail_ws(io, io_failure("reading", &error));
        }
        Step::Pending
    }

    fn arm_receive(&mut self, io: &Io) -> io::Result<()> {
        let receive = opcode::RecvMulti::new(types::Fd(self.core.base.raw_fd()), BUFFER_GROUP)
            .build()
            .user_data(self.user_data(Op::Receive));
        // SAFETY: the buffers belong to the ring, which outlives the request.
        unsafe { io.ring.push(&receive)? };
        self.receive_armed = true;
        Ok(())
    }

    /// Moves what goes next into `sending` (never while a send of it is
    /// queued): a plain connection's outbox, copied, its frame bytes booked
    /// as written; over TLS, the session's ciphertext, the outbox handed to
    /// it first once the handshake is over (the upgrade waits till then).
    fn take_outbox(&mut self, io: &Io) -> Result<(), WsFailure> {
        let core = &mut self.core;
        let Some(tls) = core.tls.as_mut() else {
            self.sending.clear();
            if let Some(session) = core.conn.session.as_ref() {
                self.sending.extend_from_slice(session.outbox());
            }
            core.conn.written(io.ctx);
            return Ok(());
        };
        let outbox = core
            .conn
            .session
            .as_ref()
            .map_or(&[][..], WsSession::outbox);
        if !tls.is_handshaking() && !outbox.is_empty() {
            tls.write_plain(outbox)
                .map_err(|e| tls_failure(explain_io(&e)))?;
            core.conn.written(io.ctx);
        }
        tls.take_unsent(&mut self.sending);
        Ok(())
    }

    /// A send of `sending`.
    fn send_entry(&self) -> squeue::Entry {
        opcode::Send::new(
            types::Fd(self.core.base.raw_fd()),
            self.sending.as_ptr(),
            self.sending.len() as u32,
        )
        .flags(libc::MSG_NOSIGNAL | libc::MSG_WAITALL)
        .build()
        .user_data(self.user_data(Op::Send))
    }

    /// Queues a send of `sending`.
    fn queue_send(&mut self, io: &Io) -> Result<(), WsFailure> {
        let send = self.send_entry();
        // SAFETY: `sending` is left alone until the send completes, and kept
        // in `retired` if the connection closes first.
        unsafe { io.ring.push(&send) }.map_err(|e| io_failure("writing", &e))?;
        self.send_queued = true;
        Ok(())
    }

    /// A send completed: the rest of a short one goes, then what the
    /// session queued meanwhile.
    fn on_sent(&mut self, io: &Io, result: i32) -> Step {
        self.send_queued = false;
        if result < 0 {
            let error = io::Error::from_raw_os_error(-result);
            let failure = self.core.conn.io_failed(io.ctx, "writing", &error);
            return self.fail_ws(io, failure);
        }
        let sent = (result as usize).min(self.sending.len());
        if sent < self.sending.len() {
            self.sending.drain(..sent);
            return match self.queue_send(io) {
                Ok(()) => Step::Pending,
                Err(failure) => self.fail_ws(io, failure),
            };
        }
        self.sending.clear();
        if let Err(failure) = self.write_out(io) {
            return self.fail_ws(io, failure);
        }
        if !self.send_queued && self.core.base.phase == Phase::Writing {
            self.core.base.phase = Phase::Reading;
        }
        Step::Pending
    }

    fn on_received(&mut self, io: &Io, completion: &Completion) -> Step {
        if !completion.more() {
            self.receive_armed = false;
        }
        let result = completion.result;
        if result == -libc::ENOBUFS {
            // Every buffer was in use: the kernel ended the multishot
            // receive; arm it again (buffers come back before the next wait).
            return match self.arm_receive(io) {
                Ok(()) => Step::Pending,
                Err(error) => self.fail_ws(io, io_failure("reading", &error)),
            };
        }
        let handshaking = self.core.base.phase == Phase::Handshaking;
        if result < 0 {
            let error = io::Error::from_raw_os_error(-result);
            if handshaking {
                return self.fail_ws(io, tls_failure(explain_io(&error)));
            }
            let failure = self.core.conn.io_failed(io.ctx, "reading", &error);
            return self.fail_ws(io, failure);
        }
        if result == 0 {
            if handshaking {
                let reason = "the server closed the connection in the handshake";
                return self.fail_ws(io, tls_failure(reason.into()));
            }
            let failure = self.core.conn.end_of_stream(io.ctx);
            return self.fail_ws(io, failure);
        }
        let Some(id) = completion.buffer() else {
            return Step::Pending;
        };
        // SAFETY: the buffer came with this completion; the worker gives it
        // back only after this handler.
        let bytes = unsafe { io.ring.received(id, result as usize) };
        let step = match self.core.tls.is_some() {
            true => self.on_ciphertext(io, bytes),
            false => self.on_plaintext(io, bytes),
        };
        if self.core.base.fd.is_some() && !self.receive_armed {
            // The kernel ended the multishot receive with data (it may on
            // an overflowing completion queue): keep receiving.
            if let Err(error) = self.arm_receive(io) {
                return self.fail_ws(io, io_failure("reading", &error));
            }
        }
        step
    }

    /// Bytes read on a plain connection, handed to the session.
    fn on_plaintext(&mut self, io: &Io, bytes: &[u8]) -> Step {
        let core = &mut self.core;
        if let Err(failure) = core.conn.received(io.ctx, bytes, core.sent, Instant::now()) {
            return self.fail_ws(io, failure);
        }
        self.progress(io).unwrap_or(Step::Pending)
    }

    /// Ciphertext read on a TLS connection, decrypted before its buffer
    /// goes back to the ring: the handshake's part (its answer queued, or
    /// once it is over the connection open and the upgrade queued), or
    /// records for the session. A close_notify ends the stream.
    fn on_ciphertext(&mut self, io: &Io, ciphertext: &[u8]) -> Step {
        let core = &mut self.core;
        let Some(tls) = core.tls.as_mut() else {
            return Step::Pending;
        };
        core.plain.clear();
        let plain = &mut core.plain;
        let received = tls.receive(ciphertext, |chunk| plain.extend_from_slice(chunk));
        let handshaking = core.base.phase == Phase::Handshaking;
        let closed = match received {
            Ok(received) => received == Received::Closed,
            Err(error) => return self.fail_ws(io, tls_failure(explain(&error))),
        };
        if handshaking {
            if closed {
                let reason = "the server closed the session in the handshake";
                return self.fail_ws(io, tls_failure(reason.into()));
            }
            if !self.core.is_handshaking() {
                self.core.handshake_done(io.ctx, Instant::now());
            }
            // The handshake's next flight, or the upgrade behind the
            // client's last handshake message.
            return self.send_outbox(io);
        }
        let core = &mut self.core;
        if let Err(failure) = core
            .conn
            .received(io.ctx, &core.plain, core.sent, Instant::now())
        {
            return self.fail_ws(io, failure);
        }
        if closed {
            // close_notify: nothing more comes, as at the stream's end.
            let failure = self.core.conn.end_of_stream(io.ctx);
            return self.fail_ws(io, failure);
        }
        self.progress(io).unwrap_or(Step::Pending)
    }
}
