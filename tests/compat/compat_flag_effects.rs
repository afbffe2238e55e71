//! What the compat flags that only the accepted-or-refused tables of
//! compat_frontends.rs name actually do: ab's `-s`, `-l` and `-r`, wrk's
//! `-T`, webbench's `--trace` and press's `--readfix`, each checked against
//! the tool's own source (cited at each test) on a loopback server made to
//! show the flag's effect.

use serde_json::Value;
use stampede_testkit::{
    binary, read_request_head, spawn_target, temp_dir, RawServer, TargetConfig,
};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One front-end run: exit status, output and the `--stampede-json` result.
struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    json: Value,
}

impl Out {
    fn u(&self, pointer: &str) -> u64 {
        self.json
            .pointer(pointer)
            .and_then(Value::as_u64)
            .unwrap_or_else(|| panic!("{pointer} missing in {}", self.json))
    }

    /// The rest of the stdout line that starts with `prefix` (after indentation).
    fn line(&self, prefix: &str) -> &str {
        self.stdout
            .lines()
            .map(str::trim_start)
            .find_map(|l| l.strip_prefix(prefix))
            .map(str::trim)
            .unwrap_or_else(|| panic!("no line {prefix:?} in\n{}", self.stdout))
    }
}

/// Runs `stampede TOOL ARGS... --stampede-json FILE`.
fn compat(tool: &str, args: &[&str]) -> Out {
    let dir = temp_dir(tool);
    let json_path = dir.join("result.json");
    let output = Command::new(binary())
        .arg(tool)
        .args(args)
        .arg("--stampede-json")
        .arg(&json_path)
        .output()
        .expect("the stampede binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let json = std::fs::read_to_string(&json_path)
        .map(|text| serde_json::from_str(&text).expect("valid JSON result"))
        .unwrap_or_else(|_| panic!("no JSON result\nstdout: {stdout}\nstderr: {stderr}"));
    let _ = std::fs::remove_dir_all(&dir);
    Out {
        code: output.status.code(),
        stdout,
        stderr,
        json,
    }
}

/// A 200 whose body is `len` bytes, on a connection kept open.
fn answer(len: usize) -> Vec<u8> {
    let mut reply = format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\n\r\n").into_bytes();
    reply.resize(reply.len() + len, b'x');
    reply
}

/// A server whose bodies alternate between 2 and 20 bytes, request by
/// request across connections; it adds up the body bytes it sent.
fn varying_lengths() -> (RawServer, Arc<AtomicU64>) {
    let served = Arc::new(AtomicU64::new(0));
    let (count, bytes) = (Arc::new(AtomicU64::new(0)), served.clone());
    let server = RawServer::start(move |mut stream: TcpStream| {
        while read_request_head(&mut stream) {
            let len = if count.fetch_add(1, Ordering::Relaxed) % 2 == 0 {
                2
            } else {
                20
            };
            bytes.fetch_add(len, Ordering::Relaxed);
            if stream.write_all(&answer(len as usize)).is_err() {
                return;
            }
        }
    });
    (server, served)
}

/// ab.c (httpd 2.4.x, support/ab.c), output_results: `if (nolength)
/// printf("Document Length:        Variable\n")`: under -l the length is
/// "Variable" whatever the responses were, and close_connection counts a
/// length unlike the first's as a failure only `if ... !nolength`.
#[test]
fn ab_l_reports_a_variable_length_and_no_length_failure() {
    let target = spawn_target(TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    });
    let same = format!("http://{}/", target.local_addr());
    let plain = compat("ab", &["-n", "10", &same]);
    assert_eq!(
        plain.line("Document Length:"),
        "515 bytes",
        "{}",
        plain.stdout
    );
    let fixed = compat("ab", &["-n", "10", "-l", &same]);
    assert_eq!(fixed.code, Some(0), "{}", fixed.stderr);
    assert_eq!(
        fixed.line("Document Length:"),
        "Variable",
        "{}",
        fixed.stdout
    );
    let html = compat("ab", &["-n", "10", "-l", "-w", &same]);
    assert!(
        html.stdout
            .contains("Document Length:</th><td colspan=2 bgcolor=white>Variable<"),
        "{}",
        html.stdout
    );

    let (server, served) = varying_lengths();
    let varying = compat("ab", &["-n", "10", "-c", "2", "-l", &server.url("/")]);
    assert_eq!(varying.code, Some(0), "{}", varying.stderr);
    assert_eq!(varying.line("Complete requests:"), "10");
    assert_eq!(varying.line("Failed requests:"), "0", "{}", varying.stdout);
    assert_eq!(varying.line("Document Length:"), "Variable");
    assert_eq!(varying.u("/bytes/body"), served.load(Ordering::Relaxed));
    assert_eq!(varying.u("/bytes/body"), 5 * 2 + 5 * 20);
}

/// ab.c (httpd 2.4.x), read_connection: a failed `apr_socket_recv` with
/// `recverrok` (-r) does `err_recv++; bad++; close_connection(c)` and goes
/// on; without -r, ab exits. The failure is then printed in the Receive
/// class: "(Connect: 0, Receive: N, Length: 0, Exceptions: 0)".
#[test]
fn ab_r_counts_receive_errors_and_finishes_the_run() {
    // Closing a socket with the request unread in it makes the kernel send a
    // reset: the client's read fails, as a receive error does in ab.
    let server = RawServer::start(|stream: TcpStream| {
        let mut peek = [0u8; 1];
        let _ = stream.peek(&mut peek);
        std::thread::sleep(Duration::from_millis(20));
        drop(stream);
    });
    let out = compat("ab", &["-n", "6", "-c", "2", "-r", &server.url("/")]);
    assert_eq!(out.line("Complete requests:"), "6", "{}", out.stdout);
    assert_eq!(out.line("Failed requests:"), "6");
    assert_eq!(
        out.line("(Connect:"),
        "0, Receive: 6, Length: 0, Exceptions: 0)",
        "{}",
        out.stdout
    );
    assert_eq!(out.u("/requests/errors"), 6);
    assert_eq!(out.u("/requests/sent"), 6, "every request of -n was tried");
}

/// ab.c (httpd 2.4.x): `-s` sets `aprtimeout` (default 30 s), how long
/// test() polls (`apr_pollset_poll(readbits, aprtimeout, ...)`) and how long
/// write_request waits. ab then exits ("apr_pollset_poll: The timeout
/// specified has expired"); stampede's front-end counts each request that
/// timed out instead (docs/compat.md), in ab's Receive class.
#[test]
fn ab_s_bounds_the_wait_for_a_response() {
    // Reads the request, never answers, and holds the connection until the
    // client lets it go.
    let server = RawServer::start(|mut stream: TcpStream| {
        if read_request_head(&mut stream) {
            let mut rest = [0u8; 64];
            while matches!(stream.read(&mut rest), Ok(n) if n > 0) {}
        }
    });
    let started = Instant::now();
    let out = compat("ab", &["-n", "2", "-c", "2", "-s", "1", &server.url("/")]);
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(10),
        "-s 1, not ab's default 30 s: {took:?}"
    );
    assert_eq!(out.json["plan"]["timeout_s"], 1.0);
    assert_eq!(out.json["plan"]["connect_timeout_s"], 1.0);
    assert_eq!(out.u("/errors/timeout"), 2, "{}", out.json["errors"]);
    assert_eq!(out.line("Failed requests:"), "2", "{}", out.stdout);
    assert_eq!(
        out.line("(Connect:"),
        "0, Receive: 2, Length: 0, Exceptions: 0)"
    );
}

/// wrk.c (wg/wrk), response_complete: `if (!stats_record(statistics.latency,
/// now - c->start)) thread->errors.timeout++;` with the latency histogram
/// limited to `cfg.timeout` (-T, default SOCKET_TIMEOUT_MS = 2000): a
/// response slower than -T is a timeout in "Socket errors" and no latency.
#[test]
fn wrk_t_makes_a_slower_response_a_timeout() {
    let target = spawn_target(TargetConfig {
        threads: 1,
        ..TargetConfig::default()
    });
    let slow = format!("http://{}/delay/500", target.local_addr());
    let run = |extra: &[&str]| {
        let mut args = vec!["-t1", "-c1", "-d1s"];
        args.extend(extra);
        args.push(&slow);
        compat("wrk", &args)
    };
    let patient = run(&[]);
    assert_eq!(patient.code, Some(0), "{}", patient.stderr);
    assert!(
        !patient.stdout.contains("Socket errors"),
        "the default 2 s waits out 500 ms: {}",
        patient.stdout
    );
    assert!(patient.u("/requests/success") >= 1, "{}", patient.stdout);

    let hasty = run(&["-T", "200ms"]);
    let timeouts = hasty.u("/errors/timeout");
    assert!(timeouts >= 1, "{}", hasty.json["errors"]);
    assert_eq!(
        hasty.line("Socket errors:"),
        format!("connect 0, read 0, write 0, timeout {timeouts}"),
        "{}",
        hasty.stdout
    );
    assert_eq!(hasty.json["plan"]["timeout_s"], 0.2);
    assert_eq!(
        hasty.u("/requests/success"),
        0,
        "no response came within 200 ms"
    );
}

/// webbench.c (EZLippi/WebBench), build_request: `if(method==METHOD_TRACE &&
/// http10<2) http10=2;`, then `TRACE path HTTP/1.1` and, `if(http10>1)`,
/// `Connection: close`: --trace speaks HTTP/1.1 even after `-1`.
#[test]
fn webbench_trace_sends_trace_over_http11_with_connection_close() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let server = RawServer::start(move |mut stream: TcpStream| {
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            match stream.read(&mut byte) {
                Ok(1) => head.push(byte[0]),
                _ => return,
            }
        }
        log.lock()
            .unwrap()
            .push(String::from_utf8_lossy(&head).into_owned());
        let _ = stream
            .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
    });
    for args in [&["--trace"][..], &["-1", "--trace"][..]] {
        seen.lock().unwrap().clear();
        let mut all = vec!["-t", "300ms", "-c", "1"];
        all.extend(args);
        let url = server.url("/path?q=1");
        all.push(&url);
        let out = compat("webbench", &all);
        assert_eq!(out.code, Some(0), "{args:?}: {}", out.stderr);
        assert_eq!(out.json["plan"]["method"], "TRACE");
        let requests = seen.lock().unwrap().clone();
        assert!(!requests.is_empty(), "{args:?}: no request arrived");
        for request in &requests {
            assert!(
                request.starts_with("TRACE /path?q=1 HTTP/1.1\r\n"),
                "{args:?}: {request}"
            );
            assert!(request.contains("Connection: close\r\n"), "{request}");
        }
    }
}

/// press_tool (qicosmos/cinatra before 7d957fe, "unify benchmark client"):
/// `-r, --readfix` made coro_http_client read each response as exactly the
/// first one's length (`async_read(head_buf_, total_len_)`) instead of
/// parsing it. stampede parses every response, says so once on stderr, and
/// counts responses of differing lengths exactly.
#[test]
fn press_readfix_is_noted_and_every_response_is_still_parsed() {
    let (server, served) = varying_lengths();
    let url = server.url("/");
    let fixed = compat("press", &["-c", "1", "-d", "300ms", "--readfix", "1", &url]);
    assert_eq!(fixed.code, Some(0), "{}", fixed.stderr);
    assert_eq!(
        fixed
            .stderr
            .lines()
            .filter(|l| l.contains("stampede parses every response"))
            .count(),
        1,
        "{}",
        fixed.stderr
    );
    let completed = fixed.u("/requests/completed");
    assert!(completed >= 2, "{completed} responses");
    assert_eq!(fixed.u("/requests/errors"), 0);
    assert_eq!(fixed.u("/requests/success"), completed);
    // Two lengths, alternating from 2: the bytes of exactly those responses.
    let expected = (completed / 2) * 22 + (completed % 2) * 2;
    assert_eq!(
        fixed.u("/bytes/body"),
        expected,
        "served {}",
        served.load(Ordering::Relaxed)
    );

    let plain = compat("press", &["-c", "1", "-d", "300ms", "--readfix", "0", &url]);
    assert_eq!(plain.code, Some(0), "{}", plain.stderr);
    assert!(
        !plain.stderr.contains("stampede parses every response"),
        "{}",
        plain.stderr
    );
}
