//! The open model (`-r`) over HTTP/2 on the reactors (`--http2 --io
//! epoll` and `--io uring`, the stampede-h2 codec): exact counts under `-n` against what the
//! server says it served (the built-in target over h2c and TLS, nginx with
//! a small stream limit and GOAWAYs), and a rate the server cannot hold
//! showing in latency, from the intended send, and in the late sends.

use stampede_target::{CertSource, TlsConfig};
use stampede_testkit::nginx::{listening, Nginx, Setup};
use stampede_testkit::{
    binary, free_port, one_thread, require_tool, run_stampede, spawn_target, temp_dir, TargetConfig,
};

/// `-n 1501 -r 3000` on 5 connections of 4 streams, two threads: each
/// request once, every send's lateness counted, `-c` kept, and the server
/// agrees, over h2c and over TLS (ALPN h2).
#[test]
fn a_counted_rate_sends_exactly_n_over_h2c_and_tls() {
    let plain = spawn_target(one_thread());
    let tls = spawn_target(TargetConfig {
        threads: 1,
        tls: Some(TlsConfig::new(CertSource::SelfSigned)),
        ..TargetConfig::default()
    });
    let h2c = format!("http://{}/", plain.local_addr());
    let h2 = format!("https://127.0.0.1:{}/", tls.local_addr().port());
    let cases = [(&h2c, &plain), (&h2, &tls)];
    for (io, (url, server)) in ["epoll", "uring"]
        .into_iter()
        .flat_map(|io| cases.map(|c| (io, c)))
    {
        let before = server.stats();
        let mut args = vec![
            url.as_str(),
            "--http2",
            "--io",
            io,
            "--streams",
            "4",
            "-n",
            "1501",
            "-r",
            "3000",
            "-c",
            "5",
            "-t",
            "2",
        ];
        if url.starts_with("https") {
            args.push("--insecure");
        }
        let run = run_stampede(binary(), &args);
        assert_eq!(run.code(), Some(0), "{url}: {}", run.stderr());
        assert_eq!(run.result()["plan"]["io"], io, "{url}");
        assert_eq!(run.count("/requests/sent"), 1501, "{url}");
        assert_eq!(
            run.count("/requests/success"),
            1501,
            "{url}: {}",
            run.result()
        );
        run.assert_accounted(url);
        assert_eq!(
            run.count("/schedule/lateness_us/count"),
            1501,
            "{url}: every send's lateness: {}",
            run.result()["schedule"]
        );
        assert!(run.count("/connections/opened") <= 5, "{url}: -c caps");
        let after = server.stats();
        assert_eq!(after.requests_total - before.requests_total, 1501, "{url}");
        assert_eq!(after.h2_streams_total - before.h2_streams_total, 1501);
    }
}

/// nginx allowing two streams a connection and ending each after seven
/// requests (GOAWAY): `-n 700 -r 2000` on 3 connections of 8 streams logs
/// every request once, none failed; the streams above each GOAWAY's last
/// id go again on the next connection.
#[test]
fn nginx_with_two_streams_and_goaways_logs_each_request_of_a_rate_once() {
    let program = require_tool!("nginx");
    let port = free_port();
    let setup = Setup {
        listens: vec![format!("127.0.0.1:{port} http2")],
        log_format: "$connection $connection_requests $status",
        http_extra: "http2_max_concurrent_streams 2;\n  keepalive_requests 7;",
        netns: None,
    };
    let nginx = Nginx::start(&program, &temp_dir("h2-reactor-open-nginx"), &setup, || {
        listening(&format!("127.0.0.1:{port}"))
    });
    let url = format!("http://127.0.0.1:{port}/");
    for io in ["epoll", "uring"] {
        let run = run_stampede(
            binary(),
            &[
                &url,
                "--http2",
                "--io",
                io,
                "-r",
                "2000",
                "-n",
                "700",
                "-c",
                "3",
                "--streams",
                "8",
                "-t",
                "1",
            ],
        );
        assert_eq!(run.code(), Some(0), "{io}: {}", run.stderr());
        run.assert_accounted(io);
        assert_eq!(run.count("/requests/sent"), 700, "{io}");
        assert_eq!(
            run.count("/requests/success"),
            700,
            "{io}: {}",
            run.result()
        );
        let lines = nginx.take_lines();
        assert_eq!(lines.len(), 700, "{io}: nginx logged every request once");
        assert!(lines
            .iter()
            .all(|f| f.get(2).map(String::as_str) == Some("200")));
        let connections: std::collections::BTreeSet<&String> =
            lines.iter().map(|f| &f[0]).collect();
        assert_eq!(
            run.count("/connections/opened"),
            connections.len() as u64,
            "{io}"
        );
    }
}

/// 400/s due, one connection of two streams to a route that answers in
/// 20 ms (100/s at most): the backlog grows, and the latency of the last
/// requests, from their intended instants, reaches a second and more while
/// their service time stays near the 20 ms; the late sends are counted.
#[test]
fn a_rate_the_server_cannot_hold_shows_in_latency_not_service_time() {
    let target = spawn_target(one_thread());
    let url = format!("http://{}/delay/20", target.local_addr());
    for io in ["epoll", "uring"] {
        let before = target.stats().requests_total;
        let run = run_stampede(
            binary(),
            &[
                &url,
                "--http2",
                "--io",
                io,
                "-r",
                "400",
                "-n",
                "200",
                "-c",
                "1",
                "--streams",
                "2",
                "-t",
                "1",
            ],
        );
        assert_eq!(run.code(), Some(0), "{io}: {}", run.stderr());
        run.assert_accounted(io);
        assert_eq!(
            run.count("/requests/success"),
            200,
            "{io}: {}",
            run.result()
        );
        let p99 = run.count("/latency_us/p99");
        let service_p99 = run.count("/service_time_us/p99");
        // 200 at 100/s take 2 s; the last was due at 0.5 s.
        assert!(
            p99 >= 1_000_000,
            "{io}: the backlog's wait is latency: p99 {p99} us"
        );
        assert!(
            service_p99 < 500_000,
            "{io}: not service time: p99 {service_p99} us"
        );
        assert!(
            run.count("/schedule/late_sends") >= 100,
            "{io}: {}",
            run.result()["schedule"]
        );
        assert_eq!(target.stats().requests_total - before, 200, "{io}");
    }
}
