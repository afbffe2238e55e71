//! The WebSocket cases that are the same on every event loop (tokio,
//! epoll, io_uring), one table over the loops: Python's `websockets`
//! server counts what the client counts, and the open model counts a
//! stall from each message's intended send. io_uring is skipped (or fails
//! under its declaration) where the kernel has none. Cases of one loop
//! stay in websocket_{client,epoll,uring}.rs.

use crate::websocket_client::{python_with_websockets, ws_server, ws_url, Script, PYTHON_SERVER};
use stampede_testkit::run_on_loop;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Instant;

/// The loops that drive WebSocket.
pub(crate) const LOOPS: [&str; 3] = ["tokio", "epoll", "uring"];

#[test]
fn python_websockets_server_counts_what_each_loop_counts() {
    let Some(python) = python_with_websockets() else {
        return;
    };
    for io in LOOPS {
        let mut server = Command::new(&python)
            .args(["-c", PYTHON_SERVER, "3"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the websockets server starts");
        let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
        let port = lines.next().expect("a port line").unwrap();
        let url = format!("ws://127.0.0.1:{port}/");
        let run = run_on_loop(io, &["run", &url, "-c", "3", "-t", "1", "-n", "300"]);
        let counted = lines.next();
        let _ = server.kill();
        let _ = server.wait();
        let Some(run) = run else {
            continue;
        };
        assert_eq!(run.code(), Some(0), "{io}: {}", run.stderr());
        run.assert_accounted(io);
        assert_eq!(run.result()["plan"]["io"], io);
        let counted = counted.expect("the server's counts").unwrap();
        let counted: serde_json::Value = serde_json::from_str(&counted).unwrap();
        assert_eq!(counted["in"], 300, "{io}: {counted}");
        assert_eq!(counted["out"], 300, "{io}: {counted}");
        assert_eq!(run.count("/websocket/messages_sent"), 300, "{io}");
        assert_eq!(run.count("/websocket/messages_received"), 300, "{io}");
        assert_eq!(run.count("/requests/success"), 300, "{io}");
        // Its ping on each connection was answered, and each close was the
        // client's 1000, answered with 1000.
        assert_eq!(counted["pongs"], 3, "{io}: {counted}");
        assert_eq!(run.count("/websocket/pings_answered"), 3, "{io}");
        let closes = serde_json::json!([1000, 1000, 1000]);
        assert_eq!(counted["closes"], closes, "{io}: {counted}");
        let codes = &run.result()["websocket"]["close_codes"];
        assert_eq!(*codes, serde_json::json!({"1000": 3}), "{io}");
    }
}

#[test]
fn the_open_model_counts_a_stall_from_each_messages_intended_send_on_each_loop() {
    for io in LOOPS {
        let server = ws_server(Script::StallOnce(Instant::now()));
        let url = ws_url(&server);
        // 50 messages/s over 3 s on at most 4 connections: during the 1 s
        // stall the messages due wait in the backlog, and their latency
        // counts from when they were due.
        let Some(run) = run_on_loop(io, &["run", &url, "-r", "50", "-c", "4", "-n", "150"]) else {
            continue;
        };
        assert_eq!(run.code(), Some(0), "{io}: {}", run.stderr());
        run.assert_accounted(io);
        assert_eq!(run.count("/requests/success"), 150, "{io}");
        let ws = &run.result()["websocket"];
        let rtt = &ws["rtt"];
        assert_eq!(rtt["count"], 150, "{io}: {ws}");
        // The message due when the stall began waited for all of it; dozens
        // more waited for part of it (a closed model would show four).
        assert!(rtt["max_us"].as_u64().unwrap() >= 900_000, "{io}: {rtt}");
        assert!(rtt["p99_us"].as_u64().unwrap() >= 800_000, "{io}: {rtt}");
        // Once the count is sent and answered, every connection closes
        // with 1000, answered by the server, as in the closed model.
        let connections = run.count("/websocket/connections");
        assert!((1..=4).contains(&connections), "{io}: {ws}");
        let codes = serde_json::json!({"1000": connections});
        assert_eq!(ws["close_codes"], codes, "{io}: {ws}");
    }
}
