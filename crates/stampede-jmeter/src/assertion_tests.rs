//! Response, Size and Duration Assertions and timers map onto stampede
//! checks and pauses as JMeter reads them; what a check cannot hold is
//! refused with the reason. ResponseAssertion.java's test_type bits:
//! MATCH 1, CONTAINS 2, NOT 4, EQUALS 8, SUBSTRING 16, OR 32;
//! SizeAssertion.java's operators 1 (=) to 6 (<=); a timer's delay and
//! range in milliseconds (ConstantTimer, UniformRandomTimer:
//! delay + random × range).

use crate::tests::{map, GET};

/// The checks a sampler carrying `element` maps to, or the reason the
/// element is refused.
fn checks(element: &str) -> Result<Vec<String>, String> {
    let plan = map(
        &format!("{GET}<hashTree>{element}<hashTree/></hashTree>"),
        &[],
    )
    .map_err(|e| e.to_string())?;
    if let Some(refused) = plan.unsupported.first() {
        return Err(refused.why.clone());
    }
    Ok(plan.groups[0].steps[0].checks.clone())
}

/// A Response Assertion on `field` of type `test_type` with `patterns`.
fn response(field: &str, test_type: u32, patterns: &[&str]) -> String {
    let strings: String = patterns
        .iter()
        .enumerate()
        .map(|(i, p)| format!(r#"<stringProp name="{i}">{p}</stringProp>"#))
        .collect();
    format!(
        r#"<ResponseAssertion testclass="ResponseAssertion" testname="a">
          <collectionProp name="Asserion.test_strings">{strings}</collectionProp>
          <stringProp name="Assertion.test_field">Assertion.{field}</stringProp>
          <intProp name="Assertion.test_type">{test_type}</intProp>
        </ResponseAssertion>"#
    )
}

fn one(check: &str) -> Result<Vec<String>, String> {
    Ok(vec![check.to_string()])
}

#[test]
fn body_assertions_map_by_their_test_type() {
    let body = |t, p: &[&str]| checks(&response("response_data", t, p));
    assert_eq!(body(16, &["a\"b"]), one(r#"body contains "a\"b""#));
    assert_eq!(body(2, &["ok+"]), one("body ~ ok+"));
    assert_eq!(body(1, &["ok+"]), one("body ~ ^(?s:ok+)$"));
    assert_eq!(body(8, &["a.b"]), one(r"body ~ ^a\.b$"));
    // Several patterns: each must hold (AND), one check each.
    assert_eq!(
        body(2, &["a", "b"]),
        Ok(vec!["body ~ a".to_string(), "body ~ b".to_string()])
    );
    // OR over one pattern is that pattern; over several, no check holds it.
    assert_eq!(body(2 | 32, &["a"]), one("body ~ a"));
    let or = body(2 | 32, &["a", "b"]).unwrap_err();
    assert!(or.contains("OR over several patterns"), "{or}");
    let not = body(2 | 4, &["a"]).unwrap_err();
    assert!(not.contains("NOT on the response body"), "{not}");
    let two_rules = body(1 | 2, &["a"]).unwrap_err();
    assert!(two_rules.contains("not one rule"), "{two_rules}");
}

#[test]
fn code_assertions_take_a_code_or_a_class() {
    let code = |t, p: &str| checks(&response("response_code", t, &[p]));
    assert_eq!(code(8, "404"), one("status == 404"));
    assert_eq!(code(8 | 4, "404"), one("status != 404"));
    assert_eq!(code(1, r"2\d\d"), one("status in 200..299"));
    assert_eq!(code(2, "5.."), one("status in 500..599"));
    assert_eq!(code(1, "3[0-9]{2}"), one("status in 300..399"));
    for (t, p) in [
        (8, r"2\d\d"),
        (1 | 4, r"2\d\d"),
        (8, "40"),
        (8, "4x4"),
        (1, "x.."),
    ] {
        let refused = code(t, p).unwrap_err();
        assert!(
            refused.contains("has no stampede check"),
            "{t} {p}: {refused}"
        );
    }
}

#[test]
fn header_assertions_name_their_header() {
    let header = |t, p: &str| checks(&response("response_headers", t, &[p]));
    assert_eq!(
        header(16, "Server: ng"),
        one(r#"header(Server) contains "ng""#)
    );
    assert_eq!(header(2, "Server: ng.*"), one("header(Server) ~ ng.*"));
    assert_eq!(
        header(1, "Server: ng.*"),
        one("header(Server) ~ ^(?:ng.*)$")
    );
    assert_eq!(
        header(8, "Server: nginx"),
        one(r#"header(Server) == "nginx""#)
    );
    assert_eq!(
        header(8 | 4, "Server: nginx"),
        one(r#"header(Server) != "nginx""#)
    );
    let refused = header(16 | 4, "Server: ng").unwrap_err();
    assert!(refused.contains("no stampede check"), "{refused}");
    let unnamed = header(16, "nginx").unwrap_err();
    assert!(unnamed.contains("names no header"), "{unnamed}");
}

#[test]
fn size_and_duration_assertions_map_onto_the_body_size_and_time() {
    let size = |field: &str, operator: u32| {
        checks(&format!(
            r#"<SizeAssertion testclass="SizeAssertion" testname="s">
              <stringProp name="Assertion.test_field">SizeAssertion.{field}</stringProp>
              <stringProp name="SizeAssertion.size">100</stringProp>
              <intProp name="SizeAssertion.operator">{operator}</intProp>
            </SizeAssertion>"#
        ))
    };
    assert_eq!(size("response_data", 6), one("body size <= 100"));
    assert_eq!(size("response_data", 1), one("body size == 100"));
    let headers = size("response_headers", 6).unwrap_err();
    assert!(
        headers.contains("a Size Assertion on response_headers"),
        "{headers}"
    );
    let duration = |ms: &str| {
        checks(&format!(
            r#"<DurationAssertion testclass="DurationAssertion" testname="d">
              <stringProp name="DurationAssertion.duration">{ms}</stringProp>
            </DurationAssertion>"#
        ))
    };
    assert_eq!(duration("250"), one("time <= 250ms"));
    let negative = duration("-5").unwrap_err();
    assert!(negative.contains("is '-5', not a number"), "{negative}");
}

#[test]
fn timers_add_their_delay_and_range() {
    let think = |timer: &str, delay: &str, range: &str| {
        let element = format!(
            r#"<{timer} testclass="{timer}" testname="t">
              <stringProp name="ConstantTimer.delay">{delay}</stringProp>
              <stringProp name="RandomTimer.range">{range}</stringProp>
            </{timer}>"#
        );
        let plan = map(&format!("{element}<hashTree/>{GET}<hashTree/>"), &[]).unwrap();
        let pause = plan.groups[0].think.expect("a pause");
        (pause.min_ms, pause.max_ms)
    };
    assert_eq!(think("ConstantTimer", "300", "0"), (300, 300));
    assert_eq!(think("UniformRandomTimer", "100", "50"), (100, 150));
    assert_eq!(think("GaussianRandomTimer", "100", "30"), (70, 130));
    assert_eq!(think("GaussianRandomTimer", "10", "30"), (0, 40));
}
