//! `stampede replay` end to end: a synthetic combined log with
//! known timestamps replayed against `stampede serve --access-log` (every
//! line sent once, each at its recorded offset divided by the speed, the
//! log's order kept with `--keep-order`), and a real nginx's own combined
//! log replayed against it, the second log matching the first request for
//! request. Also: the logged Host sent again (a raw server records it),
//! per-pattern figures with two threads, a custom `log_format` with
//! `$request_time`, a HAR file replayed (`--format har`: its entries'
//! offsets, headers and bodies, its recorded times per pattern), a HAR
//! recorded from headless Chromium's Network events sent again by
//! `run --har`, and a HAR exported by Firefox's own DevTools (checked in)
//! sent again the same way. The combined format is nginx's
//! `ngx_http_combined_fmt` (nginx/nginx, src/http/modules/ngx_http_log_module.c).

use stampede_testkit::workload::*;
use std::time::Duration;

/// Seconds from the log's start of each synthetic line, and its target:
/// ties (two at 1 s), a gap, lines out of order in no way.
const LINES: [(u64, &str); 8] = [
    (0, "/a?x=1"),
    (1, "/user/12"),
    (1, "/user/13"),
    (2, "/b"),
    (2, "/c?q=%22y%22"),
    (3, "/user/14"),
    (5, "/d"),
    (6, "/e"),
];

/// The lines in nginx's combined format, 04/Dec/2026:15:00:00 +0000 on.
fn combined_log() -> String {
    LINES
        .iter()
        .map(|(second, target)| {
            format!(
                "10.0.0.1 - - [04/Dec/2026:15:00:{second:02} +0000] \"GET {target} HTTP/1.1\" 200 5 \"-\" \"agent \\x22{second}\\x22\"\n"
            )
        })
        .collect()
}

/// The `t_s` (intended instant, seconds from the start) of each line of a
/// `--log-requests` file.
fn intended_instants(log: &std::path::Path) -> Vec<f64> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| line.split(' ').next()?.parse().ok())
        .collect()
}

/// The target's log lines, once it has written `count` of them (it
/// writes after the response) and has been stopped.
fn logged(mut target: LoggedTarget, count: usize) -> Vec<String> {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while logged_paths(&target.log).len() < count && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    target.stop();
    logged_paths(&target.log)
}

#[test]
fn a_log_replayed_at_twice_the_speed_sends_every_line_at_half_its_offset() {
    let dir = temp_dir("replay-speed");
    let log = write(&dir, "recorded.log", &combined_log());
    let requests = dir.join("requests.log");
    let target = LoggedTarget::start(&dir);
    let base = target.url("");
    let run = run_stampede(
        binary(),
        &[
            "replay",
            &log,
            "--base",
            &base,
            "--speed",
            "2",
            "-c",
            "8",
            "--log-requests",
            requests.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.count("/requests/sent"), LINES.len() as u64);
    assert_eq!(run.count("/replay/requests_sent"), LINES.len() as u64);
    assert_eq!(run.count("/replay/lines_read"), LINES.len() as u64);
    assert_eq!(run.count("/replay/lines_skipped"), 0);
    // The pacer's instants are the offsets over 2, to the request log's
    // microsecond (the instants are exact; the log prints µs).
    let mut intended = intended_instants(&requests);
    intended.sort_by(f64::total_cmp);
    let expected: Vec<f64> = LINES.iter().map(|(s, _)| *s as f64 / 2.0).collect();
    assert_eq!(intended.len(), expected.len());
    for (got, want) in intended.iter().zip(&expected) {
        assert!(
            (got - want).abs() < 1e-6,
            "intended {got} s, recorded/2 {want} s"
        );
    }
    // The target saw each line once: the same URIs, the count exact.
    let mut paths = logged(target, LINES.len());
    paths.sort();
    let mut sent: Vec<String> = LINES.iter().map(|(_, t)| t.to_string()).collect();
    sent.sort();
    assert_eq!(paths, sent);
    // Per URI pattern: /user/12, 13, 14 fold into one.
    let groups = run.result()["replay"]["groups"].as_array().unwrap();
    assert_eq!(groups[0]["pattern"], "/user/{id}");
    assert_eq!(groups[0]["count"], 3);
    // Each pattern's replayed figures are its own: its statuses add up
    // to its count (the built-in target answers 404 off its routes).
    for group in groups {
        let answered: u64 = group["status"]
            .as_object()
            .unwrap_or_else(|| panic!("no replayed status in {group}"))
            .values()
            .map(|n| n.as_u64().unwrap())
            .sum();
        assert_eq!(answered, group["count"].as_u64().unwrap(), "{group}");
        assert!(group["latency_us"]["p50"].as_u64().unwrap() > 0, "{group}");
    }
    // And in the text summary.
    assert!(run.stdout().contains("/user/{id}"), "{}", run.stdout());
    assert!(
        run.stdout().contains("8 lines read, 0 skipped"),
        "{}",
        run.stdout()
    );
}

#[test]
fn keep_order_sends_the_logs_requests_in_the_logs_order() {
    let dir = temp_dir("replay-order");
    // Out of time order in the file: sorted by time (a note), ties kept
    // in the file's order.
    let mut text = combined_log();
    text.push_str(
        "10.0.0.1 - - [04/Dec/2026:15:00:04 +0000] \"POST /late HTTP/1.1\" 200 5 \"-\" \"x\"\n",
    );
    let log = write(&dir, "recorded.log", &text);
    let target = LoggedTarget::start(&dir);
    let base = target.url("");
    let run = run_stampede(
        binary(),
        &[
            "replay",
            &log,
            "--base",
            &base,
            "--keep-order",
            "--speed",
            "8",
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert!(run.stderr().contains("went backwards"), "{}", run.stderr());
    let mut expected: Vec<(u64, &str)> = LINES.to_vec();
    expected.push((4, "/late"));
    expected.sort_by_key(|(s, _)| *s);
    let expected: Vec<String> = expected.iter().map(|(_, t)| t.to_string()).collect();
    let log_path = target.log.clone();
    assert_eq!(logged(target, expected.len()), expected);
    // Each line's own method: the POST line went as a POST, the rest as GETs.
    let methods: Vec<String> = std::fs::read_to_string(&log_path)
        .unwrap()
        .lines()
        .filter_map(|line| Some(line.split('"').nth(1)?.split(' ').next()?.to_string()))
        .collect();
    let mut want = vec!["GET"; expected.len()];
    want[expected.iter().position(|p| p == "/late").unwrap()] = "POST";
    assert_eq!(methods, want);
}

#[test]
fn bad_lines_are_skipped_or_with_strict_refused_and_a_loop_sends_every_line_again() {
    let dir = temp_dir("replay-bad");
    let text = format!("not a log line\n{}", combined_log());
    let log = write(&dir, "recorded.log", &text);
    let target = LoggedTarget::start(&dir);
    let base = target.url("");
    let strict = run_stampede(
        binary(),
        &[
            "replay", &log, "--base", &base, "--strict", "--speed", "max",
        ],
    );
    assert_eq!(strict.code(), Some(2));
    assert!(strict.stderr().contains("line 1"), "{}", strict.stderr());
    let empty = write(&dir, "empty.log", "");
    let none = run_stampede(binary(), &["replay", &empty, "--base", &base]);
    assert_eq!(none.code(), Some(2));
    // --base names where requests go, not what they ask: a path or a query
    // would be put before every logged one, so both are refused.
    for (bad, says) in [("/prefix", "not '/prefix'"), ("?x=1", "not '/?x=1'")] {
        let with = format!("{}{bad}", base.trim_end_matches('/'));
        let refused = run_stampede(binary(), &["replay", &log, "--base", &with]);
        assert_eq!(refused.code(), Some(2), "{with}");
        let stderr = refused.stderr();
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
    }
    let run = run_stampede(
        binary(),
        &[
            "replay", &log, "--base", &base, "--speed", "max", "-c", "3", "--loop", "2",
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.count("/replay/lines_skipped"), 1);
    assert!(run.stderr().contains("line 1 skipped"), "{}", run.stderr());
    assert_eq!(run.result()["plan"]["model"], "closed", "--speed max");
    // --loop 2: every line twice, the count exact.
    assert_eq!(run.count("/replay/requests_sent"), 2 * LINES.len() as u64);
    let mut paths = logged(target, 2 * LINES.len());
    paths.sort();
    let mut twice: Vec<String> = LINES
        .iter()
        .flat_map(|(_, t)| [t.to_string(), t.to_string()])
        .collect();
    twice.sort();
    assert_eq!(paths, twice);
}

#[test]
fn an_nginx_log_replayed_against_nginx_gives_the_same_log() {
    let nginx = stampede_testkit::require_tool!("nginx");
    let dir = temp_dir("replay-nginx");
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let server = stampede_testkit::nginx::Nginx::start(
        &nginx,
        &dir,
        &stampede_testkit::nginx::Setup {
            listens: vec![addr.clone()],
            log_format: "$remote_addr - $remote_user [$time_local] \"$request\" $status $body_bytes_sent \"$http_referer\" \"$http_user_agent\"",
            http_extra: "",
            netns: None,
        },
        || stampede_testkit::nginx::listening(&addr),
    );
    // A first run loads a few routes, one at a time.
    let paths = write(
        &dir,
        "paths.csv",
        "path\n/\n/user/1\n/user/2?tab=a\n/static/app.js\n/search?q=a%20b\n",
    );
    let first = run_stampede(
        binary(),
        &[
            "run",
            &format!("http://{addr}{{{{path}}}}"),
            "--feed",
            &format!("{paths}:unique"),
            "-c",
            "1",
            "-t",
            "1",
            "-H",
            "Referer: http://example.test/",
        ],
    );
    assert_eq!(first.code(), Some(0), "{}", first.stderr());
    let take = || {
        std::thread::sleep(Duration::from_millis(300));
        let text = std::fs::read_to_string(&server.log).unwrap();
        std::fs::write(&server.log, "").unwrap();
        text
    };
    let recorded = take();
    assert_eq!(recorded.lines().count(), 5, "{recorded}");
    let recorded_log = write(&dir, "recorded.log", &recorded);
    let replay = run_stampede(
        binary(),
        &[
            "replay",
            &recorded_log,
            "--base",
            &format!("http://{addr}"),
            "--keep-order",
        ],
    );
    assert_eq!(replay.code(), Some(0), "{}", replay.stderr());
    let replayed = take();
    // Request line, status, size, referer and user agent: the part after
    // the time, request for request.
    let after_time = |text: &str| -> Vec<String> {
        text.lines()
            .map(|line| {
                line.split_once("] ")
                    .map(|(_, rest)| rest.to_string())
                    .unwrap_or_default()
            })
            .collect()
    };
    assert_eq!(after_time(&replayed), after_time(&recorded));
    drop(server);
}

/// Each request head a raw server received, in arrival order; it answers
/// each with an empty 200.
fn recording_server() -> (
    stampede_testkit::RawServer,
    std::sync::Arc<std::sync::Mutex<Vec<String>>>,
) {
    let heads = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = heads.clone();
    let server = stampede_testkit::RawServer::start(move |mut stream| {
        use std::io::Write;
        while let Some(head) = stampede_testkit::read_whole_head(&mut stream) {
            kept.lock().unwrap().push(head);
            let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
            if stream.write_all(ok).is_err() {
                return;
            }
        }
    });
    (server, heads)
}

/// (path, every Host header value) of each received head, sorted by path.
fn hosts_by_path(heads: &[String]) -> Vec<(String, Vec<String>)> {
    let mut seen: Vec<(String, Vec<String>)> = heads
        .iter()
        .map(|head| {
            let mut lines = head.lines();
            let path = lines
                .next()
                .and_then(|l| l.split(' ').nth(1))
                .unwrap_or_default()
                .to_string();
            let hosts = lines
                .filter_map(|l| l.split_once(':'))
                .filter(|(name, _)| name.eq_ignore_ascii_case("host"))
                .map(|(_, value)| value.trim().to_string())
                .collect();
            (path, hosts)
        })
        .collect();
    seen.sort();
    seen
}

#[test]
fn each_request_carries_its_logged_host_unless_a_host_header_is_given() {
    let dir = temp_dir("replay-host");
    // nginx's $host; a line with `-` (as $http_host logs a request
    // without one) and an absolute-form target with no logged host.
    let format = "$remote_addr [$time_local] \"$request\" $status $host";
    let log = write(
        &dir,
        "recorded.log",
        concat!(
            "10.0.0.1 [04/Dec/2026:15:00:00 +0000] \"GET /a HTTP/1.1\" 200 a.example\n",
            "10.0.0.1 [04/Dec/2026:15:00:00 +0000] \"GET /b HTTP/1.1\" 200 b.example\n",
            "10.0.0.1 [04/Dec/2026:15:00:01 +0000] \"GET /c HTTP/1.1\" 200 a.example:8443\n",
            "10.0.0.1 [04/Dec/2026:15:00:01 +0000] \"GET /d HTTP/1.1\" 200 -\n",
            "10.0.0.1 [04/Dec/2026:15:00:01 +0000] \"GET http://c.example/e HTTP/1.1\" 200 -\n",
        ),
    );
    let (server, heads) = recording_server();
    let base = server.url("");
    let base_host = base.trim_start_matches("http://").to_string();
    let replay = |extra: &[&str]| {
        heads.lock().unwrap().clear();
        let mut args = vec![
            "replay", &log, "--base", &base, "--format", format, "--speed", "max", "-c", "2",
        ];
        args.extend_from_slice(extra);
        let run = run_stampede(binary(), &args);
        assert_eq!(run.code(), Some(0), "{}", run.stderr());
        assert_eq!(run.count("/requests/success"), 5, "{}", run.stderr());
        hosts_by_path(&heads.lock().unwrap())
    };
    let one = |host: &str| vec![host.to_string()];
    assert_eq!(
        replay(&[]),
        vec![
            ("/a".to_string(), one("a.example")),
            ("/b".to_string(), one("b.example")),
            ("/c".to_string(), one("a.example:8443")),
            ("/d".to_string(), one(&base_host)),
            ("/e".to_string(), one("c.example")),
        ]
    );
    // -H Host replaces every logged one.
    let given = replay(&["-H", "Host: given.example"]);
    assert_eq!(given.len(), 5);
    for (path, hosts) in given {
        assert_eq!(hosts, one("given.example"), "{path}");
    }
}

#[test]
fn with_two_threads_each_pattern_has_its_own_figures() {
    let dir = temp_dir("replay-threads");
    // Three kinds of line, interleaved and due together in threes, each
    // answered its own way by the built-in target: /status/201 fast with
    // 201, a POST to /status/404 fast with 404, /delay/60 with 200 after
    // 60 ms. Were a request's figures put under another line's pattern,
    // a pattern would show another's status or time.
    let kinds = [
        ("GET", "/status/201", "/created"),
        ("POST", "/status/404", "/missing"),
        ("GET", "/delay/60", "/slow"),
    ];
    let per_kind = 10;
    let text: String = (0..per_kind * kinds.len())
        .map(|i| {
            let (method, path, _) = kinds[i % kinds.len()];
            format!(
                "10.0.0.1 - - [04/Dec/2026:15:00:{:02} +0000] \"{method} {path}?i={i} HTTP/1.1\" 200 5 \"-\" \"x\"\n",
                i / 6
            )
        })
        .collect();
    let log = write(&dir, "recorded.log", &text);
    let total = (per_kind * kinds.len()) as u64;
    // The open model at the log's pace × 4, and the closed one (three
    // connections on two workers: one has two, the other one).
    for speed in ["4", "max"] {
        // A target (and its access log) of its own.
        let own = dir.join(format!("speed-{speed}"));
        std::fs::create_dir_all(&own).unwrap();
        let target = LoggedTarget::start(&own);
        let mut args: Vec<String> = [
            "replay",
            &log,
            "--base",
            &target.url(""),
            "--speed",
            speed,
            "-t",
            "2",
            "-c",
            "3",
        ]
        .map(String::from)
        .to_vec();
        for (_, path, name) in kinds {
            args.extend(["--pattern".to_string(), format!("^{path}$={name}")]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = run_stampede(binary(), &args);
        assert_eq!(run.code(), Some(0), "{}", run.stderr());
        assert_eq!(run.count("/requests/sent"), total, "--speed {speed}");
        assert_eq!(run.result()["plan"]["threads"], 2, "two workers shared it");
        let groups = run.result()["replay"]["groups"].as_array().unwrap();
        assert_eq!(groups.len(), kinds.len(), "{groups:?}");
        for (method, _, name) in kinds {
            let pattern = format!("{method} {name}");
            let group = groups
                .iter()
                .find(|g| g["pattern"] == pattern.as_str())
                .unwrap_or_else(|| panic!("no group {pattern} in {groups:?}"));
            assert_eq!(group["count"], per_kind as u64, "{group}");
            let status = match name {
                "/created" => "201",
                "/missing" => "404",
                _ => "200",
            };
            assert_eq!(
                group["status"],
                serde_json::json!({ status: per_kind }),
                "--speed {speed}, {pattern}: every replayed response its own"
            );
            let p50 = group["latency_us"]["p50"].as_u64().unwrap();
            if name == "/slow" {
                assert!(p50 >= 60_000, "{pattern}: p50 {p50} µs");
            } else {
                assert!(p50 < 60_000, "{pattern}: p50 {p50} µs");
            }
        }
        // The target saw each line once.
        let mut paths = logged(target, total as usize);
        paths.sort();
        let mut sent: Vec<String> = (0..per_kind * kinds.len())
            .map(|i| format!("{}?i={i}", kinds[i % kinds.len()].1))
            .collect();
        sent.sort();
        assert_eq!(paths, sent, "--speed {speed}");
    }
}

#[test]
fn a_custom_log_format_with_request_times_is_replayed_with_recorded_against_replayed_figures() {
    let dir = temp_dir("replay-custom");
    // An nginx log_format (ngx_http_log_module: $msec is seconds with
    // milliseconds, $request_time seconds with milliseconds, several
    // upstreams' times joined by ", "), the request in two parts and the
    // status braced.
    let format = "$remote_addr $msec \"$request_method $request_uri\" ${status} $request_time \"$upstream_response_time\" $http_host";
    let lines = [
        ("0.000", "/delay/30?i=0", 200, "0.030", "0.029"),
        ("0.050", "/status/201?i=1", 201, "0.002", "-"),
        ("0.100", "/delay/30?i=2", 200, "0.030", "0.010, 0.019"),
        ("0.150", "/status/201?i=3", 201, "0.004", "0.003"),
        ("0.200", "/delay/30?i=4", 200, "0.030", "0.029"),
        ("0.250", "/status/201?i=5", 201, "0.006", "0.005"),
    ];
    let text: String = lines
        .iter()
        .map(|(at, uri, status, took, upstream)| {
            let msec = format!("1796396400{}", &at[1..]);
            format!("10.0.0.1 {msec} \"GET {uri}\" {status} {took} \"{upstream}\" api.example\n")
        })
        .collect();
    let log = write(&dir, "recorded.log", &text);
    let requests = dir.join("requests.log");
    let target = LoggedTarget::start(&dir);
    let base = target.url("");
    let run = run_stampede(
        binary(),
        &[
            "replay",
            &log,
            "--base",
            &base,
            "--format",
            format,
            "-t",
            "2",
            "--log-requests",
            requests.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.count("/requests/sent"), lines.len() as u64);
    assert_eq!(run.count("/replay/lines_read"), lines.len() as u64);
    assert_eq!(run.count("/replay/lines_skipped"), 0);
    // $msec's milliseconds are the offsets, at speed 1.
    let mut intended = intended_instants(&requests);
    intended.sort_by(f64::total_cmp);
    let expected: Vec<f64> = lines.iter().map(|l| l.0.parse().unwrap()).collect();
    assert_eq!(intended.len(), expected.len());
    for (got, want) in intended.iter().zip(&expected) {
        assert!(
            (got - want).abs() < 1e-6,
            "intended {got} s, logged {want} s"
        );
    }
    let groups = run.result()["replay"]["groups"].as_array().unwrap();
    let group = |pattern: &str| {
        groups
            .iter()
            .find(|g| g["pattern"] == pattern)
            .unwrap_or_else(|| panic!("no {pattern} in {groups:?}"))
    };
    let slow = group("/delay/{id}");
    assert_eq!(slow["count"], 3);
    assert_eq!(slow["recorded_status"], serde_json::json!({ "200": 3 }));
    assert_eq!(
        slow["recorded"],
        serde_json::json!({ "count": 3, "p50_us": 30_000, "p99_us": 30_000, "max_us": 30_000 })
    );
    assert_eq!(slow["status"], serde_json::json!({ "200": 3 }));
    let p50 = slow["latency_us"]["p50"].as_u64().unwrap();
    assert!(p50 >= 30_000, "/delay/30 replayed in {p50} µs");
    let fast = group("/status/{id}");
    assert_eq!(fast["recorded_status"], serde_json::json!({ "201": 3 }));
    assert_eq!(
        fast["recorded"],
        serde_json::json!({ "count": 3, "p50_us": 4_000, "p99_us": 6_000, "max_us": 6_000 })
    );
    assert_eq!(fast["status"], serde_json::json!({ "201": 3 }));
    // The summary compares them per pattern.
    let stdout = run.stdout();
    let line = stdout
        .lines()
        .find(|l| l.contains("/delay/{id}") && l.contains("logged status"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        line.contains("recorded p50") && line.contains("replayed p50"),
        "{line}"
    );
    // The target saw each line once.
    let mut paths = logged(target, lines.len());
    paths.sort();
    let mut sent: Vec<String> = lines.iter().map(|l| l.1.to_string()).collect();
    sent.sort();
    assert_eq!(paths, sent);
}

/// The path and query of a URL.
fn path_and_query(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    rest.find('/')
        .map_or("/".to_string(), |at| rest[at..].to_string())
}

#[test]
fn a_har_recorded_by_headless_chromium_is_sent_again_request_for_request() {
    let chromium = stampede_testkit::require_tool!("chromium");
    let dir = temp_dir("replay-har");
    // Two pages of `stampede serve --root`, with their style sheets,
    // script and image.
    let root = dir.join("www");
    std::fs::create_dir_all(&root).unwrap();
    for (name, text) in [
        (
            "index.html",
            "<!doctype html><link rel=stylesheet href=style.css><script src=app.js></script><img src=logo.svg><p>one</p>",
        ),
        ("page2.html", "<!doctype html><link rel=stylesheet href=style.css?v=2><p>two</p>"),
        ("style.css", "p { color: red }"),
        ("app.js", "document.title = 'one';"),
        ("logo.svg", "<svg xmlns='http://www.w3.org/2000/svg' width='1' height='1'/>"),
    ] {
        std::fs::write(root.join(name), text).unwrap();
    }
    let root = root.to_str().unwrap();
    let port = free_port().to_string();
    let serve = ["--port", &port, "--root", root];
    let recorded_dir = dir.join("recorded");
    std::fs::create_dir_all(&recorded_dir).unwrap();
    let recording = LoggedTarget::start_with(&recorded_dir, &serve);
    let origin = recording.url("");
    let mut browser = stampede_testkit::Browser::open(&chromium, "about:blank");
    browser.call("Network.enable", serde_json::json!({}));
    // Each visit asks the server, as a first visit does.
    browser.call(
        "Network.setCacheDisabled",
        serde_json::json!({ "cacheDisabled": true }),
    );
    for page in ["/index.html", "/page2.html?from=one"] {
        assert!(
            browser.visit(&format!("{origin}{page}"), Duration::from_secs(20)),
            "{page} did not load"
        );
    }
    let har = stampede_testkit::har_from_network_events(&browser.take_events());
    drop(browser);
    let seen_by_recording = recording.stop_and_paths();
    let entries: Vec<String> = har["log"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| path_and_query(e["request"]["url"].as_str().unwrap()))
        .collect();
    for page in [
        "/index.html",
        "/style.css",
        "/app.js",
        "/logo.svg",
        "/page2.html?from=one",
        "/style.css?v=2",
    ] {
        assert!(
            entries.iter().any(|e| e == page),
            "{page} not in {entries:?}"
        );
    }
    // Each entry is a request the server saw (a favicon it may have been
    // asked for outside the page's Network events is not).
    for entry in &entries {
        let recorded = seen_by_recording.iter().filter(|p| *p == entry).count();
        let listed = entries.iter().filter(|p| *p == entry).count();
        assert!(recorded >= listed, "{entry}: {seen_by_recording:?}");
    }
    let file = dir.join("visit.har");
    std::fs::write(&file, har.to_string()).unwrap();
    // A fresh target on the same origin: it sees exactly the entries, in
    // their order (one user walks them once, no pauses).
    let replayed_dir = dir.join("replayed");
    std::fs::create_dir_all(&replayed_dir).unwrap();
    let target = LoggedTarget::start_with(&replayed_dir, &serve);
    let count = entries.len().to_string();
    let run = run_stampede(
        binary(),
        &[
            "run",
            "--har",
            file.to_str().unwrap(),
            "--har-think",
            "0",
            "-n",
            &count,
            "-c",
            "1",
            "-t",
            "1",
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(
        run.count("/requests/sent"),
        entries.len() as u64,
        "{entries:?} {}",
        run.stderr()
    );
    // What was answered then is answered now (a favicon Chromium asked
    // for may have been a 404 both times).
    let answered = har["log"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["response"]["status"].as_u64().is_some_and(|s| s < 400))
        .count();
    assert_eq!(
        run.count("/requests/success"),
        answered as u64,
        "{entries:?}"
    );
    assert_eq!(target.stop_and_paths(), entries);
}

/// A HAR's entries: offset (ms from the first), method, URL on the
/// recorded origin, recorded `time` (ms), status. An entry to another
/// origin and one answered from the browser's cache are left out.
const HAR_ENTRIES: [(u64, &str, &str, f64, u16); 6] = [
    (0, "GET", "/status/201?i=0", 4.0, 201),
    (400, "GET", "/delay/20?i=1", 20.0, 200),
    (1000, "POST", "/echo", 2.0, 200),
    (1000, "GET", "/status/201?i=3", 6.0, 201),
    (2200, "GET", "/delay/20?i=4", 24.0, 200),
    (3000, "GET", "/status/201?i=5", 8.0, 201),
];

/// HAR 1.2 (as DevTools writes it) of [`HAR_ENTRIES`] on
/// `http://app.example:8080`, plus a CDN request and a cached one; the
/// POST carries a JSON body, every request its own `X-Trace` header.
fn har_file() -> String {
    let at = |ms: u64| format!("2026-12-04T15:00:{:02}.{:03}Z", ms / 1000, ms % 1000);
    let mut entries: Vec<serde_json::Value> = HAR_ENTRIES
        .iter()
        .enumerate()
        .map(|(i, (ms, method, path, time, status))| {
            let mut request = serde_json::json!({
                "method": method,
                "url": format!("http://app.example:8080{path}"),
                "httpVersion": "HTTP/1.1",
                "headers": [
                    { "name": "Host", "value": "app.example:8080" },
                    { "name": "X-Trace", "value": format!("t{i}") },
                    { "name": "Connection", "value": "keep-alive" },
                ],
                "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0,
            });
            if *method == "POST" {
                request["postData"] =
                    serde_json::json!({ "mimeType": "application/json", "text": "{\"k\":1}" });
            }
            serde_json::json!({
                "startedDateTime": at(*ms),
                "time": time,
                "request": request,
                "response": { "status": status, "statusText": "", "httpVersion": "HTTP/1.1",
                    "headers": [], "cookies": [], "content": { "size": 0, "mimeType": "text/plain" },
                    "redirectURL": "", "headersSize": -1, "bodySize": 0 },
                "cache": {}, "timings": { "send": 0, "wait": time, "receive": 0 },
            })
        })
        .collect();
    let mut other = entries[1].clone();
    other["request"]["url"] = "https://cdn.example/lib.js".into();
    entries.insert(2, other);
    let mut cached = entries[0].clone();
    cached["startedDateTime"] = at(1500).into();
    cached["_fromCache"] = "memory".into();
    entries.push(cached);
    serde_json::json!({ "log": { "version": "1.2", "creator": { "name": "test", "version": "1" },
        "entries": entries } })
    .to_string()
}

#[test]
fn a_har_replayed_at_twice_the_speed_sends_each_entry_at_half_its_offset_in_order() {
    let dir = temp_dir("replay-har-speed");
    let har = write(&dir, "session.har", &har_file());
    let requests = dir.join("requests.log");
    let target = LoggedTarget::start(&dir);
    let base = target.url("");
    let run = run_stampede(
        binary(),
        &[
            "replay",
            &har,
            "--base",
            &base,
            "--format",
            "har",
            "--speed",
            "2",
            "--keep-order",
            "--log-requests",
            requests.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let count = HAR_ENTRIES.len() as u64;
    assert_eq!(run.count("/requests/sent"), count);
    assert_eq!(run.count("/replay/requests_sent"), count);
    assert_eq!(run.count("/replay/lines_read"), count + 2);
    assert_eq!(run.count("/replay/lines_skipped"), 2);
    assert!(
        run.stderr().contains("other origins") && run.stderr().contains("cache"),
        "{}",
        run.stderr()
    );
    // The pacer's instants are the recorded offsets over 2, to the
    // request log's microsecond.
    let intended = intended_instants(&requests);
    let expected: Vec<f64> = HAR_ENTRIES
        .iter()
        .map(|e| e.0 as f64 / 1000.0 / 2.0)
        .collect();
    assert_eq!(intended.len(), expected.len());
    for (got, want) in intended.iter().zip(&expected) {
        assert!(
            (got - want).abs() < 1e-6,
            "intended {got} s, recorded/2 {want} s"
        );
    }
    // The target saw each entry once, in the HAR's order.
    let paths: Vec<String> = HAR_ENTRIES.iter().map(|e| e.2.to_string()).collect();
    assert_eq!(logged(target, paths.len()), paths);
    // Per pattern: what the HAR recorded against what the replay measured.
    let groups = run.result()["replay"]["groups"].as_array().unwrap();
    let group = |pattern: &str| {
        groups
            .iter()
            .find(|g| g["pattern"] == pattern)
            .unwrap_or_else(|| panic!("no {pattern} in {groups:?}"))
    };
    let slow = group("GET /delay/{id}");
    assert_eq!(slow["count"], 2);
    assert_eq!(slow["recorded_status"], serde_json::json!({ "200": 2 }));
    assert_eq!(
        slow["recorded"],
        serde_json::json!({ "count": 2, "p50_us": 20_000, "p99_us": 24_000, "max_us": 24_000 })
    );
    assert_eq!(slow["status"], serde_json::json!({ "200": 2 }));
    let p50 = slow["latency_us"]["p50"].as_u64().unwrap();
    assert!(p50 >= 20_000, "/delay/20 replayed in {p50} µs");
    let fast = group("GET /status/{id}");
    assert_eq!(fast["count"], 3);
    assert_eq!(fast["recorded_status"], serde_json::json!({ "201": 3 }));
    assert_eq!(fast["status"], serde_json::json!({ "201": 3 }));
    assert_eq!(
        group("POST /echo")["status"],
        serde_json::json!({ "200": 1 })
    );
    let stdout = run.stdout();
    let line = stdout
        .lines()
        .find(|l| l.contains("/delay/{id}") && l.contains("recorded p50"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(line.contains("replayed p50"), "{line}");
}

/// Each request's head and body, in arrival order.
type Received = std::sync::Arc<std::sync::Mutex<Vec<(String, String)>>>;

/// Each request a raw server received, head and body, in arrival order;
/// it answers each with an empty 200.
fn recording_server_with_bodies() -> (stampede_testkit::RawServer, Received) {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = seen.clone();
    let server = stampede_testkit::RawServer::start(move |mut stream| {
        use std::io::{Read, Write};
        while let Some(head) = stampede_testkit::read_whole_head(&mut stream) {
            let length: usize = head
                .lines()
                .filter_map(|l| l.split_once(':'))
                .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
                .and_then(|(_, v)| v.trim().parse().ok())
                .unwrap_or(0);
            let mut body = vec![0; length];
            if stream.read_exact(&mut body).is_err() {
                return;
            }
            kept.lock()
                .unwrap()
                .push((head, String::from_utf8_lossy(&body).into_owned()));
            let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
            if stream.write_all(ok).is_err() {
                return;
            }
        }
    });
    (server, seen)
}

/// The value of header `name` in a request head.
fn header_value(head: &str, name: &str) -> Option<String> {
    head.lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.trim().to_string())
}

#[test]
fn a_har_is_taken_as_har_without_format_and_each_request_carries_its_headers_and_body() {
    let dir = temp_dir("replay-har-headers");
    let har = write(&dir, "session.har", &har_file());
    let (server, seen) = recording_server_with_bodies();
    let base = server.url("");
    let base = base.trim_end_matches('/').to_string();
    let run = run_stampede(
        binary(),
        &[
            "replay",
            &har,
            "--base",
            &base,
            "--speed",
            "max",
            "--keep-order",
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), HAR_ENTRIES.len());
    for (i, ((head, body), entry)) in seen.iter().zip(&HAR_ENTRIES).enumerate() {
        let request_line = head.lines().next().unwrap_or_default();
        assert_eq!(request_line, format!("{} {} HTTP/1.1", entry.1, entry.2));
        // The recorded header, the base's host (not the recorded one),
        // no recorded hop-by-hop header.
        assert_eq!(
            header_value(head, "X-Trace"),
            Some(format!("t{i}")),
            "{head}"
        );
        let host = base.trim_start_matches("http://").to_string();
        assert_eq!(header_value(head, "Host"), Some(host), "{head}");
        assert_ne!(
            header_value(head, "Connection").as_deref(),
            Some("keep-alive")
        );
        if entry.1 == "POST" {
            assert_eq!(body, "{\"k\":1}");
            assert_eq!(
                header_value(head, "Content-Type").as_deref(),
                Some("application/json")
            );
        } else {
            assert_eq!(body, "", "{head}");
        }
    }
}

#[test]
fn a_file_that_is_not_har_or_strict_with_a_har_is_refused_in_one_line() {
    let dir = temp_dir("replay-har-bad");
    let log = write(&dir, "recorded.log", &combined_log());
    let har = write(&dir, "session.har", &har_file());
    for (file, extra, says) in [
        (&log, "--format", "not a HAR file"),
        (&har, "--strict", "--strict"),
    ] {
        let mut args = vec!["replay", file.as_str(), "--base", "http://127.0.0.1:9"];
        args.extend(match extra {
            "--format" => vec!["--format", "har"],
            _ => vec!["--format", "har", "--strict"],
        });
        let run = run_stampede(binary(), &args);
        assert_eq!(run.code(), Some(2), "{}", run.stderr());
        let stderr = run.stderr();
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
    }
}

/// The method and path of each request in a Common Log Format access log.
fn logged_requests(log: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(|line| {
            let request = line.split('"').nth(1).unwrap_or("");
            request
                .rsplit_once(' ')
                .map_or(request, |(method_and_path, _)| method_and_path)
                .to_string()
        })
        .collect()
}

/// A HAR written by Firefox 153 ESR's DevTools HAR auto-export (how:
/// crates/stampede-testkit/testdata/har/README.md) of one page of `stampede
/// serve --root site`: `run --har` sends each of its entries once, in the
/// order they started (Firefox lists them otherwise), with their methods.
#[test]
fn har_exported_by_firefox_devtools_is_sent_again_entry_for_entry() {
    let testdata = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/crates/stampede-testkit/testdata/har"
    );
    let recorded =
        std::fs::read_to_string(format!("{testdata}/firefox-153esr-stampede-serve.har")).unwrap();
    let har: serde_json::Value = serde_json::from_str(&recorded).unwrap();
    assert_eq!(har["log"]["creator"]["name"], "Firefox");
    let entries = har["log"]["entries"].as_array().unwrap();
    // The entries by start time, as Firefox timed them.
    let mut by_start: Vec<(&str, String)> = entries
        .iter()
        .map(|e| {
            let request = &e["request"];
            let line = format!(
                "{} {}",
                request["method"].as_str().unwrap(),
                path_and_query(request["url"].as_str().unwrap())
            );
            (e["startedDateTime"].as_str().unwrap(), line)
        })
        .collect();
    by_start.sort();
    let expected: Vec<String> = by_start.into_iter().map(|(_, line)| line).collect();
    assert_eq!(
        expected,
        [
            "GET /index.html",
            "GET /style.css",
            "GET /app.js",
            "GET /dot.png",
            "POST /echo",
            "GET /dot.png",
            "GET /favicon.ico",
        ],
        "the file's entries"
    );
    // Recorded on port 18080; sent to a free port (URLs and Host alike).
    let dir = temp_dir("firefox-har");
    let port = free_port().to_string();
    let file = dir.join("firefox.har");
    std::fs::write(
        &file,
        recorded.replace("127.0.0.1:18080", &format!("127.0.0.1:{port}")),
    )
    .unwrap();
    let site = format!("{testdata}/site");
    let mut target = LoggedTarget::start_with(&dir, &["--port", &port, "--root", &site]);
    let count = expected.len().to_string();
    let run = run_stampede(
        binary(),
        &[
            "run",
            "--har",
            file.to_str().unwrap(),
            "--har-think",
            "0",
            "-n",
            &count,
            "-c",
            "1",
            "-t",
            "1",
        ],
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(run.count("/requests/success"), 7, "{}", run.stderr());
    target.stop();
    assert_eq!(logged_requests(&target.log), expected);
}
