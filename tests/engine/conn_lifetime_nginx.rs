//! `--conn-max-requests N` as nginx sees it: nginx, configured
//! here, logs `$connection` (its serial number of the connection) and
//! `$connection_requests` for every request, so the log counts the client's
//! connections independently of stampede's own books: requests / N distinct
//! connections, none carrying more than N, on io_uring, epoll, tokio, the
//! open model and HTTP/2. And a close nginx asks for (`keepalive_requests`)
//! stays a reconnect, not a planned one.

use stampede_testkit::nginx as nginx_support;

use nginx_support::{listening, Nginx, Setup};
use stampede_testkit::{free_port, require_tool, run_clean, temp_dir};
use std::collections::BTreeMap;
use std::path::Path;

/// nginx on two free loopback ports, HTTP/1.1 and h2c (prior knowledge),
/// logging `$connection $connection_requests`; `keepalive_requests`: how
/// many requests nginx itself allows a connection.
fn nginx(program: &Path, dir: &Path, keepalive_requests: u32) -> (Nginx, u16, u16) {
    let (http1, h2c) = (free_port(), free_port());
    let setup = Setup {
        listens: vec![
            format!("127.0.0.1:{http1}"),
            format!("127.0.0.1:{h2c} http2"),
        ],
        log_format: "$connection $connection_requests",
        http_extra: &format!("keepalive_requests {keepalive_requests};"),
        netns: None,
    };
    let ready =
        || listening(&format!("127.0.0.1:{http1}")) && listening(&format!("127.0.0.1:{h2c}"));
    (Nginx::start(program, dir, &setup, ready), http1, h2c)
}

/// Requests per connection logged since the log was last taken: the
/// highest `$connection_requests` of each `$connection`.
fn take_connections(nginx: &Nginx) -> BTreeMap<u64, u64> {
    let mut per_connection = BTreeMap::new();
    for fields in nginx.take_lines() {
        let number = |i: usize| -> u64 {
            fields
                .get(i)
                .and_then(|f| f.parse().ok())
                .expect("a logged number")
        };
        let most = per_connection.entry(number(0)).or_insert(0);
        *most = (*most).max(number(1));
    }
    per_connection
}

#[test]
fn nginx_counts_requests_over_n_connections() {
    let program = require_tool!("nginx");
    let dir = temp_dir("conn-lifetime-nginx");
    let (nginx, http1, _) = nginx(&program, &dir, 1000);
    let url = format!("http://127.0.0.1:{http1}/");
    for io in ["auto", "epoll", "tokio"] {
        let what = format!("--io {io}");
        let run = run_clean(&[
            &url,
            "--io",
            io,
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "120",
            "--conn-max-requests",
            "12",
        ]);
        let connections = take_connections(&nginx);
        assert_eq!(connections.len(), 10, "{what}: {connections:?}");
        assert!(
            connections.values().all(|&n| n == 12),
            "{what}: {connections:?}"
        );
        assert_eq!(run.count("/connections/planned_reconnects"), 9, "{what}");
        assert_eq!(run.count("/connections/reconnects"), 0, "{what}");

        // Several connections at once: none carries more than N.
        let run = run_clean(&[
            &url,
            "--io",
            io,
            "-t",
            "2",
            "-c",
            "3",
            "-n",
            "90",
            "--conn-max-requests",
            "10",
        ]);
        let connections = take_connections(&nginx);
        assert!(
            (9..=11).contains(&connections.len()),
            "{what}: {connections:?}"
        );
        assert!(
            connections.values().all(|&n| n <= 10),
            "{what}: {connections:?}"
        );
        assert_eq!(connections.values().sum::<u64>(), 90, "{what}");
        assert_eq!(run.count("/requests/sent"), 90, "{what}");
    }
}

#[test]
fn nginx_sees_the_open_model_and_http2_retire_connections() {
    let program = require_tool!("nginx");
    let dir = temp_dir("conn-lifetime-nginx-h2");
    let (nginx, http1, h2c) = nginx(&program, &dir, 1000);
    let url = format!("http://127.0.0.1:{http1}/");
    for io in ["auto", "tokio"] {
        let run = run_clean(&[
            &url,
            "--io",
            io,
            "-t",
            "1",
            "-r",
            "300",
            "-n",
            "90",
            "-c",
            "4",
            "--conn-max-requests",
            "5",
        ]);
        let connections = take_connections(&nginx);
        assert!(
            connections.values().all(|&n| n <= 5),
            "-r --io {io}: {connections:?}"
        );
        assert!(connections.len() >= 18, "-r --io {io}: {connections:?}");
        assert_eq!(run.count("/requests/sent"), 90, "-r --io {io}");
    }
    let h2 = format!("http://127.0.0.1:{h2c}/");
    let run = run_clean(&[
        &h2,
        "--http2",
        "--streams",
        "3",
        "-t",
        "1",
        "-c",
        "1",
        "-n",
        "60",
        "--conn-max-requests",
        "6",
    ]);
    let connections = take_connections(&nginx);
    assert_eq!(connections.len(), 10, "--http2: {connections:?}");
    assert!(
        connections.values().all(|&n| n == 6),
        "--http2: {connections:?}"
    );
    assert_eq!(run.count("/connections/planned_reconnects"), 9, "--http2");
}

#[test]
fn a_close_nginx_asks_for_is_a_reconnect_not_a_planned_one() {
    let program = require_tool!("nginx");
    let dir = temp_dir("conn-lifetime-nginx-keepalive");
    // nginx closes every connection after 5 requests itself.
    let (nginx, http1, _) = nginx(&program, &dir, 5);
    let url = format!("http://127.0.0.1:{http1}/");
    for io in ["auto", "tokio"] {
        let run = run_clean(&[&url, "--io", io, "-t", "1", "-c", "1", "-n", "50"]);
        assert_eq!(take_connections(&nginx).len(), 10, "--io {io}");
        assert_eq!(run.count("/connections/reconnects"), 9, "--io {io}");
        assert!(run.result()["connections"]
            .get("planned_reconnects")
            .is_none());
        // With a shorter lifetime of our own, ours end first: planned.
        let run = run_clean(&[
            &url,
            "--io",
            io,
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "50",
            "--conn-max-requests",
            "2",
        ]);
        assert_eq!(take_connections(&nginx).len(), 25, "--io {io}");
        assert_eq!(
            run.count("/connections/planned_reconnects"),
            24,
            "--io {io}"
        );
        assert_eq!(run.count("/connections/reconnects"), 0, "--io {io}");
    }
}
