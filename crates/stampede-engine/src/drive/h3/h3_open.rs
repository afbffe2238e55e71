//! HTTP/3 in the open model: the pacer of open.rs hands each due request to
//! an idle stream, or starts a new one while under `-c` × `--streams`
//! (stream slot `s` rides connection `s / streams`, so the first
//! connection fills before the next opens), or queues it, its wait counted
//! in its latency. Latency counts from the intended instant.

use crate::drive::h3::h3_client::{request, End};
use crate::drive::h3::h3_conn::{Cached, H3Context, QuicCell};
use crate::drive::open::{run_pacer_with, Dispatcher};
use crate::plan::worker_plan::OpenLoad;
use crate::worker::context::ConnectionContext;
use std::rc::Rc;
use std::time::Instant;

/// Runs this worker's share of the open model over HTTP/3.
pub(crate) async fn run_h3_pacer(
    ctx: Rc<ConnectionContext>,
    h3: Rc<H3Context>,
    mut load: OpenLoad,
    measure_start: Instant,
    end: Option<Instant>,
) {
    let streams = h3.streams;
    let cells: Vec<Rc<QuicCell>> = (0..load.max_connections)
        .map(|_| Rc::new(QuicCell::default()))
        .collect();
    load.max_connections *= streams;
    run_pacer_with(
        ctx,
        load,
        measure_start,
        end,
        move |ctx, dispatcher, slot, first| {
            let cell = cells[(slot / streams).min(cells.len() - 1)].clone();
            // Stream slot `slot` is a virtual user of its own.
            let user = ctx.user_id(slot as u32);
            let stream = run_open_stream(
                ctx.clone(),
                h3.clone(),
                cell,
                dispatcher.clone(),
                slot,
                first,
                user,
            );
            tokio::task::spawn_local(stream);
            true
        },
    )
    .await;
}

/// One stream slot, virtual user `user`: runs its job, then the next the
/// dispatcher gives it.
async fn run_open_stream(
    ctx: Rc<ConnectionContext>,
    h3: Rc<H3Context>,
    cell: Rc<QuicCell>,
    dispatcher: Rc<Dispatcher>,
    slot: usize,
    first: Instant,
    user: u64,
) {
    let timer = tokio::time::sleep(ctx.timeout);
    tokio::pin!(timer);
    let mut cached: Cached = None;
    let mut backoff = crate::worker::backoff::Backoff::default();
    let mut job = first;
    loop {
        let lag = Instant::now().saturating_duration_since(job);
        ctx.state.begin_intended(job, lag);
        let sent = request(
            &ctx,
            &h3,
            &cell,
            &mut cached,
            Some(job),
            user,
            timer.as_mut(),
        );
        match sent.await {
            End::Sent => backoff.succeeded(),
            End::NoConnection => {
                // As HTTP/1.1's open slots: due requests queue meanwhile.
                let delay = ctx.state.connect_backoff(&mut backoff);
                ctx.state.wait_out_backoff(delay).await;
            }
        }
        job = dispatcher.next_job(slot).await;
    }
}
