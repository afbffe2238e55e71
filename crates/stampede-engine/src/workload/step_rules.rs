//! A scenario step's own transport settings (its step keys):
//! `timeout`, `connect_timeout`, `keep_alive` and `follow_redirects` over
//! the run's. Built once per worker, by target index, only when some step
//! sets one: a run without them keeps its one setting per worker and reads
//! nothing per request.

use super::spec::WorkloadSpec;
use std::time::Duration;

/// What one step (by the plan's target index) runs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StepRules {
    /// The response timeout (`--timeout`, or the step's `timeout`).
    pub timeout: Duration,
    /// The connect timeout (`--connect-timeout`, or the step's).
    pub connect_timeout: Duration,
    /// The connection stays open after the response (no `--no-keepalive`,
    /// or the step's `keep_alive`).
    pub keep_alive: bool,
    /// Redirects are followed (`--redirects N`, or the step's `follow_redirects`).
    pub follow_redirects: bool,
}

impl StepRules {
    /// Every step's rules, `defaults` where a step sets nothing; `None`
    /// when no step sets any of them.
    pub(crate) fn of(spec: &WorkloadSpec, defaults: StepRules) -> Option<Box<[StepRules]>> {
        let own = spec.steps.iter().any(|s| {
            let o = &s.options;
            o.timeout.is_some()
                || o.connect_timeout.is_some()
                || o.keep_alive.is_some()
                || o.follow_redirects.is_some()
        });
        own.then(|| {
            spec.steps
                .iter()
                .map(|s| StepRules {
                    timeout: s.options.timeout.unwrap_or(defaults.timeout),
                    connect_timeout: s
                        .options
                        .connect_timeout
                        .unwrap_or(defaults.connect_timeout),
                    keep_alive: s.options.keep_alive.unwrap_or(defaults.keep_alive),
                    follow_redirects: s
                        .options
                        .follow_redirects
                        .unwrap_or(defaults.follow_redirects),
                })
                .collect()
        })
    }
}

/// True when some step asks to follow redirects (`follow_redirects = true`):
/// the run then needs a redirect rule even without `--redirects`.
pub(crate) fn some_step_follows(spec: &WorkloadSpec) -> bool {
    spec.steps
        .iter()
        .any(|s| s.options.follow_redirects == Some(true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::StepWork;
    use stampede_workload::StepOptions;

    #[test]
    fn a_step_sets_its_own_and_the_others_keep_the_runs() {
        let defaults = StepRules {
            timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(3),
            keep_alive: true,
            follow_redirects: false,
        };
        let mut spec = WorkloadSpec {
            steps: vec![StepWork::default(), StepWork::default()],
            ..WorkloadSpec::default()
        };
        assert_eq!(
            StepRules::of(&spec, defaults),
            None,
            "nothing set: no table"
        );
        spec.steps[1].options = StepOptions {
            timeout: Some(Duration::from_millis(200)),
            connect_timeout: Some(Duration::from_millis(50)),
            keep_alive: Some(false),
            follow_redirects: Some(true),
            ..StepOptions::default()
        };
        let rules = StepRules::of(&spec, defaults).expect("a table");
        assert_eq!(rules[0], defaults);
        assert_eq!(
            rules[1],
            StepRules {
                timeout: Duration::from_millis(200),
                connect_timeout: Duration::from_millis(50),
                keep_alive: false,
                follow_redirects: true,
            }
        );
        assert!(some_step_follows(&spec));
    }
}
