//! `stampede run ws://…`, the WebSocket client, against three servers:
//! `stampede serve`'s `/ws/echo` (its `/stats` counts the same messages
//! the client booked), Python's `websockets` echo server (a peer nobody
//! here wrote, counting what it saw), and hand-rolled servers that close
//! mid-run, refuse the upgrade, answer it with a wrong key, mask their
//! frames, keep what they read (a templated message), or stall (the open
//! model's latency from the intended send shows the stall; the cases
//! alike on every loop run in websocket_loops.rs). Flags
//! that make no sense for a ws:// URL are refused in one line. These runs
//! ask for the tokio driver (`--io auto` is epoll's); the servers serve
//! websocket_epoll.rs's runs on the epoll reactor and websocket_uring.rs's
//! on io_uring too.

use stampede_testkit::{
    answer_each_request, binary, run_ok, run_stampede, skip_or_fail, tool_or_skip, RawServer,
    ServeProcess,
};
use stampede_websocket::{
    accept_key, encode_close, encode_message, Decoder, Event, MessageKind, Role,
};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

/// The server's `/stats` counters.
/// What `stampede serve --metrics` on `metrics` counted of WebSocket:
/// connections upgraded, messages received, messages sent.
pub(crate) fn served_ws(metrics: u16) -> [u64; 3] {
    let body = stampede_testkit::http_get(metrics, "/metrics").expect("/metrics answers");
    let sample = |series: &str| -> u64 {
        let line = body.lines().find(|line| line.starts_with(series));
        let value = line.and_then(|line| line.rsplit(' ').next()?.parse::<f64>().ok());
        value.unwrap_or_else(|| panic!("no {series} in {body}")) as u64
    };
    [
        sample("stampede_target_ws_connections_total"),
        sample("stampede_target_ws_messages_received_total"),
        sample("stampede_target_ws_messages_sent_total"),
    ]
}

pub(crate) fn stats(port: u16) -> serde_json::Value {
    let body = stampede_testkit::http_get(port, "/stats").expect("/stats answers");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

#[test]
fn echo_counts_agree_with_the_targets_own() {
    let serve = ServeProcess::start(&[]);
    let url = format!("ws://127.0.0.1:{}/ws/echo", serve.port);
    let run = run_ok(&[
        "run", "--io", "tokio", &url, "-c", "4", "-t", "2", "-n", "400",
    ]);
    run.assert_accounted("ws echo");
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
fn binary_messages_from_a_file_come_back_whole() {
    let serve = ServeProcess::start(&[]);
    let dir = stampede_testkit::temp_dir("ws-binary");
    let file = dir.join("payload.bin");
    let payload: Vec<u8> = (0..70_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&file, &payload).unwrap();
    let url = format!("ws://127.0.0.1:{}/ws/echo", serve.port);
    let message = format!("@{}", file.display());
    let run = run_ok(&[
        "run",
        "--io",
        "tokio",
        &url,
        "-c",
        "2",
        "-n",
        "20",
        "--ws-message",
        &message,
        "--ws-binary",
    ]);
    run.assert_accounted("ws binary");
    assert_eq!(run.count("/requests/success"), 20);
    assert_eq!(run.count("/websocket/messages_received"), 20);
    // 70,000 bytes take the 8-byte length: 2 + 8 + 4 (mask) + payload out,
    // 2 + 8 + payload back (closes: 8 out, 4 back, per connection).
    assert_eq!(
        run.count("/websocket/bytes_sent"),
        20 * (14 + 70_000) + 2 * 8
    );
    assert_eq!(
        run.count("/websocket/bytes_received"),
        20 * (10 + 70_000) + 2 * 4
    );
    let served = stats(serve.port);
    assert_eq!(served["ws_messages_in"], 20, "{served}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// An echo server in Python's `websockets`: pings each connection once,
/// echoes every message, and once `expected` connections have ended prints
/// what it counted as one JSON line (its port first, on a line of its own).
pub(crate) const PYTHON_SERVER: &str = r#"
import asyncio, json, ssl, sys
from websockets.asyncio.server import serve

expected = int(sys.argv[1])
counts = {"in": 0, "out": 0, "pongs": 0, "closes": [], "alpn": []}
ended = 0
tls = None
if len(sys.argv) > 3:
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(sys.argv[2], sys.argv[3])
    tls.set_alpn_protocols(["http/1.1"])

async def echo(ws):
    global ended
    session = ws.transport.get_extra_info("ssl_object")
    if session is not None:
        counts["alpn"].append(session.selected_alpn_protocol())
    pong = await ws.ping(b"still there?")
    async for message in ws:
        counts["in"] += 1
        await ws.send(message)
        counts["out"] += 1
    if pong.done():
        counts["pongs"] += 1
    counts["closes"].append(ws.close_code)
    ended += 1
    if ended == expected:
        done.set()

async def main():
    global done
    done = asyncio.Event()
    async with serve(echo, "127.0.0.1", 0, ssl=tls) as server:
        print(server.sockets[0].getsockname()[1], flush=True)
        await done.wait()
    print(json.dumps(counts), flush=True)

asyncio.run(main())
"#;

/// The version .ci/run installs: the one this test was written against.
const PACKAGE: &str = "websockets==17.4";

pub(crate) fn python_with_websockets() -> Option<std::path::PathBuf> {
    let python = tool_or_skip("python3")?;
    let probe = Command::new(&python)
        .args(["-c", "import websockets.asyncio.server"])
        .output()
        .expect("python3 runs");
    if !probe.status.success() {
        skip_or_fail(
            &format!("{} cannot import websockets", python.display()),
            &format!("pip install {PACKAGE} (into the python3 on PATH)"),
        );
        return None;
    }
    Some(python)
}

/// What a hand-rolled server does with a connection's messages.
#[derive(Clone, Copy)]
pub(crate) enum Script {
    /// Echo three messages; at the fourth, close with 1001 on odd
    /// connections and drop the TCP connection on even ones.
    CloseAfterThree,
    /// Echo every message, holding any that arrives in [1 s, 2 s) after
    /// `epoch` until 2 s: one stall of one second.
    StallOnce(Instant),
    /// Echo every message masked, which a server must not (§5.1).
    MaskedEcho,
    /// Echo every message, keeping its text in [`COLLECTED`].
    Collect,
}

/// The messages a [`Script::Collect`] server read (one test uses it).
static COLLECTED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Serves one WebSocket connection by `script`: the upgrade answered with
/// the right key, then frames read with the codec's server side.
fn serve_ws(mut stream: TcpStream, connection: u64, script: Script) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte).unwrap_or(0) == 0 {
            return;
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let key = head
        .lines()
        .find_map(|l| l.strip_prefix("Sec-WebSocket-Key: "))
        .expect("a key")
        .to_string();
    let answer = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {}\r\n\r\n",
        accept_key(&key)
    );
    if stream.write_all(answer.as_bytes()).is_err() {
        return;
    }
    let mut decoder = Decoder::new(Role::Server, 1 << 20);
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let mut seen = 0;
    loop {
        let n = stream.read(&mut chunk).unwrap_or(0);
        if n == 0 {
            return;
        }
        buf.extend_from_slice(&chunk[..n]);
        loop {
            let mut out = Vec::new();
            let (consumed, close) = {
                let decoded = decoder
                    .decode(&mut buf)
                    .expect("the client's frames are valid");
                match decoded.event {
                    None => (decoded.consumed, None),
                    Some(Event::Close(_)) => (decoded.consumed, Some(1000)),
                    Some(Event::Text(t)) => {
                        seen += 1;
                        if let (Script::CloseAfterThree, 4) = (script, seen) {
                            if connection.is_multiple_of(2) {
                                let _ = stream.shutdown(std::net::Shutdown::Both);
                                return;
                            }
                            (decoded.consumed, Some(1001))
                        } else {
                            if let Script::StallOnce(epoch) = script {
                                let now = epoch.elapsed();
                                let (from, to) = (Duration::from_secs(1), Duration::from_secs(2));
                                if now >= from && now < to {
                                    std::thread::sleep(to - now);
                                }
                            }
                            if let Script::Collect = script {
                                COLLECTED.lock().unwrap().push(t.to_string());
                            }
                            let mask = matches!(script, Script::MaskedEcho).then_some([1, 2, 3, 4]);
                            encode_message(&mut out, MessageKind::Text, t.as_bytes(), mask);
                            (decoded.consumed, None)
                        }
                    }
                    Some(_) => (decoded.consumed, None),
                }
            };
            buf.drain(..consumed);
            if let Some(code) = close {
                encode_close(&mut out, Some(code), "", None).unwrap();
                let _ = stream.write_all(&out);
                // Wait for the client's answering close (or its end).
                let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
                let _ = stream.read(&mut chunk);
                return;
            }
            if !out.is_empty() && stream.write_all(&out).is_err() {
                return;
            }
            if consumed == 0 {
                break;
            }
        }
    }
}

pub(crate) fn ws_server(script: Script) -> RawServer {
    let connections = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    RawServer::start(move |stream| {
        let n = connections.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        serve_ws(stream, n, script)
    })
}

pub(crate) fn ws_url(server: &RawServer) -> String {
    format!("ws://{}/", server.addr())
}

#[test]
fn a_text_message_is_a_template_rendered_per_message() {
    let server = ws_server(Script::Collect);
    let url = ws_url(&server);
    let message = "msg {{seq}} from {{conn}} #{{iter}}";
    let run = run_ok(&[
        "run",
        "--io",
        "tokio",
        &url,
        "-c",
        "2",
        "-t",
        "1",
        "-n",
        "6",
        "--ws-message",
        message,
    ]);
    run.assert_accounted("templated");
    assert_eq!(run.count("/requests/success"), 6);
    let got = COLLECTED.lock().unwrap().clone();
    assert_eq!(got.len(), 6, "{got:?}");
    let mut seqs: Vec<u64> = Vec::new();
    let mut per_conn = std::collections::BTreeMap::<String, Vec<u64>>::new();
    for text in &got {
        let words: Vec<&str> = text.split(' ').collect();
        assert_eq!(
            (words.len(), words[0], words[2]),
            (5, "msg", "from"),
            "{text}"
        );
        seqs.push(words[1].parse().unwrap());
        let iter: u64 = words[4].strip_prefix('#').unwrap().parse().unwrap();
        per_conn.entry(words[3].to_string()).or_default().push(iter);
    }
    // Two connections (two users), each counting its own messages from 0.
    assert_eq!(per_conn.len(), 2, "{got:?}");
    for iters in per_conn.values() {
        let expected: Vec<u64> = (0..iters.len() as u64).collect();
        assert_eq!(iters, &expected, "{got:?}");
    }
    seqs.sort_unstable();
    assert_eq!(seqs, [0, 1, 2, 3, 4, 5], "{got:?}");
}

#[test]
fn a_server_that_closes_mid_run_has_its_close_codes_counted_and_the_run_ends() {
    let server = ws_server(Script::CloseAfterThree);
    let url = ws_url(&server);
    let run = run_stampede(
        binary(),
        &[
            "run",
            "--io",
            "tokio",
            &url,
            "-c",
            "1",
            "-n",
            "10",
            "--timeout",
            "5s",
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    run.assert_accounted("closed mid-run");
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
fn a_refused_upgrade_a_wrong_accept_key_and_a_hang_up_are_upgrade_errors() {
    let refusing = RawServer::start(|stream| {
        answer_each_request(stream, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    });
    let run = run_stampede(
        binary(),
        &[
            "run",
            "--io",
            "tokio",
            &ws_url(&refusing),
            "-c",
            "1",
            "-n",
            "3",
        ],
    );
    assert!(run.json.is_some(), "{}", run.stderr());
    run.assert_accounted("refused upgrade");
    assert_eq!(run.count("/errors/ws_upgrade_refused"), 3);
    let sample = run.result()["error_samples"]["ws_upgrade_refused"][0].to_string();
    assert!(sample.contains("200 OK, not 101"), "{sample}");

    let wrong_key = RawServer::start(|mut stream| {
        if stampede_testkit::read_request_head(&mut stream) {
            let _ = stream.write_all(
                b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n",
            );
            let _ = stream.read(&mut [0u8; 64]);
        }
    });
    let run = run_stampede(
        binary(),
        &[
            "run",
            "--io",
            "tokio",
            &ws_url(&wrong_key),
            "-c",
            "1",
            "-n",
            "2",
        ],
    );
    assert!(run.json.is_some(), "{}", run.stderr());
    run.assert_accounted("wrong accept key");
    assert_eq!(run.count("/errors/ws_upgrade_refused"), 2);
    let sample = run.result()["error_samples"]["ws_upgrade_refused"][0].to_string();
    assert!(sample.contains("Sec-WebSocket-Accept"), "{sample}");

    let hangs_up = RawServer::start(|mut stream| {
        stampede_testkit::read_request_head(&mut stream);
    });
    let run = run_stampede(
        binary(),
        &[
            "run",
            "--io",
            "tokio",
            &ws_url(&hangs_up),
            "-c",
            "1",
            "-n",
            "2",
        ],
    );
    assert!(run.json.is_some(), "{}", run.stderr());
    run.assert_accounted("closed before the answer");
    assert_eq!(run.count("/errors/ws_upgrade_refused"), 2);
    let sample = run.result()["error_samples"]["ws_upgrade_refused"][0].to_string();
    assert!(sample.contains("before answering the upgrade"), "{sample}");
}

#[test]
fn a_masked_frame_from_the_server_is_a_protocol_error_with_its_reason() {
    let server = ws_server(Script::MaskedEcho);
    let url = ws_url(&server);
    let run = run_stampede(
        binary(),
        &["run", "--io", "tokio", &url, "-c", "1", "-n", "3"],
    );
    assert!(run.json.is_some(), "{}", run.stderr());
    run.assert_accounted("masked from the server");
    // Each message fails its connection: three connections, three errors.
    assert_eq!(run.count("/errors/ws_protocol"), 3);
    assert_eq!(run.count("/requests/success"), 0);
    let sample = run.result()["error_samples"]["ws_protocol"][0].to_string();
    assert!(sample.contains("masked frame from the server"), "{sample}");
    assert_eq!(server.accepted(), 3);
}

#[test]
fn wss_goes_through_the_same_tls_as_https() {
    let serve = ServeProcess::start(&["--tls"]);
    let url = format!("wss://127.0.0.1:{}/ws/echo", serve.port);
    let run = run_ok(&[
        "run",
        "--io",
        "tokio",
        &url,
        "--insecure",
        "-c",
        "2",
        "-n",
        "50",
    ]);
    run.assert_accounted("wss");
    assert_eq!(run.count("/websocket/messages_received"), 50);
    assert_eq!(run.count("/websocket/setup/count"), 2);
    assert_eq!(run.count("/websocket/connections"), 2);
    assert_eq!(
        run.result()["websocket"]["close_codes"],
        serde_json::json!({"1000": 2})
    );
}

#[test]
fn http_flags_with_a_ws_url_are_refused_in_one_line() {
    for (flags, says) in [
        (&["--http2"][..], "drop --http2"),
        (&["--pipeline", "4"], "drop --pipeline"),
        (&["-m", "POST"], "drop -m"),
        (&["-b", "x"], "drop -b"),
        (&["--sse"], "drop --sse"),
    ] {
        let mut args = vec!["run", "ws://127.0.0.1:9/", "-n", "1"];
        args.extend(flags);
        let out = stampede_testkit::stampede(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{flags:?}: {stderr}");
        assert!(stderr.contains(says), "{flags:?}: {stderr}");
    }
    let out = stampede_testkit::stampede(&["run", "http://127.0.0.1:9/", "--ws-binary"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("need a ws:// or wss:// URL"), "{stderr}");
}
