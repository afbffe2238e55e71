//! The I/O-free books of one reactor slot speaking HTTP/2 (the
//! stampede-h2 codec): its connection's codec state and, per stream, the
//! request it carries and that request's clocks; the requests begun and
//! waiting for a stream; the slot's connect backoff and its connection's
//! life. A driver (the epoll slot) moves bytes only: what the socket read
//! goes to [`H2Exchange::receive`], what [`H2Exchange::output`] holds goes
//! to the socket.
//!
//! Each stream's end is booked with the rules every HTTP/1.1 request on the
//! reactors keeps, not a copy of them: its [`Clocks`] make its outcome
//! (latency from the intended start, service time from the send, first
//! byte), `ConnectionContext::book` counts it and writes its request-log
//! line, a failed connect costs the slot its backoff ([`RequestBooks`]),
//! and the connection's opening and end are [`ConnectionLife`]'s. What the
//! tokio path (drive/h2/h2_client.rs) does with HTTP/2's own ends, this
//! does alike: a stream the server never processed (above a GOAWAY's last
//! stream id, or refused) goes again once, first on the next connection
//! when this one is going away; a reset stream is `stream_reset`; the
//! transport closing under open streams is `reset` (the `h2` crate's
//! broken pipe); a server that breaks the protocol ends the connection and
//! its streams with `protocol`, the sample naming the frame type and rule.

use crate::exchange::conn_books::ConnectionLife;
use crate::exchange::request_books::{Clocks, Failure, RequestBooks};
use crate::net::outcome_class::NOT_H2_HINT;
use crate::plan::h2_request::H2Request;
use crate::worker::context::ConnectionContext;
use crate::worker::request_log::LogFacts;
use bytes::Bytes;
use stampede_h2::{Config, Connection, End, ErrorCode, Event, RequestBlock};
use stampede_metrics::ErrorKind;
use std::collections::VecDeque;
use std::time::Instant;

/// The run's requests in the codec's form, built once per worker: each
/// request's header block (encoded once, sent as is on every stream) and
/// its body.
#[derive(Debug)]
pub(crate) struct H2Wire {
    blocks: Vec<RequestBlock>,
    bodies: Vec<Option<Bytes>>,
    /// Streams at most per connection (`--streams`).
    pub streams: usize,
}

impl H2Wire {
    /// The codec's form of `requests` (the plan's HTTP/2 requests); Err:
    /// a header the codec cannot send, said in one line.
    pub(crate) fn new(requests: &[H2Request], streams: usize) -> Result<H2Wire, String> {
        let mut blocks = Vec::with_capacity(requests.len());
        let mut bodies = Vec::with_capacity(requests.len());
        for request in requests {
            let mut headers = Vec::with_capacity(request.headers.len());
            for (name, value) in &request.headers {
                let value = value
                    .to_str()
                    .map_err(|_| format!("the value of header {name:?} is not text"))?;
                headers.push((name.as_str(), value));
            }
            let uri = &request.uri;
            let block = RequestBlock::new(
                request.method.as_str(),
                uri.scheme_str().unwrap_or("http"),
                uri.authority().map_or("", |a| a.as_str()),
                uri.path_and_query().map_or("/", |p| p.as_str()),
                &headers,
            )
            .map_err(|e| e.to_string())?;
            blocks.push(block);
            bodies.push((!request.body.is_empty()).then(|| request.body.clone()));
        }
        Ok(H2Wire {
            blocks,
            bodies,
            streams: streams.max(1),
        })
    }

    fn block(&self, target: usize) -> (&RequestBlock, Option<Bytes>) {
        let i = target.min(self.blocks.len().saturating_sub(1));
        (&self.blocks[i], self.bodies[i].clone())
    }
}

/// A request begun (counted and claimed from the budget) that waits for a
/// stream: a new one, or one the server never processed.
#[derive(Debug, Clone, Copy)]
struct Job {
    target: usize,
    intended: Instant,
    /// Its virtual user's place among the slot's streams (the log's `vu`).
    lane: u32,
    /// Its second try: booked whatever its end.
    again: bool,
}

/// One open stream: its request and that request's clocks.
#[derive(Debug)]
struct StreamBooks {
    id: u32,
    job: Job,
    clocks: Clocks,
    status: Option<u16>,
    /// When its response is overdue.
    deadline: Instant,
}

/// The HTTP/2 books of one reactor slot (see the module's doc).
pub(crate) struct H2Exchange {
    /// The current connection's codec state (`None`: no connection).
    conn: Option<Connection>,
    /// The connection's TCP (or TLS) handshake is over.
    established: bool,
    streams: Vec<StreamBooks>,
    waiting: VecDeque<Job>,
    free_lanes: Vec<u32>,
    /// The first virtual user of this slot (slot × streams).
    first_user: u32,
    max_streams: usize,
    life: ConnectionLife,
    books: RequestBooks,
    connect_started: Instant,
    /// When the connection's handshake is overdue (while it is opening).
    connect_deadline: Instant,
    retry_at: Option<Instant>,
    /// The connection takes no new stream and closes once its streams end:
    /// `Some(by_server)`, true after a graceful GOAWAY (its successor is a
    /// reconnect), false when it broke.
    draining: Option<bool>,
    /// Streams ended by the last call into the codec (reused).
    ended: Vec<(u32, End)>,
    /// The connection's stream limit is noted in the worker's state (at
    /// its first answer, as the tokio path does: its SETTINGS came before).
    limit_noted: bool,
}

impl std::fmt::Debug for H2Exchange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("H2Exchange")
            .field("connected", &self.conn.is_some())
            .field("streams", &self.streams.len())
            .field("waiting", &self.waiting.len())
            .finish()
    }
}

/// The codec's settings on the reactors: its defaults (large windows,
/// batched WINDOW_UPDATEs), and one stream before the server's SETTINGS
/// say how many it allows, so that a server allowing fewer than
/// `--streams` refuses none (a refused request goes again only once).
fn codec_config() -> Config {
    Config {
        streams_before_settings: 1,
        ..Config::default()
    }
}

impl H2Exchange {
    /// The books of slot `slot` with up to `streams` streams per connection.
    pub(crate) fn new(slot: u32, streams: usize, now: Instant) -> H2Exchange {
        let streams = streams.max(1);
        H2Exchange {
            conn: None,
            established: false,
            streams: Vec::with_capacity(streams),
            waiting: VecDeque::new(),
            free_lanes: (0..streams as u32).rev().collect(),
            first_user: slot.saturating_mul(streams as u32),
            max_streams: streams,
            life: ConnectionLife::new(now),
            books: RequestBooks::default(),
            connect_started: now,
            connect_deadline: now,
            retry_at: None,
            draining: None,
            ended: Vec::new(),
            limit_noted: false,
        }
    }

    /// A request the worker has counted (`begin_request`), intended at
    /// `intended`: it waits for a stream.
    pub(crate) fn begin(&mut self, ctx: &ConnectionContext, intended: Instant) {
        let lane = self.free_lanes.pop().unwrap_or(0);
        self.waiting.push_back(Job {
            target: ctx.next_target_index(),
            intended,
            lane,
            again: false,
        });
    }

    /// True while requests begun wait for a stream.
    pub(crate) fn has_waiting(&self) -> bool {
        !self.waiting.is_empty()
    }

    /// Requests begun that wait for a stream.
    pub(crate) fn waiting(&self) -> usize {
        self.waiting.len()
    }

    /// Streams open on the connection.
    pub(crate) fn open_streams(&self) -> usize {
        self.streams.len()
    }

    /// True when a new request could start at once: on the open
    /// connection (the server's limit, `--streams`, no GOAWAY), or on a new
    /// one when there is none; nothing waits before it.
    pub(crate) fn can_take(&self) -> bool {
        if !self.waiting.is_empty() {
            return false;
        }
        match &self.conn {
            None => true,
            Some(conn) => {
                self.established
                    && self.draining.is_none()
                    && self.streams.len() < self.max_streams
                    && conn.can_start()
            }
        }
    }

    /// True when the connection is going away and its last stream ended:
    /// it closes; `Some(by_server)`: its successor is a reconnect.
    pub(crate) fn drained(&self) -> Option<bool> {
        self.draining.filter(|_| self.streams.is_empty())
    }

    /// Bytes waiting to be written to the socket.
    pub(crate) fn output(&self) -> &[u8] {
        self.conn.as_ref().map_or(&[], |c| c.output())
    }

    /// Drops the first `n` bytes of [`H2Exchange::output`] (written).
    pub(crate) fn consume_output(&mut self, n: usize) {
        if let Some(conn) = &mut self.conn {
            conn.consume_output(n);
        }
    }

    /// A new connection's handshake starts at `now`: its codec queues the
    /// preface, and the first waiting request starts on it (only that one
    /// until the connection opens: a failed connect is charged to one
    /// request, as on every other path).
    pub(crate) fn connecting(&mut self, ctx: &ConnectionContext, wire: &H2Wire, now: Instant) {
        ctx.state.connect_attempt();
        self.connect_started = now;
        self.established = false;
        self.draining = None;
        self.retry_at = None;
        let target = self.waiting.front().map_or(0, |j| j.target);
        self.connect_deadline = now + ctx.connect_timeout_of(target);
        self.conn = Some(Connection::new(codec_config()));
        self.limit_noted = false;
        self.start_one(ctx, wire, now);
    }

    /// The connection is open at `now` (its TCP handshake is over): it
    /// counts as open, and the request that opened it is sent from now on,
    /// carrying the connect time in its log line.
    pub(crate) fn connected(&mut self, ctx: &ConnectionContext, now: Instant) {
        let took = now.saturating_duration_since(self.connect_started);
        self.opened(ctx, took, now);
    }

    /// The TCP connect is over at `now` and the TLS handshake starts, with
    /// a connect timeout of its own (as on every path).
    pub(crate) fn handshaking(&mut self, ctx: &ConnectionContext, now: Instant) {
        let target = self.streams.first().map_or(0, |s| s.job.target);
        self.connect_deadline = now + ctx.connect_timeout_of(target);
    }

    /// The TLS handshake that began when the TCP connect ended at
    /// `tcp_done` is over at `now`: the connect and the handshake are timed
    /// apart, and the connection counts as open.
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

    fn opened(&mut self, ctx: &ConnectionContext, took: std::time::Duration, now: Instant) {
        self.life.opened(&ctx.state, took, now);
        self.books.connected();
        self.established = true;
        for stream in &mut self.streams {
            stream.clocks.connect = Some(took);
            stream.clocks.sent = now;
            stream.deadline = now + ctx.timeout_of(stream.job.target);
        }
    }

    /// Starts waiting requests while the connection takes them.
    pub(crate) fn start_waiting(&mut self, ctx: &ConnectionContext, wire: &H2Wire, now: Instant) {
        if !self.established || self.draining.is_some() {
            return;
        }
        while self.streams.len() < self.max_streams && self.start_one(ctx, wire, now) {}
    }

    /// Starts the first waiting request on a stream, if the codec allows.
    fn start_one(&mut self, ctx: &ConnectionContext, wire: &H2Wire, now: Instant) -> bool {
        let (Some(conn), Some(&job)) = (self.conn.as_mut(), self.waiting.front()) else {
            return false;
        };
        if !conn.can_start() {
            return false;
        }
        let (block, body) = wire.block(job.target);
        let Ok(id) = conn.start(block, body) else {
            return false;
        };
        self.waiting.pop_front();
        let mut clocks = Clocks::new(job.intended);
        clocks.sent = now;
        self.streams.push(StreamBooks {
            id,
            job,
            clocks,
            status: None,
            deadline: now + ctx.timeout_of(job.target),
        });
        true
    }

    /// When the first stream's response (or the connection's handshake)
    /// is overdue.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        if self.conn.is_some() && !self.established {
            return Some(self.connect_deadline);
        }
        self.streams.iter().map(|s| s.deadline).min()
    }

    /// Ends every stream whose response is overdue at `now` as a timeout
    /// (RST_STREAM CANCEL to the server), as the tokio path does.
    pub(crate) fn time_out_streams(&mut self, ctx: &ConnectionContext, now: Instant) {
        let Some(conn) = self.conn.as_mut() else {
            return;
        };
        for stream in &self.streams {
            if stream.deadline <= now {
                conn.cancel(stream.id);
                self.ended.push((stream.id, End::Failed(ErrorCode::Cancel)));
            }
        }
        self.settle_ended(ctx, now, ErrorKind::Timeout);
    }

    /// Hands the codec bytes the socket read at `now`, booking every stream
    /// they end. A protocol violation ends the connection (the codec queues
    /// its GOAWAY): its streams are `protocol` errors, sampled with the
    /// frame type and the rule, and the connection drains at once.
    pub(crate) fn receive(&mut self, ctx: &ConnectionContext, bytes: &[u8], now: Instant) {
        let Some(conn) = self.conn.as_mut() else {
            return;
        };
        let streams = &mut self.streams;
        let ended = &mut self.ended;
        let mut goaway = None;
        let result = conn.receive(bytes, &mut |event| match event {
            Event::Response { stream, head } => {
                if let Some(s) = streams.iter_mut().find(|s| s.id == stream) {
                    s.status = Some(head.status);
                    s.clocks.first_byte.get_or_insert(now);
                }
            }
            Event::Data { stream, data } => {
                if let Some(s) = streams.iter_mut().find(|s| s.id == stream) {
                    s.clocks.bytes_received += data.len() as u64;
                }
            }
            Event::Ended { stream, end } => ended.push((stream, end)),
            Event::GoAway { code, .. } => goaway = Some(code),
            Event::SettingsAcked | Event::Trailers { .. } => {}
        });
        if let Some(code) = goaway {
            self.draining.get_or_insert(code == ErrorCode::NoError);
        }
        if let Err(error) = result {
            // No SETTINGS first: most likely an HTTP/1.1 answer to the preface.
            let hint = match conn.got_settings() {
                true => "",
                false => NOT_H2_HINT,
            };
            ctx.state
                .sample_error(ErrorKind::Protocol, || format!("{error}{hint}"));
            self.draining = Some(false);
        }
        self.settle_ended(ctx, now, ErrorKind::Protocol);
    }

    /// The transport closed (the server closed it, or a read or write
    /// failed with `kind`): each open stream fails as `kind`; requests not
    /// on the wire yet wait for the next connection. Returns true when a
    /// request failed (else it was an idle close).
    pub(crate) fn transport_closed(&mut self, ctx: &ConnectionContext, kind: ErrorKind) -> bool {
        let Some(conn) = self.conn.as_mut() else {
            return false;
        };
        let ended = &mut self.ended;
        conn.closed(&mut |event| {
            if let Event::Ended { stream, end } = event {
                ended.push((stream, end));
            }
        });
        let failed = !self.ended.is_empty();
        self.settle_ended(ctx, Instant::now(), kind);
        self.retry_at = None;
        failed
    }

    /// The connection could not be opened (the connect or its handshake
    /// failed, as `kind`): the request it was opened for fails, counted
    /// from its intended start, and the slot backs off (request_books.rs).
    pub(crate) fn connect_failed(&mut self, ctx: &ConnectionContext, kind: ErrorKind) {
        let now = Instant::now();
        for stream in std::mem::take(&mut self.streams) {
            let mut clocks = stream.clocks;
            clocks.sent = clocks.intended;
            clocks.connect = None;
            self.book(ctx, &stream.job, &clocks, now, Err(kind));
        }
        let failure = Failure {
            kind,
            had_connection: false,
            reused: false,
            abroad: false,
        };
        self.retry_at = self.books.failed(&ctx.state, failure).map(|w| now + w);
        self.conn = None;
        self.life.gone(false);
    }

    /// When the slot may start again after its last failure: `None`
    /// unless that failure was a connect (then it waits out its backoff).
    pub(crate) fn retry_at(&self) -> Option<Instant> {
        self.retry_at
    }

    /// The connection is gone (its streams ended or booked); `by_server`:
    /// the next one is a reconnect.
    pub(crate) fn connection_gone(&mut self, ctx: &ConnectionContext, by_server: bool) {
        if std::mem::take(&mut self.established) {
            ctx.state.connection_closed();
        }
        self.conn = None;
        self.draining = None;
        self.life.gone(by_server);
    }

    /// Books the streams the codec ended: a whole response is the
    /// request's answer; a reset is `stream_reset`; a stream the server
    /// never processed waits to go again (once); a stream the codec failed
    /// is `failed` (the class of what ended it).
    fn settle_ended(&mut self, ctx: &ConnectionContext, now: Instant, failed: ErrorKind) {
        let mut ended = std::mem::take(&mut self.ended);
        for (id, end) in ended.drain(..) {
            let Some(i) = self.streams.iter().position(|s| s.id == id) else {
                continue;
            };
            let stream = self.streams.swap_remove(i);
            let result = match end {
                End::Finished => {
                    self.life.answered();
                    self.note_limit(ctx);
                    stream.status.ok_or(ErrorKind::Protocol)
                }
                End::Reset(code) => {
                    ctx.state.sample_error(ErrorKind::StreamReset, || {
                        format!("the server reset the stream ({code:?})")
                    });
                    Err(ErrorKind::StreamReset)
                }
                End::Unprocessed if !stream.job.again => {
                    self.waiting.push_front(Job {
                        again: true,
                        ..stream.job
                    });
                    continue;
                }
                End::Unprocessed => {
                    // Its second try went unprocessed too.
                    match self.draining.is_some() {
                        true => Err(ErrorKind::GoAway),
                        false => Err(ErrorKind::StreamReset),
                    }
                }
                End::Failed(code) => {
                    if failed == ErrorKind::Protocol && self.draining != Some(false) {
                        // A stream error of the codec's own: the response
                        // broke a rule on its stream.
                        ctx.state.sample_error(ErrorKind::Protocol, || {
                            format!("HTTP/2 {code:?} on the response's stream")
                        });
                    }
                    Err(failed)
                }
            };
            self.book(ctx, &stream.job, &stream.clocks, now, result);
        }
        self.ended = ended;
    }

    /// Notes the server's SETTINGS_MAX_CONCURRENT_STREAMS once per
    /// connection (`http2.server_max_streams` keeps the fewest), if it set
    /// one.
    fn note_limit(&mut self, ctx: &ConnectionContext) {
        if std::mem::replace(&mut self.limit_noted, true) {
            return;
        }
        let limit = self.conn.as_ref().map(|c| c.max_concurrent_streams());
        if let Some(limit) = limit.filter(|&l| l != u32::MAX) {
            ctx.state.server_streams(limit);
        }
    }

    /// Books one request's end (booking.rs, the rule of every protocol),
    /// and frees its virtual user's lane.
    fn book(
        &mut self,
        ctx: &ConnectionContext,
        job: &Job,
        clocks: &Clocks,
        now: Instant,
        result: Result<u16, ErrorKind>,
    ) {
        // A failed request has no counted body (as on every path).
        let body = match result {
            Ok(_) => clocks.bytes_received,
            Err(_) => 0,
        };
        let outcome = clocks.outcome(now, result, body, job.target, None);
        let facts = LogFacts {
            connect: clocks.connect,
            user: ctx.user_id(self.first_user + job.lane),
            rendered: None,
        };
        ctx.book(&outcome, facts);
        self.free_lanes.push(job.lane);
    }
}
