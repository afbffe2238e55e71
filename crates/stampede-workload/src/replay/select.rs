//! Which of a log's requests a replay sends: a time window of the log
//! (`--from`, `--to`, offsets from its first request), a status filter
//! (`--filter 'status<400'`) and an even sample (`--sample 10%`).

use super::{LoggedRequest, ReplayError};
use std::time::Duration;

/// A comparison of `status` with a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compare {
    Less,
    LessOrEqual,
    Greater,
    GreaterOrEqual,
    Equal,
    NotEqual,
}

/// `status<400`, `status>=500`, `status==200`, `status!=404`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusFilter {
    compare: Compare,
    value: u16,
}

impl StatusFilter {
    /// Parses `status OP NUMBER`, OP one of `<`, `<=`, `>`, `>=`, `==`, `!=`.
    pub fn parse(text: &str) -> Result<StatusFilter, ReplayError> {
        let bad = || {
            ReplayError::Option(format!(
                "--filter {text:?}: give status OP NUMBER, OP one of < <= > >= == !="
            ))
        };
        let rest = text
            .trim()
            .strip_prefix("status")
            .ok_or_else(bad)?
            .trim_start();
        let (compare, number) = [
            ("<=", Compare::LessOrEqual),
            (">=", Compare::GreaterOrEqual),
            ("==", Compare::Equal),
            ("!=", Compare::NotEqual),
            ("<", Compare::Less),
            (">", Compare::Greater),
            ("=", Compare::Equal),
        ]
        .into_iter()
        .find_map(|(op, compare)| rest.strip_prefix(op).map(|n| (compare, n)))
        .ok_or_else(bad)?;
        let value = number.trim().parse().map_err(|_| bad())?;
        Ok(StatusFilter { compare, value })
    }

    /// A line without a logged status passes no filter.
    fn passes(&self, status: Option<u16>) -> bool {
        let Some(status) = status else {
            return false;
        };
        match self.compare {
            Compare::Less => status < self.value,
            Compare::LessOrEqual => status <= self.value,
            Compare::Greater => status > self.value,
            Compare::GreaterOrEqual => status >= self.value,
            Compare::Equal => status == self.value,
            Compare::NotEqual => status != self.value,
        }
    }
}

/// What to keep of a log.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// `--from`: requests before this offset from the log's first request are left out.
    pub from: Option<Duration>,
    /// `--to`: requests from this offset on are left out.
    pub to: Option<Duration>,
    /// `--filter`: only requests whose logged status passes.
    pub filter: Option<StatusFilter>,
    /// The share kept, in (0, 1]; `None`: all.
    pub sample: Option<f64>,
}

/// `--sample 10%` (or `10`): a percentage, as a share in (0, 1].
pub fn parse_sample(text: &str) -> Result<f64, ReplayError> {
    let number = text.trim().trim_end_matches('%');
    number
        .parse::<f64>()
        .ok()
        .filter(|p| *p > 0.0 && *p <= 100.0)
        .map(|p| p / 100.0)
        .ok_or_else(|| {
            ReplayError::Option(format!("--sample {text:?}: give a percentage in (0, 100]"))
        })
}

impl Selection {
    /// The requests kept, in order, with their offsets from the log's
    /// first request (before the window: `--from 1m` keeps offsets from
    /// 1 min, sent from the start of the run). The sample keeps every
    /// k-th in even steps, so it is the same on every run.
    pub fn apply(&self, requests: &[LoggedRequest]) -> Vec<(Duration, LoggedRequest)> {
        let first = requests.first().map_or(0, |r| r.at_ms);
        let from = self.from.unwrap_or(Duration::ZERO);
        let mut kept = Vec::new();
        let mut considered = 0u64;
        for request in requests {
            let offset = Duration::from_millis(request.at_ms.saturating_sub(first) as u64);
            if offset < from || self.to.is_some_and(|to| offset >= to) {
                continue;
            }
            if self.filter.is_some_and(|f| !f.passes(request.status)) {
                continue;
            }
            considered += 1;
            if let Some(share) = self.sample {
                // Keep line n when ⌈n·share⌉ steps up: ⌈N·share⌉ in all, evenly, the first kept.
                let before = ((considered - 1) as f64 * share).ceil();
                let now = (considered as f64 * share).ceil();
                if now == before {
                    continue;
                }
            }
            kept.push((offset - from, request.clone()));
        }
        kept
    }
}
