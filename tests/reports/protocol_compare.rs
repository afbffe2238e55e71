//! `compare` and `--slo` on WebSocket and streams runs. Two results of a
//! real run against `stampede serve` (`/ws/echo`, `/sse/{n}/{ms}`), the
//! second with a slower round trip or gap and fewer messages or events per
//! second: compare's rows `ws rtt p99`, `ws sent/s`, `ws received/s`,
//! `sse gap p99` and `sse events/s` hold each file's figure and say
//! worse; plain HTTP results have none of those rows. `--slo` gates
//! `ws_rtt_p99` and `sse_gap_p99` on a real run, measured as the result's
//! summaries say, and a failed gate exits 1.

use stampede_testkit::{binary, run_ok, run_stampede, temp_dir, ServeProcess};
use std::path::Path;
use std::process::Command;

/// `stampede compare a b --json out` on two results; the document.
fn compare(dir: &Path, a: &serde_json::Value, b: &serde_json::Value) -> serde_json::Value {
    let (pa, pb, out) = (
        dir.join("a.json"),
        dir.join("b.json"),
        dir.join("delta.json"),
    );
    std::fs::write(&pa, a.to_string()).expect("a.json");
    std::fs::write(&pb, b.to_string()).expect("b.json");
    let output = Command::new(binary())
        .arg("compare")
        .args([&pa, &pb])
        .arg("--json")
        .arg(&out)
        .output()
        .expect("stampede compare runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("delta.json")).expect("JSON");
    for row in doc["rows"].as_array().expect("rows") {
        let name = row["name"].as_str().expect("name");
        assert!(stdout.contains(name), "the table lacks {name}: {stdout}");
    }
    doc
}

/// The row of `figure` (its JSON name, e.g. `ws_rtt_p99`).
fn row<'a>(doc: &'a serde_json::Value, figure: &str) -> &'a serde_json::Value {
    (doc["rows"].as_array().expect("rows").iter())
        .find(|r| r["figure"] == figure)
        .unwrap_or_else(|| panic!("no row {figure}: {doc}"))
}

/// The row's values and the second file's verdict.
fn values_and_verdict(doc: &serde_json::Value, figure: &str) -> (f64, f64, String) {
    let r = row(doc, figure);
    let value = |i: usize| r["values"][i].as_f64().unwrap_or_else(|| panic!("{r}"));
    (
        value(0),
        value(1),
        r["verdicts"][1].as_str().unwrap_or("").to_string(),
    )
}

/// A rate times `factor`.
fn scale(value: &mut serde_json::Value, factor: f64) {
    *value = serde_json::json!(value.as_f64().expect("a number") * factor);
}

/// A summary's µs (an integer) times `factor`.
fn scale_us(value: &mut serde_json::Value, factor: u64) {
    *value = serde_json::json!(value.as_u64().expect("µs") * factor);
}

#[test]
fn compare_reads_websocket_and_stream_figures_from_their_summaries() {
    let serve = ServeProcess::start(&[]);
    let dir = temp_dir("compare-protocols");
    let ws_url = format!("ws://127.0.0.1:{}/ws/echo", serve.port);
    let a = run_ok(&["run", &ws_url, "-c", "2", "-n", "200"])
        .result()
        .clone();
    let mut b = a.clone();
    scale_us(&mut b["websocket"]["rtt"]["p99_us"], 3);
    scale(&mut b["websocket"]["sent_per_s"], 0.5);
    scale(&mut b["websocket"]["received_per_s"], 0.5);
    let doc = compare(&dir, &a, &b);
    let p99_ms = a["websocket"]["rtt"]["p99_us"].as_f64().expect("p99") / 1000.0;
    let (base, slower, verdict) = values_and_verdict(&doc, "ws_rtt_p99");
    assert!((base - p99_ms).abs() < 1e-9, "{base} vs {p99_ms}");
    assert!((slower - 3.0 * p99_ms).abs() < 1e-6, "{slower}");
    assert_eq!(verdict, "worse");
    for (figure, key) in [
        ("ws_sent_per_s", "sent_per_s"),
        ("ws_received_per_s", "received_per_s"),
    ] {
        let (base, fewer, verdict) = values_and_verdict(&doc, figure);
        assert_eq!(base, a["websocket"][key].as_f64().expect(key), "{figure}");
        assert!((fewer - base / 2.0).abs() < 1e-6, "{figure}: {fewer}");
        assert_eq!(verdict, "worse", "{figure}: fewer messages/s is worse");
    }
    assert_eq!(row(&doc, "ws_rtt_p99")["unit"], "ms");
    assert_eq!(row(&doc, "ws_sent_per_s")["unit"], "msg/s");
    assert!(doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["figure"] != "stream_gap_p99"));

    let sse_url = format!("http://127.0.0.1:{}/sse/10/20", serve.port);
    let a = run_ok(&["run", &sse_url, "--sse", "-c", "2", "-n", "4"])
        .result()
        .clone();
    let mut b = a.clone();
    scale_us(&mut b["stream"]["gap"]["p99_us"], 2);
    scale(&mut b["stream"]["events_per_s"], 0.5);
    let doc = compare(&dir, &a, &b);
    let gap_ms = a["stream"]["gap"]["p99_us"].as_f64().expect("p99") / 1000.0;
    let (base, slower, verdict) = values_and_verdict(&doc, "stream_gap_p99");
    assert!((base - gap_ms).abs() < 1e-9, "{base} vs {gap_ms}");
    assert!((slower - 2.0 * gap_ms).abs() < 1e-6, "{slower}");
    assert_eq!(verdict, "worse");
    let (base, fewer, verdict) = values_and_verdict(&doc, "stream_events_per_s");
    assert_eq!(base, a["stream"]["events_per_s"].as_f64().unwrap());
    assert!((fewer - base / 2.0).abs() < 1e-6);
    assert_eq!(verdict, "worse");
    assert!(doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["figure"] != "ws_rtt_p99"));

    // Plain HTTP runs: none of these rows.
    let http = format!("http://127.0.0.1:{}/", serve.port);
    let a = run_ok(&["run", &http, "-c", "2", "-n", "50"])
        .result()
        .clone();
    let doc = compare(&dir, &a, &a.clone());
    let figures: Vec<&str> = (doc["rows"].as_array().unwrap().iter())
        .filter_map(|r| r["figure"].as_str())
        .collect();
    assert!(
        figures
            .iter()
            .all(|f| !f.starts_with("ws_") && !f.starts_with("stream_")),
        "{figures:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The measured value of the run's only SLO condition, in ms.
fn measured(run: &stampede_testkit::Run) -> f64 {
    let slo = run.result()["slo"].as_array().expect("slo").clone();
    assert_eq!(slo.len(), 1, "{slo:?}");
    slo[0]["measured"].as_f64().expect("measured")
}

#[test]
fn slo_gates_on_the_round_trip_and_the_gaps_of_a_real_run() {
    let serve = ServeProcess::start(&[]);
    let ws_url = format!("ws://127.0.0.1:{}/ws/echo", serve.port);
    let pass = run_ok(&[
        "run",
        &ws_url,
        "-c",
        "2",
        "-n",
        "200",
        "--slo",
        "ws_rtt_p99<10s",
    ]);
    let p99 = pass.count("/websocket/rtt/p99_us") as f64 / 1000.0;
    assert_eq!(measured(&pass), p99);
    let fail = run_stampede(
        binary(),
        &[
            "run",
            &ws_url,
            "-c",
            "2",
            "-n",
            "200",
            "--slo",
            "ws_rtt_p99<1us",
        ],
    );
    assert_eq!(fail.code(), Some(1), "{}", fail.stderr());
    assert_eq!(fail.result()["slo"][0]["passed"], false);

    let sse_url = format!("http://127.0.0.1:{}/sse/10/20", serve.port);
    let sse = ["run", &sse_url, "--sse", "-c", "2", "-n", "4", "--slo"];
    let pass = run_ok(&[&sse[..], &["sse_gap_p99<10s"]].concat());
    let gap = pass.count("/stream/gap/p99_us") as f64 / 1000.0;
    assert_eq!(measured(&pass), gap);
    // The route's gaps are 20 ms: a 1 ms median fails.
    let fail = run_stampede(binary(), &[&sse[..], &["sse_gap_p50<1ms"]].concat());
    assert_eq!(fail.code(), Some(1), "{}", fail.stderr());
    // A WebSocket gate on a run with no WebSocket is not measured: it fails.
    let http = format!("http://127.0.0.1:{}/", serve.port);
    let unmeasured = run_stampede(
        binary(),
        &["run", &http, "-n", "20", "--slo", "ws_rtt_p99<10s"],
    );
    assert_eq!(unmeasured.code(), Some(1), "{}", unmeasured.stderr());
    assert!(unmeasured.result()["slo"][0]["measured"].is_null());
}
