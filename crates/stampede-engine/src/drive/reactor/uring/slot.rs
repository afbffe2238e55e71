//! One connection slot of the io_uring reactor: a small state machine driven
//! by completions. A new connection is connected by the ring; once open it
//! has one multishot receive armed for its whole life, and each request is
//! one queued send. The books are kept in a [`Ledger`] (shared with the
//! epoll reactor), so both count and classify alike. Over https a
//! [`TlsSession`] sits between the ring and the books: the ClientHello goes
//! linked behind the connect, each received buffer is decrypted before it
//! goes back to the ring, and the ciphertext of a send stays in the slot
//! until the send completes (after a close too: see `retired`).

use super::ring::{Completion, Ring, BUFFER_GROUP};
use crate::drive::reactor::rx_stamp::{self, KernelStamp, RxStamps};
use crate::drive::reactor::tls::{decrypt_response, Received, TlsSession};
use crate::drive::reactor::{socket, Phase, ReactorSlot, SlotBase, Step, WorkerIo};
use crate::http1::ResponseProgress;
use crate::net::outcome_class::classify_io;
use crate::net::transport::Endpoint;
use crate::worker::context::ConnectionContext;
use io_uring::{opcode, squeue, types};
use socket2::SockAddr;
use stampede_metrics::ErrorKind;
use std::io;
use std::os::fd::AsRawFd;
use std::rc::Rc;
use std::time::Instant;

/// Everything a slot needs from its worker besides its own state.
pub(super) struct Io<'a> {
    pub ctx: &'a ConnectionContext,
    pub ring: &'a Ring,
    /// Where connections go; it outlives every queued connect.
    pub target: &'a SockAddr,
    /// The longest request of the run (decides TCP_NODELAY).
    pub longest_request: usize,
}

/// The request a completion answers (the low bits of its user data).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
    Connect = 1,
    Send = 2,
    Receive = 3,
    Cancel = 4,
}

/// Generations are kept to 24 bits of the user data.
pub(super) const GENERATION_MASK: u32 = 0x00FF_FFFF;

/// The user data of request `op` of slot `index`'s connection `generation`
/// (what a completion is matched by; [`Slot::index_of`] reads it back).
pub(super) fn user_data(generation: u32, op: Op, index: u32) -> u64 {
    (u64::from(generation & GENERATION_MASK) << 40) | ((op as u64) << 32) | u64::from(index)
}
/// Requests up to this size are sent "quietly": MSG_WAITALL makes the send
/// all or nothing and IOSQE_CQE_SKIP_SUCCESS drops its completion, so a
/// request costs no completion and no extra wait (only a failure completes).
/// The response cannot come before such a request is out; a larger request
/// waits for its send to complete before its response is read, in case the
/// server answers early (a 413 before the whole body).
const QUIET_SEND_MAX: usize = 16 * 1024;

#[derive(Debug)]
pub(super) struct Slot {
    base: SlotBase,
    /// A connect, send or multishot receive of the connection is in the
    /// kernel's hands; closing the connection cancels it.
    connect_queued: bool,
    send_queued: bool,
    receive_armed: bool,
    /// The request in flight went out quietly (see [`QUIET_SEND_MAX`]).
    quiet_send: bool,
    /// The connection's TLS session (https only).
    tls: Option<Box<TlsSession>>,
    /// The ciphertext of the queued send: the kernel reads it until the
    /// send completes, so it is not touched before.
    tls_sending: Vec<u8>,
    /// The ciphertext of sends still queued when their connection closed,
    /// by generation: freed when their (canceled) send completes. TLS sends
    /// always complete (never quiet), so nothing stays here for long.
    retired: Vec<(u32, Vec<u8>)>,
    /// When the TCP connect of a TLS connection ended (its handshake began).
    tcp_done: Instant,
    /// With `--dns`: the address of this slot's latest connect (each
    /// connection may go elsewhere), boxed so that it stays put.
    connect_to: Option<Box<SockAddr>>,
    /// The ring's part of the slot's parked connection (redirects to
    /// another origin: [`ReactorSlot::switch_to`]).
    parked: Box<Parked>,
    /// `--batch-reads`: a multishot recvmsg brings each buffer's kernel
    /// receive time, which stamps the answer (rx_stamp.rs); `None`: a
    /// multishot recv, stamped when handled.
    rx: Option<Rc<RxStamps>>,
}

/// What the ring holds of a parked connection, swapped with the slot's.
#[derive(Debug, Default)]
struct Parked {
    connect_queued: bool,
    send_queued: bool,
    receive_armed: bool,
    quiet_send: bool,
    tls: Option<Box<TlsSession>>,
    tls_sending: Vec<u8>,
}

impl WorkerIo for Io<'_> {
    fn ctx(&self) -> &ConnectionContext {
        self.ctx
    }

    /// Queued sends go to the kernel now, not after the worker's sleep.
    fn submit(&self) {
        // A failure shows again at the wait's own submit, which reports it.
        let _ = self.ring.submit();
    }
}

impl ReactorSlot<Io<'_>> for Slot {
    fn base(&self) -> &SlotBase {
        &self.base
    }

    fn base_mut(&mut self) -> &mut SlotBase {
        &mut self.base
    }

    /// Opens a socket and queues its connect, with the request linked behind.
    fn open(&mut self, io: &Io, now: Instant) -> Step {
        // A hop to another origin connects there (redirect.rs).
        let foreign = io.ctx.connector_to(self.base.origin);
        let picked = match foreign.as_deref().map(|c| &c.endpoint) {
            Some(Endpoint::Tcp(addr)) => Some(*addr),
            _ => io.ctx.connector.picker.as_ref().map(|p| p.next()),
        };
        let fd = match self.base.new_socket(io.ctx, now, |ctx| {
            let connector = &ctx.connector;
            let endpoint = picked.map(Endpoint::Tcp);
            socket::unconnected(
                endpoint.as_ref().unwrap_or(&connector.endpoint),
                &connector.source_addrs,
                io.longest_request,
            )
        }) {
            Ok(fd) => fd,
            Err(error) => return self.fail_connect(io, &error),
        };
        if self.rx.is_some() {
            rx_stamp::enable(fd.as_raw_fd());
        }
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
        self.base.fd = Some(fd);
        self.base.phase = Phase::Connecting;
        let tls = foreign.as_deref().unwrap_or(&io.ctx.connector).tls.as_ref();
        if let Some(client) = tls {
            match TlsSession::new(client) {
                Ok(session) => self.tls = Some(Box::new(session)),
                Err(error) => return self.fail_tls_error(io, &error),
            }
        }
        let send = match self.tls.as_mut() {
            Some(tls) => {
                // The ClientHello, linked behind the connect.
                tls.take_unsent(&mut self.tls_sending);
                self.tls_send_entry()
            }
            None => self.send_entry(io),
        };
        // SAFETY: the address lives in the worker (or, with --dns or for a
        // redirect to another origin, in this slot's box, which lives as
        // long as the slot and is rewritten only for a later connect: the
        // kernel copies the address when it takes the connect in) and the
        // request bytes in its context for the whole run (a hop's in the
        // slot's books, untouched until its response is in); a ClientHello
        // stays in `tls_sending` (or `retired`) until its send completes.
        if let Err(error) = unsafe { io.ring.push_linked(connect, &send) } {
            return self.fail_connect(io, &error);
        }
        self.connect_queued = true;
        self.send_queued = true;
        Step::Pending
    }

    fn send(&mut self, io: &Io) -> Step {
        if !self.receive_armed {
            // A parked connection back in use whose receive ended.
            if let Err(error) = self.arm_receive(io) {
                return self.fail_exchange(io, classify_io(&error));
            }
        }
        if self.tls.is_some() {
            self.base.phase = Phase::Writing;
            return self.write_tls_request(io);
        }
        let send = self.send_entry(io);
        // SAFETY: the request bytes live in the worker's context for the run.
        if let Err(error) = unsafe { io.ring.push(&send) } {
            return self.fail_exchange(io, classify_io(&error));
        }
        self.send_queued = true;
        self.after_queueing_send(io)
    }

    /// What the kernel still holds of the connection is canceled by user
    /// data (never by fd: the number may be reused at once); the socket is
    /// released when the last of those requests ends.
    fn release(&mut self, io: &Io) {
        if self.tls.take().is_some() && self.send_queued {
            let generation = self.base.generation & GENERATION_MASK;
            self.retired
                .push((generation, std::mem::take(&mut self.tls_sending)));
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

    fn swap_transport(&mut self) {
        let parked = &mut *self.parked;
        std::mem::swap(&mut self.connect_queued, &mut parked.connect_queued);
        std::mem::swap(&mut self.send_queued, &mut parked.send_queued);
        std::mem::swap(&mut self.receive_armed, &mut parked.receive_armed);
        std::mem::swap(&mut self.quiet_send, &mut parked.quiet_send);
        std::mem::swap(&mut self.tls, &mut parked.tls);
        std::mem::swap(&mut self.tls_sending, &mut parked.tls_sending);
    }
}

impl Drop for Slot {
    /// At the end of a run a TLS send may still be queued on the ring, which
    /// is torn down after the slots (and asynchronously): its ciphertext (a
    /// few hundred bytes) is left to the process's exit rather than freed
    /// under the kernel.
    fn drop(&mut self) {
        if self.send_queued && self.tls.is_some() {
            std::mem::forget(std::mem::take(&mut self.tls_sending));
        }
        if self.parked.send_queued && self.parked.tls.is_some() {
            std::mem::forget(std::mem::take(&mut self.parked.tls_sending));
        }
        for (_, bytes) in self.retired.drain(..) {
            std::mem::forget(bytes);
        }
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
            connect_queued: false,
            send_queued: false,
            receive_armed: false,
            quiet_send: false,
            tls: None,
            tls_sending: Vec::new(),
            retired: Vec::new(),
            tcp_done: now,
            connect_to: None,
            parked: Box::default(),
            rx,
        }
    }

    /// A completion of an older connection: if it is the parked one's, that
    /// one is stale (reactor/slot.rs), and what ended is no longer queued.
    fn on_parked_completion(&mut self, generation: u32, op: u64, completion: &Completion) {
        let parked = self
            .base
            .side
            .as_ref()
            .is_some_and(|s| s.fd.is_some() && s.generation & GENERATION_MASK == generation);
        if !parked {
            return;
        }
        self.base.note_parked_event(generation, GENERATION_MASK);
        if op == Op::Send as u64 {
            self.parked.send_queued = false;
        } else if op == Op::Receive as u64 && !completion.more() {
            self.parked.receive_armed = false;
        } else if op == Op::Connect as u64 {
            self.parked.connect_queued = false;
        }
    }

    fn user_data(&self, op: Op) -> u64 {
        user_data(self.base.generation, op, self.base.index)
    }

    /// The slot index a completion belongs to.
    pub(super) fn index_of(completion: &Completion) -> usize {
        (completion.user_data & 0xFFFF_FFFF) as usize
    }

    /// Handles a completion of one of this slot's requests.
    pub(super) fn on_completion(&mut self, io: &Io, completion: &Completion) -> Step {
        let generation = (completion.user_data >> 40) as u32;
        let op = (completion.user_data >> 32) & 0xFF;
        let current = generation == self.base.generation & GENERATION_MASK;
        if op == Op::Send as u64 && !current && !self.retired.is_empty() {
            // A send of a closed TLS connection is over: its bytes may go.
            self.retired.retain(|(retired, _)| *retired != generation);
        }
        if !current {
            self.on_parked_completion(generation, op, completion);
        }
        if !current || self.base.fd.is_none() {
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

    fn on_connected(&mut self, io: &Io, result: i32) -> Step {
        self.connect_queued = false;
        if self.base.phase != Phase::Connecting {
            return Step::Pending;
        }
        if result < 0 {
            let error = io::Error::from_raw_os_error(-result);
            let error = socket::with_path(&io.ctx.connector.endpoint, error);
            return self.fail_connect(io, &error);
        }
        if self.tls.is_some() {
            // The ClientHello, linked behind the connect, is on its way; the
            // handshake has a connect timeout of its own (as on tokio).
            let now = Instant::now();
            self.tcp_done = now;
            self.base.ledger.handshaking(io.ctx, now);
            self.base.phase = Phase::Handshaking;
            if let Err(error) = self.arm_receive(io) {
                return self.fail_tls_io(io, &error);
            }
            return Step::Pending;
        }
        // The request, linked behind the connect, is on its way already.
        self.base.ledger.connected(io.ctx, Instant::now());
        if let Err(error) = self.arm_receive(io) {
            return self.fail(io, classify_io(&error));
        }
        self.after_queueing_send(io)
    }

    /// A send of what is left of the request. Small requests go quietly (no
    /// completion unless the send fails), larger ones complete with the
    /// count written.
    fn send_entry(&mut self, io: &Io) -> squeue::Entry {
        let rest = self.base.ledger.unwritten(io.ctx);
        self.quiet_send = rest.len() <= QUIET_SEND_MAX;
        let entry = opcode::Send::new(
            types::Fd(self.base.raw_fd()),
            rest.as_ptr(),
            rest.len() as u32,
        )
        .flags(libc::MSG_NOSIGNAL | libc::MSG_WAITALL)
        .build()
        .user_data(self.user_data(Op::Send));
        if self.quiet_send {
            entry.flags(squeue::Flags::SKIP_SUCCESS)
        } else {
            entry
        }
    }

    /// A queued quiet send counts as written: the response is awaited at
    /// once. Otherwise the send's completion moves the slot on.
    fn after_queueing_send(&mut self, io: &Io) -> Step {
        if self.quiet_send {
            self.base.ledger.written = self.base.ledger.request(io.ctx).len();
            self.base.phase = Phase::Reading;
        } else {
            self.base.phase = Phase::Writing;
        }
        Step::Pending
    }

    fn arm_receive(&mut self, io: &Io) -> io::Result<()> {
        let fd = types::Fd(self.base.raw_fd());
        let receive = match &self.rx {
            None => opcode::RecvMulti::new(fd, BUFFER_GROUP).build(),
            Some(rx) => opcode::RecvMsgMulti::new(fd, rx.multishot_header(), BUFFER_GROUP).build(),
        };
        let receive = receive.user_data(self.user_data(Op::Receive));
        // SAFETY: the buffers belong to the ring, which outlives the request;
        // the msghdr to the worker's RxStamps, which outlives the ring's use.
        unsafe { io.ring.push(&receive)? };
        self.receive_armed = true;
        Ok(())
    }

    /// A send completed: every send that failed, and the larger ones that
    /// succeeded (quiet ones complete only on failure).
    fn on_sent(&mut self, io: &Io, result: i32) -> Step {
        if self.tls.is_some() {
            return self.on_tls_sent(io, result);
        }
        self.send_queued = false;
        if result < 0 {
            let error = io::Error::from_raw_os_error(-result);
            return match self.base.phase {
                Phase::Writing => self.answered_early_or(io, classify_io(&error), false),
                Phase::Reading => self.fail_exchange(io, classify_io(&error)),
                _ => Step::Pending,
            };
        }
        if self.base.phase != Phase::Writing {
            return Step::Pending;
        }
        self.base.ledger.written += result as usize;
        if !self.base.ledger.unwritten(io.ctx).is_empty() {
            return self.send(io);
        }
        self.base.phase = Phase::Reading;
        // A response may have come while the request was going out (a 413
        // before the whole body): it was kept, and is parsed now.
        let now = Instant::now();
        match self.base.ledger.parse_early(now) {
            Ok(ResponseProgress::Complete(done)) => self.answered(io, now, done),
            Ok(ResponseProgress::Partial) => Step::Pending,
            Err(kind) => self.fail(io, kind),
        }
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
                Err(error) => self.on_receive_error(io, &error),
            };
        }
        if result < 0 {
            return self.on_receive_error(io, &io::Error::from_raw_os_error(-result));
        }
        if result == 0 {
            return self.on_end_of_stream(io);
        }
        let Some(id) = completion.buffer() else {
            return Step::Pending;
        };
        // SAFETY: the buffer came with this completion; the worker gives it
        // back only after this handler.
        let mut bytes = unsafe { io.ring.received(id, result as usize) };
        let mut stamp = None;
        if let Some(rx) = &self.rx {
            // A recvmsg's buffer: its header, the stamp, then the data; no
            // data is the end of the stream.
            match rx.split_multishot(bytes) {
                Some((data, kernel)) if !data.is_empty() => (bytes, stamp) = (data, kernel),
                Some(_) => return self.on_end_of_stream(io),
                None => return Step::Pending,
            }
        }
        let step = match self.base.phase {
            _ if self.tls.is_some() => self.on_tls_received(io, bytes, stamp),
            Phase::Reading => {
                if self.quiet_send {
                    // The server answers only once the request is in: the
                    // quiet send is over, there is nothing to cancel at a close.
                    self.send_queued = false;
                }
                let now = self.arrived(stamp);
                match self.base.ledger.received(bytes, now) {
                    Ok(ResponseProgress::Complete(done)) => self.answered(io, now, done),
                    Ok(ResponseProgress::Partial) => Step::Pending,
                    Err(kind) => self.fail(io, kind),
                }
            }
            // While writing, the response waits for the request to be out;
            // with no request in flight, the bytes are unsolicited and retire
            // the connection at the next request.
            Phase::Writing | Phase::Idle => {
                self.base.ledger.keep_early(bytes);
                Step::Pending
            }
            Phase::Connecting | Phase::Handshaking => Step::Pending,
        };
        if self.base.fd.is_some() && !self.receive_armed && !self.base.phase.is_opening() {
            // The kernel ended the multishot receive with data (it may on
            // an overflowing completion queue): keep receiving.
            if let Err(error) = self.arm_receive(io) {
                return self.on_receive_error(io, &error);
            }
        }
        step
    }

    /// A send of what the TLS session had to say, from `tls_sending`.
    fn tls_send_entry(&mut self) -> squeue::Entry {
        self.quiet_send = false;
        opcode::Send::new(
            types::Fd(self.base.raw_fd()),
            self.tls_sending.as_ptr(),
            self.tls_sending.len() as u32,
        )
        .flags(libc::MSG_NOSIGNAL | libc::MSG_WAITALL)
        .build()
        .user_data(self.user_data(Op::Send))
    }

    /// Queues a send of `tls_sending`.
    fn queue_tls_send(&mut self, io: &Io) -> io::Result<()> {
        let send = self.tls_send_entry();
        // SAFETY: `tls_sending` is left alone until the send completes, and
        // kept in `retired` if the connection closes first.
        unsafe { io.ring.push(&send)? };
        self.send_queued = true;
        Ok(())
    }

    /// Sends what the session has to say, unless a send is under way (its
    /// completion sends the rest). True when nothing is left to send.
    fn flush_tls(&mut self, io: &Io) -> io::Result<bool> {
        if self.send_queued {
            return Ok(false);
        }
        let Some(tls) = self.tls.as_mut() else {
            return Ok(true);
        };
        if tls.unsent().is_empty() {
            return Ok(true);
        }
        tls.take_unsent(&mut self.tls_sending);
        self.queue_tls_send(io)?;
        Ok(false)
    }

    /// Queues the request in the session and sends its ciphertext.
    fn write_tls_request(&mut self, io: &Io) -> Step {
        let rest = self.base.ledger.unwritten(io.ctx);
        if let Some(tls) = self.tls.as_mut() {
            if let Err(error) = tls.write_plain(rest) {
                return self.fail_tls_io(io, &error);
            }
        }
        self.base.ledger.written += rest.len();
        match self.flush_tls(io) {
            Ok(_) => Step::Pending,
            Err(error) => self.fail_exchange(io, classify_io(&error)),
        }
    }

    /// A TLS send completed (they all do: none is quiet).
    fn on_tls_sent(&mut self, io: &Io, result: i32) -> Step {
        self.send_queued = false;
        if result < 0 {
            let error = io::Error::from_raw_os_error(-result);
            return match self.base.phase {
                // The connect failed and took its linked ClientHello along.
                Phase::Connecting | Phase::Idle => Step::Pending,
                Phase::Handshaking => self.fail_tls_io(io, &error),
                Phase::Writing | Phase::Reading => self.fail_exchange(io, classify_io(&error)),
            };
        }
        let sent = (result as usize).min(self.tls_sending.len());
        if sent < self.tls_sending.len() {
            self.tls_sending.drain(..sent);
            return match self.queue_tls_send(io) {
                Ok(()) => Step::Pending,
                Err(error) => self.fail_exchange(io, classify_io(&error)),
            };
        }
        match self.flush_tls(io) {
            Ok(true) if self.base.phase == Phase::Writing => {}
            Ok(_) => return Step::Pending,
            Err(error) => return self.fail_exchange(io, classify_io(&error)),
        }
        self.base.phase = Phase::Reading;
        // A response that came while the request was going out was kept.
        let now = Instant::now();
        match self.base.ledger.parse_early(now) {
            Ok(ResponseProgress::Complete(done)) => self.answered(io, now, done),
            Ok(ResponseProgress::Partial) => Step::Pending,
            Err(kind) => self.fail(io, kind),
        }
    }

    /// When the bytes of a completion handled now arrived: with
    /// `--batch-reads` their kernel `stamp` (rx_stamp.rs), else now.
    fn arrived(&self, stamp: Option<KernelStamp>) -> Instant {
        let now = Instant::now();
        match &self.rx {
            None => now,
            Some(rx) => rx.arrived(stamp, self.base.ledger.sent_at(), now),
        }
    }

    /// Ciphertext received on a TLS connection (its kernel `stamp`, with
    /// `--batch-reads`), decrypted before its buffer goes back to the ring.
    fn on_tls_received(&mut self, io: &Io, ciphertext: &[u8], stamp: Option<KernelStamp>) -> Step {
        let now = self.arrived(stamp);
        let phase = self.base.phase;
        let Some(tls) = self.tls.as_mut() else {
            return Step::Pending;
        };
        let ledger = &mut self.base.ledger;
        if phase == Phase::Reading {
            return match decrypt_response(tls, ledger, ciphertext, now) {
                Ok((Ok(ResponseProgress::Partial), Received::Open)) => Step::Pending,
                Ok((Ok(ResponseProgress::Partial), Received::Closed)) => self.on_end_of_stream(io),
                Ok((progress, received)) => {
                    let step = match progress {
                        Ok(ResponseProgress::Complete(done)) => self.answered(io, now, done),
                        Ok(ResponseProgress::Partial) => Step::Pending,
                        Err(kind) => self.fail(io, kind),
                    };
                    let batch_on = step == Step::Pending && self.base.phase == Phase::Reading;
                    if received == Received::Closed && batch_on {
                        // The rest of a pipelined batch will not come.
                        return self.on_end_of_stream(io);
                    }
                    if received == Received::Closed && self.has_connection() {
                        // The rest of the stream is gone: the connection ends here.
                        self.drop_connection(io, true);
                    }
                    step
                }
                Err(error) => self.fail_tls_error(io, &error),
            };
        }
        // Nothing is awaited: plaintext now is early or unsolicited.
        let received = tls.receive(ciphertext, |plain| ledger.keep_early(plain));
        match (phase, received) {
            (Phase::Handshaking, Ok(Received::Open)) => self.after_handshake_input(io),
            (Phase::Handshaking, Ok(Received::Closed)) => {
                self.fail_tls(io, &"the server closed the session in the handshake")
            }
            (Phase::Handshaking, Err(error)) => self.fail_tls_error(io, &error),
            (_, Ok(Received::Open)) => Step::Pending,
            (_, Ok(Received::Closed)) => self.on_end_of_stream(io),
            (Phase::Idle, Err(_)) => {
                // A broken session nothing was asked on.
                self.drop_connection(io, true);
                Step::Pending
            }
            (_, Err(error)) => self.fail_tls_error(io, &error),
        }
    }

    /// The handshake took the server's part: it answers, or it is over and
    /// the connection counts as open and sends the request.
    fn after_handshake_input(&mut self, io: &Io) -> Step {
        if self.tls.as_ref().is_some_and(|tls| tls.is_handshaking()) {
            return match self.flush_tls(io) {
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
        self.write_tls_request(io)
    }

    fn on_receive_error(&mut self, io: &Io, error: &io::Error) -> Step {
        match self.base.phase {
            Phase::Handshaking => self.fail_tls(io, error),
            Phase::Idle => {
                // The server reset a connection nothing was asked on.
                self.drop_connection(io, true);
                Step::Pending
            }
            Phase::Writing => self.answered_early_or(io, classify_io(error), false),
            _ => self.fail_exchange(io, classify_io(error)),
        }
    }

    fn on_end_of_stream(&mut self, io: &Io) -> Step {
        match self.base.phase {
            Phase::Handshaking => {
                self.fail_tls(io, &"the server closed the connection in the handshake")
            }
            Phase::Reading => match self.base.ledger.end_of_stream() {
                Ok(done) => self.answered(io, Instant::now(), done),
                Err(kind) => self.fail_exchange(io, kind),
            },
            // The server closed a connection between requests: the next
            // request opens a new one, which counts as a reconnect.
            Phase::Idle => {
                self.drop_connection(io, true);
                Step::Pending
            }
            // The server answered and closed before the whole request was
            // out (a 413 to a large body): the kept response counts.
            Phase::Writing => self.answered_early_or(io, ErrorKind::ClosedEarly, true),
            _ => self.fail_exchange(io, ErrorKind::ClosedEarly),
        }
    }
}
