//! One WebSocket connection slot's session and its booking, whatever
//! moves its bytes: the tokio driver (ws_slot.rs) and the reactors'
//! slots (reactor/ws.rs, for epoll and io_uring) all hold a [`WsConn`].
//! It renders each message, hands it to the I/O-free session
//! (exchange/ws_session.rs), hands the session every read, and books what
//! the session says happened: the `websocket` books (messages, bytes, rtt,
//! setup, pings, closes, drops) and each message as one request, its
//! latency from the intended send. The rules of a connection's end are
//! here too, for every loop: a close, an end or a reset booked once as a
//! drop, the close (1008) a connection given up on gets, a message carried
//! past a connection ended before it left, an error sampled only with a
//! count. The drivers only write the outbox, read, and keep the deadlines.
//!
//! With a workload (`--feed`, `--check`, `--extract`, `--cookie-jar`, a
//! scenario's steps) each slot is a virtual user of workload/: its session
//! renders every message (the step's `message` template, by the one
//! renderer HTTP requests use), judges every reply (its payload the body of
//! a status-101 answer: checks and extractors as for HTTP), writes its
//! cookie jar into each upgrade and keeps the upgrade's `Set-Cookie`.

use crate::exchange::ws_session::{Deflate, WsEvent, WsFailure, WsSession};
use crate::net::outcome_class::Stage;
use crate::plan::ws_plan::WsConfig;
use crate::worker::backoff::Backoff;
use crate::worker::context::ConnectionContext;
use crate::worker::request_log::LogFacts;
use crate::workload::UserSession;
use stampede_metrics::{ErrorKind, Judged, Outcome};
use stampede_workload::RenderContext;
use std::time::{Duration, Instant};

/// The status a message's reply is booked with: the upgrade's, since a
/// WebSocket message has none of its own.
pub(crate) const REPLY_STATUS: u16 = 101;

/// Close code 1006: the connection ended with no close frame (§7.1.5).
const CLOSE_ABNORMAL: u16 = 1006;
/// Close code 1005: a close frame with no code (§7.1.5).
const CLOSE_NO_CODE: u16 = 1005;
/// Close code 1008, what the client sends on an open connection it gives
/// up on (no reply within `--timeout`): RFC 6455 §7.4.1 makes 1008 "a
/// generic status code that can be returned when there is no other more
/// suitable status code" for either endpoint, while its 1011 is a server's
/// ("a server is terminating the connection because it encountered an
/// unexpected condition").
const CLOSE_GIVEN_UP: u16 = 1008;

/// No answer came within `--timeout`: to the upgrade (`upgrading`) or to
/// a message. Every driver fails the connection with this class and reason.
pub(crate) fn answer_timeout(upgrading: bool) -> WsFailure {
    let reason = if upgrading {
        "no answer to the upgrade within --timeout"
    } else {
        "no reply within --timeout"
    };
    WsFailure {
        kind: Stage::Exchange.timeout_kind(),
        reason: reason.into(),
    }
}

/// One connection slot's session (while connected) and books.
pub(crate) struct WsConn {
    index: usize,
    /// The connection's session, from its connect on.
    pub(crate) session: Option<WsSession>,
    /// When the connection began (for the setup time) until it upgraded.
    started: Option<Instant>,
    events: Vec<WsEvent>,
    /// Frame bytes read since the last reply was booked: the next reply's
    /// `bytes_received` (the run's transfer figures).
    unbooked: u64,
    /// A templated message rendered for its send.
    rendered: Vec<u8>,
    /// Messages this slot sent: `{{iter}}`.
    sent_count: u64,
    /// `{{next}}`-less templates read no user value; an empty store.
    vars: stampede_workload::VarStore,
    /// The slot's connect backoff (a failed connect or upgrade).
    pub(crate) backoff: Backoff,
    rng: fastrand::Rng,
    /// The connection's end (a server's close, its end of stream, an I/O
    /// error) is booked: it is booked once.
    ended: bool,
    /// The last failure noted ([`WsConn::note`]): its reason is sampled
    /// with the first message booked failed under it, and only then, so
    /// that no error class has a sample and no count.
    noted: Option<WsFailure>,
    /// The message waiting for a connection was carried from one the
    /// server ended before it left ([`WsConn::carry_unsent`]).
    carried: bool,
    /// `--ws-rate`: when the slot's next message is due.
    due: Option<Instant>,
    /// The slot's virtual user, with a workload.
    user: Option<Box<UserSession>>,
    /// The step (plan target) of the message in flight.
    target: usize,
    /// After the reply being booked: the step's `close = true`.
    close_after: bool,
    /// The pause the user takes before its next message (a scenario's
    /// `think`), taken by the driver.
    think: Option<Duration>,
}

/// What [`WsConn::send_next`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sent {
    /// The message is in the outbox; its reply is awaited.
    Framed,
    /// It failed before it went (booked: `--ws-match-id` found no id in it).
    Failed,
    /// Nothing was sent and the request was taken back (a `unique` feeder
    /// ran out: the user is done; or the script failed).
    Nothing,
}

impl WsConn {
    /// Slot `index` of its worker; `seed` draws its keys and masks.
    pub(crate) fn new(index: usize, seed: u64) -> WsConn {
        WsConn {
            index,
            session: None,
            started: None,
            events: Vec::new(),
            unbooked: 0,
            rendered: Vec::new(),
            sent_count: 0,
            vars: stampede_workload::VarStore::default(),
            backoff: Backoff::default(),
            rng: fastrand::Rng::with_seed(
                seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
            user: None,
            target: 0,
            close_after: false,
            think: None,
            ended: false,
            noted: None,
            carried: false,
            due: None,
        }
    }

    /// True once the slot's virtual user is done (its iterations walked, a
    /// `unique` feeder ran out): it sends nothing more.
    pub(crate) fn user_done(&self) -> bool {
        self.user.as_ref().is_some_and(|u| u.is_done())
    }

    /// The reply just booked was the last of its connection (its step's
    /// `close = true`): taken, the driver closes (1000) before the next.
    pub(crate) fn take_close_after(&mut self) -> bool {
        std::mem::take(&mut self.close_after)
    }

    /// The user's pause before its next message, taken.
    pub(crate) fn take_think(&mut self) -> Option<Duration> {
        self.think.take()
    }

    /// True once the session upgraded and has not closed.
    pub(crate) fn is_open(&self) -> bool {
        self.session.as_ref().is_some_and(WsSession::is_open)
    }

    /// A connection begun at `started` is connected: a new session, its
    /// upgrade request waiting in the outbox.
    pub(crate) fn connected(&mut self, ctx: &ConnectionContext, started: Instant) {
        let config: &WsConfig = ctx.websocket.as_deref().expect("a WebSocket run");
        self.started = Some(started);
        self.ended = false;
        let seed = self.rng.u64(..);
        let mut session = WsSession::new(config, fastrand::Rng::with_seed(seed));
        if let Some(work) = &ctx.workload {
            if work.spec.judges_responses() {
                session.keep_replies();
            }
            if work.spec.cookie_jar {
                session.collect_cookies();
                let user = self.user(ctx);
                if let Some(upgrade) = session.upgrade_request() {
                    user.jar.apply(upgrade);
                }
            }
        }
        self.session = Some(session);
    }

    /// The slot's virtual user, made on first use.
    fn user(&mut self, ctx: &ConnectionContext) -> &mut UserSession {
        let work = ctx.workload.as_ref().expect("a workload");
        let id = ctx.user_id(self.index as u32);
        self.user.get_or_insert_with(|| Box::new(work.new_user(id)))
    }

    /// The instant the slot's next message is meant to leave, claimed at
    /// `now` (the closed model; every driver asks here). With `--ws-rate`
    /// each slot keeps its own schedule: the first message is due when the
    /// slot starts, each next one a period after the last one's instant,
    /// however late that one went (its latency counts from it, so a server
    /// that falls behind shows in latency, not as a slower rate). Without,
    /// a message is due when it goes.
    pub(crate) fn claim_due(&mut self, ctx: &ConnectionContext, now: Instant) -> Instant {
        let pace = ctx.websocket.as_deref().and_then(|config| config.pace);
        let Some(pace) = pace else {
            return now;
        };
        let due = self.due.unwrap_or(now);
        self.due = Some(due + pace);
        due
    }

    /// When the slot's next message is due, if it is paced (`--ws-rate`).
    pub(crate) fn next_due(&self) -> Option<Instant> {
        self.due
    }

    /// The connection is gone: no session.
    pub(crate) fn gone(&mut self) {
        self.session = None;
        self.started = None;
        self.noted = None;
    }

    /// The client is done with the connection (its slot parks, the load
    /// is over, or the run's deadline or a stop came): an open session
    /// starts its close (1000) and gives up its unanswered messages.
    /// Those stay in flight, and the worker's last snapshot counts them
    /// unfinished, as it counts an HTTP request the end cut off; both
    /// drivers end a duration run so. True while the server's close is
    /// awaited.
    pub(crate) fn close(&mut self) -> bool {
        // A slot that starts again (the schedule ramps back up) starts a
        // new schedule rather than owing the messages of its pause.
        self.due = None;
        let Some(session) = self.session.as_mut() else {
            return false;
        };
        session.close(stampede_websocket::CLOSE_NORMAL);
        session.is_closing()
    }

    /// Renders the next message and frames it into the outbox, meant to
    /// leave at `intended`, and counts it sent. The session must be open.
    pub(crate) fn send_next(&mut self, ctx: &ConnectionContext, intended: Instant) -> Sent {
        let config = ctx.websocket.as_deref().expect("a WebSocket run");
        // The message waiting for a connection has one now.
        self.carried = false;
        if ctx.workload.is_some() {
            return self.send_step(ctx, intended);
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
        if frame(self.session.as_mut(), ctx, message, intended) {
            Sent::Framed
        } else {
            self.no_id(ctx, intended)
        }
    }

    /// [`WsConn::send_next`] with a workload: the user's next step, its
    /// message rendered by the user's session.
    fn send_step(&mut self, ctx: &ConnectionContext, intended: Instant) -> Sent {
        let work = ctx.workload.as_ref().expect("a workload");
        let config = ctx.websocket.as_deref().expect("a WebSocket run");
        let id = ctx.user_id(self.index as u32);
        let user = (self.user).get_or_insert_with(|| Box::new(work.new_user(id)));
        let target = user.next_target(work, || 0);
        if let Err(not) = user.prepare(work, target, &config.message, || work.spec.sequence.next())
        {
            ctx.state.not_prepared(intended, not);
            return Sent::Nothing;
        }
        let message = user.rendered().unwrap_or(&config.message);
        self.target = target;
        if frame(self.session.as_mut(), ctx, message, intended) {
            Sent::Framed
        } else {
            self.no_id(ctx, intended)
        }
    }

    /// `--ws-match-id` found no id in the message meant for `intended`: it
    /// is not sent, and booked failed (`other`, the sample naming the source).
    fn no_id(&mut self, ctx: &ConnectionContext, intended: Instant) -> Sent {
        let config = ctx.websocket.as_deref().expect("a WebSocket run");
        let source = config.match_id.as_ref().map_or("", |m| &m.source);
        ctx.state.sample_error(ErrorKind::Other, || {
            format!("--ws-match-id {source} found no id in the message to send")
        });
        let now = Instant::now();
        self.book(ctx, intended, now, now, Err(ErrorKind::Other));
        self.moved_on(ctx, true);
        Sent::Failed
    }

    /// The user's message ended (`failed`: without a reply, or its reply
    /// failed a check): it moves to its next step, its pause kept.
    fn moved_on(&mut self, ctx: &ConnectionContext, failed: bool) {
        let (Some(work), Some(user)) = (&ctx.workload, self.user.as_mut()) else {
            return;
        };
        self.think = user.advance(work, failed, false);
        if work.script_stopped() || work.stopped_run() {
            ctx.state.stop_sending();
        }
    }

    /// The session's outbox was written out: books the frame bytes it held.
    pub(crate) fn written(&mut self, ctx: &ConnectionContext) {
        let Some(session) = self.session.as_mut() else {
            return;
        };
        session.written();
        let bytes = std::mem::take(&mut session.bytes_sent);
        if bytes > 0 {
            ctx.state
                .websocket(Instant::now(), |books| books.bytes_sent += bytes);
        }
    }

    /// Hands `bytes` read at `now` to the session and books what they
    /// meant; a reply books its message, sent at `sent`. A close from the
    /// server (its answer waiting in the outbox) or a bad frame fails the
    /// connection.
    pub(crate) fn received(
        &mut self,
        ctx: &ConnectionContext,
        bytes: &[u8],
        sent: Instant,
        now: Instant,
    ) -> Result<(), WsFailure> {
        let session = self.session.as_mut().expect("connected");
        // A close that does not answer the client's is the server's own,
        // even one right behind the upgrade's answer, in the same read.
        let client_closing = session.is_closing();
        let before = session.bytes_received;
        let result = session.received(bytes, &mut self.events);
        let received = session.bytes_received - before;
        self.unbooked += received;
        if received > 0 {
            ctx.state
                .websocket(now, |books| books.bytes_received += received);
        }
        let events = std::mem::take(&mut self.events);
        let mut closed = None;
        let mut replies = 0;
        for event in &events {
            match *event {
                WsEvent::Upgraded => {
                    let set_cookies = (self.session.as_mut()).map(WsSession::take_set_cookies);
                    if let (Some(user), Some(set_cookies)) = (self.user.as_mut(), set_cookies) {
                        for set_cookie in set_cookies {
                            user.jar.absorb(&set_cookie);
                        }
                    }
                    if let Some(started) = self.started.take() {
                        let setup = now.saturating_duration_since(started);
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
                    let judged = self.judge(ctx, replies, now.saturating_duration_since(intended));
                    replies += 1;
                    self.book_judged(ctx, intended, sent, now, Ok(REPLY_STATUS), judged);
                    let rtt = now.saturating_duration_since(intended);
                    ctx.state.websocket(intended, |books| {
                        books.messages_received += 1;
                        books.record_rtt(rtt);
                    });
                }
                WsEvent::Unsolicited => {
                    ctx.state
                        .websocket(now, |books| books.messages_received += 1);
                }
                WsEvent::PingAnswered => {
                    ctx.state.websocket(now, |books| books.pings_answered += 1);
                }
                WsEvent::Closed { code } => closed = Some(code),
            }
        }
        self.events = events;
        self.events.clear();
        if let Some(code) = closed {
            let by_server = !client_closing && !self.ended;
            self.ended = true;
            ctx.state.websocket(now, |books| {
                *books
                    .close_codes
                    .entry(code.unwrap_or(CLOSE_NO_CODE))
                    .or_default() += 1;
                if by_server {
                    books.dropped += 1;
                }
            });
            if by_server {
                // The close's answer waits in the outbox; the messages in
                // flight get no reply.
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

    /// The server ended the stream with no close frame: a drop (1006) once
    /// upgraded, a refused upgrade before.
    pub(crate) fn end_of_stream(&mut self, ctx: &ConnectionContext) -> WsFailure {
        let upgraded = self.lost(ctx);
        let (kind, reason) = if upgraded {
            let reason = "the server closed the connection without a close frame";
            (ErrorKind::ClosedEarly, reason)
        } else {
            let reason = "the server closed the connection before answering the upgrade";
            (ErrorKind::WsUpgradeRefused, reason)
        };
        WsFailure {
            kind,
            reason: reason.into(),
        }
    }

    /// Reading or writing failed with `error` (`doing` says which): its
    /// class, and once upgraded the connection's end (a reset is a
    /// connection gone without a close, as an end of stream is: a drop,
    /// 1006).
    pub(crate) fn io_failed(
        &mut self,
        ctx: &ConnectionContext,
        doing: &str,
        error: &std::io::Error,
    ) -> WsFailure {
        self.lost(ctx);
        WsFailure {
            kind: crate::net::outcome_class::classify_io(error),
            reason: format!("{doing}: {error}"),
        }
    }

    /// The connection is gone without a close: once upgraded and meant to
    /// be used (open, or a message unanswered), a drop with 1006, booked
    /// once. True once upgraded.
    fn lost(&mut self, ctx: &ConnectionContext) -> bool {
        let upgraded = self.session.is_some() && self.started.is_none();
        let was_open = (self.session.as_ref()).is_some_and(|s| s.is_open() || s.unanswered() > 0);
        if upgraded && was_open && !self.ended {
            self.ended = true;
            ctx.state.websocket(Instant::now(), |books| {
                books.dropped += 1;
                *books.close_codes.entry(CLOSE_ABNORMAL).or_default() += 1;
            });
        }
        upgraded
    }

    /// Books every unanswered message as failed with `kind` (the noted
    /// failure's reason sampled if one was). An open connection the client
    /// gives up on (no reply within `--timeout`) gets a close (1008, the
    /// failure's reason) in the outbox, for its driver to write before it
    /// drops the connection: the server then sees a close, not an abnormal
    /// end. A connection the server ended, or a bad frame failed (the
    /// session wrote that close), gets none.
    pub(crate) fn fail_unanswered(
        &mut self,
        ctx: &ConnectionContext,
        sent: Instant,
        kind: ErrorKind,
    ) {
        let Some(session) = self.session.as_mut() else {
            return;
        };
        let now = Instant::now();
        let unanswered = session.take_unanswered();
        if !self.ended {
            let reason = self.noted.as_ref().map_or("", |f| f.reason.as_str());
            session.close_with(CLOSE_GIVEN_UP, reason);
        }
        for intended in unanswered {
            self.book(ctx, intended, sent, now, Err(kind));
            self.moved_on(ctx, true);
        }
    }

    /// The workload's verdict on the `n`th reply of the last read (its
    /// payload kept by the session), `elapsed` from its intended send; the
    /// user moves on to its next step.
    fn judge(&mut self, ctx: &ConnectionContext, n: usize, elapsed: Duration) -> Option<Judged> {
        let (Some(work), Some(user)) = (&ctx.workload, self.user.as_mut()) else {
            return None;
        };
        let payload = self.session.as_ref().map_or(&[][..], |s| s.reply(n));
        let judgement = {
            let recorder = &mut ctx.state.recorder.borrow_mut();
            user.judge_message(work, self.target, payload, elapsed, recorder)
        };
        self.close_after = (work.spec.steps.get(self.target)).is_some_and(|s| s.close_after);
        self.think = user.advance(work, judgement.failed, judgement.restart);
        if work.script_stopped() || work.stopped_run() {
            ctx.state.stop_sending();
        }
        judgement.judged
    }

    /// Keeps the failure's reason, sampled under its class with the first
    /// message booked failed under it ([`WsConn::book`]), and only then.
    pub(crate) fn note(&mut self, _ctx: &ConnectionContext, failure: &WsFailure) {
        self.noted = (!failure.reason.is_empty()).then(|| failure.clone());
    }

    /// A message meant to leave at `intended` never got a connection:
    /// booked failed, from its intended start.
    pub(crate) fn fail_unsent(
        &mut self,
        ctx: &ConnectionContext,
        intended: Instant,
        kind: ErrorKind,
    ) {
        self.carried = false;
        self.book(ctx, intended, intended, Instant::now(), Err(kind));
        self.moved_on(ctx, true);
    }

    /// The connection a message waited for failed: true when the message
    /// goes on the next connection instead of failing. So it does once,
    /// when the connection ended after its upgrade, before the message
    /// could leave (a server closing right behind the upgrade, or its
    /// pushes): the message never reached the server, as an HTTP request
    /// on a connection the server closed while idle is retried once. The
    /// second time it fails with the connection's failure, counted in
    /// `requests.sent` as a failed connect is, not in `messages_sent`.
    pub(crate) fn carry_unsent(&mut self) -> bool {
        let upgraded = self.session.is_some() && self.started.is_none();
        let carry = upgraded && !self.carried;
        self.carried = carry;
        carry
    }

    /// Books one message (one request), ended at `done`: its reply, or why
    /// it had none.
    fn book(
        &mut self,
        ctx: &ConnectionContext,
        intended: Instant,
        sent: Instant,
        done: Instant,
        result: Result<u16, ErrorKind>,
    ) {
        self.book_judged(ctx, intended, sent, done, result, None);
    }

    /// [`WsConn::book`] with the workload's verdict on the reply.
    fn book_judged(
        &mut self,
        ctx: &ConnectionContext,
        intended: Instant,
        sent: Instant,
        done: Instant,
        result: Result<u16, ErrorKind>,
        judged: Option<Judged>,
    ) {
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
            target: self.target as u16,
            judged,
        };
        let facts = LogFacts {
            connect: None,
            user: self.index as u64,
            rendered: None,
        };
        if let Err(kind) = result {
            if let Some(failure) = self.noted.take_if(|f| f.kind == kind) {
                ctx.state.sample_error(kind, || failure.reason);
            }
        }
        ctx.book(&outcome, facts);
    }
}

/// Frames `message` into the open session's outbox, meant to leave at
/// `intended`, and counts it sent. False when `--ws-match-id` found no id
/// in it: it is not framed.
fn frame(
    session: Option<&mut WsSession>,
    ctx: &ConnectionContext,
    message: &[u8],
    intended: Instant,
) -> bool {
    let session = session.expect("an open session");
    if !session.send_message(message, intended) {
        return false;
    }
    ctx.state
        .websocket(intended, |books| books.messages_sent += 1);
    true
}
