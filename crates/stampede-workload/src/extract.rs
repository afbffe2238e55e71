//! Extractors (`--extract NAME=json($.token)`, `extract = { token = "..." }`):
//! a value taken from a response into the virtual user's [`VarStore`].
//!
//! Forms: `json(PATH)` (a string's content, other values as JSON text),
//! `header(NAME)`, `regex(PATTERN)` (the first group, or the whole match
//! when the pattern has no group) and `cookie(NAME)` (from Set-Cookie).

use crate::check::lexer::Cursor;
use crate::check::ParseError;
use crate::json_path::JsonPath;
use crate::response::ResponseView;
use crate::scope::Scope;
use crate::store::VarStore;

#[derive(Debug, Clone)]
enum Source {
    Json(JsonPath),
    Header(String),
    Regex(regex::bytes::Regex),
    Cookie(String),
}

/// One extractor; `slot` is where its value goes in the [`VarStore`].
#[derive(Debug, Clone)]
pub struct Extractor {
    name: String,
    what: String,
    source: Source,
    slot: usize,
}

/// An extractor found nothing: the virtual user's iteration ends as
/// `check_failed` with this message ("extract token: $.token not found").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("extract {name}: {what} not found")]
pub struct ExtractError {
    pub name: String,
    pub what: String,
}

impl Extractor {
    /// Parses `NAME=SOURCE` (the `--extract` form) and gives NAME a slot in `scope`.
    pub fn parse_assignment(text: &str, scope: &mut Scope) -> Result<Extractor, ParseError> {
        let Some((name, source)) = text.split_once('=') else {
            return Err(Cursor::new("extract", text)
                .error(0, "expected NAME=SOURCE, e.g. token=json($.token)"));
        };
        let offset = name.len() + 1;
        let mut extractor = Extractor::parse(name.trim(), source, 0).map_err(|mut e| {
            e.expr = text.to_string();
            e.at += offset;
            e
        })?;
        // The slot is taken only once the extractor parsed.
        extractor.slot = scope
            .add_extract(name.trim())
            .map_err(|e| Cursor::new("extract", text).error(0, e.to_string()))?;
        Ok(extractor)
    }

    /// Parses SOURCE for the variable `name` (the scenario file form).
    pub fn parse(name: &str, source: &str, slot: usize) -> Result<Extractor, ParseError> {
        let mut cursor = Cursor::new("extract", source);
        if !crate::scope::is_name(name) {
            return Err(cursor.error(0, format!("invalid variable name '{name}'")));
        }
        cursor.skip_space();
        let kind_at = cursor.at;
        let kind = cursor.word();
        let (at, inner) = cursor.parenthesized()?;
        if inner.is_empty() {
            return Err(cursor.error(at, "expected something inside ()"));
        }
        let source = match kind {
            "json" => {
                Source::Json(JsonPath::parse(inner).map_err(|e| cursor.error(at + e.at, e.reason))?)
            }
            "header" => Source::Header(inner.to_string()),
            "cookie" => Source::Cookie(inner.to_string()),
            "regex" => Source::Regex(regex::bytes::Regex::new(inner).map_err(|e| {
                cursor.error(
                    at,
                    format!(
                        "invalid regex: {}",
                        e.to_string().lines().last().unwrap_or("").trim()
                    ),
                )
            })?),
            _ => {
                return Err(cursor.error(
                    kind_at,
                    "expected json(PATH), header(NAME), regex(PATTERN) or cookie(NAME)",
                ))
            }
        };
        if !cursor.at_end() {
            return Err(cursor.error(cursor.at, "unexpected text after the extractor"));
        }
        Ok(Extractor {
            name: name.to_string(),
            what: inner.to_string(),
            source,
            slot,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn slot(&self) -> usize {
        self.slot
    }

    pub fn needs_headers(&self) -> bool {
        matches!(self.source, Source::Header(_) | Source::Cookie(_))
    }

    pub fn needs_body(&self) -> bool {
        matches!(self.source, Source::Json(_) | Source::Regex(_))
    }

    /// Takes the value from `response` into `store`.
    pub fn extract(
        &self,
        response: &ResponseView<'_>,
        store: &mut VarStore,
    ) -> Result<(), ExtractError> {
        let missing = || ExtractError {
            name: self.name.clone(),
            what: self.what.clone(),
        };
        match &self.source {
            Source::Json(path) => {
                let value = response
                    .json()
                    .and_then(|root| path.find(root))
                    .ok_or_else(missing)?;
                match value {
                    serde_json::Value::String(text) => store.set(self.slot, text.as_bytes()),
                    serde_json::Value::Null => return Err(missing()),
                    other => store.set(self.slot, other.to_string().as_bytes()),
                }
            }
            Source::Header(name) => {
                store.set(self.slot, response.header(name).ok_or_else(missing)?)
            }
            Source::Regex(regex) => {
                let captures = regex.captures(response.body).ok_or_else(missing)?;
                let value = captures
                    .get(1)
                    .or_else(|| captures.get(0))
                    .ok_or_else(missing)?;
                store.set(self.slot, value.as_bytes());
            }
            Source::Cookie(name) => {
                let value = response
                    .headers_named("set-cookie")
                    .find_map(|header| cookie_value(header, name.as_bytes()))
                    .ok_or_else(missing)?;
                store.set(self.slot, value);
            }
        }
        Ok(())
    }
}

/// The value of `name` in one Set-Cookie header (`sid=abc; Path=/`).
fn cookie_value<'h>(header: &'h [u8], name: &[u8]) -> Option<&'h [u8]> {
    let pair = header.split(|&b| b == b';').next()?;
    let eq = pair.iter().position(|&b| b == b'=')?;
    (pair[..eq].trim_ascii() == name).then(|| pair[eq + 1..].trim_ascii())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn run(
        extractor: &str,
        headers: &[(&[u8], &[u8])],
        body: &[u8],
    ) -> Result<Vec<u8>, ExtractError> {
        let e = Extractor::parse_assignment(extractor, &mut Scope::new()).unwrap();
        let mut store = VarStore::new(1);
        e.extract(
            &ResponseView::new(200, headers, body, Duration::ZERO),
            &mut store,
        )?;
        Ok(store.get(0).unwrap().to_vec())
    }

    #[test]
    fn each_source_extracts() {
        assert_eq!(
            run("t=json($.token)", &[], br#"{"token":"abc"}"#).unwrap(),
            b"abc"
        );
        assert_eq!(run("n=json($.n)", &[], br#"{"n":12}"#).unwrap(), b"12");
        assert_eq!(
            run("t=header(X-Token)", &[(b"x-token", b"h1")], b"").unwrap(),
            b"h1"
        );
        assert_eq!(
            run(r"id=regex(<id>(\d+)</id>)", &[], b"<r><id>42</id></r>").unwrap(),
            b"42"
        );
        assert_eq!(run(r"w=regex(\d+)", &[], b"ab 77").unwrap(), b"77");
        let cookies: [(&[u8], &[u8]); 2] = [
            (b"Set-Cookie", b"a=1; Path=/"),
            (b"set-cookie", b"sid=xyz; HttpOnly"),
        ];
        assert_eq!(run("s=cookie(sid)", &cookies, b"").unwrap(), b"xyz");
    }

    #[test]
    fn nothing_found_names_the_extractor() {
        let err = run("token=json($.token)", &[], b"{}").unwrap_err();
        assert_eq!(err.to_string(), "extract token: $.token not found");
        assert!(run("token=json($.token)", &[], b"").is_err());
        assert!(run("t=header(X)", &[], b"").is_err());
        assert!(run("t=regex(x(\\d))", &[], b"").is_err());
        assert!(run("s=cookie(sid)", &[(b"Set-Cookie", b"sidx=1")], b"").is_err());
    }

    #[test]
    fn malformed_extractors_point_at_the_problem() {
        for (bad, at) in [
            ("token", 0),
            ("t=jsn($.a)", 2),
            ("t=json(a)", 7),
            ("t=json($.a", 6),
            ("t=regex(()", 7),
            ("t=header()", 9),
            ("t=header(a) x", 12),
            // A JSON path's own error, placed inside the parentheses.
            ("t=json($.a[x])", 11),
        ] {
            let err = Extractor::parse_assignment(bad, &mut Scope::new()).unwrap_err();
            assert_eq!(err.at, at, "{bad}: {err}");
            assert_eq!(err.expr, bad);
        }
        assert!(Extractor::parse("bad name", "json($.a)", 0).is_err());
        let mut scope = Scope::new();
        assert!(Extractor::parse_assignment("seq=json($.a)", &mut scope).is_err());
        assert!(Extractor::parse_assignment("t=json(x)", &mut scope).is_err());
        assert_eq!(scope.extract_slots(), 0, "a bad extractor takes no slot");
        let b = Extractor::parse_assignment("b=header(X)", &mut scope).unwrap();
        assert_eq!((b.slot(), scope.extract_slots()), (0, 1));
        let c = Extractor::parse_assignment("c=cookie(sid)", &mut scope).unwrap();
        assert_eq!((c.name(), c.slot(), scope.extract_slots()), ("c", 1, 2));
    }

    #[test]
    fn each_source_says_which_part_of_the_response_it_reads() {
        for (text, headers, body) in [
            ("v=json($.a)", false, true),
            ("v=regex(a)", false, true),
            ("v=header(X)", true, false),
            ("v=cookie(sid)", true, false),
        ] {
            let e = Extractor::parse_assignment(text, &mut Scope::new()).unwrap();
            assert_eq!(
                (e.needs_headers(), e.needs_body()),
                (headers, body),
                "{text}"
            );
        }
    }
}
