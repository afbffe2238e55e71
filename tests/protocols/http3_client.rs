//! `run --http3` against the built-in target's HTTP/3 (`serve --http3`, the
//! same library in this process): the closed and the open model with an
//! exact `-n` the server's own counters confirm, the QUIC handshake in the
//! breakdown (and 0-RTT resumptions apart from it), the result's protocol,
//! and a server that goes away in the middle of a run.

use stampede_target::{CertSource, Server, TlsConfig};
use stampede_testkit::{binary, run_stampede, spawn_target, Run, ServerHandle, TargetConfig};
use std::time::Duration;

/// The target with TLS and HTTP/3, one worker.
fn h3_config() -> TargetConfig {
    TargetConfig {
        threads: 1,
        tls: Some(TlsConfig::new(CertSource::SelfSigned)),
        http3: true,
        shutdown_grace: Duration::from_millis(300),
        ..TargetConfig::default()
    }
}

fn h3_target() -> ServerHandle {
    spawn_target(h3_config())
}

fn url(target: &ServerHandle, path: &str) -> String {
    format!("https://127.0.0.1:{}{path}", target.local_addr().port())
}

fn run_h3(target: &ServerHandle, extra: &[&str]) -> Run {
    let url = url(target, "/");
    let mut args = vec![url.as_str(), "--http3", "--insecure"];
    args.extend_from_slice(extra);
    run_stampede(binary(), &args)
}

#[test]
fn the_closed_model_sends_exactly_n_over_quic_and_times_each_handshake() {
    let target = h3_target();
    let run = run_h3(
        &target,
        &["-n", "300", "-c", "2", "--streams", "4", "-t", "2"],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.count("/requests/sent"), 300);
    assert_eq!(run.count("/requests/success"), 300, "{}", run.result());
    let served = target.stats();
    assert_eq!(served.requests_total, 300, "the server counts the same");
    assert_eq!(served.h3_streams_total, 300);
    assert_eq!(served.h2_streams_total, 0, "nothing went over TCP");
    assert_eq!(run.count("/connections/opened"), 2);
    assert_eq!(served.h3_connections, 2);
    let breakdown = &run.result()["breakdown"];
    assert_eq!(breakdown["quic"]["count"], 2, "{breakdown}");
    assert!(
        breakdown["quic"]["min"].as_u64().unwrap_or(0) > 0,
        "{breakdown}"
    );
    assert_eq!(
        breakdown["connect"]["count"], 0,
        "no TCP connect: {breakdown}"
    );
    assert_eq!(breakdown["zero_rtt"]["count"], 0, "{breakdown}");
    let plan = &run.result()["plan"];
    assert_eq!(plan["http_version"], "h3");
    assert_eq!(plan["io"], "tokio");
    // The JSON names the protocol as ALPN does; the text as people write it.
    assert!(run.stdout().contains("HTTP/3"), "{}", run.stdout());
    let notices = run.result()["notices"].to_string();
    assert!(
        notices.contains("UDP offload"),
        "GSO/GRO reported: {notices}"
    );
}

#[test]
fn the_open_model_sends_exactly_n_at_the_rate() {
    let target = h3_target();
    let run = run_h3(
        &target,
        &[
            "-r",
            "200",
            "-n",
            "200",
            "-c",
            "4",
            "--streams",
            "2",
            "-t",
            "2",
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.count("/requests/sent"), 200);
    assert_eq!(run.count("/requests/success"), 200, "{}", run.result());
    assert_eq!(target.stats().h3_streams_total, 200);
    assert_eq!(run.result()["plan"]["model"], "rate");
    // 200 at 200/s: the last intended instant is at 0.995 s, so the run
    // lasts a second; 3 s allows a loaded machine, not a rate ignored (a
    // closed loop sends 200 in a fraction of a second, a stalled one longer).
    let elapsed = run.result()["elapsed_s"].as_f64().unwrap_or(0.0);
    assert!((0.95..=3.0).contains(&elapsed), "elapsed {elapsed}");
    let opened = run.count("/connections/opened");
    assert!(
        (1..=4).contains(&opened),
        "at most -c connections: {opened}"
    );
}

/// `-d 1s` at `-r 100`: the run lasts what -d says (3 s allows a loaded
/// machine), and it sends what the rate intends in that second: 100, less
/// only what a busy machine falls behind by (a closed loop would send
/// thousands, a stalled one none). Those in flight when the second ends are
/// unfinished, not lost.
#[test]
fn the_open_model_for_a_duration_sends_the_rate_for_that_long() {
    let target = h3_target();
    let run = run_h3(
        &target,
        &[
            "-r",
            "100",
            "-d",
            "1s",
            "-c",
            "4",
            "--streams",
            "8",
            "-t",
            "2",
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let elapsed = run.result()["elapsed_s"].as_f64().unwrap_or(0.0);
    assert!((0.95..=3.0).contains(&elapsed), "elapsed {elapsed}");
    let sent = run.count("/requests/sent");
    assert!((80..=101).contains(&sent), "{sent} sent: {}", run.result());
    let success = run.count("/requests/success");
    let unfinished = run.count("/requests/unfinished");
    assert_eq!(success + unfinished, sent, "{}", run.result());
    assert!(success >= 70, "{success} answered: {}", run.result());
    assert_eq!(target.stats().h3_streams_total, sent);
}

#[test]
fn zero_rtt_resumptions_are_counted_apart_from_full_handshakes() {
    let target = h3_target();
    // A connection per request: every one after the first has a ticket.
    let run = run_h3(
        &target,
        &["--0rtt", "--no-keepalive", "-n", "12", "-c", "1", "-t", "1"],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.count("/requests/success"), 12, "{}", run.result());
    assert_eq!(run.count("/connections/opened"), 12);
    let breakdown = &run.result()["breakdown"];
    let full = breakdown["quic"]["count"].as_u64().unwrap_or(0);
    let early = breakdown["zero_rtt"]["count"].as_u64().unwrap_or(0);
    assert_eq!(full + early, 12, "every handshake timed once: {breakdown}");
    assert!(full >= 1, "the first has no ticket: {breakdown}");
    assert!(early >= 6, "most resume with 0-RTT: {breakdown}");
    let text = stampede_testkit::stampede(&[
        &url(&target, "/"),
        "--http3",
        "--insecure",
        "--0rtt",
        "--no-keepalive",
        "-n",
        "4",
        "-c",
        "1",
    ]);
    let stdout = stampede_testkit::text(&text.stdout);
    assert!(stdout.contains("QUIC handshake:"), "{stdout}");
    assert!(stdout.contains("0-RTT resumed:"), "{stdout}");
    assert!(stdout.contains("HTTP/3"), "{stdout}");
}

#[test]
fn bodies_are_counted_exactly_and_a_request_body_reaches_the_routes() {
    let target = h3_target();
    let run = run_stampede(
        binary(),
        &[
            &url(&target, "/bytes/1000"),
            "--http3",
            "--insecure",
            "-n",
            "20",
            "-c",
            "2",
        ],
    );
    assert_eq!(run.count("/requests/success"), 20, "{}", run.result());
    assert_eq!(run.count("/bytes/body"), 20 * 1000, "DATA payload, exactly");
    // /echo answers with the request's head and then its body; the head
    // alone outweighs the body, so a byte count proves nothing by itself.
    // Two runs whose bodies differ by 20 bytes (and whose heads differ only in
    // the Content-Length digits, 10 and 30) echo exactly 20 bytes more per
    // request: the bodies came through whole (`--check` is HTTP/1.1 and
    // HTTP/2 only).
    let echo = url(&target, "/echo");
    let echoed = |body: &str| {
        let run = run_stampede(
            binary(),
            &[
                &echo,
                "--http3",
                "--insecure",
                "-m",
                "POST",
                "-b",
                body,
                "-n",
                "3",
                "-c",
                "1",
            ],
        );
        assert_eq!(run.count("/requests/success"), 3, "{}", run.result());
        run.count("/bytes/body")
    };
    let short = echoed("hello-quic");
    let long = echoed(&"hello-quic".repeat(3));
    assert_eq!(long - short, 3 * 20, "{short} and {long} bytes echoed");
    let dir = stampede_testkit::temp_dir("h3-mix");
    let file = dir.join("targets.txt");
    let base = url(&target, "");
    std::fs::write(
        &file,
        format!("GET {base}/bytes/100\n\nGET {base}/bytes/300\n"),
    )
    .unwrap();
    let run = run_stampede(
        binary(),
        &[
            "--targets",
            file.to_str().unwrap(),
            "--http3",
            "--insecure",
            "-n",
            "40",
            "-c",
            "2",
        ],
    );
    assert_eq!(run.count("/requests/success"), 40, "{}", run.result());
    let targets = run.result()["targets"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(targets.len(), 2, "{}", run.result());
    for (entry, size) in targets.iter().zip([100, 300]) {
        let success = entry["success"].as_u64().unwrap_or(0);
        assert_eq!(success, 20, "{entry}");
        assert_eq!(
            entry["bytes_body"].as_u64(),
            Some(success * size),
            "{entry}"
        );
    }
}

#[test]
fn a_server_that_goes_away_mid_run_is_reconnected_to() {
    let first = h3_target();
    let port = first.local_addr().port();
    let url = url(&first, "/");
    let child = std::process::Command::new(binary())
        .args([
            url.as_str(),
            "--http3",
            "--insecure",
            "-c",
            "2",
            "--streams",
            "2",
            "-t",
            "1",
            "-d",
            "5s",
            "--connect-timeout",
            "500ms",
            "--quiet",
            "--json",
        ])
        .arg(std::env::temp_dir().join(format!("h3-mid-run-{}.json", std::process::id())))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("stampede runs");
    std::thread::sleep(Duration::from_millis(1500));
    // Graceful: GOAWAY, the streams in flight finish, the connections close.
    let served_first = first
        .shutdown()
        .expect("the first server stops")
        .requests_total;
    let second = Server::start(format!("127.0.0.1:{port}").parse().unwrap(), h3_config())
        .expect("the second server takes the same port");
    let output = child.wait_with_output().expect("stampede finishes");
    let path = std::env::temp_dir().join(format!("h3-mid-run-{}.json", std::process::id()));
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("the result was written"))
            .expect("valid JSON");
    let _ = std::fs::remove_file(&path);
    let stderr = stampede_testkit::text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let served_second = second.stats().requests_total;
    assert!(
        served_first > 0 && served_second > 0,
        "{served_first} then {served_second}"
    );
    let count = |pointer: &str| {
        result
            .pointer(pointer)
            .and_then(|v| v.as_u64())
            .unwrap_or(0)
    };
    let success = count("/requests/success");
    assert!(
        success <= served_first + served_second,
        "{success} ok but {served_first} + {served_second} served"
    );
    assert!(
        count("/connections/opened") >= 3,
        "{}",
        result["connections"]
    );
    assert_eq!(
        count("/requests/sent"),
        success
            + count("/requests/failed_status")
            + count("/requests/errors")
            + count("/requests/unfinished"),
        "every request accounted for: {}",
        result["requests"]
    );
    // What a request in flight or waiting may meet while the server is gone.
    let known = [
        "goaway",
        "connect_timeout",
        "timeout",
        "reset",
        "stream_reset",
    ];
    if let Some(errors) = result["errors"].as_object() {
        for class in errors.keys() {
            assert!(
                known.contains(&class.as_str()),
                "{class}: {}",
                result["error_samples"]
            );
        }
    }
}
