//! `--sse-reconnect`: a stream the server ends is asked for again as a
//! browser's `EventSource` does (WHATWG HTML, "Server-sent events",
//! §9.2.3 "Processing model": "When a user agent is to reestablish the
//! connection … wait a delay equal to the reconnection time of the event
//! source … If the EventSource object's last event ID string is not the
//! empty string, set (`Last-Event-ID`, lastEventIDValue) in request's
//! header list"; a 204 answer fails the connection, ending the
//! reconnects). Against the built-in target's `/sse/{n}/{ms}?drop_every=K`
//! (it resumes after the `Last-Event-ID` it is sent) and sse-starlette
//! under uvicorn (tests/sse_support/sse_app.py's `/resume`, which keeps
//! the `Last-Event-ID` each request carried): every event arrives once,
//! the reconnects are counted, and the wait across a reconnect is no gap
//! between events. A network error that cuts a stream is reconnected
//! after too, and counted (a raw server that closes mid-body).

use stampede_testkit::{
    binary, free_port, one_thread, run_ok, run_stampede, skip_or_fail, spawn_target, tool_or_skip,
};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn the_target_resumes_after_each_last_event_id_and_every_event_comes_once() {
    let target = spawn_target(one_thread());
    // 10 events, 3 per response, each response asking for a 20 ms wait.
    let url = format!(
        "http://{}/sse/10/5?drop_every=3&retry=20",
        target.local_addr()
    );
    let run = run_ok(&[
        "run",
        &url,
        "--sse",
        "--sse-for",
        "20s",
        "--sse-reconnect",
        "-n",
        "2",
        "-c",
        "2",
        "-t",
        "1",
    ]);
    run.assert_accounted("sse reconnect");
    let stream = &run.result()["stream"];
    // Per stream: events 0-2, 3-5, 6-8, 9, then a 204 (nothing after 9):
    // four reconnects, each event once.
    assert_eq!(run.count("/stream/streams"), 2, "{stream}");
    assert_eq!(run.count("/stream/events"), 2 * 10, "{stream}");
    assert_eq!(run.count("/stream/reconnects"), 2 * 4, "{stream}");
    // Gaps inside each response only (2 + 2 + 2 + 0): none across a reconnect.
    assert_eq!(run.count("/stream/gap/count"), 2 * 6, "{stream}");
    assert_eq!(run.count("/stream/first_event/count"), 2, "{stream}");
    // One request per stream, booked with its last answer, the 204.
    assert_eq!(run.count("/requests/success"), 2, "{stream}");
    assert_eq!(run.count("/status/204"), 2, "{}", run.result()["status"]);
    // Each of the four waits is the stream's retry: 20 ms at least.
    let length = run.count("/stream/length/p50_us");
    assert!(length >= 4 * 20_000, "length {length} µs");
}

#[test]
fn without_a_reconnect_the_stream_ends_with_the_servers_end() {
    let target = spawn_target(one_thread());
    let url = format!(
        "http://{}/sse/10/5?drop_every=3&retry=20",
        target.local_addr()
    );
    let run = run_ok(&["run", &url, "--sse", "--sse-for", "20s", "-n", "1"]);
    assert_eq!(run.count("/stream/events"), 3);
    assert_eq!(run.count("/stream/reconnects"), 0);
}

#[test]
fn sse_reconnect_needs_sse_for_and_the_tokio_loop() {
    let url = "http://127.0.0.1:9/sse/1/1";
    let lone = run_stampede(
        binary(),
        &["run", url, "--sse", "--sse-reconnect", "-n", "1"],
    );
    assert_eq!(lone.code(), Some(2), "{}", lone.stderr());
    assert!(lone.stderr().contains("--sse-for"), "{}", lone.stderr());
    let epoll = run_stampede(
        binary(),
        &[
            "run",
            url,
            "--sse",
            "--sse-for",
            "1s",
            "--sse-reconnect",
            "--io",
            "epoll",
            "-n",
            "1",
        ],
    );
    assert_eq!(epoll.code(), Some(2), "{}", epoll.stderr());
    assert!(
        epoll.stderr().contains("--sse-reconnect"),
        "{}",
        epoll.stderr()
    );
}

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
fn sse_starlette_is_sent_the_last_id_the_client_received() {
    let Some(python) = tool_or_skip("python3") else {
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
    let url = format!("http://127.0.0.1:{port}/resume/10/3");
    let run = run_ok(&[
        "run",
        &url,
        "--sse",
        "--sse-for",
        "20s",
        "--sse-reconnect",
        "-n",
        "1",
    ]);
    run.assert_accounted("sse-starlette reconnect");
    assert_eq!(run.count("/stream/events"), 10);
    assert_eq!(run.count("/stream/reconnects"), 4);
    let seen = stampede_testkit::http_get(port, "/seen").expect("/seen answers");
    let seen: serde_json::Value = serde_json::from_str(&seen).unwrap();
    // The first request carries none; each reconnect the last id of the
    // response before it (ids 2, 5, 8, then 9: nothing left, a 204).
    assert_eq!(
        seen,
        serde_json::json!([null, "2", "5", "8", "9"]),
        "{seen}"
    );
}

/// Reads one request head from `stream`; its `Last-Event-ID` (None: none
/// sent), or Err when the client closed the connection.
fn last_event_id_of(stream: &mut TcpStream) -> Result<Option<String>, ()> {
    use std::io::Read;
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return Err(()),
        }
    }
    let head = String::from_utf8_lossy(&head).to_string();
    Ok(head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("last-event-id")
            .then(|| value.trim().to_string())
    }))
}

/// Events `ids` as chunks of a chunked `text/event-stream` body.
fn event_chunks(ids: std::ops::Range<u32>) -> String {
    ids.map(|i| {
        let event = format!("retry: 20\nid: {i}\ndata: {i}\n\n");
        format!("{:x}\r\n{event}\r\n", event.len())
    })
    .collect()
}

/// The WHATWG EventSource reconnects after a network error too, not only
/// after the server's clean end: the constructor's fetch steps say "If res
/// is an aborted network error, then fail the connection. Otherwise, if
/// res is a network error, then reestablish the connection, unless the
/// user agent knows that to be futile" (WHATWG HTML §9.2.2), and
/// "reestablish the connection" (§9.2.3) waits the reconnection time and
/// sends `Last-Event-ID`. A server that cuts the first response mid-body
/// (its connection closed inside the chunked body): the stream goes on on
/// a new connection after the last ID it received, the reconnect is
/// counted in `stream.reconnects` and the error in `stream.errors`.
#[test]
fn a_stream_cut_by_a_network_error_is_reconnected_with_its_last_event_id() {
    use std::io::Write;
    use std::sync::{Arc, Mutex};
    let seen: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
    let log = seen.clone();
    let server = stampede_testkit::RawServer::start(move |mut stream| {
        let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
        while let Ok(id) = last_event_id_of(&mut stream) {
            log.lock().unwrap().push(id.clone());
            let reply = match id.as_deref() {
                // Events 0-2, then the connection closes inside the body.
                None => {
                    let _ = stream.write_all(format!("{head}{}", event_chunks(0..3)).as_bytes());
                    return;
                }
                // Events 3-4 and the body's clean end.
                Some("2") => format!("{head}{}0\r\n\r\n", event_chunks(3..5)),
                // Nothing left: a 204 ends the reconnects.
                _ => "HTTP/1.1 204 No Content\r\n\r\n".to_string(),
            };
            if stream.write_all(reply.as_bytes()).is_err() {
                return;
            }
        }
    });
    let url = server.url("/events");
    let run = run_stampede(
        binary(),
        &[
            "run",
            &url,
            "--sse",
            "--sse-for",
            "20s",
            "--sse-reconnect",
            "-n",
            "1",
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let stream = &run.result()["stream"];
    // Every event once: 0-2 before the cut, 3-4 after it.
    assert_eq!(run.count("/stream/events"), 5, "{stream}");
    // Once after the error, once after the clean end.
    assert_eq!(run.count("/stream/reconnects"), 2, "{stream}");
    assert_eq!(run.count("/stream/errors"), 1, "{stream}");
    // One stream, one request, booked with its last answer.
    assert_eq!(run.count("/requests/success"), 1, "{stream}");
    assert_eq!(run.count("/status/204"), 1, "{}", run.result()["status"]);
    assert_eq!(
        run.count("/connections/opened"),
        2,
        "a new connection after the cut"
    );
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [None, Some("2".to_string()), Some("4".to_string())],
        "the reconnection after the cut carried the last ID received"
    );
}

#[test]
fn without_sse_reconnect_a_cut_stream_is_its_error() {
    use std::io::Write;
    let server = stampede_testkit::RawServer::start(|mut stream| {
        if last_event_id_of(&mut stream).is_ok() {
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
            let _ = stream.write_all(format!("{head}{}", event_chunks(0..3)).as_bytes());
        }
    });
    let url = server.url("/events");
    let run = run_stampede(binary(), &["run", &url, "--sse", "-n", "1"]);
    assert_eq!(run.count("/requests/errors"), 1, "{}", run.stderr());
    assert_eq!(run.count("/stream/events"), 3);
    assert_eq!(run.count("/stream/errors"), 0);
}
