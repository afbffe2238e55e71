//! A workload over HTTP/2 in the open model (`--http2 -r RATE` with
//! templates, feeders, checks, extractors or a scenario): each stream slot
//! of h2_open.rs keeps one virtual user, and each arrival the pacer hands
//! it runs the user's next step. A scenario's later steps follow without
//! new arrivals, each from the end of the one before (and its think time),
//! as HTTP/1.1's open slot does (open.rs). Steps begin and go as in the
//! closed model (h2_workload.rs `begin_step`, `send_batch`): the same
//! render, the same checks, the same booking. A request's latency counts
//! from its intended instant, its wait in the backlog included.

use crate::drive::h2::h2_cell::{Cached, H2Cell};
use crate::drive::h2::h2_conn_end::Retry;
use crate::drive::h2::h2_side::SideLink;
use crate::drive::h2::h2_workload::{advance, begin_step, send_batch, Batch, Step};
use crate::plan::h2_request::H2Context;
use crate::worker::backoff::Backoff;
use crate::worker::context::ConnectionContext;
use crate::workload::{UserSession, WorkerWorkload};
use std::time::{Duration, Instant};

/// What a stream slot lends a step to reach its connections: the shared
/// connection, its own sender, its connect backoff, its side connection.
pub(crate) struct Link<'a> {
    pub cell: &'a H2Cell,
    pub cached: &'a mut Cached,
    pub backoff: &'a mut Backoff,
    /// Its connection to another origin a redirect went to (h2_side.rs).
    pub side: &'a mut SideLink,
}

/// Runs the iteration an arrival intended at `intended` begins (counted in
/// flight by the caller), its first request out of the backlog at `sent`;
/// a scenario's later steps follow, each a request of its own.
pub(crate) async fn run_iteration(
    ctx: &ConnectionContext,
    h2ctx: &H2Context,
    mut link: Link<'_>,
    user: &mut UserSession,
    intended: Instant,
    sent: Instant,
) {
    let Some(work) = &ctx.workload else {
        return;
    };
    // A script's response() reads every response's headers and body.
    let keep_body = work.spec.keeps_body() || work.script_reads_responses();
    let limit = if keep_body { work.spec.capture_max } else { 0 };
    let (mut intended, mut sent) = (intended, sent);
    loop {
        let step = begin_step(ctx, h2ctx, work, user, intended, sent);
        let think = match step {
            Step::Send(batch) => send_step(ctx, work, &mut link, user, batch, limit).await,
            Step::Booked | Step::NotPrepared => None,
        };
        if let Some(think) = think {
            tokio::time::sleep(think).await;
        }
        if !ctx.mid_iteration(Some(user)) {
            return;
        }
        intended = Instant::now();
        if !ctx.state.claim_budget_at(intended) {
            return;
        }
        ctx.state.begin_intended(intended, Duration::ZERO);
        sent = intended;
    }
}

/// Sends a step's batch on the slot's connection (opened if need be),
/// what the server never processed once more on the next; moves the user
/// on. Returns its think time.
async fn send_step(
    ctx: &ConnectionContext,
    work: &WorkerWorkload,
    link: &mut Link<'_>,
    user: &mut UserSession,
    mut batch: Batch<'_>,
    limit: usize,
) -> Option<Duration> {
    loop {
        let job = Retry {
            target: batch.target,
            intended: batch.intended(),
            user: user.conn(),
        };
        if let Err(kind) = link.cell.ready(ctx, link.cached, job).await {
            // The connect's failure booked the first request; the rest of
            // the batch ends the same, and the step failed.
            batch.failed_unsent(ctx, user, kind);
            let think = advance(ctx, work, user, &batch);
            // As HTTP/1.1's open slots: due requests queue meanwhile.
            let delay = ctx.state.connect_backoff(link.backoff);
            ctx.state.wait_out_backoff(delay).await;
            return think;
        }
        link.backoff.succeeded();
        // Ready: the slot's sender is on a live connection.
        let (_, sender, end) = link.cached.as_mut()?;
        let links = (sender, &mut *link.side);
        match send_batch(ctx, work, user, links, end, limit, &mut batch).await {
            Some(cut) => batch = Batch::resumed(cut),
            None => return advance(ctx, work, user, &batch),
        }
    }
}
