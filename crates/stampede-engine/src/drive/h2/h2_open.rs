//! HTTP/2 in the open model: the pacer of open.rs hands each due request
//! to a stream slot by the one dispatch rule (worker/open_slots.rs). Stream
//! slot `s` rides connection `s / --streams`, so a free stream on an open
//! connection is taken first, then a new connection up to `-c`, then the
//! backlog; its wait counts in its latency, from the intended instant. A
//! slot beyond the server's SETTINGS_MAX_CONCURRENT_STREAMS is not started
//! (the rule goes on to the next), or, if it started before the server's
//! SETTINGS arrived, gives its job back and takes no other. Requests go and
//! are booked as in the closed model (h2_client.rs `try_request`).

use crate::drive::h2::h2_cell::{Cached, H2Cell};
use crate::drive::h2::h2_client::{try_request, Tried};
use crate::drive::h2::h2_conn_end::Retry;
use crate::drive::h2::h2_open_workload::{run_iteration, Link};
use crate::drive::h2::h2_side::SideLink;
use crate::drive::open::{run_pacer_with, Dispatcher};
use crate::plan::h2_request::H2Context;
use crate::worker::backoff::Backoff;
use crate::worker::context::ConnectionContext;
use std::rc::Rc;
use std::time::Instant;

/// Runs this worker's share of the open model over HTTP/2.
pub(crate) async fn run_h2_pacer(
    ctx: Rc<ConnectionContext>,
    h2ctx: Rc<H2Context>,
    mut load: crate::plan::worker_plan::OpenLoad,
    load_start: Instant,
    end: Option<Instant>,
) {
    let streams = h2ctx.streams.max(1);
    let cells: Vec<Rc<H2Cell>> = (0..load.max_connections.max(1))
        .map(|_| Rc::new(H2Cell::default()))
        .collect();
    load.max_connections *= streams;
    run_pacer_with(
        ctx,
        load,
        load_start,
        end,
        move |ctx, dispatcher, slot, first| {
            let cell = cells[(slot / streams).min(cells.len() - 1)].clone();
            // The server's limit, from this connection or else the first
            // (the same server): a stream beyond it is never started.
            let limit = cell.server_streams().min(cells[0].server_streams());
            if slot % streams >= limit {
                return false;
            }
            let stream = OpenStream {
                ctx: ctx.clone(),
                h2ctx: h2ctx.clone(),
                cell,
                dispatcher: dispatcher.clone(),
                slot,
                rank: slot % streams,
                // Stream slot `slot` is a virtual user of its own.
                user: ctx.user_id(slot as u32),
            };
            tokio::task::spawn_local(stream.run(first));
            true
        },
    )
    .await;
}

/// One stream slot of the open model and what it keeps.
struct OpenStream {
    ctx: Rc<ConnectionContext>,
    h2ctx: Rc<H2Context>,
    cell: Rc<H2Cell>,
    dispatcher: Rc<Dispatcher>,
    slot: usize,
    /// Its place among its connection's stream slots, from 0.
    rank: usize,
    user: u64,
}

impl OpenStream {
    /// Runs its jobs, `first` first, each then the next the dispatcher
    /// gives it.
    async fn run(self, first: Instant) {
        // One timer for the stream's life, moved forward per request.
        let timeout = tokio::time::sleep(self.ctx.timeout);
        tokio::pin!(timeout);
        let mut cached: Cached = None;
        let mut backoff = Backoff::default();
        // With a workload, the slot's virtual user (a session of its own,
        // kept from job to job, as HTTP/1.1's open slot keeps one).
        let mut user = (self.ctx.workload.as_ref()).map(|work| work.new_user(self.user));
        // Redirects to another origin go on the slot's side connection.
        let mut side = SideLink::default();
        let mut job = first;
        loop {
            if self.rank > 0 && self.rank >= self.cell.server_streams() {
                // The server allows fewer streams per connection than
                // --streams: this slot would wait behind the others of its
                // connection. Its job goes back; it takes no other.
                self.dispatcher.hand_back(job);
                return;
            }
            let now = Instant::now();
            self.ctx
                .state
                .begin_intended(job, now.saturating_duration_since(job));
            if let Some(user) = user.as_mut() {
                let link = Link {
                    cell: &self.cell,
                    cached: &mut cached,
                    backoff: &mut backoff,
                    side: &mut side,
                };
                run_iteration(&self.ctx, &self.h2ctx, link, user, job, now).await;
                job = self.dispatcher.next_job(self.slot).await;
                continue;
            }
            let job_of = Retry {
                target: self.ctx.next_target_index(),
                intended: job,
                user: self.user,
            };
            self.send(
                job_of,
                now,
                &mut cached,
                &mut side,
                &mut backoff,
                timeout.as_mut(),
            )
            .await;
            job = self.dispatcher.next_job(self.slot).await;
        }
    }

    /// Sends `job`, begun at `sent`, until it is booked: on a live
    /// connection (opened if need be), once more if the server did not
    /// process its first try.
    async fn send(
        &self,
        job: Retry,
        sent: Instant,
        cached: &mut Cached,
        side: &mut SideLink,
        backoff: &mut Backoff,
        mut timeout: std::pin::Pin<&mut tokio::time::Sleep>,
    ) {
        let requests = &self.h2ctx.requests;
        let request = &requests[job.target.min(requests.len() - 1)];
        let mut again = false;
        loop {
            if self.cell.ready(&self.ctx, cached, job).await.is_err() {
                // As HTTP/1.1's open slots: due requests queue meanwhile.
                let delay = self.ctx.state.connect_backoff(backoff);
                self.ctx.state.wait_out_backoff(delay).await;
                return;
            }
            backoff.succeeded();
            let Some((_, sender, end)) = cached.as_mut() else {
                return;
            };
            let tried = try_request(
                &self.ctx,
                sender,
                side,
                end,
                timeout.as_mut(),
                request,
                job,
                sent,
                again,
            );
            match tried.await {
                Tried::Booked => return,
                Tried::Unprocessed(_) => again = true,
            }
        }
    }
}
