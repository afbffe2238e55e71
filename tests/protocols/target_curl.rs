//! The built-in target seen by curl, an HTTP client that is not ours: the
//! routes over plain HTTP/1.1 with keep-alive, a Unix socket, h2c prior
//! knowledge, and TLS with HTTP/1.1 and h2 (ALPN), each counted exactly by
//! /stats. The target crate's own tests use a Rust client only and need nothing
//! outside the workspace; these live here because they need curl, and the one
//! skip-or-fail rule for outside tools (`STAMPEDE_REQUIRE_TOOLS`) is in
//! stampede-testkit, which depends on the target (the target's tests cannot use
//! it without a dependency cycle).

use stampede_target::{CertSource, Config, ServerHandle, TlsConfig};
use stampede_testkit::{require_tool, skip_or_fail, spawn_target, temp_dir};
use std::path::Path;
use std::process::Command;

/// `curl -s ARGS` → its stdout.
fn curl_out(curl: &Path, args: &[&str]) -> String {
    let out = Command::new(curl)
        .args(["-s", "--max-time", "5"])
        .args(args)
        .output()
        .expect("curl runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `curl ARGS URL` → "http_version status size".
fn curl_summary(curl: &Path, args: &[&str], url: &str) -> String {
    let mut all = vec![
        "-o",
        "/dev/null",
        "-w",
        "%{http_version} %{http_code} %{size_download}",
    ];
    all.extend_from_slice(args);
    all.push(url);
    curl_out(curl, &all)
}

/// Whether this curl speaks HTTP/2; the same skip-or-fail rule when not.
fn curl_has_h2(curl: &Path) -> bool {
    let v = Command::new(curl).arg("-V").output().expect("curl -V");
    let ok = String::from_utf8_lossy(&v.stdout)
        .lines()
        .any(|l| l.starts_with("Features:") && l.contains("HTTP2"));
    if !ok {
        skip_or_fail(
            "curl has no HTTP2 feature (curl -V), so the HTTP/2 cases were not run",
            "install a curl built with nghttp2 (apt-get install -y curl)",
        );
    }
    ok
}

fn two_threads() -> Config {
    Config {
        threads: 2,
        ..Config::default()
    }
}

#[test]
fn curl_sees_the_same() {
    let curl = require_tool!("curl");
    let h = spawn_target(two_threads());
    let base = format!("http://{}", h.local_addr());
    let run = |args: &[&str]| curl_out(&curl, args);
    assert_eq!(run(&[&format!("{base}/")]).len(), 515);
    assert_eq!(run(&[&format!("{base}/chunked/100000")]).len(), 100_000);
    assert_eq!(
        run(&[
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            &format!("{base}/status/418")
        ]),
        "418"
    );
    // curl sends Expect: 100-continue for bodies over 1 MiB; use a smaller explicit one.
    let echoed = run(&[
        "-H",
        "Expect: 100-continue",
        "--data-binary",
        "abc",
        &format!("{base}/echo"),
    ]);
    assert!(echoed.ends_with("abc"), "{echoed}");
    // Several URLs on one curl: keep-alive reuse.
    let u = format!("{base}/bytes/5");
    assert_eq!(run(&[&u, &u, &u]).len(), 15);
    let s = h.shutdown().unwrap();
    assert_eq!(s.requests_total, 7);
    assert_eq!(s.connections_accepted, 5);
}

fn tls_server(write_cert: &Path) -> ServerHandle {
    spawn_target(Config {
        tls: Some(TlsConfig {
            cert: CertSource::SelfSigned,
            write_cert: Some(write_cert.to_path_buf()),
            ..TlsConfig::new(CertSource::SelfSigned)
        }),
        ..two_threads()
    })
}

#[test]
fn curl_over_h2c_tls_and_unix() {
    let curl_path = require_tool!("curl");
    let h2 = curl_has_h2(&curl_path);
    let curl = |args: &[&str], url: &str| curl_summary(&curl_path, args, url);
    let dir = temp_dir("curl");
    let sock = dir.join("t.sock");
    let plain = spawn_target(Config {
        unix_socket: Some(sock.clone()),
        ..two_threads()
    });
    let a = plain.local_addr();
    let unix = sock.to_str().unwrap();
    assert_eq!(
        curl(&["--unix-socket", unix], "http://localhost/1k.html"),
        "1.1 200 1024"
    );
    assert_eq!(
        curl(&["--unix-socket", unix], "http://localhost/chunked/70000"),
        "1.1 200 70000"
    );
    let mut expected = 2;
    if h2 {
        assert_eq!(
            curl(&["--http2-prior-knowledge"], &format!("http://{a}/1k.html")),
            "2 200 1024"
        );
        assert_eq!(
            curl(
                &["--http2-prior-knowledge"],
                &format!("http://{a}/chunked/70000")
            ),
            "2 200 70000"
        );
        assert_eq!(
            curl(
                &["--http2-prior-knowledge", "--unix-socket", unix],
                "http://localhost/bytes/100"
            ),
            "2 200 100"
        );
        expected += 3;
    }
    assert_eq!(plain.stats().requests_total, expected);
    plain.shutdown().unwrap();

    let pem = dir.join("ca.pem");
    let tls = tls_server(&pem);
    let port = tls.local_addr().port();
    let url = |host: &str, path: &str| format!("https://{host}:{port}{path}");
    let ca = pem.to_str().unwrap();
    assert_eq!(
        curl(&["--http1.1", "--cacert", ca], &url("localhost", "/")),
        "1.1 200 515"
    );
    assert_eq!(
        curl(&["--http1.1", "-k"], &url("127.0.0.1", "/bytes/100000")),
        "1.1 200 100000"
    );
    let mut expected = 2;
    if h2 {
        assert_eq!(
            curl(&["--http2", "--cacert", ca], &url("localhost", "/1k.html")),
            "2 200 1024"
        );
        assert_eq!(
            curl(&["--http2", "-k"], &url("127.0.0.1", "/chunked/100000")),
            "2 200 100000"
        );
        expected += 2;
    }
    let s = tls.stats();
    assert_eq!(s.requests_total, expected);
    assert_eq!(s.tls_handshakes, expected);
    assert_eq!(s.h2_connections, expected - 2);
    tls.shutdown().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}
