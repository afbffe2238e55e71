//! The access-log reader against lines as nginx writes them. The layouts
//! follow nginx's source (nginx/nginx 3f6f7824, src/http/modules/
//! ngx_http_log_module.c): `ngx_http_combined_fmt` is the combined format,
//! `ngx_http_log_escape` writes `"`, `\`, bytes below 0x20 and from 0x7f
//! as `\xHH`; src/core/ngx_times.c writes `$time_local` as
//! `%02d/%s/%d:%02d:%02d:%02d %c%02i%02i`. A HAR (HAR 1.2's
//! `startedDateTime`, `time`, `request`, `response.status`) read as a log.

use super::select::{parse_sample, StatusFilter};
use super::*;
use std::time::Duration;

fn combined() -> LogFormat {
    LogFormat::parse("combined").unwrap()
}

const LINE: &str = r#"127.0.0.1 - - [04/Dec/2026:15:00:00 +0000] "GET /user/123?x=1 HTTP/1.1" 200 612 "-" "curl/8.5.0""#;

#[test]
fn a_combined_line_gives_method_target_time_status_and_agent() {
    let log = read(LINE, &combined(), false).unwrap();
    assert_eq!(log.lines_read, 1);
    let r = &log.requests[0];
    assert_eq!(
        (r.method.as_str(), r.target.as_str()),
        ("GET", "/user/123?x=1")
    );
    assert_eq!(r.status, Some(200));
    assert_eq!(r.user_agent.as_deref(), Some("curl/8.5.0"));
    assert_eq!(r.referer, None, "nginx logs a missing referer as -");
    // 2026-12-04T15:00:00Z.
    assert_eq!(r.at_ms, 1_796_396_400_000);
    assert_eq!(r.line, 1);
}

#[test]
fn the_time_zone_offset_is_applied() {
    let east = LINE.replace("+0000", "+0130");
    let west = LINE.replace("+0000", "-0700");
    let at = |line: &str| read(line, &combined(), false).unwrap().requests[0].at_ms;
    assert_eq!(at(LINE) - at(&east), 90 * 60 * 1000);
    assert_eq!(at(&west) - at(LINE), 7 * 3600 * 1000);
}

#[test]
fn nginx_escaped_quotes_in_request_and_agent_are_undone() {
    let line = r#"10.0.0.1 - - [04/Dec/2026:15:00:00 +0000] "GET /search?q=\x22a b\x22 HTTP/1.1" 200 1 "-" "Mozilla \x22quoted\x22 \x5C""#;
    let r = &read(line, &combined(), false).unwrap().requests[0];
    assert_eq!(r.target, "/search?q=\"a");
    assert_eq!(r.user_agent.as_deref(), Some("Mozilla \"quoted\" \\"));
}

#[test]
fn apache_escaped_quotes_do_not_end_a_field() {
    let line =
        r#"10.0.0.1 - - [04/Dec/2026:15:00:00 +0000] "GET / HTTP/1.1" 200 1 "-" "agent \"x\" y""#;
    let r = &read(line, &combined(), false).unwrap().requests[0];
    assert_eq!(r.user_agent.as_deref(), Some("agent \"x\" y"));
}

#[test]
fn common_has_no_agent_and_combined_lines_do_not_fit_it() {
    let common = LogFormat::parse("common").unwrap();
    let line =
        r#"1.2.3.4 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326"#;
    let r = &read(line, &common, false).unwrap().requests[0];
    assert_eq!(
        (r.target.as_str(), r.user_agent.clone()),
        ("/apache_pb.gif", None)
    );
    assert!(read(LINE, &common, false).is_err(), "text left at the end");
}

#[test]
fn an_empty_file_is_an_error() {
    for empty in ["", "\n", "\r\n\r\n"] {
        let error = read(empty, &combined(), false).unwrap_err();
        assert!(error.to_string().contains("empty"), "{error}");
    }
}

#[test]
fn crlf_lines_read_as_lf_lines() {
    let text = format!("{LINE}\r\n{}\r\n", LINE.replace("15:00:00", "15:00:02"));
    let log = read(&text, &combined(), false).unwrap();
    assert_eq!(log.requests.len(), 2);
    assert_eq!(log.requests[1].user_agent.as_deref(), Some("curl/8.5.0"));
    assert_eq!(log.offset(1), Duration::from_secs(2));
}

#[test]
fn bad_lines_are_counted_and_the_first_kept_with_their_numbers() {
    let text = format!("{LINE}\ngarbage\n{LINE}\n\n\"\\x16\\x03\" 400\n");
    let log = read(&text, &combined(), false).unwrap();
    assert_eq!((log.lines_read, log.lines_skipped), (4, 2));
    assert_eq!(log.bad.iter().map(|b| b.line).collect::<Vec<_>>(), [2, 5]);
    let strict = read(&text, &combined(), true).unwrap_err();
    assert!(
        matches!(strict, ReplayError::Strict { line: 2, .. }),
        "{strict}"
    );
    let none = read("garbage\n", &combined(), false).unwrap_err();
    assert!(none.to_string().contains("line 1"), "{none}");
}

#[test]
fn only_the_first_few_bad_lines_are_kept() {
    let text = "x\n".repeat(BAD_LINES_SHOWN + 3) + LINE;
    let log = read(&text, &combined(), false).unwrap();
    assert_eq!(log.lines_skipped as usize, BAD_LINES_SHOWN + 3);
    assert_eq!(log.bad.len(), BAD_LINES_SHOWN);
}

#[test]
fn timestamps_going_backwards_are_sorted_with_a_note() {
    let text = [
        LINE.replace("/user/123", "/b")
            .replace("15:00:00", "15:00:05"),
        LINE.replace("/user/123", "/a"),
        LINE.replace("/user/123", "/c")
            .replace("15:00:00", "15:00:09"),
    ]
    .join("\n");
    let log = read(&text, &combined(), false).unwrap();
    let order: Vec<&str> = log.requests.iter().map(|r| r.target.as_str()).collect();
    assert_eq!(order, ["/a?x=1", "/b?x=1", "/c?x=1"]);
    assert_eq!(log.notes.len(), 1);
    let in_order = read(LINE, &combined(), false).unwrap();
    assert!(in_order.notes.is_empty());
}

#[test]
fn a_custom_format_reads_request_and_upstream_times() {
    let format = LogFormat::parse(
        r#"$remote_addr [$time_local] "$request" $status $request_time "$upstream_response_time" $host"#,
    )
    .unwrap();
    let line = r#"::1 [04/Dec/2026:15:00:00 +0000] "POST /api/search HTTP/2.0" 201 0.180 "0.010, 0.020" api.example"#;
    let log = read(line, &format, false).unwrap();
    assert!(log.has_request_time);
    let r = &log.requests[0];
    assert_eq!(r.method, "POST");
    assert_eq!(r.request_time, Some(Duration::from_millis(180)));
    assert_eq!(r.upstream_time, Some(Duration::from_millis(30)));
    assert_eq!(r.host.as_deref(), Some("api.example"));
}

#[test]
fn msec_gives_milliseconds() {
    let format = LogFormat::parse("$msec \"$request\"").unwrap();
    let text = "1700000000.250 \"GET /a HTTP/1.1\"\n1700000001.000 \"GET /b HTTP/1.1\"";
    let log = read(text, &format, false).unwrap();
    assert_eq!(log.offset(1), Duration::from_millis(750));
    // Read as decimals: .050 and .030 are no floats' hair under.
    let format = LogFormat::parse("$msec \"$request\" $request_time").unwrap();
    let text = "1796396400.000 \"GET /a HTTP/1.1\" 0.030\n1796396400.050 \"GET /b HTTP/1.1\" 0.1";
    let log = read(text, &format, false).unwrap();
    assert_eq!(log.offset(1), Duration::from_millis(50));
    assert_eq!(
        log.requests[0].request_time,
        Some(Duration::from_millis(30))
    );
    assert_eq!(
        log.requests[1].request_time,
        Some(Duration::from_millis(100))
    );
    let junk = read("1e9 \"GET /a HTTP/1.1\" 0.1", &format, false);
    assert!(junk.is_err(), "$msec 1e9 is no nginx value");
}

#[test]
fn formats_that_cannot_replay_are_refused() {
    for bad in [
        "$remote_addr [$time_local]",
        "\"$request\" $status",
        "$request$status [$time_local]",
        "${request [$time_local]",
    ] {
        assert!(LogFormat::parse(bad).is_err(), "{bad}");
    }
    assert!(LogFormat::parse("${request} [${time_local}]").is_ok());
}

#[test]
fn an_absolute_target_gives_its_path_and_host() {
    let line = LINE.replace("/user/123?x=1", "http://example.com?q=1");
    let r = &read(&line, &combined(), false).unwrap().requests[0];
    assert_eq!(
        (r.target.as_str(), r.host.as_deref()),
        ("/?q=1", Some("example.com"))
    );
}

#[test]
fn ids_fold_into_patterns() {
    let rules = PatternRules::default();
    let table = [
        ("/user/123", "/user/{id}"),
        ("/user/123/posts?page=2", "/user/{id}/posts"),
        ("/o/550e8400-e29b-41d4-a716-446655440000", "/o/{id}"),
        ("/blob/0123456789abcdef0123", "/blob/{id}"),
        ("/blob/cafe", "/blob/cafe"),
        ("/v2/items", "/v2/items"),
        ("/", "/"),
    ];
    for (path, pattern) in table {
        assert_eq!(rules.pattern(path), pattern, "{path}");
    }
    let own = PatternRules::new(&["^/static/=/static/*".to_string()]).unwrap();
    assert_eq!(own.pattern("/static/app.js"), "/static/*");
    assert_eq!(own.pattern("/user/9"), "/user/{id}");
    assert!(PatternRules::new(&["([=x".to_string()]).is_err());
    assert!(PatternRules::new(&["noname".to_string()]).is_err());
}

fn requests(statuses: &[(u64, u16)]) -> Vec<LoggedRequest> {
    let base = read(LINE, &combined(), false).unwrap().requests[0].clone();
    statuses
        .iter()
        .map(|(second, status)| LoggedRequest {
            at_ms: base.at_ms + *second as i64 * 1000,
            status: Some(*status),
            ..base.clone()
        })
        .collect()
}

#[test]
fn a_selection_keeps_the_window_the_statuses_and_an_even_sample() {
    let all = requests(&[(0, 200), (1, 500), (2, 200), (3, 404), (4, 200)]);
    let window = Selection {
        from: Some(Duration::from_secs(1)),
        to: Some(Duration::from_secs(4)),
        ..Selection::default()
    };
    let offsets: Vec<u64> = window
        .apply(&all)
        .iter()
        .map(|(o, _)| o.as_secs())
        .collect();
    assert_eq!(offsets, [0, 1, 2], "offsets count from --from");
    let filtered = Selection {
        filter: Some(StatusFilter::parse("status<400").unwrap()),
        ..Selection::default()
    };
    assert_eq!(filtered.apply(&all).len(), 3);
    let many = requests(&(0..100).map(|s| (s, 200)).collect::<Vec<_>>());
    let sample = Selection {
        sample: Some(parse_sample("10%").unwrap()),
        ..Selection::default()
    };
    let kept: Vec<u64> = sample
        .apply(&many)
        .iter()
        .map(|(o, _)| o.as_secs())
        .collect();
    assert_eq!(kept, (0..100).step_by(10).collect::<Vec<_>>());
    for bad in ["status", "code<4", "status<<4", "status<x"] {
        assert!(StatusFilter::parse(bad).is_err(), "{bad}");
    }
    for bad in ["0", "101", "x", "-5%"] {
        assert!(parse_sample(bad).is_err(), "{bad}");
    }
}

/// Two entries of one origin 1.25 s apart (the second a POST with a body
/// and a header recorded twice), one of another origin.
const HAR: &str = r#"{"log":{"version":"1.2","entries":[
 {"startedDateTime":"2026-12-04T15:00:00.000Z","time":12.5,
  "request":{"method":"GET","url":"http://a.example/user/7?x=1#top","headers":[
   {"name":"Host","value":"a.example"},{"name":"Accept","value":"text/html"}]},
  "response":{"status":200}},
 {"startedDateTime":"2026-12-04T15:00:00.500Z","time":3,
  "request":{"method":"GET","url":"https://cdn.example/app.js","headers":[]},
  "response":{"status":200}},
 {"startedDateTime":"2026-12-04T15:00:01.250Z","time":40,
  "request":{"method":"POST","url":"http://a.example/form","headers":[
   {"name":"X-A","value":"1"},{"name":"X-A","value":"2"},{"name":"Connection","value":"keep-alive"}],
   "postData":{"mimeType":"application/json","text":"{\"k\":1}"}},
  "response":{"status":201}}]}}"#;

#[test]
fn a_har_reads_as_a_log_of_its_first_origins_requests() {
    assert!(har::looks_like_har("\u{feff}\n  {\"log\":{}}"));
    assert!(!har::looks_like_har(LINE));
    let log = har::read(HAR).unwrap();
    assert_eq!((log.lines_read, log.lines_skipped), (3, 1));
    assert!(log.has_request_time);
    assert!(log.notes[0].contains("cdn.example"), "{:?}", log.notes);
    let [get, post] = &log.requests[..] else {
        panic!("{:?}", log.requests);
    };
    assert_eq!(log.offset(1), Duration::from_millis(1250));
    assert_eq!(
        (get.method.as_str(), get.target.as_str()),
        ("GET", "/user/7?x=1")
    );
    assert_eq!(get.request_time, Some(Duration::from_micros(12_500)));
    assert_eq!(get.status, Some(200));
    assert_eq!(get.host, None, "the requests go to --base");
    assert_eq!(
        get.headers,
        [("Accept".to_string(), "text/html".to_string())]
    );
    assert_eq!(
        (post.method.as_str(), post.target.as_str()),
        ("POST", "/form")
    );
    assert_eq!(post.body, r#"{"k":1}"#);
    assert_eq!(
        post.headers,
        [
            ("X-A".to_string(), "1, 2".to_string()),
            ("Content-Type".to_string(), "application/json".to_string())
        ]
    );
    assert_eq!(post.status, Some(201));
    for bad in ["", "[]", "{\"log\":{}}", LINE] {
        assert!(
            matches!(har::read(bad), Err(ReplayError::Har(why)) if why.starts_with("not a HAR file")),
            "{bad}"
        );
    }
}

#[test]
fn a_log_of_the_other_named_format_says_which_to_give() {
    // `stampede serve --access-log` writes common lines; combined is the default.
    let common_line = r#"127.0.0.1 - - [04/Dec/2026:15:00:00 +0000] "GET / HTTP/1.1" 200 279"#;
    let refused = read(common_line, &combined(), false)
        .unwrap_err()
        .to_string();
    assert!(
        refused.ends_with("; its first line reads as the common format: add --format common"),
        "{refused}"
    );
    let common = LogFormat::parse("common").unwrap();
    let refused = read(LINE, &common, false).unwrap_err().to_string();
    assert!(
        refused.ends_with("; its first line reads as the combined format: add --format combined"),
        "{refused}"
    );
    let refused = read("not a log", &combined(), false)
        .unwrap_err()
        .to_string();
    assert!(!refused.contains("add --format"), "{refused}");
}
