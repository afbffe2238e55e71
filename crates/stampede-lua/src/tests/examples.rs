//! Scripts in the style of wrk's scripts/: post, counter, auth, pipeline,
//! setup, report, stop, delay, addr, and init's arguments.

use super::{next_request, prepared, respond, result, ADDR};
use stampede_workload::Script;
use std::net::SocketAddr;
use std::time::Duration;

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
