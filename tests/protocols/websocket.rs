//! `stampede serve`'s WebSocket routes, checked by a peer nobody
//! here wrote: the Python `websockets` client (PyPI) against `/ws/echo`
//! (text and binary, fragmented, empty and large messages come back
//! exactly; pings are answered; the close handshake ends with 1000) and
//! `/ws/push/5/20` (five messages about 20 ms apart, then a close with
//! 1000); the server's `/stats` counts the same messages. Raw sockets check what no polite client sends: the refusals of a
//! handshake without the upgrade (RFC 6455 §4.2.1, §4.4), and an unmasked
//! frame from a client answered with close code 1002 (§5.1).

use stampede_testkit::{http_get, skip_or_fail, tool_or_skip, ServeProcess};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

/// The version .ci/run installs: the one this test was written against.
const PACKAGE: &str = "websockets==17.4";

/// The client: `python3 -c CLIENT URL MODE`, one JSON line on stdout.
const CLIENT: &str = r#"
import asyncio, json, os, sys, time
from websockets.asyncio.client import connect

async def echo(url):
    # Text (ASCII, multi-byte UTF-8, empty, past 64 KiB) and binary (every
    # byte value, empty, 200 KB), then a fragmented message of each kind.
    messages = ["hello", "héllo wörld ✓", "", "x" * 70000, bytes(range(256)), b"",
                os.urandom(200000)]
    messages += [f"text {i}" for i in range(20)] + [os.urandom(i * 37) for i in range(20)]
    echoed = 0
    async with connect(url, max_size=None) as ws:
        for m in messages:
            await ws.send(m)
            back = await ws.recv()
            assert back == m and type(back) == type(m), (len(m), len(back))
            echoed += 1
        for fragments in (["Hel", "lo"], [b"\x00", b"", b"\xff"]):
            await ws.send(fragments)
            back = await ws.recv()
            assert back == fragments[0][:0].join(fragments), back
            echoed += 1
        latency = await (await ws.ping(b"are you there"))
    print(json.dumps({"echoed": echoed, "pong": latency >= 0,
                      "close_sent": ws.protocol.close_sent.code,
                      "close_rcvd": ws.protocol.close_rcvd.code}))

async def push(url):
    got, times = [], []
    async with connect(url) as ws:
        async for m in ws:
            times.append(time.monotonic())
            got.append(m)
    gaps = [round((b - a) * 1000, 1) for a, b in zip(times, times[1:])]
    print(json.dumps({"messages": got, "gaps_ms": gaps, "span_ms": round((times[-1] - times[0]) * 1000, 1),
                      "close_code": ws.close_code}))

url, mode = sys.argv[1], sys.argv[2]
asyncio.run(echo(url) if mode == "echo" else push(url))
"#;

/// python3 with `websockets`, or `None` (skipped) under the testkit's rule.
fn python_with_websockets() -> Option<std::path::PathBuf> {
    let python = tool_or_skip("python3")?;
    let probe = Command::new(&python)
        .args(["-c", "import websockets.asyncio.client"])
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

/// The server's `/stats` counters.
fn stats(port: u16) -> serde_json::Value {
    let body = http_get(port, "/stats").expect("/stats answers");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

/// Runs the client in `mode` against `url`; its JSON line.
fn client(python: &std::path::Path, url: &str, mode: &str) -> serde_json::Value {
    let out = Command::new(python)
        .args(["-c", CLIENT, url, mode])
        .output()
        .expect("the websockets client runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the client failed: {stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout} {stderr}"))
}

#[test]
fn python_websockets_gets_every_message_back_exactly() {
    let Some(python) = python_with_websockets() else {
        return;
    };
    let serve = ServeProcess::start(&[]);
    let url = format!("ws://127.0.0.1:{}/ws/echo", serve.port);
    let got = client(&python, &url, "echo");
    assert_eq!(got["echoed"], 7 + 20 + 20 + 2, "{got}");
    assert_eq!(got["pong"], true, "{got}");
    // The client closed with 1000 and the server answered with the same.
    assert_eq!(got["close_sent"], 1000, "{got}");
    assert_eq!(got["close_rcvd"], 1000, "{got}");
    // The server's books agree with the client's, message for message.
    let served = stats(serve.port);
    assert_eq!(served["ws_sessions"], 1, "{served}");
    assert_eq!(served["ws_messages_in"], got["echoed"], "{served}");
    assert_eq!(served["ws_messages_out"], got["echoed"], "{served}");
}

#[test]
fn python_websockets_gets_five_pushes_20_ms_apart_then_1000() {
    let Some(python) = python_with_websockets() else {
        return;
    };
    let serve = ServeProcess::start(&[]);
    let url = format!("ws://127.0.0.1:{}/ws/push/5/20", serve.port);
    let got = client(&python, &url, "push");
    assert_eq!(
        got["messages"],
        serde_json::json!(["0", "1", "2", "3", "4"]),
        "{got}"
    );
    assert_eq!(got["close_code"], 1000, "{got}");
    // The server keeps its schedule (a late timer does not shift the
    // rest), so the four gaps add up to 80 ms give or take the loaded
    // machine's wake-ups.
    let span = got["span_ms"].as_f64().expect("span_ms");
    assert!((70.0..400.0).contains(&span), "{got}");
    let served = stats(serve.port);
    assert_eq!(served["ws_messages_out"], 5, "{served}");
    assert_eq!(served["ws_messages_in"], 0, "{served}");
}

/// Sends `request` on a new connection; everything the server sent until
/// it closed or went quiet for 2 s.
fn exchange(port: u16, request: &[u8]) -> Vec<u8> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connects");
    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    s.write_all(request).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = s.read(&mut buf) {
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    got
}

fn handshake(path: &str, headers: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n{headers}Connection: Upgrade, close\r\n\r\n")
        .into_bytes()
}

#[test]
fn a_request_without_a_proper_upgrade_is_refused_in_one_line() {
    let serve = ServeProcess::start(&[]);
    let key = "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n";
    let cases = [
        ("no Upgrade", handshake("/ws/echo", ""), "426", "Upgrade: websocket\r\n"),
        (
            "version 8",
            handshake(
                "/ws/echo",
                &format!("Upgrade: websocket\r\nSec-WebSocket-Version: 8\r\n{key}"),
            ),
            "426",
            "Sec-WebSocket-Version: 13\r\n",
        ),
        (
            "a 4-byte key",
            handshake(
                "/ws/echo",
                "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: AAAAAA==\r\n",
            ),
            "400",
            "Sec-WebSocket-Key must be 16 bytes",
        ),
        (
            "POST",
            b"POST /ws/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                .to_vec(),
            "405",
            "Allow: GET\r\n",
        ),
        ("push without its numbers", handshake("/ws/push/5", ""), "404", "ws/push takes"),
    ];
    for (name, request, status, shows) in cases {
        let got = String::from_utf8_lossy(&exchange(serve.port, &request)).into_owned();
        assert!(
            got.starts_with(&format!("HTTP/1.1 {status} ")),
            "{name}: {got}"
        );
        assert!(got.contains(shows), "{name}: {got}");
        let body = got.split("\r\n\r\n").nth(1).unwrap_or_default();
        assert_eq!(body.lines().count(), 1, "{name}: one line: {got}");
    }
}

#[test]
fn the_handshake_answers_the_rfc_key_and_an_unmasked_frame_gets_1002() {
    let serve = ServeProcess::start(&[]);
    // RFC 6455 §1.3's key, a ping (masked, as a client must), then an
    // unmasked text frame, which §5.1 forbids a client.
    let mut request = b"GET /ws/echo HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n\
        Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
        Sec-WebSocket-Version: 13\r\n\r\n"
        .to_vec();
    request.extend_from_slice(&[0x89, 0x82, 1, 2, 3, 4, b'h' ^ 1, b'i' ^ 2]);
    request.extend_from_slice(&[0x81, 0x02, b'h', b'i']);
    let got = exchange(serve.port, &request);
    let head_end = got
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head")
        + 4;
    let head = String::from_utf8_lossy(&got[..head_end]);
    assert!(
        head.starts_with("HTTP/1.1 101 Switching Protocols\r\n"),
        "{head}"
    );
    assert!(
        head.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"),
        "{head}"
    );
    let frames = &got[head_end..];
    // The pong, unmasked, with the ping's payload.
    assert_eq!(frames[..4], [0x8a, 0x02, b'h', b'i'], "{frames:?}");
    // Then a close: FIN, opcode 8, unmasked, code 1002 and a reason.
    let close = &frames[4..];
    assert_eq!(close[0], 0x88, "{frames:?}");
    assert_eq!(usize::from(close[1]), close.len() - 2, "{frames:?}");
    assert_eq!(u16::from_be_bytes([close[2], close[3]]), 1002, "{frames:?}");
    let reason = String::from_utf8_lossy(&close[4..]);
    assert!(reason.contains("unmasked"), "{reason}");
}
