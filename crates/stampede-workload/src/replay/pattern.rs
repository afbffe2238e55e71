//! URI patterns: a request's path with its ids folded, so that
//! `/user/123` and `/user/456` are counted as `/user/{id}`. The rules, in
//! order: the user's own (`--pattern REGEX=NAME`: a path the regex finds a
//! match in is named NAME), then per segment: all digits, a UUID
//! (8-4-4-4-12 hex digits) or hex of 16 digits or more becomes `{id}`.
//! The query is left out.

use super::ReplayError;
use regex::Regex;

/// The folding rules of one replay.
#[derive(Debug, Clone, Default)]
pub struct PatternRules {
    own: Vec<(Regex, String)>,
}

impl PatternRules {
    /// The rules with the user's `REGEX=NAME` overrides first (the last
    /// `=` splits, so a regex may hold `=`).
    pub fn new(overrides: &[String]) -> Result<PatternRules, ReplayError> {
        let mut own = Vec::new();
        for text in overrides {
            let (regex, name) = text
                .rsplit_once('=')
                .filter(|(r, n)| !r.is_empty() && !n.is_empty())
                .ok_or_else(|| {
                    ReplayError::Option(format!("--pattern {text:?}: give REGEX=NAME"))
                })?;
            let regex = Regex::new(regex)
                .map_err(|e| ReplayError::Option(format!("--pattern {text:?}: {e}")))?;
            own.push((regex, name.to_string()));
        }
        Ok(PatternRules { own })
    }

    /// The pattern of `target` (a path with or without a query).
    pub fn pattern(&self, target: &str) -> String {
        let path = target.split(['?', '#']).next().unwrap_or(target);
        if let Some((_, name)) = self.own.iter().find(|(regex, _)| regex.is_match(path)) {
            return name.clone();
        }
        let folded: Vec<&str> = path
            .split('/')
            .map(|segment| if is_id(segment) { "{id}" } else { segment })
            .collect();
        folded.join("/")
    }
}

/// True for a segment that names one thing among many: a number, a UUID,
/// or a long hex string (a hash, an object id).
fn is_id(segment: &str) -> bool {
    if segment.is_empty() {
        return false;
    }
    let hex = |s: &str| s.bytes().all(|b| b.is_ascii_hexdigit());
    if segment.bytes().all(|b| b.is_ascii_digit()) {
        return true;
    }
    let parts: Vec<&str> = segment.split('-').collect();
    let uuid = parts.len() == 5
        && parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12])
        && parts.iter().all(|p| hex(p));
    uuid || (segment.len() >= 16 && hex(segment))
}
