//! `stampede run --metrics ADDR`: the endpoint serves the run's counters
//! while it runs and its final totals during `--metrics-linger`, equal to
//! the JSON result; a real Prometheus scrapes it and its query API gives
//! back the same counts and quantiles; a bad address is refused before any
//! load. The Prometheus test is skipped, with a message, where prometheus is
//! not installed, and fails then under STAMPEDE_REQUIRE_TOOLS=1 (.ci/run
//! installs it and sets it).

use stampede_testkit::{
    binary, free_port, get_with, http_get, one_thread, read_json, spawn_target, temp_dir, wait_for,
    Prometheus,
};
use std::process::{Child, Command};
use std::time::Duration;

/// OpenMetrics, as Prometheus asks for it.
const OPENMETRICS: &str =
    "Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5\r\n";

/// The value of the sample whose name and labels start with `series`
/// (e.g. `stampede_requests_total{run_id="…",outcome="success",code="200"}`).
fn sample(exposition: &str, series: &str) -> Option<f64> {
    exposition
        .lines()
        .find(|line| line.starts_with(series))
        .and_then(|line| line.rsplit(' ').next())
        .and_then(|value| value.parse().ok())
}

/// Sum of every `stampede_requests_total` sample with this outcome.
fn requests(exposition: &str, outcome: &str) -> u64 {
    let tag = format!("outcome=\"{outcome}\"");
    exposition
        .lines()
        .filter(|line| line.starts_with("stampede_requests_total{") && line.contains(&tag))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

/// A stampede run in the background, its output in files.
struct Background {
    child: Child,
    json: std::path::PathBuf,
    dir: std::path::PathBuf,
}

impl Background {
    fn start(name: &str, args: &[&str]) -> Background {
        let dir = temp_dir(name);
        let json = dir.join("result.json");
        let child = Command::new(binary())
            .args(args)
            .arg("--json")
            .arg(&json)
            .arg("--quiet")
            .stdout(std::fs::File::create(dir.join("stdout")).expect("stdout file"))
            .stderr(std::fs::File::create(dir.join("stderr")).expect("stderr file"))
            .spawn()
            .expect("stampede starts");
        Background { child, json, dir }
    }

    /// The result file, once written (atomically: present means complete).
    fn wait_for_result(&self, limit: Duration) -> serde_json::Value {
        wait_for(limit, || self.json.exists().then_some(()))
            .unwrap_or_else(|| panic!("no result within {limit:?}; stderr: {}", self.stderr()));
        read_json(&self.json)
    }

    fn wait(&mut self, limit: Duration) -> i32 {
        let status = wait_for(limit, || self.child.try_wait().ok().flatten())
            .unwrap_or_else(|| panic!("stampede still running after {limit:?}"));
        status.code().expect("an exit code")
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

fn count(result: &serde_json::Value, pointer: &str) -> u64 {
    result
        .pointer(pointer)
        .and_then(serde_json::Value::as_u64)
        .unwrap_or_else(|| panic!("{pointer} missing in {result}"))
}

#[test]
fn the_endpoint_serves_the_run_live_and_its_final_totals_equal_the_result() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/status/503", target.local_addr());
    let port = free_port();
    let address = format!("127.0.0.1:{port}");
    let mut run = Background::start(
        "metrics-live",
        &[
            "run",
            &url,
            "-c",
            "4",
            "-t",
            "1",
            "-d",
            "3s",
            "--metrics",
            &address,
            "--metrics-linger",
            "3s",
        ],
    );
    // Mid-run: a scrape shows requests already counted.
    let live = wait_for(Duration::from_secs(20), || {
        http_get(port, "/metrics").filter(|body| requests(body, "failed_status") > 0)
    })
    .unwrap_or_else(|| panic!("no live counts on /metrics; stderr: {}", run.stderr()));
    assert!(
        !live.contains("# EOF"),
        "0.0.4 text unless OpenMetrics is asked for: {live}"
    );
    assert!(live.contains("stampede_latency_seconds_bucket{"), "{live}");
    let open = get_with(port, "/metrics", OPENMETRICS).expect("an OpenMetrics scrape");
    assert!(
        open.ends_with("# EOF\n"),
        "OpenMetrics ends with # EOF: {open}"
    );
    assert!(open.contains("stampede_requests_total{"), "{open}");
    // After the run (the result is written, the endpoint lingers): the totals.
    let result = run.wait_for_result(Duration::from_secs(30));
    let last = http_get(port, "/metrics").expect("the endpoint lingers after the run");
    let run_id = result["run_id"].as_str().expect("run_id in the result");
    assert_eq!(run_id.len(), 16, "{run_id}");
    assert!(last.contains(&format!("run_id=\"{run_id}\"")), "{last}");
    assert!(!live.is_empty() && live.contains(&format!("run_id=\"{run_id}\"")));
    assert_eq!(
        requests(&last, "failed_status"),
        count(&result, "/requests/failed_status")
    );
    assert_eq!(
        requests(&last, "success"),
        count(&result, "/requests/success")
    );
    assert_eq!(requests(&last, "error"), count(&result, "/requests/errors"));
    let with_run = |name: &str| format!("{name}{{run_id=\"{run_id}\"}}");
    assert_eq!(
        sample(&last, &with_run("stampede_bytes_received_total")),
        Some(count(&result, "/bytes/received") as f64)
    );
    assert_eq!(
        sample(&last, &with_run("stampede_latency_seconds_count")),
        Some(count(&result, "/requests/completed") as f64)
    );
    let p99 = sample(
        &last,
        &format!("stampede_latency_quantile_seconds{{run_id=\"{run_id}\",quantile=\"0.99\"}}"),
    )
    .expect("a p99 gauge");
    let json_p99 = count(&result, "/latency_us/p99") as f64 / 1e6;
    assert!((p99 - json_p99).abs() < 1e-9, "{p99} vs {json_p99}");
    assert_eq!(sample(&last, &with_run("stampede_in_flight")), Some(0.0));
    assert_eq!(run.wait(Duration::from_secs(30)), 0, "{}", run.stderr());
    let stderr = run.stderr();
    assert!(
        stderr.contains(&format!(
            "metrics: serving final values at http://{address}/metrics for 3s"
        )),
        "{stderr}"
    );
    // The summary's header names the same run.
    let stdout = std::fs::read_to_string(run.dir.join("stdout")).unwrap_or_default();
    assert!(
        stdout.lines().next().unwrap_or("").contains(run_id),
        "{stdout}"
    );
}

#[test]
fn a_real_prometheus_scrapes_the_same_counts_and_quantiles_as_the_result() {
    let program = stampede_testkit::require_tool!("prometheus");
    let dir = temp_dir("prometheus");
    let port = free_port();
    let address = format!("127.0.0.1:{port}");
    let prometheus = Prometheus::start(&program, &dir, Some(&address));
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    let mut run = Background::start(
        "metrics-prometheus",
        &[
            "run",
            &url,
            "-c",
            "4",
            "-t",
            "1",
            "-d",
            "3s",
            "--metrics",
            &address,
            "--metrics-linger",
            "15s",
        ],
    );
    let result = run.wait_for_result(Duration::from_secs(30));
    let run_id = result["run_id"].as_str().expect("run_id").to_string();
    let success = count(&result, "/requests/success") as f64;
    assert!(success > 0.0, "{result}");
    // Scraped every second: within the linger Prometheus has the totals.
    let query = format!("sum(stampede_requests_total{{run_id=\"{run_id}\",outcome=\"success\"}})");
    let seen = wait_for(Duration::from_secs(12), || {
        prometheus.value(&query).filter(|value| *value == success)
    });
    let last = prometheus.value(&query);
    assert_eq!(seen, Some(success), "last seen {last:?}");
    // The HDR quantile as served, and the classic buckets' estimate.
    let json_p99 = count(&result, "/latency_us/p99") as f64 / 1e6;
    let gauge =
        format!("stampede_latency_quantile_seconds{{run_id=\"{run_id}\",quantile=\"0.99\"}}");
    let p99 = prometheus
        .value(&gauge)
        .expect("the p99 gauge in Prometheus");
    assert!((p99 - json_p99).abs() < 1e-9, "{p99} vs {json_p99}");
    let estimate =
        format!("histogram_quantile(0.99, stampede_latency_seconds_bucket{{run_id=\"{run_id}\"}})");
    let estimate = prometheus.value(&estimate).expect("a bucket estimate");
    // The estimate lies in the bucket holding the p99 (or a neighbour, at
    // HDR's resolution); within the first bucket Prometheus interpolates
    // from 0, so on a fast machine (p99 ~130 µs) the estimate is near its
    // 0.5 ms bound, far from the p99 itself but in the right bucket.
    // The `le` bounds the endpoint serves (crates/stampede-exporters/src/metrics_feed.rs).
    let bounds = [
        0.0,
        0.0005,
        0.001,
        0.0025,
        0.005,
        0.01,
        0.025,
        0.05,
        0.1,
        0.25,
        0.5,
        1.0,
        2.5,
        5.0,
        10.0,
        f64::INFINITY,
    ];
    let holding = (1..bounds.len())
        .find(|&i| json_p99 <= bounds[i])
        .expect("a bucket");
    let (low, high) = (
        bounds[holding.saturating_sub(2)],
        bounds[(holding + 1).min(bounds.len() - 1)],
    );
    assert!(
        estimate >= low && estimate <= high * 1.01,
        "histogram_quantile {estimate} vs p99 {json_p99} (bucket up to {})",
        bounds[holding]
    );
    let bytes = format!("stampede_bytes_received_total{{run_id=\"{run_id}\"}}");
    assert_eq!(
        prometheus.value(&bytes),
        Some(count(&result, "/bytes/received") as f64)
    );
    assert_eq!(run.wait(Duration::from_secs(30)), 0, "{}", run.stderr());
    drop(prometheus);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `program` (stampede, or a command that runs it) with `--metrics
/// address` against a live target; returns (exit code, stderr) and checks
/// that no request reached the target and that stderr is one line.
fn refused_by(program: &mut Command, address: &str) -> (Option<i32>, String) {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    let output = program
        .args([
            "run",
            &url,
            "-c",
            "2",
            "-t",
            "1",
            "-d",
            "2s",
            "--metrics",
            address,
            "--quiet",
        ])
        .output()
        .expect("stampede runs");
    assert_eq!(
        target.stats().requests_total,
        0,
        "load was sent before the refusal"
    );
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    (output.status.code(), stderr)
}

fn refused(address: &str) -> (Option<i32>, String) {
    refused_by(&mut Command::new(binary()), address)
}

#[test]
fn an_address_in_use_is_refused_before_any_load() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let address = taken.local_addr().expect("address").to_string();
    let (code, stderr) = refused(&address);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("--metrics {address}: address already in use")),
        "{stderr}"
    );
}

#[test]
fn a_bad_or_foreign_address_is_refused_before_any_load() {
    let (code, stderr) = refused("not-an-address");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--metrics not-an-address: not an address"),
        "{stderr}"
    );
    // TEST-NET-1 (RFC 5737): no machine's own address.
    let (code, stderr) = refused("192.0.2.1:9464");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("not an address of this machine"),
        "{stderr}"
    );
}

#[test]
fn a_privileged_port_without_privilege_is_refused_before_any_load() {
    let (code, stderr) = if std::net::TcpListener::bind("127.0.0.1:1").is_err() {
        refused("127.0.0.1:1")
    } else {
        // Privileged here (root in a container, as CI is): run a copy of
        // the binary as nobody through setpriv (util-linux), or skip.
        let Some(setpriv) = stampede_testkit::tool_or_skip("setpriv") else {
            return;
        };
        let dir = temp_dir("unprivileged");
        let copy = dir.join("stampede");
        std::fs::copy(binary(), &copy).expect("copy the binary");
        use std::os::unix::fs::PermissionsExt;
        for (path, mode) in [(&dir, 0o755), (&copy, 0o755)] {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
                .expect("make it runnable by nobody");
        }
        let mut command = Command::new(setpriv);
        command
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "--inh-caps=-all",
            ])
            .arg(&copy);
        let outcome = refused_by(&mut command, "127.0.0.1:1");
        let _ = std::fs::remove_dir_all(&dir);
        outcome
    };
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--metrics 127.0.0.1:1: permission denied"),
        "{stderr}"
    );
}

#[test]
fn the_open_model_serves_its_target_rate_and_ctrl_c_ends_the_linger() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    let port = free_port();
    let address = format!("127.0.0.1:{port}");
    let mut run = Background::start(
        "metrics-open",
        &[
            "run",
            &url,
            "-r",
            "200",
            "-t",
            "1",
            "-d",
            "2s",
            "--metrics",
            &address,
            "--metrics-linger",
            "60s",
        ],
    );
    let live = wait_for(Duration::from_secs(20), || {
        http_get(port, "/metrics").filter(|body| requests(body, "success") > 0)
    })
    .unwrap_or_else(|| panic!("no live counts on /metrics; stderr: {}", run.stderr()));
    let target_rate = live
        .lines()
        .find(|line| line.starts_with("stampede_target_rate{"))
        .and_then(|line| line.rsplit(' ').next()?.parse::<f64>().ok());
    assert_eq!(target_rate, Some(200.0), "{live}");
    let result = run.wait_for_result(Duration::from_secs(30));
    wait_for(Duration::from_secs(10), || {
        run.stderr().contains("serving final values").then_some(())
    })
    .unwrap_or_else(|| panic!("no linger notice: {}", run.stderr()));
    // Ctrl-C ends the 60 s linger at once; the run itself had finished.
    let pid = run.child.id().to_string();
    let killed = Command::new("kill").args(["-INT", &pid]).status();
    assert!(killed.is_ok_and(|status| status.success()));
    assert_eq!(run.wait(Duration::from_secs(10)), 0, "{}", run.stderr());
    assert!(count(&result, "/requests/success") > 0, "{result}");
}
