//! The HTML reports of a run, a sweep and a comparison, opened in headless
//! Chromium: the page loads with no console message (errors included), every
//! chart container holds the SVG plotly.js drew after the scripts ran, and a
//! screenshot PNG is saved under target/tmp/html-report/ for people to look
//! at. Skipped, with a message, only when no Chromium is installed, and a
//! failure then under STAMPEDE_REQUIRE_TOOLS=1 (.ci/run installs it and sets it).

use stampede_analysis::{
    analyze_sweep, compare, CompareOptions, Load, RunFigures, StepInput, Thresholds,
};
use stampede_metrics::RunResult;
use stampede_report::{Deltas, LabeledRun, SweepStep};
use stampede_testkit::{spawn_target, temp_dir, TargetConfig};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn binary() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_stampede"))
}

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

/// Loads `page`, checks the console stayed silent and every chart in
/// `charts` was drawn, and saves a screenshot as `name`.png.
fn check_in_chromium(page: &Path, charts: &[&str], name: &str) {
    // Skips (or fails under STAMPEDE_REQUIRE_TOOLS=1) without a Chromium.
    let Some(browser) = stampede_testkit::tool_or_skip("chromium") else {
        return;
    };
    let output = headless(
        &browser,
        page,
        &["--enable-logging=stderr", "--v=0", "--dump-dom"],
    );
    assert!(output.status.success(), "chromium failed: {output:?}");
    let log = String::from_utf8_lossy(&output.stderr);
    // Chromium logs every console message (log, warn, error, uncaught
    // exceptions) as a CONSOLE line; a clean page logs none.
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:#?}");
    let dom = String::from_utf8_lossy(&output.stdout);
    let present: Vec<&str> = dom
        .split("data-chart=\"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap_or(""))
        .collect();
    assert_eq!(present, charts, "the page's charts, in order");
    for (section, id) in dom.split("data-chart=\"").skip(1).zip(charts) {
        // plotly.js draws each chart as SVG layers of class main-svg.
        assert!(
            section.contains("main-svg") && section.contains("<path"),
            "chart {id} was not drawn"
        );
    }
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
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = std::fs::read_to_string(&json).unwrap();
    RunResult::from_json(&text).unwrap()
}

fn one_thread() -> TargetConfig {
    TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    }
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
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
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
    check_in_chromium(&page, &charts, "run");
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
    check_in_chromium(&page, &["sweep-throughput", "sweep-latency"], "sweep");
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
    );
}
