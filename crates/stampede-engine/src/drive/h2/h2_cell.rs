//! One connection of HTTP/2's open model, shared by its stream slots
//! ([`H2Cell`]): opened by the first stream that needs it, again after it
//! breaks or its lifetime ends. The fixed requests' slots (h2_open.rs) and
//! a workload's (h2_open_workload.rs) share it.

use crate::drive::h2::h2_client::open;
use crate::drive::h2::h2_conn_end::{ConnectionEnd, Retry};
use crate::plan::conn_lifetime::Multiplexed;
use crate::worker::context::ConnectionContext;
use bytes::Bytes;
use h2::client::SendRequest;
use stampede_metrics::ErrorKind;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Instant;
use tokio::sync::Notify;

/// One connection of the open model, shared by its stream slots: opened
/// by the first that needs it, again after it breaks or its lifetime ends.
#[derive(Default)]
pub(crate) struct H2Cell {
    link: RefCell<Option<Live>>,
    /// Bumped for every connection opened: a stream's cached sender of an
    /// older generation is stale.
    generation: Cell<u64>,
    /// A stream is opening the connection; the others wait for `settled`.
    opening: Cell<bool>,
    settled: Notify,
    /// The next connection is a reconnect (the last ended on the server's
    /// terms), or a planned one (its lifetime ran out).
    reconnect: Cell<bool>,
    retired: Cell<bool>,
}

/// A live connection: its sender, what its streams saw of its end, its
/// lifetime.
struct Live {
    sender: SendRequest<Bytes>,
    end: Rc<ConnectionEnd>,
    life: Multiplexed,
}

/// A stream's own clone of its connection's sender (a clone per request
/// would lock the connection's stream table), with its generation.
pub(crate) type Cached = Option<(u64, SendRequest<Bytes>, Rc<ConnectionEnd>)>;

impl H2Cell {
    /// Makes `cached` a sender on a live connection that may carry one more
    /// request, opening one if there is none (or waiting while another
    /// stream opens it). Err: the connection could not be opened (its
    /// class), and `job`'s outcome is booked (h2_client.rs `open`).
    pub(crate) async fn ready(
        &self,
        ctx: &ConnectionContext,
        cached: &mut Cached,
        job: Retry,
    ) -> Result<(), ErrorKind> {
        loop {
            self.drop_if_over(ctx);
            if let Some(link) = self.link.borrow().as_ref() {
                if link.life.begin() {
                    let generation = self.generation.get();
                    if cached.as_ref().is_none_or(|(g, _, _)| *g != generation) {
                        *cached = Some((generation, link.sender.clone(), link.end.clone()));
                    }
                    return Ok(());
                }
            }
            if self
                .link
                .borrow()
                .as_ref()
                .is_some_and(|l| l.life.is_retired())
            {
                // Spent: its streams in flight finish on their own clones;
                // the next request opens a new connection (a planned
                // reconnect).
                self.link.borrow_mut().take();
                ctx.state.connection_closed();
                self.retired.set(true);
                self.reconnect.set(false);
                continue;
            }
            if self.opening.get() {
                self.settled.notified().await;
                if self.link.borrow().is_some() {
                    continue;
                }
                // The attempt waited on failed: this request tries its own.
            }
            self.opening.set(true);
            let opened = open(ctx, self.reconnect.get(), Some(job), job.user).await;
            self.opening.set(false);
            self.settled.notify_waiters();
            let (sender, connect) = opened?;
            if self.retired.take() {
                ctx.state.planned_reconnect();
            }
            self.generation.set(self.generation.get() + 1);
            *self.link.borrow_mut() = Some(Live {
                sender,
                end: Rc::new(ConnectionEnd::opened(connect)),
                life: ctx.lifetime.multiplexed(Instant::now()),
            });
        }
    }

    /// Forgets a connection that broke, counting it closed.
    pub(crate) fn drop_if_over(&self, ctx: &ConnectionContext) {
        let broken = self.link.borrow().as_ref().map(|l| l.end.clone());
        if let Some(end) = broken.filter(|end| end.is_broken()) {
            self.link.borrow_mut().take();
            ctx.state.connection_closed();
            self.reconnect.set(end.successor_is_reconnect());
        }
    }

    /// How many streams the server lets a connection of this cell carry
    /// at once (its SETTINGS_MAX_CONCURRENT_STREAMS, unlimited until seen).
    pub(crate) fn server_streams(&self) -> usize {
        self.link
            .borrow()
            .as_ref()
            .map_or(usize::MAX, |l| l.sender.current_max_send_streams())
    }
}
