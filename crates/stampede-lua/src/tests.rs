//! The whole flow (load, prepare, a worker's hooks, done) with scripts in
//! the style of wrk's own examples (its scripts/ directory), a worker
//! simulated by calling the hooks as the engine would.

use crate::{LoadedScript, LuaScript, ScriptConfig};
use stampede_metrics::{encode_histogram, new_latency_histogram, RunResult};
use stampede_workload::{ResponseView, Script, ScriptThread};
use std::net::SocketAddr;
use std::time::Duration;

const ADDR: &str = "127.0.0.1:8080";

fn config(args: &[&str]) -> ScriptConfig {
    ScriptConfig {
        path: "test.lua".into(),
        url: "http://127.0.0.1:8080/base".into(),
        headers: vec!["X-Seed: 1".into()],
        args: args.iter().map(|a| a.to_string()).collect(),
    }
}

fn prepared(code: &str, threads: usize) -> LuaScript {
    LoadedScript::from_code(&config(&["one", "two"]), code.as_bytes().to_vec())
        .unwrap()
        .prepare(threads, ADDR.parse().unwrap())
        .unwrap()
}

fn next_request(thread: &mut dyn ScriptThread) -> (String, usize) {
    let mut out = Vec::new();
    let count = thread.request(&mut out).unwrap();
    (String::from_utf8(out).unwrap(), count)
}

fn respond(thread: &mut dyn ScriptThread, status: u16, headers: &[(&[u8], &[u8])], body: &[u8]) {
    thread
        .response(&ResponseView::new(status, headers, body, Duration::ZERO))
        .unwrap();
}

/// A finished run's result: `latencies` µs, 2 threads, 3 seconds.
fn result(latencies: &[u64]) -> RunResult {
    let mut histogram = new_latency_histogram();
    for &v in latencies {
        histogram.record(v).unwrap();
    }
    let point = |second: u64, rps: f64| {
        serde_json::json!({
            "second": second, "duration_s": 1.0, "completed": rps as u64, "success": rps as u64,
            "errors": {}, "bytes_received": 0, "rps": rps, "in_flight": 0, "open_connections": 2,
            "p50_us": 0, "p90_us": 0, "p99_us": 0, "max_us": 0, "target": 2.0
        })
    };
    let json = serde_json::json!({
        "schema": stampede_metrics::RESULT_SCHEMA, "version": "test",
        "plan": {
            "url": "http://127.0.0.1:8080/", "method": "GET", "connections": 2, "threads": 2,
            "duration_s": 3.0, "keepalive": true, "http_version": "1.1",
            "connect_timeout_s": 3.0, "timeout_s": 10.0, "body_bytes": 0
        },
        "started_at": "2026-12-01T00:00:00.000Z", "elapsed_s": 3.0000004, "interrupted": false,
        "requests": { "sent": 12, "completed": 10, "success": 7, "failed_status": 3, "errors": 2, "unfinished": 0 },
        "rps": 3.3, "goodput": 2.3, "error_rate_pct": 41.0, "throughput_bytes_per_s": 0.0,
        "errors": { "connect_refused": 1, "reset": 1 },
        "status": { "200": 7, "503": 3 },
        "bytes": { "received": 4096, "body": 100 },
        "connections": { "opened": 2, "reconnects": 0 },
        "latency_us": stampede_metrics::LatencySummary::of(&histogram),
        "histogram": encode_histogram(&histogram),
        "timeseries": [point(0, 100.0), point(1, 300.0), point(2, 200.0)],
        "notices": [],
        "environment": stampede_metrics::Environment::default(),
    });
    serde_json::from_value(json).unwrap()
}

#[test]
fn post_style_tables_make_one_fixed_request() {
    let script = prepared(
        r#"wrk.method = "POST"
           wrk.body = "foo=bar&baz=quux"
           wrk.headers["Content-Type"] = "application/x-www-form-urlencoded""#,
        1,
    );
    let mut thread = script.thread(0).unwrap();
    assert!(!thread.builds_requests() && !thread.wants_responses() && !thread.has_delay());
    let fixed = String::from_utf8(thread.fixed_request().unwrap()).unwrap();
    assert!(fixed.starts_with("POST /base HTTP/1.1\r\n"), "{fixed}");
    for line in [
        "Host: 127.0.0.1:8080\r\n",
        "Content-Length: 16\r\n",
        "X-Seed: 1\r\n",
        "Content-Type: application/x-www-form-urlencoded\r\n",
    ] {
        assert!(fixed.contains(line), "{line:?} in {fixed}");
    }
    assert!(fixed.ends_with("\r\n\r\nfoo=bar&baz=quux"));
    assert!(script.thread(0).is_err(), "a thread is taken once");
}

#[test]
fn counter_style_requests_count_per_thread() {
    let script = prepared(
        r#"counter = 0
           request = function()
              path = "/" .. counter
              wrk.headers["X-Counter"] = counter
              counter = counter + 1
              return wrk.format(nil, path)
           end"#,
        2,
    );
    let mut first = script.thread(0).unwrap();
    let mut second = script.thread(1).unwrap();
    assert!(first.builds_requests());
    let (a, n) = next_request(first.as_mut());
    assert!(
        a.starts_with("GET /0 HTTP/1.1\r\n") && a.contains("X-Counter: 0\r\n"),
        "{a}"
    );
    assert_eq!(n, 1);
    let (b, _) = next_request(first.as_mut());
    assert!(
        b.starts_with("GET /1 ") && b.contains("X-Counter: 1\r\n"),
        "{b}"
    );
    // Each thread has its own state, so its own counter.
    let (c, _) = next_request(second.as_mut());
    assert!(c.starts_with("GET /0 "), "{c}");
}

#[test]
fn auth_style_response_sees_status_headers_and_body() {
    let script = prepared(
        r#"token = nil
           path = "/authenticate"
           request = function() return wrk.format("GET", path) end
           response = function(status, headers, body)
              if not token and status == 200 then
                 token = headers["X-Token"]
                 path = "/resource"
                 wrk.headers["X-Token"] = token
              end
              wrk.headers["X-Last"] = status .. " " .. body
           end"#,
        1,
    );
    let mut thread = script.thread(0).unwrap();
    assert!(thread.wants_responses());
    let (login, _) = next_request(thread.as_mut());
    assert!(login.starts_with("GET /authenticate "), "{login}");
    respond(thread.as_mut(), 401, &[(b"X-Token", b"early")], b"no");
    assert!(!next_request(thread.as_mut()).0.contains("X-Token"));
    respond(
        thread.as_mut(),
        200,
        &[(b"Content-Type", b"text/plain"), (b"X-Token", b"s3cret")],
        b"welcome",
    );
    let (next, _) = next_request(thread.as_mut());
    assert!(
        next.starts_with("GET /resource ") && next.contains("X-Token: s3cret\r\n"),
        "{next}"
    );
    assert!(next.contains("X-Last: 200 welcome\r\n"), "{next}");
}

#[test]
fn pipeline_style_requests_count_three_and_parse_once() {
    let script = prepared(
        r#"init = function(args)
              local r = {}
              r[1] = wrk.format(nil, "/?foo")
              r[2] = wrk.format(nil, "/?bar")
              r[3] = wrk.format(nil, "/?baz")
              req = table.concat(r)
           end
           request = function() return req end"#,
        1,
    );
    let mut thread = script.thread(0).unwrap();
    for _ in 0..3 {
        let (bytes, count) = next_request(thread.as_mut());
        assert_eq!(count, 3);
        assert_eq!(bytes.matches(" HTTP/1.1\r\n").count(), 3);
        assert!(bytes.contains("GET /?bar HTTP/1.1"));
    }
}

#[test]
fn setup_style_ids_go_in_and_counts_come_back_in_done() {
    let script = prepared(
        r#"local counter = 1
           local threads = {}
           function setup(thread)
              thread:set("id", counter)
              table.insert(threads, thread)
              counter = counter + 1
           end
           function init(args)
              requests = 0
              responses = 0
              first_arg, url_arg = args[1], args[0]
           end
           function request()
              requests = requests + 1
              return wrk.request()
           end
           function response(status, headers, body)
              responses = responses + 1
           end
           function done(summary, latency, requests)
              lines = {}
              for index, thread in ipairs(threads) do
                 local msg = "thread %d made %d requests and got %d responses"
                 lines[index] = msg:format(thread:get("id"), thread:get("requests"), thread:get("responses"))
              end
              got = string.format("%d %d %d %d %d %d %d %d", summary.duration, summary.requests, summary.bytes,
                 summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.status,
                 summary.errors.timeout)
              rates = string.format("%d %d %d %d", requests.min, requests.max, requests.mean, #requests)
           end"#,
        2,
    );
    assert!(script.has_done());
    {
        let mut first = script.thread(0).unwrap();
        let mut second = script.thread(1).unwrap();
        for _ in 0..3 {
            let (bytes, count) = next_request(first.as_mut());
            assert!(
                bytes.starts_with("GET /base HTTP/1.1\r\n") && count == 1,
                "{bytes}"
            );
            respond(first.as_mut(), 200, &[], b"");
        }
        next_request(second.as_mut());
    }
    let result = result(&[100, 200, 300]);
    script.done(&result).unwrap();
    let lines: Vec<String> = script.eval_in_setup("return lines").unwrap();
    assert_eq!(
        lines,
        [
            "thread 1 made 3 requests and got 3 responses",
            "thread 2 made 1 requests and got 0 responses"
        ]
    );
    let got: String = script.eval_in_setup("return got").unwrap();
    assert_eq!(got, "3000000 10 4096 1 1 0 3 0");
    // One sample per second, split over the 2 threads: 50, 150, 100.
    let rates: String = script.eval_in_setup("return rates").unwrap();
    assert_eq!(rates, "50 150 100 3");
}

#[test]
fn init_gets_the_url_and_the_words_after_the_double_dash() {
    let mut probe = prepared(
        r#"function init(args) seen = args[0] .. " " .. args[1] .. " " .. args[2] .. " " .. #args end
           function request() return wrk.format(nil, "/" .. seen:gsub(" ", "_")) end"#,
        1,
    )
    .thread(0)
    .unwrap();
    let (bytes, _) = next_request(probe.as_mut());
    assert!(
        bytes.starts_with("GET /http://127.0.0.1:8080/base_one_two_2 "),
        "{bytes}"
    );
}

#[test]
fn report_style_done_reads_percentiles() {
    let script = prepared(
        r#"done = function(summary, latency, requests)
              out = {}
              for _, p in pairs({ 50, 90, 99, 99.999 }) do
                 out[#out + 1] = string.format("%g%%,%d", p, latency:percentile(p))
              end
              local v, n = latency(1)
              first = string.format("%d x%d min=%d max=%d", v, n, latency.min, latency.max)
           end"#,
        1,
    );
    let latencies: Vec<u64> = (1..=100).collect();
    script.done(&result(&latencies)).unwrap();
    let out: Vec<String> = script.eval_in_setup("return out").unwrap();
    assert_eq!(out, ["50%,50", "90%,90", "99%,99", "99.999%,100"]);
    let first: String = script.eval_in_setup("return first").unwrap();
    assert_eq!(first, "1 x1 min=1 max=100");
}

#[test]
fn stop_style_stops_after_n_responses() {
    let script = prepared(
        r#"local counter = 1
           function response()
              if counter == 3 then wrk.thread:stop() end
              counter = counter + 1
           end"#,
        2,
    );
    let mut thread = script.thread(0).unwrap();
    for expected in [false, false, true] {
        respond(thread.as_mut(), 200, &[], b"");
        assert_eq!(thread.stop_requested(), expected);
    }
    assert!(!script.all_stopped(), "thread 2 still runs");
}

#[test]
fn delay_returns_whole_milliseconds() {
    let script = prepared("function delay() return 12.9 end", 1);
    let mut thread = script.thread(0).unwrap();
    assert!(thread.has_delay());
    assert_eq!(thread.delay().unwrap(), Duration::from_millis(12));
    let script = prepared(
        "math.randomseed(1) function delay() return math.random(10, 50) end",
        1,
    );
    let mut thread = script.thread(0).unwrap();
    for _ in 0..20 {
        let d = thread.delay().unwrap();
        assert!(
            d >= Duration::from_millis(10) && d <= Duration::from_millis(50),
            "{d:?}"
        );
    }
}

#[test]
fn addr_style_setup_chooses_the_threads_address() {
    let listener = std::net::TcpListener::bind("127.0.0.2:0")
        .or_else(|_| std::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let live: SocketAddr = listener.local_addr().unwrap();
    let script = prepared(
        &format!(
            r#"local addrs = nil
               function setup(thread)
                  if not addrs then
                     addrs = wrk.lookup("{}", "{}")
                     for i = #addrs, 1, -1 do
                        if not wrk.connect(addrs[i]) then table.remove(addrs, i) end
                     end
                  end
                  before = tostring(thread.addr)
                  thread.addr = addrs[1]
               end
               function init(args) mine = tostring(wrk.thread.addr) end"#,
            live.ip(),
            live.port()
        ),
        2,
    );
    assert_eq!(script.thread_addr(0), Some(live));
    assert_eq!(script.thread_addr(1), Some(live));
    let before: String = script.eval_in_setup("return before").unwrap();
    assert_eq!(before, ADDR, "thread.addr starts as the resolved address");
    let thread = script.thread(0).unwrap();
    drop(thread);
}

#[test]
fn runtime_errors_name_the_hook_the_line_and_the_traceback() {
    let script = prepared("function request()\n  return nil .. 'x'\nend", 1);
    let mut thread = script.thread(0).unwrap();
    let err = thread.request(&mut Vec::new()).unwrap_err().0;
    assert!(
        err.starts_with("test.lua: request() failed: test.lua:2: attempt to concatenate"),
        "{err}"
    );
    assert!(err.contains("stack traceback"), "{err}");
    assert_eq!(
        script.failure(),
        Some(err.as_str()),
        "the run keeps the error"
    );
    assert!(thread.stop_requested(), "and every thread stops");
}

#[test]
fn one_threads_error_stops_every_thread() {
    let script = prepared(
        "function response(status) if status == 500 then error('bad') end end",
        2,
    );
    let (mut first, second) = (script.thread(0).unwrap(), script.thread(1).unwrap());
    respond(first.as_mut(), 200, &[], b"");
    assert!(script.failure().is_none() && !second.stop_requested());
    assert!(first
        .response(&ResponseView::new(500, &[], b"", Duration::ZERO))
        .is_err());
    assert!(script
        .failure()
        .unwrap()
        .contains("response() failed: test.lua:1: bad"));
    assert!(second.stop_requested());
}

#[test]
fn bad_request_bytes_are_an_error_with_the_bytes() {
    let script = prepared("function request() return 'hello' end", 1);
    let mut thread = script.thread(0).unwrap();
    let err = thread.request(&mut Vec::new()).unwrap_err().0;
    assert!(
        err.starts_with("test.lua: request() returned an invalid HTTP request"),
        "{err}"
    );
    assert!(err.contains("\"hello\""), "{err}");
    let script = prepared("function request() return 42 end", 1);
    let err = script
        .thread(0)
        .unwrap()
        .request(&mut Vec::new())
        .unwrap_err()
        .0;
    assert!(
        err.contains("request() must return a string, got number"),
        "{err}"
    );
}

#[test]
fn setup_and_init_errors_stop_prepare() {
    let load =
        |code: &str| LoadedScript::from_code(&config(&[]), code.as_bytes().to_vec()).unwrap();
    let err = load("function setup(t) t:set('f', print) end")
        .prepare(1, ADDR.parse().unwrap())
        .unwrap_err()
        .0;
    assert!(
        err.contains("setup() failed") && err.contains("cannot transfer 'function'"),
        "{err}"
    );
    let err = load("function init() error('boom') end")
        .prepare(1, ADDR.parse().unwrap())
        .unwrap_err()
        .0;
    assert!(err.contains("init() failed: test.lua:1: boom"), "{err}");
    let err = LoadedScript::from_code(&config(&[]), b"x = = 1".to_vec())
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("test.lua:1:") && !err.contains('\n'),
        "{err}"
    );
}
