//! The HTML report and the time-series CSV of WebSocket and streams runs,
//! written by real runs against `stampede serve`'s `/ws/echo` and
//! `/sse/{n}/{ms}`: the report's `WebSocket` section shows the messages
//! each way with their rates, the round trip and the setup, close codes
//! and drops, its `Streams` section the streams, events, events per
//! second and the gaps, each the figure of the JSON result; the CSV's
//! extra columns add up to the result's counts. A plain HTTP run has
//! neither section and the CSV's usual columns only.

use stampede_report::{format_count, format_latency_us, format_rate};
use stampede_testkit::{run_ok, temp_dir, Run, ServeProcess};
use std::path::PathBuf;

/// A run with `--html` and `--csv-timeseries` into a fresh directory: the
/// run, the page and the CSV.
fn run_with_reports(name: &str, args: &[&str]) -> (Run, String, String) {
    let dir = temp_dir(name);
    let html: PathBuf = dir.join("report.html");
    let csv: PathBuf = dir.join("series.csv");
    let mut all: Vec<&str> = args.to_vec();
    let (html_arg, csv_arg) = (html.display().to_string(), csv.display().to_string());
    all.extend(["--html", &html_arg, "--csv-timeseries", &csv_arg]);
    let run = run_ok(&all);
    let page = std::fs::read_to_string(&html).expect("the --html report");
    let series = std::fs::read_to_string(&csv).expect("the --csv-timeseries file");
    let _ = std::fs::remove_dir_all(&dir);
    (run, page, series)
}

/// A table row as the report writes it: text cells left, numbers right.
fn row(cells: &[String]) -> String {
    cells
        .iter()
        .map(|cell| {
            let numeric = cell.starts_with(|c: char| c.is_ascii_digit());
            let class = if numeric { "num" } else { "" };
            format!("<td class=\"{class}\">{cell}</td>")
        })
        .collect()
}

/// A timing's row (label, count, p50, p99, max) from a summary of the result.
fn timing_row(label: &str, summary: &serde_json::Value) -> String {
    let us = |key: &str| format_latency_us(summary[key].as_u64().expect(key) as f64);
    row(&[
        label.to_string(),
        format_count(summary["count"].as_u64().expect("count")),
        us("p50_us"),
        us("p99_us"),
        us("max_us"),
    ])
}

/// The sum of a CSV column, found by its header.
fn column_sum(csv: &str, name: &str) -> u64 {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let at = (header.iter().position(|h| *h == name))
        .unwrap_or_else(|| panic!("no column {name} in {header:?}"));
    lines
        .map(|line| {
            line.split(',')
                .nth(at)
                .expect("a cell")
                .parse::<u64>()
                .expect("a count")
        })
        .sum()
}

#[test]
fn a_websocket_run_reports_its_messages_round_trip_and_closes() {
    let serve = ServeProcess::start(&[]);
    let url = format!("ws://127.0.0.1:{}/ws/echo", serve.port);
    let (run, page, csv) = run_with_reports("ws-reports", &["run", &url, "-c", "2", "-n", "300"]);
    let ws = &run.result()["websocket"];
    let f = |key: &str| ws[key].as_f64().expect(key);
    let n = |key: &str| ws[key].as_u64().expect(key);
    assert_eq!(n("messages_sent"), 300, "{ws}");
    assert!(page.contains("<h2>WebSocket</h2>"), "no WebSocket section");
    assert!(!page.contains("<h2>Streams</h2>"), "a Streams section");
    for (direction, count, rate, bytes) in [
        ("sent", "messages_sent", "sent_per_s", "bytes_sent"),
        (
            "received",
            "messages_received",
            "received_per_s",
            "bytes_received",
        ),
    ] {
        let expected = row(&[
            direction.to_string(),
            format_count(n(count)),
            format_rate(f(rate)),
            stampede_report::format_bytes(n(bytes) as f64),
        ]);
        assert!(page.contains(&expected), "no row {expected}");
    }
    for (label, key) in [("round trip", "rtt"), ("setup", "setup")] {
        let expected = timing_row(label, &ws[key]);
        assert!(page.contains(&expected), "no row {expected}");
    }
    assert_eq!(ws["setup"]["count"], 2, "{ws}");
    let connections = row(&[
        format_count(n("connections")),
        format_count(n("dropped")),
        format_count(n("pings_answered")),
    ]);
    assert!(page.contains(&connections), "no row {connections}");
    let closes = row(&[
        "1000".to_string(),
        format_count(ws["close_codes"]["1000"].as_u64().expect("1000 closes")),
    ]);
    assert!(page.contains(&closes), "no row {closes}");
    // The time series: the messages of each second add up to the run's.
    assert!(
        csv.lines()
            .next()
            .unwrap_or("")
            .ends_with(",target,ws_messages_sent,ws_messages_received"),
        "{csv}"
    );
    assert_eq!(
        column_sum(&csv, "ws_messages_sent"),
        n("messages_sent"),
        "{csv}"
    );
    assert_eq!(
        column_sum(&csv, "ws_messages_received"),
        n("messages_received"),
        "{csv}"
    );
}

#[test]
fn a_streams_run_reports_its_events_and_gaps() {
    let serve = ServeProcess::start(&[]);
    let url = format!("http://127.0.0.1:{}/sse/10/20", serve.port);
    let (run, page, csv) =
        run_with_reports("sse-reports", &["run", &url, "--sse", "-c", "2", "-n", "4"]);
    let stream = &run.result()["stream"];
    let n = |key: &str| stream[key].as_u64().expect(key);
    assert_eq!((n("streams"), n("events")), (4, 40), "{stream}");
    assert!(page.contains("<h2>Streams</h2>"), "no Streams section");
    assert!(!page.contains("<h2>WebSocket</h2>"), "a WebSocket section");
    let counts = row(&[
        format_count(n("streams")),
        format_count(n("events")),
        format_rate(stream["events_per_s"].as_f64().expect("events_per_s")),
        format_count(n("reconnects")),
    ]);
    assert!(page.contains(&counts), "no row {counts}");
    for (label, key) in [
        ("first byte", "first_byte"),
        ("first event", "first_event"),
        ("event gap", "gap"),
        ("length", "length"),
    ] {
        let expected = timing_row(label, &stream[key]);
        assert!(page.contains(&expected), "no row {expected}");
    }
    assert!(
        csv.lines()
            .next()
            .unwrap_or("")
            .ends_with(",target,stream_events"),
        "{csv}"
    );
    assert_eq!(column_sum(&csv, "stream_events"), 40, "{csv}");
}

#[test]
fn a_plain_http_run_has_no_websocket_or_streams_figures() {
    let serve = ServeProcess::start(&[]);
    let url = format!("http://127.0.0.1:{}/", serve.port);
    let (run, page, csv) = run_with_reports("http-reports", &["run", &url, "-c", "2", "-n", "50"]);
    assert!(run.result().get("websocket").is_none() && run.result().get("stream").is_none());
    assert!(page.contains("<h2>Over time</h2>"));
    assert!(!page.contains("<h2>WebSocket</h2>") && !page.contains("<h2>Streams</h2>"));
    let header = csv.lines().next().unwrap_or("");
    assert!(header.ends_with(",max_ms,target"), "{header}");
    assert!(!csv.contains("ws_messages") && !csv.contains("stream_events"));
}
