//! `--http3` where it cannot work: a server that does not speak QUIC (a
//! closed UDP port is silent, so the handshake times out) is one error
//! class with a hint and exit 2 soon after `--connect-timeout`; an
//! untrusted certificate says what to do, as over TCP; and what QUIC cannot
//! carry (http://, a Unix socket, pipelining) is refused in one line.

use stampede_target::{CertSource, TlsConfig};
use stampede_testkit::{
    binary, closed_udp_port, run_stampede, spawn_target, stampede, text, TargetConfig,
};
use std::time::{Duration, Instant};

#[test]
fn a_closed_udp_port_is_a_handshake_timeout_with_a_hint_and_exit_2() {
    let url = format!("https://127.0.0.1:{}/", closed_udp_port());
    let started = Instant::now();
    let run = run_stampede(
        binary(),
        &[
            &url,
            "--http3",
            "--insecure",
            "-c",
            "2",
            "--streams",
            "3",
            "-n",
            "6",
            "-t",
            "1",
            "--connect-timeout",
            "1s",
        ],
    );
    let took = started.elapsed();
    assert_eq!(run.code(), Some(2), "{}", run.stderr());
    // One handshake per connection slot, its failure shared by the streams
    // waiting on it: the run ends one connect timeout in (bound generous).
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert!(took >= Duration::from_millis(900), "took {took:?}");
    assert_eq!(run.count("/errors/connect_timeout"), 6, "{}", run.result());
    assert_eq!(run.count("/connections/attempts"), 2);
    assert_eq!(run.count("/connections/opened"), 0);
    let sample = run.result()["error_samples"]["connect_timeout"][0]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        sample.contains("UDP port") && sample.contains("HTTP/3 server"),
        "{sample}"
    );
    let stderr = run.stderr();
    assert!(
        stderr.contains("no connection could be opened") && stderr.contains("connect_timeout"),
        "{stderr}"
    );
}

#[test]
fn an_untrusted_certificate_names_cacert_and_insecure_over_quic_too() {
    let target = spawn_target(TargetConfig {
        threads: 1,
        tls: Some(TlsConfig::new(CertSource::SelfSigned)),
        http3: true,
        ..TargetConfig::default()
    });
    let url = format!("https://localhost:{}/", target.local_addr().port());
    let run = run_stampede(binary(), &[&url, "--http3", "-n", "2", "-c", "1"]);
    assert_eq!(run.code(), Some(2), "{}", run.stderr());
    let sample = run.result()["error_samples"]["tls"][0]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        sample.contains("--cacert") && sample.contains("--insecure"),
        "{sample}"
    );
}

#[test]
fn what_quic_cannot_carry_is_refused_in_one_line() {
    let cases: [(&[&str], &str); 5] = [
        (&["http://127.0.0.1:1/", "--http3"], "https://"),
        (
            &["https://127.0.0.1:1/", "--http3", "--tls-max", "1.2"],
            "--tls-max 1.2",
        ),
        (
            &[
                "https://127.0.0.1:1/",
                "--http3",
                "--unix-socket",
                "/tmp/none.sock",
            ],
            "--unix-socket",
        ),
        (
            &["https://127.0.0.1:1/", "--http3", "--pipeline", "4"],
            "--pipeline",
        ),
        (
            &[
                "https://127.0.0.1:1/",
                "--http3",
                "--no-keepalive",
                "--streams",
                "2",
            ],
            "--streams 1",
        ),
    ];
    for (args, named) in cases {
        let mut all = vec!["run"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["-n", "1"]);
        let output = stampede(&all);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(named), "{args:?}: {stderr}");
    }
    let output = stampede(&["run", "https://127.0.0.1:1/", "--0rtt", "-n", "1"]);
    assert_eq!(
        output.status.code(),
        Some(2),
        "--0rtt alone is a usage error"
    );
}

#[test]
fn a_server_asked_for_http3_without_tls_13_refuses_to_start() {
    let port = stampede_testkit::free_port().to_string();
    let output = stampede(&["serve", "--port", &port, "--http3", "--tls-max", "1.2"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--tls-max 1.2"), "{stderr}");
}

#[test]
fn tcp_responses_advertise_http3_with_alt_svc() {
    let target = spawn_target(TargetConfig {
        threads: 1,
        tls: Some(TlsConfig::new(CertSource::SelfSigned)),
        http3: true,
        ..TargetConfig::default()
    });
    let port = target.local_addr().port();
    // Over TCP (HTTP/2 here), the response advertises h3 on the same port.
    let url = format!("https://127.0.0.1:{port}/echo");
    let run = run_stampede(binary(), &[&url, "--http2", "--insecure", "-n", "1"]);
    assert_eq!(run.count("/requests/success"), 1, "{}", run.result());
    let curl = stampede_testkit::require_tool!("curl");
    let head = std::process::Command::new(curl)
        .args(["-sk", "-D", "-", "-o", "/dev/null"])
        .arg(format!("https://127.0.0.1:{port}/1k.html"))
        .output()
        .expect("curl runs");
    let head = text(&head.stdout).to_ascii_lowercase();
    assert!(
        head.contains(&format!("alt-svc: h3=\":{port}\"; ma=86400")),
        "{head}"
    );
}
