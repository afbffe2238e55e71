//! HTTP/1.1 pipelining (`--pipeline N`) on every event loop, through the
//! binary: epoll, io_uring (skipped with one line where the kernel has none)
//! and tokio. Exact `-n` counts (the last batch may be short), a latency
//! recorded for every request, a server that closes or stalls mid-batch
//! (the rest of the batch fails with one class), plain and over TLS.

use rustls::{ServerConnection, StreamOwned};
use stampede_target::{CertSource, TlsConfig};
use stampede_testkit::{
    binary, read_request_head, run_ok_on_loop, run_stampede, spawn_target, RawServer, TargetConfig,
    EVENT_LOOPS,
};
use std::io::Write;
use std::net::{Shutdown, TcpStream};
use std::time::Duration;

const OK: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

/// The error classes of a result with a non-zero count.
fn error_classes(result: &serde_json::Value) -> Vec<(String, u64)> {
    let errors = result["errors"].as_object().expect("errors object");
    errors
        .iter()
        .filter_map(|(class, count)| Some((class.clone(), count.as_u64()?)))
        .filter(|(_, count)| *count > 0)
        .collect()
}

#[test]
fn pipelined_runs_count_exactly_and_time_every_request_on_every_loop() {
    let target = spawn_target(TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    });
    let url = format!("http://{}/", target.local_addr());
    // The bytes of 1003 responses, read one at a time.
    let plain = run_stampede(binary(), &[&url, "-n", "1003", "-c", "3", "-t", "1"]);
    let bytes = plain.count("/bytes/received");
    let mut served = 1003;
    for io in EVENT_LOOPS {
        // 1003 = 100 full batches of 10 and a short one of 3, over 3 connections.
        let args = [&url, "-n", "1003", "-c", "3", "-t", "1", "--pipeline", "10"];
        let Some(run) = run_ok_on_loop(io, &args) else {
            continue;
        };
        served += 1003;
        assert_eq!(run.count("/requests/sent"), 1003, "--io {io}");
        assert_eq!(run.count("/requests/success"), 1003, "--io {io}");
        assert_eq!(run.count("/requests/errors"), 0, "--io {io}");
        assert_eq!(run.count("/breakdown/total/count"), 1003, "--io {io}");
        assert_eq!(run.count("/breakdown/waiting/count"), 1003, "--io {io}");
        assert_eq!(run.count("/connections/opened"), 3, "--io {io}");
        assert_eq!(run.count("/bytes/received"), bytes, "--io {io}");
        assert_eq!(target.stats().requests_total, served, "--io {io}");
        // The result and its header say the run was pipelined.
        assert_eq!(run.count("/plan/pipeline"), 10, "--io {io}");
        let header = run.stdout().lines().nth(1).unwrap_or_default().to_string();
        assert!(header.contains("pipeline 10"), "--io {io}: {header}");
    }
    assert_eq!(target.shutdown().unwrap().requests_total, served);
}

/// Reads the whole batch (so that the close is a FIN, not a reset over
/// unread bytes), answers the first `answered` requests, then `then`.
fn answer_part_of_each_batch(
    batch: usize,
    answered: usize,
    then: impl Fn(&mut TcpStream) + Send + Sync + 'static,
) -> RawServer {
    RawServer::start(move |mut stream| loop {
        for _ in 0..batch {
            if !read_request_head(&mut stream) {
                return;
            }
        }
        for _ in 0..answered {
            if stream.write_all(OK).is_err() {
                return;
            }
        }
        then(&mut stream);
    })
}

#[test]
fn a_close_mid_batch_fails_the_rest_of_the_batch_with_one_class() {
    let server = answer_part_of_each_batch(10, 3, |stream| {
        let _ = stream.shutdown(Shutdown::Both);
    });
    let url = server.url("/");
    let mut accepted = 0;
    for io in EVENT_LOOPS {
        // Two batches of 10, one after the other on one connection slot.
        let args = [&url, "-n", "20", "-c", "1", "-t", "1", "--pipeline", "10"];
        let Some(run) = run_ok_on_loop(io, &args) else {
            continue;
        };
        accepted += 2;
        let result = run.result();
        assert_eq!(run.count("/requests/sent"), 20, "--io {io}: {result}");
        assert_eq!(run.count("/requests/success"), 6, "--io {io}: {result}");
        assert_eq!(run.count("/requests/errors"), 14, "--io {io}: {result}");
        assert_eq!(
            error_classes(result),
            vec![("closed_early".to_string(), 14)],
            "--io {io}"
        );
        assert_eq!(run.count("/breakdown/total/count"), 6, "--io {io}");
        // A batch with answers is not retried as an idle close.
        assert_eq!(server.accepted(), accepted, "--io {io}");
    }
}

#[test]
fn a_timeout_mid_batch_fails_the_rest_of_the_batch() {
    let server = answer_part_of_each_batch(5, 2, |_| std::thread::sleep(Duration::from_secs(5)));
    let url = server.url("/");
    for io in EVENT_LOOPS {
        let args = [
            &url,
            "-n",
            "5",
            "-c",
            "1",
            "-t",
            "1",
            "--pipeline",
            "5",
            "--timeout",
            "300ms",
        ];
        let Some(run) = run_ok_on_loop(io, &args) else {
            continue;
        };
        let result = run.result();
        assert_eq!(run.count("/requests/success"), 2, "--io {io}: {result}");
        assert_eq!(
            error_classes(result),
            vec![("timeout".to_string(), 3)],
            "--io {io}"
        );
    }
}

#[test]
fn pipelining_works_over_tls_on_every_loop() {
    let cert = stampede_testkit::temp_dir("pipeline-tls").join("ca.pem");
    let target = spawn_target(TargetConfig {
        threads: 1,
        tls: Some(TlsConfig {
            cert: CertSource::SelfSigned,
            write_cert: Some(cert.clone()),
            ..TlsConfig::new(CertSource::SelfSigned)
        }),
        ..TargetConfig::default()
    });
    let url = format!(
        "https://localhost:{}/index.html",
        target.local_addr().port()
    );
    let cert = cert.to_str().unwrap();
    let mut served = 0;
    for io in EVENT_LOOPS {
        let args = [
            &url,
            "--cacert",
            cert,
            "-n",
            "205",
            "-c",
            "2",
            "-t",
            "1",
            "--pipeline",
            "10",
        ];
        let Some(run) = run_ok_on_loop(io, &args) else {
            continue;
        };
        served += 205;
        assert_eq!(run.count("/requests/success"), 205, "--io {io}");
        assert_eq!(run.count("/breakdown/total/count"), 205, "--io {io}");
        assert_eq!(run.count("/breakdown/tls/count"), 2, "--io {io}");
        assert_eq!(target.stats().requests_total, served, "--io {io}");
    }
    assert_eq!(target.shutdown().unwrap().requests_total, served);
}

#[test]
fn a_batch_the_server_closed_on_while_idle_goes_again_on_a_new_connection() {
    // Each connection carries one whole batch, then the server closes it
    // without a word: the next batch, sent on the closed connection, gets
    // nothing back and is retried once on a new one (a reconnect).
    let server = answer_part_of_each_batch(10, 10, |stream| {
        let _ = stream.shutdown(Shutdown::Both);
    });
    let url = server.url("/");
    let mut accepted = 0;
    for io in EVENT_LOOPS {
        let args = [&url, "-n", "30", "-c", "1", "-t", "1", "--pipeline", "10"];
        let Some(run) = run_ok_on_loop(io, &args) else {
            continue;
        };
        accepted += 3;
        let result = run.result();
        assert_eq!(run.count("/requests/success"), 30, "--io {io}: {result}");
        assert_eq!(run.count("/requests/errors"), 0, "--io {io}: {result}");
        assert_eq!(
            run.count("/connections/reconnects"),
            2,
            "--io {io}: {result}"
        );
        assert_eq!(server.accepted(), accepted, "--io {io}");
    }
}

/// A TLS server that reads a batch of `batch` requests, answers the first
/// `answered` in one write, then ends the session (close_notify) and closes.
fn tls_server_closing_mid_batch(batch: usize, answered: usize) -> RawServer {
    let config = stampede_testkit::self_signed_server_config();
    RawServer::start(move |stream| {
        let Ok(connection) = ServerConnection::new(config.clone()) else {
            return;
        };
        let mut tls = StreamOwned::new(connection, stream);
        let mut heads = 0;
        let mut seen = Vec::new();
        let mut byte = [0u8; 1];
        while heads < batch {
            match std::io::Read::read(&mut tls, &mut byte) {
                Ok(1) => seen.push(byte[0]),
                _ => return,
            }
            if seen.ends_with(b"\r\n\r\n") {
                heads += 1;
                seen.clear();
            }
        }
        if tls.write_all(&OK.repeat(answered)).is_err() {
            return;
        }
        tls.conn.send_close_notify();
        let _ = tls.flush();
    })
}

#[test]
fn a_tls_close_mid_batch_fails_the_rest_of_the_batch_with_one_class() {
    let server = tls_server_closing_mid_batch(10, 3);
    let url = format!("https://localhost:{}/", server.addr().port());
    for io in EVENT_LOOPS {
        let args = [
            &url,
            "--insecure",
            "-n",
            "20",
            "-c",
            "1",
            "-t",
            "1",
            "--pipeline",
            "10",
        ];
        let Some(run) = run_ok_on_loop(io, &args) else {
            continue;
        };
        let result = run.result();
        assert_eq!(run.count("/requests/success"), 6, "--io {io}: {result}");
        assert_eq!(
            error_classes(result),
            vec![("closed_early".to_string(), 14)],
            "--io {io}"
        );
        assert_eq!(run.count("/connections/opened"), 2, "--io {io}");
    }
}

#[test]
fn without_keep_alive_each_request_of_a_batch_gets_a_connection_of_its_own() {
    // Each request says `Connection: close`: the server answers the first
    // of a batch and closes, so the rest, never answered nor processed, go
    // again on a new connection (RFC 9112 §9.3.2), on every event loop: one
    // request per connection, none an error, and no loop counts the bytes
    // of responses no request can own.
    let target = spawn_target(TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    });
    let url = format!("http://{}/", target.local_addr());
    let one = run_stampede(binary(), &[&url, "-n", "2", "-c", "1", "--no-keepalive"]);
    let bytes = one.count("/bytes/received");
    for io in EVENT_LOOPS {
        let args = [
            &url,
            "-n",
            "20",
            "-c",
            "1",
            "-t",
            "1",
            "--pipeline",
            "10",
            "--no-keepalive",
        ];
        let Some(run) = run_ok_on_loop(io, &args) else {
            continue;
        };
        let result = run.result();
        assert_eq!(run.count("/requests/success"), 20, "--io {io}: {result}");
        assert_eq!(error_classes(result), vec![], "--io {io}");
        assert_eq!(run.count("/bytes/received"), 10 * bytes, "--io {io}");
        assert_eq!(run.count("/connections/opened"), 20, "--io {io}");
    }
}
