//! One worker: an OS thread with its own tokio current-thread runtime and LocalSet,
//! its own SO_REUSEPORT listener (and its own registration of the shared Unix socket,
//! if any), its own Date/page/file caches and access-log buffer. Owns accepting (with
//! the connection cap and EMFILE back-off), the once-a-second tick and the graceful
//! drain. Connections are started here (`spawn`) and served in `conn` / `http2` /
//! `tls`; the state they share is `context::Worker`.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, UnixListener};
use tokio::sync::{watch, Notify};
use tokio_rustls::TlsAcceptor;

use crate::accesslog::{AccessLog, Entry, Sink};
use crate::clock::WallStrings;
use crate::context::Worker;
use crate::files::FileCache;
use crate::pages::Pages;
use crate::route_label::Route;
use crate::stats::Registry;
use crate::transport::{linger, OpenGuard, Peer, Transport};
use crate::{conn, tls, Config};

/// Accept errors that mean "out of a resource": retrying at once would spin.
const RESOURCE_ERRORS: [i32; 4] = [libc::EMFILE, libc::ENFILE, libc::ENOBUFS, libc::ENOMEM];
/// How long a worker stops accepting after such an error (it keeps serving meanwhile).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// What a worker thread is handed.
pub(crate) struct Setup {
    pub idx: usize,
    pub listener: std::net::TcpListener,
    /// This worker's handle (a dup) of the one Unix socket all workers accept from.
    pub unix: Option<std::os::unix::net::UnixListener>,
    pub tls: Option<TlsAcceptor>,
    pub cfg: Arc<Config>,
    pub registry: Arc<Registry>,
    pub log_sink: Option<Sink>,
    pub root: Option<std::path::PathBuf>,
    pub stop: watch::Receiver<bool>,
    /// `serve --http3`: this worker's UDP socket and QUIC configuration.
    pub quic: Option<(std::net::UdpSocket, quinn::ServerConfig)>,
    /// The `Alt-Svc` line TCP responses carry (empty without HTTP/3).
    pub alt_svc: Vec<u8>,
}

/// Runs one worker to completion (until shutdown and drain).
pub(crate) fn run(setup: Setup, rt: tokio::runtime::Runtime) -> std::io::Result<()> {
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async move {
        let listener = TcpListener::from_std(setup.listener)?;
        let unix = setup.unix.map(UnixListener::from_std).transpose()?;
        let quic = setup.quic.map(crate::http3::endpoint).transpose()?;
        let wall = WallStrings::now();
        let w = Rc::new(Worker {
            idx: setup.idx,
            pages: RefCell::new(Pages::new(&wall, &setup.alt_svc)),
            alt_svc: setup.alt_svc,
            wall: RefCell::new(wall),
            files: setup
                .root
                .map(|r| RefCell::new(FileCache::new(r, setup.cfg.file_cache_max))),
            log: setup.log_sink.map(|s| RefCell::new(AccessLog::new(s))),
            tls: setup.tls,
            cfg: setup.cfg,
            registry: setup.registry,
            stopping: Cell::new(false),
            stop_notify: Notify::new(),
            open: Cell::new(0),
            drained: Notify::new(),
        });
        let ticker = tokio::task::spawn_local(tick(w.clone()));
        let mut stop = setup.stop;
        let unix_loop = async {
            match &unix {
                Some(l) => accept_unix(l, &w).await,
                None => std::future::pending().await,
            }
        };
        let quic_loop = async {
            match &quic {
                Some(endpoint) => crate::http3::accept(endpoint, &w).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = accept_tcp(&listener, &w) => {}
            _ = unix_loop => {}
            _ = quic_loop => {}
            _ = stop.wait_for(|s| *s) => {}
        }
        drop(listener);
        drop(unix);
        drain(&w).await;
        ticker.abort();
        w.flush_log();
        Ok(())
    })
}

/// Stop accepting has happened: close idle connections, let busy ones finish within the grace.
async fn drain(w: &Rc<Worker>) {
    w.stopping.set(true);
    w.stop_notify.notify_waiters();
    let grace = tokio::time::sleep(w.cfg.shutdown_grace);
    tokio::pin!(grace);
    while w.open.get() > 0 {
        tokio::select! {
            _ = w.drained.notified() => {}
            _ = &mut grace => break,
        }
    }
}

/// Formats the Date once a second (on the wall-clock second) and flushes the log.
async fn tick(w: Rc<Worker>) {
    loop {
        let sub = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let to_next = Duration::from_nanos(1_000_000_000 - u64::from(sub) + 1_000_000);
        tokio::time::sleep(to_next).await;
        let wall = WallStrings::now();
        w.pages.borrow_mut().refresh(&wall);
        *w.wall.borrow_mut() = wall;
        w.flush_log();
    }
}

async fn accept_tcp(listener: &TcpListener, w: &Rc<Worker>) {
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                let _ = stream.set_nodelay(true);
                admit(stream, Peer::ip(peer.ip()), w)
            }
            Err(e) => accept_failed(e).await,
        }
    }
}

/// A Unix socket has no SO_REUSEPORT balancing, so every worker accepts from the same
/// socket (its own dup of the fd, registered in its own event loop). A new connection
/// wakes the idle workers, one wins the accept and the others see EAGAIN: busy workers
/// are not in `accept` and take no new connections, which balances like nginx without
/// `accept_mutex`, with no hand-off between threads and no single accepting thread.
async fn accept_unix(listener: &UnixListener, w: &Rc<Worker>) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => admit(stream, Peer::unix(), w),
            Err(e) => accept_failed(e).await,
        }
    }
}

async fn accept_failed(e: std::io::Error) {
    if e.raw_os_error()
        .is_some_and(|c| RESOURCE_ERRORS.contains(&c))
    {
        // The pending connection stays queued, so accepting again now would spin.
        tokio::time::sleep(ACCEPT_BACKOFF).await;
    } else {
        // ECONNABORTED and friends concern one connection only.
        tokio::task::yield_now().await;
    }
}

fn admit<S: Transport>(stream: S, peer: Peer, w: &Rc<Worker>) {
    let open = w.registry.open.fetch_add(1, Ordering::Relaxed);
    if open >= w.cfg.max_connections {
        w.registry.open.fetch_sub(1, Ordering::Relaxed);
        w.stats().refused();
        tokio::task::spawn_local(refuse(stream, peer, w.clone()));
        return;
    }
    w.stats().accepted();
    w.open.set(w.open.get() + 1);
    spawn(stream, peer, w);
}

/// Over the cap: a polite 503 with Connection: close, then a lingering close. (Over
/// TLS this is plaintext on a TLS port: the client sees a handshake failure, which is
/// what a refused connection is to it anyway.)
async fn refuse<S: Transport>(mut stream: S, peer: Peer, w: Rc<Worker>) {
    const BODY: &[u8] = b"503 Service Unavailable: connection limit reached\n";
    let mut resp = Vec::with_capacity(256);
    {
        let wall = w.wall.borrow();
        let x = crate::response::Exchange {
            version: 1,
            keep_alive: false,
            head_only: false,
            date: &wall.http,
            alt_svc: &w.alt_svc,
        };
        crate::response::whole(&mut resp, &x, 503, "text/plain", BODY);
        w.record(
            &Entry {
                peer: peer.as_bytes(),
                clf_date: &wall.clf,
                method: "-",
                target: "-",
                version: None,
                status: 503,
                bytes: BODY.len(),
            },
            Route::Other,
        );
    }
    if stream.write_all(&resp).await.is_ok() {
        w.stats().bytes_out(resp.len());
        linger(&mut stream).await;
    }
}

/// Spawns the task serving one admitted connection (already counted open): the
/// TLS handshake when configured, then HTTP/2 (ALPN `h2`) or the HTTP/1.1 loop of
/// `conn` (which itself hands an h2c prior-knowledge connection to `http2`).
fn spawn<S: Transport>(stream: S, peer: Peer, w: &Rc<Worker>) {
    let guard = OpenGuard::new(w.clone());
    match &w.tls {
        // The plain task type holds only the HTTP/1.1 loop.
        None => {
            let sniff = w.cfg.h2c;
            tokio::task::spawn_local(conn::serve(stream, peer, w.clone(), guard, sniff));
        }
        Some(acceptor) => {
            tokio::task::spawn_local(tls::serve(acceptor.clone(), stream, peer, w.clone(), guard));
        }
    }
}
