//! JMeter's rules for an HTTP Request sampler's URL and body, a table row
//! each: a one-sampler plan mapped, its step's method, URL, body and
//! Content-Type compared with what JMeter 5.6 sends. The rules are read in
//! apache/jmeter's src/protocol/http/src/main/java/org/apache/jmeter/protocol/http:
//! sampler/HTTPSamplerBase.java (getUrl, getQueryString,
//! getSendParameterValuesAsPostBody, getUseMultipart), sampler/HTTPHC4Impl.java
//! (createHttpRequest, setupHttpEntityEnclosingRequestData,
//! createUrlEncodedFormEntity), util/HTTPArgument.java (getEncodedName,
//! getEncodedValue) and config/Argument.java (isSkippable); multipart bodies
//! as in its test sampler/HttpSamplerTest.kt.

use super::*;
use crate::model::Step;

/// An argument: name, value, `always_encode`, `Argument.metadata`.
type Arg<'a> = (&'a str, &'a str, bool, &'a str);

/// A plan of one thread group holding `extra` (config elements) and one
/// sampler with `props` (`HTTPSampler.` is prefixed) and `args`; `path` is
/// a run-time variable (a JSON Extractor's name).
fn plan(props: &[(&str, &str)], args: &[Arg], extra: &str) -> String {
    let props: String = props
        .iter()
        .map(|(k, v)| format!("<stringProp name=\"HTTPSampler.{k}\">{v}</stringProp>\n"))
        .collect();
    let args: String = args
        .iter()
        .map(|(name, value, encode, metadata)| {
            let (name, value) = (xml(name), xml(value));
            format!(
                r#"<elementProp name="{name}" elementType="HTTPArgument">
                <boolProp name="HTTPArgument.always_encode">{encode}</boolProp>
                <stringProp name="Argument.name">{name}</stringProp>
                <stringProp name="Argument.value">{value}</stringProp>
                <stringProp name="Argument.metadata">{metadata}</stringProp>
              </elementProp>
"#
            )
        })
        .collect();
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<jmeterTestPlan version="1.2" properties="5.0" jmeter="5.6.3">
  <hashTree>
    <TestPlan guiclass="TestPlanGui" testclass="TestPlan" testname="P"/>
    <hashTree>
      <ThreadGroup guiclass="ThreadGroupGui" testclass="ThreadGroup" testname="G">
        <stringProp name="ThreadGroup.num_threads">1</stringProp>
      </ThreadGroup>
      <hashTree>
        <JSONPostProcessor guiclass="JSONPostProcessorGui" testclass="JSONPostProcessor" testname="x">
          <stringProp name="JSONPostProcessor.referenceNames">path</stringProp>
          <stringProp name="JSONPostProcessor.jsonPathExprs">$.p</stringProp>
        </JSONPostProcessor>
        <hashTree/>
        {extra}
        <HTTPSamplerProxy guiclass="HttpTestSampleGui" testclass="HTTPSamplerProxy" testname="s">
          <elementProp name="HTTPsampler.Arguments" elementType="Arguments">
            <collectionProp name="Arguments.arguments">
              {args}
            </collectionProp>
          </elementProp>
          <stringProp name="HTTPSampler.domain">h</stringProp>
          {props}
        </HTTPSamplerProxy>
        <hashTree/>
      </hashTree>
    </hashTree>
  </hashTree>
</jmeterTestPlan>"#
    )
}

/// `text` as XML character data, as JMeter's SaveService writes it.
fn xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn parsed(props: &[(&str, &str)], args: &[Arg], extra: &str, jmeter: &[(&str, &str)]) -> Plan {
    let text = plan(props, args, extra);
    let jmeter = jmeter
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let plan = parse("p.jmx", &text, std::path::Path::new("."), jmeter).unwrap();
    assert!(plan.unsupported.is_empty(), "{:?}", plan.unsupported);
    plan
}

fn sampler_step(props: &[(&str, &str)], args: &[Arg]) -> Step {
    parsed(props, args, "", &[]).groups[0].steps[0].clone()
}

fn header<'a>(step: &'a Step, name: &str) -> Option<&'a str> {
    step.headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// (method, postBodyRaw, arguments, body, Content-Type)
type BodyRow<'a> = (
    &'a str,
    bool,
    &'a [Arg<'a>],
    Option<&'a str>,
    Option<&'a str>,
);

const TEXT: &str = "text/plain; charset=UTF-8";
const FORM: &str = "application/x-www-form-urlencoded; charset=UTF-8";

#[test]
fn urls_are_built_as_get_url_builds_them() {
    // (protocol, port, path, URL)
    let rows: &[(&str, &str, &str, &str)] = &[
        ("", "8080", "/x", "http://h:8080/x"),
        // A `/` only when the path has none.
        ("", "8080", "x", "http://h:8080/x"),
        ("", "8080", "", "http://h:8080/"),
        ("", "8080", "?q=1", "http://h:8080/?q=1"),
        // A run-time value begins the path: its slot follows the host and
        // the `/` is added per request when the value has none.
        ("", "8080", "${path}", "http://h:8080{{path}}"),
        ("", "8080", "${path}/x", "http://h:8080{{path}}/x"),
        ("", "8080", "/a/${path}", "http://h:8080/a/{{path}}"),
        ("", "8080", "a${path}", "http://h:8080/a{{path}}"),
        // Known values are substituted first: `${__P(base)}` = /api.
        ("", "8080", "${__P(base)}/x", "http://h:8080/api/x"),
        ("", "8080", "${__P(rel)}/x", "http://h:8080/api/x"),
        // The protocol's default port is left out (isProtocolDefaultPort).
        ("", "80", "/x", "http://h/x"),
        ("http", "", "/x", "http://h/x"),
        ("https", "443", "/x", "https://h/x"),
        ("HTTPS", "80", "/x", "https://h:80/x"),
        ("https", "8443", "/x", "https://h:8443/x"),
        ("", "0", "/x", "http://h/x"),
        ("", " 81 ", "/x", "http://h:81/x"),
        // getPath encodes spaces.
        ("", "8080", "/a b", "http://h:8080/a%20b"),
        // A whole URL in the path is the URL.
        ("", "8080", "https://other:9/y", "https://other:9/y"),
        ("", "", "http://other/${path}", "http://other/{{path}}"),
    ];
    let jmeter = [("base", "/api"), ("rel", "api")];
    for (protocol, port, path, url) in rows {
        let mut props = vec![("port", *port), ("path", *path)];
        if !protocol.is_empty() {
            props.push(("protocol", protocol));
        }
        let plan = parsed(&props, &[], "", &jmeter);
        let step = &plan.groups[0].steps[0];
        assert_eq!(
            step.url, *url,
            "protocol {protocol:?} port {port:?} path {path:?}"
        );
        assert_eq!(step.body, None, "{path}");
    }
}

#[test]
fn a_port_that_is_not_a_number_is_the_default_port_with_a_note() {
    let plan = parsed(&[("port", "${port}"), ("path", "/x")], &[], "", &[]);
    assert_eq!(plan.groups[0].steps[0].url, "http://h/x");
    assert_eq!(
        plan.notes,
        vec!["'s' (HTTPSamplerProxy): port '${port}' is not a number: the protocol's default port is used, as JMeter does".to_string()]
    );
}

#[test]
fn query_strings_follow_get_query_string() {
    // (method, path, arguments, URL): GET, DELETE and OPTIONS put named
    // arguments in the query; name + metadata + value, encoded when
    // always_encode says so, unnamed ones left out.
    let rows: &[(&str, &str, &[Arg], &str)] = &[
        (
            "GET",
            "/q",
            &[("a", "1", false, "="), ("b", "x y/é", true, "=")],
            "http://h/q?a=1&b=x+y%2F%C3%A9",
        ),
        (
            "GET",
            "/q",
            &[("raw", "x+y%2F", false, "=")],
            "http://h/q?raw=x+y%2F",
        ),
        (
            "GET",
            "/q?z=0",
            &[("a", "1", false, "=")],
            "http://h/q?z=0&a=1",
        ),
        ("GET", "/q", &[("flag", "", false, "")], "http://h/q?flag"),
        ("GET", "/q", &[("a", "b", false, "")], "http://h/q?ab"),
        (
            "GET",
            "/q",
            &[("a", "${path}", true, "=")],
            "http://h/q?a={{path}}",
        ),
        (
            "GET",
            "/q",
            &[("${nope}", "1", false, "=")],
            "http://h/q?${nope}=1",
        ),
        ("DELETE", "/q", &[("a", "1", false, "=")], "http://h/q?a=1"),
        ("OPTIONS", "/q", &[("a", "1", false, "=")], "http://h/q?a=1"),
        // HEAD and TRACE drop their arguments; so does a whole URL.
        ("HEAD", "/q", &[("a", "1", false, "=")], "http://h/q"),
        ("TRACE", "/q", &[("a", "1", false, "=")], "http://h/q"),
        ("GET", "http://o/q", &[("a", "1", false, "=")], "http://o/q"),
        ("POST", "/q", &[("a", "1", false, "=")], "http://h/q"),
    ];
    for (method, path, args, url) in rows {
        let step = sampler_step(&[("method", method), ("path", path)], args);
        assert_eq!(step.url, *url, "{method} {path} {args:?}");
    }
}

#[test]
fn bodies_follow_setup_http_entity_enclosing_request_data() {
    let json = r#"{"name": "widget", "qty": 2}"#;
    let rows: &[BodyRow] = &[
        // Every argument unnamed: the values as they are, not `=value`.
        (
            "PUT",
            false,
            &[("", json, false, "=")],
            Some(json),
            Some(TEXT),
        ),
        (
            "POST",
            false,
            &[("", json, false, "=")],
            Some(json),
            Some(TEXT),
        ),
        (
            "POST",
            false,
            &[("", "a", false, "="), ("", "b c", true, "=")],
            Some("ab+c"),
            Some(TEXT),
        ),
        (
            "PATCH",
            true,
            &[("", json, false, "=")],
            Some(json),
            Some(TEXT),
        ),
        // A raw body is its values even when they have names.
        (
            "POST",
            true,
            &[("x", "1 2", false, "=")],
            Some("1 2"),
            Some(TEXT),
        ),
        (
            "POST",
            true,
            &[("", "1 2", true, "=")],
            Some("1+2"),
            Some(TEXT),
        ),
        // Named: a form HttpClient encodes; an argument not marked "encode"
        // is decoded first; `=` always, whatever the metadata.
        (
            "POST",
            false,
            &[("a", "1", false, "="), ("b", "x y&z", true, "=")],
            Some("a=1&b=x+y%26z"),
            Some(FORM),
        ),
        (
            "POST",
            false,
            &[("n", "x%20y+z%2F", false, "=")],
            Some("n=x+y+z%2F"),
            Some(FORM),
        ),
        (
            "POST",
            false,
            &[("flag", "", false, "")],
            Some("flag="),
            Some(FORM),
        ),
        (
            "PUT",
            false,
            &[("a", "${path}", true, "=")],
            Some("a={{path}}"),
            Some(FORM),
        ),
        // Blank names and undefined variables are skipped in a form.
        (
            "POST",
            false,
            &[
                ("a", "1", false, "="),
                ("${nope}", "2", false, "="),
                (" ", "3", false, "="),
            ],
            Some("a=1"),
            Some(FORM),
        ),
        // No arguments: an empty form, still typed.
        ("POST", false, &[], None, Some(FORM)),
        ("PUT", false, &[], None, Some(FORM)),
        // DELETE sends its named arguments twice: query and form.
        (
            "DELETE",
            false,
            &[("a", "1", false, "=")],
            Some("a=1"),
            Some(FORM),
        ),
        (
            "PROPFIND",
            false,
            &[("", "<x/>", false, "=")],
            Some("<x/>"),
            Some(TEXT),
        ),
        // GET sends a body only of unnamed values (HttpGetWithEntity).
        (
            "GET",
            false,
            &[("", json, false, "=")],
            Some(json),
            Some(TEXT),
        ),
        ("GET", false, &[("a", "1", false, "=")], None, None),
        ("HEAD", false, &[("", json, false, "=")], None, None),
        ("OPTIONS", true, &[("", json, false, "=")], None, None),
        ("TRACE", false, &[("a", "1", false, "=")], None, None),
    ];
    for (method, raw, args, body, content_type) in rows {
        let mut props = vec![("method", *method), ("path", "/b")];
        if *raw {
            props.push(("postBodyRaw", "true"));
        }
        let step = sampler_step(&props, args);
        let what = format!("{method} raw={raw} {args:?}");
        assert_eq!(step.method, *method, "{what}");
        assert_eq!(step.body.as_deref(), *body, "{what}");
        assert_eq!(header(&step, "Content-Type"), *content_type, "{what}");
    }
}

#[test]
fn an_empty_body_says_content_length_zero_where_stampede_would_not() {
    for (method, length) in [
        ("DELETE", Some("0")),
        ("MOVE", Some("0")),
        ("POST", None),
        ("GET", None),
    ] {
        let step = sampler_step(&[("method", method), ("path", "/b")], &[]);
        assert_eq!(header(&step, "Content-Length"), length, "{method}");
    }
}

#[test]
fn the_form_type_property_and_header_managers_set_the_content_type() {
    let json: &[Arg] = &[("", "{}", false, "=")];
    let form: &[Arg] = &[("a", "1", false, "=")];
    let adds = [("http.post_add_content_type_if_missing", "true")];
    for args in [json, form] {
        let plan = parsed(&[("method", "POST")], args, "", &adds);
        let step = &plan.groups[0].steps[0];
        assert_eq!(
            header(step, "Content-Type"),
            Some("application/x-www-form-urlencoded"),
            "{args:?}"
        );
    }
    let manager = r#"<HeaderManager guiclass="HeaderPanel" testclass="HeaderManager" testname="h">
          <collectionProp name="HeaderManager.headers">
            <elementProp name="" elementType="Header">
              <stringProp name="Header.name">Content-Type</stringProp>
              <stringProp name="Header.value">application/json</stringProp>
            </elementProp>
          </collectionProp>
        </HeaderManager>
        <hashTree/>"#;
    let plan = parsed(&[("method", "PUT")], json, manager, &[]);
    let step = &plan.groups[0].steps[0];
    let types: Vec<_> = step
        .headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("content-type"))
        .collect();
    assert_eq!(
        types,
        [&("Content-Type".to_string(), "application/json".to_string())]
    );
    // A multipart body's type replaces the manager's, as JMeter's does.
    let plan = parsed(
        &[("method", "POST"), ("DO_MULTIPART_POST", "true")],
        form,
        manager,
        &[],
    );
    let step = &plan.groups[0].steps[0];
    assert_eq!(
        header(step, "Content-Type").unwrap(),
        format!(
            "multipart/form-data; boundary={}; charset=UTF-8",
            http_args::BOUNDARY
        )
    );
}

#[test]
fn multipart_bodies_are_built_as_httpclient_writes_them() {
    let b = http_args::BOUNDARY;
    let args: &[Arg] = &[
        ("hello", "world", true, "="),
        ("", "skipped", false, "="),
        ("name", "T%20im ${path}", false, "="),
    ];
    let step = sampler_step(&[("method", "POST"), ("DO_MULTIPART_POST", "true")], args);
    assert_eq!(
        step.body.as_deref().unwrap(),
        format!(
            "--{b}\r\nContent-Disposition: form-data; name=\"hello\"\r\nContent-Type: text/plain; charset=UTF-8\r\n\
             Content-Transfer-Encoding: 8bit\r\n\r\nworld\r\n\
             --{b}\r\nContent-Disposition: form-data; name=\"name\"\r\nContent-Type: text/plain; charset=UTF-8\r\n\
             Content-Transfer-Encoding: 8bit\r\n\r\nT%20im {{{{path}}}}\r\n--{b}--\r\n"
        )
    );
    let lax = sampler_step(
        &[
            ("method", "PUT"),
            ("DO_MULTIPART_POST", "true"),
            ("BROWSER_COMPATIBLE_MULTIPART", "true"),
        ],
        &args[..1],
    );
    assert_eq!(
        lax.body.as_deref().unwrap(),
        format!(
            "--{b}\r\nContent-Disposition: form-data; name=\"hello\"\r\n\r\nworld\r\n--{b}--\r\n"
        )
    );
    // The scenario stampede runs reads the body back as written.
    let text = scenario_text(
        &parsed(
            &[("method", "POST"), ("DO_MULTIPART_POST", "true")],
            args,
            "",
            &[],
        ),
        "p.jmx",
    );
    assert!(text.contains(&format!("--{b}--")), "{text}");
}

#[test]
fn the_java_implementation_is_named_in_a_note() {
    let plan = parsed(&[("implementation", "Java"), ("path", "/")], &[], "", &[]);
    assert_eq!(
        plan.notes,
        ["'s' (HTTPSamplerProxy): the Java implementation: the request is built as JMeter's default HttpClient4 builds it"]
    );
    assert!(parsed(&[("implementation", "HttpClient4")], &[], "", &[])
        .notes
        .is_empty());
}

#[test]
fn disabled_arguments_are_left_out() {
    let text = plan(
        &[("method", "GET"), ("path", "/q")],
        &[("a", "1", false, "="), ("b", "2", false, "=")],
        "",
    )
    .replacen(
        r#"<elementProp name="a" elementType="HTTPArgument">"#,
        r#"<elementProp name="a" elementType="HTTPArgument" enabled="false">"#,
        1,
    );
    let plan = parse("p.jmx", &text, std::path::Path::new("."), HashMap::new()).unwrap();
    assert_eq!(plan.groups[0].steps[0].url, "http://h/q?b=2");
}

#[test]
fn bad_url_encoding_in_a_form_is_refused_by_name() {
    let text = plan(&[("method", "POST")], &[("a", "100%", false, "=")], "");
    let plan = parse("p.jmx", &text, std::path::Path::new("."), HashMap::new()).unwrap();
    assert_eq!(plan.unsupported.len(), 1);
    assert_eq!(
        plan.unsupported[0].why,
        "the argument text '100%' is not valid url-encoding: JMeter's URLDecoder fails the sample"
    );
}

/// HTTPSamplerBase: `follow_redirects` and `auto_redirects` each make the
/// sampler follow; a timeout of 0 is none (HTTPHCAbstractImpl sets a
/// timeout only when it is above 0).
#[test]
fn redirect_flags_and_zero_timeouts_read_as_jmeter_reads_them() {
    let follows = |props: &[(&str, &str)]| sampler_step(props, &[]).follow_redirects;
    assert!(!follows(&[]));
    assert!(follows(&[("auto_redirects", "true")]));
    assert!(follows(&[("follow_redirects", "true")]));
    assert!(!follows(&[
        ("follow_redirects", "false"),
        ("auto_redirects", "false")
    ]));
    let timeouts = |connect: &str, response: &str| {
        let step = sampler_step(
            &[("connect_timeout", connect), ("response_timeout", response)],
            &[],
        );
        (step.connect_timeout_ms, step.response_timeout_ms)
    };
    assert_eq!(timeouts("0", "0"), (None, None));
    assert_eq!(timeouts("1", "2500"), (Some(1), Some(2500)));
}
