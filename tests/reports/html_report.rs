//! The HTML reports of a run, a sweep and a comparison, opened in headless
//! Chromium: the page loads nothing from anywhere and logs no console
//! message (errors included); every chart container holds the one canvas
//! uPlot drew, with ink, a title, axis titles and a legend; a run report
//! stays under 500 KB; failed statuses and transport errors are separate
//! series; a screenshot PNG is saved under target/tmp/html-report/ for
//! people to look at. Skipped, with a message, only when no Chromium is installed,
//! and a failure then under STAMPEDE_REQUIRE_TOOLS=1 (.ci/run installs it and sets it).

use stampede_analysis::{
    analyze_sweep, compare, CompareOptions, Load, RunFigures, StepInput, Thresholds,
};
use stampede_metrics::RunResult;
use stampede_report::{Deltas, LabeledRun, SweepStep};
use stampede_testkit::{binary, one_thread, read_request_head, spawn_target, temp_dir, RawServer};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs headless Chromium on a local file with a fresh profile and no
/// network chatter of its own.
fn headless(browser: &Path, page: &Path, extra: &[&str]) -> Output {
    let profile = temp_dir("chromium-profile");
    let output = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--window-size=1280,2400",
            "--virtual-time-budget=8000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium starts");
    let _ = std::fs::remove_dir_all(&profile);
    output
}

/// A script the test appends to a copy of the page (the report itself
/// carries no test hooks): once the charts had time to draw, it writes
/// into `<pre id="probe">`, per chart container, its canvases, their size,
/// how many pixels hold ink, the title, the canvas' accessible description
/// (uPlot draws axis titles on the canvas, so that is where the page names
/// them in words) and the legend's names.
const PROBE: &str = r#"<script>
window.addEventListener("load", function () {
  // Hover the middle of every chart, as a reader's mouse would, so the
  // legend shows the values under the cursor.
  setTimeout(function () {
    document.querySelectorAll("[data-chart] .u-over").forEach(function (over) {
      var box = over.getBoundingClientRect();
      over.dispatchEvent(new MouseEvent("mouseenter", { bubbles: true }));
      over.dispatchEvent(new MouseEvent("mousemove", {
        bubbles: true,
        clientX: box.left + box.width / 2,
        clientY: box.top + box.height / 2
      }));
    });
  }, 300);
  setTimeout(function () {
    var out = [];
    document.querySelectorAll("[data-chart]").forEach(function (el) {
      var canvases = el.querySelectorAll("canvas");
      var c = canvases[0];
      var inked = 0;
      if (c && c.width > 0 && c.height > 0) {
        var px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
        for (var i = 3; i < px.length; i += 4) if (px[i] > 0) inked++;
      }
      var texts = function (selector) {
        return Array.prototype.map.call(el.querySelectorAll(selector), function (l) {
          return l.textContent;
        });
      };
      out.push({
        id: el.getAttribute("data-chart"),
        canvases: canvases.length,
        width: c ? c.width : 0,
        height: c ? c.height : 0,
        inked: inked,
        title: texts(".u-title").join(""),
        legend: texts(".u-legend .u-series .u-label"),
        values: texts(".u-legend .u-series .u-value"),
        described: c ? c.getAttribute("aria-label") || "" : "",
        empty: texts(".chart-empty").join("")
      });
    });
    var pre = document.createElement("pre");
    pre.id = "probe";
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }, 700);
});
</script>"#;

/// What the probe saw of one chart.
#[derive(Debug)]
struct Drawn {
    id: String,
    canvases: usize,
    width: u32,
    height: u32,
    inked: u64,
    title: String,
    legend: Vec<String>,
    /// The legend's values while the cursor is over the middle of the chart.
    values: Vec<String>,
    described: String,
    empty: String,
}

impl Drawn {
    fn from_probe(v: &serde_json::Value) -> Drawn {
        let text = |key: &str| v[key].as_str().unwrap_or_default().to_string();
        let number = |key: &str| v[key].as_u64().unwrap_or_default();
        let texts = |key: &str| -> Vec<String> {
            v[key]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|t| t.as_str())
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default()
        };
        Drawn {
            id: text("id"),
            canvases: number("canvases") as usize,
            width: number("width") as u32,
            height: number("height") as u32,
            inked: number("inked"),
            title: text("title"),
            legend: texts("legend"),
            values: texts("values"),
            described: text("described"),
            empty: text("empty"),
        }
    }
}

/// Loads `page`, checks that nothing in it loads a resource, the console
/// stayed silent and every chart in `charts` (in that order) has exactly
/// one canvas, of non-zero size, with ink on it, a title, axis titles and
/// a legend; hands what the probe saw to `check` for chart-specific
/// assertions, and saves a screenshot as `name`.png.
fn check_in_chromium(page: &Path, charts: &[&str], name: &str, check: impl Fn(&[Drawn])) {
    // Skips (or fails under STAMPEDE_REQUIRE_TOOLS=1) without a Chromium.
    let Some(browser) = stampede_testkit::tool_or_skip("chromium") else {
        return;
    };
    let html = std::fs::read_to_string(page).expect("the report was written");
    // Self-contained: no external script, style, image, font or request.
    for needle in [
        "src=",
        "href=",
        "<link",
        "@import",
        "url(",
        "fetch(",
        "XMLHttpRequest",
    ] {
        assert!(!html.contains(needle), "the page contains {needle}");
    }
    let probed = page.with_extension("probe.html");
    std::fs::write(&probed, html.replace("</body>", &format!("{PROBE}</body>"))).unwrap();
    // Every host name resolves to nothing: a page that reached for the
    // network would log the failed load on the console.
    let output = headless(
        &browser,
        &probed,
        &[
            "--enable-logging=stderr",
            "--v=0",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--dump-dom",
        ],
    );
    let _ = std::fs::remove_file(&probed);
    assert!(output.status.success(), "chromium failed: {output:?}");
    let log = String::from_utf8_lossy(&output.stderr);
    // Chromium logs every console message (log, warn, error, uncaught
    // exceptions) as a CONSOLE line; a clean page logs none.
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:#?}");
    let dom = String::from_utf8_lossy(&output.stdout);
    let probe = dom
        .split("<pre id=\"probe\">")
        .nth(1)
        .and_then(|rest| rest.split("</pre>").next())
        .unwrap_or_else(|| panic!("the probe did not run: {dom}"));
    let probe = probe
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    let probe: serde_json::Value = serde_json::from_str(&probe).expect("the probe's JSON");
    let drawn: Vec<Drawn> = probe
        .as_array()
        .expect("a list of charts")
        .iter()
        .map(Drawn::from_probe)
        .collect();
    let ids: Vec<&str> = drawn.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids, charts, "the page's charts, in order");
    for chart in &drawn {
        assert_eq!(chart.canvases, 1, "one canvas per chart: {chart:?}");
        assert!(chart.width > 100 && chart.height > 100, "sized: {chart:?}");
        // Axes, grid and series all leave ink; a blank canvas has none.
        assert!(chart.inked > 1000, "not drawn: {chart:?}");
        assert!(!chart.title.is_empty(), "titled: {chart:?}");
        assert!(
            chart.described.contains("x axis: ") && chart.described.contains("y axis: "),
            "axis titles: {chart:?}"
        );
        assert!(chart.legend.len() >= 2, "legend of x and series: {chart:?}");
        // Cursor values: x and at least one series say something under the
        // cursor (charts with no data say their empty note instead).
        if chart.empty.is_empty() {
            let shown = chart
                .values
                .iter()
                .filter(|v| v.as_str() != "\u{2014}")
                .count();
            assert!(shown >= 2, "values under the cursor: {chart:?}");
        }
    }
    check(&drawn);
    let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("html-report");
    std::fs::create_dir_all(&shots).unwrap();
    let png = shots.join(format!("{name}.png"));
    let _ = std::fs::remove_file(&png);
    let output = headless(
        &browser,
        page,
        &[&format!("--screenshot={}", png.display())],
    );
    assert!(output.status.success(), "screenshot failed: {output:?}");
    let bytes = std::fs::read(&png).expect("the screenshot was written");
    assert!(bytes.starts_with(b"\x89PNG"), "a PNG");
    eprintln!("screenshot: {}", png.display());
}

/// The chart `id` as the probe saw it.
fn chart<'a>(drawn: &'a [Drawn], id: &str) -> &'a Drawn {
    drawn
        .iter()
        .find(|d| d.id == id)
        .unwrap_or_else(|| panic!("no chart {id} in {drawn:?}"))
}

/// Runs a load and returns its result.
fn run_load(url: &str, extra: &[&str]) -> RunResult {
    let dir = temp_dir("html-run");
    let json = dir.join("r.json");
    let output = Command::new(binary())
        .args([url, "-t", "1", "-q", "--json"])
        .arg(&json)
        .args(extra)
        .output()
        .unwrap();
    stampede_testkit::assert_succeeded(&output);
    let text = std::fs::read_to_string(&json).unwrap();
    RunResult::from_json(&text).unwrap()
}

#[test]
fn run_report_draws_every_chart_in_chromium() {
    let target = spawn_target(one_thread());
    let dir = temp_dir("html-report-run");
    let page = dir.join("run.html");
    let url = format!("http://{}/", target.local_addr());
    let output = Command::new(binary())
        .args([
            &url,
            "-d",
            "2s",
            "-c",
            "8",
            "-t",
            "1",
            "--ramp-up",
            "1s",
            "-q",
        ])
        .arg("--html")
        .arg(&page)
        .output()
        .unwrap();
    stampede_testkit::assert_succeeded(&output);
    let charts = [
        "throughput",
        "latency",
        "connections",
        "spectrum",
        "status",
        "errors",
        "cpu",
        "rss",
    ];
    // A report per run stays small (plotly.js made it ~4.6 MB).
    let size = std::fs::metadata(&page).unwrap().len();
    assert!(size <= 500 * 1024, "the run report is {size} bytes");
    check_in_chromium(&page, &charts, "run", |drawn| {
        let legend = &chart(drawn, "throughput").legend;
        assert!(
            legend.contains(&"failed status/s".to_string())
                && legend.contains(&"transport errors/s".to_string()),
            "{legend:?}"
        );
        assert_eq!(chart(drawn, "errors").empty, "no transport errors");
        let spectrum = chart(drawn, "spectrum");
        assert!(
            spectrum
                .described
                .contains("x axis: percentile (log scale); y axis: latency (ms)"),
            "{spectrum:?}"
        );
    });
}

/// Renders `result` into a page with `probe` (a script that writes its
/// finding into `<pre id="probe">`) and returns what it wrote.
fn probe_rendered(browser: &Path, result: &RunResult, name: &str, probe: &str) -> String {
    let dir = temp_dir(name);
    let page = dir.join(format!("{name}.html"));
    let mut html = Vec::new();
    stampede_report::render_html(result, &mut html).unwrap();
    let html = String::from_utf8(html).unwrap().replace("</body>", probe);
    std::fs::write(&page, html).unwrap();
    let output = headless(browser, &page, &["--dump-dom"]);
    assert!(output.status.success(), "chromium failed: {output:?}");
    let dom = String::from_utf8_lossy(&output.stdout);
    dom.split("<pre id=\"probe\">")
        .nth(1)
        .and_then(|rest| rest.split("</pre>").next())
        .unwrap_or_else(|| panic!("the probe did not run: {dom}"))
        .to_string()
}

/// The 2-second run against `/status/503` the report's unit tests use.
fn run_503() -> RunResult {
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/crates/stampede-report/src/html/testdata/run-503.json"
    );
    RunResult::from_json(&std::fs::read_to_string(fixture).unwrap()).unwrap()
}

/// A second with no transport error has no bar: a zero-height bar once
/// drew its 1-px outline as a dash on the axis, in the series' colour
/// (#c0392b, the fourth of the palette), every second of the run.
#[test]
fn zero_valued_bars_leave_no_ink() {
    let Some(browser) = stampede_testkit::tool_or_skip("chromium") else {
        return;
    };
    let result = run_503();
    assert_eq!(
        result.requests.errors, 0,
        "no transport error in the fixture"
    );
    let probe = r#"<script>window.addEventListener("load", function () {
  setTimeout(function () {
    var c = document.querySelector('[data-chart="throughput"] canvas');
    var px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    var red = 0, amber = 0;
    for (var i = 0; i < px.length; i += 4) {
      var near = function (r, g, b) {
        return Math.abs(px[i] - r) < 12 && Math.abs(px[i + 1] - g) < 12 && Math.abs(px[i + 2] - b) < 12;
      };
      if (px[i + 3] > 0 && near(192, 57, 43)) red++;
      if (px[i + 3] > 0 && near(185, 119, 14)) amber++;
    }
    var pre = document.createElement("pre");
    pre.id = "probe";
    pre.textContent = red + " " + amber;
    document.body.appendChild(pre);
  }, 500);
});</script></body>"#;
    let seen = probe_rendered(&browser, &result, "html-report-zero-bars", probe);
    let counts: Vec<u64> = seen.split(' ').map(|n| n.parse().unwrap()).collect();
    assert!(counts[1] > 100, "the failed-status bars are drawn: {seen}");
    assert_eq!(counts[0], 0, "zero transport errors drew ink: {seen}");
}

/// The spectrum's last percentile label (`99.9999%` when the run reached
/// it) sits at the right end of the x axis: it is drawn whole, not cut by
/// the canvas' edge (no ink in the axis band's last columns).
#[test]
fn the_spectrums_last_percentile_label_is_not_clipped() {
    let Some(browser) = stampede_testkit::tool_or_skip("chromium") else {
        return;
    };
    let probe = r#"<script>window.addEventListener("load", function () {
  setTimeout(function () {
    var c = document.querySelector('[data-chart="spectrum"] canvas');
    var band = 60 * (window.devicePixelRatio || 1);
    var px = c.getContext("2d").getImageData(c.width - 3, c.height - band, 3, band).data;
    var inked = 0;
    for (var i = 3; i < px.length; i += 4) if (px[i] > 0) inked++;
    var pre = document.createElement("pre");
    pre.id = "probe";
    pre.textContent = String(inked);
    document.body.appendChild(pre);
  }, 500);
});</script></body>"#;
    let result = run_503();
    let seen = probe_rendered(&browser, &result, "html-report-spectrum-edge", probe);
    assert_eq!(seen, "0", "ink at the canvas' right edge under the plot");
}

/// Long text with no place to break (a JMeter failure message, a URL with
/// a long query, an error sample) wraps inside its table cell: the page
/// is never wider than the window (a JMeter report once was, past 1400 px).
#[test]
fn long_unbroken_text_wraps_inside_the_window() {
    let Some(browser) = stampede_testkit::tool_or_skip("chromium") else {
        return;
    };
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/crates/stampede-report/src/html/testdata/run-503.json"
    );
    let mut result = RunResult::from_json(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    let long = format!("http://127.0.0.1:3000/search?q={}", "x".repeat(400));
    result.plan.url = long.clone();
    result
        .error_samples
        .insert("timeout".into(), vec![format!("no answer from {long}")]);
    let dir = temp_dir("html-report-wide");
    let page = dir.join("wide.html");
    let mut html = Vec::new();
    stampede_report::render_html(&result, &mut html).unwrap();
    let probe = r#"<script>window.addEventListener("load", function () {
  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = document.documentElement.scrollWidth + " " + window.innerWidth;
  document.body.appendChild(pre);
});</script></body>"#;
    let html = String::from_utf8(html).unwrap().replace("</body>", probe);
    std::fs::write(&page, html).unwrap();
    let output = headless(&browser, &page, &["--dump-dom"]);
    assert!(output.status.success(), "chromium failed: {output:?}");
    let dom = String::from_utf8_lossy(&output.stdout);
    let seen = dom
        .split("<pre id=\"probe\">")
        .nth(1)
        .and_then(|rest| rest.split("</pre>").next())
        .unwrap_or_else(|| panic!("the probe did not run: {dom}"));
    let widths: Vec<u32> = seen.split(' ').map(|w| w.parse().unwrap()).collect();
    assert!(
        widths[0] <= widths[1],
        "the page is {} px wide in a {} px window",
        widths[0],
        widths[1]
    );
}

/// The charts' JSON as the page carries it.
fn chart_data(page: &Path) -> serde_json::Value {
    let html = std::fs::read_to_string(page).expect("the report was written");
    let open = "<script type=\"application/json\" id=\"chart-data\">";
    let start = html.find(open).expect("the page carries chart data") + open.len();
    let end = start + html[start..].find("</script>").expect("closed");
    serde_json::from_str(&html[start..end]).expect("chart data is JSON")
}

/// The length of each charted interval: as recorded, except that the
/// charts join a final interval under 0.25 s to the one before.
fn charted_durations(result: &RunResult) -> Vec<f64> {
    let mut durations: Vec<f64> = result.timeseries.iter().map(|p| p.duration_s).collect();
    if durations.len() > 1 && durations[durations.len() - 1] < 0.25 {
        let last = durations.pop().unwrap();
        *durations.last_mut().unwrap() += last;
    }
    durations
}

/// The values of the series `name` of chart `id`, gaps as zero.
fn series_values(data: &serde_json::Value, id: &str, name: &str) -> Vec<f64> {
    let chart = data
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no chart {id}"));
    let series = chart["chart"]["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no series {name} in chart {id}: {chart}"));
    series["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap_or(0.0))
        .collect()
}

/// Issue 16 item 12: 503s were drawn as "errors/s" while the report said
/// "no errors". A 503 is a failed status: it goes in its own series, and
/// the transport-error series and chart stay empty.
#[test]
fn run_report_draws_503s_as_failed_statuses_not_transport_errors() {
    let target = spawn_target(one_thread());
    let dir = temp_dir("html-report-503");
    let page = dir.join("run.html");
    let json = dir.join("run.json");
    let url = format!("http://{}/status/503", target.local_addr());
    let output = Command::new(binary())
        .args([&url, "-n", "300", "-c", "2", "-t", "1", "-q", "--html"])
        .arg(&page)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    stampede_testkit::assert_succeeded(&output);
    let result = RunResult::from_json(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(result.requests.failed_status, 300);
    assert_eq!(result.requests.errors, 0);
    let data = chart_data(&page);
    let durations = charted_durations(&result);
    let count = |name: &str| -> f64 {
        series_values(&data, "throughput", name)
            .iter()
            .zip(&durations)
            .map(|(rate, d)| rate * d)
            .sum()
    };
    assert!((count("failed status/s") - 300.0).abs() < 0.5, "{data}");
    assert_eq!(count("transport errors/s"), 0.0);
    check_in_chromium(
        &page,
        &[
            "throughput",
            "latency",
            "connections",
            "spectrum",
            "status",
            "errors",
            "cpu",
            "rss",
        ],
        "run-503",
        |drawn| {
            assert_eq!(
                chart(drawn, "errors").empty,
                "no transport errors (300 failed status: see status codes)"
            );
            assert_eq!(chart(drawn, "errors").title, "Transport errors by class");
        },
    );
}

/// A server that answers the first request of each connection with a 503
/// and cuts the answer to the second short: both kinds of failure, each
/// counted in its own series.
#[test]
fn run_report_counts_failed_statuses_and_transport_errors_apart() {
    let server = RawServer::start(|mut stream| {
        if read_request_head(&mut stream) {
            let _ =
                stream.write_all(b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n");
        }
        // Cut the next answer short: a truncated body is a transport error
        // (a hang-up before any byte would be retried, not counted).
        if read_request_head(&mut stream) {
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nshort");
        }
    });
    let dir = temp_dir("html-report-failures");
    let page = dir.join("run.html");
    let json = dir.join("run.json");
    let output = Command::new(binary())
        .arg(server.url("/"))
        .args(["-n", "200", "-c", "2", "-t", "1", "-q", "--html"])
        .arg(&page)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    stampede_testkit::assert_succeeded(&output);
    let result = RunResult::from_json(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let (failed, errors) = (result.requests.failed_status, result.requests.errors);
    assert!(failed > 0 && errors > 0, "{:?}", result.requests);
    let data = chart_data(&page);
    let durations = charted_durations(&result);
    let count = |name: &str| -> f64 {
        series_values(&data, "throughput", name)
            .iter()
            .zip(&durations)
            .map(|(rate, d)| rate * d)
            .sum()
    };
    assert!((count("failed status/s") - failed as f64).abs() < 0.5);
    assert!((count("transport errors/s") - errors as f64).abs() < 0.5);
    let classes: u64 = result.errors.values().sum();
    let bars: f64 = series_values(&data, "errors", "count").iter().sum();
    assert_eq!(
        bars, classes as f64,
        "the error-class bars are transport errors"
    );
}

#[test]
fn sweep_report_draws_every_chart_in_chromium() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/delay/2", target.local_addr());
    let steps: Vec<(Load, RunResult)> = [1u64, 2, 4, 8]
        .into_iter()
        .map(|c| {
            let n = c.to_string();
            (
                Load::Connections(c),
                run_load(&url, &["-c", &n, "-d", "600ms"]),
            )
        })
        .collect();
    let inputs: Vec<StepInput> = steps
        .iter()
        .map(|(load, r)| StepInput::from_result(*load, r))
        .collect();
    let analysis = analyze_sweep(&inputs, None, &Thresholds::default());
    let views: Vec<SweepStep<'_>> = steps
        .iter()
        .map(|(load, result)| SweepStep {
            load: *load,
            result,
        })
        .collect();
    let page = temp_dir("html-report-sweep").join("sweep.html");
    let mut out = std::fs::File::create(&page).unwrap();
    stampede_report::render_sweep_html(&views, &analysis, &mut out).unwrap();
    let html = std::fs::read_to_string(&page).unwrap();
    // One unit per latency column, named in the header, none in the cells.
    assert!(
        ["µs", "ms", "s"]
            .iter()
            .any(|u| html.contains(&format!("<th>mean ({u})</th>"))),
        "{html}"
    );
    assert!(html.contains("<th>goodput (req/s)</th>"));
    check_in_chromium(
        &page,
        &["sweep-throughput", "sweep-latency"],
        "sweep",
        |drawn| {
            let throughput = &chart(drawn, "sweep-throughput").described;
            assert!(
                throughput.contains("x axis: connections; y axis: responses/s"),
                "{throughput}"
            );
            let latency = &chart(drawn, "sweep-latency").described;
            assert!(
                latency.contains("x axis: connections; y axis: latency (ms)"),
                "{latency}"
            );
        },
    );
}

#[test]
fn compare_report_draws_every_chart_in_chromium() {
    let target = spawn_target(one_thread());
    let fast = format!("http://{}/", target.local_addr());
    let slow = format!("http://{}/delay/1", target.local_addr());
    let a = run_load(&fast, &["-c", "2", "-d", "1s"]);
    let b = run_load(&slow, &["-c", "2", "-d", "1s"]);
    let figures = [RunFigures::of("a.json", &a), RunFigures::of("b.json", &b)];
    let comparison = compare(&figures, &CompareOptions::default()).unwrap();
    let runs = [
        LabeledRun {
            label: "a.json",
            result: &a,
        },
        LabeledRun {
            label: "b.json",
            result: &b,
        },
    ];
    let page = temp_dir("html-report-compare").join("compare.html");
    let mut out = std::fs::File::create(&page).unwrap();
    stampede_report::render_compare_html(&runs, Deltas::Runs(&comparison), &mut out).unwrap();
    check_in_chromium(
        &page,
        &["compare-throughput", "compare-p99", "compare-spectrum"],
        "compare",
        |drawn| {
            for chart in drawn {
                assert!(
                    chart.legend.contains(&"a.json".to_string())
                        && chart.legend.contains(&"b.json".to_string()),
                    "both runs in {chart:?}"
                );
            }
        },
    );
}
