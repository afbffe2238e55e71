//! WebSocket (`ws://`) on the io_uring reactor: one connection slot per
//! user, driven by completions like the HTTP/1.1 slot (slot.rs), its
//! session and booking ws_conn.rs's (the tokio and epoll drivers' too),
//! so no rule of the protocol is written here; its states are those of
//! epoll/ws.rs. The connect is queued with the upgrade linked behind it;
//! once open the connection has one multishot receive armed, and each
//! write of the session's outbox (a message, a pong, a close) is one send
//! from a copy the kernel reads until the send completes (after a close
//! too: see `retired`). A slot the schedule or the budget parks, or the
//! run's end cuts off, sends a close (1000) and the worker waits for the
//! server's, a moment at most, as the other drivers do. `wss://` stays on
//! epoll and tokio.

use super::ring::{Completion, Ring, BUFFER_GROUP};
use super::slot::Io;
use crate::drive::reactor::{drive, slot_count, socket, Phase, ReactorSlot, SlotBase, Step};
use crate::drive::ws_conn::{answer_timeout, Sent, WsConn};
use crate::drive::ws_slot::CLOSE_WAIT;
use crate::exchange::ws_session::{WsFailure, WsSession};
use crate::net::outcome_class::{classify_connect, classify_io};
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

/// One WebSocket connection slot of the io_uring reactor.
pub(super) struct WsSlot {
    /// The fd, its generation, the phase and the deadline (`ledger.deadline`;
    /// the rest of the ledger is HTTP's and unused).
    base: SlotBase,
    /// The session and its booking.
    conn: WsConn,
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
    /// The TCP connect is over: the connection counts as open.
    established: bool,
    /// When the current connection's connect began.
    connect_started: Instant,
    /// The message waiting for its connection's upgrade (its intended instant).
    waiting: Option<Instant>,
    /// A message is out and its reply awaited.
    awaiting: bool,
    /// When the message in flight went out.
    sent: Instant,
    /// The client's close is out; the server's is awaited until the deadline.
    closing: bool,
    /// After a failed connect or upgrade: the slot starts again no earlier.
    retry_at: Option<Instant>,
}

impl ReactorSlot<Io<'_>> for WsSlot {
    fn base(&self) -> &SlotBase {
        &self.base
    }

    fn base_mut(&mut self) -> &mut SlotBase {
        &mut self.base
    }

    /// Opens a socket and queues its connect, the upgrade (waiting in the
    /// new session's outbox) linked behind.
    fn open(&mut self, io: &Io, now: Instant) -> Step {
        let picked = io.ctx.connector.picker.as_ref().map(|p| p.next());
        let made = self.base.new_socket(io.ctx, now, |ctx| {
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
        self.base.fd = Some(fd);
        self.base.phase = Phase::Connecting;
        self.connect_started = now;
        self.conn.connected(io.ctx, now);
        self.take_outbox(io);
        let send = self.send_entry();
        // SAFETY: the address lives in the worker (or, with --dns, in this
        // slot's box, rewritten only for a later connect: the kernel copies
        // it when it takes the connect in); the upgrade stays in `sending`
        // (or `retired`) until its send completes.
        if let Err(error) = unsafe { io.ring.push_linked(connect, &send) } {
            return self.fail_to_connect(io, &error);
        }
        self.connect_queued = true;
        self.send_queued = true;
        Step::Pending
    }

    /// Writes the rest of the outbox.
    fn send(&mut self, io: &Io) -> Step {
        match self.flush(io) {
            Ok(()) => Step::Pending,
            Err(failure) => self.fail(io, failure),
        }
    }

    /// What the kernel still holds of the connection is canceled by user
    /// data (never by fd: the number may be reused at once); a queued
    /// send's bytes wait in `retired` for its completion.
    fn release(&mut self, io: &Io) {
        if self.send_queued {
            let generation = self.base.generation & GENERATION_MASK;
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

    fn swap_transport(&mut self) {}

    /// A WebSocket run follows no redirect: the HTTP ledger's books of a
    /// connection are not used, so closing is counted here.
    fn drop_connection(&mut self, io: &Io, _by_server: bool) {
        if self.base.fd.is_some() {
            self.release(io);
            self.base.fd = None;
            self.base.bump_generation();
            if std::mem::take(&mut self.established) {
                io.ctx.state.connection_closed();
            }
        }
        self.conn.gone();
        self.closing = false;
        self.awaiting = false;
    }

    fn retry_at(&self) -> Option<Instant> {
        self.retry_at
    }

    fn is_overdue(&self, now: Instant) -> bool {
        (self.base.phase != Phase::Idle || self.closing) && now >= self.base.ledger.deadline
    }

    /// The deadline passed: a close not answered in time just ends; a
    /// connect, an upgrade or a reply that did not come fails (the
    /// classes and reasons of the other drivers).
    fn on_timeout(&mut self, io: &Io) -> Step {
        if self.base.phase == Phase::Idle {
            self.drop_connection(io, false);
            return Step::Pending;
        }
        let failure = if self.base.phase.is_opening() {
            let stage = self.base.phase.stage();
            WsFailure {
                kind: stage.timeout_kind(),
                reason: stage.timeout_reason().unwrap_or_default().into(),
            }
        } else {
            answer_timeout(self.waiting.is_some())
        };
        self.fail(io, failure)
    }

    /// Sends a message intended at `intended`, connecting and upgrading
    /// first when the slot has no open connection.
    fn start_at(&mut self, io: &Io, intended: Instant, now: Instant) -> Step {
        self.retry_at = None;
        if self.closing || !self.conn.is_open() {
            self.drop_connection(io, false);
            self.waiting = Some(intended);
            return self.open(io, now);
        }
        self.send_message(io, intended)
    }

    /// The slot has nothing to send: its connection closes with 1000.
    fn park(&mut self, io: &Io) {
        self.base.phase = Phase::Idle;
        self.begin_close(io);
    }

    /// The load is over: an open connection closes with 1000, and the
    /// slot lingers until the server's close (or the close's deadline).
    fn linger(&mut self, io: &Io) -> bool {
        if self.base.phase == Phase::Idle && !self.closing {
            self.begin_close(io);
        }
        self.closing
    }

    /// The run is over (its deadline, a stop): an open connection closes
    /// with 1000 whatever it was doing (a message in flight is left
    /// unfinished), and the slot lingers as above.
    fn end(&mut self, io: &Io) -> bool {
        self.waiting = None;
        self.awaiting = false;
        self.base.phase = Phase::Idle;
        self.begin_close(io);
        self.closing
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
            base: SlotBase::new(index, false, now),
            conn: WsConn::new(index as usize, seed),
            connect_queued: false,
            send_queued: false,
            receive_armed: false,
            sending: Vec::new(),
            retired: Vec::new(),
            connect_to: None,
            established: false,
            connect_started: now,
            waiting: None,
            awaiting: false,
            sent: now,
            closing: false,
            retry_at: None,
        }
    }

    fn user_data(&self, op: Op) -> u64 {
        (u64::from(self.base.generation & GENERATION_MASK) << 40)
            | ((op as u64) << 32)
            | u64::from(self.base.index)
    }

    /// Handles a completion of one of this slot's requests.
    fn on_completion(&mut self, io: &Io, completion: &Completion) -> Step {
        let generation = (completion.user_data >> 40) as u32;
        let op = (completion.user_data >> 32) & 0xFF;
        let current = generation == self.base.generation & GENERATION_MASK;
        if op == Op::Send as u64 && !current && !self.retired.is_empty() {
            // A send of a closed connection is over: its bytes may go.
            self.retired.retain(|(retired, _)| *retired != generation);
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

    /// The connect ended; the upgrade, linked behind it, is on its way.
    /// The connection counts as open (as on tokio, before its upgrade),
    /// and the upgrade's answer has the response timeout.
    fn on_connected(&mut self, io: &Io, result: i32) -> Step {
        self.connect_queued = false;
        if self.base.phase != Phase::Connecting {
            return Step::Pending;
        }
        if result < 0 {
            let error = io::Error::from_raw_os_error(-result);
            let error = socket::with_path(&io.ctx.connector.endpoint, error);
            return self.fail_to_connect(io, &error);
        }
        let now = Instant::now();
        self.established = true;
        let took = now.saturating_duration_since(self.connect_started);
        io.ctx.state.connection_opened(false, took);
        self.base.ledger.deadline = now + io.ctx.timeout;
        self.base.phase = Phase::Writing;
        if let Err(error) = self.arm_receive(io) {
            return self.fail(io, io_failure("reading", &error));
        }
        Step::Pending
    }

    fn arm_receive(&mut self, io: &Io) -> io::Result<()> {
        let receive = opcode::RecvMulti::new(types::Fd(self.base.raw_fd()), BUFFER_GROUP)
            .build()
            .user_data(self.user_data(Op::Receive));
        // SAFETY: the buffers belong to the ring, which outlives the request.
        unsafe { io.ring.push(&receive)? };
        self.receive_armed = true;
        Ok(())
    }

    /// Copies the session's outbox into `sending` and books its frame
    /// bytes as written.
    fn take_outbox(&mut self, io: &Io) {
        self.sending.clear();
        if let Some(session) = self.conn.session.as_ref() {
            self.sending.extend_from_slice(session.outbox());
        }
        self.conn.written(io.ctx);
    }

    /// A send of `sending`.
    fn send_entry(&self) -> squeue::Entry {
        opcode::Send::new(
            types::Fd(self.base.raw_fd()),
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

    /// Queues a send of what the session's outbox holds, unless a send is
    /// under way (its completion sends the rest).
    fn flush(&mut self, io: &Io) -> Result<(), WsFailure> {
        if self.send_queued || self.base.fd.is_none() {
            return Ok(());
        }
        let waiting = (self.conn.session.as_ref()).is_some_and(|s| !s.outbox().is_empty());
        if !waiting {
            return Ok(());
        }
        self.take_outbox(io);
        self.queue_send(io)
    }

    /// A send completed: the rest of a short one goes, then what the
    /// session queued meanwhile.
    fn on_sent(&mut self, io: &Io, result: i32) -> Step {
        self.send_queued = false;
        if result < 0 {
            let error = io::Error::from_raw_os_error(-result);
            return self.fail(io, io_failure("writing", &error));
        }
        let sent = (result as usize).min(self.sending.len());
        if sent < self.sending.len() {
            self.sending.drain(..sent);
            return match self.queue_send(io) {
                Ok(()) => Step::Pending,
                Err(failure) => self.fail(io, failure),
            };
        }
        self.sending.clear();
        if let Err(failure) = self.flush(io) {
            return self.fail(io, failure);
        }
        if !self.send_queued && self.base.phase == Phase::Writing {
            self.base.phase = Phase::Reading;
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
                Err(error) => self.fail(io, io_failure("reading", &error)),
            };
        }
        if result < 0 {
            let error = io::Error::from_raw_os_error(-result);
            return self.fail(io, io_failure("reading", &error));
        }
        if result == 0 {
            let failure = self.conn.end_of_stream(io.ctx);
            return self.fail(io, failure);
        }
        let Some(id) = completion.buffer() else {
            return Step::Pending;
        };
        // SAFETY: the buffer came with this completion; the worker gives it
        // back only after this handler.
        let bytes = unsafe { io.ring.received(id, result as usize) };
        let now = Instant::now();
        if let Err(failure) = self.conn.received(io.ctx, bytes, self.sent, now) {
            return self.fail(io, failure);
        }
        let step = self.progress(io).unwrap_or(Step::Pending);
        if self.base.fd.is_some() && !self.receive_armed {
            // The kernel ended the multishot receive with data (it may on
            // an overflowing completion queue): keep receiving.
            if let Err(error) = self.arm_receive(io) {
                return self.fail(io, io_failure("reading", &error));
            }
        }
        step
    }

    /// What a read that the session took without error moved on: the
    /// close answered, the upgrade accepted (the waiting message goes), a
    /// pong to write, the message answered.
    fn progress(&mut self, io: &Io) -> Option<Step> {
        if self.closing {
            if self.conn.session.as_ref().is_none_or(WsSession::is_closed) {
                self.drop_connection(io, false);
                return Some(Step::Pending);
            }
            return None;
        }
        if self.waiting.is_some() {
            if !self.conn.is_open() {
                return None;
            }
            self.conn.backoff.succeeded();
            let intended = self.waiting.take().expect("checked above");
            return Some(self.send_message(io, intended));
        }
        if let Err(failure) = self.flush(io) {
            return Some(self.fail(io, failure));
        }
        let answered = (self.conn.session.as_ref()).is_some_and(|s| s.unanswered() == 0);
        if self.awaiting && answered {
            self.awaiting = false;
            self.base.phase = Phase::Idle;
            return Some(Step::Answered);
        }
        None
    }

    /// Renders the next message (intended at `intended`) and queues it.
    fn send_message(&mut self, io: &Io, intended: Instant) -> Step {
        let now = Instant::now();
        self.sent = now;
        self.awaiting = true;
        match self.conn.send_next(io.ctx, intended) {
            Sent::Framed => {}
            // Booked failed (no id to match by): the slot goes on next turn.
            Sent::Failed => {
                (self.awaiting, self.base.phase) = (false, Phase::Idle);
                return Step::Failed;
            }
            // The user is done (its feeder ran out): the slot parks.
            Sent::Nothing => {
                self.awaiting = false;
                self.park(io);
                return Step::Pending;
            }
        }
        self.base.ledger.deadline = now + io.ctx.timeout;
        self.base.phase = Phase::Writing;
        match self.flush(io) {
            Ok(()) => Step::Pending,
            Err(failure) => self.fail(io, failure),
        }
    }

    /// Starts the closing handshake on an open connection, or lets go of
    /// any other; the slot is idle either way.
    fn begin_close(&mut self, io: &Io) {
        if self.closing {
            return;
        }
        let open = self.base.fd.is_some() && self.conn.is_open();
        if !open {
            self.drop_connection(io, false);
            return;
        }
        self.conn.close();
        self.closing = true;
        self.base.ledger.deadline = Instant::now() + CLOSE_WAIT.min(io.ctx.timeout);
        if self.flush(io).is_err() {
            self.drop_connection(io, false);
        }
    }

    fn fail_to_connect(&mut self, io: &Io, error: &io::Error) -> Step {
        let failure = WsFailure {
            kind: classify_connect(error),
            reason: error.to_string(),
        };
        self.fail(io, failure)
    }

    /// The connection failed (or the server closed it). While closing, or
    /// with nothing asked of it (an idle connection of the open model),
    /// it just ends. A message waiting for its connection is booked failed
    /// from its intended start and the slot backs off (a failed connect or
    /// upgrade); the messages in flight are booked failed, the close the
    /// session may have written is queued, and the next message goes on a
    /// new connection.
    fn fail(&mut self, io: &Io, failure: WsFailure) -> Step {
        if self.closing || (!self.awaiting && self.waiting.is_none()) {
            self.drop_connection(io, false);
            return Step::Pending;
        }
        self.conn.note(io.ctx, &failure);
        if let Some(intended) = self.waiting.take() {
            self.conn.fail_unsent(io.ctx, intended, failure.kind);
            self.drop_connection(io, false);
            let delay = io.ctx.state.connect_backoff(&mut self.conn.backoff);
            self.retry_at = (!delay.is_zero()).then(|| Instant::now() + delay);
        } else {
            self.conn.fail_unanswered(io.ctx, self.sent, failure.kind);
            let _ = self.flush(io);
            self.drop_connection(io, false);
        }
        self.base.phase = Phase::Idle;
        Step::Failed
    }
}

/// A failed write or read, with its class.
fn io_failure(doing: &str, error: &io::Error) -> WsFailure {
    WsFailure {
        kind: classify_io(error),
        reason: format!("{doing}: {error}"),
    }
}
