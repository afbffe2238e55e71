//! The books of one connection slot, shared by the epoll and io_uring
//! reactors: which request is in flight, its clocks, its response (read by
//! exchange/response_reader.rs, the tokio slot's reader too), what gets
//! recorded. The rules are the tokio path's
//! (connection.rs), written once where both keep them: the idle close
//! retried once as a reconnect and what a failure costs the slot (its
//! connect backoff) in request_books.rs; a timeout's class by its stage in
//! outcome_class.rs; the connection's life (served, lifetime, whether it
//! stays open after an answer, what a successor counts as) in
//! conn_books.rs; the verdict, the redirect and the record of a request's
//! end on `ConnectionContext` (worker/context.rs). A failed request has no
//! counted body, and one that never got a connection counts from its
//! intended start. A pipelined batch (`--pipeline N`) is N requests written
//! at once, all with the same clocks: the books count the responses of the
//! batch as they complete, in order, and a failure ends every request of
//! the batch not answered yet. The reactors own the socket and decide when
//! to read and write.

use crate::exchange::conn_books::{ConnectionLife, Reuse};
use crate::exchange::read_buffer::ReadBuffer;
use crate::exchange::request_books::{Clocks, Failure, RequestBooks};
use crate::exchange::response_reader::ResponseReader;
use crate::http1::{Complete, ResponseProgress};
use crate::redirects::redirect::{Follow, Hops};
use crate::worker::context::ConnectionContext;
use crate::workload::{Answer, UserSession};
use stampede_metrics::{ErrorKind, Judged};
use std::time::{Duration, Instant};

/// The books of a connection that stay with it while it is parked aside
/// (a slot's second connection, for redirects to another origin:
/// reactor/slot.rs), swapped in and out of the [`Ledger`].
#[derive(Debug)]
pub(crate) struct LinkBooks {
    leftover: ReadBuffer,
    life: ConnectionLife,
    established: bool,
}

impl LinkBooks {
    pub(crate) fn new(now: Instant) -> LinkBooks {
        LinkBooks {
            leftover: ReadBuffer::default(),
            life: ConnectionLife::new(now),
            established: false,
        }
    }
}

#[derive(Debug)]
pub(crate) struct Ledger {
    /// The response's parser and the bytes it has not consumed yet.
    reader: ResponseReader,
    /// The request of the mix in flight.
    target: usize,
    /// Requests in the batch in flight (1 unless pipelined).
    batch: usize,
    /// Responses of the batch recorded so far.
    batch_answered: usize,
    /// The request's clocks (request_books.rs, the tokio slot's too).
    clocks: Clocks,
    connect_started: Instant,
    /// When the current phase times out.
    pub deadline: Instant,
    /// Bytes of the request written so far.
    pub written: usize,
    /// Its connection's life: responses served (redirect hops too), age,
    /// what the next counts as (conn_books.rs, the tokio slot's too).
    life: ConnectionLife,
    /// The exchange's idle-close retry and the slot's connect backoff
    /// (request_books.rs, the tokio slot's too).
    books: RequestBooks,
    /// The connection's handshake completed (it counts as open).
    established: bool,
    /// Set by a failed connect: the slot starts its next request no earlier.
    retry_at: Option<Instant>,
    /// The virtual user of a workload (templates, checks, steps): `None`
    /// for fixed requests, which never look at it.
    session: Option<Box<UserSession>>,
    /// A scenario's think time: the slot's next step starts no earlier.
    pub pause_until: Option<Instant>,
    /// The parser keeps what checks and redirects read (set on first use).
    capture_set: bool,
    /// Redirects the request in flight has followed (`--redirects`).
    hops: Hops,
    /// This slot's index in its worker (its virtual user's number).
    slot: u32,
}

impl Ledger {
    pub(crate) fn new(head_request: bool, now: Instant, slot: u32) -> Ledger {
        Ledger {
            reader: ResponseReader::new(head_request),
            target: 0,
            batch: 1,
            batch_answered: 0,
            clocks: Clocks::new(now),
            connect_started: now,
            deadline: now,
            written: 0,
            life: ConnectionLife::new(now),
            books: RequestBooks::default(),
            established: false,
            retry_at: None,
            session: None,
            pause_until: None,
            capture_set: false,
            hops: Hops::default(),
            slot,
        }
    }

    /// A new request the worker has counted (`begin_request` or
    /// `begin_intended`): picks its request of the mix and starts its clock
    /// at `intended` (now in the closed model; the open model's instant,
    /// so that the time it waited for a connection counts in its latency).
    /// With a workload, the user's next step is rendered; false when a
    /// `unique` feeder ran out of rows (the request is taken back, nothing
    /// is sent, and the user is done) or the script failed.
    pub(crate) fn begin(&mut self, ctx: &ConnectionContext, intended: Instant) -> bool {
        self.hops.reset();
        let begun = ctx.begin_request(
            &mut self.reader.parser,
            &mut self.capture_set,
            &mut self.session,
            self.slot,
            intended,
        );
        let Some(target) = begun else {
            return false;
        };
        self.target = target;
        let (_, head) = ctx.request_of(self.target);
        self.reader.parser.set_head_request(head);
        self.clocks.intended = intended;
        self.books.arm();
        self.clocks.connect = None;
        // A script's request() may write several pipelined requests: each
        // is counted, and the batch's responses are read in order.
        self.batch = ctx.count_batch(self.session.as_deref_mut());
        true
    }

    /// True when a scenario user is inside an iteration (its next step is
    /// not the first): in the open model it goes on without a new arrival.
    pub(crate) fn mid_iteration(&self, ctx: &ConnectionContext) -> bool {
        ctx.mid_iteration(self.session.as_deref())
    }

    /// True once the virtual user is done (its iterations walked, or
    /// stopped by `on_error`): the slot sends nothing more.
    pub(crate) fn user_done(&self) -> bool {
        self.session.as_ref().is_some_and(|s| s.is_done())
    }

    /// A pipelined batch of `n` requests the worker has counted, all
    /// intended at `intended` (pipelining has no mix: `--targets` is refused).
    pub(crate) fn begin_batch(
        &mut self,
        ctx: &ConnectionContext,
        intended: Instant,
        n: usize,
    ) -> bool {
        let begun = self.begin(ctx, intended);
        self.batch = n.max(1);
        begun
    }

    /// True while responses of the batch in flight are still due.
    pub(crate) fn batch_pending(&self) -> bool {
        self.batch_answered < self.batch
    }

    /// The server closed the connection after a response of the batch
    /// with more still due: those requests were never answered (nor, as the
    /// server said close, processed) and go again on a new connection, as
    /// RFC 9112 §9.3.2 asks of a client that pipelines; not errors.
    pub(crate) fn rest_of_batch(&mut self) {
        let answered = self.batch_answered;
        if let Some(session) = self.session.as_deref_mut() {
            if session.rendered().is_some() {
                session.drop_first_requests(answered);
            }
        }
        self.batch -= answered.min(self.batch);
        self.batch_answered = 0;
    }

    /// The next response of a batch (its books were started afresh by
    /// [`Ledger::answered`]): parsed from the bytes after the last one.
    pub(crate) fn next_of_batch(&mut self, now: Instant) -> Result<ResponseProgress, ErrorKind> {
        self.reader.parser.reset();
        self.parse_early(now)
    }

    /// True when bytes arrived that no request asked for: HTTP/1.1 cannot
    /// tell which request they belong to, so the connection must be retired.
    pub(crate) fn has_unsolicited_bytes(&self) -> bool {
        self.reader.has_pending()
    }

    /// The request goes out (again): a fresh response to wait for.
    pub(crate) fn reset_response(&mut self) {
        self.reader.parser.reset();
        self.clocks.first_byte = None;
        self.clocks.bytes_received = 0;
        self.written = 0;
        self.batch_answered = 0;
    }

    /// The request is written on an open connection from `now` on.
    pub(crate) fn sending(&mut self, ctx: &ConnectionContext, now: Instant) {
        self.clocks.sent = now;
        self.deadline = now + ctx.timeout_of(self.target);
    }

    /// A new connection's handshake starts.
    pub(crate) fn connecting(&mut self, ctx: &ConnectionContext, now: Instant) {
        ctx.state.connect_attempt();
        self.connect_started = now;
        self.established = false;
        self.deadline = now + ctx.connect_timeout_of(self.target);
    }

    /// The TCP connect is over at `now` and the TLS handshake starts, with
    /// a connect timeout of its own (as on the tokio path).
    pub(crate) fn handshaking(&mut self, ctx: &ConnectionContext, now: Instant) {
        self.deadline = now + ctx.connect_timeout_of(self.target);
    }

    /// The handshake is done: the connection counts as open and the
    /// request's clock starts.
    pub(crate) fn connected(&mut self, ctx: &ConnectionContext, now: Instant) {
        let took = now.saturating_duration_since(self.connect_started);
        self.opened(ctx, took, now);
    }

    /// The TLS handshake that began when the TCP connect ended at
    /// `tcp_done` is over at `now`: the connect and the handshake are timed
    /// apart (as on the tokio path), and the connection counts as open.
    pub(crate) fn connected_over_tls(
        &mut self,
        ctx: &ConnectionContext,
        tcp_done: Instant,
        now: Instant,
    ) {
        let took = tcp_done.saturating_duration_since(self.connect_started);
        ctx.state
            .tls_handshake(took, now.saturating_duration_since(tcp_done));
        self.opened(ctx, took, now);
    }

    fn opened(&mut self, ctx: &ConnectionContext, took: Duration, now: Instant) {
        self.clocks.connect = Some(took);
        self.life.opened(&ctx.state, took, now);
        self.books.connected();
        self.established = true;
        self.sending(ctx, now);
    }

    /// The origin the request in flight goes to (`None`: the run's own;
    /// else another a redirect named, redirect.rs).
    pub(crate) fn origin(&self) -> Option<u16> {
        self.hops.origin()
    }

    /// Swaps the current connection's books with a parked one's.
    pub(crate) fn swap_link(&mut self, parked: &mut LinkBooks) {
        self.reader.swap_pending(&mut parked.leftover);
        std::mem::swap(&mut self.life, &mut parked.life);
        std::mem::swap(&mut self.established, &mut parked.established);
    }

    /// The bytes of the request (or the pipelined batch) in flight.
    pub(crate) fn request<'a>(&'a self, ctx: &'a ConnectionContext) -> &'a [u8] {
        if let Some(hop) = self.hops.request() {
            return hop;
        }
        if let Some(rendered) = self.session.as_ref().and_then(|s| s.rendered()) {
            return rendered;
        }
        if self.batch > 1 {
            return &ctx.pipelined[..self.batch * ctx.request.len()];
        }
        ctx.request_of(self.target).0
    }

    /// What is left of the request to write.
    pub(crate) fn unwritten<'a>(&'a self, ctx: &'a ConnectionContext) -> &'a [u8] {
        &self.request(ctx)[self.written..]
    }

    /// Response bytes that arrived at `now`: parsed on their own when
    /// nothing is pending, after what is pending otherwise.
    pub(crate) fn received(
        &mut self,
        bytes: &[u8],
        now: Instant,
    ) -> Result<ResponseProgress, ErrorKind> {
        self.reader.received(bytes, &mut self.clocks, now)
    }

    /// When the request in flight went out (its intended start until then).
    pub(crate) fn sent_at(&self) -> Instant {
        self.clocks.sent
    }

    /// Keeps bytes that arrived while no response was awaited (unsolicited
    /// unless a request is about to be read).
    pub(crate) fn keep_early(&mut self, bytes: &[u8]) {
        self.reader.keep_early(bytes);
    }

    /// Parses bytes kept by [`Ledger::keep_early`] once the request is out.
    pub(crate) fn parse_early(&mut self, now: Instant) -> Result<ResponseProgress, ErrorKind> {
        self.reader.parse_pending(&mut self.clocks, now)
    }

    /// The server ended the stream: a response framed by the close ends here.
    pub(crate) fn end_of_stream(&mut self) -> Result<Complete, ErrorKind> {
        self.reader.end_of_stream()
    }

    /// Records a complete response; what becomes of the connection when
    /// it was the last one due (of a batch, the later ones decide).
    pub(crate) fn answered(
        &mut self,
        ctx: &ConnectionContext,
        now: Instant,
        done: &Complete,
    ) -> Reuse {
        self.batch_answered += 1;
        if !self.batch_pending() {
            let judged = self.judge(ctx, now, done);
            self.record(ctx, now, Ok(done.status), done.body_bytes, judged);
            self.life.answered();
            return self.after_answer(ctx, now, done.keep_alive);
        }
        // The bytes after this response are the next one's.
        self.reader.carry(&mut self.clocks);
        let judged = self.judge_within_batch(ctx, now, done);
        self.record(ctx, now, Ok(done.status), done.body_bytes, judged);
        self.life.answered();
        self.clocks.first_byte = None;
        self.clocks.bytes_received = 0;
        Reuse::Keep
    }

    /// A redirect's response completed at `now` on this connection (it
    /// counts toward the connection's lifetime); whether the hop may go on
    /// the same connection.
    pub(crate) fn hop_answered(
        &mut self,
        ctx: &ConnectionContext,
        now: Instant,
        keep_alive: bool,
    ) -> Reuse {
        self.life.answered();
        self.after_answer(ctx, now, keep_alive)
    }

    /// What becomes of the connection after a response at `now` whose
    /// server said `keep_alive` (conn_books.rs, the tokio slot's rule too).
    fn after_answer(&mut self, ctx: &ConnectionContext, now: Instant, keep_alive: bool) -> Reuse {
        let planned = ctx.keep_alive_of(self.target);
        (self.life).after_answer(&ctx.lifetime, keep_alive, planned, || now)
    }

    /// Before a request goes out at `now` on the open connection: whether
    /// it may carry it (conn_books.rs, the tokio slot's rule too).
    pub(crate) fn fit_to_send(&mut self, ctx: &ConnectionContext, now: Instant) -> bool {
        let unsolicited = self.has_unsolicited_bytes();
        self.life.fit_to_send(unsolicited, &ctx.lifetime, || now)
    }

    /// Whether the complete response `done` redirects the request
    /// (redirect.rs): a hop's request is made ready (and counted) for the
    /// slot to send; an offsite redirect is counted and is the response.
    pub(crate) fn redirect(&mut self, ctx: &ConnectionContext, done: &Complete) -> Follow {
        if self.batch > 1 {
            // A pipelined batch follows no redirect.
            return Follow::No;
        }
        let session = self.session.as_deref();
        let follow = ctx.redirect(
            self.target,
            done.status,
            &self.reader.parser,
            session,
            &mut self.hops,
        );
        if follow == Follow::Hop {
            // The hop is an exchange of its own: it may be retried once.
            self.books.arm();
        }
        follow
    }

    /// Judges a complete response by the workload's checks and extractors
    /// (workload/judge.rs), and moves a scenario user on to its next step.
    fn judge(&mut self, ctx: &ConnectionContext, now: Instant, done: &Complete) -> Option<Judged> {
        let answer = Answer {
            status: done.status,
            body_bytes: done.body_bytes,
            elapsed: now.saturating_duration_since(self.clocks.intended),
        };
        let session = self.session.as_deref_mut();
        let capture = self.reader.parser.capture();
        let (judged, think) = ctx.judge(session, self.target, Some(answer), capture);
        self.pause_until = think.map(|d| now + d);
        judged
    }

    /// Judges a response of a script's pipelined batch that is not its
    /// last: checks and `response()` see it; the user moves on after the last.
    fn judge_within_batch(
        &mut self,
        ctx: &ConnectionContext,
        now: Instant,
        done: &Complete,
    ) -> Option<Judged> {
        let answer = Answer {
            status: done.status,
            body_bytes: done.body_bytes,
            elapsed: now.saturating_duration_since(self.clocks.intended),
        };
        let session = self.session.as_deref_mut()?;
        ctx.judge_within_batch(
            Some(session),
            self.target,
            answer,
            self.reader.parser.capture(),
        )
    }

    /// True (once per exchange: the request, each hop) when a failure of
    /// `kind` is a reused connection the server closed while it was idle
    /// (nothing of the response arrived; of a batch, no response): not an
    /// error, the request (or batch) goes again on a new connection.
    pub(crate) fn retry_after_idle_close(&mut self, kind: ErrorKind) -> bool {
        let (answered, received) = (self.batch_answered, self.clocks.bytes_received);
        (self.books).retry_after_idle_close(&self.life, kind, answered, received)
    }

    /// Records a failed request (of a batch: every request not answered yet,
    /// with the same class). `had_connection`: the request got an open
    /// connection (else it counts from its intended start, as on the tokio path).
    /// A request that got no connection is a failed connect: the slot backs
    /// off before its next request ([`Ledger::retry_at`]).
    pub(crate) fn failed(
        &mut self,
        ctx: &ConnectionContext,
        kind: ErrorKind,
        had_connection: bool,
    ) {
        let now = Instant::now();
        if !had_connection {
            self.clocks.sent = self.clocks.intended;
        }
        let failure = Failure {
            kind,
            had_connection,
            reused: self.life.is_reused(),
            abroad: self.hops.origin().is_some(),
        };
        self.retry_at = (self.books.failed(&ctx.state, failure)).map(|wait| now + wait);
        if let Some(start) = self.reader.take_malformed_start() {
            ctx.state
                .sample_error(kind, || crate::http1::malformed_reason(&start));
        }
        // The group's on_error decides what the user does next.
        let session = self.session.as_deref_mut();
        let (_, think) = ctx.judge(session, self.target, None, None);
        self.pause_until = think.map(|d| now + d);
        // A failed request has no counted body (as on the tokio path).
        self.record(ctx, now, Err(kind), 0, None);
        if self.batch_answered + 1 < self.batch {
            // The rest of the batch got nothing of its own.
            self.clocks.first_byte = None;
            self.clocks.bytes_received = 0;
            for _ in self.batch_answered + 1..self.batch {
                self.record(ctx, now, Err(kind), 0, None);
            }
        }
        self.batch_answered = self.batch;
    }

    /// When the slot may start again after its last failure: `None` unless
    /// that failure was a connect (then the slot waits out its backoff).
    pub(crate) fn retry_at(&self) -> Option<Instant> {
        self.retry_at
    }

    /// The connection is gone; `by_server`: the next one is a reconnect
    /// (unless the client retired it: then a planned one).
    pub(crate) fn connection_gone(&mut self, ctx: &ConnectionContext, by_server: bool) {
        if std::mem::take(&mut self.established) {
            ctx.state.connection_closed();
        }
        self.reader.clear();
        self.life.gone(by_server);
    }

    fn record(
        &self,
        ctx: &ConnectionContext,
        done: Instant,
        result: Result<u16, ErrorKind>,
        body_bytes: u64,
        judged: Option<Judged>,
    ) {
        let outcome = (self.clocks).outcome(done, result, body_bytes, self.target, judged);
        let session = self.session.as_deref();
        ctx.record(
            &self.reader.parser,
            &outcome,
            self.clocks.connect,
            self.slot,
            session,
        );
    }
}
