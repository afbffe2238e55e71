//! A workload over HTTP/2 (templates, feeders, checks, extractors, scenario
//! steps): each stream of a connection slot is one virtual user, with the
//! same [`UserSession`] the HTTP/1.1 paths keep. The session renders the
//! user's next request in HTTP/1.1 form, as everywhere; here it is read
//! back into HTTP/2's parts (h2_request.rs) and sent on the stream, and the
//! response's status, header fields and body (up to `--capture-max`) are
//! judged by the session's checks and extractors. An encoded body
//! (`Content-Encoding`) is decoded as its DATA arrives, so the checks see
//! it decoded, as over HTTP/1.1, and `--decode` counts it here too. A fixed request (no
//! template, no cookie jar) is sent in its pre-built HTTP/2 form. Runs
//! without a workload never come here (h2_client.rs keeps its lean loop).

use crate::closed::ActiveSlots;
use crate::connection::ConnectionContext;
use crate::h2_request::{from_rendered, next_rendered, H2Context, H2Request};
use crate::http1::DecodedCount;
use crate::outcome_class::classify_h2;
use crate::workload::{Answer, UserSession, WorkerWorkload};
use bytes::Bytes;
use h2::client::SendRequest;
use stampede_metrics::{ErrorKind, Outcome};
use std::cell::Cell;
use std::future::poll_fn;
use std::rc::Rc;
use std::time::Instant;

/// The users of one HTTP/2 connection slot, one per stream: they outlive
/// its connections (a reconnect goes on with the same users).
pub(crate) fn users_of(ctx: &ConnectionContext, slot: usize, streams: usize) -> Vec<UserSession> {
    let Some(work) = &ctx.workload else {
        return Vec::new();
    };
    (0..streams)
        .map(|stream| {
            let number = (slot * streams + stream) as u32;
            work.new_user(ctx.user_id(number))
        })
        .collect()
}

/// A connect that failed was charged as one failed request (h2_client.rs):
/// it is the step of the first user not done yet, so that its group's
/// `on_error` and `iterations` see it as over HTTP/1.1.
pub(crate) fn charge_failed_connect(ctx: &ConnectionContext, users: &mut [UserSession]) {
    let Some(work) = &ctx.workload else {
        return;
    };
    if let Some(user) = users.iter_mut().find(|u| !u.is_done()) {
        user.advance(work, true, false);
        if work.stopped_run() {
            ctx.state.stop_sending();
        }
    }
}

/// A response as the checks see it.
struct Kept {
    status: u16,
    first_byte: Instant,
    /// Header fields, as the `h2` crate hands them (lowercase names).
    headers: http::HeaderMap,
    /// The body, decoded, up to `--capture-max`, when a check or extractor
    /// reads it.
    body: Vec<u8>,
    body_bytes: u64,
    /// With a body check or `--decode`: its decoded length and whether it
    /// came encoded, or why it did not decode.
    decoded: Option<Result<(u64, bool), crate::http1::DecodeError>>,
}

/// One stream's user: sends its requests one after another until the
/// budget is spent, the gate closes the slot, the connection breaks or the
/// user is done; hands the user back for the next connection.
pub(crate) async fn run_user_stream(
    ctx: Rc<ConnectionContext>,
    h2ctx: Rc<H2Context>,
    gate: Rc<ActiveSlots>,
    index: usize,
    mut sender: SendRequest<Bytes>,
    broken: Rc<Cell<bool>>,
    mut user: UserSession,
) -> UserSession {
    let Some(work) = &ctx.workload else {
        return user;
    };
    // A script's response() reads every response's headers and body.
    let keep_body = work.spec.keeps_body() || work.script_reads_responses();
    while !broken.get() && gate.is_active(index) && !user.is_done() && ctx.state.claim_budget() {
        ctx.state.begin_request();
        let intended = Instant::now();
        let target = user.next_target(work, || ctx.next_target_index());
        let fixed = ctx.request_of(target).0;
        if let Err(not) = user.prepare(work, target, fixed, || work.spec.sequence.next()) {
            ctx.state.not_prepared(intended, not);
            return user;
        }
        ctx.count_batch(Some(&mut user));
        let fixed_form = &h2ctx.requests[target.min(h2ctx.requests.len() - 1)];
        let requests = match rendered_requests(&user, &h2ctx.requests[0]) {
            None => vec![std::borrow::Cow::Borrowed(fixed_form)],
            Some(Ok(requests)) => requests.into_iter().map(std::borrow::Cow::Owned).collect(),
            Some(Err(reason)) => {
                // Rendered by the session itself (or checked when a script
                // returned it): only a value HTTP/2's header rules refuse
                // gets here; shown, not hidden.
                ctx.state.sample_error(ErrorKind::Other, || reason);
                // Every request of the batch was counted (count_batch).
                for _ in 0..user.requests {
                    record(
                        &ctx,
                        intended,
                        None,
                        Err(ErrorKind::Other),
                        target,
                        None,
                        &user,
                    );
                }
                user.advance(work, true, false);
                continue;
            }
        };
        let limit = if keep_body { work.spec.capture_max } else { 0 };
        // A script's request() may return several requests (pipelined over
        // HTTP/1.1): each is a stream of its own here, sent one after
        // another, all intended at the same instant (and counted by
        // count_batch, each from the budget).
        let mut failed = false;
        let mut restart = false;
        for (i, request) in requests.iter().enumerate() {
            let exchange = send_keeping(&mut sender, request, limit, ctx.decode);
            let answered = tokio::time::timeout(ctx.timeout_of(target), exchange).await;
            let (result, kept) = match answered {
                Ok(Ok(mut kept)) => match settle_decoding(&ctx, intended, &mut kept) {
                    Ok(status) => (Ok(status), Some(kept)),
                    // Not judged, as over HTTP/1.1: the checks never saw the body.
                    Err(kind) => (Err(kind), Some(kept)),
                },
                Ok(Err(e)) => {
                    let kind = classify_h2(&e);
                    if kind != ErrorKind::StreamReset {
                        broken.set(true);
                    }
                    ctx.state.sample_error(kind, || e.to_string());
                    (Err(kind), None)
                }
                Err(_) => (Err(ErrorKind::Timeout), None),
            };
            match (&kept, result) {
                (Some(kept), Ok(_)) => {
                    let judgement = judge(work, &mut user, target, intended, kept, &ctx);
                    record(
                        &ctx,
                        intended,
                        Some(kept),
                        result,
                        target,
                        judgement.judged,
                        &user,
                    );
                    failed |= judgement.failed;
                    restart |= judgement.restart;
                }
                _ => {
                    record(&ctx, intended, kept.as_ref(), result, target, None, &user);
                    failed = true;
                }
            }
            if let (true, Err(kind)) = (broken.get(), result) {
                // The rest of the batch is never sent: its requests end as
                // the connection's failure, so begun and ended stay equal.
                for _ in i + 1..requests.len() {
                    record(&ctx, intended, None, Err(kind), target, None, &user);
                }
                break;
            }
        }
        let think = user.advance(work, failed, restart);
        if work.script_stopped() || work.stopped_run() {
            ctx.state.stop_sending();
        }
        if let Some(think) = pause(think) {
            tokio::time::sleep(think).await;
        }
    }
    user
}

/// The pause to sleep before the user's next request, if any: a zero
/// think time (a script's `delay()` returning 0) does not sleep, since
/// tokio's timer would round it up to its next tick (1 ms per request).
fn pause(think: Option<std::time::Duration>) -> Option<std::time::Duration> {
    think.filter(|think| !think.is_zero())
}

/// The user's rendered request(s) in HTTP/2 form, or None when the fixed
/// request goes out. A script's `request()` may have returned several
/// (`user.requests`), each read from where the last one ended.
fn rendered_requests(
    user: &UserSession,
    base: &H2Request,
) -> Option<Result<Vec<H2Request>, String>> {
    let bytes = user.rendered()?;
    if user.requests <= 1 {
        return Some(from_rendered(bytes, base).map(|request| vec![request]));
    }
    let mut requests = Vec::with_capacity(user.requests);
    let mut at = 0;
    while at < bytes.len() && requests.len() < user.requests {
        match next_rendered(&bytes[at..], base) {
            Ok((request, taken)) => {
                requests.push(request);
                at += taken.max(1);
            }
            Err(reason) => return Some(Err(reason)),
        }
    }
    Some(Ok(requests))
}

/// Counts a body's decoded bytes with `--decode`; a body that did not
/// decode is the `undecodable_body` error, with or without `--decode`.
fn settle_decoding(
    ctx: &ConnectionContext,
    intended: Instant,
    kept: &mut Kept,
) -> Result<u16, ErrorKind> {
    match kept.decoded.take() {
        Some(Err(why)) => {
            ctx.state
                .sample_error(ErrorKind::UndecodableBody, || why.to_string());
            Err(ErrorKind::UndecodableBody)
        }
        decoded if ctx.decode => ctx.settle_stream_decoding(intended, kept.status, decoded),
        _ => Ok(kept.status),
    }
}

/// Judges a complete response: the script's `response()`, the step's
/// checks and extractors. The user moves on once its request (or a
/// script's batch of them) is over.
fn judge(
    work: &WorkerWorkload,
    user: &mut UserSession,
    target: usize,
    intended: Instant,
    kept: &Kept,
    ctx: &ConnectionContext,
) -> crate::workload::Judgement {
    let fields: Vec<(&[u8], &[u8])> = kept
        .headers
        .iter()
        .map(|(name, value)| (name.as_str().as_bytes(), value.as_bytes()))
        .collect();
    let answer = Answer {
        status: kept.status,
        body_bytes: kept.body_bytes,
        elapsed: intended.elapsed(),
    };
    let mut recorder = ctx.state.recorder.borrow_mut();
    user.judge_fields(work, target, answer, &fields, &kept.body, &mut recorder)
}

fn record(
    ctx: &ConnectionContext,
    intended: Instant,
    kept: Option<&Kept>,
    result: Result<u16, ErrorKind>,
    target: usize,
    judged: Option<stampede_metrics::Judged>,
    user: &UserSession,
) {
    let body_bytes = kept.map_or(0, |k| k.body_bytes);
    let outcome = Outcome {
        intended,
        sent: intended,
        first_byte: kept.map(|k| k.first_byte),
        done: Instant::now(),
        result,
        bytes_received: body_bytes,
        body_bytes,
        target: target as u16,
        judged,
    };
    ctx.state.end_request(&outcome);
    if let Some(log) = &ctx.log {
        log.record(&outcome, None, user.conn());
    }
}

/// Sends one request and reads its whole response, keeping its header
/// fields and up to `limit` bytes of its decoded body. The body is decoded
/// when something reads it (`limit > 0`) or with `count_decoded` (`--decode`).
async fn send_keeping(
    sender: &mut SendRequest<Bytes>,
    request: &H2Request,
    limit: usize,
    count_decoded: bool,
) -> Result<Kept, h2::Error> {
    poll_fn(|cx| sender.poll_ready(cx)).await?;
    let mut builder = http::Request::builder()
        .method(request.method.clone())
        .uri(request.uri.clone());
    if let Some(headers) = builder.headers_mut() {
        *headers = request.headers.clone();
    }
    let message = builder.body(()).expect("parts were validated when built");
    let no_body = request.body.is_empty();
    let (response, mut body_stream) = sender.send_request(message, no_body)?;
    if !no_body {
        body_stream.send_data(request.body.clone(), true)?;
    }
    let response = response.await?;
    let first_byte = Instant::now();
    let (parts, mut body) = response.into_parts();
    let mut kept = Vec::new();
    let mut keep = |out: &[u8]| {
        let room = limit.saturating_sub(kept.len());
        kept.extend_from_slice(&out[..out.len().min(room)]);
    };
    let mut decoding = (limit > 0 || count_decoded).then(|| DecodedCount::new(&parts.headers));
    let mut length = 0u64;
    while let Some(chunk) = body.data().await {
        let chunk = chunk?;
        length += chunk.len() as u64;
        if let Some(decoding) = &mut decoding {
            // The whole body is decoded (not only what is kept), so a body
            // cut short or corrupt past the kept part fails here too.
            decoding.data_into(&chunk, &mut keep);
        }
        let _ = body.flow_control().release_capacity(chunk.len());
        if body.is_end_stream() {
            break;
        }
    }
    let decoded = decoding.map(|d| d.end_into(&mut keep));
    Ok(Kept {
        status: parts.status.as_u16(),
        first_byte,
        headers: parts.headers,
        body: kept,
        body_bytes: length,
        decoded,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn only_a_pause_longer_than_zero_sleeps() {
        let table = [
            (None, None),
            (Some(Duration::ZERO), None),
            (Some(Duration::from_nanos(1)), Some(Duration::from_nanos(1))),
            (
                Some(Duration::from_millis(1)),
                Some(Duration::from_millis(1)),
            ),
            (
                Some(Duration::from_millis(400)),
                Some(Duration::from_millis(400)),
            ),
        ];
        for (think, slept) in table {
            assert_eq!(pause(think), slept, "{think:?}");
        }
    }
}
