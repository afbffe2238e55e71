//! HTTP/2 load (the `h2` crate): each connection slot opens a connection
//! (ALPN h2 over TLS, prior knowledge over plain TCP), then keeps `--streams`
//! requests in flight on it, each stream sending its next request as soon as
//! the last one ends (the closed model, per stream). RST_STREAM and GOAWAY
//! are error classes of their own. Over HTTP/2, `bytes_received` counts DATA
//! payload (HPACK-compressed headers are not seen by the client). A
//! connection whose lifetime is over (conn_lifetime.rs) opens no further
//! stream, lets those in flight finish, and is replaced (a planned reconnect).
//!
//! Per request the hot path does as little as the `h2` crate allows (issue
//! 17): each stream keeps its own `SendRequest` (a clone or a drop locks the
//! connection's stream table), one timeout timer per stream is moved forward
//! rather than registered anew (tokio extends a pending timer in place), the
//! end of a response body is seen from the last DATA frame without a further
//! poll, and the windows are large so WINDOW_UPDATE frames are rare.

use crate::closed::ActiveSlots;
use crate::connection::ConnectionContext;
use crate::h2_request::{H2Context, H2Request};
use crate::http1::DecodedCount;
use crate::outcome_class::classify_h2;
use bytes::Bytes;
use h2::client::SendRequest;
use stampede_metrics::{ErrorKind, Outcome};
use std::cell::Cell;
use std::future::poll_fn;
use std::rc::Rc;
use std::time::Instant;

/// Flow-control windows this client announces. h2load announces 2^30 − 1 for
/// both; with the 64 KiB default the connection window is topped up by a
/// WINDOW_UPDATE about every 32 KiB received (every ~60 small responses).
/// The stream window stays moderate: a slow reader never has more than this
/// buffered per stream.
const STREAM_WINDOW: u32 = 16 << 20;
const CONNECTION_WINDOW: u32 = (1 << 30) - 1;

/// One HTTP/2 connection slot: connect, run its streams until the budget is
/// spent or the connection fails, reconnect; park while above the gate.
pub(crate) async fn run_h2_slot(
    ctx: Rc<ConnectionContext>,
    h2ctx: Rc<H2Context>,
    gate: Rc<ActiveSlots>,
    index: usize,
) {
    let mut reconnect = false;
    let mut retired = false;
    let mut backoff = crate::backoff::Backoff::default();
    // A workload's virtual users, one per stream (h2_workload.rs).
    let mut users = crate::h2_workload::users_of(&ctx, index, h2ctx.streams);
    loop {
        gate.wait_until_active(index).await;
        let all_done = !users.is_empty() && users.iter().all(|u| u.is_done());
        if !ctx.state.has_budget() || all_done {
            return;
        }
        let Some(sender) = open(&ctx, reconnect).await else {
            // The failed request was a user's step, which its group's
            // on_error and iterations count as on HTTP/1.1.
            crate::h2_workload::charge_failed_connect(&ctx, &mut users);
            // A connection (or its handshake) failed: wait before the next
            // attempt, as on HTTP/1.1 (backoff.rs).
            ctx.state
                .wait_out_backoff(ctx.state.connect_backoff(&mut backoff))
                .await;
            continue;
        };
        backoff.succeeded();
        if std::mem::take(&mut retired) {
            ctx.state.planned_reconnect();
        }
        let life = Rc::new(ctx.lifetime.multiplexed(Instant::now()));
        let broken = Rc::new(Cell::new(false));
        if !users.is_empty() {
            let tasks: Vec<_> = users
                .drain(..)
                .map(|user| {
                    let task = crate::h2_workload::run_user_stream(
                        ctx.clone(),
                        h2ctx.clone(),
                        gate.clone(),
                        index,
                        sender.clone(),
                        broken.clone(),
                        user,
                    );
                    tokio::task::spawn_local(task)
                })
                .collect();
            for task in tasks {
                // A task that panicked takes its user with it.
                users.extend(task.await.ok());
            }
            drop(sender);
            ctx.state.connection_closed();
            reconnect = !broken.get();
            if !ctx.state.has_budget() {
                return;
            }
            continue;
        }
        let streams: Vec<_> = (0..h2ctx.streams)
            .map(|_| {
                let task = run_stream(
                    ctx.clone(),
                    h2ctx.clone(),
                    gate.clone(),
                    index,
                    sender.clone(),
                    broken.clone(),
                    life.clone(),
                );
                tokio::task::spawn_local(task)
            })
            .collect();
        for stream in streams {
            let _ = stream.await;
        }
        drop(sender);
        ctx.state.connection_closed();
        retired = life.is_retired() && !broken.get();
        reconnect = !broken.get() && !retired;
        if !ctx.state.has_budget() {
            return;
        }
    }
}

/// Opens a connection and does the HTTP/2 handshake. A failure is charged to
/// one request (so that a dead target shows as errors, as over HTTP/1.1).
async fn open(ctx: &ConnectionContext, reconnect: bool) -> Option<SendRequest<Bytes>> {
    let failed = |kind: ErrorKind, reason: Option<String>, intended: Instant| {
        if !ctx.state.claim_budget() {
            return;
        }
        ctx.state.begin_request();
        if let Some(reason) = reason {
            ctx.state.sample_error(kind, || reason);
        }
        let now = Instant::now();
        ctx.state.end_request(&Outcome {
            intended,
            sent: now,
            first_byte: None,
            done: now,
            result: Err(kind),
            bytes_received: 0,
            body_bytes: 0,
            target: 0,
            judged: None,
        });
    };
    let start = Instant::now();
    ctx.state.connect_attempt();
    let (stream, times) = match ctx.connector.connect().await {
        Ok(opened) => opened,
        Err(failure) => {
            failed(failure.kind, failure.reason, start);
            return None;
        }
    };
    ctx.state.connection_opened(reconnect, times.connect);
    if let Some(handshake) = times.tls {
        ctx.state.tls_handshake(times.connect, handshake);
    }
    let handshake = h2::client::Builder::new()
        .initial_window_size(STREAM_WINDOW)
        .initial_connection_window_size(CONNECTION_WINDOW)
        .handshake(stream);
    match handshake.await {
        Ok((sender, connection)) => {
            tokio::task::spawn_local(async move {
                let _ = connection.await;
            });
            Some(sender)
        }
        Err(e) => {
            ctx.state.connection_closed();
            failed(
                classify_h2(&e),
                Some(format!("HTTP/2 handshake: {e}")),
                start,
            );
            None
        }
    }
}

/// One stream: sends requests one after another until the budget is spent,
/// the gate closes this slot, or the connection breaks.
async fn run_stream(
    ctx: Rc<ConnectionContext>,
    h2ctx: Rc<H2Context>,
    gate: Rc<ActiveSlots>,
    index: usize,
    mut sender: SendRequest<Bytes>,
    broken: Rc<Cell<bool>>,
    life: Rc<crate::conn_lifetime::Multiplexed>,
) {
    // One timer for the stream's life: each request moves its deadline later,
    // which tokio does without touching the timer wheel.
    let timeout = tokio::time::sleep(ctx.timeout);
    tokio::pin!(timeout);
    while !broken.get() && gate.is_active(index) && life.begin() {
        if !ctx.state.claim_budget() {
            life.take_back();
            break;
        }
        ctx.state.begin_request();
        let target = ctx.next_target_index();
        let request = &h2ctx.requests[target.min(h2ctx.requests.len() - 1)];
        let intended = Instant::now();
        timeout
            .as_mut()
            .reset(tokio::time::Instant::from_std(intended + ctx.timeout));
        let exchange = send(&mut sender, request, ctx.decode);
        tokio::pin!(exchange);
        let exchange = tokio::select! {
            biased;
            answer = &mut exchange => Some(answer),
            () = &mut timeout => None,
        };
        let (result, first_byte, body_bytes) = match exchange {
            Some(Ok((status, first_byte, body, decoded))) => (
                ctx.settle_stream_decoding(intended, status, decoded),
                Some(first_byte),
                body,
            ),
            Some(Err(e)) => {
                let kind = classify_h2(&e);
                if kind != ErrorKind::StreamReset {
                    broken.set(true);
                }
                ctx.state.sample_error(kind, || e.to_string());
                (Err(kind), None, 0)
            }
            None => (Err(ErrorKind::Timeout), None, 0),
        };
        ctx.state.end_request(&Outcome {
            intended,
            sent: intended,
            first_byte,
            done: Instant::now(),
            result,
            bytes_received: body_bytes,
            body_bytes,
            target: target as u16,
            judged: None,
        });
    }
}

/// Sends one request and reads its whole response; returns the status, when
/// the response headers arrived, the body length and, with `decode`
/// (`--decode`), its decoded length or why it did not decode.
async fn send(
    sender: &mut SendRequest<Bytes>,
    request: &H2Request,
    decode: bool,
) -> Result<(u16, Instant, u64, Option<Decoded>), h2::Error> {
    // Waits while the server's stream limit holds back an earlier request of
    // this stream's sender.
    poll_fn(|cx| sender.poll_ready(cx)).await?;
    let mut builder = http::Request::builder()
        .method(request.method.clone())
        .uri(request.uri.clone());
    if let Some(headers) = builder.headers_mut() {
        *headers = request.headers.clone();
    }
    let message = builder.body(()).expect("parts were validated in prepare");
    let no_body = request.body.is_empty();
    let (response, mut body_stream) = sender.send_request(message, no_body)?;
    if !no_body {
        body_stream.send_data(request.body.clone(), true)?;
    }
    let response = response.await?;
    let first_byte = Instant::now();
    let status = response.status().as_u16();
    let mut count = decode.then(|| DecodedCount::new(response.headers()));
    let mut body = response.into_body();
    let mut length = 0u64;
    while let Some(chunk) = body.data().await {
        let chunk = chunk?;
        length += chunk.len() as u64;
        if let Some(count) = &mut count {
            count.data(&chunk);
        }
        // Return the flow-control window so the server keeps sending.
        let _ = body.flow_control().release_capacity(chunk.len());
        if body.is_end_stream() {
            // The frame carried END_STREAM: no need to poll for the end.
            break;
        }
    }
    Ok((status, first_byte, length, count.map(DecodedCount::end)))
}

/// A body's decoded length and whether it came encoded, or why it did not decode.
type Decoded = Result<(u64, bool), crate::http1::DecodeError>;
