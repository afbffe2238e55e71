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
//! A request the server never processed (a graceful GOAWAY, a refused
//! stream: h2_client.rs) goes again once, and the rest of its batch after
//! it: a [`Resume`] the user carries to the next connection.

use crate::drive::closed::ActiveSlots;
use crate::drive::h2::h2_conn_end::{ConnectionEnd, Retry};
use crate::drive::h2::h2_kept::{send_following, Kept};
use crate::drive::h2::h2_side::SideLink;
use crate::net::outcome_class::{classify_h2, not_h2_hint};
use crate::plan::h2_request::{from_rendered, next_rendered, H2Context, H2Request};
use crate::worker::context::ConnectionContext;
use crate::worker::request_log::LogFacts;
use crate::workload::{Answer, UserSession, WorkerWorkload};
use bytes::Bytes;
use h2::client::SendRequest;
use stampede_metrics::{ErrorKind, Outcome};
use std::borrow::Cow;
use std::rc::Rc;
use std::time::{Duration, Instant};

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

/// A user's batch (its request, or the several a script's `request()`
/// returned) cut short by a request the server never processed: that
/// request (begun, claimed, intended at `intended`: it goes again once)
/// and the rest, to send on the next connection.
#[derive(Debug)]
pub(crate) struct Resume {
    intended: Instant,
    sent: Instant,
    target: usize,
    requests: Vec<H2Request>,
    /// The verdicts of the batch's requests that were answered.
    failed: bool,
    restart: bool,
}

/// The request a failed connect is charged to when users wait to resume:
/// the first of them (`resumes` and `users` go together, place by place).
pub(crate) fn first_resumed(users: &[UserSession], resumes: &[Option<Resume>]) -> Option<Retry> {
    let at = resumes.iter().position(Option::is_some)?;
    let resume = resumes[at].as_ref()?;
    Some(Retry {
        target: resume.target,
        intended: resume.intended,
        user: users.get(at).map_or(0, UserSession::conn),
    })
}

/// The virtual user a failed connect's new request is charged to: the one
/// whose step it fails ([`charge_failed_connect`]); `None` without a workload.
pub(crate) fn charged_user(users: &[UserSession]) -> Option<u64> {
    users.iter().find(|u| !u.is_done()).map(UserSession::conn)
}

/// The connect charged with [`first_resumed`]'s request failed (as `kind`):
/// that request's second try failed, the rest of its batch (begun) ends as
/// the same failure unsent, and its user's step fails, as a failed connect
/// fails a step.
pub(crate) fn charge_failed_resume(
    ctx: &ConnectionContext,
    users: &mut [UserSession],
    resumes: &mut [Option<Resume>],
    kind: ErrorKind,
) {
    let Some(work) = &ctx.workload else {
        return;
    };
    let Some(at) = resumes.iter().position(Option::is_some) else {
        return;
    };
    let resume = resumes[at].take().expect("found above");
    if let Some(user) = users.get_mut(at) {
        for _ in 1..resume.requests.len() {
            let outcome = ended(
                resume.intended,
                resume.sent,
                resume.target,
                None,
                Err(kind),
                None,
            );
            ctx.book(&outcome, facts(user, None));
        }
        user.advance(work, true, false);
        if work.stopped_run() {
            ctx.state.stop_sending();
        }
    }
}

/// One stream's user: sends its requests one after another until the
/// budget is spent, the gate closes the slot, the connection breaks or the
/// user is done; first the batch it resumes, if any. Hands the user back
/// for the next connection, with a batch to resume there.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn run_user_stream(
    ctx: Rc<ConnectionContext>,
    h2ctx: Rc<H2Context>,
    gate: Rc<ActiveSlots>,
    index: usize,
    mut sender: SendRequest<Bytes>,
    end: Rc<ConnectionEnd>,
    mut user: UserSession,
    mut resume: Option<Resume>,
) -> (UserSession, Option<Resume>) {
    let Some(work) = &ctx.workload else {
        return (user, resume);
    };
    // A script's response() reads every response's headers and body.
    let keep_body = work.spec.keeps_body() || work.script_reads_responses();
    let limit = if keep_body { work.spec.capture_max } else { 0 };
    // Redirects to another origin go on the stream's side connection.
    let mut side = SideLink::default();
    while !end.is_broken() {
        let mut batch = match resume.take() {
            Some(resume) => Batch::resumed(resume),
            None => {
                if !gate.is_active(index) || user.is_done() {
                    break;
                }
                // A step's rendezvous, before the request is counted, as on
                // HTTP/1.1 (Slot::rendezvous); the stream's send follows it.
                let points = ctx.rendezvous.as_ref();
                let held = match points.and_then(|p| p.step(work.upcoming_target(Some(&user)))) {
                    Some(point) => Some((point, point.wait().await)),
                    None => None,
                };
                if !ctx.state.claim_budget() {
                    break;
                }
                ctx.state.begin_request();
                let intended = Instant::now();
                let step = begin_step(&ctx, &h2ctx, work, &mut user, intended, intended);
                if let (Some((point, ticket)), false) = (held, matches!(step, Step::NotPrepared)) {
                    point.sent(ticket, Instant::now());
                }
                match step {
                    Step::Send(batch) => batch,
                    Step::Booked => continue,
                    Step::NotPrepared => return (user, None),
                }
            }
        };
        if let Some(cut) = send_batch(
            &ctx,
            work,
            &mut user,
            (&mut sender, &mut side),
            &end,
            limit,
            &mut batch,
        )
        .await
        {
            resume = Some(cut);
            continue;
        }
        if let Some(think) = advance(&ctx, work, &mut user, &batch) {
            tokio::time::sleep(think).await;
        }
    }
    (user, resume)
}

/// How a user's step began ([`begin_step`]).
pub(crate) enum Step<'a> {
    /// Its requests, ready to go.
    Send(Batch<'a>),
    /// It ended before a request left (booked, the user moved on).
    Booked,
    /// Nothing could be sent (a `unique` feeder ran out, the script
    /// failed): the request is taken back.
    NotPrepared,
}

/// Begins `user`'s next step, its first request begun (counted in flight)
/// and intended at `intended`, leaving its queue at `sent` (later in the
/// open model when it waited in the backlog): the step's target, the user's
/// rendered request(s) in HTTP/2 form, the batch's later requests counted
/// (`count_batch`). The closed model (a stream) and the open model
/// (h2_open_workload.rs) begin a step so.
pub(crate) fn begin_step<'a>(
    ctx: &ConnectionContext,
    h2ctx: &'a H2Context,
    work: &WorkerWorkload,
    user: &mut UserSession,
    intended: Instant,
    sent: Instant,
) -> Step<'a> {
    let target = user.next_target(work, || ctx.next_target_index());
    let fixed = ctx.request_of(target).0;
    if let Err(not) = user.prepare(work, target, fixed, || work.spec.sequence.next()) {
        ctx.state.not_prepared(intended, not);
        return Step::NotPrepared;
    }
    ctx.count_batch(Some(user));
    let fixed_form = &h2ctx.requests[target.min(h2ctx.requests.len() - 1)];
    let requests = match rendered_requests(user, &h2ctx.requests[0]) {
        None => vec![Cow::Borrowed(fixed_form)],
        Some(Ok(requests)) => requests.into_iter().map(Cow::Owned).collect(),
        Some(Err(reason)) => {
            // Rendered by the session itself (or checked when a script
            // returned it): only a value HTTP/2's header rules refuse gets
            // here; shown, not hidden.
            ctx.state.sample_error(ErrorKind::Other, || reason);
            // Every request of the batch was counted (count_batch).
            for _ in 0..user.requests {
                let outcome = ended(intended, sent, target, None, Err(ErrorKind::Other), None);
                ctx.book(&outcome, facts(user, None));
            }
            user.advance(work, true, false);
            return Step::Booked;
        }
    };
    Step::Send(Batch {
        intended,
        sent,
        target,
        requests,
        failed: false,
        restart: false,
        again: false,
    })
}

/// Moves `user` on after its step (`batch`), as its verdicts say, and
/// stops the sending when a script or a group asks: the think time to wait.
pub(crate) fn advance(
    ctx: &ConnectionContext,
    work: &WorkerWorkload,
    user: &mut UserSession,
    batch: &Batch<'_>,
) -> Option<Duration> {
    let think = user.advance(work, batch.failed, batch.restart);
    if work.script_stopped() || work.stopped_run() {
        ctx.state.stop_sending();
    }
    think
}

/// A user's requests of one step: its request, or the several a script's
/// `request()` returned, all intended at the same instant, all begun
/// (counted in flight, each claimed from the budget: `count_batch`) when
/// the step began.
pub(crate) struct Batch<'a> {
    intended: Instant,
    /// When its first request left its queue (open model: the backlog).
    sent: Instant,
    pub(crate) target: usize,
    requests: Vec<Cow<'a, H2Request>>,
    failed: bool,
    restart: bool,
    /// The first request is a second try (the server never processed the
    /// first): it does not go a third time.
    again: bool,
}

impl Batch<'_> {
    /// The rest of a batch cut short by a request the server never
    /// processed: that request is a second try.
    pub(crate) fn resumed(resume: Resume) -> Batch<'static> {
        Batch {
            intended: resume.intended,
            sent: resume.sent,
            target: resume.target,
            requests: resume.requests.into_iter().map(Cow::Owned).collect(),
            failed: resume.failed,
            restart: resume.restart,
            again: true,
        }
    }

    /// The instant its requests were intended at.
    pub(crate) fn intended(&self) -> Instant {
        self.intended
    }

    /// Books the batch's requests as failed with `kind` before any left
    /// (its connection could not be opened), but for the first, which the
    /// failed connect booked (h2_client.rs `open`); the step failed.
    pub(crate) fn failed_unsent(
        &mut self,
        ctx: &ConnectionContext,
        user: &UserSession,
        kind: ErrorKind,
    ) {
        for _ in 1..self.requests.len() {
            let outcome = ended(self.intended, self.sent, self.target, None, Err(kind), None);
            ctx.book(&outcome, facts(user, None));
        }
        self.failed = true;
    }
}

/// Sends a batch, each request a stream of its own, one after another
/// (a script's pipelined requests over HTTP/1.1), and judges each answer.
/// Returns what is left of it when a request was never processed by the
/// server (it goes again, from that request on); None once it is over.
pub(crate) async fn send_batch(
    ctx: &ConnectionContext,
    work: &WorkerWorkload,
    user: &mut UserSession,
    (sender, side): (&mut SendRequest<Bytes>, &mut SideLink),
    end: &ConnectionEnd,
    limit: usize,
    batch: &mut Batch<'_>,
) -> Option<Resume> {
    let (intended, sent, target) = (batch.intended, batch.sent, batch.target);
    for (i, request) in batch.requests.iter().enumerate() {
        // A redirect is followed when the step's request is alone, as
        // over HTTP/1.1 (a script's pipelined batch follows none).
        let alone = batch.requests.len() == 1;
        let original = alone.then(|| user.rendered().unwrap_or(ctx.request_of(target).0));
        let links = (&mut *sender, &mut *side);
        let exchange = send_following(ctx, links, request, target, original, limit);
        let answered = tokio::time::timeout(ctx.timeout_of(target), exchange).await;
        let (result, kept) = match answered {
            Ok(Ok(Err(refused))) => (Err(refused), None),
            Ok(Ok(Ok(mut kept))) => match settle_decoding(ctx, intended, &mut kept) {
                Ok(status) => (Ok(status), Some(kept)),
                // Not judged, as over HTTP/1.1: the checks never saw the body.
                Err(kind) => (Err(kind), Some(kept)),
            },
            Ok(Err((e, was_sent))) => {
                let kind = classify_h2(&e);
                if end.failed(&e, was_sent, kind) && !(i == 0 && batch.again) {
                    // Never processed: it goes again, and the rest after
                    // it (all begun already).
                    return Some(Resume {
                        intended,
                        sent,
                        target,
                        requests: batch.requests[i..]
                            .iter()
                            .map(|r| r.as_ref().clone())
                            .collect(),
                        failed: batch.failed,
                        restart: batch.restart,
                    });
                }
                ctx.state
                    .sample_error(kind, || format!("{e}{}", not_h2_hint(&e)));
                (Err(kind), None)
            }
            Err(_) => (Err(ErrorKind::Timeout), None),
        };
        let judged = match (&kept, result) {
            (Some(kept), Ok(_)) => {
                let judgement = judge(work, user, target, intended, kept, ctx);
                batch.failed |= judgement.failed;
                batch.restart |= judgement.restart;
                judgement.judged
            }
            _ => {
                batch.failed = true;
                None
            }
        };
        let outcome = ended(intended, sent, target, kept.as_ref(), result, judged);
        ctx.book(&outcome, facts(user, end.take_connect(sender, &ctx.state)));
        if let (true, Err(kind)) = (end.is_broken(), result) {
            // The rest of the batch is never sent: its requests end as
            // the connection's failure, so begun and ended stay equal.
            for _ in i + 1..batch.requests.len() {
                let outcome = ended(intended, sent, target, None, Err(kind), None);
                ctx.book(&outcome, facts(user, None));
            }
            break;
        }
    }
    None
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

/// How request `target` of a user's step, intended at `intended` and out
/// of its queue at `sent`, ended now: `kept`, its response if one came,
/// and its verdict.
fn ended(
    intended: Instant,
    sent: Instant,
    target: usize,
    kept: Option<&Kept>,
    result: Result<u16, ErrorKind>,
    judged: Option<stampede_metrics::Judged>,
) -> Outcome {
    let body_bytes = kept.map_or(0, |k| k.body_bytes);
    Outcome {
        intended,
        sent,
        first_byte: kept.map(|k| k.first_byte),
        done: Instant::now(),
        result,
        bytes_received: body_bytes,
        body_bytes,
        target: target as u16,
        judged,
    }
}

/// What `user`'s request's log line needs (booking.rs): `connect`, on the
/// first request to end on a connection, the time it took to open.
fn facts(user: &UserSession, connect: Option<Duration>) -> LogFacts<'_> {
    LogFacts {
        connect,
        user: user.conn(),
        rendered: user.rendered(),
    }
}
