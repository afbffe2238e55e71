//! Regular Expression and Boundary Extractors map onto stampede extracts
//! with JMeter's match numbers, templates and default values; what a
//! stampede extract cannot hold is refused with the reason.

use crate::tests::{map, GET};

/// The extract a sampler carrying `extractor` maps to, or the reason the
/// sampler is refused.
fn extract(extractor: &str) -> Result<(String, String), String> {
    let plan = map(
        &format!("{GET}<hashTree>{extractor}<hashTree/></hashTree>"),
        &[],
    )
    .unwrap();
    if let Some(refused) = plan.unsupported.first() {
        return Err(refused.why.clone());
    }
    Ok(plan.groups[0].steps[0].extracts[0].clone())
}

fn regex_extractor(props: &str) -> String {
    format!(
        r#"<RegexExtractor guiclass="RegexExtractorGui" testclass="RegexExtractor" testname="re">
          <stringProp name="RegexExtractor.useHeaders">false</stringProp>
          <stringProp name="RegexExtractor.refname">v</stringProp>
          <stringProp name="RegexExtractor.regex">id=(\d+):(\w+)</stringProp>
          {props}
        </RegexExtractor>"#
    )
}

/// RegexExtractor.java: process() stores the default (or an empty one with
/// default_empty_value) before looking; getCorrectMatchJavaRegex takes
/// match N from 1, 0 at random; generateResult fills the template.
#[test]
fn regex_match_numbers_templates_and_defaults_map() {
    let (name, source) = extract(&regex_extractor(
        r#"<stringProp name="RegexExtractor.template">$2$-$1$</stringProp>
          <stringProp name="RegexExtractor.default">NONE</stringProp>
          <stringProp name="RegexExtractor.match_number">2</stringProp>"#,
    ))
    .unwrap();
    assert_eq!(name, "v");
    assert_eq!(
        source,
        r#"regex(id=(\d+):(\w+)) nth 2 template "$2$-$1$" default "NONE""#
    );
    let (_, random) = extract(&regex_extractor(
        r#"<stringProp name="RegexExtractor.template">$1$</stringProp>
          <stringProp name="RegexExtractor.match_number">0</stringProp>
          <boolProp name="RegexExtractor.default_empty_value">true</boolProp>"#,
    ))
    .unwrap();
    assert_eq!(
        random,
        r#"regex(id=(\d+):(\w+)) nth random template "$1$" default """#
    );
    let all = extract(&regex_extractor(
        r#"<stringProp name="RegexExtractor.match_number">-1</stringProp>"#,
    ))
    .unwrap_err();
    assert!(
        all.contains("match number -1")
            && all.contains("name_matchNr")
            && all.contains("depends on the response, read by a ForEach Controller"),
        "{all}"
    );
    let headers = extract(&regex_extractor("").replace(
        "<stringProp name=\"RegexExtractor.useHeaders\">false",
        "<stringProp name=\"RegexExtractor.useHeaders\">true",
    ))
    .unwrap_err();
    // RegexExtractor.java: USE_HDRS = "true" reads the response headers.
    assert!(
        headers.contains(
            "extracting from the response headers is not mapped (only the response body)"
        ),
        "{headers}"
    );
}

/// BoundaryExtractor.java: process() stores a default only when it is not
/// blank; saveMatches takes match N, 0 at random.
#[test]
fn boundary_extractors_map_to_between() {
    let (name, source) = extract(
        r#"<BoundaryExtractor guiclass="BoundaryExtractorGui" testclass="BoundaryExtractor" testname="b">
          <stringProp name="BoundaryExtractor.useHeaders">false</stringProp>
          <stringProp name="BoundaryExtractor.refname">sid</stringProp>
          <stringProp name="BoundaryExtractor.lboundary">sid="</stringProp>
          <stringProp name="BoundaryExtractor.rboundary">"</stringProp>
          <stringProp name="BoundaryExtractor.match_number">3</stringProp>
          <stringProp name="BoundaryExtractor.default"> </stringProp>
        </BoundaryExtractor>"#,
    )
    .unwrap();
    assert_eq!(name, "sid");
    assert_eq!(source, r#"between("sid=\"", "\"") nth 3"#);
}

/// HtmlExtractor.java (process: the default first; getCorrectMatch: N from
/// 1, 0 at random) with JSoupExtractor's selector and attribute.
#[test]
fn css_extractors_map_to_css() {
    let (name, source) = extract(
        r#"<HtmlExtractor guiclass="HtmlExtractorGui" testclass="HtmlExtractor" testname="link">
          <stringProp name="HtmlExtractor.refname">next</stringProp>
          <stringProp name="HtmlExtractor.expr">a[rel="next"]</stringProp>
          <stringProp name="HtmlExtractor.attribute">href</stringProp>
          <stringProp name="HtmlExtractor.default">/end</stringProp>
          <stringProp name="HtmlExtractor.match_number">2</stringProp>
          <stringProp name="HtmlExtractor.extractor_impl"></stringProp>
        </HtmlExtractor>"#,
    )
    .unwrap();
    assert_eq!(name, "next");
    assert_eq!(
        source,
        r#"css("a[rel=\"next\"]", "href") nth 2 default "/end""#
    );
}

/// A pattern the regex engine cannot compile is refused with the first
/// line of its error (regex's messages run over several lines, with a
/// caret under the fault).
#[test]
fn a_regex_that_does_not_compile_is_refused_with_its_first_line() {
    let refused = extract(
        r#"<RegexExtractor guiclass="RegexExtractorGui" testclass="RegexExtractor" testname="re">
          <stringProp name="RegexExtractor.useHeaders">false</stringProp>
          <stringProp name="RegexExtractor.refname">v</stringProp>
          <stringProp name="RegexExtractor.regex">id=(\d+</stringProp>
        </RegexExtractor>"#,
    )
    .unwrap_err();
    // Built at run time: the pattern is meant not to compile.
    let unclosed = String::from(r"id=(\d+");
    let compiled = regex::Regex::new(&unclosed).unwrap_err().to_string();
    let first = compiled.lines().next().unwrap();
    assert!(compiled.lines().count() > 1, "{compiled}");
    assert!(
        refused.ends_with(&format!("the regex: {first}")),
        "{refused}"
    );
    assert!(!refused.contains('\n'), "{refused}");
}

/// RegexExtractor.java reads an empty match number as 0 (one at random);
/// the JSON Extractor's match number maps only when it is the first
/// (JSONPostProcessor.java: 1, or unset).
#[test]
fn an_empty_match_number_is_random_and_json_takes_the_first_match_only() {
    let (_, source) = extract(&regex_extractor(
        r#"<stringProp name="RegexExtractor.template">$1$</stringProp>
          <stringProp name="RegexExtractor.match_number"></stringProp>"#,
    ))
    .unwrap();
    assert_eq!(source, r#"regex(id=(\d+):(\w+)) nth random template "$1$""#);
    let json = |numbers: &str| {
        extract(&format!(
            r#"<JSONPostProcessor guiclass="JSONPostProcessorGui" testclass="JSONPostProcessor" testname="j">
              <stringProp name="JSONPostProcessor.referenceNames">token</stringProp>
              <stringProp name="JSONPostProcessor.jsonPathExprs">$.token</stringProp>
              <stringProp name="JSONPostProcessor.match_numbers">{numbers}</stringProp>
            </JSONPostProcessor>"#
        ))
    };
    assert_eq!(json("1"), Ok(("token".into(), "json($.token)".into())));
    let second = json("2").unwrap_err();
    assert!(
        second.contains("match number 2 is not mapped (only the first match)"),
        "{second}"
    );
}
