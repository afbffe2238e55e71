//! One WebSocket connection on tokio, only I/O and waiting: it connects
//! (TCP or Unix, TLS for `wss://`, through net/transport/), writes what
//! the I/O-free session (exchange/ws_session.rs) puts in its outbox,
//! hands it every read, and books what the session says happened. One
//! message is in flight at a time: the closed model sends the next when
//! the last is answered, the open model hands the slot its next intended
//! instant (drive/open.rs's dispatch, as for HTTP/1.1). Each message is
//! booked as one request, its latency from the intended send.

use crate::exchange::ws_session::{Deflate, WsEvent, WsFailure, WsSession};
use crate::net::outcome_class::{classify_io, Stage};
use crate::net::transport::Stream;
use crate::plan::ws_plan::WsConfig;
use crate::worker::backoff::Backoff;
use crate::worker::context::ConnectionContext;
use crate::worker::request_log::LogFacts;
use stampede_metrics::{ErrorKind, Outcome};
use stampede_workload::RenderContext;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The status a message's reply is booked with: the upgrade's, since a
/// WebSocket message has none of its own.
pub(crate) const REPLY_STATUS: u16 = 101;

/// The longest wait for the server's close after the client's, at the end.
const CLOSE_WAIT: Duration = Duration::from_secs(1);

/// Close code 1006: the connection ended with no close frame (§7.1.5).
const CLOSE_ABNORMAL: u16 = 1006;
/// Close code 1005: a close frame with no code (§7.1.5).
const CLOSE_NO_CODE: u16 = 1005;

/// One connection slot: its stream and session while connected.
pub(crate) struct WsSlot {
    index: usize,
    stream: Option<Stream>,
    session: Option<WsSession>,
    /// When the connection began (for the setup time) until it upgraded.
    started: Option<Instant>,
    events: Vec<WsEvent>,
    /// Frame bytes read since the last reply was booked: the next reply's
    /// `bytes_received` (the run's transfer figures).
    unbooked: u64,
    buf: Box<[u8]>,
    /// A templated message rendered for its send.
    rendered: Vec<u8>,
    /// Messages this slot sent: `{{iter}}`.
    sent_count: u64,
    /// `{{next}}`-less templates read no user value; an empty store.
    vars: stampede_workload::VarStore,
    backoff: Backoff,
    rng: fastrand::Rng,
}

impl WsSlot {
    /// Slot `index` of its worker; `seed` draws its keys and masks.
    pub(crate) fn new(index: usize, seed: u64) -> WsSlot {
        WsSlot {
            index,
            stream: None,
            session: None,
            started: None,
            events: Vec::new(),
            unbooked: 0,
            buf: vec![0; 64 * 1024].into_boxed_slice(),
            rendered: Vec::new(),
            sent_count: 0,
            vars: stampede_workload::VarStore::default(),
            backoff: Backoff::default(),
            rng: fastrand::Rng::with_seed(
                seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
        }
    }

    /// Sends one message meant to leave at `intended` and waits for its
    /// reply, connecting and upgrading first when the slot has no open
    /// connection; books how it ended.
    pub(crate) async fn round_trip(
        &mut self,
        ctx: &ConnectionContext,
        config: &WsConfig,
        intended: Instant,
    ) {
        if !self.session.as_ref().is_some_and(WsSession::is_open) {
            self.drop_connection(ctx);
            if let Err(failure) = self.open(ctx).await {
                self.note(ctx, &failure);
                self.book(ctx, intended, intended, Err(failure.kind));
                self.drop_connection(ctx);
                let delay = ctx.state.connect_backoff(&mut self.backoff);
                ctx.state.wait_out_backoff(delay).await;
                return;
            }
            self.backoff.succeeded();
        }
        let message = match &config.template {
            Some(template) => {
                self.rendered.clear();
                let (worker, _) = ctx.users;
                let mut render = RenderContext {
                    seq: config.sequence.next(),
                    conn: ctx.user_id(self.index as u32),
                    iter: self.sent_count,
                    worker: worker as u32,
                    agent: 0,
                    rows: &[],
                    vars: &mut self.vars,
                    rng: &mut self.rng,
                };
                template.render(&mut render, &mut self.rendered);
                &self.rendered[..]
            }
            None => &config.message[..],
        };
        self.sent_count += 1;
        let sent = Instant::now();
        let session = self.session.as_mut().expect("opened above");
        session.send_message(message, intended);
        ctx.state
            .websocket(intended, |books| books.messages_sent += 1);
        let deadline = tokio::time::Instant::from_std(sent + ctx.timeout);
        let answered = tokio::time::timeout_at(deadline, self.until_answered(ctx, sent)).await;
        let failure = match answered {
            Ok(Ok(())) => return,
            Ok(Err(failure)) => failure,
            Err(_) => WsFailure {
                kind: Stage::Exchange.timeout_kind(),
                reason: "no reply within --timeout".into(),
            },
        };
        // The connection cannot be trusted to answer in order any more.
        self.note(ctx, &failure);
        self.fail_unanswered(ctx, sent, failure.kind);
        self.flush_quietly(ctx).await;
        self.drop_connection(ctx);
    }

    /// Ends the slot's connection with a close (1000), waiting a moment
    /// for the server's: the client is done.
    pub(crate) async fn close(&mut self, ctx: &ConnectionContext) {
        if let Some(session) = self.session.as_mut().filter(|s| s.is_open()) {
            session.close(stampede_websocket::CLOSE_NORMAL);
            let deadline = tokio::time::Instant::now() + CLOSE_WAIT.min(ctx.timeout);
            let _ = tokio::time::timeout_at(deadline, self.until_closed(ctx)).await;
        }
        self.drop_connection(ctx);
    }

    async fn until_closed(&mut self, ctx: &ConnectionContext) -> Result<(), WsFailure> {
        loop {
            self.flush(ctx).await?;
            if self.session.as_ref().is_none_or(WsSession::is_closed) {
                return Ok(());
            }
            self.read_once(ctx, Instant::now()).await?;
        }
    }

    /// Connects and upgrades.
    async fn open(&mut self, ctx: &ConnectionContext) -> Result<(), WsFailure> {
        let config = ctx.websocket.as_deref().expect("a WebSocket run");
        let started = Instant::now();
        let (stream, times) = ctx
            .connect_counted(&ctx.connector, ctx.connect_timeout_of(0))
            .await
            .map_err(|failure| WsFailure {
                kind: failure.kind,
                reason: failure.reason.unwrap_or_default(),
            })?;
        ctx.state.connection_opened(false, times.connect);
        self.stream = Some(stream);
        self.started = Some(started);
        let seed = self.rng.u64(..);
        self.session = Some(WsSession::new(config, fastrand::Rng::with_seed(seed)));
        let deadline = tokio::time::Instant::from_std(Instant::now() + ctx.timeout);
        let upgrade = async {
            while !self.session.as_ref().is_some_and(WsSession::is_open) {
                self.flush(ctx).await?;
                self.read_once(ctx, started).await?;
            }
            Ok(())
        };
        match tokio::time::timeout_at(deadline, upgrade).await {
            Ok(result) => result,
            Err(_) => Err(WsFailure {
                kind: Stage::Exchange.timeout_kind(),
                reason: "no answer to the upgrade within --timeout".into(),
            }),
        }
    }

    /// Reads until no message is unanswered.
    async fn until_answered(
        &mut self,
        ctx: &ConnectionContext,
        sent: Instant,
    ) -> Result<(), WsFailure> {
        loop {
            self.flush(ctx).await?;
            if self.session.as_ref().is_none_or(|s| s.unanswered() == 0) {
                return Ok(());
            }
            self.read_once(ctx, sent).await?;
        }
    }

    /// Writes the session's outbox; books the frame bytes it held.
    async fn flush(&mut self, ctx: &ConnectionContext) -> Result<(), WsFailure> {
        let (Some(stream), Some(session)) = (self.stream.as_mut(), self.session.as_mut()) else {
            return Ok(());
        };
        if session.outbox().is_empty() {
            return Ok(());
        }
        stream
            .write_all(session.outbox())
            .await
            .map_err(|e| WsFailure {
                kind: classify_io(&e),
                reason: format!("writing: {e}"),
            })?;
        session.written();
        let bytes = std::mem::take(&mut session.bytes_sent);
        ctx.state
            .websocket(Instant::now(), |books| books.bytes_sent += bytes);
        Ok(())
    }

    /// Writes what is left to write, if the connection takes it (a close
    /// after an error), ignoring errors: the connection is going anyway.
    async fn flush_quietly(&mut self, ctx: &ConnectionContext) {
        let deadline = tokio::time::Instant::now() + Duration::from_millis(100);
        let _ = tokio::time::timeout_at(deadline, self.flush(ctx)).await;
    }

    /// One read handed to the session, and its events booked.
    async fn read_once(&mut self, ctx: &ConnectionContext, sent: Instant) -> Result<(), WsFailure> {
        let stream = self.stream.as_mut().expect("connected");
        let session = self.session.as_mut().expect("connected");
        let was_open = session.is_open() || session.unanswered() > 0;
        let n = stream.read(&mut self.buf).await.map_err(|e| WsFailure {
            kind: classify_io(&e),
            reason: format!("reading: {e}"),
        })?;
        if n == 0 {
            let upgraded = self.started.is_none();
            if upgraded && was_open {
                ctx.state.websocket(Instant::now(), |books| {
                    books.dropped += 1;
                    *books.close_codes.entry(CLOSE_ABNORMAL).or_default() += 1;
                });
            }
            let (kind, reason) = if upgraded {
                let reason = "the server closed the connection without a close frame";
                (ErrorKind::ClosedEarly, reason)
            } else {
                let reason = "the server closed the connection before answering the upgrade";
                (ErrorKind::WsUpgradeRefused, reason)
            };
            return Err(WsFailure {
                kind,
                reason: reason.into(),
            });
        }
        let before = session.bytes_received;
        let result = session.received(&self.buf[..n], &mut self.events);
        let received = session.bytes_received - before;
        self.unbooked += received;
        ctx.state
            .websocket(Instant::now(), |books| books.bytes_received += received);
        let events = std::mem::take(&mut self.events);
        let mut closed = None;
        for event in &events {
            match *event {
                WsEvent::Upgraded => {
                    if let Some(started) = self.started.take() {
                        let setup = started.elapsed();
                        let session = self.session.as_ref().expect("connected");
                        let chosen = session.subprotocol().map(str::to_owned);
                        let deflate = session.deflate();
                        ctx.state.websocket(started, |books| {
                            books.record_setup(setup);
                            if let Some(name) = chosen {
                                *books.subprotocols.entry(name).or_default() += 1;
                            }
                            match deflate {
                                Deflate::Agreed => books.deflated += 1,
                                Deflate::Refused => books.deflate_refused += 1,
                                Deflate::Off => {}
                            }
                        });
                    }
                }
                WsEvent::Reply { intended } => {
                    self.book(ctx, intended, sent, Ok(REPLY_STATUS));
                    let rtt = intended.elapsed();
                    ctx.state.websocket(intended, |books| {
                        books.messages_received += 1;
                        books.record_rtt(rtt);
                    });
                }
                WsEvent::Unsolicited => {
                    ctx.state
                        .websocket(Instant::now(), |books| books.messages_received += 1);
                }
                WsEvent::PingAnswered => {
                    ctx.state
                        .websocket(Instant::now(), |books| books.pings_answered += 1);
                }
                WsEvent::Closed { code } => closed = Some(code),
            }
        }
        self.events = events;
        self.events.clear();
        if let Some(code) = closed {
            let by_server = was_open;
            ctx.state.websocket(Instant::now(), |books| {
                *books
                    .close_codes
                    .entry(code.unwrap_or(CLOSE_NO_CODE))
                    .or_default() += 1;
                if by_server {
                    books.dropped += 1;
                }
            });
            if by_server {
                // The close's answer goes out; the messages in flight get no reply.
                self.flush_quietly(ctx).await;
                return Err(WsFailure {
                    kind: ErrorKind::ClosedEarly,
                    reason: format!(
                        "the server closed the WebSocket (code {})",
                        code.unwrap_or(CLOSE_NO_CODE)
                    ),
                });
            }
        }
        result
    }

    /// Books every unanswered message as failed with `kind`.
    fn fail_unanswered(&mut self, ctx: &ConnectionContext, sent: Instant, kind: ErrorKind) {
        let Some(session) = self.session.as_mut() else {
            return;
        };
        for intended in session.take_unanswered() {
            self.book(ctx, intended, sent, Err(kind));
        }
    }

    fn note(&self, ctx: &ConnectionContext, failure: &WsFailure) {
        if !failure.reason.is_empty() {
            ctx.state
                .sample_error(failure.kind, || failure.reason.clone());
        }
    }

    /// Books one message (one request): its reply, or why it had none.
    fn book(
        &mut self,
        ctx: &ConnectionContext,
        intended: Instant,
        sent: Instant,
        result: Result<u16, ErrorKind>,
    ) {
        let done = Instant::now();
        let outcome = Outcome {
            intended,
            sent,
            first_byte: result.is_ok().then_some(done),
            done,
            result,
            bytes_received: if result.is_ok() {
                std::mem::take(&mut self.unbooked)
            } else {
                0
            },
            body_bytes: 0,
            target: 0,
            judged: None,
        };
        let facts = LogFacts {
            connect: None,
            user: self.index as u64,
            rendered: None,
        };
        ctx.book(&outcome, facts);
    }

    fn drop_connection(&mut self, ctx: &ConnectionContext) {
        if self.stream.take().is_some() {
            ctx.state.connection_closed();
        }
        self.session = None;
        self.started = None;
    }
}
