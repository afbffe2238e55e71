//! The per-worker context every connection of a worker shares: its config,
//! counters, Date and page caches, file cache, access log, TLS acceptor and the
//! shutdown flags. A leaf: the accept loop (`worker`), the transports and the
//! protocol loops (`conn`, `http2`, `tls`, `routes`) all read it, and it names
//! none of them, so they do not import each other in a circle through it.

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use tokio::sync::Notify;
use tokio_rustls::TlsAcceptor;

use crate::accesslog::{AccessLog, Entry};
use crate::clock::WallStrings;
use crate::files::FileCache;
use crate::pages::Pages;
use crate::route_label::Route;
use crate::stats::{Registry, WorkerStats};
use crate::Config;

/// State shared by the connections of one worker (never across threads).
pub(crate) struct Worker {
    pub idx: usize,
    pub cfg: Arc<Config>,
    pub registry: Arc<Registry>,
    pub wall: RefCell<WallStrings>,
    pub pages: RefCell<Pages>,
    pub files: Option<RefCell<FileCache>>,
    pub log: Option<RefCell<AccessLog>>,
    /// Set with TLS: every accepted connection starts with a handshake.
    pub tls: Option<TlsAcceptor>,
    /// Set when shutdown begins: finish the request at hand, then close.
    pub stopping: Cell<bool>,
    pub stop_notify: Notify,
    /// Connections of this worker still open.
    pub open: Cell<usize>,
    pub drained: Notify,
    /// The `Alt-Svc` header line of TCP responses (`serve --http3`), or empty.
    pub alt_svc: Vec<u8>,
}

impl Worker {
    #[inline]
    pub(crate) fn stats(&self) -> &WorkerStats {
        &self.registry.workers[self.idx]
    }

    /// Counts a response of `route` (the one routes.rs chose, or
    /// [`Route::Other`] for a request no route saw) and writes its
    /// access-log line.
    #[inline]
    pub(crate) fn record(&self, entry: &Entry, route: Route) {
        self.stats().response(entry.status);
        if self.cfg.count_routes {
            self.stats().route_response(route, entry.status);
        }
        if let Some(log) = &self.log {
            log.borrow_mut().line(entry);
        }
    }

    pub(crate) fn flush_log(&self) {
        if let Some(log) = &self.log {
            log.borrow_mut().flush();
        }
    }
}
