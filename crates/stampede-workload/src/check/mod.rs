//! Response checks (`--check EXPR`, `check = [...]`): parsed once, evaluated
//! per response over a [`ResponseView`].
//!
//! Grammar: `status (==|!=|<|<=|>|>=) N`, `status in A..B` (inclusive),
//! `header(NAME) exists | ~ REGEX | == "v" | != "v" | contains "v"`,
//! `body contains "text" | ~ REGEX`, `body size (<|<=|>|>=|==|!=) SIZE`,
//! `json(PATH) exists | == VALUE | != VALUE | (<|<=|>|>=) N | ~ REGEX | contains "v"`,
//! `time (<|<=|>|>=) DURATION`.

mod error;
pub(crate) mod lexer;
mod parse;

pub use error::ParseError;
pub use parse::parse_size;

use crate::json_path::JsonPath;
use crate::response::ResponseView;
use regex::bytes::Regex;

/// What a check looks at.
#[derive(Debug, Clone)]
pub(crate) enum Subject {
    Status,
    Header(String),
    Body,
    BodySize,
    Json(JsonPath),
    Time,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compare {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Compare {
    fn holds(self, left: f64, right: f64) -> bool {
        match self {
            Compare::Eq => left == right,
            Compare::Ne => left != right,
            Compare::Lt => left < right,
            Compare::Le => left <= right,
            Compare::Gt => left > right,
            Compare::Ge => left >= right,
        }
    }
}

/// What must hold of the subject.
#[derive(Debug, Clone)]
pub(crate) enum Test {
    Exists,
    Number(Compare, f64),
    Within(f64, f64),
    Matches(Box<Regex>),
    Contains(Box<memchr::memmem::Finder<'static>>),
    Equals(serde_json::Value, bool),
}

/// One parsed check.
#[derive(Debug, Clone)]
pub struct Check {
    text: String,
    subject: Subject,
    test: Test,
}

/// The outcome of one check on one response; a failure carries the value
/// seen (truncated), for the result file's sampled failures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The check held.
    Pass,
    /// The check failed: the value seen (truncated).
    Fail(String),
}

const SHOWN_VALUE: usize = 120;

fn shown(bytes: &[u8]) -> String {
    let cut = bytes.len().min(SHOWN_VALUE);
    let mut text = String::from_utf8_lossy(&bytes[..cut]).into_owned();
    if bytes.len() > cut {
        text.push('…');
    }
    text
}

impl Check {
    /// Parses one expression; errors point at the problem with a caret.
    pub fn parse(text: &str) -> Result<Check, ParseError> {
        parse::parse_check(text)
    }

    /// The expression as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// True when the check reads a header: the response's headers must be kept.
    pub fn needs_headers(&self) -> bool {
        matches!(self.subject, Subject::Header(_))
    }

    /// Why the check cannot judge a WebSocket message (`binary`: a binary
    /// one), if it cannot: a message has no status or header (its
    /// payload is the body), and a binary one is not JSON text.
    pub fn cannot_judge_message(&self, binary: bool) -> Option<&'static str> {
        match self.subject {
            Subject::Status => Some("a WebSocket message has no status"),
            Subject::Header(_) => Some("a WebSocket message has no header"),
            Subject::Json(_) if binary => {
                Some("a binary message is not JSON text (use body contains or body ~)")
            }
            _ => None,
        }
    }

    /// True when the check reads the body (`body`, `json(...)`): the body must be kept.
    pub fn needs_body(&self) -> bool {
        matches!(self.subject, Subject::Body | Subject::Json(_))
    }

    /// Judges one response.
    pub fn evaluate(&self, response: &ResponseView<'_>) -> Verdict {
        let verdict = |pass: bool, seen: &dyn Fn() -> String| {
            if pass {
                Verdict::Pass
            } else {
                Verdict::Fail(seen())
            }
        };
        match &self.subject {
            Subject::Status => {
                let status = f64::from(response.status);
                verdict(self.test_number(status), &|| response.status.to_string())
            }
            Subject::Time => {
                let seconds = response.elapsed.as_secs_f64();
                verdict(self.test_number(seconds), &|| {
                    format!("{:.3}ms", seconds * 1000.0)
                })
            }
            Subject::BodySize => {
                let size = response.body_size as f64;
                verdict(self.test_number(size), &|| {
                    format!("{} bytes", response.body_size)
                })
            }
            Subject::Body => verdict(self.test_bytes(Some(response.body)), &|| {
                shown(response.body)
            }),
            Subject::Header(name) => {
                let value = response.header(name);
                verdict(self.test_bytes(value), &|| match value {
                    Some(v) => shown(v),
                    None => "absent".to_string(),
                })
            }
            Subject::Json(path) => {
                let Some(root) = response.json() else {
                    return Verdict::Fail(format!("body is not JSON: {}", shown(response.body)));
                };
                let value = path.find(root);
                verdict(self.test_json(value), &|| match value {
                    Some(v) => shown(v.to_string().as_bytes()),
                    None => format!("{} not found", path.as_str()),
                })
            }
        }
    }

    fn test_number(&self, value: f64) -> bool {
        match &self.test {
            Test::Number(compare, right) => compare.holds(value, *right),
            Test::Within(low, high) => *low <= value && value <= *high,
            _ => false,
        }
    }

    fn test_bytes(&self, value: Option<&[u8]>) -> bool {
        let Some(value) = value else {
            return false;
        };
        match &self.test {
            Test::Exists => true,
            Test::Matches(regex) => regex.is_match(value),
            Test::Contains(finder) => finder.find(value).is_some(),
            Test::Equals(serde_json::Value::String(text), negate) => {
                (value == text.as_bytes()) != *negate
            }
            _ => false,
        }
    }

    fn test_json(&self, value: Option<&serde_json::Value>) -> bool {
        let Some(value) = value else {
            return false;
        };
        match &self.test {
            Test::Exists => true,
            Test::Number(compare, right) => {
                value.as_f64().is_some_and(|v| compare.holds(v, *right))
            }
            Test::Within(low, high) => value.as_f64().is_some_and(|v| *low <= v && v <= *high),
            Test::Equals(expected, negate) => {
                let equal = match (value.as_f64(), expected.as_f64()) {
                    (Some(a), Some(b)) => a == b,
                    _ => value == expected,
                };
                equal != *negate
            }
            Test::Matches(_) | Test::Contains(_) => match value {
                serde_json::Value::String(text) => self.test_bytes(Some(text.as_bytes())),
                other => self.test_bytes(Some(other.to_string().as_bytes())),
            },
        }
    }
}

/// All checks of a run or a step, with what they need kept of a response.
#[derive(Debug, Clone, Default)]
pub struct CheckSet {
    checks: Vec<Check>,
}

impl CheckSet {
    /// Parses every expression; the first that does not parse is the error.
    pub fn parse<S: AsRef<str>>(texts: &[S]) -> Result<CheckSet, ParseError> {
        let checks = texts
            .iter()
            .map(|t| Check::parse(t.as_ref()))
            .collect::<Result<_, _>>()?;
        Ok(CheckSet { checks })
    }

    /// The checks, in the order given.
    pub fn checks(&self) -> &[Check] {
        &self.checks
    }

    /// True when there is no check.
    pub fn is_empty(&self) -> bool {
        self.checks.is_empty()
    }

    /// The engine keeps response headers only when this is true.
    pub fn needs_headers(&self) -> bool {
        self.checks.iter().any(Check::needs_headers)
    }

    /// The engine keeps the response body only when this is true.
    pub fn needs_body(&self) -> bool {
        self.checks.iter().any(Check::needs_body)
    }

    /// Evaluates every check in order, calling `report(index, verdict)` for
    /// each; returns true when all passed.
    pub fn evaluate(
        &self,
        response: &ResponseView<'_>,
        mut report: impl FnMut(usize, &Verdict),
    ) -> bool {
        let mut all = true;
        for (index, check) in self.checks.iter().enumerate() {
            let verdict = check.evaluate(response);
            all &= verdict == Verdict::Pass;
            report(index, &verdict);
        }
        all
    }
}

#[cfg(test)]
mod tests;
