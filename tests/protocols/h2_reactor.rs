//! HTTP/2 on the reactors (`--http2 --io epoll` and `--io uring`, the
//! stampede-h2 codec), h2c with prior knowledge in the closed model, counted against
//! what each server says it served: the built-in target's stats, nginx's
//! access log (with a small `http2_max_concurrent_streams` and GOAWAYs
//! after `keepalive_requests`), and the same run on `--io tokio` (the `h2`
//! crate). A server that sends a bad frame makes `protocol` errors, not a
//! panic or a hang; what the reactors do not drive over HTTP/2 yet is
//! refused in one line.

use stampede_testkit::nginx::{listening, Nginx, Setup};
use stampede_testkit::{
    binary, free_port, one_thread, require_tool, run_stampede, spawn_target, temp_dir, RawServer,
    Run,
};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::time::Duration;

/// Lines of a `--log-requests` file (its `#` header aside).
fn log_lines(path: &std::path::Path) -> usize {
    let text = std::fs::read_to_string(path).expect("the request log");
    text.lines().filter(|l| !l.starts_with('#')).count()
}

/// Runs `args` with `--io io` and a request log; the run and its log's lines.
fn run_logged(io: &str, name: &str, args: &[&str]) -> (Run, usize) {
    let log = temp_dir(name).join("requests.log");
    let mut all: Vec<&str> = args.to_vec();
    let log_arg = log.to_str().expect("a UTF-8 path").to_string();
    all.extend(["--io", io, "--log-requests", &log_arg]);
    let run = run_stampede(binary(), &all);
    assert_eq!(run.code(), Some(0), "{io}: {}", run.stderr());
    (run, log_lines(&log))
}

#[test]
fn the_built_in_target_counts_what_the_reactors_and_tokio_send_over_h2c() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    for io in ["epoll", "uring", "tokio"] {
        let before = target.stats();
        let (run, lines) = run_logged(
            io,
            "h2-reactor-target",
            &[
                &url,
                "--http2",
                "-c",
                "4",
                "--streams",
                "8",
                "-t",
                "2",
                "-n",
                "3000",
            ],
        );
        let after = target.stats();
        assert_eq!(run.result()["plan"]["io"], io, "{io}");
        assert_eq!(run.count("/requests/sent"), 3000, "{io}");
        assert_eq!(run.count("/requests/success"), 3000, "{io}");
        assert_eq!(run.count("/requests/errors"), 0, "{io}");
        run.assert_accounted(io);
        assert_eq!(lines, 3000, "{io}: one log line per finished request");
        assert_eq!(after.requests_total - before.requests_total, 3000, "{io}");
        assert_eq!(
            after.h2_streams_total - before.h2_streams_total,
            3000,
            "{io}: every request on a stream of its own"
        );
        // Four connections, all opened by the first request of each.
        assert_eq!(run.count("/connections/opened"), 4, "{io}");
    }
}

#[test]
fn a_duration_run_on_a_reactor_books_every_stream_it_sent() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/", target.local_addr());
    for io in ["epoll", "uring"] {
        let before = target.stats();
        let (run, lines) = run_logged(
            io,
            "h2-reactor-duration",
            &[&url, "--http2", "-c", "2", "--streams", "10", "-d", "1s"],
        );
        let after = target.stats();
        run.assert_accounted(io);
        let completed = run.count("/requests/completed");
        assert!(completed > 0, "{io}: {}", run.result());
        assert_eq!(run.count("/requests/errors"), 0, "{io}: {}", run.result());
        assert_eq!(
            lines as u64, completed,
            "{io}: one log line per finished request"
        );
        // The target answered every request the run completed, and the ones
        // still in flight at the deadline (unfinished) at most.
        let served = after.requests_total - before.requests_total;
        let unfinished = run.count("/requests/unfinished");
        assert!(
            served >= completed && served <= completed + unfinished,
            "{io}: served {served}, completed {completed}, unfinished {unfinished}"
        );
    }
}

/// nginx on a free port speaking h2c with `http_extra` (its stream limit,
/// its `keepalive_requests`), logging `$connection $connection_requests
/// $status`.
fn nginx_h2c(program: &std::path::Path, name: &str, http_extra: &str) -> (Nginx, u16) {
    let port = free_port();
    let setup = Setup {
        listens: vec![format!("127.0.0.1:{port} http2")],
        log_format: "$connection $connection_requests $status",
        http_extra,
        netns: None,
    };
    let ready = || listening(&format!("127.0.0.1:{port}"));
    (Nginx::start(program, &temp_dir(name), &setup, ready), port)
}

/// Requests per connection in nginx's log, and how many it logged.
fn per_connection(nginx: &Nginx) -> (BTreeMap<String, u64>, u64) {
    let mut connections = BTreeMap::new();
    let mut requests = 0;
    for fields in nginx.take_lines() {
        assert_eq!(fields.get(2).map(String::as_str), Some("200"), "{fields:?}");
        *connections.entry(fields[0].clone()).or_insert(0) += 1;
        requests += 1;
    }
    (connections, requests)
}

/// Runs 700 requests on 3 connections × 8 streams with `--io io` at nginx
/// and checks them against its log: every request logged once, none
/// failed, no connection past `keepalive_requests` 7, each connection
/// nginx saw one the run opened. Returns (success, sent, 200s).
fn seven_hundred_through_goaways(io: &str, nginx: &Nginx, port: u16) -> (u64, u64, u64) {
    let url = format!("http://127.0.0.1:{port}/");
    let args = [
        url.as_str(),
        "--http2",
        "-c",
        "3",
        "--streams",
        "8",
        "-t",
        "1",
        "-n",
        "700",
    ];
    let (run, lines) = run_logged(io, "h2-reactor-nginx-run", &args);
    let (connections, served) = per_connection(nginx);
    run.assert_accounted(io);
    assert_eq!(run.count("/requests/sent"), 700, "{io}");
    assert_eq!(run.count("/requests/errors"), 0, "{io}: {}", run.result());
    assert_eq!(served, 700, "{io}: nginx logged every request once");
    assert_eq!(lines, 700, "{io}");
    assert!(
        connections.values().all(|&n| n <= 7),
        "{io}: keepalive_requests 7 ends each connection: {connections:?}"
    );
    assert_eq!(
        run.count("/connections/opened"),
        connections.len() as u64,
        "{io}"
    );
    (
        run.count("/requests/success"),
        run.count("/requests/sent"),
        run.count("/status/200"),
    )
}

#[test]
fn nginx_allowing_two_streams_with_goaways_counts_what_the_reactors_send() {
    let program = require_tool!("nginx");
    // Eight streams asked, two allowed, a GOAWAY every seven requests: the
    // streams above each GOAWAY's last id go again on the next connection.
    let (nginx, port) = nginx_h2c(
        &program,
        "h2-reactor-nginx-two",
        "http2_max_concurrent_streams 2;\n  keepalive_requests 7;",
    );
    for io in ["epoll", "uring"] {
        let (success, sent, ok) = seven_hundred_through_goaways(io, &nginx, port);
        assert_eq!((success, sent, ok), (700, 700, 700), "{io}");
    }
}

#[test]
fn nginx_with_goaways_counts_alike_on_the_reactors_and_tokio() {
    let program = require_tool!("nginx");
    let (nginx, port) = nginx_h2c(&program, "h2-reactor-nginx-goaway", "keepalive_requests 7;");
    let epoll = seven_hundred_through_goaways("epoll", &nginx, port);
    let uring = seven_hundred_through_goaways("uring", &nginx, port);
    let tokio = seven_hundred_through_goaways("tokio", &nginx, port);
    assert_eq!(epoll, tokio, "epoll and tokio count alike");
    assert_eq!(uring, tokio, "io_uring and tokio count alike");
}

/// A SETTINGS frame five octets long: not a multiple of six, a frame size
/// error (RFC 9113 §6.5).
const BAD_SETTINGS: [u8; 14] = [0, 0, 5, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];

#[test]
fn a_server_sending_a_bad_frame_makes_protocol_errors_not_a_hang() {
    let server = RawServer::start(|mut stream| {
        let mut preface = [0u8; 24];
        if stream.read_exact(&mut preface).is_err() {
            return;
        }
        let _ = stream.write_all(&BAD_SETTINGS);
        // Hold the connection until the client closes it.
        let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
        let mut sink = [0u8; 1024];
        while matches!(stream.read(&mut sink), Ok(1..)) {}
    });
    let url = server.url("/");
    for (tries, io) in ["epoll", "uring"].into_iter().enumerate() {
        let run = run_stampede(
            binary(),
            &[
                &url,
                "--http2",
                "--io",
                io,
                "-c",
                "1",
                "-n",
                "5",
                "--timeout",
                "5s",
            ],
        );
        assert_eq!(run.code(), Some(0), "{io}: {}", run.stderr());
        run.assert_accounted(io);
        assert_eq!(run.count("/requests/sent"), 5, "{io}");
        assert_eq!(run.count("/errors/protocol"), 5, "{io}: {}", run.result());
        let sample = run.result()["error_samples"]["protocol"][0].to_string();
        assert!(
            sample.contains("type 0x4"),
            "{io}: names the frame type: {sample}"
        );
        let accepted = 5 * (tries as u64 + 1);
        assert_eq!(
            server.accepted(),
            accepted,
            "{io}: a connection per failed request"
        );
    }
}

#[test]
fn what_the_reactors_do_not_drive_over_http2_is_refused_in_one_line() {
    let url = format!("http://127.0.0.1:{}/", free_port());
    for io in ["epoll", "uring"] {
        for extra in [
            &["--redirects", "2", "-n", "5"][..],
            &["--conn-max-requests", "5", "-n", "5"][..],
        ] {
            let mut args = vec![url.as_str(), "--http2", "--io", io];
            args.extend_from_slice(extra);
            let run = run_stampede(binary(), &args);
            assert_eq!(run.code(), Some(2), "{io} {extra:?}: {}", run.stderr());
            let stderr = run.stderr();
            assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
            assert!(
                stderr.contains(&format!("--io {io}")) && stderr.contains("HTTP/2"),
                "{stderr}"
            );
        }
    }
}

/// The built-in target over TLS (self-signed, ALPN h2 and http/1.1), and
/// where its certificate is.
fn tls_target(name: &str) -> (stampede_testkit::ServerHandle, std::path::PathBuf) {
    use stampede_target::{CertSource, TlsConfig};
    let cert = temp_dir(name).join("ca.pem");
    let target = spawn_target(stampede_testkit::TargetConfig {
        threads: 1,
        tls: Some(TlsConfig {
            write_cert: Some(cert.clone()),
            ..TlsConfig::new(CertSource::SelfSigned)
        }),
        ..stampede_testkit::TargetConfig::default()
    });
    (target, cert)
}

#[test]
fn h2_over_tls_counts_alike_on_the_reactors_and_tokio_with_one_handshake_per_connection() {
    let (target, cert) = tls_target("h2-reactor-tls");
    let url = format!("https://localhost:{}/", target.local_addr().port());
    let cert = cert.to_str().expect("a UTF-8 path");
    for io in ["epoll", "uring", "tokio"] {
        let before = target.stats();
        let (run, lines) = run_logged(
            io,
            "h2-reactor-tls-run",
            &[
                &url,
                "--cacert",
                cert,
                "--http2",
                "-c",
                "3",
                "--streams",
                "6",
                "-t",
                "1",
                "-n",
                "1500",
            ],
        );
        let after = target.stats();
        assert_eq!(run.result()["plan"]["io"], io, "{io}");
        assert_eq!(
            run.count("/requests/success"),
            1500,
            "{io}: {}",
            run.result()
        );
        run.assert_accounted(io);
        assert_eq!(lines, 1500, "{io}");
        assert_eq!(
            after.h2_streams_total - before.h2_streams_total,
            1500,
            "{io}"
        );
        assert_eq!(run.count("/connections/opened"), 3, "{io}");
        assert_eq!(
            run.count("/breakdown/tls/count"),
            3,
            "{io}: a handshake per connection"
        );
    }
}

#[test]
fn a_tls_server_that_does_not_choose_h2_is_a_tls_error_on_the_reactors() {
    let (config, pem) = stampede_testkit::self_signed_server_config_and_pem();
    let ca = temp_dir("h2-reactor-no-alpn").join("ca.pem");
    std::fs::write(&ca, pem).expect("write the CA");
    let server = RawServer::start(move |mut tcp| {
        let Ok(mut tls) = rustls::ServerConnection::new(config.clone()) else {
            return;
        };
        while tls.is_handshaking() {
            if tls.complete_io(&mut tcp).is_err() {
                return;
            }
        }
        let mut sink = [0u8; 1024];
        let _ = tcp.set_read_timeout(Some(Duration::from_secs(10)));
        while matches!(tcp.read(&mut sink), Ok(1..)) {}
    });
    let url = format!("https://localhost:{}/", server.addr().port());
    for io in ["epoll", "uring"] {
        let run = run_stampede(
            binary(),
            &[
                &url,
                "--cacert",
                ca.to_str().expect("a UTF-8 path"),
                "--http2",
                "--io",
                io,
                "-c",
                "1",
                "-n",
                "3",
            ],
        );
        // No connection ever opened: the run gives up, as on every path,
        // saying why in one line; the result counts each try as `tls`.
        assert_eq!(run.code(), Some(2), "{io}: {}", run.stderr());
        let stderr = run.stderr();
        assert_eq!(stderr.trim().lines().count(), 1, "{io}: {stderr}");
        assert!(stderr.contains("3 tls"), "{io}: {stderr}");
        if let Some(result) = &run.json {
            let sample = result["error_samples"]["tls"][0].to_string();
            assert!(sample.contains("did not choose h2"), "{io}: {sample}");
        }
    }
}
