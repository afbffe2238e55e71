//! What the HTTP/2 paths (h2_client.rs's plain streams, h2_workload.rs's
//! virtual users) share about a connection's end and a request that may go
//! again: whether the connection broke or the server closed it on purpose
//! ([`ConnectionEnd`]), a request carried to the next connection
//! ([`Retry`]), and whether a failed request had left ([`SendError`]). A
//! leaf, so that the two paths do not import each other.

use crate::net::outcome_class::H2Failure;
use crate::worker::worker_state::WorkerState;
use bytes::Bytes;
use h2::client::SendRequest;
use stampede_metrics::ErrorKind;
use std::cell::Cell;
use std::time::{Duration, Instant};

/// A request to send again because the server never processed it (begun
/// and claimed from the budget once, at its first try).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Retry {
    pub target: usize,
    pub intended: Instant,
    /// The virtual user (stream) that sent it: its log line's `vu`.
    pub user: u64,
}

/// What the streams of one connection saw of its end (shared by them),
/// and the time it took to open.
#[derive(Debug, Default)]
pub(crate) struct ConnectionEnd {
    /// The connection carries no further request.
    broken: Cell<bool>,
    /// The server closed it on purpose (a graceful GOAWAY, an idle close):
    /// the next connection is a reconnect.
    by_server: Cell<bool>,
    /// Its connect time until the first request to end on it takes it:
    /// that request opened it, as HTTP/1.1's request that opens a
    /// connection carries its connect time in the request log (booking.rs).
    connect: Cell<Option<Duration>>,
}

impl ConnectionEnd {
    /// The books of a connection that took `connect` to open.
    pub(crate) fn opened(connect: Duration) -> ConnectionEnd {
        ConnectionEnd {
            connect: Cell::new(Some(connect)),
            ..ConnectionEnd::default()
        }
    }

    /// The connect time for the request ending now on `sender`'s
    /// connection: the first one's alone. The first also notes the
    /// server's stream limit in `state`: its SETTINGS came before any
    /// answer, and once a connection is enough (reading it takes a lock).
    pub(crate) fn take_connect(
        &self,
        sender: &SendRequest<Bytes>,
        state: &WorkerState,
    ) -> Option<Duration> {
        let connect = self.connect.take();
        if connect.is_some() {
            // `usize::MAX` until a server sets a limit.
            if let Ok(streams) = u32::try_from(sender.current_max_send_streams()) {
                state.server_streams(streams);
            }
        }
        connect
    }

    pub(crate) fn is_broken(&self) -> bool {
        self.broken.get()
    }

    /// A stream's request failed with `error` (of class `kind`); true when
    /// the server never processed it, so it may go again.
    pub(crate) fn failed(&self, error: &h2::Error, sent: bool, kind: ErrorKind) -> bool {
        let failure = H2Failure::of(error, sent);
        if kind != ErrorKind::StreamReset {
            self.broken.set(true);
        }
        if failure.closed_by_server() {
            self.by_server.set(true);
        }
        failure.unprocessed()
    }

    /// What the next connection counts as: a reconnect unless this one
    /// broke by an error (or was retired: a planned reconnect instead).
    pub(crate) fn successor_is_reconnect(&self) -> bool {
        !self.broken.get() || self.by_server.get()
    }
}

/// Why a request failed, and whether it had left (its HEADERS handed to the
/// connection) by then: one not yet sent was surely not processed.
pub(crate) type SendError = (h2::Error, bool);

/// An error before the request left.
pub(crate) fn unsent(error: h2::Error) -> SendError {
    (error, false)
}

/// An error once the request had left.
pub(crate) fn sent(error: h2::Error) -> SendError {
    (error, true)
}
