//! Parsing and evaluating every form of the check grammar.

use super::*;
use std::time::Duration;

fn view<'a>(status: u16, headers: &'a [(&'a [u8], &'a [u8])], body: &'a [u8]) -> ResponseView<'a> {
    ResponseView::new(status, headers, body, Duration::from_millis(150))
}

fn passes(check: &str, response: &ResponseView<'_>) -> bool {
    Check::parse(check).unwrap().evaluate(response) == Verdict::Pass
}

const HEADERS: [(&[u8], &[u8]); 2] = [(b"Content-Type", b"application/json"), (b"X-Id", b"7")];
const BODY: &[u8] = br#"{"data":{"id":1},"items":[{"price":2.5}],"state":"ok"}"#;

#[test]
fn every_check_form_passes_and_fails() {
    let ok = view(200, &HEADERS, BODY);
    let bad = view(503, &[], b"<html>oops</html>");
    for check in [
        "status == 200",
        "status in 200..299",
        "header(Content-Type) ~ json",
        "header(X-Id) exists",
        "body contains \"state\"",
        "body ~ \"id\":\\d",
        "body size < 10KiB",
        "json($.data.id) exists",
        "json($.items[0].price) > 0",
        "json($.state) == \"ok\"",
        "time < 200ms",
    ] {
        assert!(passes(check, &ok), "{check} should pass");
        if !check.starts_with("time") && !check.starts_with("body size") {
            assert!(!passes(check, &bad), "{check} should fail");
        }
    }
    assert!(!passes("time < 100ms", &ok));
    assert!(!passes("body size < 10", &ok));
}

#[test]
fn range_bounds_are_inclusive_and_other_comparisons_work() {
    for (status, pass) in [(199, false), (200, true), (299, true), (300, false)] {
        assert_eq!(
            passes("status in 200..299", &view(status, &[], b"")),
            pass,
            "{status}"
        );
    }
    assert!(passes("status != 500", &view(200, &[], b"")));
    assert!(passes("status >= 200", &view(200, &[], b"")));
    assert!(passes("json($.data.id) == 1", &view(200, &[], BODY)));
    assert!(passes("json($.data.id) != 2", &view(200, &[], BODY)));
    assert!(passes("json($.state) ~ ^o", &view(200, &[], BODY)));
    assert!(passes("header(x-id) == \"7\"", &view(200, &HEADERS, b"")));
}

#[test]
fn failures_carry_the_value_seen() {
    let response = view(503, &HEADERS, BODY);
    assert_eq!(
        Check::parse("status == 200").unwrap().evaluate(&response),
        Verdict::Fail("503".into())
    );
    assert_eq!(
        Check::parse("header(X-Missing) exists")
            .unwrap()
            .evaluate(&response),
        Verdict::Fail("absent".into())
    );
    assert_eq!(
        Check::parse("json($.nope) exists")
            .unwrap()
            .evaluate(&response),
        Verdict::Fail("$.nope not found".into())
    );
    assert_eq!(
        Check::parse("json($.state) == \"bad\"")
            .unwrap()
            .evaluate(&response),
        Verdict::Fail("\"ok\"".into())
    );
    let not_json = view(200, &[], b"plain");
    assert!(
        matches!(Check::parse("json($.a) exists").unwrap().evaluate(&not_json), Verdict::Fail(v) if v.contains("not JSON"))
    );
    let empty = view(200, &[], b"");
    assert!(!passes("body contains \"x\"", &empty));
}

#[test]
fn a_bad_check_shows_a_caret_under_the_problem() {
    let err = Check::parse("status = 200").unwrap_err();
    assert_eq!(err.at, 7);
    let text = err.to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(lines[0], "invalid check: status = 200");
    assert_eq!(
        lines[1].find('^'),
        lines[0].find(" = ").map(|i| i + 1),
        "{text}"
    );
    for (bad, at) in [
        ("", 0),
        ("stat == 200", 0),
        ("status == abc", 10),
        ("status in 300..200", 10),
        ("header() exists", 7),
        ("header(X exists", 6),
        ("body ~ (", 7),
        ("body contains text", 14),
        ("body size < 10 parsecs", 15),
        ("json(data) exists", 5),
        ("json($.a) frobs", 10),
        ("time < soon", 7),
        ("status == 200 extra", 14),
    ] {
        let err = Check::parse(bad).unwrap_err();
        assert_eq!(err.at, at, "{bad}: {err}");
    }
}

#[test]
fn the_set_says_what_to_keep() {
    let status_only = CheckSet::parse(&["status == 200", "time < 1s"]).unwrap();
    assert!(!status_only.needs_headers() && !status_only.needs_body());
    let header = CheckSet::parse(&["header(X) exists"]).unwrap();
    assert!(header.needs_headers() && !header.needs_body());
    let body = CheckSet::parse(&["json($.a) exists"]).unwrap();
    assert!(body.needs_body() && !body.needs_headers());
    assert!(CheckSet::parse::<&str>(&[]).unwrap().is_empty());
    let mut seen = Vec::new();
    let all = CheckSet::parse(&["status == 200", "status == 201"])
        .unwrap()
        .evaluate(&view(200, &[], b""), |i, v| seen.push((i, v.clone())));
    assert!(!all);
    assert_eq!(
        seen,
        vec![(0, Verdict::Pass), (1, Verdict::Fail("200".into()))]
    );
}

#[test]
fn sizes_read_decimal_and_binary_units() {
    use super::parse::parse_size;
    assert_eq!(parse_size("10KiB"), Some(10240.0));
    assert_eq!(parse_size("2kb"), Some(2000.0));
    assert_eq!(parse_size("7"), Some(7.0));
    assert_eq!(parse_size("x"), None);
}

#[test]
fn each_comparison_holds_exactly_at_its_boundary() {
    for (op, below, at, above) in [
        ("==", false, true, false),
        ("!=", true, false, true),
        ("<", true, false, false),
        ("<=", true, true, false),
        (">", false, false, true),
        (">=", false, true, true),
    ] {
        for (status, pass) in [(199, below), (200, at), (201, above)] {
            let check = format!("status {op} 200");
            assert_eq!(
                passes(&check, &view(status, &[], b"")),
                pass,
                "{check} on {status}"
            );
        }
    }
}

#[test]
fn a_long_value_is_cut_at_120_bytes_with_an_ellipsis() {
    let long = [b'a'; 121];
    let Verdict::Fail(seen) =
        Check::parse("body contains \"z\"")
            .unwrap()
            .evaluate(&view(200, &[], &long))
    else {
        panic!("a body without z passed");
    };
    assert_eq!(seen, format!("{}…", "a".repeat(120)));
    let Verdict::Fail(seen) =
        Check::parse("body contains \"z\"")
            .unwrap()
            .evaluate(&view(200, &[], &long[..120]))
    else {
        panic!("a body without z passed");
    };
    assert_eq!(seen, "a".repeat(120));
}

#[test]
fn a_check_keeps_its_text_trimmed() {
    let check = Check::parse("  status == 200 ").unwrap();
    assert_eq!(check.as_str(), "status == 200");
    let set = CheckSet::parse(&["status == 200"]).unwrap();
    assert!(!set.is_empty());
    assert_eq!(set.checks()[0].as_str(), "status == 200");
}

#[test]
fn a_set_passes_only_when_every_check_passes() {
    let set = CheckSet::parse(&["status == 200", "status < 300"]).unwrap();
    assert!(set.evaluate(&view(200, &[], b""), |_, _| {}));
    assert!(!set.evaluate(&view(250, &[], b""), |_, _| {}));
}

#[test]
fn json_numbers_compare_by_value_and_ranges_include_both_ends() {
    let body = br#"{"id":1,"price":2.5,"name":"x"}"#;
    let ok = view(200, &[], body);
    assert!(passes("json($.id) == 1.0", &ok));
    assert!(!passes("json($.id) != 1.0", &ok));
    assert!(passes("json($.price) in 2.5..3", &ok));
    assert!(passes("json($.price) in 1..2.5", &ok));
    assert!(!passes("json($.price) in 2.6..3", &ok));
    assert!(!passes("json($.price) in 1..2.4", &ok));
    assert!(
        !passes("json($.name) in 0..9", &ok),
        "a string is not in a range"
    );
    assert!(Check::parse("json($.id) in 3..1").is_err());
}

#[test]
fn quotes_and_brackets_inside_a_path_do_not_close_it() {
    let body = br#"{"a)b":{"c":[5]}}"#;
    let ok = view(200, &[], body);
    assert!(passes("json($['a)b'].c[0]) == 5", &ok));
    assert!(passes("json($[\"a)b\"].c[0]) == 5", &ok));
    // After the quote closes, `)` ends the path again.
    assert_eq!(Check::parse("json($['a']) ) exists").unwrap_err().at, 13);
}

#[test]
fn errors_point_into_the_path_and_name_the_regex_problem() {
    // The path starts at byte 5; its own error is at the x, 4 bytes into it.
    let err = Check::parse("json($.a[x]) exists").unwrap_err();
    assert_eq!(err.at, 5 + "$.a[".len(), "{err}");
    let err = Check::parse("body ~ a{2,1}").unwrap_err().to_string();
    let first = err.lines().next().unwrap_or_default().to_string();
    assert!(first.starts_with("invalid check: body ~ a{2,1}"), "{err}");
    let reason = err.lines().nth(1).unwrap_or_default();
    assert!(reason.contains("invalid regex: "), "{err}");
    assert!(
        reason.contains("repetition") && !reason.contains("xyzzy"),
        "the regex's own reason, its last line: {err}"
    );
}

#[test]
fn only_json_values_go_unquoted_and_only_some_subjects_exist() {
    // A header's value is text: it needs quotes.
    assert!(Check::parse("header(X-Id) == 7").is_err());
    assert!(passes("json($.data.id) == 1", &view(200, &[], BODY)));
    // `exists` is for headers and JSON paths; a body always exists.
    assert!(Check::parse("body exists").is_err());
    assert!(Check::parse("header(X-Id) exists").is_ok());
}

#[test]
fn every_size_unit_scales_as_named() {
    use super::parse::parse_size;
    for (text, bytes) in [
        ("3b", 3.0),
        ("3k", 3e3),
        ("3m", 3e6),
        ("3MB", 3e6),
        ("3g", 3e9),
        ("3GB", 3e9),
        ("3KiB", 3072.0),
        ("3MiB", 3.0 * 1048576.0),
        ("3GiB", 3.0 * 1073741824.0),
    ] {
        assert_eq!(parse_size(text), Some(bytes), "{text}");
    }
}
