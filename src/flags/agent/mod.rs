//! Distributed runs: `--agent I/N` (this process runs the I-th share of the
//! plan), `--start-at TIME` (wait for a common wall-clock start) and
//! `--max-skew`. This module owns the options and reading them; `share`
//! narrows a plan to the agent's share, `start` waits for the agreed start
//! and records the agent in the result. Merging the agents' results lives in
//! stampede-metrics (`merge_results`); the manifests in `cmd::k8s`.

mod share;
mod start;
#[cfg(test)]
mod test_fixtures;

pub use share::{apply_share, share_model};
pub use start::{annotate, wait_for_start};

use stampede_metrics::parse_timestamp;
use stampede_plan::parse_duration;
use std::time::{Duration, SystemTime};

/// `--max-skew` when not given.
const DEFAULT_MAX_SKEW: Duration = Duration::from_secs(1);

/// Options of a run that is one agent of several.
#[derive(Debug, Clone, clap::Args)]
pub struct AgentArgs {
    /// Run the I-th of N equal shares of the load, I from 0 (as Kubernetes'
    /// JOB_COMPLETION_INDEX): connections and rate split evenly, -n split exactly
    #[arg(long, value_parser = parse_share, value_name = "I/N")]
    pub agent: Option<Share>,
    /// Start at this wall-clock time, RFC 3339 (2026-12-01T10:00:00Z) or +DUR
    /// from now (+10s), so that agents on several machines start together
    #[arg(long, value_parser = parse_start_at, value_name = "TIME")]
    pub start_at: Option<StartAt>,
    /// Warn when the run starts more than this after --start-at (clock skew,
    /// a slow pod start)
    #[arg(long, value_parser = parse_duration, default_value = "1s", value_name = "DUR")]
    pub max_skew: Duration,
}

impl Default for AgentArgs {
    fn default() -> Self {
        AgentArgs {
            agent: None,
            start_at: None,
            max_skew: DEFAULT_MAX_SKEW,
        }
    }
}

/// `--agent I/N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    pub index: u32,
    pub count: u32,
}

/// `--start-at`, resolved to a wall-clock instant when the arguments were read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartAt(pub SystemTime);

pub fn parse_share(text: &str) -> Result<Share, String> {
    let usage = || format!("'{text}' is not I/N (e.g. 0/8: the first of 8 agents)");
    let (index, count) = text.split_once('/').ok_or_else(usage)?;
    let index: u32 = index.trim().parse().map_err(|_| usage())?;
    let count: u32 = count.trim().parse().map_err(|_| usage())?;
    if count == 0 {
        return Err(format!("--agent {text}: N must be at least 1"));
    }
    if index >= count {
        return Err(format!(
            "--agent {text}: I counts from 0, so it must be below {count} (0/{count} … {}/{count})",
            count - 1
        ));
    }
    Ok(Share { index, count })
}

pub fn parse_start_at(text: &str) -> Result<StartAt, String> {
    if let Some(relative) = text.trim().strip_prefix('+') {
        let delay = parse_duration(relative).map_err(|e| e.to_string())?;
        return Ok(StartAt(SystemTime::now() + delay));
    }
    parse_timestamp(text)
        .map(StartAt)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_shares_and_start_times() {
        assert_eq!(parse_share("3/8"), Ok(Share { index: 3, count: 8 }));
        for bad in ["8/8", "1/0", "x/2", "3", "-1/2"] {
            assert!(parse_share(bad).is_err(), "{bad}");
        }
        let StartAt(soon) = parse_start_at("+10s").unwrap();
        let ahead = soon.duration_since(SystemTime::now()).unwrap();
        assert!(ahead > Duration::from_secs(9) && ahead <= Duration::from_secs(10));
        assert!(parse_start_at("2026-12-01T10:00:00Z").is_ok());
        assert!(parse_start_at("soon").is_err());
    }
}
