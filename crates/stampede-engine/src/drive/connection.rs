//! A connection slot: sends one request and reads its response, opening a TCP
//! connection when it has none (first request, after an error, after the
//! server closed, after the client retired the last one at the end of its
//! lifetime (conn_lifetime.rs), or for every request without keep-alive). The load models
//! (closed.rs, open.rs) decide when a slot sends. `--sse-reconnect`'s
//! stream that goes on over several requests is sse_reconnect.rs's.

use crate::exchange::conn_books::{ConnectionLife, Reuse};
use crate::exchange::read_buffer::ReadBuffer;
use crate::exchange::request_books::{Clocks, Failure, RequestBooks};
use crate::exchange::response_reader::ResponseReader;
use crate::http1::ResponseProgress;
use crate::net::outcome_class::{classify_io, Stage};
use crate::net::transport::Stream;
use crate::redirects::redirect::{Follow, Hops};
use crate::redirects::redirect_switch::{origin_switch, OriginSwitch};
use crate::worker::context::ConnectionContext;
use crate::workload::{Answer, UserSession};
use stampede_metrics::{ErrorKind, Judged};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[path = "sse_reconnect.rs"]
mod sse_reconnect;

/// The result of one exchange before it is turned into an [`Outcome`].
struct Exchange {
    result: Result<u16, ErrorKind>,
    body_bytes: u64,
    /// Its clocks (request_books.rs, the reactors' too).
    clocks: Clocks,
}

/// A connection slot's reusable parts.
pub(crate) struct Slot {
    stream: Option<Stream>,
    /// The response's parser and the bytes it has not consumed yet.
    reader: ResponseReader,
    /// Its connection's life: responses served, age, what the next counts as.
    life: ConnectionLife,
    /// The request of the mix being sent.
    current: usize,
    /// The exchange's idle-close retry and the slot's connect backoff
    /// (request_books.rs, the reactors' too).
    books: RequestBooks,
    /// The wait the last connect failure asked for, taken after the request
    /// that paid for it is recorded.
    backoff_due: Option<Duration>,
    /// The virtual user of a workload (workload/): `None` for fixed requests.
    session: Option<Box<UserSession>>,
    /// The parser keeps what checks and redirects read (set on first use).
    capture_set: bool,
    /// Redirects the request in flight has followed (`--redirects`).
    hops: Hops,
    /// The origin `stream` goes to: `None` the run's, else another a
    /// redirect went to (redirect.rs).
    origin: Option<u16>,
    /// The slot's other connection, parked while a hop uses the current one
    /// (only after a redirect to another origin; see [`Slot::switch_to`]).
    side: Option<Box<SideLink>>,
    /// This slot's index in its worker (its virtual user's number).
    index: u32,
    /// Released from its step's rendezvous: the batch its send is booked in.
    ticket: Option<crate::workload::Ticket>,
    /// `--sse-reconnect`: the request that goes on with the stream (with
    /// its `Last-Event-ID`), sent instead of the request's own.
    resume: Option<Vec<u8>>,
    /// `--sse-reconnect`: when the stream's `--sse-for` is over (a
    /// reconnection's exchange ends then at the latest).
    stream_end: Option<Instant>,
}

/// A connection of a slot parked aside, with its books: the slot's own
/// while a hop is at another origin, or that origin's while the slot is home.
struct SideLink {
    origin: Option<u16>,
    stream: Option<Stream>,
    buffer: ReadBuffer,
    life: ConnectionLife,
}

impl Slot {
    pub(crate) fn new(head_request: bool, index: u32) -> Slot {
        Slot {
            stream: None,
            reader: ResponseReader::new(head_request),
            life: ConnectionLife::new(Instant::now()),
            current: 0,
            books: RequestBooks::default(),
            backoff_due: None,
            session: None,
            capture_set: false,
            hops: Hops::default(),
            origin: None,
            side: None,
            index,
            ticket: None,
            resume: None,
            stream_end: None,
        }
    }

    /// Makes the slot's current connection the one to `want` (the origin
    /// of the request in flight), by the rule in redirect_switch.rs; the one
    /// not in use is parked in `side`.
    fn switch_to(&mut self, ctx: &ConnectionContext, want: Option<u16>) {
        let side = self.side.as_ref().map(|side| side.origin);
        match origin_switch(self.origin, side, want) {
            OriginSwitch::Stay => return,
            OriginSwitch::SwapSide => {
                self.swap_side();
                return;
            }
            OriginSwitch::ParkCurrent => {
                self.close_side(ctx);
                self.swap_side();
            }
            OriginSwitch::DropCurrent => self.drop_stream(ctx, false),
        }
        self.origin = want;
    }

    fn swap_side(&mut self) {
        let side = self.side.get_or_insert_with(|| {
            Box::new(SideLink {
                origin: None,
                stream: None,
                buffer: ReadBuffer::default(),
                life: ConnectionLife::new(Instant::now()),
            })
        });
        std::mem::swap(&mut self.origin, &mut side.origin);
        std::mem::swap(&mut self.stream, &mut side.stream);
        self.reader.swap_pending(&mut side.buffer);
        std::mem::swap(&mut self.life, &mut side.life);
    }

    /// Closes the parked connection, if any.
    fn close_side(&mut self, ctx: &ConnectionContext) {
        if self.side.as_ref().is_some_and(|side| side.stream.is_some()) {
            self.swap_side();
            self.drop_stream(ctx, false);
            self.swap_side();
        }
    }

    /// True when a scenario user is inside an iteration (its next step is
    /// not the first): in the open model it goes on without a new arrival.
    pub(crate) fn mid_iteration(&self, ctx: &ConnectionContext) -> bool {
        ctx.mid_iteration(self.session.as_deref())
    }

    /// Picks the request to send (the user's next step with a workload)
    /// and renders it; false when a `unique` feeder ran out of rows.
    fn prepare(&mut self, ctx: &ConnectionContext, intended: Instant) -> bool {
        self.hops.reset();
        let begun = ctx.begin_request(
            &mut self.reader.parser,
            &mut self.capture_set,
            &mut self.session,
            self.index,
            intended,
        );
        match begun {
            Some(target) => {
                self.current = target;
                true
            }
            None => false,
        }
    }

    /// Waits at the rendezvous of the user's next step, if it has one,
    /// before the request is counted or its intended time taken: a user
    /// held there has sent nothing, and the wait is no part of the
    /// request's time (JMeter's timers delay the sampler before its sample
    /// starts). A run without rendezvous pays one test.
    pub(crate) async fn rendezvous(&mut self, ctx: &ConnectionContext) {
        let (Some(points), Some(work)) = (&ctx.rendezvous, &ctx.workload) else {
            return;
        };
        let target = work.upcoming_target(self.session.as_deref());
        if let Some(point) = points.step(target) {
            self.ticket = Some(point.wait().await);
        }
    }

    /// True once the virtual user is done (its iterations walked, or
    /// stopped by `on_error`): the slot sends nothing more.
    pub(crate) fn user_done(&self) -> bool {
        self.session.as_ref().is_some_and(|s| s.is_done())
    }

    /// Sends one request intended at `intended` and records its outcome.
    /// The caller has already counted it with `begin_request`.
    /// With a workload the response is judged, and a scenario's think
    /// time is waited out before returning.
    pub(crate) async fn run_request(&mut self, ctx: &ConnectionContext, intended: Instant) {
        if !self.prepare(ctx, intended) {
            return;
        }
        // Released from a rendezvous (Self::rendezvous): its send is booked.
        let ticket = self.ticket.take();
        let (_, head) = ctx.request_of(self.current);
        self.reader.parser.set_head_request(head);
        let batch = ctx.count_batch(self.session.as_deref_mut());
        if batch > 1 {
            // A script's request() wrote several pipelined requests: their
            // responses are read in order.
            self.run_batch(ctx, intended, batch, true).await;
            return;
        }
        let mut exchange = self.exchange(ctx, intended).await;
        if ctx.stream.reconnect {
            exchange = self.go_on_with_stream(ctx, intended, exchange).await;
        }
        if let (Some(ticket), Some(point)) = (ticket, ctx.rendezvous_of(self.current)) {
            point.sent(ticket, exchange.clocks.sent);
        }
        // A redirect it cannot follow was read in full: its connection stays.
        let mut answered = false;
        while let Ok(status) = exchange.result {
            let session = self.session.as_deref();
            let follow = ctx.redirect(
                self.current,
                status,
                &self.reader.parser,
                session,
                &mut self.hops,
            );
            let refused = match follow {
                Follow::Hop => {
                    exchange = self.exchange(ctx, intended).await;
                    continue;
                }
                Follow::Limit => ErrorKind::RedirectLimit,
                Follow::Unreachable => ErrorKind::Other,
                Follow::No | Follow::Offsite => break,
            };
            exchange.result = Err(refused);
            answered = true;
        }
        let answer = exchange.result.ok().map(|status| Answer {
            status,
            body_bytes: exchange.body_bytes,
            elapsed: intended.elapsed(),
        });
        let session = self.session.as_deref_mut();
        let capture = self.reader.parser.capture();
        let (judged, think) = ctx.judge(session, self.current, answer, capture);
        self.finish_judged(ctx, &exchange, exchange.result, judged);
        if exchange.result.is_err() && !answered {
            self.drop_stream(ctx, false);
            self.after_failure(ctx).await;
        }
        if let Some(think) = think {
            tokio::time::sleep(think).await;
        }
    }

    /// After a failed request: waits out the connect backoff if the failure
    /// was a connect, else yields (a refused port answers at once: a dead
    /// target must not starve the worker's timers and other connections).
    async fn after_failure(&mut self, ctx: &ConnectionContext) {
        match self.backoff_due.take() {
            Some(delay) => ctx.state.wait_out_backoff(delay).await,
            None => tokio::task::yield_now().await,
        }
    }

    /// HTTP/1.1 pipelining: writes `n` requests at once (all intended at
    /// `intended`) and reads their `n` responses in order, recording each as
    /// it completes. An error ends the remaining requests of the batch with
    /// the same class, and the connection. A reused connection the server
    /// closed while idle (nothing of the batch answered) is an idle close:
    /// the batch goes again, once, on a new connection.
    pub(crate) async fn run_pipelined(
        &mut self,
        ctx: &ConnectionContext,
        intended: Instant,
        n: usize,
    ) {
        self.run_batch(ctx, intended, n, false).await;
    }

    /// A batch of `n` pipelined requests: `--pipeline`'s fixed ones, or
    /// (`scripted`) the user's rendered bytes (a script's `request()`
    /// returned several), whose every response is judged (checks, the
    /// script's `response()`), the user moving on once, after the last.
    async fn run_batch(
        &mut self,
        ctx: &ConnectionContext,
        intended: Instant,
        n: usize,
        scripted: bool,
    ) {
        self.books.arm();
        let mut n = n;
        let think = 'batch: loop {
            let mut exchange = self.fresh_exchange(intended);
            if let Err(kind) = self.ensure_connected(ctx, &mut exchange).await {
                for _ in 0..n {
                    self.finish(ctx, &exchange, Err(kind));
                }
                let (_, think) = ctx.judge(self.session.as_deref_mut(), self.current, None, None);
                self.drop_stream(ctx, false);
                self.after_failure(ctx).await;
                break 'batch think;
            }
            let sent = Instant::now();
            let deadline = tokio::time::Instant::from_std(sent + ctx.timeout_of(self.current));
            let batch = match (scripted, self.session.as_ref()) {
                (true, Some(session)) => session.rendered().unwrap_or_default(),
                _ => &ctx.pipelined[..n * ctx.request.len()],
            };
            let stream = self.stream.as_mut().expect("connected above");
            let written = tokio::time::timeout_at(deadline, stream.write_all(batch)).await;
            let mut failure = match written {
                Ok(Ok(())) => None,
                Ok(Err(e)) => Some(classify_io(&e)),
                Err(_) => Some(Stage::Exchange.timeout_kind()),
            };
            let mut reusable = true;
            let mut think = None;
            let mut closed_early = false;
            let mut resend_after = None;
            for answered in 0..n {
                let mut exchange = self.fresh_exchange(intended);
                exchange.clocks.sent = sent;
                let result = match failure {
                    Some(kind) => Err(kind),
                    None => {
                        let read = self.read_response(ctx, &mut exchange);
                        match tokio::time::timeout_at(deadline, read).await {
                            Ok(Ok((status, keep_alive))) => {
                                reusable &= keep_alive;
                                closed_early = !keep_alive && answered + 1 < n;
                                Ok(status)
                            }
                            Ok(Err(kind)) => Err(kind),
                            Err(_) => Err(Stage::Exchange.timeout_kind()),
                        }
                    }
                };
                let mut judged = None;
                match result {
                    Err(kind) => {
                        let (life, received) = (&self.life, exchange.clocks.bytes_received);
                        if (self.books).retry_after_idle_close(life, kind, answered, received) {
                            self.drop_stream(ctx, true);
                            continue 'batch;
                        }
                        failure = Some(kind);
                    }
                    Ok(status) => {
                        self.life.answered();
                        if answered + 1 < n {
                            self.reader.carry(&mut exchange.clocks);
                        }
                        if scripted && answered + 1 < n {
                            let answer = Answer {
                                status,
                                body_bytes: exchange.body_bytes,
                                elapsed: intended.elapsed(),
                            };
                            let session = self.session.as_deref_mut();
                            let capture = self.reader.parser.capture();
                            judged = ctx.judge_within_batch(session, self.current, answer, capture);
                        }
                    }
                }
                if scripted && answered + 1 == n {
                    let answer = result.ok().map(|status| Answer {
                        status,
                        body_bytes: exchange.body_bytes,
                        elapsed: intended.elapsed(),
                    });
                    let session = self.session.as_deref_mut();
                    let capture = self.reader.parser.capture();
                    (judged, think) = ctx.judge(session, self.current, answer, capture);
                }
                self.finish_judged(ctx, &exchange, result, judged);
                if closed_early {
                    resend_after = Some(answered + 1);
                    break;
                }
            }
            if let Some(done) = resend_after {
                // The server closed after that response: the rest of the
                // batch was never answered (nor processed) and goes again
                // on a new connection (RFC 9112 §9.3.2).
                if let Some(session) = self.session.as_deref_mut().filter(|_| scripted) {
                    session.drop_first_requests(done);
                }
                n -= done;
                self.drop_stream(ctx, true);
                continue 'batch;
            }
            if let Some(kind) = failure {
                self.failed(ctx, kind, true);
                self.drop_stream(ctx, false);
            } else if let Reuse::Close { by_server } =
                (self.life).after_answer(&ctx.lifetime, reusable, ctx.keepalive, Instant::now)
            {
                self.drop_stream(ctx, by_server);
            }
            break 'batch think;
        };
        if let Some(think) = think {
            tokio::time::sleep(think).await;
        }
    }

    fn fresh_exchange(&self, intended: Instant) -> Exchange {
        Exchange {
            result: Err(ErrorKind::Other),
            body_bytes: 0,
            clocks: Clocks::new(intended),
        }
    }

    /// Records one request of a batch.
    fn finish(&self, ctx: &ConnectionContext, exchange: &Exchange, result: Result<u16, ErrorKind>) {
        self.finish_judged(ctx, exchange, result, None);
    }

    /// Records one request with its verdict.
    fn finish_judged(
        &self,
        ctx: &ConnectionContext,
        exchange: &Exchange,
        result: Result<u16, ErrorKind>,
        judged: Option<Judged>,
    ) {
        let (clocks, body) = (&exchange.clocks, exchange.body_bytes);
        let outcome = clocks.outcome(Instant::now(), result, body, self.current, judged);
        let session = self.session.as_deref();
        ctx.record(
            &self.reader.parser,
            &outcome,
            clocks.connect,
            self.index,
            session,
        );
    }

    /// Books what a failed exchange costs the slot (request_books.rs): the
    /// backoff it waits out once the request is recorded.
    /// `had_connection`: it failed on an open connection, not opening one.
    fn failed(&mut self, ctx: &ConnectionContext, kind: ErrorKind, had_connection: bool) {
        let failure = Failure {
            kind,
            had_connection,
            reused: self.life.is_reused(),
            abroad: self.origin.is_some(),
        };
        if let Some(wait) = self.books.failed(&ctx.state, failure) {
            self.backoff_due = Some(wait);
        }
    }

    /// Closes the connections, if any (the slot is being parked).
    pub(crate) fn close(&mut self, ctx: &ConnectionContext) {
        self.drop_stream(ctx, false);
        self.close_side(ctx);
    }

    fn drop_stream(&mut self, ctx: &ConnectionContext, by_server: bool) {
        if self.stream.take().is_some() {
            ctx.state.connection_closed();
        }
        self.reader.clear();
        self.life.gone(by_server);
    }

    /// Sends the request (or a hop of its redirects) and reads its
    /// response, retrying once on a fresh connection when a reused one
    /// turns out to have been closed by the server while idle (no byte of
    /// a response arrived): that is a reconnect, not an error.
    async fn exchange(&mut self, ctx: &ConnectionContext, intended: Instant) -> Exchange {
        self.books.arm();
        loop {
            let exchange = self.attempt(ctx, intended).await;
            let (life, received) = (&self.life, exchange.clocks.bytes_received);
            let retry = (exchange.result)
                .is_err_and(|kind| self.books.retry_after_idle_close(life, kind, 0, received));
            if !retry {
                return exchange;
            }
            self.drop_stream(ctx, true);
        }
    }

    async fn attempt(&mut self, ctx: &ConnectionContext, intended: Instant) -> Exchange {
        let mut exchange = self.fresh_exchange(intended);
        if let Err(kind) = self.ensure_connected(ctx, &mut exchange).await {
            exchange.result = Err(kind);
            return exchange;
        }
        exchange.clocks.sent = Instant::now();
        let timeout = ctx.timeout_of(self.current);
        let mut deadline = exchange.clocks.sent + timeout;
        if let Some(end) = self.stream_end {
            deadline = deadline.min(end);
        }
        let deadline = tokio::time::Instant::from_std(deadline);
        let transfer = self.transfer(ctx, &mut exchange);
        let result = match tokio::time::timeout_at(deadline, transfer).await {
            Ok(result) => result,
            Err(_elapsed) => Err(Stage::Exchange.timeout_kind()),
        };
        match result {
            Ok((status, keep_alive)) => {
                exchange.result = Ok(status);
                self.life.answered();
                let planned = ctx.keep_alive_of(self.current);
                let reuse =
                    (self.life).after_answer(&ctx.lifetime, keep_alive, planned, Instant::now);
                if let Reuse::Close { by_server } = reuse {
                    self.drop_stream(ctx, by_server);
                }
            }
            Err(kind) => {
                self.failed(ctx, kind, true);
                exchange.result = Err(kind);
            }
        }
        exchange
    }

    /// Opens a connection when the slot has none (or no longer trusts its own).
    async fn ensure_connected(
        &mut self,
        ctx: &ConnectionContext,
        exchange: &mut Exchange,
    ) -> Result<(), ErrorKind> {
        self.switch_to(ctx, self.hops.origin());
        let unsolicited = self.reader.has_pending();
        if self.stream.is_some()
            && !(self.life).fit_to_send(unsolicited, &ctx.lifetime, Instant::now)
        {
            self.drop_stream(ctx, false);
        }
        if self.stream.is_some() {
            return Ok(());
        }
        let timeout = ctx.connect_timeout_of(self.current);
        let foreign = ctx.connector_to(self.origin);
        let connector = foreign.as_deref().unwrap_or(&ctx.connector);
        match ctx.connect_counted(connector, timeout).await {
            Ok((stream, times)) => {
                self.books.connected();
                exchange.clocks.connect = Some(times.connect);
                (self.life).opened(&ctx.state, times.connect, Instant::now());
                self.stream = Some(stream);
                Ok(())
            }
            Err(failure) => {
                if let Some(reason) = failure.reason {
                    ctx.state.sample_error(failure.kind, || reason);
                }
                self.failed(ctx, failure.kind, false);
                Err(failure.kind)
            }
        }
    }

    /// Writes the request and reads until the response is complete; returns
    /// the status and whether the connection may be reused.
    async fn transfer(
        &mut self,
        ctx: &ConnectionContext,
        exchange: &mut Exchange,
    ) -> Result<(u16, bool), ErrorKind> {
        let rendered = self.session.as_ref().and_then(|s| s.rendered());
        let request = match (self.hops.request(), &self.resume) {
            (Some(hop), _) => hop,
            (None, Some(resume)) => resume,
            (None, None) => rendered.unwrap_or_else(|| ctx.request_of(self.current).0),
        };
        let stream = self.stream.as_mut().expect("connected above");
        if let Err(error) = stream.write_all(request).await {
            let kind = classify_io(&error);
            if kind != ErrorKind::Reset {
                return Err(kind);
            }
            // The server reset the connection before the request was all
            // out: an answer it sent first (a 413 to a body too large, RFC
            // 9112 §9.3) is still readable, and is the response; the
            // connection, its request cut short, carries no other.
            return match self.read_response(ctx, exchange).await {
                Ok((status, _)) => Ok((status, false)),
                Err(_) => Err(kind),
            };
        }
        self.read_response(ctx, exchange).await
    }

    /// Reads one response from the connection: bytes at hand first (the
    /// rest of a pipelined batch's read), then reads until it is complete.
    /// A TCP or Unix stream is read into the worker's scratch buffer (only
    /// an incomplete head, or unsolicited bytes, stay in the slot); a TLS
    /// stream into the slot's buffer, in place.
    async fn read_response(
        &mut self,
        ctx: &ConnectionContext,
        exchange: &mut Exchange,
    ) -> Result<(u16, bool), ErrorKind> {
        self.reader.parser.reset();
        let clocks = &mut exchange.clocks;
        let mut progress = self.reader.parse_pending(clocks, Instant::now());
        loop {
            if let Some(start) = self.reader.take_malformed_start() {
                ctx.state.sample_error(ErrorKind::MalformedResponse, || {
                    crate::http1::malformed_reason(&start)
                });
            }
            if let ResponseProgress::Complete(done) = progress? {
                exchange.body_bytes = done.body_bytes;
                return Ok((done.status, done.keep_alive));
            }
            let stream = self.stream.as_mut().expect("connected above");
            let read = if stream.is_plain() {
                stream.readable().await.map_err(|e| classify_io(&e))?;
                let mut scratch = ctx.scratch.borrow_mut();
                match stream.try_read(&mut scratch) {
                    Ok(0) => None,
                    Ok(n) => Some(self.reader.received(&scratch[..n], clocks, Instant::now())),
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        progress = Ok(ResponseProgress::Partial);
                        continue;
                    }
                    Err(e) => return Err(classify_io(&e)),
                }
            } else {
                match stream.read(self.reader.spare()).await {
                    Ok(0) => None,
                    Ok(n) => Some(self.reader.filled(n, clocks, Instant::now())),
                    Err(e) => return Err(classify_io(&e)),
                }
            };
            progress = match read {
                Some(progress) => progress,
                None => {
                    let done = self.reader.end_of_stream()?;
                    exchange.body_bytes = done.body_bytes;
                    return Ok((done.status, false));
                }
            };
        }
    }
}
