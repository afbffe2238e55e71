//! Extractors (`--extract NAME=json($.token)`, `extract = { token = "..." }`):
//! a value taken from a response into the virtual user's [`VarStore`].
//!
//! Forms: `json(PATH)` (a string's content, other values as JSON text),
//! `header(NAME)`, `regex(PATTERN)` (the first group, or the whole match
//! when the pattern has no group), `between("LEFT", "RIGHT")` (the text
//! between two boundaries), `css("SELECTOR")` or `css("SELECTOR", "ATTR")`
//! (an HTML element's text or attribute) and `cookie(NAME)` (from Set-Cookie).
//!
//! Clauses after the source, in this order, each optional:
//! `nth N` or `nth random` (regex, between and css: the Nth match, counted
//! from 1, or one at random), `template "$1$-$2$"` (regex: the value built
//! from groups, as JMeter's Regular Expression Extractor fills it) and
//! `default "TEXT"` (stored when nothing is found, instead of failing).

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
    Between(Vec<u8>, Vec<u8>),
    Css(scraper::Selector, Option<String>),
    Cookie(String),
}

/// Which match of a regex or between source is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Nth {
    Index(usize),
    Random,
}

/// A piece of a `template "..."`: text, or a group's number.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(Vec<u8>),
    Group(usize),
}

/// One extractor; `slot` is where its value goes in the [`VarStore`].
#[derive(Debug, Clone)]
pub struct Extractor {
    name: String,
    what: String,
    source: Source,
    nth: Nth,
    template: Option<Vec<Piece>>,
    default: Option<Vec<u8>>,
    slot: usize,
}

/// An extractor found nothing: the virtual user's iteration ends as
/// `check_failed` with this message ("extract token: $.token not found").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("extract {name}: {what} not found")]
pub struct ExtractError {
    /// The extractor's variable name.
    pub name: String,
    /// What it looked for (`$.token`).
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
            "between" => {
                let mut args = Cursor::new("extract", inner);
                let left = args.quoted().map_err(|e| cursor.error(at + e.at, e.reason))?;
                if !args.eat(",") {
                    return Err(cursor.error(at + args.at, "expected , between the two boundaries"));
                }
                let right = args.quoted().map_err(|e| cursor.error(at + e.at, e.reason))?;
                if !args.at_end() {
                    return Err(cursor.error(at + args.at, "expected between(\"LEFT\", \"RIGHT\")"));
                }
                Source::Between(left.into_bytes(), right.into_bytes())
            }
            "css" => {
                let mut args = Cursor::new("extract", inner);
                let selector = args.quoted().map_err(|e| cursor.error(at + e.at, e.reason))?;
                let attribute = if args.eat(",") {
                    Some(args.quoted().map_err(|e| cursor.error(at + e.at, e.reason))?)
                } else {
                    None
                };
                if !args.at_end() {
                    return Err(cursor.error(at + args.at, "expected css(\"SELECTOR\") or css(\"SELECTOR\", \"ATTRIBUTE\")"));
                }
                let selector = scraper::Selector::parse(&selector)
                    .map_err(|e| cursor.error(at, format!("invalid CSS selector: {e}")))?;
                // JSoupExtractor.extractValue: a blank attribute means the text.
                Source::Css(selector, attribute.filter(|a| !a.trim().is_empty()))
            }
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
                    "expected json(PATH), header(NAME), regex(PATTERN), between(\"L\", \"R\"), css(\"SELECTOR\") or cookie(NAME)",
                ))
            }
        };
        let matches = matches!(
            source,
            Source::Regex(_) | Source::Between(..) | Source::Css(..)
        );
        let mut nth = Nth::Index(1);
        if cursor.eat("nth ") {
            if !matches {
                return Err(
                    cursor.error(kind_at, "nth is for regex(...), between(...) and css(...)")
                );
            }
            let (n_at, n) = cursor.token();
            nth = match n.parse::<usize>() {
                _ if n == "random" => Nth::Random,
                Ok(n) if n >= 1 => Nth::Index(n),
                _ => return Err(cursor.error(n_at, "expected nth N (1 or more) or nth random")),
            };
        }
        let mut template = None;
        if cursor.eat("template ") {
            let Source::Regex(regex) = &source else {
                return Err(cursor.error(kind_at, "template is for regex(...)"));
            };
            let t_at = cursor.at;
            let pieces = template_pieces(&cursor.quoted()?);
            let groups = regex.captures_len() - 1;
            if let Some(Piece::Group(g)) = pieces
                .iter()
                .find(|p| matches!(p, Piece::Group(g) if *g > groups))
            {
                return Err(cursor.error(t_at, format!("the regex has no group {g}")));
            }
            template = Some(pieces);
        }
        let mut default = None;
        if cursor.eat("default ") {
            default = Some(cursor.quoted()?.into_bytes());
        }
        if !cursor.at_end() {
            return Err(cursor.error(cursor.at, "unexpected text after the extractor"));
        }
        Ok(Extractor {
            name: name.to_string(),
            what: inner.to_string(),
            source,
            nth,
            template,
            default,
            slot,
        })
    }

    /// The variable name the value is stored under.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The slot of the user's [`VarStore`] the value goes into.
    pub fn slot(&self) -> usize {
        self.slot
    }

    /// True when it reads a header or a cookie: the response's headers must be kept.
    pub fn needs_headers(&self) -> bool {
        matches!(self.source, Source::Header(_) | Source::Cookie(_))
    }

    /// Why it cannot read a WebSocket message (`binary`: a binary one),
    /// if it cannot: a message has no header or cookie, and a binary one
    /// is not JSON or HTML text.
    pub fn cannot_read_message(&self, binary: bool) -> Option<&'static str> {
        match self.source {
            Source::Header(_) | Source::Cookie(_) => {
                Some("a WebSocket message has no header or cookie")
            }
            Source::Json(_) | Source::Css(..) if binary => {
                Some("a binary message is not JSON or HTML text (use regex or between)")
            }
            _ => None,
        }
    }

    /// True when it reads the body: the body must be kept.
    pub fn needs_body(&self) -> bool {
        matches!(
            self.source,
            Source::Json(_) | Source::Regex(_) | Source::Between(..) | Source::Css(..)
        )
    }

    /// Takes the value from `response` into `store`.
    pub fn extract(
        &self,
        response: &ResponseView<'_>,
        store: &mut VarStore,
    ) -> Result<(), ExtractError> {
        match self.find(response, store) {
            Err(_) if self.default.is_some() => {
                store.set(self.slot, self.default.as_deref().unwrap_or_default());
                Ok(())
            }
            found => found,
        }
    }

    fn find(&self, response: &ResponseView<'_>, store: &mut VarStore) -> Result<(), ExtractError> {
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
                // JMeter's RegexExtractor.getCorrectMatchJavaRegex: the Nth
                // of the non-overlapping matches, or one of them at random.
                let captures = match self.nth {
                    Nth::Index(n) => regex.captures_iter(response.body).nth(n - 1),
                    Nth::Random => {
                        let mut all: Vec<_> = regex.captures_iter(response.body).collect();
                        match all.len() {
                            0 => None,
                            n => Some(all.swap_remove(fastrand::usize(..n))),
                        }
                    }
                }
                .ok_or_else(missing)?;
                match &self.template {
                    Some(pieces) => {
                        let mut value = Vec::new();
                        for piece in pieces {
                            match piece {
                                Piece::Text(text) => value.extend_from_slice(text),
                                // JMeter appends a group that did not take part as "null".
                                Piece::Group(g) => value.extend_from_slice(
                                    captures.get(*g).map_or(&b"null"[..], |m| m.as_bytes()),
                                ),
                            }
                        }
                        store.set(self.slot, &value);
                    }
                    None => {
                        let value = captures
                            .get(1)
                            .or_else(|| captures.get(0))
                            .ok_or_else(missing)?;
                        store.set(self.slot, value.as_bytes());
                    }
                }
            }
            Source::Between(left, right) => {
                let all = between(response.body, left, right);
                let value = match self.nth {
                    Nth::Index(n) => all.into_iter().nth(n - 1),
                    Nth::Random if all.is_empty() => None,
                    Nth::Random => all.get(fastrand::usize(..all.len())).copied(),
                }
                .ok_or_else(missing)?;
                store.set(self.slot, value);
            }
            Source::Css(selector, attribute) => {
                let all = css(response.body, selector, attribute.as_deref());
                let value = match self.nth {
                    Nth::Index(n) => all.into_iter().nth(n - 1),
                    Nth::Random if all.is_empty() => None,
                    Nth::Random => {
                        let n = all.len();
                        all.into_iter().nth(fastrand::usize(..n))
                    }
                }
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

/// A `template "..."`'s pieces: `$N$` is group N, the rest is text (JMeter's
/// RegexExtractor.initTemplate splits on `\$(\d+)\$` the same way).
fn template_pieces(template: &str) -> Vec<Piece> {
    let marker = regex::Regex::new(r"\$(\d+)\$").expect("a fixed pattern");
    let mut pieces = Vec::new();
    let mut from = 0;
    for m in marker.captures_iter(template) {
        let whole = m.get(0).expect("group 0 is the match");
        if whole.start() > from {
            pieces.push(Piece::Text(
                template.as_bytes()[from..whole.start()].to_vec(),
            ));
        }
        pieces.push(Piece::Group(m[1].parse().unwrap_or(usize::MAX)));
        from = whole.end();
    }
    if from < template.len() {
        pieces.push(Piece::Text(template.as_bytes()[from..].to_vec()));
    }
    pieces
}

/// Every text between `left` and `right`, as JMeter's BoundaryExtractor.extract
/// finds them: each occurrence of `left` (the next one searched from just
/// after it, so matches may overlap) up to the first `right` after it; the
/// search stops at the first `left` with no `right`. An empty boundary
/// means the start or the end of the body (one match); both empty, the body.
fn between<'b>(body: &'b [u8], left: &[u8], right: &[u8]) -> Vec<&'b [u8]> {
    use memchr::memmem::find;
    // JMeter's StringUtilities.isBlank: a blank body has no match.
    if body.iter().all(u8::is_ascii_whitespace) {
        return Vec::new();
    }
    match (left.is_empty(), right.is_empty()) {
        (true, true) => return vec![body],
        (true, false) => {
            return find(body, right)
                .map(|i| vec![&body[..i]])
                .unwrap_or_default()
        }
        (false, true) => {
            return find(body, left)
                .map(|i| vec![&body[i + left.len()..]])
                .unwrap_or_default()
        }
        (false, false) => {}
    }
    let mut found = Vec::new();
    let mut start = 0;
    while let Some(i) = find(&body[start..], left).map(|i| i + start) {
        let after = i + left.len();
        let Some(end) = find(&body[after..], right).map(|e| e + after) else {
            break;
        };
        found.push(&body[after..end]);
        start = after;
    }
    found
}

/// The values of the elements `selector` picks in an HTML body, as JMeter's
/// JSoupExtractor.extractValue takes them: the attribute's value (empty when
/// the element lacks it), else the element's text with its whitespace
/// collapsed and trimmed (Jsoup's Element.text()).
fn css(body: &[u8], selector: &scraper::Selector, attribute: Option<&str>) -> Vec<String> {
    let html = scraper::Html::parse_document(&String::from_utf8_lossy(body));
    html.select(selector)
        .map(|element| match attribute {
            Some(name) => element.value().attr(name).unwrap_or("").to_string(),
            None => element
                .text()
                .collect::<String>()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
        })
        .collect()
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

    /// JMeter's RegexExtractor.java (getCorrectMatchJavaRegex, generateResult,
    /// initTemplate): match N counts non-overlapping matches from 1; `$n$`
    /// in the template is group n; process() stores the default first, so it
    /// stays when nothing matches.
    #[test]
    fn regex_takes_the_nth_match_through_a_template() {
        let body = b"id=a1:x id=b2:y id=c3:z";
        let re = r"id=(\w)(\d):(\w)";
        assert_eq!(
            run(&format!("v=regex({re}) nth 2"), &[], body).unwrap(),
            b"b"
        );
        assert_eq!(
            run(
                &format!("v=regex({re}) nth 3 template \"$3$-$1$$2$!\""),
                &[],
                body
            )
            .unwrap(),
            b"z-c3!"
        );
        assert_eq!(
            run(&format!("v=regex({re}) template \"<$0$>\""), &[], body).unwrap(),
            b"<id=a1:x>"
        );
        assert!(run(&format!("v=regex({re}) nth 4"), &[], body).is_err());
        assert_eq!(
            run(&format!("v=regex({re}) nth 4 default \"NONE\""), &[], body).unwrap(),
            b"NONE"
        );
        // A group that took no part is appended as "null", as Java's
        // StringBuilder.append(null) does.
        assert_eq!(
            run(r#"v=regex(a(x)?(b)) template "$1$$2$""#, &[], b"ab").unwrap(),
            b"nullb"
        );
        for _ in 0..20 {
            let v = run(&format!("v=regex({re}) nth random"), &[], body).unwrap();
            assert!([&b"a"[..], b"b", b"c"].contains(&v.as_slice()), "{v:?}");
        }
    }

    /// JMeter's BoundaryExtractor.extract: each left boundary (the next
    /// searched from just after it, so matches overlap) to the first right
    /// boundary after it; an empty boundary is the body's start or end.
    #[test]
    fn between_follows_the_boundary_extractor() {
        let body = b"[a[b]c]";
        assert_eq!(run(r#"v=between("[", "]")"#, &[], body).unwrap(), b"a[b");
        assert_eq!(
            run(r#"v=between("[", "]") nth 2"#, &[], body).unwrap(),
            b"b"
        );
        assert!(run(r#"v=between("[", "]") nth 3"#, &[], body).is_err());
        assert_eq!(run(r#"v=between("", "c")"#, &[], body).unwrap(), b"[a[b]");
        assert_eq!(run(r#"v=between("c", "")"#, &[], body).unwrap(), b"]");
        assert_eq!(run(r#"v=between("", "")"#, &[], body).unwrap(), body);
        assert!(run(r#"v=between("<", ">")"#, &[], body).is_err());
        assert!(
            run(r#"v=between("", "")"#, &[], b"  ").is_err(),
            "a blank body has no match"
        );
        assert_eq!(
            run(r#"v=between("<", ">") default """#, &[], body).unwrap(),
            b""
        );
    }

    /// JMeter's JSoupExtractor.extract and extractValue: the elements the
    /// selector picks, in document order; an attribute's value (empty when
    /// missing) or the text, whitespace collapsed.
    #[test]
    fn css_takes_an_elements_text_or_attribute() {
        let body = br#"<html><body><ul>
            <li><a href="/a" class="item">First
               one</a></li>
            <li><a class="item">Second</a></li>
            <li><a href="/c" class="item">Third</a></li>
        </ul></body></html>"#;
        assert_eq!(run(r#"v=css("a.item")"#, &[], body).unwrap(), b"First one");
        assert_eq!(
            run(r#"v=css("a.item", "href") nth 3"#, &[], body).unwrap(),
            b"/c"
        );
        assert_eq!(
            run(r#"v=css("a.item", "href") nth 2"#, &[], body).unwrap(),
            b""
        );
        assert_eq!(
            run(r#"v=css("li:nth-child(2) a", " ")"#, &[], body).unwrap(),
            b"Second"
        );
        assert!(run(r#"v=css("a.item") nth 4"#, &[], body).is_err());
        assert_eq!(
            run(r#"v=css("form input") default "x""#, &[], body).unwrap(),
            b"x"
        );
        assert!(Extractor::parse("v", r#"css("a[")"#, 0).is_err());
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
            ("t=regex(a) nth 0", 15),
            ("t=json($.a) nth 2", 2),
            (r#"t=regex((a)) template "$2$""#, 22),
            (r#"t=header(a) template "$1$""#, 2),
            (r#"t=between("a" "b")"#, 14),
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
