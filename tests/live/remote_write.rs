//! `stampede run --remote-write URL`: the run pushes its series (protobuf,
//! snappy, the remote-write 1.0 headers) every second and its final totals
//! at the end, equal to the JSON result: seen by a small receiver in the
//! test that decodes every request, and by a real Prometheus (its
//! remote-write receiver, then its query API). An unreachable receiver
//! costs the run nothing but one line; a bad URL is refused before any
//! load. The Prometheus test is skipped, with a message, where prometheus
//! is not installed, and fails then under STAMPEDE_REQUIRE_TOOLS=1.

use prost::Message;
use stampede_testkit::{
    binary, free_port, one_thread, read_json, spawn_target, temp_dir, wait_for, Prometheus,
};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

// The remote-write 1.0 messages, as a receiver decodes them (a copy of the
// sender's, so the test checks the wire format, not the sender's types).
#[derive(Clone, PartialEq, prost::Message)]
struct WriteRequest {
    #[prost(message, repeated, tag = "1")]
    timeseries: Vec<TimeSeries>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct TimeSeries {
    #[prost(message, repeated, tag = "1")]
    labels: Vec<Label>,
    #[prost(message, repeated, tag = "2")]
    samples: Vec<Sample>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct Label {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(string, tag = "2")]
    value: String,
}

#[derive(Clone, PartialEq, prost::Message)]
struct Sample {
    #[prost(double, tag = "1")]
    value: f64,
    #[prost(int64, tag = "2")]
    timestamp: i64,
}

impl TimeSeries {
    fn label(&self, name: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|label| label.name == name)
            .map(|label| label.value.as_str())
    }
}

/// One request as received: its head and its decoded body.
struct Received {
    head: String,
    request: WriteRequest,
}

/// Reads one HTTP request (head and Content-Length body) and answers 204.
fn receive(mut stream: TcpStream) -> Option<Received> {
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let mut data = Vec::new();
    let mut chunk = [0u8; 8192];
    let (head, length) = loop {
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&chunk[..n]);
        if let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&data[..end]).to_string();
            let length: usize = head
                .lines()
                .find_map(|line| {
                    let (name, value) = line.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse().ok())?
                })
                .expect("a Content-Length");
            data.drain(..end + 4);
            break (head, length);
        }
    };
    while data.len() < length {
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&chunk[..n]);
    }
    let raw = snap::raw::Decoder::new()
        .decompress_vec(&data[..length])
        .expect("a snappy block");
    let request = WriteRequest::decode(raw.as_slice()).expect("a WriteRequest");
    stream
        .write_all(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        .ok()?;
    Some(Received { head, request })
}

/// A receiver on an ephemeral loopback port keeping every request.
fn start_receiver() -> (String, Arc<Mutex<Vec<Received>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    let url = format!(
        "http://{}/api/v1/write",
        listener.local_addr().expect("address")
    );
    let received = Arc::new(Mutex::new(Vec::new()));
    let kept = received.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            if let Some(request) = receive(stream) {
                kept.lock().expect("not poisoned").push(request);
            }
        }
    });
    (url, received)
}

fn run(args: &[&str], json: &std::path::Path) -> Output {
    Command::new(binary())
        .args(args)
        .arg("--json")
        .arg(json)
        .arg("--quiet")
        .output()
        .expect("stampede runs")
}

/// [`run`], stopped (and the test failed) if it has not ended by `limit`:
/// a push that hangs fails the test instead of hanging it. Returns how
/// long the run took.
fn run_within(args: &[&str], json: &std::path::Path, limit: Duration) -> (Output, Duration) {
    let started = Instant::now();
    let mut child = Command::new(binary())
        .args(args)
        .arg("--json")
        .arg(json)
        .arg("--quiet")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("stampede runs");
    while child.try_wait().expect("waits").is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let output = child.wait_with_output().expect("the killed run");
            panic!(
                "still running after {limit:?}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let took = started.elapsed();
    (child.wait_with_output().expect("the output"), took)
}

fn count(result: &serde_json::Value, pointer: &str) -> f64 {
    result
        .pointer(pointer)
        .and_then(serde_json::Value::as_u64)
        .unwrap_or_else(|| panic!("{pointer} missing in {result}")) as f64
}

/// The latest value of every series named `name` in `request`, summed.
fn latest(request: &WriteRequest, name: &str) -> f64 {
    request
        .timeseries
        .iter()
        .filter(|series| series.label("__name__") == Some(name))
        .filter_map(|series| series.samples.last())
        .map(|sample| sample.value)
        .sum()
}

#[test]
fn each_second_and_at_the_end_a_receiver_gets_the_counts_of_the_result() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    let (receiver, received) = start_receiver();
    let dir = temp_dir("remote-write-receiver");
    let json = dir.join("result.json");
    let output = run(
        &[
            "run",
            &url,
            "-c",
            "4",
            "-t",
            "1",
            "-d",
            "3s",
            "--agent",
            "1/2",
            "--remote-write",
            &receiver,
        ],
        &json,
    );
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let result = read_json(&json);
    let run_id = result["run_id"].as_str().expect("run_id");
    let received = received.lock().expect("not poisoned");
    // Live pushes during the 3 s (one a second; the first may come before
    // the first reading on a slow machine), then the final one.
    assert!(received.len() >= 2, "{} pushes; {stderr}", received.len());
    for push in received.iter() {
        let head = push.head.to_ascii_lowercase();
        assert!(head.starts_with("post /api/v1/write http/1.1"), "{head}");
        for header in [
            "content-encoding: snappy",
            "content-type: application/x-protobuf",
            "x-prometheus-remote-write-version: 0.1.0",
        ] {
            assert!(head.contains(header), "{header} missing: {head}");
        }
    }
    let last = &received.last().expect("a final push").request;
    for series in &last.timeseries {
        assert_eq!(series.label("run_id"), Some(run_id));
        assert_eq!(series.label("agent"), Some("1"));
        let mut names: Vec<&str> = series.labels.iter().map(|l| l.name.as_str()).collect();
        let sorted = {
            let mut sorted = names.clone();
            sorted.sort_unstable();
            sorted
        };
        assert_eq!(names, sorted, "labels sorted by name");
        names.dedup();
        assert_eq!(names.len(), series.labels.len());
    }
    let success = count(&result, "/requests/success");
    assert!(success > 0.0, "{result}");
    assert_eq!(latest(last, "stampede_requests_total"), success);
    assert_eq!(
        latest(last, "stampede_bytes_received_total"),
        count(&result, "/bytes/received")
    );
    assert_eq!(
        latest(last, "stampede_latency_seconds_count"),
        count(&result, "/requests/completed")
    );
    assert_eq!(latest(last, "stampede_in_flight"), 0.0);
    // Live pushes carried counts before the end, at rising timestamps.
    let stamps: Vec<i64> = received
        .iter()
        .filter_map(|push| {
            push.request
                .timeseries
                .iter()
                .find(|s| s.label("__name__") == Some("stampede_bytes_received_total"))
                .and_then(|s| s.samples.last())
                .map(|sample| sample.timestamp)
        })
        .collect();
    assert!(stamps.windows(2).all(|w| w[0] < w[1]), "{stamps:?}");
    let live: Vec<f64> = received[..received.len() - 1]
        .iter()
        .map(|push| latest(&push.request, "stampede_requests_total"))
        .collect();
    assert!(
        live.iter().any(|n| *n > 0.0 && *n < success),
        "live counts {live:?} of {success}"
    );
    assert!(
        stderr.contains(&format!(
            "remote-write: {} pushes to {receiver}, all accepted",
            received.len()
        )),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_real_prometheus_receives_the_same_counts_as_the_result() {
    let program = stampede_testkit::require_tool!("prometheus");
    let dir = temp_dir("remote-write-prometheus");
    let prometheus = Prometheus::start(&program, &dir, None);
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    let receiver = format!("http://127.0.0.1:{}/api/v1/write", prometheus.port);
    let json = dir.join("result.json");
    let output = run(
        &[
            "run",
            &url,
            "-c",
            "4",
            "-t",
            "1",
            "-d",
            "3s",
            "--remote-write",
            &receiver,
        ],
        &json,
    );
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("all accepted"), "{stderr}");
    let result = read_json(&json);
    let run_id = result["run_id"].as_str().expect("run_id");
    let success = count(&result, "/requests/success");
    assert!(success > 0.0, "{result}");
    let query = format!("sum(stampede_requests_total{{run_id=\"{run_id}\"}})");
    // Pushed samples are queryable at once; a moment for the head to take them.
    let seen = wait_for(Duration::from_secs(10), || {
        prometheus.value(&query).filter(|value| *value == success)
    });
    assert_eq!(
        seen,
        Some(success),
        "last seen {:?}",
        prometheus.value(&query)
    );
    let bytes = format!("stampede_bytes_received_total{{run_id=\"{run_id}\"}}");
    assert_eq!(
        prometheus.value(&bytes),
        Some(count(&result, "/bytes/received"))
    );
    let p99 = format!("stampede_latency_quantile_seconds{{run_id=\"{run_id}\",quantile=\"0.99\"}}");
    let p99 = prometheus.value(&p99).expect("the p99 gauge in Prometheus");
    let json_p99 = count(&result, "/latency_us/p99") / 1e6;
    assert!((p99 - json_p99).abs() < 1e-9, "{p99} vs {json_p99}");
    // The bucket series are the scrape's (same le values): an estimate exists.
    let estimate =
        format!("histogram_quantile(0.99, stampede_latency_seconds_bucket{{run_id=\"{run_id}\"}})");
    assert!(prometheus.value(&estimate).is_some());
    drop(prometheus);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unreachable_receiver_costs_the_run_one_line_and_nothing_measured() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    let nowhere = format!("http://127.0.0.1:{}/api/v1/write", free_port());
    let dir = temp_dir("remote-write-unreachable");
    let json = dir.join("result.json");
    let started = Instant::now();
    let output = run(
        &[
            "run",
            &url,
            "-r",
            "500",
            "-n",
            "1500",
            "-t",
            "1",
            "--remote-write",
            &nowhere,
        ],
        &json,
    );
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let failures: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("remote-write:") && line.contains("failed"))
        .collect();
    assert_eq!(failures.len(), 1, "one line: {stderr}");
    assert!(
        failures[0].contains("pushes failed (connection refused)"),
        "{stderr}"
    );
    let result = read_json(&json);
    // Every request sent was measured (an exact count: -n, not -d).
    assert_eq!(count(&result, "/requests/success"), 1500.0, "{result}");
    assert_eq!(target.stats().requests_total, 1500);
    // 1,500 at 500/s is a 3 s run; a refused push fails at once, and the
    // final one waits at most 2 s: 5 s over the run allows a slow machine.
    assert!(took < Duration::from_secs(3 + 5), "{took:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A receiver that takes the connection and never answers (a listener that
/// never accepts: the kernel completes the handshake and buffers the
/// request). Each push gives up at its deadline (2 s, remote_write_push.rs)
/// and the final one at 2 s (FINAL_WAIT), so the run ends within a few
/// seconds of its own 1 s, with one line, its counts whole.
#[test]
fn a_receiver_that_never_answers_delays_the_end_by_seconds_not_more() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    let silent = TcpListener::bind("127.0.0.1:0").expect("a port");
    let nowhere = format!(
        "http://{}/api/v1/write",
        silent.local_addr().expect("address")
    );
    let dir = temp_dir("remote-write-silent");
    let json = dir.join("result.json");
    // A 1 s run: 5 s over it allows a slow machine, not a push that waits
    // for an answer that never comes.
    let (output, took) = run_within(
        &[
            "run",
            &url,
            "-r",
            "200",
            "-d",
            "1s",
            "-t",
            "1",
            "--remote-write",
            &nowhere,
        ],
        &json,
        Duration::from_secs(1 + 5),
    );
    drop(silent);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let failures: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("remote-write:") && line.contains("failed"))
        .collect();
    assert_eq!(failures.len(), 1, "one line: {stderr}");
    assert!(failures[0].contains("timed out"), "{stderr}");
    let result = read_json(&json);
    let sent = count(&result, "/requests/sent");
    assert!(sent >= 150.0, "the rate was kept: {result}");
    let answered = count(&result, "/requests/success") + count(&result, "/requests/unfinished");
    assert_eq!(answered, sent, "every request measured: {result}");
    assert!(took < Duration::from_secs(1 + 5), "{took:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_url_is_refused_before_any_load() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    for (bad, why) in [
        ("not-a-url", "--remote-write not-a-url: not a URL"),
        (
            "ftp://127.0.0.1/write",
            "the scheme must be http or https, not ftp",
        ),
    ] {
        let output = Command::new(binary())
            .args(["run", &url, "-c", "1", "-t", "1", "-d", "2s"])
            .args(["--remote-write", bad, "--quiet"])
            .output()
            .expect("stampede runs");
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert_eq!(output.status.code(), Some(2), "{bad}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
        assert!(stderr.contains(why), "{stderr}");
        assert_eq!(
            target.stats().requests_total,
            0,
            "load sent before refusing {bad}"
        );
    }
}
