//! `stampede run ws://… --io epoll`: WebSocket on the epoll reactor,
//! against the servers websocket_client.rs runs the tokio driver against:
//! `stampede serve`'s `/ws/echo` (its `/stats` counts the same messages)
//! and hand-rolled servers that close mid-run or refuse the upgrade, and
//! `wss://` through the reactor's TLS. The same run on `--io tokio` and
//! `--io epoll` books the same counts. Python's `websockets` and the open
//! model's stall are websocket_loops.rs's, one table over every loop.

use crate::websocket_client::{stats, ws_server, ws_url, Script};
use stampede_testkit::{
    answer_each_request, binary, run_ok, run_stampede, RawServer, ServeProcess,
};

#[test]
fn echo_counts_on_epoll_agree_with_the_targets_own() {
    let serve = ServeProcess::start(&[]);
    let url = format!("ws://127.0.0.1:{}/ws/echo", serve.port);
    let run = run_ok(&[
        "run", &url, "--io", "epoll", "-c", "4", "-t", "2", "-n", "400",
    ]);
    run.assert_accounted("ws echo on epoll");
    assert_eq!(run.result()["plan"]["io"], "epoll", "{}", run.stderr());
    let ws = &run.result()["websocket"];
    assert_eq!(run.count("/requests/success"), 400, "{ws}");
    assert_eq!(run.count("/websocket/messages_sent"), 400, "{ws}");
    assert_eq!(run.count("/websocket/messages_received"), 400, "{ws}");
    assert_eq!(run.count("/websocket/rtt/count"), 400, "{ws}");
    assert_eq!(run.count("/websocket/setup/count"), 4, "{ws}");
    assert_eq!(run.count("/websocket/connections"), 4, "{ws}");
    assert_eq!(run.count("/websocket/dropped"), 0, "{ws}");
    // Each connection ends with the client's close, answered with 1000.
    assert_eq!(ws["close_codes"], serde_json::json!({"1000": 4}), "{ws}");
    // "hello" masked is 2 + 4 + 5 bytes, each close 2 + 4 + 2; back, 2 + 5
    // and 2 + 2.
    assert_eq!(run.count("/websocket/bytes_sent"), 400 * 11 + 4 * 8, "{ws}");
    assert_eq!(
        run.count("/websocket/bytes_received"),
        400 * 7 + 4 * 4,
        "{ws}"
    );
    let served = stats(serve.port);
    assert_eq!(served["ws_sessions"], 4, "{served}");
    assert_eq!(served["ws_messages_in"], 400, "{served}");
    assert_eq!(served["ws_messages_out"], 400, "{served}");
}

#[test]
fn tokio_and_epoll_book_the_same_counts_for_the_same_run() {
    let mut booked = Vec::new();
    for io in ["tokio", "epoll"] {
        let serve = ServeProcess::start(&[]);
        let url = format!("ws://127.0.0.1:{}/ws/echo", serve.port);
        let message = "n{{seq}}";
        let run = run_ok(&[
            "run",
            &url,
            "--io",
            io,
            "-c",
            "3",
            "-t",
            "1",
            "-n",
            "250",
            "--ws-message",
            message,
        ]);
        run.assert_accounted(io);
        assert_eq!(run.result()["plan"]["io"], io, "{}", run.stderr());
        let ws = &run.result()["websocket"];
        let served = stats(serve.port);
        booked.push(serde_json::json!({
            "success": run.count("/requests/success"),
            "errors": run.result()["errors"],
            "sent": ws["messages_sent"],
            "received": ws["messages_received"],
            "rtt": ws["rtt"]["count"],
            "bytes_sent": ws["bytes_sent"],
            "bytes_received": ws["bytes_received"],
            "connections": ws["connections"],
            "setup": ws["setup"]["count"],
            "close_codes": ws["close_codes"],
            "dropped": ws["dropped"],
            "served_in": served["ws_messages_in"],
            "served_out": served["ws_messages_out"],
            "sessions": served["ws_sessions"],
        }));
    }
    assert_eq!(booked[0], booked[1], "tokio, then epoll");
    assert_eq!(booked[1]["served_in"], 250, "{}", booked[1]);
}

#[test]
fn a_duration_run_ends_every_connection_with_a_close_on_tokio_and_on_epoll() {
    // Cut off at the deadline, a message in flight is unfinished (as an
    // HTTP request is) and each connection still closes with 1000,
    // answered by the server: on both drivers, in both load models.
    let mut closes = Vec::new();
    for model in [&[][..], &["-r", "300"][..]] {
        for io in ["tokio", "epoll"] {
            let serve = ServeProcess::start(&[]);
            let url = format!("ws://127.0.0.1:{}/ws/echo", serve.port);
            let mut args = vec!["run", &url, "--io", io, "-c", "3", "-t", "1", "-d", "1s"];
            args.extend_from_slice(model);
            let what = format!("{io} {model:?}");
            let run = run_ok(&args);
            run.assert_accounted(&what);
            assert_eq!(run.result()["plan"]["io"], io, "{}", run.stderr());
            let ws = &run.result()["websocket"];
            let connections = run.count("/websocket/connections");
            assert!((1..=3).contains(&connections), "{what}: {ws}");
            assert_eq!(run.count("/websocket/dropped"), 0, "{what}: {ws}");
            assert_eq!(run.count("/requests/errors"), 0, "{what}: {ws}");
            let unfinished = run.count("/requests/unfinished");
            assert!(unfinished <= connections, "{what}: {unfinished} unfinished");
            assert_eq!(
                run.count("/websocket/messages_sent"),
                run.count("/requests/success") + unfinished,
                "{what}: each message answered or unfinished"
            );
            assert_eq!(
                run.count("/websocket/messages_received"),
                run.count("/requests/success"),
                "{what}: a reply to a message given up is not counted"
            );
            assert_eq!(stats(serve.port)["ws_sessions"], connections, "{what}");
            closes.push((what, ws["close_codes"].clone(), connections));
        }
    }
    for (what, codes, connections) in &closes {
        assert_eq!(
            *codes,
            serde_json::json!({ "1000": connections }),
            "{what}: {closes:?}"
        );
    }
}

#[test]
fn a_server_closing_mid_run_on_epoll_has_its_close_codes_counted() {
    let server = ws_server(Script::CloseAfterThree);
    let url = ws_url(&server);
    let run = run_stampede(
        binary(),
        &[
            "run",
            &url,
            "--io",
            "epoll",
            "-c",
            "1",
            "-n",
            "10",
            "--timeout",
            "5s",
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    run.assert_accounted("closed mid-run on epoll");
    let ws = &run.result()["websocket"];
    // Connection 1: three echoed, the fourth met a close 1001; connection
    // 2: three echoed, the fourth met the TCP connection's end (1006);
    // connection 3: two echoed, then the client's own close (1000).
    assert_eq!(run.count("/requests/success"), 8, "{ws}");
    assert_eq!(run.count("/errors/closed_early"), 2, "{ws}");
    assert_eq!(
        ws["close_codes"],
        serde_json::json!({"1000": 1, "1001": 1, "1006": 1}),
        "{ws}"
    );
    assert_eq!(run.count("/websocket/dropped"), 2, "{ws}");
    assert_eq!(run.count("/websocket/connections"), 3, "{ws}");
    assert_eq!(server.accepted(), 3);
}

#[test]
fn a_refused_upgrade_on_epoll_is_an_upgrade_error_per_message() {
    let refusing = RawServer::start(|stream| {
        answer_each_request(stream, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    });
    let run = run_stampede(
        binary(),
        &[
            "run",
            &ws_url(&refusing),
            "--io",
            "epoll",
            "-c",
            "1",
            "-n",
            "3",
        ],
    );
    assert!(run.json.is_some(), "{}", run.stderr());
    run.assert_accounted("refused upgrade on epoll");
    assert_eq!(run.count("/errors/ws_upgrade_refused"), 3);
    assert_eq!(run.count("/requests/success"), 0);
    let sample = run.result()["error_samples"]["ws_upgrade_refused"][0].to_string();
    assert!(sample.contains("200 OK, not 101"), "{sample}");
}

#[test]
fn wss_on_epoll_goes_through_the_reactors_tls() {
    let serve = ServeProcess::start(&["--tls"]);
    let url = format!("wss://127.0.0.1:{}/ws/echo", serve.port);
    let run = run_ok(&[
        "run",
        &url,
        "--io",
        "epoll",
        "--insecure",
        "-c",
        "2",
        "-n",
        "50",
    ]);
    run.assert_accounted("wss on epoll");
    assert_eq!(run.result()["plan"]["io"], "epoll");
    assert_eq!(run.count("/websocket/messages_received"), 50);
    assert_eq!(run.count("/websocket/setup/count"), 2);
    assert_eq!(run.count("/websocket/connections"), 2);
    assert_eq!(
        run.result()["websocket"]["close_codes"],
        serde_json::json!({"1000": 2})
    );
}

#[test]
fn a_binary_message_larger_than_a_read_comes_back_whole_on_epoll_plain_and_over_tls() {
    let dir = stampede_testkit::temp_dir("ws-epoll-binary");
    let file = dir.join("payload.bin");
    let payload: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&file, &payload).unwrap();
    let message = format!("@{}", file.display());
    for tls in [false, true] {
        let serve = ServeProcess::start(if tls { &["--tls"][..] } else { &[] });
        let scheme = if tls { "wss" } else { "ws" };
        let url = format!("{scheme}://127.0.0.1:{}/ws/echo", serve.port);
        let mut args = vec![
            "run",
            &url,
            "--io",
            "epoll",
            "-c",
            "2",
            "-n",
            "20",
            "--ws-message",
            &message,
            "--ws-binary",
        ];
        if tls {
            args.push("--insecure");
        }
        let run = run_ok(&args);
        run.assert_accounted(scheme);
        assert_eq!(run.count("/requests/success"), 20, "{scheme}");
        assert_eq!(run.count("/websocket/messages_received"), 20, "{scheme}");
        // 200,000 bytes take the 8-byte length: 2 + 8 + 4 (mask) + payload
        // out, 2 + 8 + payload back (closes: 8 out, 4 back, per connection).
        assert_eq!(
            run.count("/websocket/bytes_sent"),
            20 * (14 + 200_000) + 2 * 8,
            "{scheme}"
        );
        assert_eq!(
            run.count("/websocket/bytes_received"),
            20 * (10 + 200_000) + 2 * 4,
            "{scheme}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
