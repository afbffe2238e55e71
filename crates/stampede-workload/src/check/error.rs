//! A check or extractor that does not parse: the expression with a caret.

/// Shown as two lines, the expression and a caret under the problem:
/// ```text
/// invalid check: status = 200
///                       ^ expected ==, !=, <, <=, >, >= or in
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// "check" or "extract".
    pub what: &'static str,
    /// The whole expression as written.
    pub expr: String,
    /// Byte offset of the problem in `expr`.
    pub at: usize,
    /// What is wrong there.
    pub reason: String,
}

impl ParseError {
    /// The message after `lead` (text printed before it on the same line,
    /// such as `shop.toml:14:10: `), with the caret still under the problem.
    pub fn after(&self, lead: &str) -> String {
        let prefix = format!("invalid {}: ", self.what);
        let column = self.expr.get(..self.at).map_or(0, |s| s.chars().count());
        let pad = lead.chars().count() + prefix.chars().count() + column;
        format!(
            "{prefix}{}\n{}^ {}",
            self.expr,
            " ".repeat(pad),
            self.reason
        )
    }
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.after(""))
    }
}

impl std::error::Error for ParseError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caret_sits_under_the_offending_byte() {
        let err = ParseError {
            what: "check",
            expr: "status = 200".into(),
            at: 7,
            reason: "expected ==".into(),
        };
        let text = err.to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].find('='), lines[1].find('^'));
        let led = format!("f:1:2: {}", err.after("f:1:2: "));
        let lines: Vec<&str> = led.lines().collect();
        assert_eq!(lines[0].find('='), lines[1].find('^'));
    }
}
