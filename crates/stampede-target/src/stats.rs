//! Exact counters: responses by status, connections, bytes out. One `WorkerStats` per
//! worker, written only by that worker's thread (a relaxed load + store, no locked
//! instruction on the request path) and summed by readers into a `StatsSnapshot`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

use serde::Serialize;

use crate::route_label::{Route, NAMES, ROUTES};

/// Status codes are counted in a flat array indexed by code.
const STATUS_SLOTS: usize = 600;

/// Counters owned by one worker (padded so that workers never share a cache line).
#[repr(align(128))]
pub(crate) struct WorkerStats {
    by_status: [AtomicU64; STATUS_SLOTS],
    accepted: AtomicU64,
    closed: AtomicU64,
    refused: AtomicU64,
    bytes_out: AtomicU64,
    tls_handshakes: AtomicU64,
    tls_failures: AtomicU64,
    h2_connections: AtomicU64,
    h2_streams: AtomicU64,
    h3_connections: AtomicU64,
    h3_streams: AtomicU64,
    ws_sessions: AtomicU64,
    ws_messages_in: AtomicU64,
    ws_messages_out: AtomicU64,
    /// Responses by route and status, only with `Config::count_routes`.
    by_route: [[AtomicU64; STATUS_SLOTS]; ROUTES],
}

/// Adds to a counter that only the calling thread writes: no read-modify-write lock needed.
#[inline]
fn bump(c: &AtomicU64, n: u64) {
    c.store(c.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
}

impl WorkerStats {
    fn new() -> Self {
        WorkerStats {
            by_status: std::array::from_fn(|_| AtomicU64::new(0)),
            accepted: AtomicU64::new(0),
            closed: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            bytes_out: AtomicU64::new(0),
            tls_handshakes: AtomicU64::new(0),
            tls_failures: AtomicU64::new(0),
            h2_connections: AtomicU64::new(0),
            h2_streams: AtomicU64::new(0),
            h3_connections: AtomicU64::new(0),
            h3_streams: AtomicU64::new(0),
            ws_sessions: AtomicU64::new(0),
            ws_messages_in: AtomicU64::new(0),
            ws_messages_out: AtomicU64::new(0),
            by_route: std::array::from_fn(|_| std::array::from_fn(|_| AtomicU64::new(0))),
        }
    }

    /// One response was produced with this status.
    #[inline]
    pub(crate) fn response(&self, status: u16) {
        let i = (status as usize).min(STATUS_SLOTS - 1);
        bump(&self.by_status[i], 1);
    }
    /// One response of `route` was produced with this status
    /// (`serve --metrics`; on top of [`WorkerStats::response`]).
    #[inline]
    pub(crate) fn route_response(&self, route: Route, status: u16) {
        let i = (status as usize).min(STATUS_SLOTS - 1);
        bump(&self.by_route[route as usize][i], 1);
    }
    /// A connection was accepted and will be served.
    pub(crate) fn accepted(&self) {
        bump(&self.accepted, 1);
    }
    /// A served connection ended.
    pub(crate) fn closed(&self) {
        bump(&self.closed, 1);
    }
    /// A connection was refused (over `max_connections`).
    pub(crate) fn refused(&self) {
        bump(&self.refused, 1);
    }
    /// Bytes accepted by the kernel for sending (before TLS: the HTTP bytes).
    #[inline]
    /// A WebSocket session began (after its 101).
    pub(crate) fn ws_session(&self) {
        bump(&self.ws_sessions, 1);
    }

    /// A whole WebSocket data message was read (fragments joined).
    pub(crate) fn ws_message_in(&self) {
        bump(&self.ws_messages_in, 1);
    }

    /// A WebSocket data message was queued to send.
    pub(crate) fn ws_message_out(&self) {
        bump(&self.ws_messages_out, 1);
    }

    pub(crate) fn bytes_out(&self, n: usize) {
        bump(&self.bytes_out, n as u64);
    }
    /// A TLS handshake completed.
    pub(crate) fn tls_handshake(&self) {
        bump(&self.tls_handshakes, 1);
    }
    /// A TLS handshake failed or timed out.
    pub(crate) fn tls_failure(&self) {
        bump(&self.tls_failures, 1);
    }
    /// A connection started speaking HTTP/2.
    pub(crate) fn h2_connection(&self) {
        bump(&self.h2_connections, 1);
    }
    /// An HTTP/2 stream (one request) was accepted.
    pub(crate) fn h2_stream(&self) {
        bump(&self.h2_streams, 1);
    }
    /// A QUIC connection completed its handshake and speaks HTTP/3.
    pub(crate) fn h3_connection(&self) {
        bump(&self.h3_connections, 1);
    }
    /// An HTTP/3 request stream was accepted.
    pub(crate) fn h3_stream(&self) {
        bump(&self.h3_streams, 1);
    }
}

/// All workers' counters plus what is global to the server.
pub(crate) struct Registry {
    pub workers: Vec<WorkerStats>,
    pub started: Instant,
    /// Open connections across workers, for `max_connections` (touched per connection, not per request).
    pub open: AtomicUsize,
}

impl Registry {
    pub(crate) fn new(workers: usize) -> Self {
        Registry {
            workers: (0..workers).map(|_| WorkerStats::new()).collect(),
            started: Instant::now(),
            open: AtomicUsize::new(0),
        }
    }

    /// Sums the workers' counters.
    pub(crate) fn snapshot(&self) -> StatsSnapshot {
        let mut s = StatsSnapshot {
            requests_total: 0,
            requests_by_status: BTreeMap::new(),
            requests_by_route: BTreeMap::new(),
            connections_accepted: 0,
            connections_open: 0,
            connections_refused: 0,
            bytes_out: 0,
            tls_handshakes: 0,
            tls_handshake_failures: 0,
            h2_connections: 0,
            h2_streams_total: 0,
            h3_connections: 0,
            h3_streams_total: 0,
            ws_sessions: 0,
            ws_messages_in: 0,
            ws_messages_out: 0,
            uptime_s: self.started.elapsed().as_secs_f64(),
            workers: self.workers.len(),
        };
        let mut closed = 0;
        for w in &self.workers {
            for (code, c) in w.by_status.iter().enumerate() {
                let n = c.load(Ordering::Relaxed);
                if n > 0 {
                    *s.requests_by_status.entry(code as u16).or_insert(0) += n;
                    s.requests_total += n;
                }
            }
            s.connections_accepted += w.accepted.load(Ordering::Relaxed);
            closed += w.closed.load(Ordering::Relaxed);
            s.connections_refused += w.refused.load(Ordering::Relaxed);
            s.bytes_out += w.bytes_out.load(Ordering::Relaxed);
            s.tls_handshakes += w.tls_handshakes.load(Ordering::Relaxed);
            s.tls_handshake_failures += w.tls_failures.load(Ordering::Relaxed);
            s.h2_connections += w.h2_connections.load(Ordering::Relaxed);
            s.h2_streams_total += w.h2_streams.load(Ordering::Relaxed);
            s.h3_connections += w.h3_connections.load(Ordering::Relaxed);
            s.h3_streams_total += w.h3_streams.load(Ordering::Relaxed);
            s.ws_sessions += w.ws_sessions.load(Ordering::Relaxed);
            s.ws_messages_in += w.ws_messages_in.load(Ordering::Relaxed);
            s.ws_messages_out += w.ws_messages_out.load(Ordering::Relaxed);
            for (route, codes) in w.by_route.iter().enumerate() {
                for (code, c) in codes.iter().enumerate() {
                    let n = c.load(Ordering::Relaxed);
                    if n > 0 {
                        *s.requests_by_route
                            .entry(NAMES[route])
                            .or_default()
                            .entry(code as u16)
                            .or_insert(0) += n;
                    }
                }
            }
        }
        s.connections_open = s.connections_accepted.saturating_sub(closed);
        s
    }
}

/// What the server has done so far; served as JSON on `/stats`.
///
/// A response is counted when it is produced (before it is written), so a client
/// that has read N responses always finds at least those N here. `/stats` does not
/// count itself in the body it returns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatsSnapshot {
    /// Responses produced, all statuses (including 503 refusals and 408 timeouts).
    pub requests_total: u64,
    /// Responses produced, by status code.
    pub requests_by_status: BTreeMap<u16, u64>,
    /// Responses produced, by route (`/`, `/delay`, `files`, `other`, …) and
    /// status code; counted only when the server was asked to
    /// (`serve --metrics`), absent otherwise.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub requests_by_route: BTreeMap<&'static str, BTreeMap<u16, u64>>,
    /// Connections accepted and served (refused ones excluded).
    pub connections_accepted: u64,
    /// Connections open now.
    pub connections_open: u64,
    /// Connections refused with 503 because of `max_connections`.
    pub connections_refused: u64,
    /// HTTP bytes written (HTTP/1.1 heads and bodies; for HTTP/2 every frame).
    /// Over TLS these are the bytes before encryption: TLS records and handshakes
    /// are not counted.
    pub bytes_out: u64,
    /// TLS handshakes completed (a connection counts in `connections_accepted` too).
    pub tls_handshakes: u64,
    /// TLS handshakes that failed or timed out (their connections were closed).
    pub tls_handshake_failures: u64,
    /// Connections that spoke HTTP/2 (ALPN `h2` or h2c prior knowledge).
    pub h2_connections: u64,
    /// HTTP/2 streams accepted (each is one request, counted in `requests_total`
    /// when its response is produced).
    pub h2_streams_total: u64,
    /// QUIC connections that spoke HTTP/3 (`serve --http3`; each counts in
    /// `connections_accepted` and `tls_handshakes` too).
    pub h3_connections: u64,
    /// HTTP/3 request streams accepted.
    pub h3_streams_total: u64,
    /// WebSocket sessions begun (`/ws/echo`, `/ws/push`: each upgrade's 101
    /// counts in `requests_total` too).
    pub ws_sessions: u64,
    /// WebSocket text and binary messages read (a fragmented one counts
    /// once; pings, pongs and closes are not messages).
    pub ws_messages_in: u64,
    /// WebSocket text and binary messages sent (echoes and pushes).
    pub ws_messages_out: u64,
    /// Seconds since the server started.
    pub uptime_s: f64,
    /// Worker threads.
    pub workers: usize,
}
