//! `--targets FILE`: many requests in one run, vegeta-like. One block per
//! request, blocks separated by blank lines:
//!
//! ```text
//! GET http://127.0.0.1:3000/sylar/xx
//! X-Trace: 1
//! weight=3
//!
//! POST http://127.0.0.1:3000/echo
//! Content-Type: application/json
//! @body.json
//! ```
//! The first line is `METHOD URL` and nothing else (a URL has no spaces);
//! then, each on a line of its own, header lines, an optional `@PATH` body
//! file (relative to the targets file) and an optional `weight=N` (default 1).
//! Lines starting with `#` are comments. Reading the body files
//! is left to the caller (no I/O here).

use crate::{parse_header, Header, PlanError, Target};
use std::path::PathBuf;

/// Most targets in one file: each keeps its own statistics.
pub(crate) const MAX_TARGETS: usize = 1000;

/// One request block of a targets file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetBlock {
    /// The HTTP method of the block's first line.
    pub method: String,
    /// The URL of the block's first line.
    pub target: Target,
    /// The block's header lines, in order.
    pub headers: Vec<Header>,
    /// A body file named with `@PATH`, relative to the targets file.
    pub body_file: Option<PathBuf>,
    /// The block's share of the sends (`weight=N`, default 1).
    pub weight: u32,
    /// 1-based line of the block's first line, for messages.
    pub line: usize,
}

/// Parses a targets file's text; `file` names it in errors.
pub fn parse_targets(text: &str, file: &str) -> Result<Vec<TargetBlock>, PlanError> {
    let mut blocks: Vec<TargetBlock> = Vec::new();
    let mut current: Option<TargetBlock> = None;
    for (index, raw) in text.lines().enumerate() {
        let number = index + 1;
        let fail = |why: String| PlanError::Invalid(format!("{file}:{number}: {why}"));
        let line = raw.trim();
        if line.starts_with('#') {
            continue;
        }
        if line.is_empty() {
            blocks.extend(current.take());
            continue;
        }
        let Some(block) = current.as_mut() else {
            let mut words = line.split_whitespace();
            let (Some(method), Some(url)) = (words.next(), words.next()) else {
                return Err(fail(format!("expected 'METHOD URL', got '{line}'")));
            };
            if let Some(extra) = words.next() {
                // A URL has no spaces: whatever follows it was meant as
                // something else (most often a weight), and must not be
                // silently taken into the URL.
                return Err(fail(format!(
                    "unexpected '{extra}' after the URL: the first line is 'METHOD URL'; weight=N, headers and @body go on lines of their own"
                )));
            }
            let target = Target::parse(url).map_err(|e| fail(e.to_string()))?;
            if !crate::header::is_token(method) {
                return Err(fail(format!("invalid method '{method}'")));
            }
            current = Some(TargetBlock {
                method: method.to_ascii_uppercase(),
                target,
                headers: Vec::new(),
                body_file: None,
                weight: 1,
                line: number,
            });
            continue;
        };
        if let Some(path) = line.strip_prefix('@') {
            if block.body_file.is_some() {
                return Err(fail("a block has at most one @body file".into()));
            }
            block.body_file = Some(PathBuf::from(path.trim()));
        } else if let Some(weight) = line.strip_prefix("weight=") {
            block.weight = weight
                .trim()
                .parse()
                .ok()
                .filter(|w| *w > 0 && *w <= 1_000_000)
                .ok_or_else(|| {
                    fail(format!(
                        "invalid weight '{weight}': a whole number from 1 to 1000000"
                    ))
                })?;
        } else {
            block
                .headers
                .push(parse_header(line).map_err(|e| fail(e.to_string()))?);
        }
    }
    blocks.extend(current);
    if blocks.is_empty() {
        return Err(PlanError::Invalid(format!(
            "{file}: no request in the file"
        )));
    }
    if blocks.len() > MAX_TARGETS {
        return Err(PlanError::Invalid(format!(
            "{file}: {} requests; at most {MAX_TARGETS}",
            blocks.len()
        )));
    }
    let first = &blocks[0].target;
    for block in &blocks[1..] {
        let t = &block.target;
        if (t.scheme, &t.host, t.port) != (first.scheme, &first.host, first.port) {
            return Err(PlanError::Invalid(format!(
                "{file}:{}: every URL must share one origin (connections are reused across requests): '{}' differs from '{}'",
                block.line, t.url, first.url
            )));
        }
    }
    Ok(blocks)
}

/// A smooth weighted round-robin order of target indices (nginx's algorithm):
/// each target appears `weight` times per cycle, spread out rather than bunched.
pub fn weighted_order(weights: &[u32]) -> Vec<u16> {
    let total: i64 = weights.iter().map(|w| i64::from(*w)).sum();
    // Long cycles are scaled down: the order only needs the proportions.
    let scale = (total / 10_000).max(1);
    let weights: Vec<i64> = weights
        .iter()
        .map(|w| (i64::from(*w) / scale).max(1))
        .collect();
    let total: i64 = weights.iter().sum();
    let mut current = vec![0i64; weights.len()];
    let mut order = Vec::with_capacity(total as usize);
    for _ in 0..total {
        for (c, w) in current.iter_mut().zip(&weights) {
            *c += w;
        }
        let (best, _) = current
            .iter()
            .enumerate()
            .max_by_key(|(i, c)| (**c, std::cmp::Reverse(*i)))
            .expect("at least one target");
        current[best] -= total;
        order.push(best as u16);
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "# two endpoints, as in the coroutine-server seed
GET http://127.0.0.1:3000/sylar/xx
X-Trace: 1
weight=3

POST http://127.0.0.1:3000/echo
Content-Type: application/json
@body.json
";

    #[test]
    fn parses_blocks() {
        let blocks = parse_targets(FILE, "t.txt").unwrap();
        assert_eq!(blocks.len(), 2);
        assert_eq!((blocks[0].method.as_str(), blocks[0].weight), ("GET", 3));
        assert_eq!(blocks[0].headers[0].name, "X-Trace");
        assert_eq!(blocks[1].body_file, Some(PathBuf::from("body.json")));
        assert_eq!(blocks[1].line, 6);
    }

    #[test]
    fn errors_name_file_and_line() {
        let cases = [
            ("GET\n", "t:1"),
            ("GET ftp://x/\n", "t:1"),
            ("GET http://a/\nbad header\n", "t:2"),
            ("GET http://a/\nweight=0\n", "t:2"),
            ("GET http://a/\n\nGET http://b/\n", "t:3"),
            ("GET http://a/ weight=2\n", "t:1"),
            ("# c\nGET http://a/ X-Trace: 1\n", "t:2"),
        ];
        for (text, place) in cases {
            let error = parse_targets(text, "t").unwrap_err().to_string();
            assert!(error.contains(place), "{text:?}: {error}");
        }
        assert!(parse_targets("# only a comment\n", "t").is_err());
    }

    #[test]
    fn weighted_order_is_proportional_and_spread() {
        let order = weighted_order(&[3, 1]);
        assert_eq!(order.len(), 4);
        assert_eq!(order.iter().filter(|i| **i == 0).count(), 3);
        assert_eq!(weighted_order(&[1, 1]), vec![0, 1]);
        assert_eq!(weighted_order(&[5]).len(), 5);
    }
}
