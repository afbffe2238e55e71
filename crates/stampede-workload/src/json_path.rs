//! The JSON path subset checks and extractors use: `$`, `.name`,
//! `['name']` and `[N]`, compiled into steps and walked over a parsed
//! [`serde_json::Value`] (serde_json does the parsing; the walk is a loop).

use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(usize),
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
    pub at: usize,
    pub reason: &'static str,
}

impl JsonPath {
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
                    let start = i + 1;
                    let end = text[start..]
                        .find(['.', '['])
                        .map_or(text.len(), |n| start + n);
                    if end == start {
                        return Err(PathError {
                            at: start,
                            reason: "expected a key name after .",
                        });
                    }
                    steps.push(Step::Key(text[start..end].to_string()));
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

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The value at the path, if there is one.
    pub fn find<'v>(&self, root: &'v Value) -> Option<&'v Value> {
        let mut value = root;
        for step in &self.steps {
            value = match step {
                Step::Key(key) => value.as_object()?.get(key)?,
                Step::Index(index) => value.as_array()?.get(*index)?,
            };
        }
        Some(value)
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

    #[test]
    fn malformed_paths_point_at_the_problem() {
        assert_eq!(JsonPath::parse("data").unwrap_err().at, 0);
        assert_eq!(JsonPath::parse("$.").unwrap_err().at, 2);
        assert_eq!(JsonPath::parse("$.a[x]").unwrap_err().at, 4);
        assert_eq!(JsonPath::parse("$.a[0").unwrap_err().at, 3);
        assert_eq!(JsonPath::parse("$x").unwrap_err().at, 1);
    }
}
