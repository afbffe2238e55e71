//! A cursor over a check or extractor expression that remembers where it
//! is, so every parse error can point at a byte.

use super::ParseError;

pub(crate) struct Cursor<'a> {
    pub text: &'a str,
    pub at: usize,
    pub what: &'static str,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(what: &'static str, text: &'a str) -> Cursor<'a> {
        Cursor { text, at: 0, what }
    }

    pub(crate) fn error(&self, at: usize, reason: impl Into<String>) -> ParseError {
        ParseError {
            what: self.what,
            expr: self.text.to_string(),
            at,
            reason: reason.into(),
        }
    }

    pub(crate) fn rest(&self) -> &'a str {
        &self.text[self.at..]
    }

    pub(crate) fn skip_space(&mut self) {
        let rest = self.rest();
        self.at += rest.len() - rest.trim_start().len();
    }

    pub(crate) fn at_end(&mut self) -> bool {
        self.skip_space();
        self.rest().is_empty()
    }

    /// Consumes `token` if the rest starts with it.
    pub(crate) fn eat(&mut self, token: &str) -> bool {
        self.skip_space();
        if self.rest().starts_with(token) {
            self.at += token.len();
            true
        } else {
            false
        }
    }

    /// A run of letters, digits and `_` (possibly empty).
    pub(crate) fn word(&mut self) -> &'a str {
        self.skip_space();
        let rest = self.rest();
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        self.at += len;
        &rest[..len]
    }

    /// `( ... )`: the text up to the `)` that closes it, outside `[...]` and quotes.
    pub(crate) fn parenthesized(&mut self) -> Result<(usize, &'a str), ParseError> {
        self.skip_space();
        if !self.eat("(") {
            return Err(self.error(self.at, "expected ("));
        }
        let start = self.at;
        let (mut depth, mut quote) = (0i32, None);
        for (i, c) in self.rest().char_indices() {
            match (quote, c) {
                // Inside quotes only the closing quote counts.
                (Some(q), c) => quote = (c != q).then_some(q),
                (None, '\'' | '"') => quote = Some(c),
                (None, '[' | '(') => depth += 1,
                (None, ']') => depth -= 1,
                (None, ')') if depth > 0 => depth -= 1,
                (None, ')') => {
                    let inner = &self.text[start..start + i];
                    self.at = start + i + 1;
                    return Ok((start, inner.trim()));
                }
                _ => {}
            }
        }
        Err(self.error(start - 1, "unclosed ("))
    }

    /// A `"quoted"` string with `\"` and `\\` escapes.
    pub(crate) fn quoted(&mut self) -> Result<String, ParseError> {
        self.skip_space();
        let start = self.at;
        if !self.eat("\"") {
            return Err(self.error(start, "expected a \"quoted\" string"));
        }
        let mut value = String::new();
        let mut chars = self.rest().char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.at += i + 1;
                    return Ok(value);
                }
                '\\' => match chars.next() {
                    Some((_, e)) => value.push(e),
                    None => break,
                },
                c => value.push(c),
            }
        }
        Err(self.error(start, "unclosed \""))
    }

    /// The rest of the expression, trimmed, as a pattern: quoted or bare.
    pub(crate) fn pattern(&mut self) -> Result<(usize, String), ParseError> {
        self.skip_space();
        let start = self.at;
        // Quoted only when one quoted string is the whole rest
        // (`"id":\d` is a bare pattern that happens to start with a quote).
        if self.rest().starts_with('"') {
            if let Ok(value) = self.quoted() {
                if self.at_end() {
                    return Ok((start, value));
                }
            }
            self.at = start;
        }
        let value = self.rest().trim_end().to_string();
        self.at = self.text.len();
        if value.is_empty() {
            return Err(self.error(start, "expected a pattern"));
        }
        Ok((start, value))
    }

    /// The next whitespace-free token.
    pub(crate) fn token(&mut self) -> (usize, &'a str) {
        self.skip_space();
        let start = self.at;
        let rest = self.rest();
        let len = rest.find(char::is_whitespace).unwrap_or(rest.len());
        self.at += len;
        (start, &rest[..len])
    }
}
