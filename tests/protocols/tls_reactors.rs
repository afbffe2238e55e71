//! HTTP/1.1 over TLS on every event loop, through the binary: epoll,
//! io_uring (where `--io auto` sends it when the kernel has it) and tokio.
//! Exact counts with and without keep-alive, the handshake in the breakdown
//! once per connection, session resumption, a certificate the client does
//! not trust, and TLS through a proxy, which stays on tokio.

use rustls::{HandshakeKind, ServerConnection, StreamOwned};
use stampede_target::{CertSource, TlsConfig};
use stampede_testkit::{
    binary, run_on_loop, run_stampede, spawn_target, RawServer, TargetConfig, EVENT_LOOPS,
};
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The body of the built-in target's /index.html.
const INDEX_BYTES: u64 = 515;

/// The built-in target over TLS (self-signed), and where its certificate is.
fn tls_target(name: &str) -> (stampede_testkit::ServerHandle, PathBuf) {
    let cert = stampede_testkit::temp_dir(name).join("ca.pem");
    let target = spawn_target(TargetConfig {
        threads: 1,
        tls: Some(TlsConfig {
            cert: CertSource::SelfSigned,
            write_cert: Some(cert.clone()),
            ..TlsConfig::new(CertSource::SelfSigned)
        }),
        ..TargetConfig::default()
    });
    (target, cert)
}

#[test]
fn every_event_loop_counts_exactly_over_tls_and_times_each_handshake() {
    let (target, cert) = tls_target("tls-counts");
    let url = format!(
        "https://localhost:{}/index.html",
        target.local_addr().port()
    );
    let cert = cert.to_str().unwrap();
    let mut served = 0;
    for io in ["epoll", "uring", "auto", "tokio"] {
        for keepalive in [true, false] {
            let mut args = vec![
                url.as_str(),
                "--cacert",
                cert,
                "-n",
                "301",
                "-c",
                "3",
                "-t",
                "1",
            ];
            if !keepalive {
                args.push("--no-keepalive");
            }
            let Some(run) = run_on_loop(io, &args) else {
                continue;
            };
            let what = format!("--io {io}, keep-alive {keepalive}");
            assert_eq!(run.code(), Some(0), "{what}: {}", run.stderr());
            assert_eq!(
                run.count("/requests/success"),
                301,
                "{what}: {}",
                run.result()["errors"]
            );
            assert_eq!(run.count("/requests/sent"), 301, "{what}");
            assert_eq!(run.count("/bytes/body"), 301 * INDEX_BYTES, "{what}");
            let opened = if keepalive { 3 } else { 301 };
            assert_eq!(run.count("/connections/opened"), opened, "{what}");
            assert_eq!(run.count("/connections/attempts"), opened, "{what}");
            // The handshake is timed apart from the connect, once per connection.
            assert_eq!(run.count("/breakdown/tls/count"), opened, "{what}");
            assert!(run.count("/breakdown/tls/max") > 0, "{what}");
            let ran = run.result()["plan"]["io"].as_str().unwrap().to_string();
            if io == "auto" {
                // A reactor drives TLS: io_uring where the kernel has it.
                assert!(ran == "uring" || ran == "epoll", "{what}: {ran}");
            } else {
                assert_eq!(ran, io, "{what}");
            }
            served += 301;
        }
    }
    let stats = target.shutdown().unwrap();
    assert_eq!(stats.requests_total, served);
}

#[test]
fn large_bodies_both_ways_and_an_early_answer_over_tls() {
    let (target, _) = tls_target("tls-bodies");
    let base = format!("https://localhost:{}", target.local_addr().port());
    let dir = stampede_testkit::temp_dir("tls-bodies-files");
    // 200 KB: many TLS records, past rustls' default buffer limit.
    let body = dir.join("body.txt");
    std::fs::write(&body, "x".repeat(200_000)).unwrap();
    // Past the target's 1 MiB limit: answered 413 before it is all in.
    let huge = dir.join("huge.txt");
    std::fs::write(&huge, "y".repeat(2_000_000)).unwrap();
    let (echo, bytes, chunked) = (
        format!("{base}/echo"),
        format!("{base}/bytes/1000000"),
        format!("{base}/chunked/300000"),
    );
    let (body, huge) = (body.to_str().unwrap(), huge.to_str().unwrap());
    for io in EVENT_LOOPS {
        let common = ["--insecure", "-c", "2", "-t", "1"];
        // The echo answers with the request's head and body.
        let cases: [(&[&str], u64, bool); 3] = [
            (&[&bytes, "-n", "20"], 20 * 1_000_000, true),
            (&[&chunked, "-n", "20"], 20 * 300_000, true),
            (
                &[&echo, "-m", "POST", "-D", body, "-n", "20"],
                20 * 200_000,
                false,
            ),
        ];
        for (args, body_bytes, exact) in cases {
            let Some(run) = run_on_loop(io, &[args, &common].concat()) else {
                continue;
            };
            let what = format!("--io {io} {args:?}");
            assert_eq!(
                run.count("/requests/success"),
                20,
                "{what}: {}",
                run.result()["errors"]
            );
            let received = run.count("/bytes/body");
            if exact {
                assert_eq!(received, body_bytes, "{what}");
            } else {
                assert!(
                    (body_bytes..body_bytes + 20 * 1024).contains(&received),
                    "{what}: {received}"
                );
            }
            assert_eq!(run.count("/connections/opened"), 2, "{what}");
        }
        if io == "tokio" {
            // tokio meets the early 413 with a reset now and then (it
            // writes the whole body first); the reactors read it as it comes.
            continue;
        }
        let args = [&echo, "-m", "POST", "-D", huge, "-n", "6"];
        let Some(run) = run_on_loop(io, &[&args[..], &common].concat()) else {
            continue;
        };
        assert_eq!(
            run.result()["status"]["413"],
            6,
            "--io {io}: {} {}",
            run.result()["status"],
            run.result()["errors"]
        );
    }
}

#[test]
fn tls_through_a_proxy_stays_on_tokio_and_the_reactors_say_why() {
    for io in ["epoll", "uring"] {
        let run = run_stampede(
            binary(),
            &[
                "https://localhost:1/",
                "--proxy",
                "127.0.0.1:1",
                "-n",
                "1",
                "--io",
                io,
            ],
        );
        assert_eq!(run.code(), Some(2), "{}", run.stderr());
        assert_eq!(run.stderr().lines().count(), 1, "{}", run.stderr());
        assert!(
            run.stderr().contains("TLS through a proxy (CONNECT)"),
            "{}",
            run.stderr()
        );
    }
    let run = run_stampede(
        binary(),
        &["https://localhost:1/", "--proxy", "127.0.0.1:1", "-n", "1"],
    );
    assert_eq!(run.result()["plan"]["io"], "tokio", "{}", run.stderr());
    assert_eq!(
        run.result()["errors"]["proxy"],
        1,
        "{}",
        run.result()["errors"]
    );
}

#[test]
fn a_certificate_the_client_does_not_trust_is_a_tls_error_with_its_reason() {
    let (target, _) = tls_target("tls-untrusted");
    let url = format!("https://localhost:{}/", target.local_addr().port());
    for io in EVENT_LOOPS {
        // No --cacert and no --insecure: the self-signed certificate is unknown.
        let Some(run) = run_on_loop(io, &[&url, "-n", "3", "-c", "1"]) else {
            continue;
        };
        assert_eq!(run.code(), Some(2), "--io {io}: {}", run.stderr());
        assert_eq!(
            run.result()["errors"]["tls"],
            3,
            "--io {io}: {}",
            run.result()["errors"]
        );
        assert_eq!(run.count("/connections/opened"), 0, "--io {io}");
        let samples = run.result()["error_samples"]["tls"].to_string();
        assert!(
            samples.contains("invalid peer certificate"),
            "--io {io}: {samples}"
        );
        assert_eq!(run.result()["plan"]["io"], io);
    }
    // --insecure on the reactor: any certificate, any name.
    let wrong = format!("https://127.0.0.1:{}/", target.local_addr().port());
    let run = run_stampede(
        binary(),
        &[&wrong, "--insecure", "-n", "2", "-c", "1", "--io", "epoll"],
    );
    assert_eq!(
        run.count("/requests/success"),
        2,
        "--insecure trusts any name"
    );
}

#[test]
fn a_handshake_that_never_ends_times_out_as_tls() {
    // The kernel completes the TCP connect from the backlog; nobody answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("https://localhost:{}/", silent.local_addr().unwrap().port());
    for io in EVENT_LOOPS {
        let args = [
            &url,
            "--insecure",
            "-n",
            "2",
            "-c",
            "1",
            "--connect-timeout",
            "300ms",
        ];
        let Some(run) = run_on_loop(io, &args) else {
            continue;
        };
        assert_eq!(
            run.result()["errors"]["tls"],
            2,
            "--io {io}: {}",
            run.result()["errors"]
        );
        assert_eq!(
            run.result()["error_samples"]["tls"][0],
            "handshake timed out",
            "--io {io}"
        );
        assert_eq!(run.count("/connections/opened"), 0, "--io {io}");
    }
}

/// A TLS server that answers `answers` requests per connection and then
/// closes it (close_notify, then the TCP close), saying so in the last
/// response when `announce`; it notes how each handshake went: full or
/// resumed.
fn counting_tls_server(
    answers: usize,
    announce: bool,
) -> (RawServer, Arc<Mutex<Vec<HandshakeKind>>>) {
    let config = stampede_testkit::self_signed_server_config();
    let kinds = Arc::new(Mutex::new(Vec::new()));
    let seen = kinds.clone();
    let server = RawServer::start(move |stream| {
        let Ok(connection) = ServerConnection::new(config.clone()) else {
            return;
        };
        let mut tls = StreamOwned::new(connection, stream);
        for answered in 1..=answers {
            // The head is read through TLS; the handshake is over after it.
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                match std::io::Read::read(&mut tls, &mut byte) {
                    Ok(1) => head.push(byte[0]),
                    _ => return,
                }
            }
            if answered == 1 {
                if let Some(kind) = tls.conn.handshake_kind() {
                    seen.lock().unwrap().push(kind);
                }
            }
            let response: &[u8] = if answered == answers && announce {
                b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
            } else {
                b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
            };
            if tls.write_all(response).and_then(|()| tls.flush()).is_err() {
                return;
            }
        }
        tls.conn.send_close_notify();
        let _ = tls.flush();
    });
    (server, kinds)
}

#[test]
fn a_keep_alive_connection_the_server_closes_is_retried_once_as_a_reconnect() {
    for io in EVENT_LOOPS {
        // Three answers, then close_notify and a close nothing announced.
        let (server, _) = counting_tls_server(3, false);
        let url = format!("https://localhost:{}/", server.addr().port());
        let args = [&url, "--insecure", "-n", "30", "-c", "1", "-t", "1"];
        let Some(run) = run_on_loop(io, &args) else {
            continue;
        };
        let what = format!("--io {io}");
        assert_eq!(
            run.count("/requests/success"),
            30,
            "{what}: {}",
            run.result()["errors"]
        );
        assert_eq!(run.count("/requests/errors"), 0, "{what}");
        assert_eq!(run.count("/connections/opened"), 10, "{what}");
        assert_eq!(run.count("/connections/reconnects"), 9, "{what}");
        assert_eq!(run.count("/breakdown/tls/count"), 10, "{what}");
    }
}

#[test]
fn sessions_resume_across_connections_unless_told_not_to() {
    for io in EVENT_LOOPS {
        for resume in [true, false] {
            let (server, kinds) = counting_tls_server(1, true);
            let url = format!("https://localhost:{}/", server.addr().port());
            let mut args = vec![
                url.as_str(),
                "--insecure",
                "--no-keepalive",
                "-n",
                "10",
                "-c",
                "1",
                "-t",
                "1",
            ];
            if !resume {
                args.push("--no-tls-resume");
            }
            let Some(run) = run_on_loop(io, &args) else {
                continue;
            };
            let what = format!("--io {io}, resume {resume}");
            assert_eq!(
                run.count("/requests/success"),
                10,
                "{what}: {}",
                run.result()["errors"]
            );
            assert_eq!(run.count("/breakdown/tls/count"), 10, "{what}");
            assert_eq!(run.result()["plan"]["io"], io);
            let kinds = kinds.lock().unwrap().clone();
            let resumed = kinds
                .iter()
                .filter(|kind| **kind == HandshakeKind::Resumed)
                .count();
            assert_eq!(kinds.len(), 10, "{what}: {kinds:?}");
            // One request at a time: every connection after the first has
            // the ticket of the one before.
            let expected = if resume { 9 } else { 0 };
            assert_eq!(resumed, expected, "{what}: {kinds:?}");
        }
    }
}

/// A server that answers each request with bytes that are not HTTP/1.x
/// (over TLS when `tls`), then closes.
fn malformed_answer_server(tls: bool) -> RawServer {
    let config = stampede_testkit::self_signed_server_config();
    RawServer::start(move |stream| {
        let answer = b"SPDY/9 banana\r\n\r\n";
        if !tls {
            stampede_testkit::answer_each_request(stream, answer);
            return;
        }
        let Ok(connection) = ServerConnection::new(config.clone()) else {
            return;
        };
        let mut tls = StreamOwned::new(connection, stream);
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            match std::io::Read::read(&mut tls, &mut byte) {
                Ok(1) => head.push(byte[0]),
                _ => return,
            }
        }
        let _ = tls.write_all(answer).and_then(|()| tls.flush());
        tls.conn.send_close_notify();
        let _ = tls.flush();
    })
}

/// An answer that is not HTTP/1.x is a `malformed_response` whose sample
/// shows how it began (http1/malformed.rs), by one rule on every loop,
/// over plain TCP and over TLS alike.
#[test]
fn a_malformed_answer_is_sampled_with_its_first_bytes_on_every_loop_and_over_tls() {
    for tls in [false, true] {
        let server = malformed_answer_server(tls);
        let scheme = if tls { "https" } else { "http" };
        let url = format!("{scheme}://{}/", server.addr());
        for io in EVENT_LOOPS {
            let mut args = vec![url.as_str(), "-n", "3", "-c", "1", "-t", "1"];
            if tls {
                args.push("--insecure");
            }
            let Some(run) = run_on_loop(io, &args) else {
                continue;
            };
            let leg = format!("{scheme} --io {io}");
            assert_eq!(run.result()["plan"]["io"], io, "{leg}");
            assert_eq!(
                run.count("/errors/malformed_response"),
                3,
                "{leg}: {}",
                run.result()
            );
            let sample = &run.result()["error_samples"]["malformed_response"][0];
            let sample = sample.as_str().unwrap_or_default();
            assert!(
                sample.contains("not an HTTP/1.x response; it began \"SPDY/9 banana"),
                "{leg}: {}",
                run.result()["error_samples"]
            );
        }
    }
}
