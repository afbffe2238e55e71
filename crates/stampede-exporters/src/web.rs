//! `stampede run --web ADDR`: a small HTTP server for one browser page.
//! `GET /` is the HTML report of the run so far with a Stop button
//! (web_page.rs); `GET /events` streams server-sent events, an update of
//! the report once a second, read from the copy the snapshot stream keeps
//! (web_state.rs: no polling of the engine, nothing per request), and
//! `done` when the run has ended; `POST /stop` ends the run as Ctrl-C
//! does (the stop handle: the result is still written). After the run `/`
//! is the final report, served until Ctrl-C or `--web-linger`.
//!
//! A thread per browser connection (a page holds its event stream open),
//! at most `MAX_CLIENTS` at once. The address is bound before any load is
//! sent, so a bad one is refused up front in one line.

use crate::web_http::{self, Request};
use crate::web_state::LiveBoard;
use anyhow::Context;
use stampede_engine::StopHandle;
use stampede_metrics::{RunResult, Running};
use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Browser connections served at once (a page, its event stream, a stop).
const MAX_CLIENTS: usize = 16;
/// The header a stop request must carry: a page of another site cannot
/// send it without a CORS preflight, which this server never grants, so
/// only the dashboard itself (or a deliberate client) stops the run.
const STOP_HEADER: &str = "x-stampede";
/// How often an event stream sends the run so far.
const UPDATE_EVERY: Duration = Duration::from_secs(1);

/// Where the run is, as the page shows it.
enum Phase {
    Running,
    /// The final report, as `--html` writes it.
    Finished(Arc<Vec<u8>>),
}

struct Shared {
    live: LiveBoard,
    running: Running,
    workload: Option<Arc<stampede_engine::WorkloadSpec>>,
    /// The run's stop handle, as the first Ctrl-C uses it.
    stop: StopHandle,
    phase: Mutex<Phase>,
    /// Signalled when the phase changes, so streams say `done` at once.
    changed: Condvar,
    clients: AtomicUsize,
}

impl Shared {
    fn phase(&self) -> MutexGuard<'_, Phase> {
        self.phase
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// When the latest copy was made (None before the first snapshot).
    fn copied_at(&self) -> Option<Duration> {
        self.live
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
            .map(|live| live.elapsed)
    }

    /// The run so far as a result (empty before the first snapshot).
    fn result_so_far(&self) -> RunResult {
        let live = self
            .live
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
            .unwrap_or_default();
        live.result(&self.running, self.workload.as_deref())
    }
}

/// A bound, serving `--web` server.
pub struct WebServer {
    address: SocketAddr,
    /// None: until Ctrl-C.
    linger: Option<Duration>,
    shared: Arc<Shared>,
}

impl WebServer {
    /// Binds `address` (None: no server) and starts serving the run that
    /// `running` (and its `workload`, when it has one) describes, as `live`
    /// fills; an address that cannot be bound is one line naming why.
    pub fn start(
        address: Option<&str>,
        linger: Option<Duration>,
        running: Running,
        workload: Option<Arc<stampede_engine::WorkloadSpec>>,
        live: LiveBoard,
        stop: StopHandle,
    ) -> anyhow::Result<Option<WebServer>> {
        let Some(text) = address else {
            return Ok(None);
        };
        let listener = web_http::bind("--web", text, "127.0.0.1:8089")?;
        let address = listener
            .local_addr()
            .context("--web: reading the bound address")?;
        let shared = Arc::new(Shared {
            live,
            running,
            workload,
            stop,
            phase: Mutex::new(Phase::Running),
            changed: Condvar::new(),
            clients: AtomicUsize::new(0),
        });
        let serving = shared.clone();
        std::thread::Builder::new()
            .name("stampede-web".into())
            .spawn(move || accept(&listener, &serving))
            .context("--web: starting the server thread")?;
        eprintln!("stampede: web: live dashboard at http://{address}/");
        Ok(Some(WebServer {
            address,
            linger,
            shared,
        }))
    }

    /// The run has ended: from now on `/` is its report, and open pages
    /// are told to load it.
    pub fn finish(&self, result: &RunResult) {
        let mut page = Vec::new();
        if let Err(error) = stampede_report::render_html(result, &mut page) {
            page = format!("rendering the report failed: {error}\n").into_bytes();
        }
        *self.shared.phase() = Phase::Finished(Arc::new(page));
        self.shared.changed.notify_all();
    }

    /// Keeps serving the report for `--web-linger`, or until `ended` (a
    /// Ctrl-C came) says to stop.
    pub fn linger(&self, ended: impl Fn() -> bool) {
        if ended() || self.linger.is_some_and(|linger| linger.is_zero()) {
            return;
        }
        let how_long = match self.linger {
            Some(linger) => format!("for {}", stampede_plan::format_duration(linger)),
            None => "until Ctrl-C".to_string(),
        };
        eprintln!(
            "stampede: web: serving the report at http://{}/ {how_long}",
            self.address
        );
        let until = self.linger.map(|linger| Instant::now() + linger);
        while until.is_none_or(|until| Instant::now() < until) && !ended() {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn accept(listener: &TcpListener, shared: &Arc<Shared>) {
    for mut stream in listener.incoming().flatten() {
        if shared.clients.fetch_add(1, Ordering::AcqRel) >= MAX_CLIENTS {
            shared.clients.fetch_sub(1, Ordering::AcqRel);
            if let Ok(request) = web_http::read_request(&mut stream) {
                let busy = b"too many browser connections\n";
                let _ = web_http::respond(
                    &mut stream,
                    &request,
                    "503 Service Unavailable",
                    "text/plain",
                    busy,
                );
            }
            continue;
        }
        let client = shared.clone();
        let spawned = std::thread::Builder::new()
            .name("stampede-web-client".into())
            .spawn(move || {
                let _ = answer(stream, &client);
                client.clients.fetch_sub(1, Ordering::AcqRel);
            });
        if spawned.is_err() {
            shared.clients.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

fn answer(mut stream: TcpStream, shared: &Shared) -> std::io::Result<()> {
    let request = web_http::read_request(&mut stream)?;
    let html = "text/html; charset=utf-8";
    match (request.method.as_str(), request.path.as_str()) {
        ("GET" | "HEAD", "/" | "/index.html") => {
            let finished = match &*shared.phase() {
                Phase::Finished(page) => Some(page.clone()),
                Phase::Running => None,
            };
            let page = match finished {
                Some(page) => page,
                None => Arc::new(crate::web_page::live_page(&shared.result_so_far())),
            };
            web_http::respond(&mut stream, &request, "200 OK", html, &page)
        }
        ("GET", "/events") => events(stream, shared),
        ("POST", "/stop") => {
            let (status, body) = if request.header_contains(STOP_HEADER, "stop") {
                stop(shared)
            } else {
                (
                    "403 Forbidden",
                    "POST /stop needs the header X-Stampede: stop\n",
                )
            };
            web_http::respond(&mut stream, &request, status, "text/plain", body.as_bytes())
        }
        ("GET" | "HEAD", _) => not_found(&mut stream, &request),
        _ => web_http::respond(
            &mut stream,
            &request,
            "405 Method Not Allowed",
            "text/plain",
            b"GET / or /events, POST /stop\n",
        ),
    }
}

fn not_found(stream: &mut TcpStream, request: &Request) -> std::io::Result<()> {
    web_http::respond(
        stream,
        request,
        "404 Not Found",
        "text/plain",
        b"the dashboard is at /\n",
    )
}

/// The Stop button: the run's stop handle, as the first Ctrl-C uses it.
fn stop(shared: &Shared) -> (&'static str, &'static str) {
    if matches!(&*shared.phase(), Phase::Finished(_)) {
        return ("409 Conflict", "the run has already ended\n");
    }
    if !shared.stop.is_stopped() {
        eprintln!("stampede: stop requested from the web page; stopping");
    }
    shared.stop.stop();
    ("200 OK", "stopping; the result is being written\n")
}

/// The event stream: the run so far once a second (when a new copy was
/// made: nothing is rendered for an unchanged one), then `done` once the
/// run has ended.
fn events(mut stream: TcpStream, shared: &Shared) -> std::io::Result<()> {
    stream.write_all(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n\
          Connection: close\r\n\r\nretry: 2000\n\n",
    )?;
    let mut sent: Option<Option<Duration>> = None;
    loop {
        if matches!(&*shared.phase(), Phase::Finished(_)) {
            stream.write_all(b"event: done\ndata: {}\n\n")?;
            return stream.flush();
        }
        let copied_at = shared.copied_at();
        if sent != Some(copied_at) {
            let update = crate::web_page::live_update(&shared.result_so_far());
            write!(stream, "event: update\ndata: {update}\n\n")?;
            sent = Some(copied_at);
        } else {
            // A comment: finds a closed page (the write fails) between updates.
            stream.write_all(b": waiting\n\n")?;
        }
        stream.flush()?;
        let phase = shared.phase();
        let _ = shared
            .changed
            .wait_timeout_while(phase, UPDATE_EVERY, |phase| matches!(phase, Phase::Running));
    }
}
