//! The command line's workload flags in one place: `--var`, `--feed`,
//! `--check` and `--extract`, parsed and loaded before the run into the
//! scope templates compile against, the shared feeders, the checks and the
//! extractors.

use crate::check::{CheckSet, ParseError};
use crate::extract::Extractor;
use crate::feeder::{FeedSpec, Feeder, FeederError};
use crate::scope::Scope;
use crate::template::TemplateError;
use std::sync::Arc;

/// A workload flag that cannot be used; every variant is a usage error (exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkloadError {
    /// A `--var` without `=`: the argument.
    #[error("invalid --var '{0}': expected NAME=VALUE")]
    Var(String),
    /// A `--var` name that cannot be used.
    #[error("--var: {0}")]
    VarName(TemplateError),
    /// A `--feed` file that cannot be used.
    #[error("--feed {0}")]
    Feed(FeederError),
    /// A `--feed` file whose column names cannot be used as variables.
    #[error("--feed: {0}")]
    FeedColumns(TemplateError),
    /// A `--check` that does not parse.
    #[error("{0}")]
    Check(ParseError),
    /// An `--extract` that does not parse.
    #[error("{0}")]
    Extract(ParseError),
}

/// Everything the workload flags ask for, ready for the engine.
#[derive(Debug, Default)]
pub struct Workload {
    /// The names templates may use; compile request templates against it.
    pub scope: Scope,
    /// Loaded feeders in flag order (the order of a render's `rows`).
    pub feeders: Vec<Arc<Feeder>>,
    /// The `--check` expressions.
    pub checks: CheckSet,
    /// The `--extract` extractors, in flag order.
    pub extracts: Vec<Extractor>,
}

impl Workload {
    /// Parses and loads the flags' values, in the order given.
    pub fn from_flags(
        vars: &[String],
        feeds: &[String],
        checks: &[String],
        extracts: &[String],
    ) -> Result<Workload, WorkloadError> {
        let mut scope = Scope::new();
        for var in vars {
            let (name, value) = parse_var(var)?;
            scope
                .add_const(name, value)
                .map_err(WorkloadError::VarName)?;
        }
        let mut feeders = Vec::new();
        for feed in feeds {
            let feeder = FeedSpec::parse(feed)
                .and_then(|spec| spec.load(None))
                .map_err(WorkloadError::Feed)?;
            scope
                .add_feed_columns(feeders.len(), feeder.data().columns())
                .map_err(WorkloadError::FeedColumns)?;
            feeders.push(Arc::new(feeder));
        }
        let checks = CheckSet::parse(checks).map_err(WorkloadError::Check)?;
        let extracts = extracts
            .iter()
            .map(|e| Extractor::parse_assignment(e, &mut scope))
            .collect::<Result<_, _>>()
            .map_err(WorkloadError::Extract)?;
        Ok(Workload {
            scope,
            feeders,
            checks,
            extracts,
        })
    }

    /// Adds a feeder a program built (after the flags' ones): its columns
    /// become names templates may use.
    pub fn add_feeder(&mut self, feeder: Arc<Feeder>) -> Result<(), WorkloadError> {
        self.scope
            .add_feed_columns(self.feeders.len(), feeder.data().columns())
            .map_err(WorkloadError::FeedColumns)?;
        self.feeders.push(feeder);
        Ok(())
    }

    /// True when responses are judged (checks or extractors given): the
    /// result then always carries `requests.check_failed`.
    pub fn judges_responses(&self) -> bool {
        !self.checks.is_empty() || !self.extracts.is_empty()
    }

    /// True when a check or an extractor reads headers.
    pub fn needs_headers(&self) -> bool {
        self.checks.needs_headers() || self.extracts.iter().any(Extractor::needs_headers)
    }

    /// True when a check or an extractor reads the body.
    pub fn needs_body(&self) -> bool {
        self.checks.needs_body() || self.extracts.iter().any(Extractor::needs_body)
    }
}

/// `NAME=VALUE` (the value may contain `=`).
pub fn parse_var(text: &str) -> Result<(&str, &str), WorkloadError> {
    text.split_once('=')
        .filter(|(name, _)| !name.trim().is_empty())
        .map(|(name, value)| (name.trim(), value))
        .ok_or_else(|| WorkloadError::Var(text.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn nothing_given_is_an_empty_workload() {
        let w = Workload::from_flags(&[], &[], &[], &[]).unwrap();
        assert!(!w.judges_responses() && !w.needs_body() && !w.needs_headers());
        assert!(w.feeders.is_empty());
    }

    #[test]
    fn flags_build_scope_checks_and_extracts() {
        let dir = std::env::temp_dir().join(format!("stampede-workload-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let csv = dir.join("people.csv");
        std::fs::write(&csv, "name\nann\n").unwrap();
        let w = Workload::from_flags(
            &strings(&["region=eu=1"]),
            &[format!("{}:unique", csv.display())],
            &strings(&["status == 200"]),
            &strings(&["sid=cookie(sid)"]),
        )
        .unwrap();
        assert!(w.judges_responses() && w.needs_headers() && !w.needs_body());
        assert_eq!(
            w.scope.known().rsplit(", ").take(3).collect::<Vec<_>>(),
            ["sid", "name", "region"]
        );
        assert_eq!(w.feeders[0].mode(), crate::FeedMode::Unique);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_flags_are_usage_errors() {
        assert_eq!(
            parse_var("novalue").unwrap_err().to_string(),
            "invalid --var 'novalue': expected NAME=VALUE"
        );
        assert!(parse_var("=x").is_err());
        assert!(Workload::from_flags(&strings(&["seq=1"]), &[], &[], &[]).is_err());
        assert!(Workload::from_flags(&[], &strings(&["/nonexistent/x.csv"]), &[], &[]).is_err());
        let check = Workload::from_flags(&[], &[], &strings(&["status = 200"]), &[]).unwrap_err();
        assert!(check.to_string().contains('^'));
        assert!(Workload::from_flags(&[], &[], &[], &strings(&["t=json(x)"])).is_err());
    }
}
