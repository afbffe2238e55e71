//! One HTTP/3 connection slot ([`QuicCell`]): the QUIC connection its
//! streams share, opened on first use and again after it ends, over the
//! worker's endpoint. One stream opens it while the others wait on that
//! attempt (and share its failure, so a dead server costs one handshake per
//! slot, not one per stream). The handshake is timed as QUIC's (1-RTT), or
//! with `--0rtt` and a session ticket as 0-RTT, whose requests leave at once
//! and whose acceptance is counted apart.

use crate::drive::h3::h3_errors::{handshake_failed, handshake_timeout, is_graceful, Failure};
use crate::net::transport::quic;
use crate::plan::h2_request::H2Request;
use crate::plan::h3_plan::H3Plan;
use crate::worker::context::ConnectionContext;
use bytes::Bytes;
use stampede_metrics::ErrorKind;
use std::cell::{Cell, RefCell};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// Sends requests on one HTTP/3 connection (each stream keeps a clone).
pub(crate) type Sender = h3::client::SendRequest<h3_quinn::OpenStreams, Bytes>;

/// What the HTTP/3 slots of a worker share: its endpoint and the plan.
pub(crate) struct H3Context {
    pub requests: Vec<H2Request>,
    pub streams: usize,
    /// The worker's UDP endpoint, or why it could not be opened.
    endpoint: Result<quinn::Endpoint, String>,
    client: quinn::ClientConfig,
    remote: SocketAddr,
    server_name: String,
    zero_rtt: bool,
    connect_timeout: Duration,
    pub keepalive: bool,
}

impl H3Context {
    /// Opens worker `worker`'s endpoint (inside its runtime).
    pub(crate) fn new(plan: &H3Plan, worker: usize) -> H3Context {
        let local = quic::bind_address(plan.remote, &plan.source_addrs, worker);
        H3Context {
            requests: plan.requests.clone(),
            streams: plan.streams,
            endpoint: quic::worker_endpoint(local)
                .map_err(|e| format!("cannot open a UDP socket on {local}: {e}")),
            client: plan.client.clone(),
            remote: plan.remote,
            server_name: plan.server_name.clone(),
            zero_rtt: plan.zero_rtt,
            connect_timeout: plan.connect_timeout,
            keepalive: plan.keepalive,
        }
    }

    /// The request of the mix numbered `target`.
    pub(crate) fn request(&self, target: usize) -> &H2Request {
        &self.requests[target.min(self.requests.len() - 1)]
    }
}

impl Drop for H3Context {
    /// The run is over: every connection still open is closed (the worker
    /// gives the endpoint a moment to send the CONNECTION_CLOSE frames, so
    /// the server does not hold them until its idle timeout).
    fn drop(&mut self) {
        if let Ok(endpoint) = &self.endpoint {
            endpoint.close(quinn::VarInt::from_u32(H3_NO_ERROR), b"stampede: run over");
        }
    }
}

/// A live connection: quinn's handle (for its close reason) and a sender.
struct Link {
    quic: quinn::Connection,
    sender: Sender,
}

/// A stream's own sender and the connection generation it belongs to.
pub(crate) type Cached = Option<(u64, Sender)>;

/// One connection slot of a worker.
#[derive(Default)]
pub(crate) struct QuicCell {
    link: RefCell<Option<Link>>,
    /// Bumped for every connection opened: a stream's cached sender of an
    /// older generation is stale.
    generation: Cell<u64>,
    opening: Cell<bool>,
    /// Woken when an attempt to open ends, for the streams waiting on it.
    settled: Notify,
    /// How the last attempt failed, and its number (`attempts`).
    last_failure: RefCell<Option<Failure>>,
    attempts: Cell<u64>,
    /// The last connection ended on the server's terms without an error:
    /// the next one is a reconnect.
    server_closed: Cell<bool>,
    /// Streams of this slot parked by the closed model's gate.
    parked: Cell<usize>,
    /// Why the last connection ended, kept once it is forgotten: the other
    /// streams that failed on it are classed by the same reason.
    ended: RefCell<Option<quinn::ConnectionError>>,
}

impl QuicCell {
    /// Makes `cached` a sender on a live connection, opening one if there is
    /// none (or waiting for the stream that is opening it).
    pub(crate) async fn ready(
        &self,
        ctx: &ConnectionContext,
        h3: &H3Context,
        cached: &mut Cached,
    ) -> Result<(), Failure> {
        loop {
            self.drop_if_closed(ctx);
            if let Some(link) = self.link.borrow().as_ref() {
                let generation = self.generation.get();
                if cached.as_ref().is_none_or(|(g, _)| *g != generation) {
                    *cached = Some((generation, link.sender.clone()));
                }
                return Ok(());
            }
            if self.opening.get() {
                let attempt = self.attempts.get();
                let settled = self.settled.notified();
                if self.opening.get() {
                    settled.await;
                }
                if self.link.borrow().is_none() && self.attempts.get() != attempt {
                    // The attempt we waited on failed: so did our request.
                    if let Some(failure) = self.last_failure.borrow().clone() {
                        return Err(failure);
                    }
                }
                continue;
            }
            self.opening.set(true);
            let opened = open(ctx, h3, self.server_closed.replace(false)).await;
            self.opening.set(false);
            self.attempts.set(self.attempts.get() + 1);
            let result = match opened {
                Ok(link) => {
                    self.generation.set(self.generation.get() + 1);
                    *self.link.borrow_mut() = Some(link);
                    Ok(())
                }
                Err(failure) => {
                    *self.last_failure.borrow_mut() = Some(failure.clone());
                    Err(failure)
                }
            };
            self.settled.notify_waiters();
            result?;
        }
    }

    /// The connection's close reason, if it has ended (a lock in quinn:
    /// looked at once per failed request and per request handed a sender).
    pub(crate) fn close_reason(&self) -> Option<quinn::ConnectionError> {
        match self.link.borrow().as_ref() {
            Some(link) => link.quic.close_reason(),
            None => self.ended.borrow().clone(),
        }
    }

    /// Forgets the current connection, keeping why it ended.
    fn forget(&self) -> Option<Link> {
        let link = self.link.borrow_mut().take()?;
        if let Some(reason) = link.quic.close_reason() {
            *self.ended.borrow_mut() = Some(reason);
        }
        Some(link)
    }

    /// Forgets a connection that has ended, counting it closed.
    fn drop_if_closed(&self, ctx: &ConnectionContext) {
        let reason = self
            .link
            .borrow()
            .as_ref()
            .and_then(|l| l.quic.close_reason());
        let Some(reason) = reason else {
            return;
        };
        self.server_closed.set(is_graceful(&reason));
        self.forget();
        ctx.state.connection_closed();
    }

    /// Closes generation `generation`'s connection (a request found it
    /// broken, or `--no-keepalive`), if it is still the current one.
    pub(crate) fn retire(&self, ctx: &ConnectionContext, generation: u64) {
        if self.generation.get() != generation {
            return;
        }
        if let Some(link) = self.forget() {
            link.quic
                .close(quinn::VarInt::from_u32(H3_NO_ERROR), b"stampede: done");
            ctx.state.connection_closed();
        }
    }

    /// The server sent GOAWAY on generation `generation`'s connection: it
    /// takes no new requests, so the next one opens a new connection (a
    /// reconnect, as after a server's close on HTTP/1.1).
    pub(crate) fn going_away(&self, ctx: &ConnectionContext, generation: u64) {
        if self.generation.get() != generation {
            return;
        }
        // Not closed here: the requests it accepted before the GOAWAY finish
        // on it, and it closes once their senders are gone.
        if self.forget().is_some() {
            ctx.state.connection_closed();
            self.server_closed.set(true);
        }
    }

    /// A stream of this slot parks (the closed model's gate closed it);
    /// the last of `streams` to park closes the connection, as a parked
    /// HTTP/1.1 or HTTP/2 slot does.
    pub(crate) fn park(&self, ctx: &ConnectionContext, streams: usize) {
        self.parked.set(self.parked.get() + 1);
        if self.parked.get() >= streams {
            self.retire(ctx, self.generation.get());
        }
    }

    pub(crate) fn unpark(&self) {
        self.parked.set(self.parked.get().saturating_sub(1));
    }
}

/// HTTP/3's "no error", for the connections this client closes.
const H3_NO_ERROR: u32 = 0x100;

/// Opens a connection and its HTTP/3 session; times the handshake.
async fn open(ctx: &ConnectionContext, h3: &H3Context, reconnect: bool) -> Result<Link, Failure> {
    let other = |reason: String| Failure {
        kind: ErrorKind::Other,
        reason,
    };
    ctx.state.connect_attempt();
    let start = Instant::now();
    let endpoint = h3.endpoint.as_ref().map_err(|e| other(e.clone()))?;
    let connecting = endpoint
        .connect_with(h3.client.clone(), h3.remote, &h3.server_name)
        .map_err(|e| other(format!("QUIC connect to {}: {e}", h3.remote)))?;
    let (quic, early) = match h3.zero_rtt {
        true => match connecting.into_0rtt() {
            Ok((quic, accepted)) => (quic, Some(accepted)),
            // No ticket from this server yet: a full handshake.
            Err(connecting) => (handshake(h3, connecting).await?, None),
        },
        false => (handshake(h3, connecting).await?, None),
    };
    let session = h3::client::new(h3_quinn::Connection::new(quic.clone()));
    let (mut driver, sender) = match tokio::time::timeout(h3.connect_timeout, session).await {
        Ok(Ok(pair)) => pair,
        // The server closed the connection as the session began (a client
        // certificate refused after the client's side of the handshake):
        // classed by quinn's reason, as the same close is anywhere else.
        Ok(Err(e)) => {
            return Err(match quic.close_reason() {
                Some(reason) => crate::drive::h3::h3_errors::connection_closed(&reason),
                None => other(format!("HTTP/3 session: {e}")),
            })
        }
        Err(_) => return Err(handshake_timeout(h3.remote, h3.connect_timeout)),
    };
    tokio::task::spawn_local(async move {
        // Drives the control streams until the connection ends.
        let _ = std::future::poll_fn(|cx| driver.poll_close(cx)).await;
    });
    ctx.state.quic_connection_opened(reconnect);
    match early {
        None => ctx.state.quic_handshake(start.elapsed(), false),
        Some(accepted) => {
            let state = ctx.state.clone();
            tokio::task::spawn_local(async move {
                // Rejected 0-RTT fell back to a full handshake: it counts as one.
                let accepted = accepted.await;
                state.quic_handshake(start.elapsed(), accepted);
            });
        }
    }
    Ok(Link { quic, sender })
}

/// A full (1-RTT) handshake within `--connect-timeout`.
async fn handshake(
    h3: &H3Context,
    connecting: quinn::Connecting,
) -> Result<quinn::Connection, Failure> {
    match tokio::time::timeout(h3.connect_timeout, connecting).await {
        Ok(Ok(quic)) => Ok(quic),
        Ok(Err(e)) => Err(handshake_failed(&e, h3.remote, h3.connect_timeout)),
        Err(_) => Err(handshake_timeout(h3.remote, h3.connect_timeout)),
    }
}
