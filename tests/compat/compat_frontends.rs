//! The compat front-ends end to end: each seed command line (shortened) run
//! against the built-in target, with every figure of the tool's layout parsed
//! back and compared with the JSON result of the same run
//! (`--stampede-json`); the requests really sent (headers, methods, bodies,
//! versions); and every flag of each front-end's help accepted or refused
//! with one line and exit status 2.

use serde_json::Value;
use stampede_testkit::{binary, spawn_target, temp_dir, RawServer, ServerHandle, TargetConfig};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};

fn target() -> ServerHandle {
    spawn_target(TargetConfig {
        threads: 2,
        ..TargetConfig::default()
    })
}

fn url(target: &ServerHandle, path: &str) -> String {
    format!("http://{}{path}", target.local_addr())
}

/// One front-end run: its output, and its JSON result when it wrote one.
struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    json: Option<Value>,
}

impl Out {
    fn json(&self) -> &Value {
        self.json.as_ref().unwrap_or_else(|| {
            panic!(
                "no JSON result\nstdout: {}\nstderr: {}",
                self.stdout, self.stderr
            )
        })
    }

    fn u(&self, pointer: &str) -> u64 {
        self.json()
            .pointer(pointer)
            .and_then(Value::as_u64)
            .unwrap_or_else(|| panic!("{pointer} missing"))
    }

    fn f(&self, pointer: &str) -> f64 {
        self.json()
            .pointer(pointer)
            .and_then(Value::as_f64)
            .unwrap_or_else(|| panic!("{pointer} missing"))
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

    /// The first number on the line that starts with `prefix`.
    fn number(&self, prefix: &str) -> f64 {
        first_number(self.line(prefix))
    }
}

fn first_number(text: &str) -> f64 {
    let token: String = text
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    token
        .parse()
        .unwrap_or_else(|_| panic!("no number at the start of {text:?}"))
}

/// A figure with its unit (`2.01ms`, `243.36MB`, `49.39k`, `4.024GB`) in base
/// units, with the resolution of its last printed digit.
fn with_unit(text: &str) -> (f64, f64) {
    let number: String = text
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let decimals = number.split_once('.').map_or(0, |(_, d)| d.len());
    let value: f64 = number.parse().unwrap_or_else(|_| panic!("{text:?}"));
    let scale = match &text[number.len()..] {
        "us" | "" | "B" | "bytes" => 1.0,
        "ms" => 1e3,
        "s" => 1e6,
        "m" => 60e6,
        "k" => 1e3,
        "M" => 1e6,
        "KB" => 1024.0,
        "MB" => 1024.0 * 1024.0,
        "GB" => 1024.0 * 1024.0 * 1024.0,
        other => panic!("unit {other:?} in {text:?}"),
    };
    (value * scale, scale * 10f64.powi(-(decimals as i32)))
}

fn close(printed: f64, actual: f64, resolution: f64, what: &str) {
    assert!(
        (printed - actual).abs() <= resolution / 2.0 + 1e-9 * actual.abs().max(1.0),
        "{what}: printed {printed}, result {actual} (resolution {resolution})"
    );
}

fn close_unit(printed: &str, actual: f64, what: &str) {
    let (value, resolution) = with_unit(printed);
    close(value, actual, resolution, what);
}

/// Runs `stampede TOOL ARGS... [--stampede-json FILE]`.
fn compat(tool: &str, args: &[&str], json: bool) -> Out {
    let dir = temp_dir(tool);
    let json_path = dir.join("result.json");
    let mut command = Command::new(binary());
    command.arg(tool).args(args);
    if json {
        command.arg("--stampede-json").arg(&json_path);
    }
    let output = command.output().expect("the stampede binary runs");
    let json = std::fs::read_to_string(&json_path)
        .ok()
        .map(|text| serde_json::from_str(&text).expect("valid JSON result"));
    let _ = std::fs::remove_dir_all(&dir);
    Out {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        json,
    }
}

fn ran(tool: &str, args: &[&str]) -> Out {
    let out = compat(tool, args, true);
    assert_eq!(
        out.code,
        Some(0),
        "stdout: {}\nstderr: {}",
        out.stdout,
        out.stderr
    );
    assert_eq!(
        out.stdout
            .lines()
            .filter(|l| l.contains("stampede: honest p99"))
            .count(),
        1,
        "one closing stampede line"
    );
    out
}

fn ab_ms(us: u64) -> f64 {
    ((us + 500) / 1000) as f64
}

/// Every figure of ab's report against the JSON result.
fn check_ab(out: &Out, n: u64, concurrency: u64, keepalive: bool) {
    let completed = out.u("/requests/completed");
    let errors = out.u("/requests/errors");
    let elapsed = out.f("/elapsed_s");
    assert_eq!(out.u("/requests/sent"), n, "ab's -n is exact");
    assert_eq!(out.number("Complete requests:") as u64, completed + errors);
    assert_eq!(out.number("Failed requests:") as u64, errors);
    assert_eq!(out.number("Concurrency Level:") as u64, concurrency);
    assert_eq!(out.u("/plan/connections"), concurrency);
    close(
        out.number("Time taken for tests:"),
        elapsed,
        0.001,
        "time taken",
    );
    assert_eq!(
        out.number("Total transferred:") as u64,
        out.u("/bytes/received")
    );
    assert_eq!(out.number("HTML transferred:") as u64, out.u("/bytes/body"));
    close(
        out.number("Requests per second:"),
        out.f("/rps"),
        0.01,
        "rps",
    );
    let time_per_request: Vec<f64> = out
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("Time per request:"))
        .map(first_number)
        .collect();
    let per_response = elapsed * 1000.0 / completed as f64;
    close(
        time_per_request[0],
        per_response * concurrency as f64,
        0.001,
        "time per request",
    );
    close(time_per_request[1], per_response, 0.001, "across all");
    let kbytes = out.f("/bytes/received") / 1024.0 / elapsed;
    close(out.number("Transfer rate:"), kbytes, 0.01, "transfer rate");
    assert_eq!(out.stdout.contains("Keep-Alive requests:"), keepalive);
    assert_eq!(out.json()["plan"]["http_version"], "1.0");
    assert_eq!(out.json()["plan"]["keepalive"], keepalive);
    let opened = out.u("/connections/opened");
    if keepalive {
        assert_eq!(opened, concurrency, "-k reuses the connections");
    } else {
        assert_eq!(opened, n, "without -k, a connection per request");
    }
    let non_2xx: u64 = out.json()["status"]
        .as_object()
        .expect("status")
        .iter()
        .filter(|(code, _)| !code.starts_with('2'))
        .map(|(_, v)| v.as_u64().unwrap())
        .sum();
    if non_2xx > 0 {
        assert_eq!(out.number("Non-2xx responses:") as u64, non_2xx);
    }
    let total: Vec<f64> = out
        .line("Total:")
        .split_whitespace()
        .map(|w| w.parse().unwrap())
        .collect();
    assert_eq!(total[0], ab_ms(out.u("/breakdown/total/min")));
    assert_eq!(total[4], ab_ms(out.u("/breakdown/total/max")));
    for (pct, key) in [("50%", "p50"), ("90%", "p90"), ("99%", "p99")] {
        assert_eq!(out.number(pct), ab_ms(out.u(&format!("/latency_us/{key}"))));
    }
    assert_eq!(out.number("100%"), ab_ms(out.u("/latency_us/max")));
}

#[test]
fn ab_seed_lines_print_what_the_json_says() {
    let target = target();
    // seed 003: short connections, then keep-alive; seed 002: -c 500 -k.
    let short = ran("ab", &["-n", "3000", "-c", "50", &url(&target, "/kit")]);
    check_ab(&short, 3000, 50, false);
    let kept = ran("ab", &["-n", "3000", "-c", "50", "-k", &url(&target, "/")]);
    check_ab(&kept, 3000, 50, true);
    let wide = ran("ab", &["-c", "100", "-n", "5000", "-k", &url(&target, "/")]);
    check_ab(&wide, 5000, 100, true);
    assert_eq!(wide.u("/status/200"), 5000);
    assert_eq!(short.number("Document Length:"), 14.0, "the 404 page");
    assert_eq!(wide.number("Document Length:"), 515.0);
    assert_eq!(target.shutdown().unwrap().requests_total, 11_000);
}

#[test]
fn ab_timelimit_stops_at_the_time() {
    let target = target();
    let out = ran(
        "ab",
        &["-t", "1", "-c", "4", "-k", "-q", &url(&target, "/")],
    );
    assert_eq!(out.json()["plan"]["requests"], 50_000);
    assert!(out.f("/elapsed_s") < 1.5, "{}", out.f("/elapsed_s"));
}

#[test]
fn ab_options_without_percentiles_or_confidence() {
    let target = target();
    let out = ran(
        "ab",
        &["-n", "50", "-c", "5", "-d", "-S", &url(&target, "/")],
    );
    assert!(!out.stdout.contains("Percentage of the requests"));
    assert!(out.stdout.contains("              min   avg   max"));
    assert!(!out.stdout.contains("[+/-sd]"));
    let html = ran(
        "ab",
        &[
            "-n",
            "20",
            "-w",
            "-x",
            "border=1",
            "-z",
            "class=v",
            &url(&target, "/"),
        ],
    );
    assert!(html.stdout.contains("<table border=1>"), "{}", html.stdout);
    assert!(html
        .stdout
        .contains("<th colspan=2 class=v>Complete requests:</th>"));
    let verbose = ran("ab", &["-n", "20", "-v", "2", &url(&target, "/")]);
    assert!(verbose.line("Status codes:").contains("200: 20"));
}

/// wrk's figures against the JSON result.
fn check_wrk(out: &Out, threads: u64, connections: u64, latency: bool) {
    assert!(out.stdout.starts_with("Running 1s test @ http://"));
    assert_eq!(
        out.line(&format!("{threads} threads and")),
        format!("{connections} connections")
    );
    assert_eq!(out.u("/plan/threads"), threads);
    assert_eq!(out.u("/plan/connections"), connections);
    let requests_line = out
        .stdout
        .lines()
        .find(|l| l.contains(" requests in "))
        .expect("requests line");
    let (count, rest) = requests_line.trim().split_once(" requests in ").unwrap();
    assert_eq!(count.parse::<u64>().unwrap(), out.u("/requests/completed"));
    let (time, read) = rest.split_once(", ").unwrap();
    close_unit(time, out.f("/elapsed_s") * 1e6, "elapsed");
    close_unit(
        read.strip_suffix(" read").unwrap(),
        out.f("/bytes/received"),
        "bytes read",
    );
    close(
        out.number("Requests/sec:"),
        out.f("/rps"),
        0.01,
        "Requests/sec",
    );
    close_unit(
        out.line("Transfer/sec:"),
        out.f("/throughput_bytes_per_s"),
        "Transfer/sec",
    );
    let stats: Vec<&str> = out.line("Latency ").split_whitespace().collect();
    close_unit(stats[0], out.f("/latency_us/mean"), "latency avg");
    close_unit(stats[1], out.f("/latency_us/stdev"), "latency stdev");
    close_unit(stats[2], out.f("/latency_us/max"), "latency max");
    close(
        first_number(stats[3]),
        out.f("/latency_us/within_stdev_pct"),
        0.01,
        "+/- stdev",
    );
    assert!(out.stdout.contains("    Req/Sec "));
    assert_eq!(out.stdout.contains("Latency Distribution"), latency);
    if latency {
        for (pct, key) in [
            ("50%", "p50"),
            ("75%", "p75"),
            ("90%", "p90"),
            ("99%", "p99"),
        ] {
            let value = out.line(pct);
            close_unit(value, out.f(&format!("/latency_us/{key}")), pct);
        }
    }
    assert_eq!(out.json()["plan"]["keepalive"], true);
    assert_eq!(out.u("/connections/opened"), connections);
}

#[test]
fn wrk_seed_lines_print_what_the_json_says() {
    let target = target();
    // seed 002: -t4 -c500 -d10s, and -c1000 with --latency, shortened.
    let plain = ran("wrk", &["-t2", "-c20", "-d1s", &url(&target, "/view")]);
    check_wrk(&plain, 2, 20, false);
    assert_eq!(
        plain.number("Non-2xx or 3xx responses:") as u64,
        plain.u("/requests/failed_status")
    );
    let latency = ran(
        "wrk",
        &["-t2", "-c40", "-d1s", "--latency", &url(&target, "/")],
    );
    check_wrk(&latency, 2, 40, true);
    assert_eq!(latency.u("/requests/failed_status"), 0);
}

#[test]
fn webbench_seed_line_prints_what_the_json_says() {
    let target = target();
    // seed 000: webbench -t 60 -c 1000 .../index.html, shortened.
    let out = ran(
        "webbench",
        &["-t", "1", "-c", "20", &url(&target, "/index.html")],
    );
    let speed = out.line("Speed=");
    let pages = first_number(speed);
    let bytes = first_number(speed.split_once(", ").unwrap().1);
    assert_eq!(pages, (out.f("/rps") * 60.0).floor(), "{speed}");
    assert_eq!(bytes, out.f("/throughput_bytes_per_s").floor(), "{speed}");
    let requests = out.line("Requests:");
    assert_eq!(
        requests,
        format!(
            "{} susceed, {} failed.",
            out.u("/requests/completed"),
            out.u("/requests/errors")
        )
    );
    assert!(out.stdout.contains("20 clients, running 1 sec."));
    let plan = &out.json()["plan"];
    assert_eq!(plan["http_version"], "1.0");
    assert_eq!(plan["keepalive"], false);
    assert!(out.u("/connections/opened") >= out.u("/requests/completed"));
    assert_eq!(out.u("/connections/reconnects"), 0);
    let http11 = ran("webbench", &["-2", "-t1", "-c2", &url(&target, "/")]);
    assert_eq!(http11.json()["plan"]["http_version"], "1.1");
    assert!(http11.stdout.contains("(using HTTP/1.1)"));
}

#[test]
fn press_seed_line_prints_what_the_json_says() {
    let target = target();
    // seed 004 with its joined headers, shortened to 1 s.
    let out = ran(
        "press",
        &[
            "-t",
            "2",
            "-c",
            "40",
            "-d",
            "1s",
            "-H",
            "User-Agent: coro_http_press && x-frame-options: SAMEORIGIN",
            &url(&target, "/"),
        ],
    );
    let line = out
        .stdout
        .lines()
        .find(|l| l.contains(" requests in "))
        .expect("requests line");
    let complete = out.u("/status/200");
    let total = out.u("/requests/completed") + out.u("/requests/errors");
    let (count, rest) = line.trim().split_once(" requests in ").unwrap();
    assert_eq!(count.parse::<u64>().unwrap(), complete);
    let parts: Vec<&str> = rest.split(", ").collect();
    close_unit(parts[0], out.f("/elapsed_s") * 1e6, "elapsed");
    close_unit(
        parts[1].strip_suffix(" read").unwrap(),
        out.f("/bytes/received"),
        "read",
    );
    assert_eq!(parts[2], format!("total: {total}"));
    assert_eq!(parts[3], format!("errors: {}", total - complete));
    close(
        out.number("Requests/sec:"),
        complete as f64 / out.f("/elapsed_s"),
        0.001,
        "Requests/sec",
    );
    close_unit(
        out.line("Transfer/sec:"),
        out.f("/throughput_bytes_per_s"),
        "Transfer/sec",
    );
    let latency: Vec<&str> = out.line("Latency").split_whitespace().collect();
    close_unit(latency[0], out.f("/latency_us/mean"), "avg");
    close_unit(latency[1], out.f("/latency_us/max"), "max");
    close_unit(latency[3], out.f("/latency_us/stdev"), "stdev");
    assert!(out
        .stdout
        .starts_with("create 40 connections successfully\nRunning 1s test @ http://"));
    assert_eq!(out.u("/plan/threads"), 2);
    assert_eq!(out.u("/plan/connections"), 40);
}

/// A server that records every request (peer address, head and body) and
/// answers each with a small 200, closing the connection.
fn recording_server() -> (RawServer, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let server = RawServer::start(move |mut stream: TcpStream| {
        let peer = stream
            .peer_addr()
            .map(|a| a.ip().to_string())
            .unwrap_or_default();
        let mut request = Vec::new();
        let mut byte = [0u8; 1];
        while !request.ends_with(b"\r\n\r\n") {
            match stream.read(&mut byte) {
                Ok(1) => request.push(byte[0]),
                _ => return,
            }
        }
        let head = String::from_utf8_lossy(&request).into_owned();
        let length = head
            .lines()
            .find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.eq_ignore_ascii_case("content-length")
                    .then(|| value.trim().parse::<usize>().ok())?
            })
            .unwrap_or(0);
        let mut body = vec![0u8; length];
        let _ = stream.read_exact(&mut body);
        log.lock().unwrap().push(format!(
            "{head}{}\npeer={peer}",
            String::from_utf8_lossy(&body)
        ));
        let _ = stream
            .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
    });
    (server, seen)
}

fn first_request(tool: &str, args: &[&str]) -> String {
    let (server, seen) = recording_server();
    first_request_to(tool, args, &server.url("/path?q=1"), &seen)
}

fn first_request_to(
    tool: &str,
    args: &[&str],
    url: &str,
    seen: &Arc<Mutex<Vec<String>>>,
) -> String {
    let mut all: Vec<&str> = args.to_vec();
    all.push(url);
    ran(tool, &all);
    let requests = seen.lock().unwrap();
    requests.first().cloned().expect("a request arrived")
}

#[test]
fn the_requests_sent_are_the_ones_each_tool_would_send() {
    let dir = temp_dir("bodies");
    let body: PathBuf = dir.join("post.txt");
    std::fs::write(&body, "a=1&b=2").unwrap();
    let body = body.to_str().unwrap();

    let ab = first_request(
        "ab",
        &[
            "-n",
            "1",
            "-C",
            "c=1",
            "-H",
            "X-A: 1",
            "-A",
            "user:pass",
            "-P",
            "p:q",
            "-p",
            body,
            "-T",
            "application/x-www-form-urlencoded",
        ],
    );
    for expected in [
        "POST /path?q=1 HTTP/1.0\r\n",
        "Cookie: c=1\r\n",
        "X-A: 1\r\n",
        "Authorization: Basic dXNlcjpwYXNz\r\n",
        "Proxy-Authorization: Basic cDpx\r\n",
        "Content-Type: application/x-www-form-urlencoded\r\n",
        "Content-Length: 7\r\n",
        "\r\n\r\na=1&b=2",
    ] {
        assert!(ab.contains(expected), "{expected:?} in {ab:?}");
    }
    assert!(first_request("ab", &["-n", "1", "-i"]).starts_with("HEAD /path?q=1 HTTP/1.0"));
    assert!(first_request("ab", &["-n", "1", "-u", body]).starts_with("PUT "));
    assert!(first_request("ab", &["-n", "1", "-m", "DELETE"]).starts_with("DELETE "));

    let webbench = first_request("webbench", &["-t", "300ms", "-r"]);
    assert!(
        webbench.starts_with("GET /path?q=1 HTTP/1.0\r\n"),
        "{webbench}"
    );
    assert!(webbench.contains("Pragma: no-cache\r\n"));
    assert!(webbench.contains("Cache-Control: no-cache\r\n"));
    let options = first_request("webbench", &["-t", "300ms", "--options"]);
    assert!(
        options.starts_with("OPTIONS /path?q=1 HTTP/1.1\r\n"),
        "{options}"
    );
    assert!(options.contains("Connection: close\r\n"));

    let press = first_request(
        "press",
        &[
            "-c",
            "1",
            "-d",
            "300ms",
            "-H",
            "User-Agent: coro_http_press && x-frame-options: SAMEORIGIN",
        ],
    );
    assert!(press.contains("User-Agent: coro_http_press\r\n"), "{press}");
    assert!(press.contains("x-frame-options: SAMEORIGIN\r\n"));

    let wrk = first_request("wrk", &["-t1", "-c1", "-d300ms", "-H", "X-W: 2"]);
    assert!(wrk.starts_with("GET /path?q=1 HTTP/1.1\r\n") && wrk.contains("X-W: 2\r\n"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn proxies_and_source_addresses_are_honoured() {
    // ab -X and webbench -p: absolute-form requests to the proxy, which
    // alone is resolved and connected to.
    let (proxy, seen) = recording_server();
    let proxy_addr = proxy.addr().to_string();
    let origin = "http://origin.invalid:8080/x";
    let ab = first_request_to(
        "ab",
        &["-n", "1", "-X", &proxy_addr, "-P", "u:p"],
        origin,
        &seen,
    );
    assert!(
        ab.starts_with("GET http://origin.invalid:8080/x HTTP/1.0\r\n"),
        "{ab}"
    );
    assert!(ab.contains("Proxy-Authorization: Basic dTpw\r\n"));
    seen.lock().unwrap().clear();
    let webbench = first_request_to(
        "webbench",
        &["-t", "300ms", "-p", &proxy_addr],
        origin,
        &seen,
    );
    assert!(
        webbench.starts_with("GET http://origin.invalid:8080/x HTTP/1.0\r\n"),
        "{webbench}"
    );
    // ab -B: connections leave from that local address.
    let ab = first_request("ab", &["-n", "1", "-B", "127.0.0.2"]);
    assert!(ab.ends_with("peer=127.0.0.2"), "{ab}");
}

/// What a flag of a front-end's help must do.
enum Expect {
    /// Runs (exit 0, JSON written) with these arguments.
    Runs(&'static [&'static str]),
    /// Prints help or version and exits 0 without running.
    Informs,
    /// Exit 2 with one line on stderr naming the flag.
    Refused(&'static [&'static str]),
    /// Exit 2 with one line on stderr containing this text.
    Usage(&'static [&'static str], &'static str),
}

/// The flags a help text lists: the leading `-x`/`--xyz` words of its lines.
fn help_flags(help: &str) -> Vec<String> {
    let mut flags = Vec::new();
    for line in help.lines() {
        for word in line.split_whitespace() {
            if !word.starts_with('-') {
                break;
            }
            flags.extend(
                word.split(['|', ','])
                    .filter(|f| f.starts_with('-') && f.len() > 1)
                    .map(str::to_string),
            );
        }
    }
    flags.sort();
    flags.dedup();
    flags
}

fn check_every_flag(tool: &str, help_flag: &str, base: &[&str], table: &[(&str, Expect)]) {
    let help = compat(tool, &[help_flag], false);
    assert_eq!(help.code, Some(0), "{}", help.stderr);
    let mut listed = help_flags(&help.stdout);
    let mut tested: Vec<String> = table.iter().map(|(f, _)| f.to_string()).collect();
    listed.sort();
    tested.sort();
    tested.dedup();
    assert_eq!(
        listed, tested,
        "every flag in `{tool} {help_flag}` is tested"
    );
    let target = target();
    let url = url(&target, "/");
    let dir = temp_dir(tool);
    let body = dir.join("body.txt");
    std::fs::write(&body, "x=1").unwrap();
    let script = dir.join("post.lua");
    std::fs::write(&script, "wrk.method = \"POST\"\nwrk.body = \"x=1\"\n").unwrap();
    for (flag, expect) in table {
        let substitute = |args: &[&str]| -> Vec<String> {
            args.iter()
                .map(|a| match *a {
                    "BODY" => body.to_str().unwrap().to_string(),
                    "SCRIPT" => script.to_str().unwrap().to_string(),
                    // The target itself as the proxy: it gets absolute-form requests.
                    "PROXY" => target.local_addr().to_string(),
                    "OUT" => dir.join(format!("out{flag}")).to_str().unwrap().to_string(),
                    other => other.to_string(),
                })
                .collect()
        };
        match expect {
            Expect::Runs(args) => {
                let mut words: Vec<String> = base.iter().map(|s| s.to_string()).collect();
                words.extend(substitute(args));
                words.push(url.clone());
                let words: Vec<&str> = words.iter().map(String::as_str).collect();
                let out = compat(tool, &words, *flag != "--stampede-json");
                assert_eq!(out.code, Some(0), "{tool} {flag}: {}", out.stderr);
                if *flag != "--stampede-json" {
                    assert!(out.json.is_some(), "{tool} {flag} ran");
                }
            }
            Expect::Informs => {
                let out = compat(tool, &[flag], false);
                assert_eq!(out.code, Some(0), "{tool} {flag}: {}", out.stderr);
                assert!(!out.stdout.is_empty() && out.json.is_none());
            }
            Expect::Refused(args) => {
                let mut words = substitute(args);
                words.push(url.clone());
                let words: Vec<&str> = words.iter().map(String::as_str).collect();
                let out = compat(tool, &words, true);
                assert_eq!(
                    out.code,
                    Some(2),
                    "{tool} {flag} is refused: {}",
                    out.stdout
                );
                assert_eq!(
                    out.stderr.lines().count(),
                    1,
                    "{tool} {flag}: {}",
                    out.stderr
                );
                assert!(out.stderr.contains(flag), "{tool} {flag}: {}", out.stderr);
                assert!(out.stderr.contains("not supported"), "{}", out.stderr);
                assert!(out.json.is_none() && out.stdout.is_empty());
            }
            Expect::Usage(args, text) => {
                let mut words = substitute(args);
                words.push(url.clone());
                let words: Vec<&str> = words.iter().map(String::as_str).collect();
                let out = compat(tool, &words, true);
                assert_eq!(out.code, Some(2), "{tool} {flag}: {}", out.stderr);
                assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
                assert!(out.stderr.contains(text), "{tool} {flag}: {}", out.stderr);
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_ab_flag_is_accepted_or_refused() {
    use Expect::*;
    let table = [
        ("-n", Runs(&["-n", "5"])),
        ("-c", Runs(&["-c", "3"])),
        ("-t", Runs(&["-t", "1"])),
        ("-s", Runs(&["-s", "5"])),
        ("-b", Refused(&["-b", "65536"])),
        ("-B", Runs(&["-B", "127.0.0.1"])),
        ("-p", Runs(&["-p", "BODY"])),
        ("-u", Runs(&["-u", "BODY"])),
        ("-T", Runs(&["-p", "BODY", "-T", "application/json"])),
        ("-v", Runs(&["-v", "3"])),
        ("-w", Runs(&["-w"])),
        ("-i", Runs(&["-i"])),
        ("-x", Runs(&["-w", "-x", "border=1"])),
        ("-y", Runs(&["-w", "-y", "class=r"])),
        ("-z", Runs(&["-w", "-z", "class=d"])),
        ("-C", Runs(&["-C", "a=1"])),
        ("-H", Runs(&["-H", "X-A: 1"])),
        ("-A", Runs(&["-A", "u:p"])),
        ("-P", Runs(&["-P", "u:p"])),
        ("-X", Runs(&["-X", "PROXY"])),
        ("-V", Informs),
        ("-k", Runs(&["-k"])),
        ("-d", Runs(&["-d"])),
        ("-S", Runs(&["-S"])),
        ("-q", Runs(&["-q"])),
        ("-l", Runs(&["-l"])),
        ("-g", Runs(&["-g", "OUT"])),
        ("-e", Runs(&["-e", "OUT"])),
        ("-r", Runs(&["-r"])),
        ("-m", Runs(&["-m", "GET"])),
        ("-h", Informs),
        ("--help", Informs),
        ("-I", Refused(&["-I"])),
        ("-Z", Refused(&["-Z", "AES128-SHA"])),
        ("-f", Refused(&["-f", "SSL3"])),
        // Mapped to --cert/--key (tests/protocols/tls_options.rs runs it over https);
        // against this http:// target it is the usage error of TLS options.
        ("-E", Usage(&["-E", "cert.pem"], "need an https:// URL")),
        ("--stampede-json", Runs(&["--stampede-json", "OUT"])),
    ];
    check_every_flag("ab", "-h", &["-n", "10", "-c", "2"], &table);
    // -v 4 would print every request's headers: refused, the level named.
    let out = compat("ab", &["-v", "4", "http://127.0.0.1:9/"], false);
    assert_eq!((out.code, out.stderr.lines().count()), (Some(2), 1));
    assert!(out.stderr.contains("-v 4"));
}

#[test]
fn ab_exports_write_their_files() {
    let target = target();
    let dir = temp_dir("ab-exports");
    let csv = dir.join("p.csv");
    let tsv = dir.join("g.tsv");
    let args = [
        "-n",
        "40",
        "-c",
        "2",
        "-e",
        csv.to_str().unwrap(),
        "-g",
        tsv.to_str().unwrap(),
    ];
    let mut words: Vec<&str> = args.to_vec();
    let url = url(&target, "/");
    words.push(&url);
    ran("ab", &words);
    let csv = std::fs::read_to_string(&csv).expect("-e wrote its CSV");
    assert!(csv.lines().count() > 100, "101 percent rows: {csv}");
    let tsv = std::fs::read_to_string(&tsv).expect("-g wrote its file");
    assert_eq!(tsv.lines().count(), 41, "a header and one row per request");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_wrk_flag_is_accepted_or_refused() {
    use Expect::*;
    let table = [
        ("-c", Runs(&["-c", "2"])),
        ("--connections", Runs(&["--connections", "2"])),
        ("-d", Runs(&["-d", "200ms"])),
        ("--duration", Runs(&["--duration=200ms"])),
        ("-t", Runs(&["-t", "1"])),
        ("--threads", Runs(&["--threads", "1"])),
        ("-s", Runs(&["-s", "SCRIPT"])),
        ("--script", Runs(&["--script", "SCRIPT"])),
        ("-H", Runs(&["-H", "X-A: 1"])),
        ("--header", Runs(&["--header", "X-A: 1"])),
        ("-L", Runs(&["-L"])),
        ("--latency", Runs(&["--latency"])),
        ("-T", Runs(&["-T", "1s"])),
        ("--timeout", Runs(&["--timeout", "1s"])),
        ("-R", Runs(&["-R", "200"])),
        ("--rate", Runs(&["--rate", "200"])),
        ("-v", Informs),
        ("--version", Informs),
        ("-h", Informs),
        ("--help", Informs),
        ("--stampede-json", Runs(&["--stampede-json", "OUT"])),
        (
            "--capture-max",
            Runs(&["--capture-max", "1MiB", "-s", "SCRIPT"]),
        ),
        ("--hlog", Runs(&["--hlog", "OUT"])),
        (
            "--hlog-interval",
            Runs(&["--hlog", "OUT", "--hlog-interval", "100ms"]),
        ),
    ];
    check_every_flag("wrk", "--help", &["-t1", "-c2", "-d300ms"], &table);
}

#[test]
fn every_webbench_flag_is_accepted_or_refused() {
    use Expect::*;
    let table = [
        ("-f", Refused(&["-f"])),
        ("--force", Refused(&["--force"])),
        ("-r", Runs(&["-r"])),
        ("--reload", Runs(&["--reload"])),
        ("-t", Runs(&["-t", "200ms"])),
        ("--time", Runs(&["--time", "200ms"])),
        ("-p", Runs(&["-p", "PROXY"])),
        ("--proxy", Runs(&["--proxy", "PROXY"])),
        ("-c", Runs(&["-c", "3"])),
        ("--clients", Runs(&["--clients", "3"])),
        ("-9", Refused(&["-9"])),
        ("--http09", Refused(&["--http09"])),
        ("-1", Runs(&["-1"])),
        ("--http10", Runs(&["--http10"])),
        ("-2", Runs(&["-2"])),
        ("--http11", Runs(&["--http11"])),
        ("--get", Runs(&["--get"])),
        ("--head", Runs(&["--head"])),
        ("--options", Runs(&["--options"])),
        ("--trace", Runs(&["--trace"])),
        ("-?", Informs),
        ("-h", Informs),
        ("--help", Informs),
        ("-V", Informs),
        ("--version", Informs),
        ("--stampede-json", Runs(&["--stampede-json", "OUT"])),
    ];
    check_every_flag("webbench", "-?", &["-t", "300ms", "-c", "2"], &table);
}

#[test]
fn every_press_flag_is_accepted_or_refused() {
    use Expect::*;
    let table = [
        ("-c", Runs(&["-c", "2"])),
        ("--connections", Runs(&["--connections=2"])),
        ("-d", Runs(&["-d", "200ms"])),
        ("--duration", Runs(&["--duration", "200ms"])),
        ("-t", Runs(&["-t", "1"])),
        ("--threads", Runs(&["--threads", "1"])),
        ("-H", Runs(&["-H", "A: 1 && B: 2"])),
        ("--headers", Runs(&["--headers", "A: 1"])),
        ("-r", Runs(&["-r", "1"])),
        ("--readfix", Runs(&["--readfix", "0"])),
        ("-?", Informs),
        ("--help", Informs),
        ("--stampede-json", Runs(&["--stampede-json", "OUT"])),
    ];
    check_every_flag("press", "--help", &["-c", "2", "-d", "300ms"], &table);
}

#[test]
fn usage_errors_are_one_line_with_status_2() {
    for (tool, args) in [
        ("ab", &["-j", "http://127.0.0.1:9/"][..]),
        ("ab", &["-n"][..]),
        ("wrk", &["-t", "4", "-c", "2", "http://127.0.0.1:9/"][..]),
        ("webbench", &[][..]),
        ("press", &["http://127.0.0.1:9/"][..]),
    ] {
        let out = compat(tool, args, false);
        assert_eq!(out.code, Some(2), "{tool} {args:?}: {}", out.stdout);
        assert_eq!(
            out.stderr.lines().count(),
            1,
            "{tool} {args:?}: {}",
            out.stderr
        );
        assert!(
            out.stderr.contains(&format!("(see `stampede {tool} ")),
            "{}",
            out.stderr
        );
    }
}

// The seed's own name for the press tool, `kedao_press_tool`, is a name of
// `stampede press`: `stampede kedao_press_tool -t 4 -c 40 -d 30s URL`, as
// copied from the seed's report, runs the press front-end (it was
// "unknown command" with no hint).
mod press_tool_name {
    use stampede_testkit::{binary, one_thread, spawn_target, text};
    use std::process::Command;

    #[test]
    fn kedao_press_tool_runs_the_press_front_end() {
        let target = spawn_target(one_thread());
        let url = format!("http://{}/", target.local_addr());
        let out = Command::new(binary())
            .args(["kedao_press_tool", "-t", "1", "-c", "2", "-d", "1s", &url])
            .output()
            .unwrap();
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
        // The press tool's report: its connection line and its summary.
        assert!(
            stdout.starts_with("create 2 connections successfully"),
            "{stdout}"
        );
        // "  12915 requests in 1.000s, ..., total: 12915, errors: 0"
        let requests = stdout
            .lines()
            .find(|l| l.contains(" requests in "))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|n| n.parse::<u64>().ok());
        assert!(requests.is_some_and(|n| n > 100), "{stdout}");
    }
}

/// A request as the recording server saw it, comparable between two
/// clients: the request line, the headers (names lowercased, sorted) but
/// the two each client names itself by, and the body.
fn comparable(seen: &str) -> (String, Vec<String>, String) {
    let (head, rest) = seen.split_once("\r\n\r\n").expect("a whole head");
    let body = rest.rsplit_once("\npeer=").map_or(rest, |(body, _)| body);
    let mut lines = head.lines();
    let request_line = lines.next().unwrap_or_default().to_string();
    let mut headers: Vec<String> = lines
        .filter_map(|line| {
            let (name, value) = line.split_once(':')?;
            let name = name.trim().to_ascii_lowercase();
            // Each client's own name, and the codings its build decodes.
            (name != "user-agent" && name != "accept-encoding")
                .then(|| format!("{name}: {}", value.trim()))
        })
        .collect();
    headers.sort();
    (request_line, headers, body.to_string())
}

/// `stampede IMPORT…` written to `scenario`, then run with `-n requests`:
/// both must succeed.
fn run_imported(import: &[&str], scenario: &std::path::Path, requests: &str) {
    let imported = Command::new(binary()).args(import).output().unwrap();
    assert!(
        imported.status.success(),
        "{}",
        String::from_utf8_lossy(&imported.stderr)
    );
    std::fs::write(scenario, &imported.stdout).unwrap();
    let scenario = scenario.to_str().unwrap();
    let from_file = Command::new(binary())
        .args([
            "run",
            "--scenario",
            scenario,
            "-n",
            requests,
            "-t",
            "1",
            "-q",
        ])
        .output()
        .unwrap();
    assert!(
        from_file.status.success(),
        "{}",
        String::from_utf8_lossy(&from_file.stderr)
    );
}

/// `run --curl` sends what curl itself sends for the same command line:
/// each command (in the forms a browser's "Copy as cURL (bash)" writes:
/// `$'…'` quoting, line continuations, -b cookies, --data-raw,
/// --compressed) is run by bash with the real curl, and by stampede, against
/// one recording server, and the two requests compared. The rules are
/// curl's (src/tool_getparam.c reads the options; docs/cmdline-opts/data.md:
/// -d joins its parts with '&' and posts a form; get.md: -G moves them to
/// the query; json.md: --json sets Content-Type and Accept).
#[test]
fn run_curl_sends_what_curl_sends() {
    let Some(curl) = stampede_testkit::tool_or_skip("curl") else {
        return;
    };
    let (server, seen) = recording_server();
    let url = server.url("/api/items?x=1");
    let dir = temp_dir("curl-import");
    let commands = [
        format!(
            "curl '{url}' \\\n  -H 'accept: application/json' \\\n  -H 'content-type: application/json' \\\n  -b 'session=abc; theme=dark' \\\n  --data-raw $'{{\"name\":\"caf\\u00e9\",\"note\":\"a\\nb\"}}' \\\n  --compressed"
        ),
        format!("curl {url} -d a=1 -d 'b=x y' --data-urlencode 'c=x y&z' -u me:secret -e http://from/"),
        format!("curl -G '{url}' -d q=1 -d r=2 -A 'bot/1' -H 'X-Trace;'"),
        // Braces are data, not stampede's template slots.
        format!("curl -X PUT --json '{{\"on\":true,\"t\":\"{{{{seq}}}}\"}}' {url}"),
        format!("curl -I {url}"),
    ];
    for command in &commands {
        seen.lock().unwrap().clear();
        let real = Command::new("bash")
            .arg("-c")
            .arg(format!("{command} -s -o /dev/null"))
            .env("PATH", curl.parent().map(PathBuf::from).unwrap_or_default())
            .status()
            .unwrap();
        assert!(real.success(), "curl ran: {command}");
        let ours = Command::new(binary())
            .args([
                "run", "--curl", command, "-n", "1", "-c", "1", "-t", "1", "-q",
            ])
            .output()
            .unwrap();
        assert!(
            ours.status.success(),
            "{command}\n{}",
            String::from_utf8_lossy(&ours.stderr)
        );
        // The scenario `stampede import curl` prints sends the same.
        run_imported(
            &["import", "curl", command, "-c", "1"],
            &dir.join("imported.toml"),
            "1",
        );
        let requests = seen.lock().unwrap().clone();
        assert_eq!(requests.len(), 3, "{command}: {requests:?}");
        for (ours, how) in [(&requests[1], "run --curl"), (&requests[2], "import curl")] {
            assert_eq!(
                comparable(ours),
                comparable(&requests[0]),
                "{how}'s request (left) against curl's (right) for {command}"
            );
        }
    }
    // What curl cannot be asked for here is refused in one line, exit 2.
    seen.lock().unwrap().clear();
    let refused = Command::new(binary())
        .args([
            "run",
            "--curl",
            &format!("curl -x http://proxy:3128 {url}"),
            "-n",
            "1",
        ])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("curl's -x"), "{stderr}");
    assert!(seen.lock().unwrap().is_empty(), "nothing sent");
}

/// A HAR in the shape Chromium's DevTools exports (HTTP/2 pseudo-headers,
/// `_resourceType`, a request to another origin): `run --har` sends its
/// requests of one origin, in order, each as recorded, and so does the
/// scenario `stampede import har` prints. Counted by the recording server.
#[test]
fn run_har_sends_the_recorded_requests_of_one_origin() {
    let (server, seen) = recording_server();
    let origin = server.url("");
    let origin = origin.trim_end_matches('/');
    let entry = |ms: u32, method: &str, url: &str, kind: &str, extra: &str| {
        format!(
            r#"{{"startedDateTime":"2026-12-04T10:00:00.{ms:03}Z","time":5,"_resourceType":"{kind}",
               "request":{{"method":"{method}","url":"{url}","httpVersion":"h2",
                 "headers":[{{"name":":authority","value":"x"}},{{"name":"accept","value":"*/*"}},{{"name":"x-trace","value":"t{{{{1}}}}"}}],
                 "cookies":[],"queryString":[],"headersSize":-1,"bodySize":0{extra}}},
               "response":{{"status":200,"cookies":[],"content":{{"size":2,"mimeType":"text/plain"}}}},
               "timings":{{"send":0,"wait":5,"receive":0}}}}"#
        )
    };
    let har = format!(
        r#"{{"log":{{"version":"1.2","creator":{{"name":"WebInspector","version":"537.36"}},"entries":[{}]}}}}"#,
        [
            entry(0, "GET", &format!("{origin}/page?a=1"), "document", ""),
            entry(10, "GET", "https://cdn.example/lib.js", "script", ""),
            entry(
                20,
                "POST",
                &format!("{origin}/api/cart"),
                "fetch",
                r#","postData":{"mimeType":"application/json","text":"{\"sku\":7}"}"#,
            ),
        ]
        .join(",")
    );
    let dir = temp_dir("har");
    let file = dir.join("visit.har");
    std::fs::write(&file, har).unwrap();
    let file = file.to_str().unwrap();
    let expect = |requests: &[String], how: &str| {
        assert_eq!(
            requests.len(),
            4,
            "{how}: two iterations of two steps: {requests:?}"
        );
        for (i, request) in requests.iter().enumerate() {
            let (line, headers, body) = comparable(request);
            if i % 2 == 0 {
                assert_eq!(line, "GET /page?a=1 HTTP/1.1", "{how}");
                assert_eq!(body, "");
            } else {
                assert_eq!(line, "POST /api/cart HTTP/1.1", "{how}");
                assert_eq!(body, "{\"sku\":7}", "{how}");
                assert!(
                    headers.contains(&"content-type: application/json".to_string()),
                    "{how}: {headers:?}"
                );
            }
            assert!(
                headers.contains(&"x-trace: t{{1}}".to_string()),
                "{how}: braces as recorded: {headers:?}"
            );
            assert!(
                !headers.iter().any(|h| h.starts_with(':')),
                "{how}: {headers:?}"
            );
        }
    };
    let run = Command::new(binary())
        .args([
            "run",
            "--har",
            file,
            "--har-think",
            "0",
            "-n",
            "4",
            "-t",
            "1",
            "--json",
            "-",
        ])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let result: Value = serde_json::from_slice(&run.stdout).unwrap();
    let notices = result["notices"].to_string();
    assert!(
        notices.contains("other origins") && notices.contains("https://cdn.example (1)"),
        "{notices}"
    );
    expect(&seen.lock().unwrap().clone(), "run --har");
    seen.lock().unwrap().clear();
    let scenario = dir.join("visit.toml");
    run_imported(&["import", "har", file, "--har-think", "0"], &scenario, "4");
    expect(&seen.lock().unwrap().clone(), "import har");
    // Not a HAR: one line, exit 2, nothing sent.
    seen.lock().unwrap().clear();
    let bad = Command::new(binary())
        .args(["run", "--har", scenario.to_str().unwrap(), "-n", "1"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        stderr.contains("not a HAR file") && stderr.lines().count() == 1,
        "{stderr}"
    );
    assert!(seen.lock().unwrap().is_empty());
}
