//! `stampede run ws://… --io uring`: WebSocket on the io_uring reactor,
//! against the servers websocket_client.rs (tokio) and websocket_epoll.rs
//! (epoll) run: `stampede serve`'s `/ws/echo` (its `/stats` counts the
//! same messages) and hand-rolled servers that close mid-run or refuse
//! the upgrade (Python's `websockets` and a stall: websocket_loops.rs).
//! The same run on epoll and io_uring books the same counts; a duration
//! run closes every connection with 1000; `wss://` goes through the
//! reactor's TLS, counted alike by `stampede serve --tls` (its `--metrics`)
//! and by Python's `websockets` over TLS (which sees ALPN `http/1.1`).
//! Each test is skipped (or fails under its declaration) where the kernel
//! has no io_uring.

use crate::websocket_client::{
    python_with_websockets, served_ws, stats, ws_server, ws_url, Script, PYTHON_SERVER,
};
use stampede_testkit::{answer_each_request, event_loop_or_skip, run_on_loop, RawServer, Run};
use stampede_testkit::{free_port, http_get, run_ok_on_loop, wait_for, ServeProcess};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

/// `args` on io_uring, which ran it; `None` where the kernel has none.
fn on_uring(args: &[&str]) -> Option<Run> {
    let run = run_on_loop("uring", args)?;
    if run.json.is_some() {
        assert_eq!(run.result()["plan"]["io"], "uring", "{}", run.stderr());
    }
    Some(run)
}

#[test]
fn echo_counts_on_io_uring_agree_with_the_targets_own() {
    let serve = ServeProcess::start(&[]);
    let url = format!("ws://127.0.0.1:{}/ws/echo", serve.port);
    let Some(run) = run_ok_on_loop("uring", &["run", &url, "-c", "4", "-t", "2", "-n", "400"])
    else {
        return;
    };
    run.assert_accounted("ws echo on io_uring");
    assert_eq!(run.result()["plan"]["io"], "uring", "{}", run.stderr());
    let ws = &run.result()["websocket"];
    assert_eq!(run.count("/requests/success"), 400, "{ws}");
    assert_eq!(run.count("/websocket/messages_sent"), 400, "{ws}");
    assert_eq!(run.count("/websocket/messages_received"), 400, "{ws}");
    assert_eq!(run.count("/websocket/rtt/count"), 400, "{ws}");
    assert_eq!(run.count("/websocket/setup/count"), 4, "{ws}");
    assert_eq!(run.count("/websocket/connections"), 4, "{ws}");
    assert_eq!(run.count("/websocket/dropped"), 0, "{ws}");
    assert_eq!(ws["close_codes"], serde_json::json!({"1000": 4}), "{ws}");
    // As on epoll: "hello" masked is 11 bytes, each close 8; back 7 and 4.
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
fn epoll_and_io_uring_book_the_same_counts_for_the_same_run() {
    if !event_loop_or_skip("uring") {
        return;
    }
    let mut booked = Vec::new();
    for io in ["epoll", "uring"] {
        let serve = ServeProcess::start(&[]);
        let url = format!("ws://127.0.0.1:{}/ws/echo", serve.port);
        let args = [
            "run",
            &url,
            "-c",
            "3",
            "-t",
            "1",
            "-n",
            "250",
            "--ws-message",
            "n{{seq}}",
        ];
        let run = run_ok_on_loop(io, &args).expect("io_uring is here");
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
            "close_codes": ws["close_codes"],
            "dropped": ws["dropped"],
            "served_in": served["ws_messages_in"],
            "served_out": served["ws_messages_out"],
            "sessions": served["ws_sessions"],
        }));
    }
    assert_eq!(booked[0], booked[1], "epoll, then io_uring");
    assert_eq!(booked[1]["served_in"], 250, "{}", booked[1]);
}

#[test]
fn a_duration_run_on_io_uring_ends_every_connection_with_a_close() {
    for model in [&[][..], &["-r", "300"][..]] {
        let serve = ServeProcess::start(&[]);
        let url = format!("ws://127.0.0.1:{}/ws/echo", serve.port);
        let mut args = vec!["run", &url, "-c", "3", "-t", "1", "-d", "1s"];
        args.extend_from_slice(model);
        let Some(run) = run_ok_on_loop("uring", &args) else {
            return;
        };
        let what = format!("{model:?}");
        run.assert_accounted(&what);
        let ws = &run.result()["websocket"];
        let connections = run.count("/websocket/connections");
        assert!((1..=3).contains(&connections), "{what}: {ws}");
        assert_eq!(
            ws["close_codes"],
            serde_json::json!({ "1000": connections }),
            "{what}: {ws}"
        );
        assert_eq!(run.count("/websocket/dropped"), 0, "{what}: {ws}");
        assert_eq!(run.count("/requests/errors"), 0, "{what}: {ws}");
        let unfinished = run.count("/requests/unfinished");
        assert!(unfinished <= connections, "{what}: {unfinished}");
        assert_eq!(
            run.count("/websocket/messages_received"),
            run.count("/requests/success"),
            "{what}"
        );
        assert_eq!(stats(serve.port)["ws_sessions"], connections, "{what}");
    }
}

#[test]
fn a_server_closing_mid_run_on_io_uring_has_its_close_codes_counted() {
    let server = ws_server(Script::CloseAfterThree);
    let url = ws_url(&server);
    let Some(run) = on_uring(&["run", &url, "-c", "1", "-n", "10", "--timeout", "5s"]) else {
        return;
    };
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    run.assert_accounted("closed mid-run on io_uring");
    let ws = &run.result()["websocket"];
    // As on tokio and epoll: 1001 after three, then 1006 after three, then
    // two and the client's own close.
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
fn a_refused_upgrade_on_io_uring_is_an_upgrade_error_per_message() {
    let refusing = RawServer::start(|stream| {
        answer_each_request(stream, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    });
    let Some(run) = on_uring(&["run", &ws_url(&refusing), "-c", "1", "-n", "3"]) else {
        return;
    };
    assert!(run.json.is_some(), "{}", run.stderr());
    run.assert_accounted("refused upgrade on io_uring");
    assert_eq!(run.count("/errors/ws_upgrade_refused"), 3);
    assert_eq!(run.count("/requests/success"), 0);
    let sample = run.result()["error_samples"]["ws_upgrade_refused"][0].to_string();
    assert!(sample.contains("200 OK, not 101"), "{sample}");
}

#[test]
fn a_binary_message_larger_than_a_receive_buffer_comes_back_whole_on_io_uring() {
    let dir = stampede_testkit::temp_dir("ws-uring-binary");
    let file = dir.join("payload.bin");
    let payload: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&file, &payload).unwrap();
    let message = format!("@{}", file.display());
    let serve = ServeProcess::start(&[]);
    let url = format!("ws://127.0.0.1:{}/ws/echo", serve.port);
    let args = [
        "run",
        &url,
        "-c",
        "2",
        "-n",
        "20",
        "--ws-message",
        &message,
        "--ws-binary",
    ];
    if let Some(run) = run_ok_on_loop("uring", &args) {
        run.assert_accounted("binary on io_uring");
        assert_eq!(run.count("/requests/success"), 20);
        assert_eq!(run.count("/websocket/messages_received"), 20);
        assert_eq!(
            run.count("/websocket/bytes_sent"),
            20 * (14 + 200_000) + 2 * 8
        );
        assert_eq!(
            run.count("/websocket/bytes_received"),
            20 * (10 + 200_000) + 2 * 4
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn wss_on_io_uring_counts_agree_with_the_targets_own_metrics() {
    let metrics = free_port();
    let address = format!("127.0.0.1:{metrics}");
    let serve = ServeProcess::start(&["--tls", "--metrics", &address]);
    wait_for(Duration::from_secs(15), || http_get(metrics, "/metrics")).expect("/metrics");
    let url = format!("wss://127.0.0.1:{}/ws/echo", serve.port);
    let args = ["run", &url, "--insecure", "-c", "3", "-t", "1", "-n", "150"];
    let Some(run) = run_ok_on_loop("uring", &args) else {
        return;
    };
    run.assert_accounted("wss on io_uring");
    assert_eq!(run.result()["plan"]["io"], "uring", "{}", run.stderr());
    let ws = &run.result()["websocket"];
    assert_eq!(run.count("/requests/success"), 150, "{ws}");
    assert_eq!(run.count("/websocket/messages_sent"), 150, "{ws}");
    assert_eq!(run.count("/websocket/messages_received"), 150, "{ws}");
    assert_eq!(run.count("/websocket/setup/count"), 3, "{ws}");
    assert_eq!(ws["close_codes"], serde_json::json!({"1000": 3}), "{ws}");
    // The frames' bytes before TLS, as over ws://: "hello" masked is 11
    // bytes, each close 8; back 7 and 4.
    assert_eq!(run.count("/websocket/bytes_sent"), 150 * 11 + 3 * 8, "{ws}");
    assert_eq!(run.count("/websocket/bytes_received"), 150 * 7 + 3 * 4);
    // The server counted the same messages each way, over the same TLS.
    assert_eq!(served_ws(metrics), [3, 150, 150]);
}

#[test]
fn python_websockets_over_tls_counts_what_io_uring_counts_with_alpn_http_1_1() {
    if !event_loop_or_skip("uring") {
        return;
    }
    let Some(python) = python_with_websockets() else {
        return;
    };
    let dir = stampede_testkit::temp_dir("ws-uring-tls-python");
    let certified = rcgen::generate_simple_self_signed(vec!["127.0.0.1".into()]).unwrap();
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert, certified.cert.pem()).unwrap();
    std::fs::write(&key, certified.signing_key.serialize_pem()).unwrap();
    let mut server = Command::new(&python)
        .args(["-c", PYTHON_SERVER, "3"])
        .args([&cert, &key])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the websockets server starts");
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let port = lines.next().expect("a port line").unwrap();
    let url = format!("wss://127.0.0.1:{port}/");
    let args = ["run", &url, "--insecure", "-c", "3", "-t", "1", "-n", "300"];
    let run = on_uring(&args).expect("io_uring");
    let counted = lines.next();
    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    run.assert_accounted("python peer over TLS on io_uring");
    let counted = counted.expect("the server's counts").unwrap();
    let counted: serde_json::Value = serde_json::from_str(&counted).unwrap();
    assert_eq!(counted["in"], 300, "{counted}");
    assert_eq!(counted["out"], 300, "{counted}");
    assert_eq!(run.count("/websocket/messages_sent"), 300);
    assert_eq!(run.count("/websocket/messages_received"), 300);
    // Each connection offered http/1.1 in its ClientHello (RFC 6455 runs
    // over HTTP/1.1), answered its ping and closed with 1000.
    let alpn = serde_json::json!(["http/1.1", "http/1.1", "http/1.1"]);
    assert_eq!(counted["alpn"], alpn, "{counted}");
    assert_eq!(counted["pongs"], 3, "{counted}");
    assert_eq!(
        counted["closes"],
        serde_json::json!([1000, 1000, 1000]),
        "{counted}"
    );
}
