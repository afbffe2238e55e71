//! The check grammar (see the module doc of [`crate::check`]).

use super::lexer::Cursor;
use super::{Check, Compare, ParseError, Subject, Test};
use crate::json_path::JsonPath;

const COMPARISONS: &str = "expected ==, !=, <, <=, >, >=";

pub(super) fn parse_check(text: &str) -> Result<Check, ParseError> {
    let mut cursor = Cursor::new("check", text);
    cursor.skip_space();
    let subject_at = cursor.at;
    let subject = match cursor.word() {
        "status" => Subject::Status,
        "time" => Subject::Time,
        "body" => {
            let before = cursor.at;
            if cursor.word() == "size" {
                Subject::BodySize
            } else {
                cursor.at = before;
                Subject::Body
            }
        }
        "header" => {
            let (at, name) = cursor.parenthesized()?;
            if name.is_empty() {
                return Err(cursor.error(at, "expected a header name"));
            }
            Subject::Header(name.to_string())
        }
        "json" => Subject::Json(json_path(&mut cursor)?),
        _ => {
            return Err(cursor.error(
                subject_at,
                "expected status, header(NAME), body, body size, json(PATH) or time",
            ))
        }
    };
    let test = match &subject {
        Subject::Status => number_test(&mut cursor, true, |t| t.parse().ok())?,
        Subject::BodySize => number_test(&mut cursor, false, parse_size)?,
        Subject::Time => number_test(&mut cursor, false, |t| {
            stampede_plan::parse_duration(t)
                .ok()
                .map(|d| d.as_secs_f64())
        })?,
        Subject::Header(_) => text_test(&mut cursor, true, false)?,
        Subject::Body => text_test(&mut cursor, false, false)?,
        Subject::Json(_) => text_test(&mut cursor, true, true)?,
    };
    if !cursor.at_end() {
        return Err(cursor.error(cursor.at, "unexpected text after the check"));
    }
    Ok(Check {
        text: text.trim().to_string(),
        subject,
        test,
    })
}

pub(crate) fn json_path(cursor: &mut Cursor<'_>) -> Result<JsonPath, ParseError> {
    let (at, path) = cursor.parenthesized()?;
    JsonPath::parse(path).map_err(|e| cursor.error(at + e.at, e.reason))
}

fn comparison(cursor: &mut Cursor<'_>) -> Option<Compare> {
    // Two-byte operators first, so `<=` is not read as `<`.
    let operators = [
        ("==", Compare::Eq),
        ("!=", Compare::Ne),
        ("<=", Compare::Le),
        (">=", Compare::Ge),
        ("<", Compare::Lt),
        (">", Compare::Gt),
    ];
    operators
        .into_iter()
        .find(|(token, _)| cursor.eat(token))
        .map(|(_, compare)| compare)
}

fn number_test(
    cursor: &mut Cursor<'_>,
    allow_range: bool,
    value: impl Fn(&str) -> Option<f64>,
) -> Result<Test, ParseError> {
    cursor.skip_space();
    let op_at = cursor.at;
    if let Some(compare) = comparison(cursor) {
        let (at, token) = cursor.token();
        let number = value(token).ok_or_else(|| cursor.error(at, "expected a value here"))?;
        return Ok(Test::Number(compare, number));
    }
    if allow_range && cursor.word() == "in" {
        return range(cursor, value);
    }
    let reason = if allow_range {
        format!("{COMPARISONS} or in")
    } else {
        COMPARISONS.to_string()
    };
    Err(cursor.error(op_at, reason))
}

/// `LOW..HIGH` after `in`: both ends included, the low one not above the high one.
fn range(cursor: &mut Cursor<'_>, value: impl Fn(&str) -> Option<f64>) -> Result<Test, ParseError> {
    let (at, token) = cursor.token();
    let range = token.split_once("..").and_then(|(low, high)| {
        Some((value(low)?, value(high)?)).filter(|(low, high)| low <= high)
    });
    let (low, high) =
        range.ok_or_else(|| cursor.error(at, "expected a range LOW..HIGH, e.g. 200..299"))?;
    Ok(Test::Within(low, high))
}

fn text_test(cursor: &mut Cursor<'_>, allow_exists: bool, json: bool) -> Result<Test, ParseError> {
    cursor.skip_space();
    let op_at = cursor.at;
    if cursor.eat("~") {
        let (at, pattern) = cursor.pattern()?;
        let regex = regex::bytes::Regex::new(&pattern).map_err(|e| {
            cursor.error(at, format!("invalid regex: {}", first_line(&e.to_string())))
        })?;
        return Ok(Test::Matches(Box::new(regex)));
    }
    for (token, negate) in [("==", false), ("!=", true)] {
        if allow_exists && cursor.eat(token) {
            cursor.skip_space();
            let at = cursor.at;
            let value = if json && !cursor.rest().starts_with('"') {
                let (_, token) = cursor.token();
                serde_json::from_str(token).map_err(|_| {
                    cursor.error(at, "expected a \"string\", a number, true, false or null")
                })?
            } else {
                serde_json::Value::String(cursor.quoted()?)
            };
            return Ok(Test::Equals(value, negate));
        }
    }
    if json {
        if let Some(compare) = comparison(cursor) {
            let (at, token) = cursor.token();
            let number: f64 = token
                .parse()
                .map_err(|_| cursor.error(at, "expected a number"))?;
            return Ok(Test::Number(compare, number));
        }
    }
    match cursor.word() {
        "exists" if allow_exists => Ok(Test::Exists),
        "in" if json => range(cursor, |n| n.parse().ok()),
        "contains" => {
            let text = cursor.quoted()?;
            Ok(Test::Contains(Box::new(
                memchr::memmem::Finder::new(text.as_bytes()).into_owned(),
            )))
        }
        _ => Err(cursor.error(
            op_at,
            match (allow_exists, json) {
                (false, _) => "expected contains \"text\" or ~ REGEX",
                (true, false) => "expected exists, ~ REGEX, == \"v\", != \"v\" or contains \"v\"",
                (true, true) => {
                    "expected exists, ==, !=, <, <=, >, >=, in, ~ REGEX or contains \"v\""
                }
            },
        )),
    }
}

fn first_line(text: &str) -> &str {
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or(text)
        .trim()
}

/// `512`, `10KiB`, `1.5MB`, `64kb`: bytes, decimal (kB, MB) or binary (KiB, MiB) units.
pub fn parse_size(text: &str) -> Option<f64> {
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().ok()?;
    let scale = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    Some(number * scale).filter(|v| v.is_finite())
}
