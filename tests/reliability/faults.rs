//! The client under hostile servers: for each misbehaviour the run ends within
//! its limits, the right error class is counted, nothing panics, and every
//! request is accounted for exactly once (`-n` exact).

use stampede_testkit::{binary, read_request_head, run_stampede, RawServer, Run};
use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

const N: u64 = 6;

/// Runs `-n 6 -c 2` with short timeouts against `server` and checks the
/// accounting; returns the run for the class assertions.
fn run_against(server: &RawServer) -> Run {
    run_against_with(server, &[])
}

fn run_against_with(server: &RawServer, extra: &[&str]) -> Run {
    run_against_expecting(server, extra, 0)
}

/// As [`run_against_with`], with the exit status the run must end with (2:
/// no connection could ever be opened).
fn run_against_expecting(server: &RawServer, extra: &[&str], code: i32) -> Run {
    let started = Instant::now();
    let url = server.url("/");
    let mut args = vec![
        url.as_str(),
        "-n",
        "6",
        "-c",
        "2",
        "-t",
        "1",
        "--timeout",
        "400ms",
        "--connect-timeout",
        "400ms",
    ];
    args.extend_from_slice(extra);
    let run = run_stampede(binary(), &args);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "bounded in time"
    );
    assert_eq!(run.code(), Some(code), "{}", run.stderr());
    assert!(!run.stderr().contains("panicked"), "{}", run.stderr());
    assert_eq!(
        run.count("/requests/sent"),
        N,
        "exactly -n requests: {}",
        run.result()["requests"]
    );
    let accounted = run.count("/requests/success")
        + run.count("/requests/failed_status")
        + run.count("/requests/errors")
        + run.count("/requests/unfinished");
    assert_eq!(accounted, N, "{}", run.result()["requests"]);
    // Memory stays bounded whatever the server sends (the monitor samples
    // stampede itself at the end of every run).
    let client_rss = run.result()["monitor"]["processes"]
        .as_array()
        .and_then(|all| all.iter().find(|p| p["role"] == "client"))
        .and_then(|client| client["rss_max_bytes"].as_u64())
        .expect("the client's own RSS was sampled");
    assert!(client_rss < 64 << 20, "client RSS {client_rss} bytes");
    run
}

fn respond_each(stream: &mut TcpStream, bytes: &[u8]) -> bool {
    read_request_head(stream) && stream.write_all(bytes).is_ok()
}

fn errors_of(run: &Run, class: &str) -> u64 {
    run.result()["errors"][class].as_u64().unwrap_or(0)
}

#[test]
fn valid_responses() {
    let server = RawServer::start(|mut s| {
        while respond_each(&mut s, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") {}
    });
    assert_eq!(run_against(&server).count("/requests/success"), N);
}

#[test]
fn close_before_the_status_line() {
    let server = RawServer::start(|mut s| {
        read_request_head(&mut s);
    });
    assert_eq!(errors_of(&run_against(&server), "closed_early"), N);
}

#[test]
fn close_in_the_middle_of_the_headers() {
    let server = RawServer::start(|mut s| {
        respond_each(&mut s, b"HTTP/1.1 200 OK\r\nContent-Le");
    });
    assert_eq!(errors_of(&run_against(&server), "closed_early"), N);
}

#[test]
fn close_in_the_middle_of_the_body() {
    let server = RawServer::start(|mut s| {
        respond_each(
            &mut s,
            b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort",
        );
    });
    assert_eq!(errors_of(&run_against(&server), "closed_early"), N);
}

#[test]
fn bad_chunk_size() {
    let server = RawServer::start(|mut s| {
        respond_each(
            &mut s,
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nxx\r\n0\r\n\r\n",
        );
    });
    assert_eq!(errors_of(&run_against(&server), "malformed_response"), N);
}

#[test]
fn headers_over_64_kib() {
    let server = RawServer::start(|mut s| {
        if read_request_head(&mut s) {
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\n");
            for _ in 0..2000 {
                if s.write_all(b"X-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n")
                    .is_err()
                {
                    return;
                }
            }
        }
    });
    assert_eq!(errors_of(&run_against(&server), "malformed_response"), N);
}

#[test]
fn garbage() {
    let server = RawServer::start(|mut s| {
        respond_each(
            &mut s,
            &[0xde, 0xad, 0xbe, 0xef, b'\r', b'\n', b'\r', b'\n'],
        );
    });
    assert_eq!(errors_of(&run_against(&server), "malformed_response"), N);
}

#[test]
fn reset_with_linger_zero() {
    let server = RawServer::start(|mut s| {
        read_request_head(&mut s);
        socket2::SockRef::from(&s)
            .set_linger(Some(Duration::ZERO))
            .unwrap();
    });
    assert_eq!(errors_of(&run_against(&server), "reset"), N);
}

#[test]
fn stalls_forever() {
    let server = RawServer::start(|mut s| {
        read_request_head(&mut s);
        std::thread::sleep(Duration::from_secs(5));
    });
    assert_eq!(errors_of(&run_against(&server), "timeout"), N);
}

#[test]
fn trickles_one_byte_every_100ms() {
    let server = RawServer::start(|mut s| {
        if read_request_head(&mut s) {
            for byte in b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" {
                if s.write_all(&[*byte]).is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    });
    assert_eq!(
        errors_of(&run_against(&server), "timeout"),
        N,
        "the response deadline covers the whole response"
    );
}

#[test]
fn two_responses_for_one_request() {
    let server = RawServer::start(|mut s| {
        while respond_each(
            &mut s,
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
        ) {}
    });
    let run = run_against(&server);
    // The unsolicited second response is never taken for the answer to the
    // next request: that request goes out on a fresh connection.
    assert_eq!(run.count("/requests/success"), N, "{}", run.result());
    assert_eq!(run.count("/connections/opened"), N, "{}", run.result());
}

#[test]
fn http_0_9_style_body_without_a_status_line() {
    let server = RawServer::start(|mut s| {
        respond_each(&mut s, b"<html>hello</html>\n");
    });
    let run = run_against(&server);
    assert_eq!(
        errors_of(&run, "malformed_response") + errors_of(&run, "closed_early"),
        N,
        "{}",
        run.result()
    );
    assert!(errors_of(&run, "malformed_response") > 0);
}

#[test]
fn connection_close_then_keeps_the_socket_open() {
    let server = RawServer::start(|mut s| {
        respond_each(
            &mut s,
            b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
        );
        std::thread::sleep(Duration::from_secs(3));
    });
    let run = run_against(&server);
    assert_eq!(run.count("/requests/success"), N);
    assert_eq!(
        run.count("/connections/opened"),
        N,
        "the client closes as asked"
    );
}

#[test]
fn accepts_and_never_reads() {
    let server = RawServer::start(|_s| std::thread::sleep(Duration::from_secs(5)));
    assert_eq!(errors_of(&run_against(&server), "timeout"), N);
}

#[test]
fn target_killed_and_restarted_mid_run() {
    use stampede_testkit::{spawn_target, Server, TargetConfig};
    let config = TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    };
    let first = spawn_target(config.clone());
    let addr = first.local_addr();
    let url = format!("http://{addr}/");
    let runner = std::thread::spawn(move || {
        run_stampede(
            binary(),
            &[
                &url,
                "-d",
                "4s",
                "-c",
                "4",
                "-t",
                "1",
                "--connect-timeout",
                "200ms",
            ],
        )
    });
    std::thread::sleep(Duration::from_millis(1000));
    let served_first = first.shutdown().unwrap().requests_total;
    std::thread::sleep(Duration::from_millis(700));
    let second = Server::start(addr, config).expect("restart on the same port");
    let run = runner.join().unwrap();
    let served_second = second.shutdown().unwrap().requests_total;
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let series = run.result()["timeseries"].as_array().unwrap().clone();
    let success_in = |second: usize| series[second]["success"].as_u64().unwrap();
    // After the restart (1.7 s in) the connections' backoff (up to 1 s)
    // and a loaded machine may put the first success in second 2 or 3.
    assert!(
        success_in(0) > 0 && (2..series.len()).any(|s| success_in(s) > 0),
        "served before and after: {series:?}"
    );
    assert!(
        errors_of(&run, "connect_refused") > 0,
        "the gap shows as refused connections: {}",
        run.result()["errors"]
    );
    let accounted = run.count("/requests/success")
        + run.count("/requests/failed_status")
        + run.count("/requests/errors")
        + run.count("/requests/unfinished");
    assert_eq!(run.count("/requests/sent"), accounted);
    // Every response the client counted was served by one of the two servers.
    assert!(run.count("/requests/success") <= served_first + served_second);
    assert!(run.count("/requests/success") + 4 >= served_first + served_second);
}

#[test]
fn source_addrs_spread_connections_over_local_addresses() {
    use std::collections::HashSet;
    use std::sync::{Arc, Mutex};
    let peers = Arc::new(Mutex::new(HashSet::new()));
    let seen = peers.clone();
    let server = RawServer::start(move |mut s| {
        if let Ok(peer) = s.peer_addr() {
            seen.lock().unwrap().insert(peer.ip());
        }
        while respond_each(&mut s, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") {}
    });
    let run = run_stampede(
        binary(),
        &[
            &server.url("/"),
            "-n",
            "30",
            "-c",
            "3",
            "-t",
            "1",
            "--no-keepalive",
            "--source-addrs",
            "127.0.0.2-127.0.0.4",
        ],
    );
    assert_eq!(run.count("/requests/success"), 30, "{}", run.stderr());
    let peers = peers.lock().unwrap();
    let expected: HashSet<std::net::IpAddr> = ["127.0.0.2", "127.0.0.3", "127.0.0.4"]
        .iter()
        .map(|a| a.parse().unwrap())
        .collect();
    assert_eq!(*peers, expected);
}

#[test]
fn address_unavailable_is_its_own_class_with_the_remedy() {
    let server = RawServer::start(|mut s| {
        while respond_each(&mut s, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") {}
    });
    // 192.0.2.1 (TEST-NET-1) is not an address of this machine: binding to it
    // fails locally with EADDRNOTAVAIL, exactly as an exhausted port range
    // does, and no packet is ever sent.
    // Nothing could connect: the run exits 2, with the result still written.
    let run = run_against_expecting(&server, &["--source-addrs", "192.0.2.1"], 2);
    assert_eq!(
        errors_of(&run, "address_unavailable"),
        N,
        "{}",
        run.result()["errors"]
    );
    let warnings = run.result()["warnings"].to_string();
    assert!(warnings.contains("--source-addrs"), "{warnings}");
}
