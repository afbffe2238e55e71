//! Every error class provoked for real, against servers that misbehave on
//! purpose, plus the reconnect rules: each run still accounts for every request.

use stampede_testkit::{
    answer_each_request, binary, read_request_head, run_stampede, spawn_target, RawServer, Run,
    TargetConfig,
};
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

fn run_n(url: &str, n: &str, extra: &[&str]) -> Run {
    run_n_exits(0, url, n, extra)
}

/// A run that never opens a connection exits 2 (and still writes its result).
fn run_n_exits(code: i32, url: &str, n: &str, extra: &[&str]) -> Run {
    let mut args = vec![url, "-n", n, "-c", "1", "-t", "1"];
    args.extend_from_slice(extra);
    let run = run_stampede(binary(), &args);
    assert_eq!(run.code(), Some(code), "{}", run.stderr());
    run
}

#[test]
fn connect_refused() {
    // Bind then drop: the port is free and nothing listens on it.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let run = run_n_exits(2, &format!("http://127.0.0.1:{port}/"), "20", &[]);
    assert_eq!(run.count("/errors/connect_refused"), 20);
    assert_eq!(run.count("/requests/errors"), 20);
}

#[test]
fn connect_timeout() {
    // A listener with a backlog of 0 that never accepts: once its queue is
    // full the kernel drops further SYNs, so connecting times out.
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket
        .bind(
            &"127.0.0.1:0"
                .parse::<std::net::SocketAddr>()
                .unwrap()
                .into(),
        )
        .unwrap();
    socket.listen(0).unwrap();
    let addr = socket.local_addr().unwrap().as_socket().unwrap();
    let fillers: Vec<TcpStream> = (0..4)
        .filter_map(|_| TcpStream::connect_timeout(&addr, Duration::from_millis(200)).ok())
        .collect();
    assert!(!fillers.is_empty());
    let run = run_n_exits(
        2,
        &format!("http://{addr}/"),
        "2",
        &["--connect-timeout", "300ms"],
    );
    assert_eq!(run.count("/errors/connect_timeout"), 2, "{}", run.result());
}

#[test]
fn response_timeout() {
    let target = spawn_target(TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    });
    let url = format!("http://{}/delay/2000", target.local_addr());
    let run = run_n(&url, "2", &["--timeout", "200ms"]);
    assert_eq!(run.count("/errors/timeout"), 2);
    assert!(run.result()["elapsed_s"].as_f64().unwrap() < 1.5);
}

#[test]
fn reset_by_peer() {
    let server = RawServer::start(|mut stream| {
        read_request_head(&mut stream);
        // SO_LINGER 0 turns close into an RST.
        socket2::SockRef::from(&stream)
            .set_linger(Some(Duration::ZERO))
            .unwrap();
        drop(stream);
    });
    let run = run_n(&server.url("/"), "5", &[]);
    assert_eq!(run.count("/errors/reset"), 5, "{}", run.result());
}

#[test]
fn closed_before_the_response_was_complete() {
    let server = RawServer::start(|mut stream| {
        read_request_head(&mut stream);
        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this");
    });
    let run = run_n(&server.url("/"), "5", &[]);
    assert_eq!(run.count("/errors/closed_early"), 5, "{}", run.result());
}

#[test]
fn malformed_response() {
    let server = RawServer::start(|stream| answer_each_request(stream, b"SPDY/9 banana\r\n\r\n"));
    let run = run_n(&server.url("/"), "5", &[]);
    assert_eq!(
        run.count("/errors/malformed_response"),
        5,
        "{}",
        run.result()
    );
}

#[test]
fn close_delimited_bodies_are_complete_responses() {
    let server = RawServer::start(|mut stream| {
        read_request_head(&mut stream);
        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n");
        let _ = stream.write_all(&[b'x'; 3000]);
    });
    let run = run_n(&server.url("/"), "10", &[]);
    assert_eq!(run.count("/requests/success"), 10, "{}", run.result());
    assert_eq!(run.count("/bytes/body"), 30_000);
    assert_eq!(
        run.count("/connections/reconnects"),
        9,
        "each close forces a new connection"
    );
}

#[test]
fn server_closing_idle_keepalive_connections_is_a_reconnect_not_an_error() {
    // Serves two requests per connection, then closes without saying so.
    let server = RawServer::start(|mut stream| {
        for _ in 0..2 {
            if !read_request_head(&mut stream) {
                return;
            }
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        }
    });
    let run = run_n(&server.url("/"), "10", &[]);
    assert_eq!(run.count("/requests/success"), 10, "{}", run.result());
    assert_eq!(run.count("/requests/errors"), 0);
    assert_eq!(run.count("/connections/opened"), 5);
    assert_eq!(run.count("/connections/reconnects"), 4);
}

#[test]
fn interim_responses_are_skipped() {
    let server = RawServer::start(|stream| {
        answer_each_request(
            stream,
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
        )
    });
    let run = run_n(&server.url("/"), "10", &[]);
    assert_eq!(run.count("/status/200"), 10, "{}", run.result());
    assert_eq!(run.count("/connections/opened"), 1);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let cases: [&[&str]; 6] = [
        &["ftp://example/"],
        &["http://bad host/"],
        &["http://127.0.0.1:1/", "-c", "0"],
        &["http://127.0.0.1:1/", "-H", "no colon"],
        &["http://127.0.0.1:1/", "-d", "ten"],
        &["http://nonexistent.invalid/", "-n", "1"],
    ];
    for args in cases {
        let output = std::process::Command::new(binary())
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("error"), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn fewer_requests_than_connections_caps_connections_with_a_notice() {
    let target = spawn_target(TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    });
    let url = format!("http://{}/", target.local_addr());
    let run = run_n(&url, "3", &["-c", "50"]);
    assert_eq!(run.count("/plan/connections"), 3);
    assert_eq!(run.count("/requests/success"), 3);
    assert!(run.stderr().contains("capped"), "{}", run.stderr());
}

// A URL with no host (`http:///index.html`, `/index.html`) is refused in
// one line, exit status 2, before any lookup, by every command that takes
// a target: the WHATWG parser skips the empty authority and would read
// `index.html` as the host and look it up. wrk refuses it in parse_args
// (src/wrk.c: script_parse_url in src/script.c wants a schema and a host:
// "invalid URL: http:///index.html", exit 1); ab in main (support/ab.c:
// parse_url fails: "ab: invalid URL" and its usage). The check is in
// stampede-plan's Target::parse, which every front-end goes through.
mod url_without_host {
    use stampede_testkit::{binary, text};
    use std::process::Command;
    use std::time::{Duration, Instant};

    /// The command lines that take `url`: run (and the bare shorthand), wrk,
    /// ab, webbench, press.
    fn command_lines(url: &str) -> Vec<Vec<&str>> {
        vec![
            vec!["run", url, "-n", "3"],
            vec![url, "-n", "3"],
            vec!["wrk", "-t1", "-c1", "-d1s", url],
            vec!["ab", "-n", "3", url],
            vec!["webbench", "-t", "1", "-c", "1", url],
            vec!["press", "-t", "1", "-c", "1", "-d", "1s", url],
        ]
    }

    #[test]
    fn a_url_without_a_host_is_one_line_and_exit_2() {
        for url in ["http:///index.html", "/index.html"] {
            for words in command_lines(url) {
                let started = Instant::now();
                let out = Command::new(binary()).args(&words).output().unwrap();
                let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
                assert_eq!(out.status.code(), Some(2), "{words:?}: {stderr}");
                assert_eq!(
                    stderr,
                    format!("stampede: error: invalid URL '{url}': no host\n"),
                    "{words:?}: one line, and no lookup of a host"
                );
                assert!(stdout.is_empty(), "{words:?}: no banner: {stdout}");
                // Refused on the text: no resolver, no connection, no run.
                assert!(
                    started.elapsed() < Duration::from_secs(5),
                    "{words:?}: {:?}",
                    started.elapsed()
                );
            }
        }
    }
}

/// The library runs a command in the test's own process and returns the
/// exit status the binary would exit with: 2 for a URL with no host, 0 for
/// a run that answered every request, 1 when its SLO fails.
#[test]
fn run_cli_returns_the_exit_status_in_process() {
    let words = |extra: &[&str]| {
        std::iter::once("stampede")
            .chain(extra.iter().copied())
            .map(std::ffi::OsString::from)
            .collect::<Vec<_>>()
    };
    assert_eq!(stampede::run_cli(words(&["run", "http:///index.html"])), 2);
    let target = spawn_target(TargetConfig::default());
    let url = format!("http://{}/", target.local_addr());
    let run = ["run", url.as_str(), "-n", "20", "-c", "2", "-t", "1", "-q"];
    assert_eq!(stampede::run_cli(words(&run)), 0);
    let mut gated = run.to_vec();
    gated.extend(["--slo", "p99<0us"]);
    assert_eq!(stampede::run_cli(words(&gated)), 1);
    assert_eq!(target.stats().requests_total, 40);
}
