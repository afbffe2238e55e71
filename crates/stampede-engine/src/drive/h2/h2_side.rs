//! A stream's connection to another origin (`--redirects` over HTTP/2):
//! a hop that the one rulebook (redirects/redirect.rs) sends to another
//! origin goes on an HTTP/2 connection to that origin, opened on the hop's
//! first visit and kept for the stream's next hops there, as HTTP/1.1's
//! slot keeps its side connection (redirect_switch.rs). A stream keeps one:
//! a hop to a third origin closes it and opens that origin's. It closes
//! with the stream (in the closed model a stream lives as long as its
//! home connection; in the open model a stream slot lives for the run),
//! or when a request on it fails. As over HTTP/1.1 (conn_books.rs), the
//! connection opened after the server closed the last one (an idle close,
//! a graceful GOAWAY) counts as a reconnect; one opened after the client
//! closed it (a hop to a third origin, an error) does not.
//!
//! The other origin must speak HTTP/2 (ALPN h2 over TLS, prior knowledge
//! over plain TCP). One that does not answers the preface with something
//! that is not an HTTP/2 frame: the hop fails as `go_away` (the client's
//! GOAWAY for a protocol error), its sample saying where it was going and
//! that the origin may not speak HTTP/2.

use crate::drive::h2::h2_handshake::handshake;
use crate::drive::h2::h2_hop::HopExchange;
use crate::net::outcome_class::{classify_h2, not_h2_hint, H2Failure};
use crate::plan::h2_request::H2Request;
use crate::worker::context::ConnectionContext;
use crate::worker::worker_state::WorkerState;
use bytes::Bytes;
use h2::client::SendRequest;
use stampede_metrics::ErrorKind;
use std::rc::Rc;

/// A stream's connection to the other origin its last hop went to, if any.
#[derive(Default)]
pub(crate) struct SideLink {
    link: Option<Side>,
    /// The server closed the last side connection: the next is a reconnect.
    server_closed: bool,
}

/// An open side connection: counted open until dropped.
struct Side {
    /// The other origin's id in the worker's book (redirect_origin.rs).
    origin: u16,
    sender: SendRequest<Bytes>,
    state: Rc<WorkerState>,
}

impl Drop for Side {
    fn drop(&mut self) {
        self.state.connection_closed();
    }
}

impl SideLink {
    /// Sends the hop `request` to origin `origin` (an id in the worker's
    /// book) by `exchange` (h2_redirects.rs) on the side connection there,
    /// opened if need be. A request the server never processed (its
    /// connection closed idle, a graceful GOAWAY) goes again once on a new
    /// connection. Err: the hop failed, its class (its reason sampled); the
    /// side connection is closed then.
    pub(crate) async fn send<E: HopExchange>(
        &mut self,
        ctx: &ConnectionContext,
        origin: u16,
        exchange: &E,
        request: &H2Request,
    ) -> Result<E::Reply, ErrorKind> {
        let mut again = false;
        loop {
            let sender = self.sender(ctx, origin).await?;
            match exchange.send(sender, request).await {
                Ok(answer) => return Ok(answer),
                Err((error, sent)) => {
                    let failure = H2Failure::of(&error, sent);
                    self.link = None;
                    self.server_closed = failure.closed_by_server();
                    if !again && failure.unprocessed() {
                        again = true;
                        continue;
                    }
                    let kind = classify_h2(&error);
                    ctx.state.sample_error(kind, || {
                        format!("redirect to {} over HTTP/2: {error}", where_to(ctx, origin))
                            + not_h2_hint(&error)
                    });
                    return Err(kind);
                }
            }
        }
    }

    /// The sender of the side connection to `origin`, opened (and the
    /// one to another origin closed) if need be.
    async fn sender(
        &mut self,
        ctx: &ConnectionContext,
        origin: u16,
    ) -> Result<&mut SendRequest<Bytes>, ErrorKind> {
        if self.link.as_ref().is_some_and(|side| side.origin != origin) {
            self.link = None;
            self.server_closed = false;
        }
        if self.link.is_none() {
            let Some(connector) = ctx.connector_to(Some(origin)) else {
                return Err(ErrorKind::Other);
            };
            let reconnect = std::mem::take(&mut self.server_closed);
            match handshake(ctx, &connector, reconnect).await {
                Ok((sender, _connect)) => {
                    self.link = Some(Side {
                        origin,
                        sender,
                        state: ctx.state.clone(),
                    });
                }
                Err((kind, reason)) => {
                    ctx.state.sample_error(kind, || {
                        let why = reason.unwrap_or_else(|| format!("{kind:?}"));
                        format!("redirect to {}: {why}", where_to(ctx, origin))
                    });
                    return Err(kind);
                }
            }
        }
        Ok(&mut self.link.as_mut().expect("opened above").sender)
    }
}

/// `scheme://host:port` of origin `origin`, for a sample.
fn where_to(ctx: &ConnectionContext, origin: u16) -> String {
    let book = ctx.origins.borrow();
    match book.origin(origin) {
        Some(o) => format!(
            "{}://{}",
            if o.https { "https" } else { "http" },
            o.host_header()
        ),
        None => "another origin".into(),
    }
}
