//! `stampede serve --metrics ADDR`: the built-in target's counters at
//! `/metrics`, equal to its own `/stats` and to what the client measured,
//! scraped by a real Prometheus (skipped, with a message, where prometheus
//! is not installed; a failure then under STAMPEDE_REQUIRE_TOOLS=1); a bad
//! address is one line and exit 2.

use stampede_testkit::{
    binary, free_port, http_get, require_tool, run_stampede, temp_dir, wait_for, Prometheus,
};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// `stampede serve` in the background, killed when dropped.
struct Serve {
    child: Child,
    port: u16,
    metrics: u16,
}

impl Serve {
    fn start() -> Serve {
        let (port, metrics) = (free_port(), free_port());
        let child = Command::new(binary())
            .args(["serve", "-t", "1", "--port", &port.to_string()])
            .args(["--metrics", &format!("127.0.0.1:{metrics}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("stampede serve starts");
        let serve = Serve {
            child,
            port,
            metrics,
        };
        wait_for(Duration::from_secs(20), || http_get(metrics, "/metrics"))
            .expect("the metrics endpoint answers");
        serve
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The value of the one sample line starting with `series`.
fn sample(exposition: &str, series: &str) -> Option<f64> {
    exposition
        .lines()
        .find(|line| line.starts_with(series))
        .and_then(|line| line.rsplit(' ').next()?.parse().ok())
}

/// Sends `n` requests to `path` and returns how many the client completed.
fn load(serve: &Serve, path: &str, n: u64) -> u64 {
    let run = run_stampede(
        binary(),
        &[
            "run",
            &serve.url(path),
            "-c",
            "2",
            "-t",
            "1",
            "-n",
            &n.to_string(),
        ],
    );
    assert_eq!(run.count("/requests/errors"), 0, "{}", run.stderr());
    run.count("/requests/completed")
}

#[test]
fn the_counters_equal_the_stats_and_the_client_count() {
    let serve = Serve::start();
    let ok = load(&serve, "/", 300);
    let unavailable = load(&serve, "/status/503", 40);
    let text = http_get(serve.metrics, "/metrics").expect("a scrape");
    let stats: serde_json::Value =
        serde_json::from_str(&http_get(serve.port, "/stats").expect("/stats")).expect("JSON");
    let requests = |code: &str| {
        sample(
            &text,
            &format!("stampede_target_requests_total{{code=\"{code}\"}}"),
        )
    };
    assert_eq!(requests("200"), Some(ok as f64), "{text}");
    assert_eq!(requests("503"), Some(unavailable as f64), "{text}");
    assert_eq!(
        requests("200"),
        stats["requests_by_status"]["200"].as_f64(),
        "{stats}"
    );
    let accepted = sample(&text, "stampede_target_connections_accepted_total");
    assert_eq!(accepted, Some(4.0), "two runs of two connections: {text}");
    assert!(sample(&text, "stampede_target_bytes_sent_total") > Some(300.0 * 515.0));
    assert_eq!(sample(&text, "stampede_target_workers"), Some(1.0));
    assert!(
        text.contains("# TYPE stampede_target_connections_open gauge"),
        "{text}"
    );
}

#[test]
fn websocket_message_counters_equal_the_clients_own_counts() {
    let serve = Serve::start();
    let echo = format!("ws://127.0.0.1:{}/ws/echo", serve.port);
    let run = run_stampede(binary(), &["run", &echo, "-c", "3", "-t", "1", "-n", "120"]);
    assert_eq!(run.count("/requests/errors"), 0, "{}", run.stderr());
    assert_eq!(run.count("/websocket/messages_received"), 120);
    let text = http_get(serve.metrics, "/metrics").expect("a scrape");
    let count = |series: &str| sample(&text, series).unwrap_or_else(|| panic!("{series}: {text}"));
    // What the client sent the server received, and the other way round.
    let sent = run.count("/websocket/messages_sent") as f64;
    let received = run.count("/websocket/messages_received") as f64;
    let connections = run.count("/websocket/connections") as f64;
    assert_eq!(count("stampede_target_ws_messages_received_total"), sent);
    assert_eq!(count("stampede_target_ws_messages_sent_total"), received);
    assert_eq!(count("stampede_target_ws_connections_total"), connections);
    assert_eq!(connections, 3.0);
    let stats: serde_json::Value =
        serde_json::from_str(&http_get(serve.port, "/stats").expect("/stats")).expect("JSON");
    assert_eq!(stats["ws_messages_out"].as_f64(), Some(received), "{stats}");
}

#[test]
fn requests_are_counted_by_route_and_code() {
    let serve = Serve::start();
    let pages = load(&serve, "/", 30);
    let delayed = load(&serve, "/delay/1", 12) + load(&serve, "/delay/2", 8);
    let missing = load(&serve, "/no-such-route", 5);
    let text = http_get(serve.metrics, "/metrics").expect("a scrape");
    let route = |route: &str, code: &str| {
        sample(
            &text,
            &format!("stampede_target_route_requests_total{{route=\"{route}\",code=\"{code}\"}}"),
        )
    };
    assert_eq!(route("/", "200"), Some(pages as f64), "{text}");
    assert_eq!(route("/delay", "200"), Some(delayed as f64), "{text}");
    assert_eq!(route("other", "404"), Some(missing as f64), "{text}");
    let stats: serde_json::Value =
        serde_json::from_str(&http_get(serve.port, "/stats").expect("/stats")).expect("JSON");
    assert_eq!(
        stats["requests_by_route"]["/delay"]["200"].as_f64(),
        Some(delayed as f64),
        "{stats}"
    );
}

#[test]
fn a_real_prometheus_scrapes_the_target_counters() {
    let program = require_tool!("prometheus");
    let serve = Serve::start();
    let dir = temp_dir("serve-prometheus");
    let prometheus = Prometheus::start(
        &program,
        &dir,
        Some(&format!("127.0.0.1:{}", serve.metrics)),
    );
    let ok = load(&serve, "/", 500) as f64;
    let query = "stampede_target_requests_total{code=\"200\"}";
    let seen = wait_for(Duration::from_secs(20), || {
        prometheus.value(query).filter(|value| *value == ok)
    });
    assert_eq!(seen, Some(ok), "last seen {:?}", prometheus.value(query));
    let accepted = prometheus.value("stampede_target_connections_accepted_total");
    assert_eq!(accepted, Some(2.0));
    drop(prometheus);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_address_in_use_is_one_line_and_exit_2() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let address = taken.local_addr().expect("address").to_string();
    let output = Command::new(binary())
        .args(["serve", "-t", "1", "--port", "0", "--metrics", &address])
        .output()
        .expect("stampede serve runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        format!("stampede serve: error: --metrics {address}: address already in use"),
        "one line, before the server starts"
    );
}
