//! HTTP/3 load (quinn + h3): `-c` QUIC connection slots per run, each with
//! `--streams` streams that send one request after another (the closed
//! model, per stream, as HTTP/2 does in h2_client.rs); the open model hands
//! due requests to idle streams (h3_open.rs). A request that finds its
//! connection gone opens a new one (h3_conn.rs); a failed handshake is
//! charged to the requests waiting on it. Over HTTP/3, `bytes_received`
//! counts DATA payload, as over HTTP/2 (QPACK-compressed headers are not
//! seen by the client).
//!
//! Per request: a clone-free send on the stream's own `SendRequest`, one
//! timeout timer per stream moved forward, and one look at the connection's
//! close reason; the rest is quinn's and h3's.

use crate::drive::closed::ActiveSlots;
use crate::drive::h3::h3_conn::{Cached, H3Context, QuicCell, Sender};
use crate::drive::h3::h3_errors::stream_failed;
use crate::plan::h2_request::H2Request;
use crate::worker::backoff::Backoff;
use crate::worker::context::ConnectionContext;
use crate::worker::request_log::LogFacts;
use bytes::Buf;
use stampede_metrics::{ErrorKind, Outcome};
use std::pin::Pin;
use std::rc::Rc;
use std::time::Instant;
use tokio::task::JoinHandle;
use tokio::time::Sleep;

/// How a request ended, for the stream's next step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    /// It was sent (whatever the answer).
    Sent,
    /// No connection could be opened for it: back off before the next.
    NoConnection,
}

/// Spawns the closed model's streams: `slots` connections × `--streams`.
pub(crate) fn spawn_closed(
    ctx: &Rc<ConnectionContext>,
    h3: &Rc<H3Context>,
    gate: &Rc<ActiveSlots>,
    slots: usize,
) -> Vec<JoinHandle<()>> {
    let mut handles = Vec::with_capacity(slots * h3.streams);
    for index in 0..slots {
        let cell = Rc::new(QuicCell::default());
        for stream in 0..h3.streams {
            // Each stream is a virtual user, numbered as over HTTP/2.
            let user = ctx.user_id((index * h3.streams + stream) as u32);
            let stream = run_closed_stream(
                ctx.clone(),
                h3.clone(),
                cell.clone(),
                gate.clone(),
                index,
                user,
            );
            handles.push(tokio::task::spawn_local(stream));
        }
    }
    handles
}

/// One stream of slot `index`, virtual user `user`: requests back to back
/// until the budget is spent; parked (and its connection closed with the
/// last) above the gate.
async fn run_closed_stream(
    ctx: Rc<ConnectionContext>,
    h3: Rc<H3Context>,
    cell: Rc<QuicCell>,
    gate: Rc<ActiveSlots>,
    index: usize,
    user: u64,
) {
    let timer = tokio::time::sleep(ctx.timeout);
    tokio::pin!(timer);
    let mut cached: Cached = None;
    let mut backoff = Backoff::default();
    loop {
        if !gate.is_active(index) {
            cached = None;
            cell.park(&ctx, h3.streams);
            gate.wait_until_active(index).await;
            cell.unpark();
        }
        if !ctx.state.claim_budget() {
            return;
        }
        ctx.state.begin_request();
        match request(&ctx, &h3, &cell, &mut cached, None, user, timer.as_mut()).await {
            End::Sent => backoff.succeeded(),
            End::NoConnection => {
                let delay = ctx.state.connect_backoff(&mut backoff);
                ctx.state.wait_out_backoff(delay).await;
            }
        }
    }
}

/// Sends one begun request of virtual user `user` on `cell`'s connection
/// (opening it if needed) and records how it ended. `scheduled`: the open
/// model's intended instant; the closed model's is when the connection was
/// ready.
pub(crate) async fn request(
    ctx: &ConnectionContext,
    h3: &H3Context,
    cell: &QuicCell,
    cached: &mut Cached,
    scheduled: Option<Instant>,
    user: u64,
    mut timer: Pin<&mut Sleep>,
) -> End {
    let target = ctx.next_target_index();
    // A GOAWAY found before the request left is no failure: the request
    // goes on a new connection, as HTTP/1.1's does after a server's close.
    let mut goaway_retries = 1;
    let (intended, sent, generation, answer) = loop {
        let ready = cell.ready(ctx, h3, cached).await;
        let intended = scheduled.unwrap_or_else(Instant::now);
        let (generation, sender) = match (ready, cached.as_mut()) {
            (Ok(()), Some((generation, sender))) => (*generation, sender),
            (ready, _) => {
                let (kind, reason) = match ready {
                    Err(failure) => (failure.kind, failure.reason),
                    Ok(()) => (ErrorKind::Other, "HTTP/3: no sender".into()),
                };
                ctx.state.sample_error(kind, || reason);
                let outcome = ended(intended, intended, None, Err(kind), 0, target);
                ctx.book(&outcome, facts(user));
                return End::NoConnection;
            }
        };
        let sent = Instant::now();
        timer
            .as_mut()
            .reset(tokio::time::Instant::from_std(sent + ctx.timeout));
        let answer = {
            let exchange = exchange(sender, h3.request(target), ctx.decode);
            tokio::pin!(exchange);
            tokio::select! {
                biased;
                answer = &mut exchange => Some(answer),
                () = &mut timer => None,
            }
        };
        match answer {
            Some(Err(Failed::NotSent)) if goaway_retries > 0 => {
                goaway_retries -= 1;
                cell.going_away(ctx, generation);
                *cached = None;
            }
            answer => break (intended, sent, generation, answer),
        }
    };
    let (result, first_byte, body) = match answer {
        Some(Ok((status, first_byte, body, decoded))) => (
            ctx.settle_stream_decoding(intended, status, decoded),
            Some(first_byte),
            body,
        ),
        Some(Err(Failed::NotSent)) => {
            let reason = "the server is closing the connection (GOAWAY) and the next one did too";
            ctx.state.sample_error(ErrorKind::GoAway, || reason.into());
            cell.going_away(ctx, generation);
            *cached = None;
            (Err(ErrorKind::GoAway), None, 0)
        }
        Some(Err(Failed::Stream(error))) => {
            let (failure, broken) = stream_failed(&error, cell.close_reason());
            if broken {
                cell.retire(ctx, generation);
                *cached = None;
            }
            ctx.state.sample_error(failure.kind, || failure.reason);
            (Err(failure.kind), None, 0)
        }
        None => (Err(ErrorKind::Timeout), None, 0),
    };
    if !h3.keepalive {
        cell.retire(ctx, generation);
        *cached = None;
    }
    let outcome = ended(intended, sent, first_byte, result, body, target);
    ctx.book(&outcome, facts(user));
    End::Sent
}

/// How request `target` ended now.
fn ended(
    intended: Instant,
    sent: Instant,
    first_byte: Option<Instant>,
    result: Result<u16, ErrorKind>,
    body: u64,
    target: usize,
) -> Outcome {
    Outcome {
        intended,
        sent,
        first_byte,
        done: Instant::now(),
        result,
        bytes_received: body,
        body_bytes: body,
        target: target as u16,
        // Checks are the HTTP/1.1 paths' for now.
        judged: None,
    }
}

/// What `user`'s request's log line needs (booking.rs): no connect time,
/// as QUIC's connect is its TLS handshake, which the log's connect leaves
/// out; no rendered request, as HTTP/3 sends fixed requests.
fn facts(user: u64) -> LogFacts<'static> {
    LogFacts {
        connect: None,
        user,
        rendered: None,
    }
}

/// Why an exchange failed.
enum Failed {
    /// The server had sent GOAWAY: the request was not sent.
    NotSent,
    Stream(h3::error::StreamError),
}

impl From<h3::error::StreamError> for Failed {
    fn from(error: h3::error::StreamError) -> Failed {
        Failed::Stream(error)
    }
}

/// A body's decoded length and whether it came encoded, or why it did not decode.
type Decoded = Result<(u64, bool), crate::http1::DecodeError>;

/// Sends one request and reads its whole response: the status, when the
/// response headers arrived, the body length and, with `decode`
/// (`--decode`), its decoded length or why it did not decode.
async fn exchange(
    sender: &mut Sender,
    request: &H2Request,
    decode: bool,
) -> Result<(u16, Instant, u64, Option<Decoded>), Failed> {
    let mut message = http::Request::new(());
    *message.method_mut() = request.method.clone();
    *message.uri_mut() = request.uri.clone();
    *message.headers_mut() = request.headers.clone();
    let mut stream = match sender.send_request(message).await {
        Ok(stream) => stream,
        Err(h3::error::StreamError::RemoteClosing { .. }) => return Err(Failed::NotSent),
        Err(other) => return Err(other.into()),
    };
    if !request.body.is_empty() {
        stream.send_data(request.body.clone()).await?;
    }
    stream.finish().await?;
    let response = stream.recv_response().await?;
    let first_byte = Instant::now();
    let mut count = decode.then(|| crate::http1::DecodedCount::new(response.headers()));
    let mut length = 0u64;
    while let Some(mut chunk) = stream.recv_data().await? {
        length += chunk.remaining() as u64;
        if let Some(count) = &mut count {
            while chunk.has_remaining() {
                let piece = chunk.chunk();
                let n = piece.len();
                count.data(piece);
                chunk.advance(n);
            }
        }
    }
    let decoded = count.map(crate::http1::DecodedCount::end);
    Ok((response.status().as_u16(), first_byte, length, decoded))
}
