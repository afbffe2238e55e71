//! A WebSocket run (`stampede run ws://…` against `stampede serve`'s
//! `/ws/echo`) and a streams run (`--sse` against `/sse/{n}/{ms}`) while
//! they go: `--metrics` serves their messages, round trips, events and
//! gaps mid-run, and after the run the same counts and quantiles as the
//! JSON result; the `--web` page's updates carry the WebSocket section
//! with its messages per second and round trip.

use stampede_testkit::{binary, free_port, http_get, read_json, temp_dir, wait_for, ServeProcess};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::Duration;

/// A stampede run in the background, its output in files; killed when dropped.
struct Background {
    child: Child,
    dir: PathBuf,
}

impl Background {
    fn start(name: &str, args: &[&str]) -> Background {
        let dir = temp_dir(name);
        let child = Command::new(binary())
            .args(args)
            .arg("--json")
            .arg(dir.join("result.json"))
            .arg("--quiet")
            .stdout(std::fs::File::create(dir.join("stdout")).expect("stdout file"))
            .stderr(std::fs::File::create(dir.join("stderr")).expect("stderr file"))
            .spawn()
            .expect("stampede starts");
        Background { child, dir }
    }

    /// The result file, once written (atomically: present means complete).
    fn result(&self) -> serde_json::Value {
        let path = self.dir.join("result.json");
        wait_for(Duration::from_secs(40), || path.exists().then_some(()))
            .unwrap_or_else(|| panic!("no result; stderr: {}", self.stderr()));
        read_json(&path)
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.join("stderr")).unwrap_or_default()
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The value of the sample whose name and labels start with `series`.
fn sample(exposition: &str, series: &str) -> Option<f64> {
    exposition
        .lines()
        .find(|line| line.starts_with(series))
        .and_then(|line| line.rsplit(' ').next())
        .and_then(|value| value.parse().ok())
}

fn count(result: &serde_json::Value, pointer: &str) -> f64 {
    result
        .pointer(pointer)
        .and_then(serde_json::Value::as_u64)
        .unwrap_or_else(|| panic!("{pointer} missing in {result}")) as f64
}

/// A 3-second run of `args` with `--metrics` lingering 5 s; the address.
fn metrics_run(name: &str, args: &[&str]) -> (Background, u16) {
    let port = free_port();
    let address = format!("127.0.0.1:{port}");
    let mut all = args.to_vec();
    all.extend(["-c", "2", "-t", "1", "-d", "3s", "--metrics", &address]);
    all.extend(["--metrics-linger", "5s"]);
    (Background::start(name, &all), port)
}

#[test]
fn websocket_series_count_live_and_end_equal_to_the_result() {
    let serve = ServeProcess::start(&[]);
    let url = format!("ws://127.0.0.1:{}/ws/echo", serve.port);
    let (run, port) = metrics_run("metrics-ws", &["run", &url]);
    // Mid-run: messages already counted, a round trip's p99 served.
    let live = wait_for(Duration::from_secs(20), || {
        http_get(port, "/metrics").filter(|body| {
            body.lines().any(|line| {
                line.starts_with("stampede_ws_messages_received_total{") && !line.ends_with(" 0")
            })
        })
    })
    .unwrap_or_else(|| panic!("no live WebSocket counts; stderr: {}", run.stderr()));
    for help in [
        "# HELP stampede_ws_messages_sent_total WebSocket data messages written",
        "# HELP stampede_ws_rtt_quantile_seconds WebSocket round trip",
    ] {
        assert!(live.contains(help), "{help}: {live}");
    }
    assert!(!live.contains("stampede_stream_events"), "{live}");
    let result = run.result();
    let run_id = result["run_id"].as_str().expect("run_id").to_string();
    let last = http_get(port, "/metrics").expect("the endpoint lingers after the run");
    let with_run = |name: &str| format!("{name}{{run_id=\"{run_id}\"}}");
    for (series, pointer) in [
        (
            "stampede_ws_messages_sent_total",
            "/websocket/messages_sent",
        ),
        (
            "stampede_ws_messages_received_total",
            "/websocket/messages_received",
        ),
        ("stampede_ws_bytes_sent_total", "/websocket/bytes_sent"),
        (
            "stampede_ws_bytes_received_total",
            "/websocket/bytes_received",
        ),
        ("stampede_ws_connections_total", "/websocket/connections"),
        ("stampede_ws_dropped_total", "/websocket/dropped"),
    ] {
        assert_eq!(
            sample(&last, &with_run(series)),
            Some(count(&result, pointer)),
            "{series}: {last}"
        );
    }
    assert!(
        count(&result, "/websocket/messages_received") > 0.0,
        "{result}"
    );
    let closes = format!("stampede_ws_close_codes_total{{run_id=\"{run_id}\",code=\"1000\"}}");
    // A duration run on tokio stops its connections where they are (no
    // close code); whatever the result counts, the series counts too.
    let closed_1000 = (result.pointer("/websocket/close_codes/1000"))
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0) as f64;
    assert_eq!(sample(&last, &closes).unwrap_or(0.0), closed_1000, "{last}");
    for (quantile, key) in [("0.5", "p50_us"), ("0.99", "p99_us"), ("1", "max_us")] {
        let series = format!(
            "stampede_ws_rtt_quantile_seconds{{run_id=\"{run_id}\",quantile=\"{quantile}\"}}"
        );
        let served = sample(&last, &series).unwrap_or_else(|| panic!("{series}: {last}"));
        let json = count(&result, &format!("/websocket/rtt/{key}")) / 1e6;
        assert!((served - json).abs() < 1e-9, "{series}: {served} vs {json}");
    }
}

#[test]
fn stream_series_count_live_and_end_equal_to_the_result() {
    let serve = ServeProcess::start(&[]);
    let url = format!("http://127.0.0.1:{}/sse/10/20", serve.port);
    let (run, port) = metrics_run("metrics-sse", &["run", &url, "--sse"]);
    let live = wait_for(Duration::from_secs(20), || {
        http_get(port, "/metrics").filter(|body| {
            body.lines().any(|line| {
                line.starts_with("stampede_stream_events_total{") && !line.ends_with(" 0")
            })
        })
    })
    .unwrap_or_else(|| panic!("no live stream counts; stderr: {}", run.stderr()));
    assert!(
        live.contains(
            "# HELP stampede_stream_gap_quantile_seconds Gaps between consecutive events"
        ),
        "{live}"
    );
    assert!(!live.contains("stampede_ws_messages"), "{live}");
    let result = run.result();
    let run_id = result["run_id"].as_str().expect("run_id").to_string();
    let last = http_get(port, "/metrics").expect("the endpoint lingers after the run");
    let with_run = |name: &str| format!("{name}{{run_id=\"{run_id}\"}}");
    for (series, pointer) in [
        ("stampede_stream_streams_total", "/stream/streams"),
        ("stampede_stream_events_total", "/stream/events"),
        ("stampede_stream_reconnects_total", "/stream/reconnects"),
    ] {
        assert_eq!(
            sample(&last, &with_run(series)),
            Some(count(&result, pointer)),
            "{series}: {last}"
        );
    }
    assert!(count(&result, "/stream/events") > 0.0, "{result}");
    for (quantile, key) in [("0.5", "p50_us"), ("0.99", "p99_us"), ("1", "max_us")] {
        let series = format!(
            "stampede_stream_gap_quantile_seconds{{run_id=\"{run_id}\",quantile=\"{quantile}\"}}"
        );
        let served = sample(&last, &series).unwrap_or_else(|| panic!("{series}: {last}"));
        let json = count(&result, &format!("/stream/gap/{key}")) / 1e6;
        assert!((served - json).abs() < 1e-9, "{series}: {served} vs {json}");
    }
}

/// The `data:` of the next `update` event on a `/events` stream.
fn next_update(events: &mut BufReader<TcpStream>) -> serde_json::Value {
    let (mut event, mut data) = (String::new(), String::new());
    loop {
        let mut line = String::new();
        assert!(
            events.read_line(&mut line).expect("an event") > 0,
            "stream ended"
        );
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() && !event.is_empty() {
            if event == "update" {
                return serde_json::from_str(&data).expect("JSON");
            }
            event.clear();
        } else if let Some(name) = line.strip_prefix("event: ") {
            event = name.to_string();
        } else if let Some(text) = line.strip_prefix("data: ") {
            data = text.to_string();
        }
    }
}

/// The messages/s received in a report's WebSocket section.
fn received_per_s(report: &str) -> Option<f64> {
    let rest = report
        .split("<td class=\"\">received</td><td class=\"num\">")
        .nth(1)?;
    let cell = rest.split("</td>").nth(1)?;
    cell.trim_start_matches("<td class=\"num\">")
        .replace(',', "")
        .parse()
        .ok()
}

#[test]
fn the_live_page_shows_messages_per_second_and_the_round_trip() {
    let serve = ServeProcess::start(&[]);
    let url = format!("ws://127.0.0.1:{}/ws/echo", serve.port);
    let port = free_port();
    let web = format!("127.0.0.1:{port}");
    let run = Background::start(
        "web-ws",
        &[
            "run", &url, "-c", "2", "-t", "1", "-d", "60s", "--web", &web,
        ],
    );
    wait_for(Duration::from_secs(20), || http_get(port, "/"))
        .unwrap_or_else(|| panic!("the page is not served; stderr: {}", run.stderr()));
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("the server answers");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    stream
        .write_all(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
        .expect("sent");
    let mut events = BufReader::new(stream);
    // Updates come once a second; within ten, one shows messages coming back.
    let report = (0..10)
        .map(|_| {
            next_update(&mut events)["report"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .find(|report| received_per_s(report) > Some(0.0))
        .unwrap_or_else(|| panic!("no update with messages received; stderr: {}", run.stderr()));
    assert!(report.contains("<h2>WebSocket</h2>"), "{report}");
    for header in ["<th>messages/s</th>", "<th>p99</th>"] {
        assert!(report.contains(header), "{header}");
    }
    let rtt = report
        .split("<td class=\"\">round trip</td><td class=\"num\">")
        .nth(1)
        .unwrap_or_default();
    assert!(!rtt.starts_with("0<"), "round trips counted: {rtt}");
    // Stop the run as the page's button does.
    let mut stop = TcpStream::connect(("127.0.0.1", port)).expect("the server answers");
    stop.write_all(
        b"POST /stop HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Stampede: stop\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    )
    .expect("sent");
    let mut answer = String::new();
    let _ = stop.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let result = run.result();
    assert!(
        count(&result, "/websocket/messages_received") > 0.0,
        "{result}"
    );
}
