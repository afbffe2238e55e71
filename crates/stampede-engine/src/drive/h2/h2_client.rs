//! HTTP/2 load (the `h2` crate): each connection slot opens a connection
//! (ALPN h2 over TLS, prior knowledge over plain TCP), then keeps `--streams`
//! requests in flight on it, each stream sending its next request as soon as
//! the last one ends (the closed model, per stream). RST_STREAM and GOAWAY
//! are error classes of their own, except where the server never processed
//! the request (a graceful GOAWAY, a refused stream, a connection closed
//! before the request left: `H2Failure::unprocessed`, outcome_class.rs):
//! such a request goes again, once — on the same connection when only its
//! stream was refused, else as the first request of a stream on the next
//! connection, which counts as a reconnect (the server closed the last one,
//! as over HTTP/1.1). It stays one request (in flight meanwhile, its clock
//! running from the first try). Over HTTP/2, `bytes_received` counts DATA
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

use crate::drive::closed::ActiveSlots;
use crate::drive::h2::h2_conn_end::{ConnectionEnd, Retry};
use crate::drive::h2::h2_handshake::handshake;
use crate::drive::h2::h2_redirects::Chain;
use crate::drive::h2::h2_side::SideLink;
use crate::drive::h2::h2_stream::send_stream;
use crate::drive::h2::h2_watch::H2Watch;
use crate::net::outcome_class::{classify_h2, not_h2_hint};
use crate::plan::h2_request::{H2Context, H2Request};
use crate::worker::context::ConnectionContext;
use crate::worker::request_log::LogFacts;
use bytes::Bytes;
use h2::client::SendRequest;
use stampede_metrics::{ErrorKind, Outcome};
use std::rc::Rc;
use std::time::{Duration, Instant};

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
    let mut backoff = crate::worker::backoff::Backoff::default();
    // A workload's virtual users, one per stream (h2_workload.rs).
    let mut users = crate::drive::h2::h2_workload::users_of(&ctx, index, h2ctx.streams);
    // Each user's batch to finish on the next connection (h2_workload.rs),
    // one place per user; and the plain loop's requests to send again,
    // empty (no allocation) until a server closes a connection under them.
    let mut resumes: Vec<Option<crate::drive::h2::h2_workload::Resume>> = Vec::new();
    let mut retries: Vec<Retry> = Vec::new();
    loop {
        // A request carried over is in flight already: it goes out even
        // while the gate parks this slot.
        let carried = crate::drive::h2::h2_workload::first_resumed(&users, &resumes)
            .or(retries.first().copied());
        if carried.is_none() {
            gate.wait_until_active(index).await;
            let all_done = !users.is_empty() && users.iter().all(|u| u.is_done());
            if !ctx.state.has_budget() || all_done {
                return;
            }
        }
        // A failed connect is charged to the request carried over, else to a
        // new one of the user whose step it fails (h2_workload.rs), or of
        // the slot's first stream.
        let charged = carried.map(|retry| retry.user).unwrap_or_else(|| {
            crate::drive::h2::h2_workload::charged_user(&users)
                .unwrap_or_else(|| ctx.user_id((index * h2ctx.streams) as u32))
        });
        let (sender, connect) = match open(&ctx, reconnect, carried, charged).await {
            Ok(opened) => opened,
            Err(kind) => {
                if carried.is_some() {
                    // The connect's failure was that request's second try.
                    if retries.is_empty() {
                        crate::drive::h2::h2_workload::charge_failed_resume(
                            &ctx,
                            &mut users,
                            &mut resumes,
                            kind,
                        );
                    } else {
                        retries.remove(0);
                    }
                } else {
                    // The failed request was a user's step, which its group's
                    // on_error and iterations count as on HTTP/1.1.
                    crate::drive::h2::h2_workload::charge_failed_connect(&ctx, &mut users);
                }
                // A connection (or its handshake) failed: wait before the next
                // attempt, as on HTTP/1.1 (backoff.rs).
                ctx.state
                    .wait_out_backoff(ctx.state.connect_backoff(&mut backoff))
                    .await;
                continue;
            }
        };
        backoff.succeeded();
        if std::mem::take(&mut retired) {
            ctx.state.planned_reconnect();
        }
        let life = Rc::new(ctx.lifetime.multiplexed(Instant::now()));
        let end = Rc::new(ConnectionEnd::opened(connect));
        if !users.is_empty() {
            resumes.resize_with(users.len(), || None);
            let tasks: Vec<_> = users
                .drain(..)
                .zip(resumes.drain(..))
                .map(|(user, resume)| {
                    let task = crate::drive::h2::h2_workload::run_user_stream(
                        ctx.clone(),
                        h2ctx.clone(),
                        gate.clone(),
                        index,
                        sender.clone(),
                        end.clone(),
                        user,
                        resume,
                    );
                    tokio::task::spawn_local(task)
                })
                .collect();
            for task in tasks {
                // A task that panicked takes its user with it.
                if let Ok((user, resume)) = task.await {
                    users.push(user);
                    resumes.push(resume);
                }
            }
            drop(sender);
            ctx.state.connection_closed();
            reconnect = end.successor_is_reconnect();
            if !ctx.state.has_budget() && resumes.iter().all(Option::is_none) {
                return;
            }
            continue;
        }
        let mut carried = retries.drain(..);
        let streams: Vec<_> = (0..h2ctx.streams)
            .map(|stream| {
                // Each stream is a virtual user, numbered as over a workload
                // (h2_workload::users_of).
                let user = ctx.user_id((index * h2ctx.streams + stream) as u32);
                let task = run_stream(
                    ctx.clone(),
                    h2ctx.clone(),
                    gate.clone(),
                    index,
                    user,
                    sender.clone(),
                    end.clone(),
                    life.clone(),
                    carried.next(),
                );
                tokio::task::spawn_local(task)
            })
            .collect();
        drop(carried);
        for stream in streams {
            retries.extend(stream.await.ok().flatten());
        }
        drop(sender);
        ctx.state.connection_closed();
        retired = life.is_retired() && !end.is_broken();
        reconnect = end.successor_is_reconnect() && !retired;
        if !ctx.state.has_budget() && retries.is_empty() {
            return;
        }
    }
}

/// Opens a connection and does the HTTP/2 handshake; Ok: its sender and its
/// connect time. A failure is charged to one request (so that a dead target
/// shows as errors, as over HTTP/1.1) of virtual user `user`: `carried`
/// (intended instant, target), a request begun on the last connection and
/// waiting to go again, or else a new one. Err: the failure's class.
pub(crate) async fn open(
    ctx: &ConnectionContext,
    reconnect: bool,
    carried: Option<Retry>,
    user: u64,
) -> Result<(SendRequest<Bytes>, Duration), ErrorKind> {
    let failed = |kind: ErrorKind, reason: Option<String>, start: Instant| {
        let (intended, target) = match carried {
            Some(retry) => (retry.intended, retry.target),
            None if ctx.state.claim_budget() => {
                ctx.state.begin_request();
                (start, 0)
            }
            None => return,
        };
        if let Some(reason) = reason {
            ctx.state.sample_error(kind, || reason);
        }
        let now = Instant::now();
        let outcome = Outcome {
            intended,
            sent: now,
            first_byte: None,
            done: now,
            result: Err(kind),
            bytes_received: 0,
            body_bytes: 0,
            target: target as u16,
            judged: None,
        };
        let facts = LogFacts {
            connect: None,
            user,
            rendered: None,
        };
        ctx.book(&outcome, facts);
    };
    let start = Instant::now();
    match handshake(ctx, &ctx.connector, reconnect).await {
        Ok(opened) => Ok(opened),
        Err((kind, reason)) => {
            failed(kind, reason, start);
            Err(kind)
        }
    }
}

/// One stream of slot `index`, virtual user `user`: sends requests one after
/// another until the budget is spent, the gate closes this slot, or the
/// connection breaks; `retry` first, a request the last connection's server
/// never processed. Returns a request to send again on the next connection.
#[allow(clippy::too_many_arguments)]
async fn run_stream(
    ctx: Rc<ConnectionContext>,
    h2ctx: Rc<H2Context>,
    gate: Rc<ActiveSlots>,
    index: usize,
    user: u64,
    mut sender: SendRequest<Bytes>,
    end: Rc<ConnectionEnd>,
    life: Rc<crate::plan::conn_lifetime::Multiplexed>,
    mut retry: Option<Retry>,
) -> Option<Retry> {
    // One timer for the stream's life: each request moves its deadline later,
    // which tokio does without touching the timer wheel.
    let timeout = tokio::time::sleep(ctx.timeout);
    tokio::pin!(timeout);
    // Redirects to another origin go on the stream's side connection.
    let mut side = SideLink::default();
    while !end.is_broken() {
        // A request goes again once (`again`); it was begun and claimed at
        // its first try, and keeps that try's intended instant.
        let (target, intended, again) = match retry.take() {
            Some(retry) => {
                let _ = life.begin();
                (retry.target, retry.intended, true)
            }
            None => {
                if !gate.is_active(index) || !life.begin() {
                    break;
                }
                if !ctx.state.claim_budget() {
                    life.take_back();
                    break;
                }
                ctx.state.begin_request();
                (ctx.next_target_index(), Instant::now(), false)
            }
        };
        let request = &h2ctx.requests[target.min(h2ctx.requests.len() - 1)];
        let tried = try_request(
            &ctx,
            &mut sender,
            &mut side,
            &end,
            timeout.as_mut(),
            request,
            Retry {
                target,
                intended,
                user,
            },
            intended,
            again,
        );
        if let Tried::Unprocessed(again) = tried.await {
            // Never processed: not an outcome yet, it goes again.
            retry = Some(again);
        }
    }
    retry
}

/// How one try of a request ended.
pub(crate) enum Tried {
    /// Its outcome is booked.
    Booked,
    /// The server never processed it (a first try): not an outcome yet, it
    /// may go again, as this request.
    Unprocessed(Retry),
}

/// One try of `request` (of `job`: its target, intended instant and user)
/// on `sender` (a hop to another origin on `side`, h2_side.rs), its
/// deadline `timeout` moved to the try's start plus the
/// run's timeout: the one way every HTTP/2 path sends and books a request
/// (the closed model's streams, the open model's, h2_open.rs). `sent`: when
/// the request left its queue (the intended instant in the closed model;
/// later in the open model when it waited in the backlog), where its
/// service time starts. A second try (`again`) is booked whatever its end.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn try_request(
    ctx: &ConnectionContext,
    sender: &mut SendRequest<Bytes>,
    side: &mut SideLink,
    end: &ConnectionEnd,
    mut timeout: std::pin::Pin<&mut tokio::time::Sleep>,
    request: &H2Request,
    job: Retry,
    sent: Instant,
    again: bool,
) -> Tried {
    let Retry {
        target,
        intended,
        user,
    } = job;
    // A second try gets the whole timeout again (a first try's clock runs
    // from its send: no further clock read per request).
    let start = if again { Instant::now() } else { sent };
    timeout
        .as_mut()
        .reset(tokio::time::Instant::from_std(start + ctx.timeout));
    // `--sse`: the request's body watched as a stream of events; outside
    // the exchange, which the timer (`--sse-for`) may drop mid-body.
    let mut watch = ctx.stream.watch.then(H2Watch::default);
    let exchange = {
        let exchange = send_stream(ctx, sender, side, request, target, watch.as_mut());
        tokio::pin!(exchange);
        tokio::select! {
            biased;
            answer = &mut exchange => Some(answer),
            () = &mut timeout => None,
        }
    };
    let timed_out = exchange.is_none();
    let ended = match exchange {
        Some(Ok(Chain::Answer(answer))) => (
            ctx.settle_stream_decoding(intended, answer.status, answer.decoded),
            Some(answer.first_byte),
            answer.body,
        ),
        Some(Ok(Chain::Refused(kind))) => (Err(kind), None, 0),
        Some(Err((e, sent))) => {
            let kind = classify_h2(&e);
            let answered = watch.as_ref().is_some_and(H2Watch::answered);
            if end.failed(&e, sent, kind) && !again && !answered {
                return Tried::Unprocessed(job);
            }
            ctx.state
                .sample_error(kind, || format!("{e}{}", not_h2_hint(&e)));
            (Err(kind), None, 0)
        }
        None => (Err(ErrorKind::Timeout), None, 0),
    };
    let (result, first_byte, body_bytes) = match &watch {
        Some(watch) => watch.ended(ctx, timed_out, ended),
        None => ended,
    };
    let outcome = Outcome {
        intended,
        sent,
        first_byte,
        done: Instant::now(),
        result,
        bytes_received: body_bytes,
        body_bytes,
        target: target as u16,
        judged: None,
    };
    if let Some(watch) = &watch {
        watch.book(ctx, &outcome);
    }
    let facts = LogFacts {
        connect: end.take_connect(sender, &ctx.state),
        user,
        rendered: None,
    };
    ctx.book(&outcome, facts);
    Tried::Booked
}
