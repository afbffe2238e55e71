//! `--sse` over HTTP/2: one request is one HTTP/2 stream whose DATA frames
//! feed the same event parser and books as HTTP/1.1's body
//! (drive/h2/h2_stream.rs). Against the built-in target's `/sse/{n}/{ms}`
//! and `/stream/{n}/{ms}` over h2c and over TLS (ALPN h2), and against a
//! server nobody here wrote: sse-starlette under hypercorn (PyPI) over h2c,
//! tests/sse_support/sse_app.py. Event counts are exact, the median gap is
//! the route's interval, one stall of a second is the gap maximum,
//! `--sse-for` ends a stream as a success, `--sse-reconnect` asks again with
//! `Last-Event-ID` on a new stream, `--io auto` takes the loop that
//! watches (tokio), and what is not watched yet is refused in one line.

use stampede_testkit::{
    binary, free_port, one_thread, run_ok, run_stampede, skip_or_fail, spawn_target, temp_dir,
    tool_or_skip, Run,
};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `--sse --http2` run with one thread under `--io auto`, which must
/// choose tokio (the `h2` crate's streams watch their DATA frames).
fn h2_sse(url: &str, extra: &[&str]) -> Run {
    let mut args = vec!["run", url, "--sse", "--http2", "-t", "1"];
    args.extend_from_slice(extra);
    let run = run_ok(&args);
    assert_eq!(run.result()["plan"]["io"], "tokio", "--io auto chose tokio");
    run.assert_accounted("sse over h2");
    run
}

#[test]
fn h2c_events_are_counted_exactly_and_the_median_gap_is_the_interval() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/sse/20/50", target.local_addr());
    // Two connections of two streams each: four streams at once.
    let run = h2_sse(&url, &["-n", "4", "-c", "2", "--streams", "2"]);
    assert_eq!(run.count("/requests/success"), 4);
    assert_eq!(run.count("/stream/streams"), 4);
    assert_eq!(run.count("/stream/events"), 4 * 20);
    assert_eq!(run.count("/stream/gap/count"), 4 * 19);
    assert_eq!(run.count("/stream/first_event/count"), 4);
    // The target's events leave 50 ms apart: on loopback the median gap is
    // that within 1 ms.
    let p50 = run.count("/stream/gap/p50_us");
    assert!(p50.abs_diff(50_000) <= 1_000, "p50 {p50} µs");
    let length = run.count("/stream/length/p50_us");
    assert!(length >= 19 * 50_000 - 5_000, "length {length} µs");
    // The server saw two connections, not one per stream.
    assert_eq!(run.count("/connections/opened"), 2);
}

#[test]
fn h2c_one_stall_of_a_second_is_the_gap_maximum() {
    let target = spawn_target(one_thread());
    let url = format!(
        "http://{}/sse/10/20?stall_at=5&stall_ms=1000",
        target.local_addr()
    );
    let run = h2_sse(&url, &["-n", "1", "-c", "1"]);
    assert_eq!(run.count("/stream/events"), 10);
    let max = run.count("/stream/gap/max_us");
    assert!((1_000_000..1_500_000).contains(&max), "max {max} µs");
    let p50 = run.count("/stream/gap/p50_us");
    assert!(p50.abs_diff(20_000) <= 1_000, "p50 {p50} µs");
}

#[test]
fn h2c_a_body_not_an_event_stream_counts_each_data_frame() {
    let target = spawn_target(one_thread());
    // Six chunks 10 ms apart: over HTTP/2 each leaves as one DATA frame.
    let url = format!("http://{}/stream/6/10", target.local_addr());
    let run = h2_sse(&url, &["-n", "3", "-c", "1", "--streams", "3"]);
    assert_eq!(run.count("/stream/events"), 3 * 6);
    assert_eq!(run.count("/stream/gap/count"), 3 * 5);
}

#[test]
fn h2c_sse_for_ends_a_long_stream_as_a_success() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/sse/1000/50", target.local_addr());
    let run = h2_sse(
        &url,
        &["-n", "2", "-c", "1", "--streams", "2", "--sse-for", "500ms"],
    );
    assert_eq!(run.count("/requests/success"), 2);
    assert_eq!(run.count("/requests/errors"), 0);
    assert_eq!(run.count("/status/200"), 2, "{}", run.result()["status"]);
    // About 500 ms of events 50 ms apart, each stream.
    let events = run.count("/stream/events");
    assert!((2 * 8..=2 * 12).contains(&events), "{events} events");
    let length = run.count("/stream/length/max_us");
    assert!((500_000..1_000_000).contains(&length), "length {length} µs");
}

#[test]
fn h2_over_tls_events_are_counted_exactly() {
    use stampede_target::{CertSource, TlsConfig};
    let cert = temp_dir("sse-h2-tls").join("ca.pem");
    let target = spawn_target(stampede_testkit::TargetConfig {
        threads: 1,
        tls: Some(TlsConfig {
            write_cert: Some(cert.clone()),
            ..TlsConfig::new(CertSource::SelfSigned)
        }),
        ..stampede_testkit::TargetConfig::default()
    });
    let url = format!("https://localhost:{}/sse/12/20", target.local_addr().port());
    let cert = cert.to_str().expect("a UTF-8 path");
    let run = h2_sse(
        &url,
        &["--cacert", cert, "-n", "3", "-c", "1", "--streams", "3"],
    );
    assert_eq!(run.count("/stream/events"), 3 * 12);
    assert_eq!(run.count("/stream/gap/count"), 3 * 11);
    let p50 = run.count("/stream/gap/p50_us");
    assert!(p50.abs_diff(20_000) <= 1_000, "p50 {p50} µs");
    assert_eq!(run.count("/breakdown/tls/count"), 1, "one TLS handshake");
}

#[test]
fn h2c_reconnects_resume_after_each_last_event_id_on_new_streams() {
    let target = spawn_target(one_thread());
    // 10 events, 3 per response, each response asking for a 20 ms wait.
    let url = format!(
        "http://{}/sse/10/5?drop_every=3&retry=20",
        target.local_addr()
    );
    let run = h2_sse(
        &url,
        &[
            "--sse-for",
            "20s",
            "--sse-reconnect",
            "-n",
            "2",
            "-c",
            "1",
            "--streams",
            "2",
        ],
    );
    let stream = &run.result()["stream"];
    // Per stream: events 0-2, 3-5, 6-8, 9, then a 204 (nothing after 9):
    // four reconnects, each event once, no gap across a reconnect.
    assert_eq!(run.count("/stream/streams"), 2, "{stream}");
    assert_eq!(run.count("/stream/events"), 2 * 10, "{stream}");
    assert_eq!(run.count("/stream/reconnects"), 2 * 4, "{stream}");
    assert_eq!(run.count("/stream/gap/count"), 2 * 6, "{stream}");
    // One request per stream, booked with its last answer, the 204.
    assert_eq!(run.count("/requests/success"), 2, "{stream}");
    assert_eq!(run.count("/status/204"), 2, "{}", run.result()["status"]);
    let length = run.count("/stream/length/p50_us");
    assert!(length >= 4 * 20_000, "length {length} µs");
    // Every reconnect went on the one connection, as a new stream.
    assert_eq!(run.count("/connections/opened"), 1);
}

#[test]
fn sse_over_h2_on_epoll_with_a_workload_and_over_http3_is_refused_in_one_line() {
    let url = "http://127.0.0.1:9/sse/1/1";
    let epoll = run_stampede(
        binary(),
        &["run", url, "--sse", "--http2", "--io", "epoll", "-n", "1"],
    );
    assert_eq!(epoll.code(), Some(2), "{}", epoll.stderr());
    assert!(
        epoll.stderr().contains("watched bodies"),
        "{}",
        epoll.stderr()
    );
    let h3 = run_stampede(
        binary(),
        &["run", "https://127.0.0.1:9/", "--sse", "--http3", "-n", "1"],
    );
    assert_eq!(h3.code(), Some(2), "{}", h3.stderr());
    assert!(h3.stderr().contains("not HTTP/3"), "{}", h3.stderr());
    assert_eq!(h3.stderr().trim().lines().count(), 1, "{}", h3.stderr());
    // A workload's streams over HTTP/2 are not watched yet: refused, not
    // run unwatched.
    let checked = run_stampede(
        binary(),
        &[
            "run",
            url,
            "--sse",
            "--http2",
            "--check",
            "status == 200",
            "-n",
            "1",
        ],
    );
    assert_eq!(checked.code(), Some(2), "{}", checked.stderr());
    assert!(
        checked.stderr().contains("fixed requests only"),
        "{}",
        checked.stderr()
    );
}

/// The versions .ci/run installs: the ones this test was written against.
const PACKAGES: &str = "sse-starlette==3.7.1 hypercorn==0.18.0";

/// The server, killed when dropped.
struct App(Child);

impl Drop for App {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// sse_app.py under hypercorn (h2c with prior knowledge) on a free port;
/// `None` when this python has no hypercorn (skipped, or a failure under
/// `STAMPEDE_REQUIRE_TOOLS=1`).
fn hypercorn_app() -> Option<(App, u16)> {
    let python = tool_or_skip("python3")?;
    let probe = Command::new(&python)
        .args(["-c", "import sse_starlette, hypercorn"])
        .output()
        .expect("python3 runs");
    if !probe.status.success() {
        skip_or_fail(
            &format!(
                "{} cannot import sse_starlette and hypercorn",
                python.display()
            ),
            &format!("pip install {PACKAGES} (into the python3 on PATH)"),
        );
        return None;
    }
    let port = free_port();
    let app = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sse_support/sse_app.py");
    let child = App(Command::new(&python)
        .arg(&app)
        .arg(port.to_string())
        .arg("hypercorn")
        .stdout(Stdio::null())
        .spawn()
        .expect("the sse-starlette app starts"));
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "hypercorn never listened"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    Some((child, port))
}

#[test]
fn hypercorn_h2c_events_are_counted_exactly_and_resumed_by_last_event_id() {
    let Some((_app, port)) = hypercorn_app() else {
        return;
    };
    let url = format!("http://127.0.0.1:{port}/events/12/50");
    let run = h2_sse(&url, &["-n", "3", "-c", "1", "--streams", "3"]);
    assert_eq!(run.count("/requests/success"), 3);
    assert_eq!(run.count("/stream/events"), 3 * 12);
    assert_eq!(run.count("/stream/gap/count"), 3 * 11);
    // The app sleeps 50 ms between events, plus what Python takes to
    // frame one: the median gap is 50 ms and a little more.
    let p50 = run.count("/stream/gap/p50_us");
    assert!((50_000..55_000).contains(&p50), "p50 {p50} µs");
    assert_eq!(
        run.result()["http2"]["server_max_streams"],
        100,
        "hypercorn's own SETTINGS: this was HTTP/2"
    );

    let url = format!("http://127.0.0.1:{port}/resume/10/3");
    let run = h2_sse(&url, &["--sse-for", "20s", "--sse-reconnect", "-n", "1"]);
    // An empty DATA frame (hypercorn's end of the 204) is no event.
    assert_eq!(run.count("/stream/events"), 10);
    assert_eq!(run.count("/stream/reconnects"), 4);
    assert_eq!(run.count("/status/204"), 1);
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
