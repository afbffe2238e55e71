//! Test helpers shared by the workspace's integration tests: the built-in
//! target on an ephemeral loopback port, small hand-written servers that
//! misbehave on purpose, and a runner for the `stampede` binary that returns
//! its JSON result. Never fixed ports, never the internet. Tests that need an
//! outside tool (curl, Chromium, tmux, ab, `ip netns`) find it through [`tool_or_skip`]
//! or [`require_tool!`], the one skip-or-fail rule (`STAMPEDE_REQUIRE_TOOLS`);
//! tests that cover every event loop take [`EVENT_LOOPS`] and ask
//! [`event_loop_or_skip`], the same rule for io_uring.
//!
//! - `lib.rs`: the built-in target ([`spawn_target`], [`one_thread`]), raw
//!   servers ([`RawServer`]), ports, temporary folders and [`run_stampede`].
//! - `binary.rs`: [`binary`], [`stampede`], [`text`], [`read_json`],
//!   [`assert_succeeded`]: the
//!   binary under test and what it printed or wrote.
//! - `tools.rs`: outside tools and the skip-or-fail rule.
//! - `event_loops.rs`: [`EVENT_LOOPS`], and whether this machine has io_uring
//!   ([`event_loop_or_skip`]).
//! - `prometheus.rs`: a real [`Prometheus`] for the metrics tests, and
//!   [`http_get`] / [`wait_for`].
//! - `runs.rs`: [`run_ok`], [`run_clean`], [`run_on_loop`],
//!   [`run_ok_on_loop`]: a run that must succeed, on the event loop asked for.
//! - `serve.rs`: [`ServeProcess`], `stampede serve` in its own process.
//! - `devtools.rs`: headless Chromium driven over the DevTools protocol
//!   ([`Browser`]), for live pages and the Network events of a visit.
//! - `har_recording.rs`: those events written as a HAR 1.2 file
//!   ([`har_from_network_events`]).

mod binary;
mod counting_alloc;
mod devtools;
mod event_loops;
mod har_recording;
pub mod jmeter;
pub mod nginx;
mod prometheus;
mod redirect_urls;
mod runs;
mod serve;
mod tls;
mod tools;
pub mod workload;
pub mod wrk_scripts;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

pub use binary::{assert_succeeded, binary, read_json, stampede, text};
pub use counting_alloc::{thread_allocations, CountingAllocator};
pub use devtools::Browser;
pub use event_loops::{event_loop_or_skip, EVENT_LOOPS, HIDE_IO_URING, NO_IO_URING};
pub use har_recording::har_from_network_events;
pub use prometheus::{get_with, http_get, wait_for, Prometheus};
pub use redirect_urls::{query_encoded, redirect_to};
pub use runs::{run_clean, run_ok, run_ok_on_loop, run_on_loop, run_on_one_loop};
pub use serve::ServeProcess;
pub use stampede_target::{Config as TargetConfig, Server, ServerHandle, StatsSnapshot};
pub use tls::{self_signed_server_config, self_signed_server_config_and_pem};
pub use tools::{skip_or_fail, tool_or_skip, REQUIRE_TOOLS, SKIP_LOG};

/// Starts the built-in target on 127.0.0.1 with an ephemeral port.
pub fn spawn_target(config: TargetConfig) -> ServerHandle {
    Server::start("127.0.0.1:0".parse().expect("literal address"), config)
        .expect("the built-in target starts on an ephemeral port")
}

/// The built-in target's configuration with one worker thread (the
/// default otherwise): the usual target of a test.
pub fn one_thread() -> TargetConfig {
    TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    }
}

/// A loopback UDP port nothing listens on (bound to an ephemeral port,
/// then released): where an HTTP/3 client waits in vain.
pub fn closed_udp_port() -> u16 {
    std::net::UdpSocket::bind("127.0.0.1:0")
        .and_then(|socket| socket.local_addr())
        .expect("an ephemeral UDP port")
        .port()
}

/// The checked-in golden files (`tests/golden` at the workspace's root).
pub fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden")
}

/// A loopback port nothing listens on (bound to an ephemeral port, then
/// released).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("an ephemeral port")
        .port()
}

/// A small blocking server on an ephemeral loopback port that hands every
/// accepted connection to `serve` on its own thread; stops when dropped.
pub struct RawServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    accepted: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
}

impl RawServer {
    /// Binds 127.0.0.1 on an ephemeral port and starts accepting.
    pub fn start<F>(serve: F) -> RawServer
    where
        F: Fn(TcpStream) + Send + Sync + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind an ephemeral port");
        listener
            .set_nonblocking(true)
            .expect("nonblocking listener");
        let addr = listener.local_addr().expect("bound address");
        let stop = Arc::new(AtomicBool::new(false));
        let accepted = Arc::new(AtomicU64::new(0));
        let serve = Arc::new(serve);
        let (stop_flag, counter) = (stop.clone(), accepted.clone());
        let thread = std::thread::spawn(move || {
            while !stop_flag.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        counter.fetch_add(1, Ordering::Relaxed);
                        let _ = stream.set_nonblocking(false);
                        let serve = serve.clone();
                        std::thread::spawn(move || serve(stream));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(2)),
                }
            }
        });
        RawServer {
            addr,
            stop,
            accepted,
            thread: Some(thread),
        }
    }

    /// The loopback address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://ADDR` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> u64 {
        self.accepted.load(Ordering::Relaxed)
    }
}

impl Drop for RawServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A server that answers at once, except that every request arriving in
/// [1.0 s, 2.0 s) after `epoch` is held until 2.0 s: one stall of one second.
pub fn stalling_server(epoch: std::time::Instant) -> RawServer {
    stalling_between(epoch, Duration::from_secs(1), Duration::from_secs(2))
}

/// A server that answers at once (200, `ok`), except that every request
/// arriving in [`from`, `to`) after `epoch` is held until `to`.
pub fn stalling_between(epoch: std::time::Instant, from: Duration, to: Duration) -> RawServer {
    RawServer::start(move |mut stream| {
        let _ = stream.set_nodelay(true);
        while read_request_head(&mut stream) {
            let t = epoch.elapsed();
            if t >= from && t < to {
                std::thread::sleep(to - t);
            }
            if stream
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                .is_err()
            {
                return;
            }
        }
    })
}

/// Reads one request head (up to the blank line) from a blocking stream;
/// false when the peer closed first.
pub fn read_request_head(stream: &mut TcpStream) -> bool {
    read_request_line(stream).is_some()
}

/// Reads one request head from a blocking stream and gives its request
/// line (`GET /p HTTP/1.1`); None when the peer closed first.
pub fn read_request_line(stream: &mut TcpStream) -> Option<String> {
    let head = read_whole_head(stream)?;
    Some(head.lines().next().unwrap_or("").to_string())
}

/// Reads one request head (request line and headers, up to the blank
/// line) from a blocking stream; None when the peer closed first.
pub fn read_whole_head(stream: &mut TcpStream) -> Option<String> {
    let mut seen = Vec::new();
    let mut byte = [0u8; 1];
    while !seen.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => seen.push(byte[0]),
            _ => return None,
        }
    }
    Some(String::from_utf8_lossy(&seen).into_owned())
}

/// Answers every request on the connection with `response`, keeping it open.
pub fn answer_each_request(mut stream: TcpStream, response: &[u8]) {
    while read_request_head(&mut stream) {
        if stream.write_all(response).is_err() {
            return;
        }
    }
}

/// The result of running the `stampede` binary.
pub struct Run {
    /// The process's exit status, stdout and stderr.
    pub output: Output,
    /// The parsed `--json` file, when the run wrote one.
    pub json: Option<serde_json::Value>,
}

impl Run {
    /// The exit code; None when a signal ended the process.
    pub fn code(&self) -> Option<i32> {
        self.output.status.code()
    }

    /// Stderr as text (invalid UTF-8 replaced).
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// Stdout as text (invalid UTF-8 replaced).
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    /// The JSON result; panics with stderr when there is none.
    pub fn result(&self) -> &serde_json::Value {
        self.json
            .as_ref()
            .unwrap_or_else(|| panic!("no JSON result; stderr: {}", self.stderr()))
    }

    /// A count from the result, e.g. `count("/requests/sent")`.
    pub fn count(&self, pointer: &str) -> u64 {
        self.result()
            .pointer(pointer)
            .and_then(|v| v.as_u64())
            .unwrap_or_else(|| panic!("{pointer} missing in {}", self.result()))
    }

    /// The accounting invariant every result keeps: each request sent is in
    /// exactly one outcome class (`sent = success + failed_status +
    /// check_failed + errors + unfinished`), and the complete responses are
    /// the three classes that had one. `label` names the case in a failure.
    pub fn assert_accounted(&self, label: &str) {
        let requests = &self.result()["requests"];
        let class = |name: &str| requests[name].as_u64().unwrap_or(0);
        let answered = class("success") + class("failed_status") + class("check_failed");
        assert_eq!(
            class("sent"),
            answered + class("errors") + class("unfinished"),
            "{label}: sent = success + failed_status + check_failed + errors + unfinished: {requests}"
        );
        assert_eq!(
            class("completed"),
            answered,
            "{label}: completed = success + failed_status + check_failed: {requests}"
        );
    }
}

/// A fresh temporary directory under the target dir, unique per call.
pub fn temp_dir(name: &str) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("stampede-test-{}-{name}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

/// Runs `binary` with `args` plus `--json FILE` and `--quiet`, and parses the file.
pub fn run_stampede(binary: &Path, args: &[&str]) -> Run {
    let dir = temp_dir("run");
    let json_path = dir.join("result.json");
    let output = Command::new(binary)
        .args(args)
        .arg("--json")
        .arg(&json_path)
        .arg("--quiet")
        .output()
        .expect("the stampede binary runs");
    let json = std::fs::read_to_string(&json_path)
        .ok()
        .map(|text| serde_json::from_str(&text).expect("the result file is valid JSON"));
    let _ = std::fs::remove_dir_all(&dir);
    Run { output, json }
}
