//! `stampede run --web ADDR`: the live dashboard. Headless Chromium opens
//! the page mid-run and sees the report's charts drawn with data and
//! moving (server-sent updates arrive and are drawn), the latency heatmap
//! among them, a column more each second; pressing its Stop
//! button ends the run as Ctrl-C does (the JSON result is written, marked
//! interrupted, exit 130) and the page becomes the final report, byte for
//! byte what `--html` wrote. The same through the HTTP endpoints alone, and
//! a bad address refused before any load. The Chromium test is skipped,
//! with a message, where Chromium is not installed, and fails then under
//! STAMPEDE_REQUIRE_TOOLS=1 (.ci/run installs it and sets it).

use stampede_testkit::{
    binary, free_port, http_get, one_thread, read_json, require_tool, spawn_target, temp_dir,
    wait_for, Browser,
};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::Duration;

/// A stampede run with `--web` in the background, its output in files.
struct WebRun {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl WebRun {
    /// A 60 s closed-model run against `url` (stopped long before).
    fn start(name: &str, url: &str) -> WebRun {
        let dir = temp_dir(name);
        let port = free_port();
        let child = Command::new(binary())
            .args(["run", url, "-c", "2", "-t", "1", "-d", "60s", "--quiet"])
            .args(["--web", &format!("127.0.0.1:{port}"), "--web-linger", "60s"])
            .arg("--json")
            .arg(dir.join("result.json"))
            .arg("--html")
            .arg(dir.join("report.html"))
            .stdout(std::fs::File::create(dir.join("stdout")).expect("stdout file"))
            .stderr(std::fs::File::create(dir.join("stderr")).expect("stderr file"))
            .spawn()
            .expect("stampede starts");
        let run = WebRun { child, port, dir };
        wait_for(Duration::from_secs(20), || http_get(port, "/"))
            .unwrap_or_else(|| panic!("the page is not served; stderr: {}", run.stderr()));
        run
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.join("stderr")).unwrap_or_default()
    }

    /// The result file, once written (atomically: present means complete).
    fn result(&self) -> serde_json::Value {
        let path = self.dir.join("result.json");
        wait_for(Duration::from_secs(30), || path.exists().then_some(()))
            .unwrap_or_else(|| panic!("no result; stderr: {}", self.stderr()));
        read_json(&path)
    }

    fn report(&self) -> String {
        std::fs::read_to_string(self.dir.join("report.html")).expect("the --html report")
    }

    /// Ctrl-C ends the linger; the exit status.
    fn interrupt(&mut self) -> i32 {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-INT", &pid]).status();
        assert!(sent.is_ok_and(|status| status.success()));
        let status = wait_for(Duration::from_secs(15), || {
            self.child.try_wait().ok().flatten()
        })
        .unwrap_or_else(|| panic!("still running after Ctrl-C: {}", self.stderr()));
        status.code().expect("an exit code")
    }
}

impl Drop for WebRun {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The header the dashboard's Stop button sends.
const STOP: &str = "X-Stampede: stop\r\n";

/// `POST path` with `headers` (lines ending in CRLF): the status line and the body.
fn post(port: u16, path: &str, headers: &str) -> (String, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("the server answers");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}Content-Length: 0\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).expect("sent");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("read");
    let (head, body) = response.split_once("\r\n\r\n").expect("a response");
    let status = head.lines().next().unwrap_or_default().to_string();
    (status, body.to_string())
}

/// The `/events` stream, read event by event: (event name, data).
struct Events(BufReader<TcpStream>);

impl Events {
    fn open(port: u16) -> Events {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("the server answers");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        stream
            .write_all(
                b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n",
            )
            .expect("sent");
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        reader.read_line(&mut line).expect("a status line");
        assert!(line.starts_with("HTTP/1.1 200"), "{line}");
        Events(reader)
    }

    fn next(&mut self) -> (String, String) {
        let (mut event, mut data) = (String::new(), String::new());
        loop {
            let mut line = String::new();
            assert!(
                self.0.read_line(&mut line).expect("an event") > 0,
                "stream ended"
            );
            let line = line.trim_end_matches(['\r', '\n']);
            if line.is_empty() && !event.is_empty() {
                return (event, data);
            }
            if let Some(name) = line.strip_prefix("event: ") {
                event = name.to_string();
            } else if let Some(text) = line.strip_prefix("data: ") {
                data = text.to_string();
            }
        }
    }
}

/// Responses per second in the throughput chart of an update's charts.
fn charted_responses(charts: &serde_json::Value) -> usize {
    charts[0]["chart"]["series"][0]["values"]
        .as_array()
        .map_or(0, |values| {
            values.iter().filter(|v| v.as_f64() > Some(0.0)).count()
        })
}

#[test]
fn the_stop_endpoint_ends_the_run_and_the_page_becomes_the_report() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    let mut run = WebRun::start("web-stop", &url);
    let page = http_get(run.port, "/").expect("the live page");
    assert!(page.contains("id=\"live-stop\""), "a Stop button");
    assert!(
        page.contains(
            "fetch(\"/stop\", { method: \"POST\", headers: { \"X-Stampede\": \"stop\" } })"
        ),
        "the button posts /stop with its header"
    );
    assert!(page.contains("new EventSource(\"/events\")"));
    // Offline and small: nothing loaded from anywhere (the stream and the
    // button talk to this server by path), the size of a report.
    for needle in ["src=", "href=", "<link", "@import", "url("] {
        assert!(!page.contains(needle), "the live page contains {needle}");
    }
    assert!(page.len() < 200_000, "{} bytes", page.len());
    let mut events = Events::open(run.port);
    let mut seen: Vec<serde_json::Value> = Vec::new();
    let mut last_report = String::new();
    while seen.len() < 3 {
        let (event, data) = events.next();
        assert_eq!(event, "update", "{data}");
        let update: serde_json::Value = serde_json::from_str(&data).expect("JSON");
        let charts: serde_json::Value =
            serde_json::from_str(update["charts"].as_str().expect("charts")).expect("JSON");
        assert_eq!(charts[0]["id"], "throughput");
        assert!(update["report"]
            .as_str()
            .is_some_and(|r| r.contains("Over time")));
        last_report = update["report"].as_str().unwrap_or_default().to_string();
        seen.push(serde_json::json!({ "elapsed": update["elapsed"], "points": charted_responses(&charts) }));
    }
    assert_ne!(
        seen[0]["elapsed"], seen[2]["elapsed"],
        "the run moves: {seen:?}"
    );
    assert!(
        seen[2]["points"].as_u64() > Some(0),
        "seconds with data: {seen:?}"
    );
    // The latency heatmap comes with the seconds, from the snapshots the
    // run already takes: the last update's report has its cells.
    assert!(
        last_report.contains("id=\"latency-heatmap\"")
            && last_report
                .contains("<script type=\"application/json\" id=\"latency-heatmap-data\">"),
        "no heatmap in the update"
    );
    // Without the header a page of another site cannot send, no stop.
    let (status, _) = post(run.port, "/stop", "");
    assert!(status.contains("403"), "{status}");
    let (status, body) = post(run.port, "/stop", STOP);
    assert!(status.contains("200"), "{status}: {body}");
    // The open stream hears the end, after any last update.
    let ended = (0..20).any(|_| events.next().0 == "done");
    assert!(ended, "no done event");
    let result = run.result();
    assert_eq!(result["interrupted"], true, "stopped as Ctrl-C stops");
    assert!(result["requests"]["completed"].as_u64() > Some(0));
    assert!(result["elapsed_s"].as_f64() < Some(50.0), "ended early");
    let final_page = wait_for(Duration::from_secs(10), || {
        http_get(run.port, "/").filter(|page| !page.contains("live-stop"))
    })
    .expect("the final page");
    assert_eq!(
        final_page,
        run.report(),
        "the final page is the --html report"
    );
    let (status, _) = post(run.port, "/stop", STOP);
    assert!(status.contains("409"), "{status}");
    wait_for(Duration::from_secs(10), || {
        run.stderr()
            .contains("web: serving the report")
            .then_some(())
    })
    .unwrap_or_else(|| panic!("no linger notice: {}", run.stderr()));
    assert_eq!(run.interrupt(), 130, "{}", run.stderr());
}

/// What the page shows, per chart container: canvases, inked pixels and
/// whether it says it is empty; and the live status.
const PROBE: &str = r#"JSON.stringify({
  updates: Number((document.getElementById("live-status") || {dataset: {}}).dataset.updates || 0),
  stop: !!document.getElementById("live-stop"),
  charts: Array.prototype.map.call(document.querySelectorAll("[data-chart]"), function (el) {
    var c = el.querySelector("canvas");
    var inked = 0;
    if (c && c.width > 0) {
      var px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      for (var i = 3; i < px.length; i += 4) if (px[i] > 0) inked++;
    }
    return { id: el.getAttribute("data-chart"), canvases: el.querySelectorAll("canvas").length,
      inked: inked, empty: !!el.querySelector(".chart-empty") };
  }),
  data: JSON.parse(document.getElementById("chart-data").textContent)
})"#;

/// The live heatmap: its columns (from its data) and the pixels drawn.
const HEATMAP_PROBE: &str = r#"(function () {
  var c = document.getElementById("latency-heatmap"), d = document.getElementById("latency-heatmap-data");
  if (!c || !d) return JSON.stringify({ columns: 0, inked: 0 });
  var px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data, inked = 0;
  for (var i = 3; i < px.length; i += 4) if (px[i] > 0) inked++;
  return JSON.stringify({ columns: JSON.parse(d.textContent).columns.length, inked: inked });
})()"#;

fn probe(browser: &mut Browser) -> serde_json::Value {
    let text = browser.eval(PROBE);
    serde_json::from_str(text.as_str().expect("the probe's JSON")).expect("JSON")
}

fn save_screenshot(browser: &mut Browser, name: &str) {
    let png = browser.screenshot();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("web-dashboard");
    std::fs::create_dir_all(&dir).expect("screenshot folder");
    std::fs::write(dir.join(name), png).expect("screenshot written");
}

#[test]
fn chromium_sees_the_page_move_and_its_stop_button_ends_the_run() {
    let chromium = require_tool!("chromium");
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    let mut run = WebRun::start("web-chromium", &url);
    let mut browser = Browser::open(&chromium, &format!("http://127.0.0.1:{}/", run.port));
    // Three updates drawn in the page: it moves without a reload.
    let moved = browser.wait_until(
        "(function () { var s = document.getElementById('live-status'); \
         return !!s && Number(s.dataset.updates) >= 3; })()",
        Duration::from_secs(40),
    );
    assert!(moved, "no live updates drawn; stderr: {}", run.stderr());
    let live = probe(&mut browser);
    assert_eq!(live["stop"], true, "a Stop button");
    let charts = live["charts"].as_array().expect("charts");
    for id in ["throughput", "latency", "connections", "status"] {
        let chart = charts
            .iter()
            .find(|c| c["id"] == id)
            .unwrap_or_else(|| panic!("no {id} chart: {live}"));
        assert_eq!(chart["canvases"], 1, "{chart}");
        assert!(chart["inked"].as_u64() > Some(1000), "{chart}");
        assert_eq!(chart["empty"], false, "{id} has data: {chart}");
    }
    assert!(
        charted_responses(&live["data"]) > 0,
        "the drawn throughput has seconds with responses"
    );
    // The latency heatmap, drawn in the page and growing a column a second.
    let heatmap = browser.eval(HEATMAP_PROBE);
    let heatmap: serde_json::Value =
        serde_json::from_str(heatmap.as_str().expect("the probe's JSON")).expect("JSON");
    assert!(heatmap["inked"].as_u64() > Some(100), "{heatmap}");
    let columns = heatmap["columns"].as_u64().expect("columns");
    assert!(columns >= 1, "{heatmap}");
    let grew = browser.wait_until(
        &format!("JSON.parse({HEATMAP_PROBE}).columns > {columns} && JSON.parse({HEATMAP_PROBE}).inked > 100"),
        Duration::from_secs(20),
    );
    assert!(grew, "the heatmap did not move past {columns} columns");
    save_screenshot(&mut browser, "live.png");
    // The button, pressed as a user would.
    browser.eval("document.getElementById('live-stop').click(), true");
    let result = run.result();
    assert_eq!(result["interrupted"], true);
    assert!(result["requests"]["completed"].as_u64() > Some(0));
    // The open page reloads into the final report: no live bar, every
    // chart drawn, the same bytes as the --html file.
    let reported = browser.wait_until(
        "!document.getElementById('live-bar') && \
         document.querySelectorAll('[data-chart] canvas').length >= 6",
        Duration::from_secs(30),
    );
    assert!(reported, "the page did not become the report");
    let html = browser.eval("document.documentElement.outerHTML.length > 0");
    assert_eq!(html, serde_json::json!(true));
    assert_eq!(
        http_get(run.port, "/").as_deref(),
        Some(run.report().as_str())
    );
    save_screenshot(&mut browser, "final.png");
    drop(browser);
    assert_eq!(run.interrupt(), 130, "{}", run.stderr());
}

#[test]
fn an_address_in_use_is_refused_before_any_load() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let address = taken.local_addr().expect("address").to_string();
    let output = Command::new(binary())
        .args(["run", &url, "-c", "1", "-t", "1", "-d", "2s", "--quiet"])
        .args(["--web", &address])
        .output()
        .expect("stampede runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(
        stderr.contains(&format!("--web {address}: address already in use")),
        "{stderr}"
    );
    assert_eq!(target.stats().requests_total, 0, "load was sent");
}
