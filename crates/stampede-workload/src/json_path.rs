//! The JSON path subset checks and extractors use: `$`, `.name`,
//! `['name']`, `[N]` and `..name` (the first `name` at any depth),
//! compiled into steps and walked over a parsed [`serde_json::Value`]
//! (serde_json does the parsing).

use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(usize),
    /// `..name`: the first member `name` found walking down from here,
    /// each object's own member before its children's, as Jayway
    /// JsonPath's deep scan (ScanPathToken) lists its matches.
    Descend(String),
}

/// A compiled path such as `$.items[0].price`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonPath {
    text: String,
    steps: Vec<Step>,
}

/// Why a path did not parse: the reason and the byte where it went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathError {
    /// Byte offset of the problem in the path.
    pub at: usize,
    /// What is wrong there.
    pub reason: &'static str,
}

impl JsonPath {
    /// Parses a path such as `$.data[0].id`.
    pub fn parse(text: &str) -> Result<JsonPath, PathError> {
        let bytes = text.as_bytes();
        if bytes.first() != Some(&b'$') {
            return Err(PathError {
                at: 0,
                reason: "a JSON path starts with $",
            });
        }
        let mut steps = Vec::new();
        let mut i = 1;
        while i < bytes.len() {
            match bytes[i] {
                b'.' => {
                    let descend = bytes.get(i + 1) == Some(&b'.');
                    let start = i + 1 + usize::from(descend);
                    let end = text[start..]
                        .find(['.', '['])
                        .map_or(text.len(), |n| start + n);
                    if end == start {
                        return Err(PathError {
                            at: start,
                            reason: match descend {
                                true => "expected a key name after ..",
                                false => "expected a key name after .",
                            },
                        });
                    }
                    let name = text[start..end].to_string();
                    steps.push(match descend {
                        true => Step::Descend(name),
                        false => Step::Key(name),
                    });
                    i = end;
                }
                b'[' => {
                    let start = i + 1;
                    let close = text[start..]
                        .find(']')
                        .map(|n| start + n)
                        .ok_or(PathError {
                            at: i,
                            reason: "unclosed [",
                        })?;
                    let inner = &text[start..close];
                    let quoted = inner.len() >= 2
                        && ((inner.starts_with('\'') && inner.ends_with('\''))
                            || (inner.starts_with('"') && inner.ends_with('"')));
                    if quoted {
                        steps.push(Step::Key(inner[1..inner.len() - 1].to_string()));
                    } else {
                        let index = inner.parse().map_err(|_| PathError {
                            at: start,
                            reason: "expected an index [N] or a quoted key ['name']",
                        })?;
                        steps.push(Step::Index(index));
                    }
                    i = close + 1;
                }
                _ => {
                    return Err(PathError {
                        at: i,
                        reason: "expected . or [ in the path",
                    })
                }
            }
        }
        Ok(JsonPath {
            text: text.to_string(),
            steps,
        })
    }

    /// The path as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The value at the path, if there is one (with `..name`, the first).
    pub fn find<'v>(&self, root: &'v Value) -> Option<&'v Value> {
        walk(root, &self.steps)
    }
}

/// The value `steps` lead to from `value`.
fn walk<'v>(value: &'v Value, steps: &[Step]) -> Option<&'v Value> {
    let Some((step, rest)) = steps.split_first() else {
        return Some(value);
    };
    match step {
        Step::Key(key) => walk(value.as_object()?.get(key)?, rest),
        Step::Index(index) => walk(value.as_array()?.get(*index)?, rest),
        Step::Descend(key) => descend(value, key, rest),
    }
}

/// The first `key` member at or below `value` from which `rest` leads
/// somewhere: the node's own member first, then its children in order.
fn descend<'v>(value: &'v Value, key: &str, rest: &[Step]) -> Option<&'v Value> {
    if let Some(found) = value.as_object().and_then(|o| o.get(key)) {
        if let Some(end) = walk(found, rest) {
            return Some(end);
        }
    }
    match value {
        Value::Object(members) => members.values().find_map(|v| descend(v, key, rest)),
        Value::Array(items) => items.iter().find_map(|v| descend(v, key, rest)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_keys_and_indexes() {
        let root: Value =
            serde_json::from_str(r#"{"data":{"id":7},"items":[{"price":2.5}],"a b":true}"#)
                .unwrap();
        let find = |p: &str| JsonPath::parse(p).unwrap().find(&root).cloned();
        assert_eq!(find("$"), Some(root.clone()));
        assert_eq!(find("$.data.id"), Some(Value::from(7)));
        assert_eq!(find("$.items[0].price"), Some(Value::from(2.5)));
        assert_eq!(find("$['a b']"), Some(Value::Bool(true)));
        assert_eq!(find("$.items[1]"), None);
        assert_eq!(find("$.data.id.x"), None);
    }

    /// `$..url` as JMeter's JSON Extractor (Jayway JsonPath) reads it in
    /// TestRedirectionPolicies.jmx: the member at any depth, the outer one
    /// first, then the children's in order.
    #[test]
    fn descends_to_the_first_member_of_that_name() {
        let root: Value = serde_json::from_str(
            r#"{"args":{},"url":"https://h/get","items":[{"id":1},{"id":2,"x":{"id":3}}]}"#,
        )
        .unwrap();
        let find = |p: &str| JsonPath::parse(p).unwrap().find(&root).cloned();
        assert_eq!(find("$..url"), Some(Value::from("https://h/get")));
        assert_eq!(find("$..id"), Some(Value::from(1)));
        assert_eq!(find("$.items[1]..id"), Some(Value::from(2)));
        assert_eq!(find("$..x.id"), Some(Value::from(3)));
        assert_eq!(find("$..nope"), None);
        assert_eq!(JsonPath::parse("$..").unwrap_err().at, 3);
    }

    #[test]
    fn malformed_paths_point_at_the_problem() {
        assert_eq!(JsonPath::parse("data").unwrap_err().at, 0);
        assert_eq!(JsonPath::parse("$.").unwrap_err().at, 2);
        assert_eq!(JsonPath::parse("$.a[x]").unwrap_err().at, 4);
        assert_eq!(JsonPath::parse("$.a[0").unwrap_err().at, 3);
        assert_eq!(JsonPath::parse("$x").unwrap_err().at, 1);
    }
}
