//! `stampede run ws://…` when the server misbehaves or goes idle, on
//! every event loop (tokio, epoll, io_uring): what the client sends the
//! server (the close answering the server's, the close a bad frame earns,
//! a close before it drops a connection that did not reply), and what it
//! books (a reset is a drop with 1006 as an end without a close is; a
//! message the server closed its fresh connection on before it could go
//! goes on the next connection; no error sample without a count). In the
//! open model an idle connection is read: a server's close is booked at
//! once and a server's pings are answered.

use crate::websocket_client::{python_with_websockets, stats};
use stampede_testkit::{run_on_loop, RawServer, Run, ServeProcess, EVENT_LOOPS};
use stampede_websocket::{
    accept_key, encode_close, encode_message, Decoder, Event, MessageKind, Role,
};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What a [`fault_server`] does at a connection's third message.
#[derive(Clone, Copy, Debug)]
enum Fault {
    /// Echoes it, then closes with 1001.
    Close,
    /// Answers with a masked frame (a server must not mask, §5.1).
    Masked,
    /// Resets the TCP connection (SO_LINGER 0).
    Reset,
    /// Answers nothing (nor anything after).
    Silent,
    /// Odd connections: a close (1000) right behind the upgrade's answer,
    /// in the same write; even ones echo every message.
    CloseAtUpgradeOnOdd,
}

/// A server doing `fault`; what the client sent after the fault, per
/// connection, is written in the log: `close CODE`, or `end` (the TCP
/// connection ended with no close frame).
fn fault_server(fault: Fault) -> (RawServer, Arc<Mutex<Vec<String>>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let kept = log.clone();
    let connections = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let server = RawServer::start(move |stream| {
        let n = connections.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        if let Some(line) = serve(stream, fault, n) {
            kept.lock().unwrap().push(line);
        }
    });
    (server, log)
}

/// Serves connection `n` by `fault`; what the client sent after it.
fn serve(mut stream: TcpStream, fault: Fault, n: u64) -> Option<String> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte).ok()? == 0 {
            return None;
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let key = head
        .lines()
        .find_map(|l| l.strip_prefix("Sec-WebSocket-Key: "))?
        .to_string();
    let mut answer = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {}\r\n\r\n",
        accept_key(&key)
    )
    .into_bytes();
    let close_at_once = matches!(fault, Fault::CloseAtUpgradeOnOdd) && n % 2 == 1;
    if close_at_once {
        encode_close(&mut answer, Some(1000), "", None).unwrap();
    }
    stream.write_all(&answer).ok()?;
    let mut decoder = Decoder::new(Role::Server, 1 << 20);
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let mut seen = 0;
    // After the fault: what the client sends next.
    let mut after = close_at_once;
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    loop {
        let got = stream.read(&mut chunk).unwrap_or(0);
        if got == 0 {
            return after.then(|| "end".to_string());
        }
        buf.extend_from_slice(&chunk[..got]);
        loop {
            let decoded = decoder
                .decode(&mut buf)
                .expect("the client's frames are valid");
            let consumed = decoded.consumed;
            let mut out = Vec::new();
            match decoded.event {
                None => {}
                Some(Event::Close(frame)) => {
                    let code = frame.map_or(1005, |f| f.code);
                    if !after {
                        // The client's own close: answered.
                        encode_close(&mut out, Some(code), "", None).unwrap();
                        let _ = stream.write_all(&out);
                        return None;
                    }
                    return Some(format!("close {code}"));
                }
                Some(Event::Text(text)) if !after => {
                    seen += 1;
                    let third = seen == 3 && !matches!(fault, Fault::CloseAtUpgradeOnOdd);
                    let mask = (third && matches!(fault, Fault::Masked)).then_some([1, 2, 3, 4]);
                    match fault {
                        Fault::Reset if third => {
                            let _ =
                                socket2::SockRef::from(&stream).set_linger(Some(Duration::ZERO));
                            return None;
                        }
                        Fault::Silent if third => after = true,
                        _ => encode_message(&mut out, MessageKind::Text, text.as_bytes(), mask),
                    }
                    if third && matches!(fault, Fault::Close) {
                        encode_close(&mut out, Some(1001), "", None).unwrap();
                    }
                    after |= third;
                }
                Some(_) => {}
            }
            buf.drain(..consumed);
            if !out.is_empty() && stream.write_all(&out).is_err() {
                return after.then(|| "end".to_string());
            }
            if consumed == 0 {
                break;
            }
        }
    }
}

/// What the server logged (taken), once it has logged something (its
/// thread may still be reading when the run ends): at most 2 s.
fn logged(log: &Mutex<Vec<String>>) -> Vec<String> {
    for _ in 0..100 {
        let lines = std::mem::take(&mut *log.lock().unwrap());
        if !lines.is_empty() {
            return lines;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Vec::new()
}

/// `args` (a `ws://` run, `-t 1`) on every event loop this host has.
fn on_every_loop(args: &[&str], mut check: impl FnMut(&str, &Run)) {
    for io in EVENT_LOOPS {
        let mut all = args.to_vec();
        all.extend(["-t", "1"]);
        let Some(run) = run_on_loop(io, &all) else {
            continue;
        };
        assert_eq!(run.code(), Some(0), "--io {io}: {}", run.stderr());
        run.assert_accounted(io);
        check(io, &run);
    }
}

/// The error classes with a sample have a count.
fn assert_samples_counted(io: &str, run: &Run) {
    let result = run.result();
    let empty = serde_json::Map::new();
    let samples = result["error_samples"].as_object().unwrap_or(&empty);
    for class in samples.keys() {
        let count = result["errors"][class].as_u64().unwrap_or(0);
        assert!(
            count > 0,
            "--io {io}: a sample of {class} with no count: {result}"
        );
    }
}

#[test]
fn the_servers_close_and_a_bad_frame_are_answered_with_a_close_on_every_loop() {
    // The third message: echoed before the close, failed by the bad frame.
    let cases = [
        (Fault::Close, "close 1001", 4),
        (Fault::Masked, "close 1002", 3),
    ];
    for (fault, sent, success) in cases {
        let (server, log) = fault_server(fault);
        let url = format!("ws://{}/", server.addr());
        on_every_loop(
            &["run", &url, "-c", "1", "-n", "4", "--timeout", "3s"],
            |io, run| {
                assert_eq!(
                    run.count("/requests/success"),
                    success,
                    "--io {io} {fault:?}"
                );
                let ws = &run.result()["websocket"];
                if let Fault::Close = fault {
                    assert_eq!(ws["close_codes"]["1001"], 1, "--io {io}: {ws}");
                }
                // RFC 6455 §5.5.1, §7.1.7: the client answers with a close.
                assert_eq!(logged(&log), [sent], "--io {io} {fault:?}");
                assert_samples_counted(io, run);
            },
        );
    }
}

#[test]
fn a_reset_connection_is_a_drop_with_1006_on_every_loop() {
    let (server, _log) = fault_server(Fault::Reset);
    let url = format!("ws://{}/", server.addr());
    on_every_loop(
        &["run", &url, "-c", "1", "-n", "8", "--timeout", "3s"],
        |io, run| {
            let ws = &run.result()["websocket"];
            // Two connections reset at their third message, a third one ended
            // by the client's close (1000).
            assert_eq!(run.count("/requests/success"), 6, "--io {io}: {ws}");
            assert_eq!(run.count("/errors/reset"), 2, "--io {io}: {}", run.result());
            assert_eq!(run.count("/websocket/dropped"), 2, "--io {io}: {ws}");
            assert_eq!(
                ws["close_codes"],
                serde_json::json!({"1000": 1, "1006": 2}),
                "--io {io}: {ws}"
            );
        },
    );
}

#[test]
fn a_reply_timeout_closes_with_1008_before_dropping_on_every_loop() {
    let (server, log) = fault_server(Fault::Silent);
    let url = format!("ws://{}/", server.addr());
    on_every_loop(
        &["run", &url, "-c", "1", "-n", "3", "--timeout", "500ms"],
        |io, run| {
            assert_eq!(run.count("/requests/success"), 2, "--io {io}");
            assert_eq!(
                run.count("/errors/timeout"),
                1,
                "--io {io}: {}",
                run.result()
            );
            // The close reaches the server before the connection's end.
            assert_eq!(logged(&log), ["close 1008"], "--io {io}");
        },
    );
}

#[test]
fn a_message_the_server_closed_its_new_connection_on_goes_on_the_next_on_every_loop() {
    let (server, _log) = fault_server(Fault::CloseAtUpgradeOnOdd);
    let url = format!("ws://{}/", server.addr());
    on_every_loop(
        &["run", &url, "-c", "1", "-n", "4", "--timeout", "3s"],
        |io, run| {
            let ws = &run.result()["websocket"];
            // Connection 1 is closed before the first message leaves: the
            // message goes on connection 2, with the other three.
            assert_eq!(
                run.count("/requests/sent"),
                4,
                "--io {io}: {}",
                run.result()
            );
            assert_eq!(
                run.count("/requests/success"),
                4,
                "--io {io}: {}",
                run.result()
            );
            assert_eq!(run.count("/websocket/messages_sent"), 4, "--io {io}: {ws}");
            assert_eq!(run.count("/websocket/dropped"), 1, "--io {io}: {ws}");
            assert_samples_counted(io, run);
        },
    );
}

#[test]
fn an_idle_connection_sees_the_servers_close_on_every_loop_under_a_rate() {
    // A rate in total (the open model) and per connection (`--ws-rate`).
    let rates = [["-r", "2"], ["--ws-rate", "2"]];
    for (io, rate) in EVENT_LOOPS
        .iter()
        .flat_map(|io| rates.map(|rate| (*io, rate)))
    {
        let serve = ServeProcess::start(&["--idle-timeout", "300ms"]);
        let url = format!("ws://127.0.0.1:{}/ws/echo", serve.port);
        // A message every 500 ms on one connection: each finds its
        // connection closed by the server (1001) while idle, and goes on
        // a new one.
        let args = [
            "run",
            &url,
            rate[0],
            rate[1],
            "-c",
            "1",
            "-d",
            "3s",
            "-t",
            "1",
            "--timeout",
            "2s",
        ];
        let Some(run) = run_on_loop(io, &args) else {
            continue;
        };
        let io = format!("{io} {}", rate[0]);
        assert_eq!(run.code(), Some(0), "--io {io}: {}", run.stderr());
        run.assert_accounted(&io);
        let ws = &run.result()["websocket"];
        let served = stats(serve.port);
        let sent = run.count("/websocket/messages_sent");
        assert!(sent >= 4, "--io {io}: {ws}");
        assert_eq!(
            run.count("/requests/success"),
            sent,
            "--io {io}: {}",
            run.result()
        );
        assert_eq!(served["ws_messages_in"], sent, "--io {io}: {served}");
        // Every connection was closed by the server while idle (the last
        // one maybe by the client's close at the end).
        let connections = run.count("/websocket/connections");
        assert!(connections >= 4, "--io {io}: {ws}");
        let by_server = ws["close_codes"]["1001"].as_u64().unwrap_or(0);
        assert!(by_server + 1 >= connections, "--io {io}: {ws}");
        assert_eq!(
            run.count("/websocket/dropped"),
            by_server,
            "--io {io}: {ws}"
        );
    }
}

/// A `websockets` echo server that pings every 0.3 s and gives a
/// connection up after 0.3 s without a pong; prints its port, then each
/// connection's close code as it ends.
const PINGING_SERVER: &str = r#"
import asyncio
from websockets.asyncio.server import serve

async def echo(ws):
    try:
        async for message in ws:
            await ws.send(message)
    finally:
        print(ws.close_code, flush=True)

async def main():
    async with serve(echo, "127.0.0.1", 0, ping_interval=0.3, ping_timeout=0.3) as server:
        print(server.sockets[0].getsockname()[1], flush=True)
        await asyncio.Future()

asyncio.run(main())
"#;

#[test]
fn an_idle_connection_of_the_open_model_answers_the_servers_pings_on_every_loop() {
    let Some(python) = python_with_websockets() else {
        return;
    };
    for io in EVENT_LOOPS {
        let mut server = Command::new(&python)
            .args(["-c", PINGING_SERVER, "1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the websockets server starts");
        let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
        let port = lines.next().expect("a port line").unwrap();
        let url = format!("ws://127.0.0.1:{port}/");
        // One message a second: the server pings about three times between two.
        let args = ["run", &url, "-r", "1", "-c", "1", "-d", "3s", "-t", "1"];
        let run = run_on_loop(io, &args);
        // Its last close is written once the client's close came.
        std::thread::sleep(Duration::from_millis(300));
        let _ = server.kill();
        let _ = server.wait();
        let closes: Vec<String> = lines.map_while(Result::ok).collect();
        let Some(run) = run else {
            continue;
        };
        assert_eq!(run.code(), Some(0), "--io {io}: {}", run.stderr());
        run.assert_accounted(io);
        let ws = &run.result()["websocket"];
        assert_eq!(
            run.count("/requests/errors"),
            0,
            "--io {io}: {}",
            run.result()
        );
        assert_eq!(run.count("/websocket/connections"), 1, "--io {io}: {ws}");
        assert!(
            run.count("/websocket/pings_answered") >= 4,
            "--io {io}: {ws}"
        );
        // The one connection ended with the client's close, not a ping timeout.
        assert_eq!(closes, ["1000"], "--io {io}: {ws}");
    }
}

/// A server that answers every upgrade with a page is no WebSocket
/// target, as a closed port is no target: the run exits 2 with one line
/// saying so, a duration run gives up (`no_connection`), and the
/// `websocket` section is there with zeros, so a script reading it finds
/// the figures.
#[test]
fn a_server_refusing_every_upgrade_exits_2_with_a_zero_websocket_section_on_every_loop() {
    let refusing = RawServer::start(|stream| {
        stampede_testkit::answer_each_request(
            stream,
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\nno",
        )
    });
    let url = crate::websocket_client::ws_url(&refusing);
    for io in EVENT_LOOPS {
        let Some(run) = run_on_loop(io, &["run", &url, "-c", "2", "-n", "4", "-t", "1"]) else {
            continue;
        };
        assert_eq!(run.code(), Some(2), "--io {io}: {}", run.stderr());
        assert!(
            run.stderr()
                .contains("no WebSocket connection was upgraded: 4 ws_upgrade_refused"),
            "--io {io}: {}",
            run.stderr()
        );
        run.assert_accounted(io);
        let ws = &run.result()["websocket"];
        assert_eq!(ws["connections"], 0, "--io {io}: {ws}");
        assert_eq!(ws["messages_sent"], 0, "--io {io}: {ws}");
        // A duration run gives up as one against a closed port does.
        let args = [
            "run",
            &url,
            "-c",
            "2",
            "-d",
            "20s",
            "--connect-timeout",
            "300ms",
        ];
        let run = run_on_loop(io, &[&args[..], &["-t", "1"]].concat()).unwrap();
        assert_eq!(run.code(), Some(2), "--io {io}: {}", run.stderr());
        assert_eq!(
            run.result()["stop_reason"],
            "no_connection",
            "--io {io}: {}",
            run.result()
        );
    }
    // One upgrade that succeeds is a WebSocket run like any other: 0.
    let serve = ServeProcess::start(&[]);
    let echo = format!("ws://127.0.0.1:{}/ws/echo", serve.port);
    on_every_loop(&["run", &echo, "-c", "1", "-n", "2"], |io, run| {
        assert_eq!(run.count("/websocket/connections"), 1, "--io {io}");
        // The summary counts messages on upgraded connections, not
        // requests over keep-alive HTTP/1.1.
        let head = run.stdout();
        assert!(
            head.contains("2 messages, 1 connection, 1 thread, WebSocket,"),
            "--io {io}: {head}"
        );
    });
}
