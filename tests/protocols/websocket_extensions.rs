//! What a WebSocket client offers in its upgrade beyond the key:
//! subprotocols (`--ws-subprotocol`, RFC 6455 §4.1: the server's choice
//! must be one offered, else the connection fails) and
//! `permessage-deflate` (`--ws-deflate`, RFC 7692: messages compressed
//! both ways once agreed; a server that answers without it is used
//! uncompressed, and the result says so). Against Python's `websockets`
//! server (compression is on by default there, with its own window and
//! memory settings), the built-in target (it picks the first subprotocol
//! offered and serves no extension), and hand-rolled servers that choose
//! what was not offered or set RSV1 unasked.

use stampede_testkit::{
    binary, run_ok, run_stampede, skip_or_fail, tool_or_skip, RawServer, ServeProcess,
};
use stampede_websocket::accept_key;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn the_target_picks_the_first_subprotocol_and_refuses_deflate_which_runs_uncompressed() {
    let serve = ServeProcess::start(&[]);
    let url = format!("ws://127.0.0.1:{}/ws/echo", serve.port);
    let run = run_ok(&[
        "run",
        &url,
        "-c",
        "2",
        "-t",
        "1",
        "-n",
        "20",
        "--ws-subprotocol",
        "chat.v2",
        "--ws-subprotocol",
        "chat",
        "--ws-deflate",
    ]);
    run.assert_accounted("target subprotocol");
    let ws = &run.result()["websocket"];
    assert_eq!(run.count("/requests/success"), 20, "{ws}");
    assert_eq!(
        ws["subprotocols"],
        serde_json::json!({"chat.v2": 2}),
        "{ws}"
    );
    assert_eq!(run.count("/websocket/deflate_refused"), 2, "{ws}");
    assert!(ws.get("deflated").is_none(), "{ws}");
    // Uncompressed: "hello" masked is 11 bytes a message, each close 8.
    assert_eq!(run.count("/websocket/bytes_sent"), 20 * 11 + 2 * 8, "{ws}");
}

/// An echo server in Python's `websockets` that speaks subprotocol `chat`
/// only and compresses as it does by default; once `expected` connections
/// have ended it prints, as one JSON line, the texts it read, the
/// subprotocol and the extensions of each connection (its port first).
const PYTHON_SERVER: &str = r#"
import asyncio, json, sys
from websockets.asyncio.server import serve

expected = int(sys.argv[1])
seen = {"texts": [], "subprotocols": [], "extensions": []}
ended = 0

async def echo(ws):
    global ended
    async for message in ws:
        seen["texts"].append(message)
        await ws.send(message)
    seen["subprotocols"].append(ws.subprotocol)
    seen["extensions"].append([e.name for e in ws.protocol.extensions])
    ended += 1
    if ended == expected:
        done.set()

async def main():
    global done
    done = asyncio.Event()
    async with serve(echo, "127.0.0.1", 0, subprotocols=["chat"]) as server:
        print(server.sockets[0].getsockname()[1], flush=True)
        await done.wait()
    print(json.dumps(seen), flush=True)

asyncio.run(main())
"#;

/// The version .ci/run installs: the one this test was written against.
const PACKAGE: &str = "websockets==17.4";

#[test]
fn python_websockets_agrees_a_subprotocol_and_deflate_and_reads_every_message_whole() {
    let Some(python) = tool_or_skip("python3") else {
        return;
    };
    let probe = Command::new(&python)
        .args(["-c", "import websockets.asyncio.server"])
        .output()
        .expect("python3 runs");
    if !probe.status.success() {
        skip_or_fail(
            &format!("{} cannot import websockets", python.display()),
            &format!("pip install {PACKAGE} (into the python3 on PATH)"),
        );
        return;
    }
    let mut server = Command::new(&python)
        .args(["-c", PYTHON_SERVER, "3"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the websockets server starts");
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let port = lines.next().expect("a port line").unwrap();
    let url = format!("ws://127.0.0.1:{port}/");
    // 420 bytes a message, mostly a repeated word: deflate shrinks it.
    let padding = "stampede ".repeat(45);
    let message = format!("{{{{seq}}}} {padding}");
    let run = run_stampede(
        binary(),
        &[
            "run",
            &url,
            "-c",
            "3",
            "-t",
            "1",
            "-n",
            "300",
            "--ws-subprotocol",
            "x-unknown",
            "--ws-subprotocol",
            "chat",
            "--ws-deflate",
            "--ws-message",
            &message,
        ],
    );
    let seen = lines.next();
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    run.assert_accounted("python deflate");
    let ws = &run.result()["websocket"];
    assert_eq!(run.count("/requests/success"), 300, "{ws}");
    assert_eq!(run.count("/websocket/messages_received"), 300, "{ws}");
    assert_eq!(ws["subprotocols"], serde_json::json!({"chat": 3}), "{ws}");
    assert_eq!(run.count("/websocket/deflated"), 3, "{ws}");
    // Compressed: far fewer bytes than 300 messages of 420 went out.
    let sent = run.count("/websocket/bytes_sent");
    assert!(sent < 300 * 420 / 4, "{sent} bytes sent: {ws}");
    let seen: serde_json::Value =
        serde_json::from_str(&seen.expect("the server's record").unwrap()).unwrap();
    assert_eq!(
        seen["subprotocols"],
        serde_json::json!(["chat", "chat", "chat"])
    );
    let deflate = serde_json::json!(["permessage-deflate"]);
    assert_eq!(
        seen["extensions"],
        serde_json::json!([deflate, deflate, deflate])
    );
    // Every message arrived whole, inflated by a decoder nobody here wrote.
    let mut texts: Vec<String> = (seen["texts"].as_array().unwrap().iter())
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    texts.sort_by_key(|t| t.split(' ').next().unwrap().parse::<u64>().unwrap());
    let expected: Vec<String> = (0..300).map(|i| format!("{i} {padding}")).collect();
    assert_eq!(texts, expected);
}

/// Reads an upgrade request from `stream` and answers it 101 with the
/// right key and `extra` header lines; false when the client went away.
fn upgrade_with(stream: &mut TcpStream, extra: &str) -> bool {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte).unwrap_or(0) == 0 {
            return false;
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
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {}\r\n{extra}\r\n",
        accept_key(&key)
    );
    stream.write_all(answer.as_bytes()).is_ok()
}

/// A server that answers every upgrade with `extra`, then waits.
fn answering(extra: &'static str) -> RawServer {
    RawServer::start(move |mut stream| {
        if upgrade_with(&mut stream, extra) {
            let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
            let _ = stream.read(&mut [0u8; 256]);
        }
    })
}

#[test]
fn an_answer_the_client_did_not_offer_fails_the_upgrade_with_its_reason() {
    for (extra, flags, says) in [
        (
            "Sec-WebSocket-Protocol: evil\r\n",
            &["--ws-subprotocol", "chat"][..],
            "subprotocol \\\"evil\\\", which was not offered (chat)",
        ),
        (
            "Sec-WebSocket-Protocol: chat\r\n",
            &[],
            "which was not offered (none was)",
        ),
        (
            "Sec-WebSocket-Extensions: permessage-deflate\r\n",
            &[],
            "none offered",
        ),
        (
            "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits=9\r\n",
            &["--ws-deflate"],
            "which the offer did not allow",
        ),
    ] {
        let server = answering(extra);
        let url = format!("ws://{}/", server.addr());
        let mut args = vec!["run", &url, "-c", "1", "-n", "2"];
        args.extend_from_slice(flags);
        let run = run_stampede(binary(), &args);
        assert!(run.json.is_some(), "{extra}: {}", run.stderr());
        run.assert_accounted(extra);
        assert_eq!(run.count("/errors/ws_upgrade_refused"), 2, "{extra}");
        let sample = run.result()["error_samples"]["ws_upgrade_refused"][0].to_string();
        assert!(sample.contains(says), "{extra}: {sample}");
    }
}

#[test]
fn rsv1_without_deflate_agreed_is_a_protocol_error() {
    let server = RawServer::start(|mut stream| {
        if !upgrade_with(&mut stream, "") {
            return;
        }
        // After the client's message, a "compressed" reply nobody agreed to.
        let _ = stream.read(&mut [0u8; 256]);
        let _ = stream.write_all(&[0xc1, 0x02, b'h', b'i']);
        let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
        let _ = stream.read(&mut [0u8; 256]);
    });
    let url = format!("ws://{}/", server.addr());
    let run = run_stampede(binary(), &["run", &url, "-c", "1", "-n", "2"]);
    assert!(run.json.is_some(), "{}", run.stderr());
    run.assert_accounted("rsv1 unasked");
    assert_eq!(run.count("/errors/ws_protocol"), 2);
    let sample = run.result()["error_samples"]["ws_protocol"][0].to_string();
    assert!(sample.contains("reserved bits 0b100"), "{sample}");
}

#[test]
fn a_bad_subprotocol_token_is_refused_in_one_line() {
    for (flags, says) in [
        (&["--ws-subprotocol", "a b"][..], "is not a token"),
        (
            &["--ws-subprotocol", "x", "--ws-subprotocol", "x"],
            "given twice",
        ),
    ] {
        let mut args = vec!["run", "ws://127.0.0.1:9/", "-n", "1"];
        args.extend_from_slice(flags);
        let out = stampede_testkit::stampede(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{flags:?}: {stderr}");
        assert!(stderr.contains(says), "{flags:?}: {stderr}");
    }
    let out = stampede_testkit::stampede(&["run", "http://127.0.0.1:9/", "--ws-deflate"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("need a ws:// or wss:// URL"), "{stderr}");
}
