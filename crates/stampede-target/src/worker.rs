//! One worker: an OS thread with its own tokio current-thread runtime and LocalSet,
//! its own SO_REUSEPORT listener, its own Date/page/file caches and access-log buffer.
//! Owns accepting (with the connection cap and EMFILE back-off), the once-a-second
//! tick and the graceful drain. Requests themselves are served in `conn`.

use std::cell::{Cell, RefCell};
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Notify};

use crate::accesslog::{AccessLog, Entry, Sink};
use crate::clock::WallStrings;
use crate::files::FileCache;
use crate::pages::Pages;
use crate::stats::{Registry, WorkerStats};
use crate::Config;

/// Accept errors that mean "out of a resource": retrying at once would spin.
const RESOURCE_ERRORS: [i32; 4] = [libc::EMFILE, libc::ENFILE, libc::ENOBUFS, libc::ENOMEM];
/// How long a worker stops accepting after such an error (it keeps serving meanwhile).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// State shared by the connections of one worker (never across threads).
pub struct Worker {
    pub idx: usize,
    pub cfg: Arc<Config>,
    pub registry: Arc<Registry>,
    pub wall: RefCell<WallStrings>,
    pub pages: RefCell<Pages>,
    pub files: Option<RefCell<FileCache>>,
    pub log: Option<RefCell<AccessLog>>,
    /// Set when shutdown begins: finish the request at hand, then close.
    pub stopping: Cell<bool>,
    pub stop_notify: Notify,
    /// Connections of this worker still open.
    pub open: Cell<usize>,
    pub drained: Notify,
}

impl Worker {
    #[inline]
    pub fn stats(&self) -> &WorkerStats {
        &self.registry.workers[self.idx]
    }

    /// Counts a response and writes its access-log line.
    #[inline]
    pub fn record(&self, entry: &Entry) {
        self.stats().response(entry.status);
        if let Some(log) = &self.log {
            log.borrow_mut().line(entry);
        }
    }

    fn flush_log(&self) {
        if let Some(log) = &self.log {
            log.borrow_mut().flush();
        }
    }
}

/// What a worker thread is handed.
pub struct Setup {
    pub idx: usize,
    pub listener: std::net::TcpListener,
    pub cfg: Arc<Config>,
    pub registry: Arc<Registry>,
    pub log_sink: Option<Sink>,
    pub root: Option<std::path::PathBuf>,
    pub stop: watch::Receiver<bool>,
}

/// Runs one worker to completion (until shutdown and drain).
pub fn run(setup: Setup, rt: tokio::runtime::Runtime) -> std::io::Result<()> {
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async move {
        let listener = TcpListener::from_std(setup.listener)?;
        let wall = WallStrings::now();
        let w = Rc::new(Worker {
            idx: setup.idx,
            pages: RefCell::new(Pages::new(&wall)),
            wall: RefCell::new(wall),
            files: setup
                .root
                .map(|r| RefCell::new(FileCache::new(r, setup.cfg.file_cache_max))),
            log: setup.log_sink.map(|s| RefCell::new(AccessLog::new(s))),
            cfg: setup.cfg,
            registry: setup.registry,
            stopping: Cell::new(false),
            stop_notify: Notify::new(),
            open: Cell::new(0),
            drained: Notify::new(),
        });
        let ticker = tokio::task::spawn_local(tick(w.clone()));
        let mut stop = setup.stop;
        tokio::select! {
            _ = accept_loop(&listener, &w) => {}
            _ = stop.wait_for(|s| *s) => {}
        }
        drop(listener);
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

async fn accept_loop(listener: &TcpListener, w: &Rc<Worker>) {
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => admit(stream, peer, w),
            Err(e)
                if e.raw_os_error()
                    .is_some_and(|c| RESOURCE_ERRORS.contains(&c)) =>
            {
                // The pending connection stays queued, so accepting again now would spin.
                tokio::time::sleep(ACCEPT_BACKOFF).await;
            }
            // ECONNABORTED and friends concern one connection only.
            Err(_) => tokio::task::yield_now().await,
        }
    }
}

fn admit(stream: TcpStream, peer: SocketAddr, w: &Rc<Worker>) {
    let open = w.registry.open.fetch_add(1, Ordering::Relaxed);
    if open >= w.cfg.max_connections {
        w.registry.open.fetch_sub(1, Ordering::Relaxed);
        w.stats().refused();
        tokio::task::spawn_local(refuse(stream, peer, w.clone()));
        return;
    }
    let _ = stream.set_nodelay(true);
    w.stats().accepted();
    w.open.set(w.open.get() + 1);
    tokio::task::spawn_local(crate::conn::serve(stream, peer, w.clone()));
}

/// Over the cap: a polite 503 with Connection: close, then a lingering close.
async fn refuse(mut stream: TcpStream, peer: SocketAddr, w: Rc<Worker>) {
    const BODY: &[u8] = b"503 Service Unavailable: connection limit reached\n";
    let mut resp = Vec::with_capacity(256);
    {
        let wall = w.wall.borrow();
        let x = crate::response::Exchange {
            version: 1,
            keep_alive: false,
            head_only: false,
            date: &wall.http,
        };
        crate::response::whole(&mut resp, &x, 503, "text/plain", BODY);
        let ip = peer.ip().to_string();
        w.record(&Entry {
            peer: ip.as_bytes(),
            clf_date: &wall.clf,
            method: "-",
            target: "-",
            version: None,
            status: 503,
            bytes: BODY.len(),
        });
    }
    if stream.write_all(&resp).await.is_ok() {
        w.stats().bytes_out(resp.len());
        linger(&mut stream).await;
    }
}

/// Half-closes, then reads and discards briefly, so that unread request bytes do not
/// turn the close into a reset that destroys the response in flight.
pub async fn linger(stream: &mut TcpStream) {
    let _ = stream.shutdown().await;
    let mut sink = [0u8; 4096];
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        let mut total = 0usize;
        while let Ok(n) = stream.read(&mut sink).await {
            total += n;
            if n == 0 || total > 1 << 20 {
                break;
            }
        }
    })
    .await;
}
