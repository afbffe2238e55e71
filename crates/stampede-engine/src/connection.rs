//! A connection slot: sends one request and reads its response, opening a TCP
//! connection when it has none (first request, after an error, after the
//! server closed, or for every request without keep-alive). The load models
//! (closed.rs, open.rs) decide when a slot sends.

use crate::http1::{ResponseError, ResponseParser, ResponseProgress};
use crate::outcome_class::{classify_connect, classify_io};
use crate::read_buffer::ReadBuffer;
use crate::request_log::WorkerLog;
use crate::source_addrs::SourceAddrs;
use crate::worker_state::WorkerState;
use stampede_metrics::{ErrorKind, Outcome};
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// What every connection of a worker shares.
#[derive(Debug)]
pub struct ConnectionContext {
    pub addr: SocketAddr,
    /// The pre-encoded request (see `http1::encode_request`).
    pub request: Rc<[u8]>,
    pub head_request: bool,
    pub keepalive: bool,
    pub connect_timeout: Duration,
    pub timeout: Duration,
    pub state: Rc<WorkerState>,
    /// The per-request log, when one was asked for (`None`: one check per request).
    pub log: Option<WorkerLog>,
    /// Local addresses to connect from (`--source-addrs`), rotated.
    pub source_addrs: SourceAddrs,
}

/// The result of one exchange before it is turned into an [`Outcome`].
struct Exchange {
    result: Result<u16, ErrorKind>,
    bytes_received: u64,
    body_bytes: u64,
    sent: Instant,
    first_byte: Option<Instant>,
    /// How long opening a connection for this request took, if it needed one.
    connect: Option<Duration>,
}

/// A connection slot's reusable parts.
pub struct Slot {
    stream: Option<TcpStream>,
    buffer: ReadBuffer,
    parser: ResponseParser,
    /// The server closed (or asked to close) the last connection without an
    /// error: the next connection is a reconnect.
    server_closed: bool,
    /// Responses completed on the current stream (0 = fresh connection).
    served: u64,
}

impl Slot {
    pub fn new(head_request: bool) -> Slot {
        Slot {
            stream: None,
            buffer: ReadBuffer::default(),
            parser: ResponseParser::new(head_request),
            server_closed: false,
            served: 0,
        }
    }

    /// Sends one request intended at `intended` and records its outcome.
    /// The caller has already counted it with `begin_request`.
    pub async fn run_request(&mut self, ctx: &ConnectionContext, intended: Instant) {
        let exchange = self.exchange(ctx, intended).await;
        let outcome = Outcome {
            intended,
            sent: exchange.sent,
            first_byte: exchange.first_byte,
            done: Instant::now(),
            result: exchange.result,
            bytes_received: exchange.bytes_received,
            body_bytes: exchange.body_bytes,
        };
        ctx.state.end_request(&outcome);
        if let Some(log) = &ctx.log {
            log.record(&outcome, exchange.connect);
        }
        if outcome.result.is_err() {
            self.drop_stream(ctx, false);
            // A refused port answers at once: yield so a dead target cannot
            // starve the worker's timers and the other connections.
            tokio::task::yield_now().await;
        }
    }

    /// Closes the connection, if any (the slot is being parked).
    pub fn close(&mut self, ctx: &ConnectionContext) {
        self.drop_stream(ctx, false);
    }

    fn drop_stream(&mut self, ctx: &ConnectionContext, by_server: bool) {
        if self.stream.take().is_some() {
            ctx.state.connection_closed();
        }
        self.buffer.clear();
        self.served = 0;
        self.server_closed = by_server;
    }

    /// Sends the request and reads its response, retrying once on a fresh
    /// connection when a reused one turns out to have been closed by the
    /// server while idle (no byte of a response arrived): that is a reconnect,
    /// not an error.
    async fn exchange(&mut self, ctx: &ConnectionContext, intended: Instant) -> Exchange {
        let mut exchange = self.attempt(ctx, intended).await;
        let idle_close = matches!(
            exchange.result,
            Err(ErrorKind::ClosedEarly | ErrorKind::Reset)
        ) && exchange.bytes_received == 0;
        if idle_close && self.served > 0 {
            self.drop_stream(ctx, true);
            exchange = self.attempt(ctx, intended).await;
        }
        exchange
    }

    async fn attempt(&mut self, ctx: &ConnectionContext, intended: Instant) -> Exchange {
        let mut exchange = Exchange {
            result: Err(ErrorKind::Other),
            bytes_received: 0,
            body_bytes: 0,
            sent: intended,
            first_byte: None,
            connect: None,
        };
        if self.stream.is_some() && !self.buffer.pending().is_empty() {
            // Bytes arrived that no request asked for (a second response to
            // one request): HTTP/1.1 cannot tell which request they belong
            // to, so the connection is not trusted for another exchange.
            self.drop_stream(ctx, false);
        }
        if self.stream.is_none() {
            let connect_start = Instant::now();
            match connect(ctx).await {
                Ok(stream) => {
                    let connect_time = connect_start.elapsed();
                    exchange.connect = Some(connect_time);
                    ctx.state
                        .connection_opened(self.server_closed, connect_time);
                    self.stream = Some(stream);
                    self.server_closed = false;
                }
                Err(kind) => {
                    exchange.result = Err(kind);
                    return exchange;
                }
            }
        }
        exchange.sent = Instant::now();
        let deadline = tokio::time::Instant::from_std(exchange.sent + ctx.timeout);
        let transfer = self.transfer(ctx, &mut exchange);
        match tokio::time::timeout_at(deadline, transfer).await {
            Ok(Ok((status, keep_alive))) => {
                exchange.result = Ok(status);
                self.served += 1;
                if !keep_alive || !ctx.keepalive {
                    // Only a close we did not plan for makes the next
                    // connection a reconnect.
                    self.drop_stream(ctx, ctx.keepalive);
                }
            }
            Ok(Err(kind)) => exchange.result = Err(kind),
            Err(_elapsed) => exchange.result = Err(ErrorKind::Timeout),
        }
        exchange
    }

    /// Writes the request and reads until the response is complete; returns
    /// the status and whether the connection may be reused.
    async fn transfer(
        &mut self,
        ctx: &ConnectionContext,
        exchange: &mut Exchange,
    ) -> Result<(u16, bool), ErrorKind> {
        let stream = self.stream.as_mut().expect("connected above");
        stream
            .write_all(&ctx.request)
            .await
            .map_err(|e| classify_io(&e))?;
        self.parser.reset();
        loop {
            if !self.buffer.pending().is_empty() {
                let (used, progress) = self
                    .parser
                    .advance(self.buffer.pending())
                    .map_err(response_error_kind)?;
                self.buffer.consume(used);
                if let ResponseProgress::Complete(done) = progress {
                    exchange.body_bytes = done.body_bytes;
                    return Ok((done.status, done.keep_alive));
                }
            }
            let read = stream.read(self.buffer.spare()).await;
            match read {
                Ok(0) => {
                    let done = self.parser.finish_on_close().map_err(response_error_kind)?;
                    exchange.body_bytes = done.body_bytes;
                    return Ok((done.status, false));
                }
                Ok(n) => {
                    if exchange.first_byte.is_none() {
                        exchange.first_byte = Some(Instant::now());
                    }
                    self.buffer.filled(n);
                    exchange.bytes_received += n as u64;
                }
                Err(e) => return Err(classify_io(&e)),
            }
        }
    }
}

fn response_error_kind(error: ResponseError) -> ErrorKind {
    match error {
        ResponseError::Malformed => ErrorKind::MalformedResponse,
        ResponseError::ClosedEarly => ErrorKind::ClosedEarly,
    }
}

async fn connect(ctx: &ConnectionContext) -> Result<TcpStream, ErrorKind> {
    let connecting = ctx.source_addrs.connect(ctx.addr);
    match tokio::time::timeout(ctx.connect_timeout, connecting).await {
        Ok(Ok(stream)) => {
            // Requests are written in one piece; Nagle would only delay bodies.
            let _ = stream.set_nodelay(true);
            Ok(stream)
        }
        Ok(Err(e)) => Err(classify_connect(&e)),
        Err(_elapsed) => Err(ErrorKind::ConnectTimeout),
    }
}
