//! `--sse` against an event-stream server nobody here wrote:
//! sse-starlette's `EventSourceResponse` under uvicorn (PyPI), from
//! tests/sse_support/sse_app.py. Its frames are its own (`id:`, `data:`,
//! CRLF line ends, a chunked body): the events counted equal the events it
//! sent, on every HTTP/1.1 event loop, and the gaps are its interval.

use stampede_testkit::{event_loop_or_skip, free_port, run_on_loop, skip_or_fail, EVENT_LOOPS};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The versions .ci/run installs: the ones this test was written against.
const PACKAGES: &str = "sse-starlette==3.7.1 uvicorn==0.55.0";

/// The server, killed when dropped.
struct App(Child);

impl Drop for App {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn sse_starlette_events_are_counted_exactly_on_every_loop() {
    let Some(python) = stampede_testkit::tool_or_skip("python3") else {
        return;
    };
    let probe = Command::new(&python)
        .args(["-c", "import sse_starlette, uvicorn"])
        .output()
        .expect("python3 runs");
    if !probe.status.success() {
        skip_or_fail(
            &format!(
                "{} cannot import sse_starlette and uvicorn",
                python.display()
            ),
            &format!("pip install {PACKAGES} (into the python3 on PATH)"),
        );
        return;
    }
    let port = free_port();
    let app = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sse_support/sse_app.py");
    let _app = App(Command::new(&python)
        .arg(&app)
        .arg(port.to_string())
        .stdout(Stdio::null())
        .spawn()
        .expect("the sse-starlette app starts"));
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "uvicorn never listened"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let url = format!("http://127.0.0.1:{port}/events/12/50");
    for io in EVENT_LOOPS.into_iter().filter(|io| event_loop_or_skip(io)) {
        let Some(run) = run_on_loop(io, &[&url, "--sse", "-n", "3", "-c", "3", "-t", "1"]) else {
            continue;
        };
        let at = format!("--io {io}: {}", run.stderr());
        assert_eq!(run.code(), Some(0), "{at}");
        assert_eq!(run.count("/requests/success"), 3, "{at}");
        assert_eq!(run.count("/stream/events"), 3 * 12, "{at}");
        assert_eq!(run.count("/stream/gap/count"), 3 * 11, "{at}");
        let p50 = run.count("/stream/gap/p50_us");
        assert!(p50.abs_diff(50_000) <= 10_000, "{at}: p50 {p50} µs");
    }
}
