//! HAR files in the shape Chromium's DevTools exports them (HAR 1.2 with
//! its `_resourceType`, pseudo-headers for HTTP/2 requests, `cookies`
//! lists), read into scenarios.

use super::*;
use crate::scenario::Scenario;
use std::path::Path;

/// One entry as DevTools writes it; `extra` adds fields to `request`.
fn entry(started: &str, time: f64, method: &str, url: &str, kind: &str, extra: &str) -> String {
    format!(
        r#"{{"startedDateTime":"{started}","time":{time},"_resourceType":"{kind}",
            "request":{{"method":"{method}","url":"{url}","httpVersion":"h2",
                "headers":[{{"name":":authority","value":"shop.test"}},{{"name":":method","value":"{method}"}},
                           {{"name":"accept","value":"*/*"}},{{"name":"user-agent","value":"Mozilla/5.0"}},
                           {{"name":"connection","value":"keep-alive"}}],
                "queryString":[],"headersSize":-1,"bodySize":0{extra}}},
            "response":{{"status":200,"statusText":"","httpVersion":"h2","headers":[],"cookies":[],
                "content":{{"size":0,"mimeType":"text/html"}},"redirectURL":"","headersSize":-1,"bodySize":0}},
            "cache":{{}},"timings":{{"send":0,"wait":{time},"receive":0}}}}"#
    )
}

fn har(entries: &[String]) -> String {
    format!(
        r#"{{"log":{{"version":"1.2","creator":{{"name":"WebInspector","version":"537.36"}},"pages":[],"entries":[{}]}}}}"#,
        entries.join(",")
    )
}

fn steps(scenario: &ScenarioToml) -> &[StepToml] {
    &scenario.group[0].step
}

fn header<'a>(step: &'a StepToml, name: &str) -> Option<&'a str> {
    step.headers
        .as_ref()
        .and_then(|t| t.get_ref().get(name))
        .and_then(|v| v.as_str())
}

#[test]
fn a_page_visit_becomes_steps_of_one_origin_with_the_recorded_gaps() {
    let text = har(&[
        entry(
            "2026-12-04T10:00:00.000Z",
            40.0,
            "GET",
            "https://shop.test/",
            "document",
            "",
        ),
        entry(
            "2026-12-04T10:00:00.050Z",
            10.0,
            "GET",
            "https://cdn.test/app.js",
            "script",
            "",
        ),
        entry(
            "2026-12-04T10:00:00.060Z",
            20.0,
            "GET",
            "https://shop.test/logo.png",
            "image",
            "",
        ),
        entry(
            "2026-12-04T10:00:01.580Z",
            30.0,
            "POST",
            "https://shop.test/api/cart?x=1",
            "fetch",
            r#","postData":{"mimeType":"application/json","text":"{\"sku\":\"{{a}}\"}"}"#,
        ),
        entry(
            "2026-12-04T10:00:01.700Z",
            5.0,
            "GET",
            "data:image/png;base64,AA",
            "image",
            "",
        ),
    ]);
    let made = scenario_from_har(&text, &HarOptions::default()).unwrap();
    let steps = steps(&made.scenario);
    let names: Vec<&str> = steps.iter().map(|s| s.name.get_ref().as_str()).collect();
    assert_eq!(names, ["GET /", "GET /logo.png", "POST /api/cart"]);
    // The pause before a step is the gap since the previous kept request
    // ended: 60 − 40 = 20 ms, then 1580 − (60 + 20) = 1500 ms.
    assert_eq!(steps[0].think, None);
    assert_eq!(
        steps[1].think.as_ref().map(|t| t.get_ref().as_str()),
        Some("20ms")
    );
    assert_eq!(
        steps[2].think.as_ref().map(|t| t.get_ref().as_str()),
        Some("1500ms")
    );
    let post = &steps[2];
    assert_eq!(
        post.method.as_ref().map(|m| m.get_ref().as_str()),
        Some("POST")
    );
    assert_eq!(post.url.get_ref(), "https://shop.test/api/cart?x=1");
    assert_eq!(
        post.body.as_ref().map(|b| b.get_ref().as_str()),
        Some("{\"sku\":\"\\{{a}}\"}")
    );
    assert_eq!(header(post, "Content-Type"), Some("application/json"));
    // Pseudo-headers and hop-by-hop headers are not the step's.
    assert_eq!(header(post, ":authority"), None);
    assert_eq!(header(post, "connection"), None);
    assert_eq!(header(post, "accept"), Some("*/*"));
    assert_eq!(
        made.notes,
        [
            "left out 1 request that is not http or https (data:, blob:, ws:, extensions)",
            "left out requests to other origins (a scenario's steps go to one): https://cdn.test (1)",
        ]
    );
    assert_eq!(made.scenario.group[0].cookies, Some(true));
    // What is printed parses back as a valid scenario.
    let printed = toml::to_string(&made.scenario).unwrap();
    let again: ScenarioToml = toml::from_str(&printed).unwrap();
    Scenario::from_toml("har", again, Path::new("."), &[]).unwrap();
}

#[test]
fn static_assets_a_think_scale_and_another_origin_on_request() {
    let text = har(&[
        entry(
            "2026-12-04T10:00:00Z",
            10.0,
            "GET",
            "https://shop.test/",
            "document",
            "",
        ),
        entry(
            "2026-12-04T10:00:00.110+00:00",
            10.0,
            "GET",
            "https://shop.test/a.css",
            "stylesheet",
            "",
        ),
        entry(
            "2026-12-04T12:00:00.500+02:00",
            10.0,
            "GET",
            "https://cdn.test/b",
            "fetch",
            "",
        ),
    ]);
    let options = HarOptions {
        no_static: true,
        think_scale: 0.5,
        ..HarOptions::default()
    };
    let made = scenario_from_har(&text, &options).unwrap();
    assert_eq!(steps(&made.scenario).len(), 1);
    assert!(made
        .notes
        .iter()
        .any(|n| n == "left out 1 static asset (--har-no-static)"));
    // 10:00:00.500Z (+02:00 read as an offset) is 490 ms after the first
    // ended; half of it with a scale of 0.5.
    let cdn = HarOptions {
        origin: Some("cdn.test".into()),
        think_scale: 0.5,
        ..HarOptions::default()
    };
    let made = scenario_from_har(&text, &cdn).unwrap();
    let only = &steps(&made.scenario)[0];
    assert_eq!(only.url.get_ref(), "https://cdn.test/b");
    assert_eq!(only.think, None, "the first step has no pause");
}

#[test]
fn cookies_set_during_the_recording_are_the_jars_and_earlier_ones_are_sent() {
    let login = r#","cookies":[{"name":"pref","value":"dark"}]"#;
    let after = r#","cookies":[{"name":"pref","value":"dark"},{"name":"sid","value":"s1"}]"#;
    let mut first = entry(
        "2026-12-04T10:00:00Z",
        10.0,
        "POST",
        "http://shop.test/login",
        "document",
        login,
    );
    // The login's answer sets sid.
    first = first.replace(
        r#""headers":[],"cookies":[]"#,
        r#""headers":[],"cookies":[{"name":"sid","value":"s1"}]"#,
    );
    let text = har(&[
        first,
        entry(
            "2026-12-04T10:00:00.020Z",
            10.0,
            "GET",
            "http://shop.test/me",
            "fetch",
            after,
        ),
    ]);
    let made = scenario_from_har(&text, &HarOptions::default()).unwrap();
    let steps = steps(&made.scenario);
    assert_eq!(header(&steps[0], "Cookie"), Some("pref=dark"));
    assert_eq!(
        header(&steps[1], "Cookie"),
        Some("pref=dark"),
        "sid comes from the jar"
    );
}

#[test]
fn repeated_requests_get_numbered_names_and_form_params_a_body() {
    let form = r#","postData":{"mimeType":"application/x-www-form-urlencoded","params":[{"name":"q","value":"a b"},{"name":"n","value":"x&y"}]}"#;
    let text = har(&[
        entry(
            "2026-12-04T10:00:00Z",
            1.0,
            "GET",
            "http://shop.test/p?i=1",
            "fetch",
            "",
        ),
        entry(
            "2026-12-04T10:00:00.001Z",
            1.0,
            "GET",
            "http://shop.test/p?i=2",
            "fetch",
            "",
        ),
        entry(
            "2026-12-04T10:00:00.002Z",
            1.0,
            "POST",
            "http://shop.test/f",
            "fetch",
            form,
        ),
    ]);
    let made = scenario_from_har(&text, &HarOptions::default()).unwrap();
    let steps = steps(&made.scenario);
    assert_eq!(steps[1].name.get_ref(), "GET /p (2)");
    assert_eq!(
        steps[2].body.as_ref().map(|b| b.get_ref().as_str()),
        Some("q=a+b&n=x%26y")
    );
    assert_eq!(
        header(&steps[2], "Content-Type"),
        Some("application/x-www-form-urlencoded")
    );
}

#[test]
fn bad_files_say_what_is_wrong() {
    assert!(matches!(
        scenario_from_har("{\"log\":{}}", &HarOptions::default()),
        Err(HarError::NotHar(_))
    ));
    let bad_time = har(&[entry("yesterday", 1.0, "GET", "http://h/", "fetch", "")]);
    assert_eq!(
        scenario_from_har(&bad_time, &HarOptions::default())
            .unwrap_err()
            .to_string(),
        "entry 1: startedDateTime 'yesterday' is not an RFC 3339 time"
    );
    let none = har(&[entry(
        "2026-12-04T10:00:00Z",
        1.0,
        "GET",
        "http://h/",
        "fetch",
        "",
    )]);
    let elsewhere = HarOptions {
        origin: Some("https://other.test".into()),
        ..HarOptions::default()
    };
    assert_eq!(
        scenario_from_har(&none, &elsewhere)
            .unwrap_err()
            .to_string(),
        "no request to keep: the HAR has no request to https://other.test"
    );
}

#[test]
fn what_the_server_never_served_is_not_replayed() {
    let cached = entry(
        "2026-12-04T10:00:00.001Z",
        1.0,
        "GET",
        "http://shop.test/c",
        "script",
        "",
    )
    .replace(
        r#""_resourceType""#,
        r#""_fromCache":"disk","_resourceType""#,
    );
    let aborted = entry(
        "2026-12-04T10:00:00.002Z",
        1.0,
        "GET",
        "http://shop.test/a",
        "fetch",
        "",
    )
    .replace(r#""status":200"#, r#""status":0"#);
    let multipart = entry(
        "2026-12-04T10:00:00.003Z",
        1.0,
        "POST",
        "http://shop.test/up",
        "fetch",
        r#","postData":{"mimeType":"multipart/form-data; boundary=x","params":[{"name":"f","value":"hello"}]}"#,
    );
    let text = har(&[
        entry(
            "2026-12-04T10:00:00Z",
            1.0,
            "GET",
            "http://shop.test/",
            "document",
            "",
        ),
        cached,
        aborted,
        multipart,
    ]);
    let made = scenario_from_har(&text, &HarOptions::default()).unwrap();
    let steps = steps(&made.scenario);
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[1].body, None);
    assert_eq!(
        made.notes,
        [
            "left out 2 requests the server never served (from the browser's cache, or aborted)",
            "sent 1 request without its body: the HAR keeps a multipart form's fields, not its bytes",
        ]
    );
}
