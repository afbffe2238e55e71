//! JMeter's own batch plans as a conformance suite for `stampede jmeter`.
//!
//! JMeter's build runs the plans of its bin/testfiles in non-GUI mode and
//! compares what each plan's Simple Data Writer wrote with the expected
//! file beside it, byte for byte (build-logic/batchtest/.../BatchTest.kt,
//! `exec` and `compareFiles`: `-q jmeter-batch.properties -n -t NAME.jmx
//! -Jmodule=Module -JCSVFILE=NAME.csv`). The writers save no time column,
//! so the comparison is on labels, codes, messages, thread names, data
//! types, success and order. The HTTP plans and their expected CSVs are
//! copied in tests/fixtures/jmeter-testfiles (see its README).
//!
//! Each plan is first run as JMeter's build runs it: stampede refuses every
//! one, and the test names each element it refuses and its line. Then each
//! plan whose servers can be stood in for on loopback runs with
//! `--skip-unsupported`: JMeter's HTTP Mirror Server (localhost:8081,
//! started by the plan's own script) as HttpMirrorThread.run answers,
//! httpbin.org's redirect, self-signed HTTPS pages (JMeter trusts any
//! certificate), deflate and Brotli bodies; the plan's copy is rewritten to
//! their ephemeral ports. The JTL is compared with the expected CSV on the
//! columns that CSV holds, and each difference is asserted by name
//! (docs/compat.md, "Conformance with JMeter's batch plans"). The plans not
//! run need what a stand-in would only fake (digest authentication, slow
//! sockets, two servers in one group).

use stampede_testkit::jmeter as support;

use stampede_testkit::{read_request_line, temp_dir, text, RawServer};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Output;
use support::jmeter;

/// A file of tests/fixtures/jmeter-testfiles.
fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/jmeter-testfiles")
        .join(name)
}

/// `stampede jmeter` with the arguments JMeter's BatchTest passes
/// (`-q jmeter-batch.properties -n -t PLAN -l JTL -Jmodule=Module
/// -JCSVFILE=...`) and `extra`.
fn run_batch(plan: &Path, jtl: &Path, extra: &[&str]) -> Output {
    let props = fixture("jmeter-batch.properties").display().to_string();
    let plan = plan.display().to_string();
    let jtl = jtl.display().to_string();
    let csv_file = format!("-JCSVFILE={jtl}.csv");
    let mut words = vec![
        "-q",
        &props,
        "-n",
        "-t",
        &plan,
        "-l",
        &jtl,
        "-Jmodule=Module",
        &csv_file,
    ];
    words.extend_from_slice(extra);
    jmeter(&words)
}

/// The elements a refused plan names, `LINE: 'NAME' (CLASS)` each in the
/// order printed, and the closing error line with the plan's path as
/// `PLAN`; the run must exit 2 before
/// any request (no JTL).
fn refusal(plan: &str) -> (Vec<String>, String) {
    let dir = temp_dir("jmeter-conformance-refused");
    let jtl = dir.join("out.jtl");
    let out = run_batch(&fixture(plan), &jtl, &[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{plan}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!jtl.exists(), "{plan}: refused before any sample");
    let path = fixture(plan).display().to_string();
    let prefix = format!("stampede: jmeter: cannot map {path}:");
    let elements = stderr
        .lines()
        .filter_map(|line| line.strip_prefix(&prefix))
        .map(|rest| match rest.find("): ") {
            Some(end) => rest[..=end].to_string(),
            None => rest.to_string(),
        })
        .collect();
    let last = stderr.lines().last().unwrap_or("").replace(&path, "PLAN");
    (elements, last)
}

/// Every HTTP plan JMeter's build runs, as it runs them: refused, each
/// element that cannot be mapped named with its line (why: docs/compat.md).
#[test]
fn each_http_batch_plan_is_refused_naming_the_elements_and_lines() {
    let expected: &[(&str, &[&str])] = &[
        (
            "TEST_HTTP.jmx",
            &[
                "30: 'JSS_startMirror' (JSR223Sampler)",
                "930: 'JSR223-Assertion-CheckCorrectEncodingForParam' (JSR223Assertion)",
                "1581: 'JSS_stopMirror' (JSR223Sampler)",
                "91: 'RA_NoContentLength' (ResponseAssertion)",
                "103: 'GET_WITH_PARAMETERS_IN_URL' (HTTPSamplerProxy)",
                "184: 'RA_NoContentLength' (ResponseAssertion)",
                "210: 'If_not_java_impl' (IfController)",
                "342: 'RA_Gzip' (ResponseAssertion)",
                "352: 'RA_NoContentLength' (ResponseAssertion)",
                "393: 'RA_NoGZIP_IN_RESPONSE' (ResponseAssertion)",
                "403: 'RA_NoContentLength' (ResponseAssertion)",
                "414: 'RA_NoGzip_IN_REQUEST' (ResponseAssertion)",
                "501: 'RA_Gzip' (ResponseAssertion)",
                "511: 'RA_NoContentLength' (ResponseAssertion)",
                "523: 'If_not_java_impl' (IfController)",
                "639: 'Response Assertion' (ResponseAssertion)",
                "649: 'RA_NoContentLength' (ResponseAssertion)",
                "697: 'Response Assertion' (ResponseAssertion)",
                "835: 'Response Assertion' (ResponseAssertion)",
                "910: 'Response Assertion' (ResponseAssertion)",
                "945: 'HR-POST_WITH_BODY' (HTTPSamplerProxy)",
                "1019: 'HR-POST_WITH_FILE' (HTTPSamplerProxy)",
                "1086: 'HR-POST_MULTIPART_WITH_FILE' (HTTPSamplerProxy)",
                "1162: 'HR-POST_MULTIPART_WITH_FILE_AND_CONTENTTYPE' (HTTPSamplerProxy)",
                "1243: 'HR-PUT_MULTIPART_WITH_FILE_AND_CONTENTTYPE' (HTTPSamplerProxy)",
                "1363: 'RA_not_present' (ResponseAssertion)",
                "1388: 'RA' (ResponseAssertion)",
                "1402: 'If_java_impl' (IfController)",
                "1483: 'If_not_java_impl' (IfController)",
            ],
        ),
        (
            "TEST_HTTPS.jmx",
            &["58: 'RA_NO_HANDSHAKE_ERROR' (ResponseAssertion)"],
        ),
        (
            "TestCookieManager.jmx",
            &[
                "44: 'JSS_startMirror' (JSR223Sampler)",
                "537: 'JSS_stopMirror' (JSR223Sampler)",
                "132: 'Request Assertion' (ResponseAssertion)",
                "162: 'Request Assertion' (ResponseAssertion)",
                "263: 'Request Assertion' (ResponseAssertion)",
                "293: 'Request Assertion' (ResponseAssertion)",
                "346: 'Request Assertion' (ResponseAssertion)",
                "394: 'Request Assertion' (ResponseAssertion)",
                "471: 'Request Assertion' (ResponseAssertion)",
                "510: 'Request Assertion' (ResponseAssertion)",
            ],
        ),
        (
            "TestHeaderManager.jmx",
            &[
                "243: 'Response Assertion' (ResponseAssertion)",
                "105: 'Response Assertion' (ResponseAssertion)",
                "157: 'Response Assertion' (ResponseAssertion)",
                "171: 'RA_NoOtherHeader' (ResponseAssertion)",
                "218: 'RA' (ResponseAssertion)",
                "230: 'RA_NoOtherHeader' (ResponseAssertion)",
            ],
        ),
        (
            "TestKeepAlive.jmx",
            &[
                "61: 'JSPP_SetProperties' (JSR223Sampler)",
                "170: 'JSPP_computeThinkTimes' (JSR223PreProcessor)",
                "119: 'RA_ReqHeaders_Close' (ResponseAssertion)",
                "132: 'HTTP-Warmup' (HTTPSamplerProxy)",
                "389: 'RA_keepAlive' (ResponseAssertion)",
                "222: 'WaitLessThanTestValidity' (TestAction)",
                "263: 'WaitMoreThanValidity' (TestAction)",
                "304: 'WaitMoreThanTTL' (TestAction)",
                "346: 'WaitMoreThanTimeout' (TestAction)",
            ],
        ),
        (
            "TestRedirectionPolicies.jmx",
            &[
                "71: 'JSA_0SR' (JSR223Assertion)",
                "128: 'JSA_0SR' (JSR223Assertion)",
                "166: 'JSA_2SR' (JSR223Assertion)",
                "237: 'JSA_0SR' (JSR223Assertion)",
                "275: 'JSA_2SR' (JSR223Assertion)",
                "332: 'JSA_0SR' (JSR223Assertion)",
                "86: 'RA_Redirected' (ResponseAssertion)",
                "181: 'RA_Redirected' (ResponseAssertion)",
                "290: 'RA_Redirected' (ResponseAssertion)",
                "347: 'RA_Redirected' (ResponseAssertion)",
            ],
        ),
        (
            "ResponseDecompression.jmx",
            &[
                "67: 'RA_deflate' (ResponseAssertion)",
                "119: 'Think Time' (TestAction)",
                "133: 'RA_brotli' (ResponseAssertion)",
            ],
        ),
        (
            "Http4ImplPreemptiveBasicAuth.jmx",
            &[
                "368: 'JSA_CheckAuthorization' (JSR223Assertion)",
                "53: 'HTTP Authorization Manager' (AuthManager)",
                "112: 'HTTP Authorization Manager' (AuthManager)",
                "241: 'User Parameters' (UserParameters)",
                "253: 'HTTP Authorization Manager' (AuthManager)",
                "312: 'User Parameters' (UserParameters)",
                "324: 'HTTP Authorization Manager' (AuthManager)",
            ],
        ),
        (
            "Http4ImplDigestAuth.jmx",
            &[
                "53: 'HTTP Authorization Manager' (AuthManager)",
                "143: 'Response Assertion' (ResponseAssertion)",
                "130: 'Response Assertion' (ResponseAssertion)",
            ],
        ),
        (
            "SlowCharsFeature.jmx",
            &[
                "38: 'JSS_setCPS' (JSR223Sampler)",
                "66: 'JSA-CheckResponseTimeHigherThan5s' (JSR223Assertion)",
                "120: 'If_not_java_impl' (IfController)",
                "94: 'RA_PartialContent' (ResponseAssertion)",
                "223: 'RA_NO_HANDSHAKE_ERROR' (ResponseAssertion)",
                "265: 'RA_NO_HANDSHAKE_ERROR' (ResponseAssertion)",
            ],
        ),
        (
            "HTMLParserTestFile_2.jmx",
            &["29: 'Download embedded' (HTTPSamplerProxy)"],
        ),
    ];
    for (plan, elements) in expected {
        let (named, last) = refusal(plan);
        assert_eq!(named, *elements, "{plan}");
        assert_eq!(
            last,
            format!(
                "stampede: error: jmeter: {} element(s) of PLAN cannot be mapped \
                 (listed above); --skip-unsupported runs the rest (see `stampede jmeter -h`)",
                elements.len()
            ),
            "{plan}"
        );
    }
}

/// JMeter's HTTP Mirror Server, as HttpMirrorThread.run answers: an
/// HTTP/1.0 response `X-ResponseStatus` (default `200 OK`; `?redirect=URL`
/// makes it `302 Temporary Redirect` with that Location, `?status=` sets
/// it) with `Content-Type: text/plain`, each `X-SetHeaders` entry (split on
/// `|`) and `X-SetCookie` as a Set-Cookie, then the request's own bytes,
/// head and body, as the response body; the connection is then closed.
fn mirror_server() -> RawServer {
    RawServer::start(|mut stream| {
        let Some(request) = read_request(&mut stream) else {
            return;
        };
        let head = String::from_utf8_lossy(&request).into_owned();
        let target = head.split_whitespace().nth(1).unwrap_or("/").to_string();
        let params = mirror_query(&head, &target);
        let mut status = header_value(&head, "X-ResponseStatus").unwrap_or("200 OK".into());
        if params.contains_key("redirect") {
            status = "302 Temporary Redirect".into();
        }
        if let Some(code) = params.get("status") {
            status = code.clone();
        }
        let mut response = format!("HTTP/1.0 {status}\r\nContent-Type: text/plain\r\n");
        if let Some(location) = params.get("redirect") {
            response += &format!("Location: {location}\r\n");
        }
        if let Some(headers) = header_value(&head, "X-SetHeaders") {
            for header in headers.split('|') {
                response += &format!("{header}\r\n");
            }
        }
        if let Some(cookie) = header_value(&head, "X-SetCookie") {
            response += &format!("Set-Cookie: {cookie}\r\n");
        }
        response += "\r\n";
        let mut bytes = response.into_bytes();
        bytes.extend_from_slice(&request);
        let _ = stream.write_all(&bytes);
    })
}

/// The whole request: the head read byte by byte up to its blank line,
/// then `Content-Length` bytes of body.
fn read_request(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut request = Vec::new();
    let mut byte = [0u8; 1];
    while !request.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => request.push(byte[0]),
            _ => return None,
        }
    }
    let head = String::from_utf8_lossy(&request).into_owned();
    let length: usize = header_value(&head, "Content-Length")
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).ok()?;
    request.extend_from_slice(&body);
    Some(request)
}

/// A request header's value, its name in any case (the mirror's
/// `^Name:\s+(...)` multi-line, case-insensitive match).
fn header_value(head: &str, name: &str) -> Option<String> {
    head.lines().skip(1).find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.eq_ignore_ascii_case(name)
            .then(|| value.trim().to_string())
    })
}

/// The query parameters the mirror reads: only a GET's.
fn mirror_query(head: &str, target: &str) -> HashMap<String, String> {
    if !head.starts_with("GET ") {
        return HashMap::new();
    }
    let query = target.split_once('?').map(|(_, q)| q).unwrap_or("");
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => (p.to_string(), String::new()),
        })
        .collect()
}

/// A server answering every request with a page holding "Example Domain":
/// a loopback stand-in for the www.example.org of TEST_HTTP's gzip group.
fn example_domain_server() -> RawServer {
    RawServer::start(|mut stream| {
        let page = "<html><head><title>Example Domain</title></head></html>";
        let reply = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{page}",
            page.len()
        );
        while read_request_line(&mut stream).is_some() {
            if stream.write_all(reply.as_bytes()).is_err() {
                return;
            }
        }
    })
}

/// A copy of the fixture `plan` in `dir` with its samplers sent to the
/// mirror: JMeter's plans reach it as `localhost` port 8081 (in URLs and in
/// what their assertions expect, `localhost:8081`).
fn on_mirror(plan: &str, dir: &Path, mirror: &RawServer) -> PathBuf {
    let port = mirror.addr().port();
    let xml = std::fs::read_to_string(fixture(plan)).unwrap();
    assert!(xml.contains(">8081<"), "{plan}: no sampler on port 8081");
    let xml = xml
        .replace("localhost:8081", &format!("127.0.0.1:{port}"))
        .replace(
            "<stringProp name=\"HTTPSampler.domain\">localhost</stringProp>",
            "<stringProp name=\"HTTPSampler.domain\">127.0.0.1</stringProp>",
        )
        .replace(">8081<", &format!(">{port}<"));
    let copy = dir.join(plan);
    std::fs::write(&copy, xml).unwrap();
    copy
}

/// Rewrites the plan's copy at `plan` so each sampler or default naming
/// `host` (with no port) goes to `server` instead; there must be one.
fn to_loopback(plan: &Path, host: &str, server: &RawServer) {
    let domain = format!("<stringProp name=\"HTTPSampler.domain\">{host}</stringProp>");
    let no_port = "<stringProp name=\"HTTPSampler.port\"></stringProp>";
    let mut xml = std::fs::read_to_string(plan).unwrap();
    assert!(xml.contains(&domain), "{}: no {host}", plan.display());
    while let Some(at) = xml.find(&domain) {
        let port = at + xml[at..].find(no_port).expect("the port after the domain");
        xml.replace_range(
            port..port + no_port.len(),
            &format!(
                "<stringProp name=\"HTTPSampler.port\">{}</stringProp>",
                server.addr().port()
            ),
        );
        xml.replace_range(
            at..at + domain.len(),
            "<stringProp name=\"HTTPSampler.domain\">127.0.0.1</stringProp>",
        );
    }
    std::fs::write(plan, xml).unwrap();
}

/// A plan's copy run with `--skip-unsupported`: exit 0, and the JTL's rows
/// cut to `columns` (joined with commas, as the expected CSV's lines).
fn run_skipping(plan: &Path, columns: &[&str]) -> Vec<String> {
    let jtl = plan.with_extension("jtl");
    let out = run_batch(plan, &jtl, &["--skip-unsupported"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    jtl_rows(&jtl, columns)
}

/// A JTL's rows cut to `columns`, joined with commas.
fn jtl_rows(jtl: &Path, columns: &[&str]) -> Vec<String> {
    let mut reader = csv::Reader::from_path(jtl).unwrap();
    let header = reader.headers().unwrap().clone();
    let index: Vec<usize> = columns
        .iter()
        .map(|c| header.iter().position(|h| h == *c).unwrap())
        .collect();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            index.iter().map(|&i| &r[i]).collect::<Vec<_>>().join(",")
        })
        .collect()
}

/// The expected CSV's lines, without its header line when it has one.
fn expected_lines(csv: &str) -> Vec<String> {
    let text = std::fs::read_to_string(fixture(csv)).unwrap();
    text.lines()
        .filter(|l| !l.starts_with("label,"))
        .map(str::to_string)
        .collect()
}

/// TestHeaderManager on the mirror: the same three samples as JMeter's
/// (label, threadName, dataType, success: the columns of its Simple Data
/// Writer), in JMeter's order: the plan runs its groups one after another
/// (`serialize_threadgroups`), so the second group's sample starts when
/// the first group's last has ended, and comes last.
#[test]
fn test_header_manager_matches_jmeter() {
    let dir = temp_dir("jmeter-conformance-headers");
    let mirror = mirror_server();
    let plan = on_mirror("TestHeaderManager.jmx", &dir, &mirror);
    let columns = [
        "label",
        "threadName",
        "dataType",
        "success",
        "timeStamp",
        "elapsed",
    ];
    let rows = run_skipping(&plan, &columns);
    let (samples, times): (Vec<String>, Vec<(u64, u64)>) = rows
        .iter()
        .map(|row| {
            let (sample, time) = row.rsplit_once(',').unwrap();
            let (sample, start) = sample.rsplit_once(',').unwrap();
            let (start, elapsed): (u64, u64) = (start.parse().unwrap(), time.parse().unwrap());
            (sample.to_string(), (start, start + elapsed))
        })
        .unzip();
    assert_eq!(samples, expected_lines("TestHeaderManager.csv"));
    let first_group_end = times[0].1.max(times[1].1);
    assert!(times[2].0 >= first_group_end, "{rows:?}");
}

/// TEST_HTTP on the mirror (its gzip group's www.example.org on a loopback
/// page holding "Example Domain"), on the columns of its Simple Data
/// Writer. Each difference from JMeter's TEST_HTTP_HttpClient4.csv is
/// named here: the samples stampede does not take (the plan's scripts, the
/// samplers it leaves out), and the two redirect loops, whose `success`
/// JMeter's refused response_message assertions (`assume_success`) turn
/// true and whose second (`auto_redirects`: HttpClient's own redirects,
/// a CircularRedirectException) stampede follows as its first. The order
/// is JMeter's: the groups run one after another (`serialize_threadgroups`).
#[test]
fn test_http_matches_jmeter_but_for_the_samples_and_redirects_named() {
    let dir = temp_dir("jmeter-conformance-http");
    let mirror = mirror_server();
    let example = example_domain_server();
    let plan = on_mirror("TEST_HTTP.jmx", &dir, &mirror);
    to_loopback(&plan, "www.example.org", &example);
    let columns = ["label", "responseCode", "threadName", "dataType", "success"];
    let rows = run_skipping(&plan, &columns);
    // What the plan's response_message assertion on the first redirect
    // loop looks for (HTTPSamplerBase.followRedirects' IOException).
    let loops = jtl_rows(&plan.with_extension("jtl"), &["label", "responseMessage"]);
    let loop_messages: Vec<&String> = loops
        .iter()
        .filter(|r| r.starts_with("HR-FollowRedirect,"))
        .collect();
    assert_eq!(loop_messages.len(), 2, "{loops:?}");
    for row in loop_messages {
        assert!(
            row.ends_with(",Non HTTP response message: Exceeded maximum number of redirects: 20"),
            "{row}"
        );
    }

    // Samples JMeter writes and stampede does not: scripts run no request,
    // and the samplers it cannot map (file uploads, If Controllers on a
    // per-run __jexl3, a per-request boundary) send none.
    let not_taken = [
        "JSS_startMirror",
        "GET_WITH_PARAMETERS_IN_URL",
        "GET_WITH_BODY",
        "HR-GET_WITH_BODY_NoFollowRedirect",
        "HR-POST_WITH_BODY",
        "HR-POST_WITH_FILE",
        "HR-POST_MULTIPART_WITH_FILE",
        "HR-POST_MULTIPART_WITH_FILE_AND_CONTENTTYPE",
        "HR-PUT_MULTIPART_WITH_FILE_AND_CONTENTTYPE",
        "HR-PUT_WITH_PARAMETERS",
        "JSS_stopMirror",
    ];
    let redirect_loop = "HR-FollowRedirect,Non HTTP response code: java.io.IOException,\
                         TG_TEST_REDIRECT 3-1,text,false";
    let expected: Vec<String> = expected_lines("TEST_HTTP_HttpClient4.csv")
        .into_iter()
        .filter(|l| !not_taken.contains(&l.split(',').next().unwrap()))
        .map(|l| match l.starts_with("HR-FollowRedirect,") {
            true => redirect_loop.to_string(),
            false => l,
        })
        .collect();
    assert_eq!(rows, expected);
}

/// TestCookieManager, even with `--skip-unsupported`: each of its groups
/// sends to the mirror over HTTP (8081) and over HTTPS to 8082, where
/// nothing listens (JMeter's expected CSV has a connection error there);
/// stampede's engine runs one server per group, so the run is refused.
#[test]
fn test_cookie_manager_is_refused_for_two_servers_in_one_group() {
    let dir = temp_dir("jmeter-conformance-cookies");
    let mirror = mirror_server();
    let plan = on_mirror("TestCookieManager.jmx", &dir, &mirror);
    let closed = stampede_testkit::free_port();
    let xml = std::fs::read_to_string(&plan).unwrap();
    assert!(xml.contains(">8082<"));
    std::fs::write(&plan, xml.replace(">8082<", &format!(">{closed}<"))).unwrap();
    let jtl = dir.join("out.jtl");
    let out = run_batch(&plan, &jtl, &["--skip-unsupported"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr.lines().last().unwrap(),
        format!(
            "stampede: error: jmeter: thread group 'TG-ManagedCookieHC4' sends to 2 servers \
             (http://127.0.0.1:{}, https://127.0.0.1:{closed}); this engine runs one server \
             per group (see `stampede jmeter -h`)",
            mirror.addr().port()
        )
    );
    assert!(!jtl.exists(), "refused before any sample");
}

/// httpbin.org as TestRedirectionPolicies uses it: `/redirect/1` answers
/// `302 FOUND` (httpbin's reason phrase) to `/get`, which answers the JSON
/// httpbin gave JMeter's run (its `url`, which the plan extracts).
fn httpbin_server() -> RawServer {
    RawServer::start(|mut stream| {
        while let Some(line) = read_request_line(&mut stream) {
            let reply = if line.starts_with("GET /redirect/1 ") {
                "HTTP/1.1 302 FOUND\r\nLocation: /get\r\nContent-Length: 0\r\n\r\n".to_string()
            } else {
                let json = r#"{"args":{},"url":"https://httpbin.org/get"}"#;
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\
                     Content-Length: {}\r\n\r\n{json}",
                    json.len()
                )
            };
            if stream.write_all(reply.as_bytes()).is_err() {
                return;
            }
        }
    })
}

/// TestRedirectionPolicies with httpbin.org on loopback: the same samples,
/// codes, threads, success and order as JMeter's (its groups one after
/// another), its `$..url` JSON Extractor mapped. It differs in
/// `responseMessage`: stampede writes the standard reason phrase
/// (`Found`), JMeter the server's (`FOUND`).
#[test]
fn test_redirection_policies_matches_jmeter_but_for_the_reason_phrase() {
    let dir = temp_dir("jmeter-conformance-redirects");
    let httpbin = httpbin_server();
    let plan = dir.join("TestRedirectionPolicies.jmx");
    std::fs::copy(fixture("TestRedirectionPolicies.jmx"), &plan).unwrap();
    to_loopback(&plan, "httpbin.org", &httpbin);
    let columns = [
        "label",
        "responseCode",
        "responseMessage",
        "threadName",
        "dataType",
        "success",
    ];
    let rows = run_skipping(&plan, &columns);
    let expected: Vec<String> = expected_lines("TestRedirectionPolicies.csv")
        .into_iter()
        .map(|l| l.replace(",302,FOUND,", ",302,Found,"))
        .collect();
    assert_eq!(rows, expected);
}

/// An HTTPS server with a self-signed certificate answering every request
/// with a page holding "Apache JMeter": jmeter.apache.org and
/// www.apache.org as TEST_HTTPS reaches them, on loopback.
fn self_signed_page_server() -> RawServer {
    let config = stampede_testkit::self_signed_server_config();
    RawServer::start(move |stream| {
        let Ok(connection) = rustls::ServerConnection::new(config.clone()) else {
            return;
        };
        let mut tls = rustls::StreamOwned::new(connection, stream);
        let page = "<html><title>Apache JMeter</title></html>";
        let reply = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n{page}",
            page.len()
        );
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while let Ok(1) = tls.read(&mut byte) {
            head.push(byte[0]);
            if head.ends_with(b"\r\n\r\n") {
                head.clear();
                if tls.write_all(reply.as_bytes()).is_err() {
                    return;
                }
            }
        }
    })
}

/// TEST_HTTPS with both hosts on one loopback HTTPS server whose
/// certificate no one signed: JMeter trusts every server certificate
/// (JsseSSLManager wraps each trust manager in CustomX509TrustManager,
/// whose checkServerTrusted accepts all), so its two samples succeed, as
/// JMeter's expected CSV says, on its columns stampede's JTL has.
#[test]
fn test_https_matches_jmeter_on_a_self_signed_server() {
    let dir = temp_dir("jmeter-conformance-https");
    let server = self_signed_page_server();
    let plan = dir.join("TEST_HTTPS.jmx");
    std::fs::copy(fixture("TEST_HTTPS.jmx"), &plan).unwrap();
    to_loopback(&plan, "jmeter.apache.org", &server);
    to_loopback(&plan, "www.apache.org", &server);
    let columns = [
        "label",
        "responseCode",
        "responseMessage",
        "threadName",
        "dataType",
        "success",
        "grpThreads",
        "allThreads",
    ];
    let rows = run_skipping(&plan, &columns);
    // SampleCount and ErrorCount (1 and 0 for a sample that is not a
    // transaction's) are not JTL columns of stampede's.
    let expected: Vec<String> = expected_lines("TEST_HTTPS.csv")
        .into_iter()
        .map(|l| l.strip_suffix(",1,0").unwrap().to_string())
        .collect();
    assert_eq!(rows, expected);
}

/// www.bing.com and www.facebook.com as ResponseDecompression reaches
/// them, on one loopback HTTPS server (self-signed): a page naming
/// "Microsoft" and "bing" sent `Content-Encoding: deflate` (zlib, as
/// HttpClient's DeflateInputStream reads it) to `Accept-Encoding:
/// deflate`, and one naming "facebook" sent `br` to `Accept-Encoding: br`.
fn compressing_server() -> RawServer {
    let config = stampede_testkit::self_signed_server_config();
    RawServer::start(move |stream| {
        let Ok(connection) = rustls::ServerConnection::new(config.clone()) else {
            return;
        };
        let mut tls = rustls::StreamOwned::new(connection, stream);
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while let Ok(1) = tls.read(&mut byte) {
            head.push(byte[0]);
            if !head.ends_with(b"\r\n\r\n") {
                continue;
            }
            let text = String::from_utf8_lossy(&head).into_owned();
            head.clear();
            let (coding, body) = match header_value(&text, "Accept-Encoding").as_deref() {
                Some("br") => {
                    let mut out = Vec::new();
                    {
                        let mut writer = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
                        writer.write_all(b"<title>facebook</title>").unwrap();
                    }
                    ("br", out)
                }
                _ => {
                    let mut writer =
                        flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
                    writer.write_all(b"<title>bing</title> Microsoft").unwrap();
                    ("deflate", writer.finish().unwrap())
                }
            };
            let mut reply = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: {coding}\r\n\
                 Content-Length: {}\r\n\r\n",
                body.len()
            )
            .into_bytes();
            reply.extend_from_slice(&body);
            if tls.write_all(&reply).is_err() {
                return;
            }
        }
    })
}

/// ResponseDecompression with both hosts on one loopback HTTPS server: the
/// deflate and Brotli bodies decoded before the plan's body assertions, as
/// JMeter decodes them, and the same samples as JMeter's expected CSV.
#[test]
fn response_decompression_matches_jmeter() {
    let dir = temp_dir("jmeter-conformance-decompression");
    let server = compressing_server();
    let plan = dir.join("ResponseDecompression.jmx");
    std::fs::copy(fixture("ResponseDecompression.jmx"), &plan).unwrap();
    to_loopback(&plan, "www.bing.com", &server);
    to_loopback(&plan, "www.facebook.com", &server);
    let columns = [
        "label",
        "responseCode",
        "responseMessage",
        "threadName",
        "dataType",
        "success",
    ];
    let rows = run_skipping(&plan, &columns);
    assert_eq!(rows, expected_lines("ResponseDecompression.csv"));
}

/// Http4ImplPreemptiveBasicAuth with jmeter.apache.org on a loopback
/// HTTPS page: its six groups (one after another), each sampler twice (a
/// row of the CSV data set each), as JMeter's expected CSV lists them. Its
/// Authorization Managers and User Parameters are left out, so no
/// Authorization header is sent: the page answers 200 whatever it gets,
/// as jmeter.apache.org does, and what the plan's script checks (the
/// header's value) is not compared.
#[test]
fn preemptive_basic_auth_plan_matches_jmeter_without_its_authorization() {
    let dir = temp_dir("jmeter-conformance-basic-auth");
    let server = self_signed_page_server();
    for file in [
        "Http4ImplPreemptiveBasicAuth.jmx",
        "Http4ImplPreemptiveBasicAuth-data.csv",
    ] {
        std::fs::copy(fixture(file), dir.join(file)).unwrap();
    }
    let plan = dir.join("Http4ImplPreemptiveBasicAuth.jmx");
    to_loopback(&plan, "jmeter.apache.org", &server);
    let columns = [
        "label",
        "responseCode",
        "responseMessage",
        "threadName",
        "dataType",
        "success",
    ];
    let rows = run_skipping(&plan, &columns);
    assert_eq!(rows, expected_lines("Http4ImplPreemptiveBasicAuth.csv"));
}
