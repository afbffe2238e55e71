//! Assertions, extractors and timers: each JMeter element turned into the
//! stampede check expressions, extract sources or pause it means, or the
//! reason it has none. Every check and extract is parsed by stampede's own
//! parser here, so a form stampede cannot read is reported against the
//! JMeter element, not as a scenario-file error.

use crate::functions::{constant, translate, FnError, Names};
use crate::model::Pause;
use crate::tree::{Element, Prop};
use crate::MapError;

use crate::failure::{FailureText, CONTAINS, EQUALS, MATCH, NOT, OR, SUBSTRING};

fn unsupported(why: impl Into<String>) -> MapError {
    MapError::Unsupported(why.into())
}

/// A check or extract source stampede must be able to parse.
fn checked(expr: String) -> Result<String, MapError> {
    stampede_workload::Check::parse(&expr)
        .map(|_| expr)
        .map_err(|e| {
            unsupported(format!(
                "stampede cannot read the check: {}",
                first_line(&e)
            ))
        })
}

fn first_line(e: &dyn std::fmt::Display) -> String {
    e.to_string().lines().next().unwrap_or("").to_string()
}

/// A string in a check's `"..."`.
fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The checks a Response or Duration Assertion stands for, each with the
/// failureMessage JMeter writes when it fails.
pub(crate) fn assertion(
    e: &Element,
    names: &Names,
) -> Result<Vec<(String, FailureText)>, MapError> {
    if e.class == "DurationAssertion" {
        let ms = number(e, "DurationAssertion.duration", names)?
            .ok_or_else(|| MapError::missing(e, "DurationAssertion.duration"))?;
        let max_ms = ms as u64;
        return Ok(vec![(
            checked(format!("time <= {max_ms}ms"))?,
            FailureText::Duration { max_ms },
        )]);
    }
    if e.class == "SizeAssertion" {
        return size_assertion(e, names);
    }
    let custom = e.text("Assertion.custom_message");
    let field = e
        .text("Assertion.test_field")
        .unwrap_or("Assertion.response_data");
    let kind = match e.text("Assertion.test_type") {
        Some(t) => t
            .trim()
            .parse::<u32>()
            .map_err(|_| unsupported(format!("test_type {t} is not a number")))?,
        None => SUBSTRING,
    };
    if e.text("Assertion.scope") == Some("variable") {
        return Err(unsupported("assertions on a variable are not mapped"));
    }
    let mut patterns = Vec::new();
    for (_, prop) in e.list("Asserion.test_strings") {
        if let Prop::Text(text) = prop {
            patterns.push(constant(text, names, "the pattern")?);
        }
    }
    if patterns.is_empty() {
        return Err(MapError::missing(e, "Asserion.test_strings"));
    }
    if kind & OR != 0 && patterns.len() > 1 {
        return Err(unsupported(
            "OR over several patterns has no stampede check",
        ));
    }
    let not = kind & NOT != 0;
    let how = kind & (MATCH | CONTAINS | EQUALS | SUBSTRING);
    patterns
        .iter()
        .map(|p| match field {
            "Assertion.response_code" => code_check(p, how, not),
            "Assertion.response_data" => body_check(p, how, not),
            "Assertion.response_headers" => header_check(p, how, not),
            other => Err(unsupported(format!(
                "assertions on {} are not mapped",
                other.trim_start_matches("Assertion.")
            ))),
        })
        .zip(&patterns)
        .map(|(check, p)| {
            let text = FailureText::response(field, kind, p, custom);
            check.and_then(checked).map(|c| (c, text))
        })
        .collect()
}

/// A Size Assertion on the response body (JMeter's other fields, the whole
/// response by default, have no stampede check).
fn size_assertion(e: &Element, names: &Names) -> Result<Vec<(String, FailureText)>, MapError> {
    let field = e
        .text("Assertion.test_field")
        .unwrap_or("SizeAssertion.response_network_size");
    if field != "SizeAssertion.response_data" {
        return Err(unsupported(format!(
            "a Size Assertion on {} has no stampede check (the response body only)",
            field.trim_start_matches("SizeAssertion.")
        )));
    }
    let allowed = number(e, "SizeAssertion.size", names)?
        .ok_or_else(|| MapError::missing(e, "SizeAssertion.size"))? as u64;
    let operator = e.text("SizeAssertion.operator").unwrap_or("1").trim();
    let (compare, should) = operator
        .parse::<u32>()
        .ok()
        .and_then(FailureText::size_operator)
        .ok_or_else(|| unsupported(format!("SizeAssertion.operator {operator} is not 1 to 6")))?;
    Ok(vec![(
        checked(format!("body size {compare} {allowed}"))?,
        FailureText::BodySize { should, allowed },
    )])
}

fn code_check(pattern: &str, how: u32, not: bool) -> Result<String, MapError> {
    let p = pattern.trim();
    if p.len() == 3 && p.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(format!("status {} {p}", if not { "!=" } else { "==" }));
    }
    let class = p.as_bytes().first().copied().filter(u8::is_ascii_digit);
    let any_two = [r"\d\d", "..", "[0-9][0-9]", r"\d{2}", "[0-9]{2}"];
    if let (Some(first), false, true) = (class, not, how & (MATCH | CONTAINS) != 0) {
        if any_two.contains(&&p[1..]) {
            let base = u32::from(first - b'0') * 100;
            return Ok(format!("status in {base}..{}", base + 99));
        }
    }
    Err(unsupported(format!(
        "response code pattern '{pattern}' has no stampede check (a code, or 2\\d\\d)"
    )))
}

fn body_check(pattern: &str, how: u32, not: bool) -> Result<String, MapError> {
    if not {
        return Err(unsupported(
            "NOT on the response body has no stampede check",
        ));
    }
    Ok(match how {
        SUBSTRING => format!("body contains {}", quoted(pattern)),
        CONTAINS => format!("body ~ {pattern}"),
        MATCH => format!("body ~ ^(?s:{pattern})$"),
        EQUALS => format!("body ~ ^{}$", regex::escape(pattern)),
        _ => return Err(unsupported("the assertion's test_type is not one rule")),
    })
}

fn header_check(pattern: &str, how: u32, not: bool) -> Result<String, MapError> {
    let Some((name, value)) = pattern.split_once(':') else {
        return Err(unsupported(format!(
            "header pattern '{pattern}' names no header (write Name: value)"
        )));
    };
    let (name, value) = (name.trim(), value.trim());
    Ok(match (how, not) {
        (SUBSTRING, false) => format!("header({name}) contains {}", quoted(value)),
        (CONTAINS, false) => format!("header({name}) ~ {value}"),
        (MATCH, false) => format!("header({name}) ~ ^(?:{value})$"),
        (EQUALS, false) => format!("header({name}) == {}", quoted(value)),
        (EQUALS, true) => format!("header({name}) != {}", quoted(value)),
        _ => return Err(unsupported("this header assertion has no stampede check")),
    })
}

/// A stampede extract source stampede can parse.
fn source(name: &str, source: String) -> Result<(String, String), MapError> {
    stampede_workload::Extractor::parse(name, &source, 0)
        .map(|_| (name.to_string(), source))
        .map_err(|e| {
            unsupported(format!(
                "stampede cannot read the extract: {}",
                first_line(&e)
            ))
        })
}

fn first_match_only(number: Option<&str>) -> Result<(), MapError> {
    match number.map(str::trim) {
        None | Some("1") => Ok(()),
        Some(n) => Err(unsupported(format!(
            "match number {n} is not mapped (only the first match)"
        ))),
    }
}

/// `useHeaders` holds which part of the sample an extractor reads, in
/// RegexExtractor.java's words (USE_HDRS = "true", USE_BODY = "false",
/// ...); only the body is mapped, and a refusal names the part as its GUI
/// does.
fn body_only(use_headers: Option<&str>) -> Result<(), MapError> {
    let part = match use_headers.map(str::trim) {
        None | Some("false") => return Ok(()),
        Some("true") => "the response headers",
        Some("request_headers") => "the request headers",
        Some("unescaped") => "the unescaped body",
        Some("as_document") => "the body as a document",
        Some("URL") => "the URL",
        Some("code") => "the response code",
        Some("message") => "the response message",
        Some(other) => other,
    };
    Err(unsupported(format!(
        "extracting from {part} is not mapped (only the response body)"
    )))
}

/// The `nth` clause of a regex or boundary extractor's match number
/// (RegexExtractor.getCorrectMatchJavaRegex, BoundaryExtractor.saveMatches):
/// N is the Nth match, 0 (also empty: JMeter reads it as 0) one at random,
/// a negative number every match as `name_1`..`name_n` and `name_matchNr`.
fn nth(number: Option<&str>) -> Result<String, MapError> {
    let raw = number.map_or("", str::trim);
    match raw.parse::<i64>() {
        Ok(1) => Ok(String::new()),
        Ok(n) if n > 1 => Ok(format!(" nth {n}")),
        Ok(0) => Ok(" nth random".to_string()),
        _ if raw.is_empty() => Ok(" nth random".to_string()),
        Ok(n) => Err(unsupported(format!(
            "match number {n} (every match as name_1..name_n and name_matchNr) is not mapped: a stampede extract stores one value, and how many JMeter sets depends on the response, read by a ForEach Controller or ${{__V(...)}}, which stampede has neither of"
        ))),
        Err(_) => Err(unsupported(format!("match number '{raw}' is not a number"))),
    }
}

/// The `default` clause: JMeter stores the default value before it looks
/// (`stored` says which defaults it stores), or an empty one when
/// `default_empty_value` is set. With neither, a stampede extract that
/// finds nothing fails the sample, where JMeter keeps the variable as it was.
fn default_value(
    e: &Element,
    prefix: &str,
    names: &Names,
    stored: impl Fn(&str) -> bool,
) -> Result<String, MapError> {
    let prop = format!("{prefix}.default");
    let value = match e.text(&prop) {
        Some(raw) => constant(raw, names, &prop)?,
        None => String::new(),
    };
    let empty = e
        .text(&format!("{prefix}.default_empty_value"))
        .map(str::trim)
        == Some("true");
    Ok(if stored(&value) {
        format!(" default {}", quoted(&value))
    } else if empty {
        " default \"\"".to_string()
    } else {
        String::new()
    })
}

/// The extracts of a JSON, regular-expression, boundary or CSS extractor.
pub(crate) fn extractor(e: &Element, names: &Names) -> Result<Vec<(String, String)>, MapError> {
    let text = |prop: &str| -> Result<String, MapError> {
        let raw = e.text(prop).ok_or_else(|| MapError::missing(e, prop))?;
        Ok(constant(raw, names, prop)?)
    };
    match e.class.as_str() {
        "JSONPostProcessor" => {
            first_match_only(e.text("JSONPostProcessor.match_numbers"))?;
            let refs = text("JSONPostProcessor.referenceNames")?;
            let paths = text("JSONPostProcessor.jsonPathExprs")?;
            let (refs, paths): (Vec<&str>, Vec<&str>) =
                (refs.split(';').collect(), paths.split(';').collect());
            if refs.len() != paths.len() {
                return Err(unsupported(
                    "as many reference names as JSON paths are needed",
                ));
            }
            refs.iter()
                .zip(&paths)
                .map(|(name, path)| source(name.trim(), format!("json({})", path.trim())))
                .collect()
        }
        "com.atlantbh.jmeter.plugins.jsonutils.jsonpathextractor.JSONPathExtractor" => {
            let path = text("JSONPATH")?;
            Ok(vec![source(
                text("VAR")?.trim(),
                format!("json({})", path.trim()),
            )?])
        }
        "RegexExtractor" => {
            body_only(e.text("RegexExtractor.useHeaders"))?;
            let pattern = text("RegexExtractor.regex")?;
            regex::Regex::new(&pattern)
                .map_err(|e| unsupported(format!("the regex: {}", first_line(&e))))?;
            // RegexExtractor.generateResult: the template filled from the
            // match; an empty template gives an empty value.
            let template = match e.text("RegexExtractor.template") {
                Some(raw) => constant(raw, names, "RegexExtractor.template")?,
                None => String::new(),
            };
            let clauses = format!(
                "regex({pattern}){} template {}{}",
                nth(e.text("RegexExtractor.match_number"))?,
                quoted(&template),
                default_value(e, "RegexExtractor", names, |d| !d.is_empty())?,
            );
            Ok(vec![source(
                text("RegexExtractor.refname")?.trim(),
                clauses,
            )?])
        }
        "BoundaryExtractor" => {
            body_only(e.text("BoundaryExtractor.useHeaders"))?;
            let left = e.text("BoundaryExtractor.lboundary").unwrap_or("");
            let right = e.text("BoundaryExtractor.rboundary").unwrap_or("");
            let left = constant(left, names, "BoundaryExtractor.lboundary")?;
            let right = constant(right, names, "BoundaryExtractor.rboundary")?;
            let name = text("BoundaryExtractor.refname")?;
            let clauses = format!(
                "between({}, {}){}{}",
                quoted(&left),
                quoted(&right),
                nth(e.text("BoundaryExtractor.match_number"))?,
                // BoundaryExtractor.process: a blank default is not stored.
                default_value(e, "BoundaryExtractor", names, |d| !d.trim().is_empty())?,
            );
            Ok(vec![source(name.trim(), clauses)?])
        }
        "HtmlExtractor" => {
            // HtmlExtractor.getExtractorImpl: empty is JSoup, the default;
            // Jodd's CSSelly reads the same selectors.
            let engine = e.text("HtmlExtractor.extractor_impl").map_or("", str::trim);
            if !matches!(engine, "" | "JSOUP" | "JODD") {
                return Err(unsupported(format!(
                    "extractor implementation {engine} is not JSOUP or JODD"
                )));
            }
            let expr = text("HtmlExtractor.expr")?;
            let attribute = match e.text("HtmlExtractor.attribute") {
                Some(raw) => constant(raw, names, "HtmlExtractor.attribute")?,
                None => String::new(),
            };
            let clauses = format!(
                "css({}, {}){}{}",
                quoted(expr.trim()),
                quoted(attribute.trim()),
                nth(e.text("HtmlExtractor.match_number"))?,
                default_value(e, "HtmlExtractor", names, |d| !d.is_empty())?,
            );
            Ok(vec![source(
                text("HtmlExtractor.refname")?.trim(),
                clauses,
            )?])
        }
        other => Err(unsupported(format!(
            "{other} is not an extractor stampede maps"
        ))),
    }
}

/// A number property (milliseconds, a rate); None when empty.
fn number(e: &Element, prop: &str, names: &Names) -> Result<Option<f64>, MapError> {
    let Some(raw) = e.text(prop) else {
        return Ok(None);
    };
    let value = constant(raw, names, prop)?;
    match value.trim().parse::<f64>() {
        Ok(n) if n.is_finite() && n >= 0.0 => Ok(Some(n)),
        _ => Err(MapError::Bad(format!(
            "{}: {prop} is '{value}', not a number",
            e.describe()
        ))),
    }
}

/// The pause a constant, uniform or Gaussian timer adds before each sampler.
pub(crate) fn pause(
    e: &Element,
    names: &Names,
    notes: &mut Vec<String>,
) -> Result<Pause, MapError> {
    let delay = number(e, "ConstantTimer.delay", names)?.unwrap_or(0.0) as u64;
    let range = number(e, "RandomTimer.range", names)?.unwrap_or(0.0) as u64;
    Ok(match e.class.as_str() {
        "ConstantTimer" => Pause {
            min_ms: delay,
            max_ms: delay,
        },
        "UniformRandomTimer" => Pause {
            min_ms: delay,
            max_ms: delay + range,
        },
        "GaussianRandomTimer" => {
            notes.push(format!(
                "{}: a Gaussian pause (mean {delay} ms, deviation {range} ms) is run as a uniform one over mean ± deviation",
                e.describe()
            ));
            Pause {
                min_ms: delay.saturating_sub(range),
                max_ms: delay + range,
            }
        }
        other => return Err(unsupported(format!("{other} is not a timer stampede maps"))),
    })
}

/// A throughput timer's iteration rate or stages, given the group's
/// threads and samplers per iteration: `(rate, stages)`.
pub(crate) fn throughput(
    e: &Element,
    names: &Names,
    threads: u32,
    steps: usize,
) -> Result<crate::model::Load, MapError> {
    let per_iteration = steps.max(1) as f64;
    if e.class == "ConstantThroughputTimer" {
        let per_minute =
            number(e, "throughput", names)?.ok_or_else(|| MapError::missing(e, "throughput"))?;
        // calcMode 0: the rate is each thread's; the others share it.
        let mode = e.text("calcMode").map_or("0", str::trim);
        let total = if mode == "0" {
            per_minute * f64::from(threads)
        } else {
            per_minute
        };
        if total <= 0.0 {
            return Err(unsupported("a throughput of 0 starts nothing"));
        }
        return Ok(crate::model::Load::Rate(total / 60.0 / per_iteration));
    }
    let mut stages = Vec::new();
    for (_, row) in e.list("load_profile") {
        let Prop::List(cells) = row else { continue };
        let cell = |i: usize| -> Result<f64, MapError> {
            let Some((_, Prop::Text(text))) = cells.get(i) else {
                return Err(unsupported("a load_profile row has fewer than 3 columns"));
            };
            constant(text, names, "load_profile")?
                .trim()
                .parse::<f64>()
                .map_err(|_| unsupported(format!("load_profile value '{text}' is not a number")))
        };
        let (start, end, seconds) = (cell(0)?, cell(1)?, cell(2)?);
        stages.push(format!("0s:{}", start / per_iteration));
        stages.push(format!("{seconds}s:{}", end / per_iteration));
    }
    if stages.is_empty() {
        return Err(MapError::missing(e, "load_profile"));
    }
    Ok(crate::model::Load::Stages(stages.join(",")))
}

impl From<FnError> for MapError {
    fn from(e: FnError) -> MapError {
        match e {
            FnError::Unsupported(why) => MapError::Unsupported(why),
            FnError::Missing(why) => MapError::Bad(why),
        }
    }
}

/// `translate` for a header or body: the template text.
pub(crate) fn template(text: &str, names: &Names) -> Result<String, MapError> {
    Ok(translate(text, names)?.template())
}
