//! `stampede serve --http3 --metrics ADDR`: requests over HTTP/3 show in the
//! target's families like the other protocols' (QUIC connections, request
//! streams, responses by status), equal to what the client completed.

use stampede_testkit::{binary, free_port, http_get, run_stampede, wait_for};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// `stampede serve --http3` in the background, killed when dropped.
struct Serve(Child);

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The value of the one sample line starting with `series`.
fn sample(exposition: &str, series: &str) -> Option<f64> {
    exposition
        .lines()
        .find(|line| line.starts_with(series))
        .and_then(|line| line.rsplit(' ').next()?.parse().ok())
}

#[test]
fn http3_requests_are_counted_in_the_target_families() {
    let (port, metrics) = (free_port(), free_port());
    let _serve = Serve(
        Command::new(binary())
            .args(["serve", "-t", "1", "--http3", "--port", &port.to_string()])
            .args(["--metrics", &format!("127.0.0.1:{metrics}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("stampede serve starts"),
    );
    wait_for(Duration::from_secs(20), || http_get(metrics, "/metrics"))
        .expect("the metrics endpoint answers");
    let url = format!("https://127.0.0.1:{port}/");
    let run = run_stampede(
        binary(),
        &[&url, "--http3", "--insecure", "-c", "2", "-n", "120"],
    );
    assert_eq!(run.count("/requests/completed"), 120, "{}", run.stderr());
    let text = http_get(metrics, "/metrics").expect("a scrape");
    assert_eq!(
        sample(&text, "stampede_target_h3_streams_total"),
        Some(120.0),
        "{text}"
    );
    assert_eq!(
        sample(&text, "stampede_target_h3_connections_total"),
        Some(2.0),
        "{text}"
    );
    assert_eq!(
        sample(&text, "stampede_target_requests_total{code=\"200\"}"),
        Some(120.0),
        "{text}"
    );
    assert_eq!(
        sample(
            &text,
            "stampede_target_route_requests_total{route=\"/\",code=\"200\"}"
        ),
        Some(120.0),
        "{text}"
    );
    assert_eq!(
        sample(&text, "stampede_target_h2_streams_total"),
        Some(0.0),
        "{text}"
    );
}
