//! `--ws-rate PER_S`: messages per second on each connection, on every
//! event loop that drives WebSocket (tokio, epoll, io_uring; io_uring
//! skipped where the kernel has none). Each connection's messages are due
//! at its own instants: a run sends no more than its connections' schedule
//! allows, and a stalled server shows in latency counted from when each
//! message was due. Refused in one line with -r and without a ws:// URL.

use crate::websocket_client::{ws_server, ws_url, Script};
use crate::websocket_loops::LOOPS;
use stampede_testkit::{run_on_loop, ServeProcess};
use std::time::Instant;

#[test]
fn each_connection_sends_no_more_than_its_rate_allows_on_every_loop() {
    let serve = ServeProcess::start(&[]);
    let url = format!("ws://127.0.0.1:{}/ws/echo", serve.port);
    for io in LOOPS {
        // 5 messages/s on each of 2 connections for 1 s: due at 0, 200,
        // 400, 600 and 800 ms (1000 ms at the deadline): at most 12. An
        // unpaced echo loop sends thousands.
        let args = [
            "run",
            &url,
            "-c",
            "2",
            "-t",
            "1",
            "--ws-rate",
            "5",
            "-d",
            "1s",
        ];
        let Some(run) = run_on_loop(io, &args) else {
            continue;
        };
        assert_eq!(run.code(), Some(0), "{io}: {}", run.stderr());
        assert_eq!(run.result()["plan"]["io"], io, "{}", run.stderr());
        let sent = run.count("/websocket/messages_sent");
        assert!((2..=12).contains(&sent), "{io}: {sent} sent");
        assert_eq!(run.count("/websocket/connections"), 2, "{io}");
        let plan = &run.result()["plan"]["websocket"];
        assert_eq!(plan["rate_per_connection"], 5.0, "{io}: {plan}");
    }
}

#[test]
fn a_stall_counts_from_each_messages_intended_send_on_every_loop() {
    for io in LOOPS {
        let server = ws_server(Script::StallOnce(Instant::now()));
        let url = ws_url(&server);
        // 20 messages/s on each of 2 connections, 40 each: due over 2 s.
        // The server answers nothing between 1 s and 2 s: the messages due
        // meanwhile go once it answers, and each one's latency counts from
        // when it was due, so a quarter of them (due from 1.0 s to 1.5 s)
        // take 500 ms or more. From the actual send only the two messages
        // in flight at the stall would.
        let args = [
            "run",
            &url,
            "-c",
            "2",
            "-t",
            "1",
            "--ws-rate",
            "20",
            "-n",
            "80",
        ];
        let Some(run) = run_on_loop(io, &args) else {
            continue;
        };
        assert_eq!(run.code(), Some(0), "{io}: {}", run.stderr());
        run.assert_accounted(io);
        assert_eq!(run.count("/requests/success"), 80, "{io}");
        let latency = &run.result()["latency_us"];
        assert!(
            latency["max"].as_u64().unwrap() >= 900_000,
            "{io}: {latency}"
        );
        assert!(
            latency["p90"].as_u64().unwrap() >= 400_000,
            "{io}: {latency}"
        );
    }
}

#[test]
fn a_rate_per_connection_is_refused_with_a_total_rate_and_without_a_ws_url() {
    let cases: [(&[&str], &str); 3] = [
        (
            &["run", "ws://127.0.0.1:9/", "--ws-rate", "10", "-r", "100"],
            "-r is a rate in total",
        ),
        (
            &["run", "http://127.0.0.1:9/", "--ws-rate", "10"],
            "need a ws:// or wss:// URL",
        ),
        (
            &["run", "ws://127.0.0.1:9/", "--ws-rate", "0"],
            "not a positive number",
        ),
    ];
    for (args, says) in cases {
        let out = stampede_testkit::stampede(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}
